"""Character forms — hiragana, katakana, half-width katakana, full- and half-width ASCII — for the input modes,
the F6–F10 keys and the width candidates alike. Pure functions of text."""

import unicodedata

from daemon.kana import is_kana, to_hiragana, to_katakana

# ASCII → full-width as Mozc writes it: the U+FF01.. block, except where Japanese text uses other
# characters (its halfwidthascii-fullwidthascii table): quotes are ’ ”, backslash is ￥, tilde is 〜.
_FULLWIDTH_ASCII = {chr(c): chr(c + 0xFEE0) for c in range(0x21, 0x7F)} | {
    " ": "\u3000",
    '"': "”",
    "'": "’",
    "-": "−",
    "\\": "￥",
    "~": "〜",
}
# Narrowing also accepts the plain U+FF01.. forms that Mozc's widening avoids (＂ ＇ － ＼ ～).
_HALFWIDTH_ASCII = {chr(c + 0xFEE0): chr(c) for c in range(0x21, 0x7F)} | {
    wide: narrow for narrow, wide in _FULLWIDTH_ASCII.items()
}

# Half-width katakana ｡ (U+FF61) .. ﾟ (U+FF9F) are compatibility forms of full-width kana and punctuation;
# their voiced marks ﾞ ﾟ stand for the combining marks U+3099/U+309A and for the spacing ゛ ゜.
_HALFWIDTH_KANA = {unicodedata.normalize("NFKC", half): half for half in map(chr, range(0xFF61, 0xFFA0))}
_HALFWIDTH_KANA |= {"゛": "ﾞ", "゜": "ﾟ"}
# ﾞ ﾟ widen to the spacing ゛ ゜ (added last, so they win over the combining marks) unless they join.
_FULLWIDTH_KANA = {half: full for full, half in _HALFWIDTH_KANA.items()}
_JOINING_MARK = {"ﾞ": "\u3099", "ﾟ": "\u309a"}  # half-width marks → the combining marks NFC joins

_WIDEN_ASCII = str.maketrans(_FULLWIDTH_ASCII)
_NARROW_ASCII = str.maketrans(_HALFWIDTH_ASCII)
_NARROW = str.maketrans(_HALFWIDTH_ASCII | _HALFWIDTH_KANA)

# Mozc's table writes ヵ ヶ even in hiragana mode; their hiragana ゕ ゖ are not used in running text.
_KEEP_IN_HIRAGANA = str.maketrans({"ゕ": "ヵ", "ゖ": "ヶ"})


def has_ascii_forms(text: str) -> bool:
    """Whether any character of `text` is ASCII or its full-width form (has the other width)."""
    return any(ch in _FULLWIDTH_ASCII or ch in _HALFWIDTH_ASCII for ch in text)


def to_fullwidth_ascii(text: str) -> str:
    """F9 and full-width alphanumeric mode: ASCII → full-width; everything else is kept."""
    return text.translate(_WIDEN_ASCII)


def to_halfwidth_ascii(text: str) -> str:
    """F10: full-width ASCII → ASCII; everything else is kept."""
    return text.translate(_NARROW_ASCII)


def to_halfwidth_katakana(text: str) -> str:
    """F8 and half-width katakana mode: kana → half-width katakana (ガ → ｶﾞ), and Japanese punctuation
    and full-width ASCII to their half-width forms. Kana without one (ヮ ヰ ヱ ヵ ヶ) are kept."""
    # Decomposing splits a voiced kana into its base and mark, each of which has a half-width form.
    return "".join(unicodedata.normalize("NFD", ch) if is_kana(ch) else ch for ch in to_katakana(text)).translate(
        _NARROW
    )


def to_fullwidth_katakana(text: str) -> str:
    """F7: hiragana and half-width katakana → full-width katakana, joining ｶﾞ into ガ."""
    out: list[str] = []
    for ch in to_katakana(text):
        if ch in _JOINING_MARK and out:
            joined = unicodedata.normalize("NFC", out[-1] + _JOINING_MARK[ch])
            if len(joined) == 1:
                out[-1] = joined
                continue
        out.append(_FULLWIDTH_KANA.get(ch, ch))
    return "".join(out)


def to_fullwidth_hiragana(text: str) -> str:
    """F6: katakana, full- or half-width, → hiragana."""
    return to_hiragana(to_fullwidth_katakana(text)).translate(_KEEP_IN_HIRAGANA)
