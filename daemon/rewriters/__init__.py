"""Rewriters: extra candidates derived from the reading or a base text.

Each rewriter is a pure function returning `Rewrite`s; `rewrite_candidates` runs them all.
"""

from datetime import datetime

from daemon.rewriters.base import Rewrite, unique_by_text
from daemon.rewriters.dates import date_rewrites
from daemon.rewriters.emoji_index import emoji_index, emoji_rewrites
from daemon.rewriters.numbers import number_rewrites, parse_number_reading
from daemon.rewriters.symbols import symbol_rewrites
from daemon.rewriters.width import width_rewrites

__all__ = [
    "Rewrite",
    "date_rewrites",
    "emoji_index",
    "emoji_rewrites",
    "number_rewrites",
    "parse_number_reading",
    "rewrite_candidates",
    "symbol_rewrites",
    "width_rewrites",
]


def rewrite_candidates(reading: str, text: str | None = None, *, now: datetime | None = None) -> list[Rewrite]:
    """Every rewriter's candidates for `reading`, first text wins on duplicates.

    Width variants are taken from `text` when given (the selected conversion), else from
    the reading. `now` defaults to the local time.
    """
    return unique_by_text(
        date_rewrites(reading, now or datetime.now())
        + number_rewrites(reading)
        + symbol_rewrites(reading)
        + width_rewrites(text or reading)
        + emoji_rewrites(reading)
    )
