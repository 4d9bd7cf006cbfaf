"""Romaji → kana composition (Mozc's romaji table), input modes and the F6–F10 conversions. Pure: no I/O
beyond reading the packaged table once."""

from daemon.composer.composer import Composer, InputMode, Transliteration, romaji_to_kana
from daemon.composer.forms import (to_fullwidth_ascii, to_fullwidth_hiragana, to_fullwidth_katakana,
                                   to_halfwidth_ascii, to_halfwidth_katakana)

__all__ = ["Composer", "InputMode", "Transliteration", "romaji_to_kana", "to_fullwidth_ascii",
           "to_fullwidth_hiragana", "to_fullwidth_katakana", "to_halfwidth_ascii", "to_halfwidth_katakana"]
