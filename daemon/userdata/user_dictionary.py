"""The user dictionary: words the user registers, or imports from Mozc / Google IME or Microsoft IME.

Its file uses the Mozc / Google IME export format, so an export can also be dropped in:
one word per line, `よみ<TAB>表層<TAB>品詞<TAB>コメント` (comment optional), lines starting
with # or ! are comments; UTF-8 with or without a BOM, or UTF-16 with a BOM.
Microsoft IME's text export is the same but for its `!Microsoft IME` header and its names of
parts of speech, which an import maps to Mozc's.
"""

import bisect
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from daemon.kana import to_hiragana
from daemon.paths import user_data_dir
from daemon.userdata.storage import InvalidEntry, LineFileStore, LoadReport, check_field, decode_lines, parse_lines

FILE_NAME = "user_dictionary.tsv"
DEFAULT_PART_OF_SPEECH = "名詞"
SUPPRESSION_PART_OF_SPEECH = "抑制単語"  # Mozc's "never show this surface for this reading"
# Mozc's parts of speech for user words: what `add` and imports accept, so that an export goes back into Mozc.
# The file itself is read whatever it holds (it may predate a check).
PARTS_OF_SPEECH = frozenset(
    {
        "名詞",
        "短縮よみ",
        "サジェストのみ",
        "固有名詞",
        "人名",
        "姓",
        "名",
        "組織",
        "地名",
        "名詞サ変",
        "名詞形動",
        "数",
        "アルファベット",
        "記号",
        "顔文字",
        "副詞",
        "連体詞",
        "接続詞",
        "感動詞",
        "接頭語",
        "助数詞",
        "接尾一般",
        "接尾人名",
        "接尾地名",
        "動詞ワ行五段",
        "動詞カ行五段",
        "動詞サ行五段",
        "動詞タ行五段",
        "動詞ナ行五段",
        "動詞マ行五段",
        "動詞ラ行五段",
        "動詞ガ行五段",
        "動詞バ行五段",
        "動詞ハ行四段",
        "動詞一段",
        "動詞カ変",
        "動詞サ変",
        "動詞ザ変",
        "動詞ラ変",
        "形容詞",
        "終助詞",
        "句読点",
        "独立語",
        SUPPRESSION_PART_OF_SPEECH,
    }
)
MICROSOFT_IME_HEADER = "!Microsoft IME"  # the first line of its export ("!Microsoft IME Dictionary Tool")
# Microsoft IME's names that differ from Mozc's, mapped as Mozc's own importer maps them.
MICROSOFT_IME_PARTS_OF_SPEECH: Mapping[str, str] = {
    "形容動詞": "名詞形動",
    "形動名詞": "名詞形動",
    "さ変形動名詞": "名詞形動",
    "さ変名詞": "名詞サ変",
    "ざ変名詞": "名詞サ変",
    "副詞的名詞": "名詞",
    "その他自立語": "名詞",
    "地名その他": "地名",
    "接尾語": "接尾一般",
    "姓名接頭語": "接頭語",
    "地名接頭語": "接頭語",
    "姓名接尾語": "接尾人名",
    "地名接尾語": "接尾地名",
    "あわ行五段": "動詞ワ行五段",
    "か行五段": "動詞カ行五段",
    "が行五段": "動詞ガ行五段",
    "さ行五段": "動詞サ行五段",
    "た行五段": "動詞タ行五段",
    "な行五段": "動詞ナ行五段",
    "ば行五段": "動詞バ行五段",
    "ま行五段": "動詞マ行五段",
    "ら行五段": "動詞ラ行五段",
    "一段動詞": "動詞一段",
    "慣用句": "独立語",
}


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


def check_part_of_speech(part_of_speech: str) -> None:
    if part_of_speech not in PARTS_OF_SPEECH:
        raise InvalidEntry(f"unknown part of speech {part_of_speech!r}")


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


def parse_import_line(line: str, part_of_speech_names: Mapping[str, str]) -> UserEntry | None:
    """One line of an export: its part of speech renamed to Mozc's by `part_of_speech_names`, then checked."""
    entry = parse_entry_line(line)
    if entry is None:
        return None
    entry = replace(entry, part_of_speech=part_of_speech_names.get(entry.part_of_speech, entry.part_of_speech))
    check_part_of_speech(entry.part_of_speech)
    return entry


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

    def add(self, reading: str, surface: str, part_of_speech: str = DEFAULT_PART_OF_SPEECH, comment: str = "") -> bool:
        """Add a word; True if it is new, False if it only updated an existing word's comment.

        Raises InvalidEntry (a ValueError) for an empty field, one with a tab or line break, or a part of
        speech Mozc does not have.
        """
        entry = make_entry(reading, surface, part_of_speech, comment)
        check_part_of_speech(entry.part_of_speech)
        self._ensure_loaded()
        added = self._insert(entry)
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
        """Merge a Mozc / Google IME or Microsoft IME export; the report counts the words that were new and
        names each line that was not imported, and why."""
        return self.import_bytes(path.read_bytes(), origin=path)

    def import_bytes(self, data: bytes, origin: Path | None = None) -> LoadReport:
        self._ensure_loaded()
        lines = decode_lines(data)
        from_microsoft_ime = bool(lines) and lines[0].startswith(MICROSOFT_IME_HEADER)
        names = MICROSOFT_IME_PARTS_OF_SPEECH if from_microsoft_ime else {}
        entries, skipped = parse_lines(lines, lambda line: parse_import_line(line, names))
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
