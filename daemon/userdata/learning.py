"""Learning history: which surface the user chose for a reading, how often and how recently.

Each (reading, surface) choice keeps a frequency that halves every `half_life_days`, so
both recency and frequency count: a word chosen several times this week outranks one
chosen once today, and both outrank a word that was popular last year.

File format, one choice per line (TSV; `#` starts a comment):
    reading<TAB>surface<TAB>weight<TAB>last_used
weight is the decayed frequency as of last_used, a Unix time in seconds.
"""

import heapq
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from daemon.paths import user_data_dir
from daemon.userdata.storage import InvalidEntry, LineFileStore, check_field

FILE_NAME = "learning.tsv"
DEFAULT_MAX_ENTRIES = 20_000  # ~1 MB of TSV; loads in well under 100 ms
DEFAULT_HALF_LIFE_DAYS = 14.0
_SECONDS_PER_DAY = 86_400


@dataclass(frozen=True)
class LearnedChoice:
    reading: str
    surface: str
    weight: float  # times chosen, each choice decayed by its age as of last_used
    last_used: float  # Unix time


def decayed_weight(choice: LearnedChoice, now: float, half_life_seconds: float) -> float:
    """The choice's weight as of `now`; this is its value for ranking and eviction."""
    age = max(0.0, now - choice.last_used)  # a clock set back must not inflate weights
    return choice.weight * 0.5 ** (age / half_life_seconds)


def chosen_again(
    previous: LearnedChoice | None, reading: str, surface: str, now: float, half_life_seconds: float
) -> LearnedChoice:
    """The record after the user picks `surface` for `reading` once more at `now`."""
    weight = 1.0 if previous is None else decayed_weight(previous, now, half_life_seconds) + 1.0
    return LearnedChoice(reading, surface, weight, now)


def parse_choice_line(line: str) -> LearnedChoice:
    fields = line.split("\t")
    if len(fields) != 4:
        raise InvalidEntry(f"expected 4 tab-separated fields, found {len(fields)}")
    reading, surface, weight_text, last_used_text = fields
    check_field("reading", reading)
    check_field("surface", surface)
    try:
        weight, last_used = float(weight_text), float(last_used_text)
    except ValueError:
        raise InvalidEntry("weight and last-used time must be numbers") from None
    if not (math.isfinite(weight) and weight > 0):
        raise InvalidEntry(f"weight must be a positive number, not {weight_text!r}")
    if not (math.isfinite(last_used) and last_used >= 0):
        raise InvalidEntry(f"last-used time must be a Unix time, not {last_used_text!r}")
    return LearnedChoice(reading, surface, weight, last_used)


def format_choice_line(choice: LearnedChoice) -> str:
    return f"{choice.reading}\t{choice.surface}\t{choice.weight:.6g}\t{choice.last_used:.0f}"


class LearningHistory(LineFileStore[LearnedChoice]):
    """The user's conversion choices, loaded from `path` on first use; `save()` writes changes."""

    HEADER = "# Tsuzuri learning history v1: reading<TAB>surface<TAB>weight<TAB>last used (Unix time)"

    def __init__(
        self,
        path: Path | None = None,
        *,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        half_life_days: float = DEFAULT_HALF_LIFE_DAYS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if max_entries < 1 or half_life_days <= 0:
            raise ValueError("max_entries and half_life_days must be positive")
        super().__init__(path or user_data_dir() / FILE_NAME)
        self.max_entries = max_entries
        self._half_life_seconds = half_life_days * _SECONDS_PER_DAY
        self._clock = clock
        self._choices: dict[str, dict[str, LearnedChoice]] = {}  # reading -> surface -> choice
        self._size = 0

    def __len__(self) -> int:
        self._ensure_loaded()
        return self._size

    def record(self, reading: str, surface: str) -> None:
        """Remember that the user chose `surface` for `reading` just now.

        Raises InvalidEntry (a ValueError) for an empty reading or surface or one with a tab
        or line break, which the file could not hold.
        """
        check_field("reading", reading)
        check_field("surface", surface)
        self._ensure_loaded()
        previous = self._choices.get(reading, {}).get(surface)
        choice = chosen_again(previous, reading, surface, self._clock(), self._half_life_seconds)
        self._put(choice)
        self._evict_beyond_cap(protected=choice)
        self._mark_changed()
        self._journal(format_choice_line(choice))  # a choice the user made survives a killed daemon

    def ranked(self, reading: str) -> list[str]:
        """Surfaces chosen for `reading`, most valuable (frequent and recent) first."""
        self._ensure_loaded()
        now = self._clock()
        choices = self._choices.get(reading, {}).values()
        ordered = sorted(choices, key=lambda choice: self._value(choice, now), reverse=True)
        return [choice.surface for choice in ordered]

    def choices(self, reading: str | None = None) -> list[LearnedChoice]:
        """What was learned for `reading` (every reading if None): by reading, each one's most valuable first."""
        self._ensure_loaded()
        now = self._clock()
        readings = sorted(self._choices) if reading is None else [reading] if reading in self._choices else []
        return [
            choice
            for each in readings
            for choice in sorted(self._choices[each].values(), key=lambda c: self._value(c, now), reverse=True)
        ]

    def forget(self, reading: str, surface: str | None = None) -> int:
        """Delete a learned choice (e.g. a mistaken one), or every choice for `reading` if `surface` is None;
        how many were deleted."""
        self._ensure_loaded()
        surfaces = self._choices.get(reading, {})
        doomed = list(surfaces) if surface is None else [surface] if surface in surfaces else []
        for each in doomed:
            self._remove(reading, each)
        if doomed:
            self._mark_changed()
        return len(doomed)

    def clear(self) -> int:
        """Forget everything; how many choices there were."""
        self._ensure_loaded()
        cleared = self._size
        self._choices.clear()
        self._size = 0
        self._mark_changed()
        return cleared

    def _put(self, choice: LearnedChoice) -> None:
        surfaces = self._choices.setdefault(choice.reading, {})
        self._size += choice.surface not in surfaces
        surfaces[choice.surface] = choice

    def _remove(self, reading: str, surface: str) -> None:
        surfaces = self._choices[reading]
        del surfaces[surface]
        if not surfaces:
            del self._choices[reading]
        self._size -= 1

    def _all_choices(self) -> Iterator[LearnedChoice]:
        for surfaces in self._choices.values():
            yield from surfaces.values()

    def _value(self, choice: LearnedChoice, now: float) -> tuple[float, float]:
        """Ranking and eviction order: decayed weight, then recency."""
        return decayed_weight(choice, now, self._half_life_seconds), choice.last_used

    def _evict_beyond_cap(self, protected: LearnedChoice | None = None) -> None:
        """Drop the least valuable choices above the cap, never `protected`.

        The choice just recorded is protected: with the cap full of frequent words it would
        otherwise be the least valuable, and nothing new could ever be learned.
        """
        excess = self._size - self.max_entries
        if excess <= 0:
            return
        now = self._clock()
        candidates = (choice for choice in self._all_choices() if choice is not protected)
        least_valuable = heapq.nsmallest(excess, candidates, key=lambda choice: self._value(choice, now))
        for choice in least_valuable:
            self._remove(choice.reading, choice.surface)

    def _parse_line(self, line: str) -> LearnedChoice:
        return parse_choice_line(line)

    def _absorb(self, entries: list[LearnedChoice]) -> None:
        for choice in entries:  # a repeated pair cannot come from save(); the later line wins
            self._put(choice)
        self._evict_beyond_cap()  # the cap may have been lowered since the file was written

    def _lines_to_save(self) -> Iterator[str]:
        return map(format_choice_line, self._all_choices())
