"""Script and width variants of one text: ひらがな, カタカナ, ﾊﾝｶｸ, ｆｕｌｌ and half ASCII."""

import re
import unicodedata

from daemon.kana import is_kana, to_hiragana, to_katakana
from daemon.rewriters.base import Rewrite, unique_by_surface

SOURCE = "width"

_FULLWIDTH_OFFSET = 0xFEE0  # '!' U+0021 .. '~' U+007E  <->  '！' U+FF01 .. '～' U+FF5E
_TO_FULLWIDTH_ASCII = {c: c + _FULLWIDTH_OFFSET for c in range(0x21, 0x7F)} | {0x20: 0x3000}
_TO_HALFWIDTH_ASCII = {v: k for k, v in _TO_FULLWIDTH_ASCII.items()}

_COMBINING_VOICED = {"\u3099": "ﾞ", "\u309a": "ﾟ"}  # what NFD splits ガ and パ into
_HALFWIDTH_KANA_RUN = re.compile("[\uff61-\uff9f]+")


def _halfwidth_katakana_table() -> dict[str, str]:
    """Full-width → half-width kana and punctuation, derived from Unicode's own mapping.

    Every half-width form (U+FF61..U+FF9F) NFKC-normalises to its full-width twin; inverting
    that gives the table without hand-copied data. Voiced kana are handled by NFD in the caller.
    """
    table = {}
    for code in range(0xFF61, 0xFFA0):
        half = chr(code)
        full = unicodedata.normalize("NFKC", half)
        if len(full) == 1 and full not in _COMBINING_VOICED:
            table[full] = half
    return table | _COMBINING_VOICED


_TO_HALFWIDTH_KATAKANA = _halfwidth_katakana_table()


def width_rewrites(text: str) -> list[Rewrite]:
    """The variants that apply to `text` (kana forms if it has kana, ASCII widths if it has ASCII)."""
    rewrites = []
    full = to_fullwidth_katakana(text)
    if any(is_kana(c) for c in full):
        rewrites += [
            Rewrite(to_hiragana(full), "ひらがな", SOURCE),
            Rewrite(to_katakana(full), "カタカナ", SOURCE),
            Rewrite(to_halfwidth_katakana(full), "[半]カタカナ", SOURCE),
        ]
    if any(ord(c) in _TO_FULLWIDTH_ASCII or ord(c) in _TO_HALFWIDTH_ASCII for c in text):
        rewrites += [
            Rewrite(to_fullwidth_ascii(text), "[全]", SOURCE),
            Rewrite(to_halfwidth_ascii(text), "[半]", SOURCE),
        ]
    return unique_by_surface(rewrites)


def to_fullwidth_ascii(text: str) -> str:
    return text.translate(_TO_FULLWIDTH_ASCII)


def to_halfwidth_ascii(text: str) -> str:
    return text.translate(_TO_HALFWIDTH_ASCII)


def to_halfwidth_katakana(text: str) -> str:
    """ねこ / ネコ → ﾈｺ, ガ → ｶﾞ; characters without a half-width form (ゐ, ヶ …) stay as they are."""
    converted = []
    for char in to_katakana(text):
        if char in _TO_HALFWIDTH_KATAKANA:
            converted.append(_TO_HALFWIDTH_KATAKANA[char])
            continue
        base, *marks = unicodedata.normalize("NFD", char)
        if base in _TO_HALFWIDTH_KATAKANA and all(m in _COMBINING_VOICED for m in marks):
            converted.append(_TO_HALFWIDTH_KATAKANA[base] + "".join(_COMBINING_VOICED[m] for m in marks))
        else:
            converted.append(char)
    return "".join(converted)


def to_fullwidth_katakana(text: str) -> str:
    """ﾈｺ → ネコ, ｶﾞ → ガ; other characters are untouched."""
    # NFKC composes ｶ + ﾞ into ガ, but only half-width runs may go through it: it would also fold ＡＢＣ and ①.
    return _HALFWIDTH_KANA_RUN.sub(lambda run: unicodedata.normalize("NFKC", run.group()), text)
