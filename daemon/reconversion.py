"""Which written text a reconversion (再変換) converts again: pure functions over the field's surrounding text."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING

from daemon.conversion import NOT_IN_A_READING, ReadingTooLong, clean_reading
from ime_protocol import SurroundingDeletion, SurroundingText

if TYPE_CHECKING:
    from daemon.dictionary import TextReader

# The most text one reconversion takes: a sentence or two, as a selection of converted text would be.
MAX_RECONVERTED_CHARS = 200
# What a word before the cursor is made of, when nothing is selected: kana (with ー and ・), kanji and the
# marks written among them. A run of these ends at punctuation, spaces, Latin letters and digits.
_WORD_CHARS = re.compile(
    r"[\u3041-\u309f\u30a0-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    r"\U00020000-\U0003ffff々〆ヶ]"
)


@dataclass(frozen=True)
class ReconversionTarget:
    """Text in the field to convert again: `text`, which spans `before` characters before the cursor and
    `after` characters after it, selected or not."""

    text: str
    before: int
    after: int
    selected: bool = False

    @property
    def deletion(self) -> SurroundingDeletion | None:
        """What the field deletes as the reconversion starts. A selection is not deleted: the toolkits replace it
        with what is committed (GTK 3 and 4, Qt), and GTK 4.8's text view reports a selection's cursor at its
        other end, where a deletion around it would take the wrong text."""
        return None if self.selected else SurroundingDeletion(self.before, self.after)


def reconversion_target(text: str, cursor: int, anchor: int) -> ReconversionTarget | None:
    """The selection, if there is one; otherwise the run of Japanese characters just before the cursor.
    None where that is empty, too long, or holds a character a reading cannot."""
    if cursor != anchor:
        start, end = sorted((cursor, anchor))
    else:
        start = end = cursor
        while start > 0 and end - start < MAX_RECONVERTED_CHARS and _WORD_CHARS.match(text[start - 1]):
            start -= 1
    target = text[start:end]
    if not target.strip() or len(target) > MAX_RECONVERTED_CHARS:
        return None
    # A selection with a line break is not reconverted: its replacement would lose the break.
    if any(unicodedata.category(ch) in NOT_IN_A_READING for ch in target):
        return None
    return ReconversionTarget(target, cursor - start, end - cursor, selected=cursor != anchor)


@dataclass(frozen=True)
class Reconversion:
    target: ReconversionTarget
    reading: str
    field: SurroundingText  # the field once the target is deleted: the conversion's left context is before it


def reconversion(surrounding: SurroundingText | None, reader: TextReader | None, secret: bool) -> Reconversion | None:
    """What the reconversion key converts again, its reading, and the field without it. None in a secret field,
    where the field names no target, or its reading is too long to convert (ﷺ is 18 characters after NFKC): the
    text stays. None too until the daemon's warm-up has built the reading index: the key must not wait seconds
    for it (the frontend would give up on the answer that deletes the text)."""
    if surrounding is None or reader is None or not reader.loaded or secret:
        return None
    text, cursor = surrounding.text, surrounding.cursor
    target = reconversion_target(text, cursor, surrounding.anchor)
    if target is None:
        return None
    reading = reader.reading_of(target.text)
    try:
        clean_reading(reading)
    except ReadingTooLong:
        return None
    start = cursor - target.before
    return Reconversion(target, reading, SurroundingText(text[:start] + text[cursor + target.after :], start, start))
