"""Token ids for training, exactly as llama.cpp tokenizes with our GGUF vocabulary.

The vocabulary has one piece per character (build_vocab), so llama.cpp's SPM tokenizer yields one token
per known character, `▁` for a space, and the UTF-8 bytes (<0xXX> tokens) of any other character.
"""

from __future__ import annotations

from dataclasses import dataclass

from daemon.tools.gguf_writer import EOS, SPACE_PIECE, Vocab
from daemon.engine.prompts import CONTEXT_START, INPUT_START, OUTPUT_START, Prompt, build_prompt

PROMPT_FORMAT = "jinen"


@dataclass(frozen=True)
class ExampleParts:
    """One training example as packed: the jinen prompt's context and reading texts and the target, as ids.
    Stored apart so that a batch can drop the context (BLANK_CONTEXT) without re-tokenizing."""

    context: list[int]
    reading: list[int]
    target: list[int]


class CharTokenizer:
    def __init__(self, vocab: Vocab):
        self.ids = {piece: i for i, piece in enumerate(vocab.pieces)}
        self.byte_ids = [self.ids[f"<0x{b:02X}>"] for b in range(256)]
        self.context_start, self.input_start, self.output_start = (
            self.ids[marker] for marker in (CONTEXT_START, INPUT_START, OUTPUT_START)
        )

    def text(self, text: str) -> list[int]:
        ids = []
        for ch in text.replace(" ", SPACE_PIECE):
            token = self.ids.get(ch)
            if token is None:
                ids += [self.byte_ids[b] for b in ch.encode("utf-8")]
            else:
                ids.append(token)
        return ids

    def prompt(self, prompt: Prompt) -> list[int]:
        ids = []
        for text, is_marker in prompt.parts:
            ids += [self.ids[text]] if is_marker else self.text(text)
        return ids

    def parts(self, context: str, reading: str, surface: str) -> ExampleParts:
        """The texts of the jinen prompt (its markers are fixed) and the target, tokenized."""
        texts = {CONTEXT_START: "", INPUT_START: ""}
        marker = None
        for text, is_marker in build_prompt(PROMPT_FORMAT, reading, context).parts:
            if is_marker:
                marker = text
            else:
                assert marker is not None  # the prompt starts with a marker
                texts[marker] = text
        return ExampleParts(self.text(texts[CONTEXT_START]), self.text(texts[INPUT_START]), self.text(surface))

    def assemble(self, parts: ExampleParts, with_context: bool = True) -> tuple[list[int], int]:
        """(prompt + target + EOS ids, prompt length) of packed parts: the loss covers the tokens after the
        prompt."""
        prompt = [
            self.context_start,
            *(parts.context if with_context else ()),
            self.input_start,
            *parts.reading,
            self.output_start,
        ]
        return prompt + parts.target + [EOS], len(prompt)

    def example(self, context: str, reading: str, surface: str) -> tuple[list[int], int]:
        return self.assemble(self.parts(context, reading, surface))
