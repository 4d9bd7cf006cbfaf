"""Pure kana conversions shared by the composer, the dictionary and the engine."""

import re

# Hiragana ぁ (U+3041) .. ゖ (U+3096) map one-to-one onto katakana ァ (U+30A1) .. ヶ (U+30F6).
_HIRAGANA_FIRST, _HIRAGANA_LAST = 0x3041, 0x3096
_KATAKANA_OFFSET = 0x60

_TO_KATAKANA = {c: c + _KATAKANA_OFFSET for c in range(_HIRAGANA_FIRST, _HIRAGANA_LAST + 1)}
_TO_KATAKANA.update({ord("ゝ"): ord("ヽ"), ord("ゞ"): ord("ヾ")})
_TO_HIRAGANA = {v: k for k, v in _TO_KATAKANA.items()}

# Character classes for regular expressions: kanji (the CJK blocks and compatibility ideographs, with 々 and 〆),
# and katakana letters with the long-vowel mark (not ・ or ゠).
KANJI_CLASS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff々〆"
KATAKANA_CLASS = "\u30a1-\u30fa\u30fc"


def to_katakana(text: str) -> str:
    """Hiragana → katakana; every other character is kept."""
    return text.translate(_TO_KATAKANA)


def to_hiragana(text: str) -> str:
    """Katakana → hiragana (ヷ-ヺ and ー have no hiragana and are kept)."""
    return text.translate(_TO_HIRAGANA)


def is_hiragana(ch: str) -> bool:
    return 0x3041 <= ord(ch) <= 0x309F


def is_kana(ch: str) -> bool:
    return is_hiragana(ch) or 0x30A0 <= ord(ch) <= 0x30FF


def spells(text: str, reading: str) -> bool:
    """Whether `text` can be read as `reading`: its kana as they are (katakana as hiragana), every run of other
    characters as one or more characters of the reading."""
    pattern = "".join(
        re.escape(to_hiragana(run)) if is_kana(run[0]) else ".+"
        for run in re.findall(r"[\u3041-\u30ff]+|[^\u3041-\u30ff]+", text)
    )
    return re.fullmatch(pattern, to_hiragana(reading), re.DOTALL) is not None
