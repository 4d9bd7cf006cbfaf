"""What the system dictionary returns: morphemes, bunsetsu, candidates and segments."""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Sequence

import numpy as np


@dataclass(frozen=True)
class Morpheme:
    """One dictionary word (or unknown character run) of a conversion path."""

    reading: str  # hiragana
    surface: str
    left_id: int  # POS id on the word's left side (Mozc compounds such as いい天気 differ per side)
    right_id: int
    cost: int  # the word's own cost, without connection costs
    unknown: bool = False  # not in the dictionary; surface == reading


@dataclass(frozen=True)
class Bunsetsu:
    """A content word with the prefixes and function words attached to it."""

    reading: str
    surface: str
    morphemes: tuple[Morpheme, ...]  # empty for the plain-kana fallbacks, which are no dictionary path

    @classmethod
    def of(cls, morphemes: Sequence[Morpheme]) -> Bunsetsu:
        return cls("".join(m.reading for m in morphemes), "".join(m.surface for m in morphemes), tuple(morphemes))


@dataclass(frozen=True)
class DictionaryCandidate:
    """One conversion of a reading; lower cost is better (MeCab path cost: word plus connection costs)."""

    text: str
    cost: int
    segments: tuple[Bunsetsu, ...]


@dataclass(frozen=True)
class Segment:
    """A span of the reading that converts on its own, with its candidates, best first."""

    reading: str
    candidates: tuple[DictionaryCandidate, ...]


@dataclass(frozen=True)
class Lattice:
    """Every way the dictionary can spell a reading, word by word, with the costs of joining words."""

    reading: str  # hiragana, as typed
    # words_from[i]: the words whose reading starts at character i (readings and copied symbols as typed),
    # dictionary words plus a one-character unknown word at every offset, so that every reading has a path.
    words_from: tuple[tuple[Morpheme, ...], ...]
    # connection[right_id of a word, left_id of the next]; id 0 is the sentence start and end.
    connection: np.ndarray
