"""Training text for the language model: the plain-text sources of ../shared/corpus, each capped in size.

Sources differ in size by two orders of magnitude, and the two largest (Aozora fiction and laws) are the
registers least like what people type; uncapped they would decide every choice. Each source therefore
contributes at most `cap_chars` characters, sampled evenly through the file so a cap keeps its variety.
Only the training splits are read: never wac/dev.jsonl or wac/test.jsonl (the WAC eval documents), never the
evaluation sets.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

# Per-source character cap (see daemon/lm/README.md for what it was chosen against).
DEFAULT_CAP_CHARS = 4_000_000
# Tables beside the text that are not running text.
_NOT_TEXT = {"aozora_ruby.tsv", "aozora_works.tsv"}


@dataclass(frozen=True)
class Source:
    name: str
    lines: list[str]

    @property
    def chars(self) -> int:
        return sum(map(len, self.lines))


def read_sources(corpus: Path) -> list[Source]:
    """Every training source: text/*.txt one line a sentence, WAC train sentences, Anthy train surfaces."""
    sources = [Source(path.stem, [line for line in path.read_text(encoding="utf-8").splitlines() if line])
               for path in sorted((corpus / "text").glob("*.txt")) if path.name not in _NOT_TEXT]
    wac = corpus / "wac" / "train.jsonl"
    if wac.is_file():
        sources.append(Source("wac_train", [record["text"] for record in _records(wac)]))
    anthy = corpus / "anthy" / "train.jsonl"
    if anthy.is_file():
        sources.append(Source("anthy_train", ["".join(record["surface_segments"]) for record in _records(anthy)]))
    if not sources:
        raise FileNotFoundError(f"no training text under {corpus} (expected text/*.txt, wac/, anthy/)")
    return sources


def capped(lines: list[str], cap_chars: int | None) -> list[str]:
    """At most `cap_chars` characters of `lines`, taken evenly through them (deterministic); None: all."""
    total = sum(map(len, lines))
    if cap_chars is None or total <= cap_chars:
        return lines
    # Every line whose running character total crosses a multiple of the stride: an even spread.
    stride = total / cap_chars
    chosen, running, next_mark, taken = [], 0, 0.0, 0
    for line in lines:
        running += len(line)
        if running >= next_mark and taken + len(line) <= cap_chars:
            chosen.append(line)
            taken += len(line)
            next_mark += stride * len(line)
    return chosen


def _records(path: Path):
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)
