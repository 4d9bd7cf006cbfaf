"""Romaji → kana composition (Mozc's romaji table, or the user's own), input modes, symbol styles and the
F6–F10 conversions. Pure: no I/O beyond reading the packaged table once and a table file on request."""

from daemon.composer.composer import Composer, InputMode, Transliteration, romaji_to_kana
from daemon.forms import (
    to_fullwidth_ascii,
    to_fullwidth_hiragana,
    to_fullwidth_katakana,
    to_halfwidth_ascii,
    to_halfwidth_katakana,
)
from daemon.composer.table import (
    MOZC_RULES,
    ROMAJI_TABLE,
    Brackets,
    Punctuation,
    RomajiTable,
    RomajiTableError,
    Rule,
    Slash,
    SpaceWidth,
    SymbolStyle,
    load_rules,
    romaji_table,
)

__all__ = [
    "Composer",
    "InputMode",
    "Transliteration",
    "romaji_to_kana",
    "to_fullwidth_ascii",
    "to_fullwidth_hiragana",
    "to_fullwidth_katakana",
    "to_halfwidth_ascii",
    "to_halfwidth_katakana",
    "MOZC_RULES",
    "ROMAJI_TABLE",
    "Brackets",
    "Punctuation",
    "RomajiTable",
    "RomajiTableError",
    "Rule",
    "Slash",
    "SpaceWidth",
    "SymbolStyle",
    "load_rules",
    "romaji_table",
]
