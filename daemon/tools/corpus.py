"""The text of ../shared/corpus that may be learned from, and the part held out from everything.

Held out: whole documents at the end of three sources of the registers people type — Wikipedia paragraphs with
their questions (jaquad), news articles (wikinews_articles) and conversational sentences (tatoeba) — from which
`tsuzuri-train heldout` makes the held-out evaluation set (training/heldout.py). They, a buffer of the lines
before them (the rest of a held-out document's article or neighbours), any line anywhere equal to a held-out line,
and the headlines of the held-out news, reach no language model (tsuzuri-lm build), no training pack
(training/data.py) and no weight fit (which reads ../shared/eval only). tests/unit/test_corpus.py proves it.

For the language model each source contributes at most `cap_chars` characters, sampled evenly through the file so
a cap keeps its variety: sources differ in size by two orders of magnitude, and the two largest (Aozora fiction
and laws) are the registers least like what people type. Only the training splits are read: never wac/dev.jsonl
or wac/test.jsonl (the WAC eval documents), never the evaluation sets.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from functools import cache
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


# -- the held-out documents -----------------------------------------------------------------------

# Marks a folder as the held-out evaluation set (training/heldout.py writes it): tsuzuri-lm fit refuses to fit on it.
HELD_OUT_MANIFEST = "heldout-manifest.json"

# Lines held out at the end of each source (from the first document that starts there), and the lines before them
# that nothing learns from either.
HELD_OUT_TAIL_LINES = {"jaquad.txt": 1500, "wikinews_articles.txt": 1200, "tatoeba.txt": 600}
BUFFER_LINES = 200
# wikinews_headlines.txt holds the articles' headlines in the same order: as many of its last lines as the held-out
# articles and the buffer are of the articles' lines, with a margin, are not learned from.
HEADLINES = "wikinews_headlines.txt"
_QUESTION = re.compile(r"[?？]$")
# The source lines that close a news article: "朝日新聞、2011年12月21日。", "ウィキニュース、2011年11月8日。" and the
# titles they cite: "asahi.com『オリンパス一斉捜索…』。", "毎日jp(北京・米村耕一)『北朝鮮:…』。"
_NEWS_DATE = re.compile(r"、\d{4}年\d{1,2}月\d{1,2}日。$")
_NEWS_TITLE = re.compile(r"^[^。、『]{1,30}『.*』。$")


def _document_starts(name: str, lines: list[str], index: int) -> bool:
    """Whether a document starts at `lines[index]`: a paragraph after the previous one's questions (jaquad), an
    article after the previous one's sources (wikinews), any sentence (tatoeba)."""
    if index == 0 or name == "tatoeba.txt":
        return True
    if name == "jaquad.txt":
        return bool(_QUESTION.search(lines[index - 1])) and not _QUESTION.search(lines[index])
    return bool(_NEWS_DATE.search(lines[index - 1])) and not (
        _NEWS_DATE.search(lines[index]) or _NEWS_TITLE.search(lines[index])
    )


def held_out_start(name: str, lines: list[str]) -> int | None:
    """The index of the first held-out line of source file `name` (None: nothing held out there)."""
    tail = HELD_OUT_TAIL_LINES.get(name)
    if tail is None or len(lines) <= tail + BUFFER_LINES:
        return None
    return next(index for index in range(len(lines) - tail, len(lines)) if _document_starts(name, lines, index))


@dataclass(frozen=True)
class HeldOut:
    """The held-out documents: each source's held-out lines (in order), and the lines of sources that nothing
    learns from (held out, buffer, the held-out news's headlines)."""

    documents: dict[str, list[str]]
    excluded: dict[str, range]

    @property
    def lines(self) -> frozenset[str]:
        return frozenset(line for lines in self.documents.values() for line in lines)

    @property
    def sha256(self) -> str:
        """A digest of the held-out lines, recorded in what is built without them."""
        digest = hashlib.sha256()
        for name in sorted(self.documents):
            digest.update("\n".join([name, *self.documents[name], ""]).encode("utf-8"))
        return digest.hexdigest()


@cache
def _held_out(text_dir: Path) -> HeldOut:
    documents, excluded = {}, {}
    for name in HELD_OUT_TAIL_LINES:
        path = text_dir / name
        if not path.is_file():
            continue
        lines = _text_lines(path)
        start = held_out_start(name, lines)
        if start is not None:
            documents[name] = lines[start:]
            excluded[name] = range(max(start - BUFFER_LINES, 0), len(lines))
    articles = text_dir / "wikinews_articles.txt"
    headlines = text_dir / HEADLINES
    if "wikinews_articles.txt" in excluded and headlines.is_file():
        share = len(excluded["wikinews_articles.txt"]) / len(_text_lines(articles))
        count = len(_text_lines(headlines))
        excluded[HEADLINES] = range(max(count - round(count * share * 1.5), 0), count)
    return HeldOut(documents, excluded)


def held_out(corpus: Path) -> HeldOut:
    return _held_out(corpus.resolve() / "text")


# -- the tuning documents ---------------------------------------------------------------------------

# Lines from the middle of the held-out set's sources that tsuzuri-base was not trained on (it learnt from WAC,
# Aozora, JGLUE and Wikinews): what is fitted on text like the held-out set's — the neural model's weight — is
# fitted on these, with a language model and word vectors built without them (`--without-tuning`). Everything
# shipped learns from them.
TUNING_LINES = {"jaquad.txt": 3000, "tatoeba.txt": 1200}
# Marks a folder as the tuning set (training/heldout.py --tuning): tsuzuri-lm fit fits on it only with a language
# model and word vectors built without it.
TUNING_MANIFEST = "tuning-manifest.json"


def tuning_range(name: str, lines: list[str]) -> range:
    """The tuning lines of source file `name`: whole documents from the middle of what is not held out (nor in the
    buffer) on, TUNING_LINES of them or a few more; empty where the source has none."""
    count = TUNING_LINES.get(name)
    held = held_out_start(name, lines)
    limit = len(lines) if held is None else max(held - BUFFER_LINES, 0)
    if count is None or limit < 2 * count:
        return range(0)
    start = next(i for i in range(limit // 2, limit) if _document_starts(name, lines, i))
    end = next((i for i in range(start + count, limit) if _document_starts(name, lines, i)), limit)
    return range(start, end)


def tuning_documents(corpus: Path) -> dict[str, list[str]]:
    """Each source's tuning lines, in order."""
    documents = {}
    for name in TUNING_LINES:
        path = corpus.resolve() / "text" / name
        if path.is_file():
            lines = _text_lines(path)
            documents[name] = [lines[index] for index in tuning_range(name, lines)]
    return documents


def learnable_lines(corpus: Path, path: Path, without_tuning: bool = False) -> list[str]:
    """The lines of text file `path` of `corpus` that may be learned from: not held out, not in the buffer, not
    equal to a held-out line (nor, `without_tuning`, a tuning line); empty lines dropped."""
    held = held_out(corpus)
    excluded = held.excluded.get(path.name, range(0))
    lines, out = _text_lines(path), held.lines
    tuning = tuning_range(path.name, lines) if without_tuning else range(0)
    also_out = frozenset(lines[index] for index in tuning)
    return [
        line
        for index, line in enumerate(lines)
        if index not in excluded and index not in tuning and line not in out and line not in also_out
    ]


def _text_lines(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line]


# -- what may be learned from ----------------------------------------------------------------------


def read_sources(corpus: Path, without_tuning: bool = False) -> list[Source]:
    """Every training source: text/*.txt one line a sentence, WAC train sentences, Anthy train surfaces; less what
    is held out (and, `without_tuning`, the tuning documents)."""
    out = held_out(corpus).lines
    sources = [
        Source(path.stem, learnable_lines(corpus, path, without_tuning))
        for path in sorted((corpus / "text").glob("*.txt"))
        if path.name not in _NOT_TEXT
    ]
    wac = corpus / "wac" / "train.jsonl"
    if wac.is_file():
        sources.append(Source("wac_train", [record["text"] for record in _records(wac) if record["text"] not in out]))
    anthy = corpus / "anthy" / "train.jsonl"
    if anthy.is_file():
        surfaces = ("".join(record["surface_segments"]) for record in _records(anthy))
        sources.append(Source("anthy_train", [surface for surface in surfaces if surface not in out]))
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
