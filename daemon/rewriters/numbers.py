"""Number candidates: widths, separators, kanji numerals, daiji, Roman, circled and hex.

The input is either digits (half- or full-width) or a Japanese number reading such as
ひゃくにじゅうさん; both end up as the same set of candidates for the value.
"""

import unicodedata

from daemon.rewriters.base import Rewrite, unique_by_text
from daemon.forms import to_fullwidth_ascii

SOURCE = "number"

# Positional systems group digits by four: 一, 十, 百, 千 inside a group, 万, 億 … between groups.
_KANJI_DIGITS = "〇一二三四五六七八九"
_DIGITS_TO_KANJI = str.maketrans("0123456789", _KANJI_DIGITS)
_KANJI_SMALL_UNITS = ("", "十", "百", "千")
_KANJI_BIG_UNITS = ("", "万", "億", "兆", "京")
# Daiji (大字) are the tamper-resistant forms used on cheques and contracts.
_DAIJI_DIGITS = "零壱弐参四伍六七八九"
_DAIJI_SMALL_UNITS = ("", "拾", "百", "阡")
_DAIJI_BIG_UNITS = ("", "萬", "億", "兆", "京")
_LARGEST_POSITIONAL = 10 ** (4 * len(_KANJI_BIG_UNITS)) - 1

# Single code points exist only for these ranges.
_ROMAN_UPPER_ONE, _ROMAN_LOWER_ONE, _ROMAN_MAX = 0x2160, 0x2170, 12  # Ⅰ … Ⅻ, ⅰ … ⅻ
_CIRCLED_ONE, _CIRCLED_MAX = 0x2460, 20  # ① … ⑳

# Kana spellings of number words, including the sound changes before units
# (いっせん, さんびゃく, ろっぴゃく, はっせん, じゅっちょう …).
_READING_DIGITS = {
    "ぜろ": 0,
    "いち": 1,
    "いっ": 1,
    "に": 2,
    "さん": 3,
    "よん": 4,
    "ご": 5,
    "ろく": 6,
    "ろっ": 6,
    "なな": 7,
    "しち": 7,
    "はち": 8,
    "はっ": 8,
    "きゅう": 9,
}
_READING_SMALL_UNITS = {
    "じゅう": 10,
    "じゅっ": 10,
    "じっ": 10,
    "ひゃく": 100,
    "びゃく": 100,
    "ぴゃく": 100,
    "せん": 1000,
    "ぜん": 1000,
}
_READING_BIG_UNITS = {"まん": 10**4, "おく": 10**8, "ちょう": 10**12, "けい": 10**16}
_READING_UNITS = {**_READING_SMALL_UNITS, **_READING_BIG_UNITS}
_READING_TOKENS = {**_READING_DIGITS, **_READING_UNITS}
_LONGEST_READING_TOKEN = max(map(len, _READING_TOKENS))
_SOKUON_WORDS = {"いっ", "ろっ", "はっ", "じゅっ", "じっ"}  # only valid right before a unit


def number_rewrites(reading: str) -> list[Rewrite]:
    """All number candidates for `reading` (digits or a number reading); [] if it is neither."""
    digits = _ascii_digits(reading)
    if digits is None:
        value = parse_number_reading(reading)
        if value is None:
            return []
        digits = str(value)
    return digit_rewrites(digits)


def digit_rewrites(digits: str) -> list[Rewrite]:
    """Candidates for an ASCII digit string; leading zeros keep only digit-by-digit forms."""
    rewrites = [
        Rewrite(digits, "[半]", SOURCE),
        Rewrite(to_fullwidth_ascii(digits), "[全]", SOURCE),
    ]
    digitwise_kanji = digits.translate(_DIGITS_TO_KANJI)
    if len(digits) > 1 and digits.startswith("0"):
        # "007" is a code, not a quantity: no value-based forms.
        return rewrites + [Rewrite(digitwise_kanji, "漢数字", SOURCE)]

    value = int(digits)
    if value >= 1000:
        rewrites.append(Rewrite(f"{value:,}", "桁区切り", SOURCE))
    if value <= _LARGEST_POSITIONAL:
        rewrites.append(Rewrite(to_kanji_numeral(value), "漢数字", SOURCE))
    rewrites.append(Rewrite(digitwise_kanji, "漢数字", SOURCE))
    if value <= _LARGEST_POSITIONAL:
        rewrites.append(Rewrite(to_daiji(value), "大字", SOURCE))
    if 1 <= value <= _ROMAN_MAX:
        rewrites.append(Rewrite(chr(_ROMAN_UPPER_ONE + value - 1), "ローマ数字", SOURCE))
        rewrites.append(Rewrite(chr(_ROMAN_LOWER_ONE + value - 1), "ローマ数字(小)", SOURCE))
    if 1 <= value <= _CIRCLED_MAX:
        rewrites.append(Rewrite(chr(_CIRCLED_ONE + value - 1), "丸数字", SOURCE))
    if value >= 10:  # below ten the hex form says nothing new
        rewrites.append(Rewrite(f"0x{value:X}", "16進数", SOURCE))
    return unique_by_text(rewrites)


def to_kanji_numeral(value: int) -> str:
    """123 -> 百二十三, 10000 -> 一万, 0 -> 〇 (a leading 一 is dropped before 十, 百, 千)."""
    return _positional(value, _KANJI_DIGITS, _KANJI_SMALL_UNITS, _KANJI_BIG_UNITS, explicit_one=False)


def to_daiji(value: int) -> str:
    """123 -> 壱百弐拾参; daiji always write the 壱 so nothing can be prepended."""
    return _positional(value, _DAIJI_DIGITS, _DAIJI_SMALL_UNITS, _DAIJI_BIG_UNITS, explicit_one=True)


def _positional(value: int, digit_chars: str, small_units, big_units, *, explicit_one: bool) -> str:
    if not 0 <= value <= _LARGEST_POSITIONAL:
        raise ValueError(f"{value} is outside the range of kanji numerals")
    if value == 0:
        return digit_chars[0]
    groups = []
    for big_unit in big_units:
        value, group = divmod(value, 10_000)
        if group:
            groups.append(_group_text(group, digit_chars, small_units, explicit_one) + big_unit)
        if not value:
            break
    return "".join(reversed(groups))


def _group_text(group: int, digit_chars: str, small_units, explicit_one: bool) -> str:
    """One group of four digits (1..9999) without its big unit."""
    parts = []
    for position in range(3, -1, -1):
        digit = group // 10**position % 10
        if not digit:
            continue
        if position and digit == 1 and not explicit_one:
            parts.append(small_units[position])
        else:
            parts.append(digit_chars[digit] + small_units[position])
    return "".join(parts)


def parse_number_reading(reading: str) -> int | None:
    """Value of a Japanese number reading (ひゃくにじゅうさん -> 123), or None if it is not one.

    Accepts only well-formed numbers: units must decrease (せんひゃく, not ひゃくせん) and two
    bare digits in a row (いちに) are rejected, since that is a digit list, not a number.
    """
    tokens = _tokenize_number_reading(reading)
    if tokens is None:
        return None
    if len(tokens) > 1 and any(kana == "ぜろ" for kana, _ in tokens):
        return None  # ぜろ only stands alone
    total = 0
    section = 0  # the part below the next big unit (万, 億 …)
    pending_digit: int | None = None
    last_small_unit = last_big_unit = None
    for index, (kana, value) in enumerate(tokens):
        next_kana = tokens[index + 1][0] if index + 1 < len(tokens) else None
        if kana in _SOKUON_WORDS and next_kana not in _READING_UNITS:
            return None
        if kana in _READING_DIGITS:
            if pending_digit is not None:
                return None
            pending_digit = value
        elif kana in _READING_SMALL_UNITS:
            if last_small_unit is not None and value >= last_small_unit:
                return None
            section += (1 if pending_digit is None else pending_digit) * value
            pending_digit, last_small_unit = None, value
        else:  # big unit
            if last_big_unit is not None and value >= last_big_unit:
                return None
            section += pending_digit or 0
            if not section:
                return None  # まん on its own is not a number
            total += section * value
            section, pending_digit, last_small_unit, last_big_unit = 0, None, None, value
    return total + section + (pending_digit or 0)


def _tokenize_number_reading(reading: str) -> list[tuple[str, int]] | None:
    """Greedy longest-match split into number words; None if something else is in the way."""
    tokens = []
    position = 0
    while position < len(reading):
        for length in range(min(_LONGEST_READING_TOKEN, len(reading) - position), 0, -1):
            kana = reading[position : position + length]
            if kana in _READING_TOKENS:
                tokens.append((kana, _READING_TOKENS[kana]))
                position += length
                break
        else:
            return None
    return tokens or None


def _ascii_digits(text: str) -> str | None:
    """`text` with full-width digits folded to ASCII, or None unless it is all digits."""
    folded = unicodedata.normalize("NFKC", text)
    return folded if folded.isascii() and folded.isdigit() else None
