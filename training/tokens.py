"""Token ids for training, exactly as llama.cpp tokenizes with our GGUF vocabulary.

The vocabulary has one piece per character (build_vocab), so llama.cpp's SPM tokenizer yields one token
per known character, `▁` for a space, and the UTF-8 bytes (<0xXX> tokens) of any other character.
"""

from __future__ import annotations

from training.gguf_writer import EOS, SPACE_PIECE, Vocab
from daemon.engine.prompts import Prompt, build_prompt

PROMPT_FORMAT = "jinen"


class CharTokenizer:
    def __init__(self, vocab: Vocab):
        self.ids = {piece: i for i, piece in enumerate(vocab.pieces)}
        self.byte_ids = [self.ids[f"<0x{b:02X}>"] for b in range(256)]

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

    def example(self, context: str, reading: str, surface: str) -> tuple[list[int], int]:
        """(prompt + surface + EOS ids, prompt length): the loss covers the tokens after the prompt."""
        prompt = self.prompt(build_prompt(PROMPT_FORMAT, reading, context))
        return prompt + self.text(surface) + [EOS], len(prompt)
