"""The words the document already writes, found again in the reading being converted (蹄葉炎 after 蹄葉炎).

Names and terms a document introduces are often no dictionary entry (蹄葉炎, 神舟, 丹霞): typed again, they
convert into homophones (体葉縁, 信州, 単価). So the runs of kanji before the cursor are read piece by piece — a
piece is an entry written as that part of the run, read as the entry reads, or one kanji in one of its own
readings (霞 か: kanji_readings.py) — and every part of a run from one of its word boundaries to another,
two kanji or more, whose reading is a stretch of the typed reading is a word the conversion may write there. A
part that is itself an entry is left to the dictionary, which offers it with its own readings (時間 never reads
じま). Katakana words read as they are written: a run of the context, or a part of it between ・, is a word wherever
the reading spells it (ハトゥは, not はトゥは, after ティハトゥ's son ハトゥ; コエリョは after ガスパール・コエリョ).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from daemon.kana import KATAKANA_CLASS, to_hiragana

# (run, i) → the (length, reading) of every entry written run[i:i + length], and of run[i]'s own readings (length 1).
Pieces = Callable[[str, int], Sequence[tuple[int, str]]]
# A run → the offsets where its words begin and end, as the dictionary reads it (0 and its length among them).
Boundaries = Callable[[str], frozenset[int]]

_KANJI_RUN = re.compile(r"[\u3400-\u9fff々〆ヶ]{2,}")
_KATAKANA_RUN = re.compile(f"[{KATAKANA_CLASS}](?:[{KATAKANA_CLASS}・]*[{KATAKANA_CLASS}])?")
MIN_WORD_CHARS = 2
# Longer parts of a run are compounds of words the dictionary has (a 16-kanji law title), not a name.
MAX_WORD_CHARS = 8


@dataclass(frozen=True)
class ContextWord:
    """A part of a kanji run of the context, or one of its katakana words, that spells reading[start:end]."""

    start: int
    end: int
    surface: str


def kanji_runs(context: str) -> list[str]:
    """The distinct runs of two kanji or more in `context`, the latest first."""
    return list(dict.fromkeys(reversed(_KANJI_RUN.findall(context))))


def context_words(reading: str, context: str, pieces: Pieces, boundaries: Boundaries) -> list[ContextWord]:
    """Every part of a kanji run of `context` (MIN_WORD_CHARS to MAX_WORD_CHARS kanji; no entry itself, which is
    a piece as long at its start; from a boundary of the run's words to another: 代初 is no part of 時代初期) that
    spells a stretch of `reading` (hiragana) piece by piece, once each."""
    found: dict[ContextWord, None] = {}
    for run in kanji_runs(context):
        cuts: frozenset[int] | None = None  # read only for a run that spells something: most spell nothing
        for first in range(len(run) - MIN_WORD_CHARS + 1):
            for length, piece in pieces(run, first):
                start = reading.find(piece) if piece else -1
                while start >= 0:
                    # (end of the part in the run, end of its reading)
                    stack = [(first + length, start + len(piece))]
                    while stack:
                        last, end = stack.pop()
                        if last - first >= MIN_WORD_CHARS:
                            cuts = boundaries(run) if cuts is None else cuts
                            if (
                                first in cuts
                                and last in cuts
                                and all(size != last - first for size, _ in pieces(run, first))
                            ):
                                found[ContextWord(start, end, run[first:last])] = None
                        if last == len(run):
                            continue
                        for more, following in pieces(run, last):
                            if (
                                last + more - first <= MAX_WORD_CHARS
                                and following
                                and reading.startswith(following, end)
                            ):
                                stack.append((last + more, end + len(following)))
                    start = reading.find(piece, start + 1)
    return list(found)


def _katakana_names(context: str) -> list[str]:
    """The katakana runs of `context`, the latest first, each followed by its parts where ・ joins some: a name
    written whole once (クリスチャン・ダンチゼン) comes back as its surname alone (ダンチゼン)."""
    names: list[str] = []
    for run in reversed(_KATAKANA_RUN.findall(context)):
        names.append(run)
        if "・" in run:
            names.extend(run.split("・"))
    return list(dict.fromkeys(names))


def katakana_words(reading: str, context: str) -> list[ContextWord]:
    """Every run of two katakana or more of `context` (・ inside a run joins it: ミンラ・ゲ), and every part of
    such a run, wherever `reading` (hiragana) spells it, once each."""
    found: dict[ContextWord, None] = {}
    for run in _katakana_names(context):
        spelt = to_hiragana(run)
        if len(run) < MIN_WORD_CHARS or spelt == run:
            continue
        start = reading.find(spelt)
        while start >= 0:
            found[ContextWord(start, start + len(spelt), run)] = None
            start = reading.find(spelt, start + 1)
    return list(found)
