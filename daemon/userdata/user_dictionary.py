"""The user dictionary: words the user registers, or imports from Mozc / Google IME.

Its file uses the Mozc / Google IME export format, so an export can also be dropped in:
one word per line, `よみ<TAB>表層<TAB>品詞<TAB>コメント` (comment optional), lines starting
with # or ! are comments; UTF-8 with or without a BOM, or UTF-16 with a BOM.
"""

import bisect
from dataclasses import dataclass
from pathlib import Path

from daemon.kana import to_hiragana
from daemon.userdata.storage import (
    InvalidEntry,
    LineFileStore,
    LoadReport,
    check_field,
    decode_lines,
    parse_lines,
    user_data_dir,
)

FILE_NAME = "user_dictionary.tsv"
DEFAULT_PART_OF_SPEECH = "名詞"
SUPPRESSION_PART_OF_SPEECH = "抑制単語"  # Mozc's "never show this surface for this reading"


@dataclass(frozen=True)
class UserEntry:
    reading: str  # hiragana
    surface: str
    part_of_speech: str  # a Mozc 品詞 name such as 名詞, 人名, 短縮よみ, 抑制単語
    comment: str = ""

    @property
    def suppresses(self) -> bool:
        return self.part_of_speech == SUPPRESSION_PART_OF_SPEECH


def make_entry(reading: str, surface: str, part_of_speech: str, comment: str = "") -> UserEntry:
    """A validated entry; surrounding spaces are trimmed and katakana readings become hiragana.

    Raises InvalidEntry (a ValueError) saying what is wrong.
    """
    reading, surface = reading.strip(), surface.strip()
    part_of_speech, comment = part_of_speech.strip(), comment.strip()
    check_field("reading", reading)
    check_field("surface", surface)
    check_field("part of speech", part_of_speech)
    check_field("comment", comment, required=False)
    return UserEntry(to_hiragana(reading), surface, part_of_speech, comment)


def parse_entry_line(line: str) -> UserEntry | None:
    """One line of the TSV format; None for a `!` comment line (`#` is handled by parse_lines)."""
    if line.startswith("!"):
        return None
    fields = line.split("\t")
    if len(fields) < 3:
        raise InvalidEntry(
            f"expected reading, surface and part of speech separated by tabs, found {len(fields)} field(s)"
        )
    reading, surface, part_of_speech, *comment = fields
    # Tabs beyond the fourth field can only have been part of the comment.
    return make_entry(reading, surface, part_of_speech, " ".join(comment))


def format_entry_line(entry: UserEntry) -> str:
    fields = [entry.reading, entry.surface, entry.part_of_speech]
    if entry.comment:
        fields.append(entry.comment)
    return "\t".join(fields)


class UserDictionary(LineFileStore[UserEntry]):
    """The user's words, loaded from `path` on first use; call `save()` to write changes."""

    HEADER = "# Tsuzuri user dictionary: reading<TAB>surface<TAB>part of speech<TAB>comment"

    def __init__(self, path: Path | None = None) -> None:
        super().__init__(path or user_data_dir() / FILE_NAME)
        self._entries_by_reading: dict[str, list[UserEntry]] = {}
        self._sorted_readings: list[str] | None = None  # for prefix lookup; None after a change

    def __len__(self) -> int:
        self._ensure_loaded()
        return sum(map(len, self._entries_by_reading.values()))

    def entries(self) -> list[UserEntry]:
        """Every entry, grouped by reading in the order they were added."""
        self._ensure_loaded()
        return [entry for entries in self._entries_by_reading.values() for entry in entries]

    def lookup(self, reading: str) -> list[UserEntry]:
        self._ensure_loaded()
        return list(self._entries_by_reading.get(reading, ()))

    def lookup_prefix(self, prefix: str) -> list[UserEntry]:
        """Entries whose reading starts with `prefix`, in reading order (for predictions)."""
        self._ensure_loaded()
        if self._sorted_readings is None:
            self._sorted_readings = sorted(self._entries_by_reading)
        found = []
        for index in range(bisect.bisect_left(self._sorted_readings, prefix), len(self._sorted_readings)):
            reading = self._sorted_readings[index]
            if not reading.startswith(prefix):
                break
            found += self._entries_by_reading[reading]
        return found

    def add(
        self, reading: str, surface: str, part_of_speech: str = DEFAULT_PART_OF_SPEECH, comment: str = ""
    ) -> bool:
        """Add a word; True if it is new, False if it only updated an existing word's comment.

        Raises InvalidEntry (a ValueError) for an empty field or one with a tab or line break.
        """
        self._ensure_loaded()
        added = self._insert(make_entry(reading, surface, part_of_speech, comment))
        self._mark_changed()
        return added

    def remove(self, reading: str, surface: str) -> bool:
        """Remove the word (under every part of speech); True if there was one."""
        self._ensure_loaded()
        reading = to_hiragana(reading.strip())
        entries = self._entries_by_reading.get(reading, [])
        kept = [entry for entry in entries if entry.surface != surface]
        if len(kept) == len(entries):
            return False
        if kept:
            self._entries_by_reading[reading] = kept
        else:
            del self._entries_by_reading[reading]
            self._sorted_readings = None
        self._mark_changed()
        return True

    def import_file(self, path: Path) -> LoadReport:
        """Merge a Mozc / Google IME export; the report counts the words that were new."""
        return self.import_bytes(path.read_bytes(), origin=path)

    def import_bytes(self, data: bytes, origin: Path | None = None) -> LoadReport:
        self._ensure_loaded()
        entries, skipped = parse_lines(decode_lines(data), parse_entry_line)
        added = sum(self._insert(entry) for entry in entries)
        if entries:
            self._mark_changed()
        return LoadReport(origin, added, skipped)

    def _insert(self, entry: UserEntry) -> bool:
        """Add `entry`, or replace the same word's entry (its comment may differ); True if new."""
        entries = self._entries_by_reading.setdefault(entry.reading, [])
        for index, existing in enumerate(entries):
            if (existing.surface, existing.part_of_speech) == (entry.surface, entry.part_of_speech):
                entries[index] = entry
                return False
        if not entries:
            self._sorted_readings = None
        entries.append(entry)
        return True

    def _parse_line(self, line: str) -> UserEntry | None:
        return parse_entry_line(line)

    def _absorb(self, entries: list[UserEntry]) -> None:
        for entry in entries:
            self._insert(entry)

    def _lines_to_save(self) -> list[str]:
        return [format_entry_line(entry) for entry in self.entries()]
