"""Where user data lives, how it is written safely, and how damaged files are read.

Shared by the user dictionary and the learning history. Files are line-based text so that
one bad line costs that line only: readers skip it, report it, and keep the rest. A file that
cannot be read at all (permissions, a directory in its place) is reported and never written over;
before a save drops lines that could not be read, the file is copied aside.
"""

import codecs
import contextlib
import os
import re
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

_TEMP_SUFFIX = ".tmp"
_JOURNAL_SUFFIX = ".journal"
_DAMAGED_SUFFIX = ".damaged"
_REPLACEMENT_CHARACTER = "\ufffd"  # what decoding puts where bytes were invalid

_FIELD_BREAKER = re.compile("[\t\n\r]")  # would split the field or the line

Entry = TypeVar("Entry")


class InvalidEntry(ValueError):
    """An entry or file line that cannot be used; the message says why."""


class UnwritableStore(Exception):
    """A change to a store whose file could not be read: it could never be saved (the file is never written over)."""


def check_field(name: str, value: str, *, required: bool = True) -> None:
    """Raise InvalidEntry unless `value` fits in one tab-separated field."""
    if required and not value:
        raise InvalidEntry(f"empty {name}")
    if _FIELD_BREAKER.search(value):
        raise InvalidEntry(f"{name} contains a tab or a line break")


@dataclass(frozen=True)
class SkippedLine:
    line_number: int  # 1-based, as an editor shows it
    reason: str
    text: str

    def __str__(self) -> str:
        return f"line {self.line_number}: {self.reason}: {self.text!r}"


@dataclass
class LoadReport:
    """What a load found: the file, how many entries were kept, and each line that was not."""

    path: Path | None
    loaded: int = 0
    skipped: list[SkippedLine] = field(default_factory=list)
    unreadable: str = ""  # why the file could not be read at all; it is then left alone

    @property
    def clean(self) -> bool:
        return not self.skipped and not self.unreadable

    def summary(self) -> str:
        """What went wrong, without the lines' text: that is what the user typed, and logs keep it."""
        if self.unreadable:
            return str(self)
        reasons = sorted({skipped.reason for skipped in self.skipped})
        lines = ", ".join(str(skipped.line_number) for skipped in self.skipped[:20])
        more = ", …" if len(self.skipped) > 20 else ""
        name = self.path.name if self.path is not None else "it"
        return (
            f"{self.path}: skipped {len(self.skipped)} damaged lines ({lines}{more}: {'; '.join(reasons)}); "
            f"the file is copied to {name}{_DAMAGED_SUFFIX} before they are dropped"
        )

    def __str__(self) -> str:
        if self.unreadable:
            return f"{self.path}: cannot be read ({self.unreadable}); it is left as it is and not written"
        summary = f"{self.path}: loaded {self.loaded} entries, skipped {len(self.skipped)} lines"
        return "\n  ".join([summary, *map(str, self.skipped)])


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Replace `path` with `data` so that a crash at any moment leaves the old or the new file.

    The data goes to a temporary file in the same directory (rename is only atomic within
    one file system), is fsynced, renamed over the target, and the directory is fsynced so
    the rename itself survives a power cut.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=_TEMP_SUFFIX)
    try:
        with os.fdopen(descriptor, "wb") as temp_file:
            temp_file.write(data)
            temp_file.flush()
            os.fsync(temp_file.fileno())
        os.replace(temp_name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp_name)
        raise
    _fsync_directory(path.parent)


def remove_stale_temp_files(path: Path) -> None:
    """Delete temporary files that a killed writer of `path` left behind.

    Only safe while nothing is writing `path`; the daemon, its only writer, calls this on load.
    """
    for stale in path.parent.glob(f".{path.name}.*{_TEMP_SUFFIX}"):
        with contextlib.suppress(FileNotFoundError):
            stale.unlink()


def decode_lines(data: bytes) -> list[str]:
    """Split `data` into lines without line endings.

    UTF-8 with or without a BOM, or UTF-16 with a BOM (as Google IME exports). Invalid bytes
    become U+FFFD, which `parse_lines` reports, so one damaged line never fails the file.
    """
    for bom, encoding in ((codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")):
        if data.startswith(bom):
            text = data[len(bom) :].decode(encoding, errors="replace")
            break
    else:
        text = data.removeprefix(codecs.BOM_UTF8).decode("utf-8", errors="replace")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the newline ending the last line does not start another
    return [line.removesuffix("\r") for line in lines]


def parse_lines(
    lines: Iterable[str], parse_line: Callable[[str], Entry | None]
) -> tuple[list[Entry], list[SkippedLine]]:
    """Run `parse_line` over every line but blank ones and `#` comments.

    `parse_line` returns an entry, None for a line to ignore silently, or raises InvalidEntry.
    """
    entries: list[Entry] = []
    skipped: list[SkippedLine] = []
    for line_number, line in enumerate(lines, start=1):
        if _REPLACEMENT_CHARACTER in line:
            skipped.append(SkippedLine(line_number, "invalid bytes for the file's encoding", line))
            continue
        if not line.strip() or line.startswith("#"):
            continue
        try:
            entry = parse_line(line)
        except InvalidEntry as error:
            skipped.append(SkippedLine(line_number, str(error), line))
            continue
        if entry is not None:
            entries.append(entry)
    return entries, skipped


class LineFileStore(Generic[Entry]):
    """A line-based file loaded lazily on first use and saved atomically when changed.

    Subclasses say how one line parses (`_parse_line`), what to do with the parsed entries
    (`_absorb`) and which lines to write (`_lines_to_save`), and call `_ensure_loaded`
    before using their data and `_mark_changed` after changing it.

    A subclass may also append lines to a journal beside the file (`_journal`): each is written
    before the call returns, so a killed process loses none of them; loading replays the journal
    after the file (in the file's own line format: the later line wins), and a save, which writes
    everything, removes it.
    """

    HEADER = ""  # comment line written at the top of the file

    def __init__(self, path: Path) -> None:
        self.path = path
        self._report: LoadReport | None = None
        self._changed = False
        self._write_error = ""  # why the last journal append or save failed; "" once one succeeds

    @property
    def journal_path(self) -> Path:
        return self.path.with_name(self.path.name + _JOURNAL_SUFFIX)

    @property
    def load_report(self) -> LoadReport:
        """What loading the file kept and skipped (loads it if that has not happened yet)."""
        self._ensure_loaded()
        assert self._report is not None
        return self._report

    @property
    def keeping_problem(self) -> str:
        """Why changes made now may not be kept ("" when they are, or before the file is loaded): the file
        could not be read, so changes stay in memory; or the last write failed."""
        if self._report is not None and self._report.unreadable:
            return f"{self.path.name} cannot be read ({self._report.unreadable}): changes are kept in memory only"
        return self._write_error

    def check_writable(self) -> None:
        """Raise UnwritableStore if the file could not be read; call it before a change that must be saved."""
        if self.load_report.unreadable:
            raise UnwritableStore(f"{self.load_report}; fix it and restart the daemon")

    def save(self) -> bool:
        """Write the file if anything changed since the last load or save; True if written. A file that
        could not be read is never written; one whose damaged lines would be dropped is copied aside first
        (FILE.damaged)."""
        if not self._changed or self.load_report.unreadable:
            return False
        if self.load_report.skipped and self.path.exists():
            damaged = self.path.with_name(self.path.name + _DAMAGED_SUFFIX)
            atomic_write_bytes(damaged, self.path.read_bytes())
            damaged.chmod(0o600)
            self.load_report.skipped = []  # kept in the copy: later saves need not copy again
        lines = [self.HEADER, *self._lines_to_save()]
        try:
            atomic_write_bytes(self.path, "".join(f"{line}\n" for line in lines).encode("utf-8"))
        except OSError as error:
            self._write_error = _not_written(self.path, error)
            raise
        self._write_error = ""
        with contextlib.suppress(FileNotFoundError):
            self.journal_path.unlink()  # everything it held is in the file now
        self._changed = False
        return True

    def _ensure_loaded(self) -> None:
        if self._report is not None:
            return
        try:
            remove_stale_temp_files(self.path)
            data = self._read_if_present(self.path)
            journal = self._read_if_present(self.journal_path)
        except OSError as error:
            self._report = LoadReport(self.path, unreadable=f"{type(error).__name__}: {error.strerror or error}")
            return
        entries, skipped = parse_lines(decode_lines(data), self._parse_line)
        # A line torn by a kill mid-append is dropped with the journal at the next save, which copies
        # nothing aside for it: the file itself lost nothing.
        replayed, _torn = parse_lines(decode_lines(journal), self._parse_line)
        self._absorb(entries + replayed)
        self._report = LoadReport(self.path, len(entries), skipped)
        if replayed:
            self._mark_changed()  # the next save folds the journal into the file

    @staticmethod
    def _read_if_present(path: Path) -> bytes:
        try:
            return path.read_bytes()
        except FileNotFoundError:
            return b""

    def _journal(self, line: str) -> None:
        """Append one line to the journal (created 0600) before returning. Not fsynced: it survives the
        process being killed, not a power cut, which costs at most the last few seconds before a save."""
        if self.load_report.unreadable:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            descriptor = os.open(self.journal_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(descriptor, f"{line}\n".encode())
            finally:
                os.close(descriptor)
        except OSError as error:  # the entry is in memory and the next save tries to write it
            self._write_error = _not_written(self.journal_path, error)
        else:
            self._write_error = ""

    def _mark_changed(self) -> None:
        self._changed = True

    def _parse_line(self, line: str) -> Entry | None:
        raise NotImplementedError

    def _absorb(self, entries: list[Entry]) -> None:
        raise NotImplementedError

    def _lines_to_save(self) -> Iterable[str]:
        raise NotImplementedError


def _not_written(path: Path, error: OSError) -> str:
    return f"{path.name} cannot be written ({error.strerror or error}): changes are kept in memory only until it can"


def _fsync_directory(directory: Path) -> None:
    descriptor = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
