"""What an input session needs of conversion, and nothing heavier: the `Conversion` interface (Mozc's session
converter interface), the candidates it answers with, and the limits and cleaning of a reading. The real
`Converter` (daemon/converter.py: the dictionary, the language models, the neural model) and the state machine's
fake (tests/fake_conversion.py) both implement it; importing this module loads neither MeCab, numpy nor llama.cpp
(tests/unit/test_layers.py checks that importing the session does not).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import TYPE_CHECKING, Protocol
from collections.abc import Iterable, Sequence

if TYPE_CHECKING:
    from daemon.dictionary import TextReader
    from daemon.engine import ModelSession


class CandidateSource(StrEnum):
    """Where a candidate comes from (shown with `[candidates] show_source`, sent by the Convert method)."""

    LEARNING = "learning"
    USER = "user"
    MODEL = "model"
    DICTIONARY = "dictionary"
    KANA = "kana"
    REWRITER = "rewriter"


@dataclass(frozen=True)
class ConversionCandidate:
    text: str
    source: CandidateSource
    annotation: str = ""
    cost: float | None = None  # the system dictionary's path cost (lower is better), for its candidates
    morphemes: int = 0  # dictionary words on the path, for the system dictionary's candidates


class Effort(Enum):
    """How much a conversion may spend, by what it is for."""

    KEYSTROKE = "keystroke"  # live conversion, on every key: the dictionary's N-best rescored by the LM
    SEGMENT = "segment"  # one segment of a sentence: also paths of the lattice search; not the model
    SENTENCE = "sentence"  # a whole reading on Space: the lattice search and the neural model too

    @property
    def searches_lattice(self) -> bool:
        return self is not Effort.KEYSTROKE

    @property
    def uses_model(self) -> bool:
        return self is Effort.SENTENCE


class PersonalData(Enum):
    """Which of the user's own data a conversion may read."""

    ALL = "all"  # learning history and user dictionary
    NO_HISTORY = "no-history"  # a secret field: its conversions neither read nor feed what was learned
    NONE = "none"  # a caller that is not the user's own session: nothing that reveals the user


# Longest reading converted, counted after NFKC (one typed character can expand to 18). The session's
# composition and the D-Bus Convert method stop at the same length.
MAX_READING_CHARS = 1000
# The most left context a conversion takes (the configuration's context_chars, root Convert's context), and what
# a session takes by default: all of it. The language models read its last few characters, the neural model ten;
# the rest feeds the context feature (what the document already writes). Held-out acc@1 rose up to 400 characters
# and not beyond (daemon/lm/README.md).
MAX_CONTEXT_CHARS = 400
DEFAULT_CONTEXT_CHARS = MAX_CONTEXT_CHARS


def left_context(text_before: str, chars: int) -> str:
    """The last `chars` characters of the text before the cursor: what a conversion takes as its context."""
    return text_before[-chars:] if chars > 0 else ""


# Unicode categories no reading holds: lone surrogates (MeCab cannot take them), controls, private-use code points
# (the model's prompt markers are among them).
NOT_IN_A_READING = frozenset({"Cs", "Cc", "Co"})


class ReadingTooLong(ValueError):
    """A reading past MAX_READING_CHARS (after NFKC)."""


def clean_reading(reading: str) -> str:
    """The reading without characters no reading holds; ReadingTooLong if it is too long to convert."""
    cleaned = "".join(ch for ch in reading if unicodedata.category(ch) not in NOT_IN_A_READING)
    if len(unicodedata.normalize("NFKC", cleaned)) > MAX_READING_CHARS:
        raise ReadingTooLong(f"a reading may have at most {MAX_READING_CHARS} characters (after NFKC)")
    return cleaned


class Conversion(Protocol):
    """What an input session asks of conversion (as Mozc's session converter interface): the real Converter
    below, or an in-memory fake in the state machine's tests."""

    def candidates(
        self,
        reading: str,
        context: str = "",
        n: int = 10,
        session: ModelSession | None = None,
        personal: PersonalData = PersonalData.ALL,
        effort: Effort = Effort.SENTENCE,
    ) -> list[ConversionCandidate]: ...

    def timely_candidates(
        self,
        model_wait_s: float,
        reading: str,
        context: str = "",
        n: int = 10,
        session: ModelSession | None = None,
        personal: PersonalData = PersonalData.ALL,
    ) -> tuple[list[ConversionCandidate], bool]: ...

    def bunsetsu(self, reading: str, boundaries: Sequence[int] = ()) -> list[tuple[str, str]]: ...

    def predictions(self, prefix: str, n: int = 9) -> list[ConversionCandidate]: ...

    def learn(self, choices: list[tuple[str, str]]) -> str: ...

    def model_session(self) -> ModelSession | None: ...

    def text_reader(self) -> TextReader | None: ...


def unique_texts(candidates: Iterable[ConversionCandidate]) -> list[ConversionCandidate]:
    """The candidates without empty texts or repeats, each text at its first place."""
    seen: set[str] = set()
    unique = []
    for candidate in candidates:
        if candidate.text and candidate.text not in seen:
            seen.add(candidate.text)
            unique.append(candidate)
    return unique
