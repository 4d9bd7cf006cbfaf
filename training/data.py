"""Training pairs for the jinen prompt format: (left context, katakana reading) → surface text.

WAC sentences give gold readings and bunsetsu; plain text gets its readings and phrase chunks from
MeCab (fugashi + unidic-lite). Either way a sentence becomes a sequence of units (phrase surface,
phrase reading), which is cut into spans of 1–4 units, like the dev set's items. tsuzuri-train pack
(training/pack.py) tokenizes them into what training reads.
"""

from __future__ import annotations

import hashlib
import json
import random
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Iterable, Iterator, Sequence

from daemon.tools.gguf_writer import base_characters
from daemon.kana import is_kana, to_katakana
from daemon.tools import corpus as corpus_module

MIN_READING, MAX_READING = 5, 40  # kana per input, as in the dev set
MAX_SPAN_UNITS = 4
CONTEXT_KEEP = 40  # characters of left context stored per pair (the jinen prompt uses the last 10)
WAC_PASSES = 4  # WAC is small and gold: cut each sentence several ways
# react_docs.txt is left out: nearly every line has spaces between Latin and Japanese, which MeCab drops
TEXT_FILES = (
    "aozora.txt",
    "jglue.txt",
    "wikinews_headlines.txt",
    "wikinews_articles.txt",
    "jaquad.txt",
    "laws.txt",
    "gsd.txt",
    "tatoeba.txt",
)
CONTINUOUS_TEXT = {"aozora.txt", "wikinews_articles.txt", "jaquad.txt", "laws.txt"}  # lines continue one text
CHARS_FILE, MANIFEST_FILE = "chars.txt", "manifest.json"
# Derived data keeps its sources' terms; the corpus README has the full attribution.
ATTRIBUTION = (
    "Derived from: Wikipedia Annotated Corpus (Kyoto University, CC BY-SA 4.0), JGLUE (Yahoo Japan, "
    "CC BY-SA 4.0), JaQuAD (CC BY-SA 3.0), UD Japanese-GSD (CC BY-SA 4.0), Tatoeba (CC BY 2.0 FR), "
    "Japanese Wikinews (CC BY 2.5), Anthy's corpus (Anthy contributors, LGPL / public domain), "
    "e-Gov laws and Aozora Bunko (public domain). See the corpus README.md for details."
)


@dataclass(frozen=True)
class Unit:
    """A phrase of a sentence: its written text and the kana a person types for it (katakana)."""

    surface: str
    reading: str


@dataclass(frozen=True)
class Pair:
    context: str
    reading: str
    surface: str
    source: str


def needs_reading(text: str) -> bool:
    """Whether typing `text` needs a conversion: it holds a character that is not kana, ASCII or a symbol."""
    for ch in unicodedata.normalize("NFKC", text):
        if is_kana(ch) or ch.isascii():
            continue
        if unicodedata.category(ch).startswith(("L", "N")):  # kanji, 々, 〆, other scripts
            return True
    return False


def typable(reading: str) -> bool:
    """A usable input: kana, ー, ASCII letters/digits and punctuation; no spaces or unread kanji."""
    text = unicodedata.normalize("NFKC", reading)
    return bool(text) and not needs_reading(text) and " " not in text


def cut_spans(n_units: int, rng: random.Random, max_units: int = MAX_SPAN_UNITS) -> list[tuple[int, int]]:
    """Partition units [0, n) into consecutive spans of 1..max_units units, lengths drawn at random."""
    spans, start = [], 0
    while start < n_units:
        end = min(n_units, start + rng.randint(1, max_units))
        spans.append((start, end))
        start = end
    return spans


def sentence_pairs(
    units: Sequence[Unit],
    preceding: str,
    spans: Iterable[tuple[int, int]],
    source: str,
    context_keep: int = CONTEXT_KEEP,
) -> Iterator[Pair]:
    """The pairs of one sentence's spans whose reading is typable and 5–40 characters long.

    `preceding` is the text before the sentence in its document; a span's context is that plus the
    sentence up to the span, its last `context_keep` characters.
    """
    offsets = [0]
    for unit in units:
        offsets.append(offsets[-1] + len(unit.surface))
    sentence = "".join(unit.surface for unit in units)
    for start, end in spans:
        reading = "".join(unit.reading for unit in units[start:end])
        surface = sentence[offsets[start] : offsets[end]]
        if MIN_READING <= len(reading) <= MAX_READING and typable(reading) and surface.strip():
            context = (preceding + sentence[: offsets[start]])[-context_keep:]
            yield Pair(context, reading, surface, source)


# -- WAC ----------------------------------------------------------------------------------------


def wac_units(record: dict) -> list[Unit]:
    """Bunsetsu of a WAC sentence (main text; parenthetical parts are not in `text`, nor in the dev set)."""
    morphs, starts = record["morphs"], record["bnst"]
    units = []
    for start, end in zip(starts, [*starts[1:], len(morphs)]):
        surface = "".join(m[0] for m in morphs[start:end])
        reading = to_katakana("".join(m[1] for m in morphs[start:end]))
        units.append(Unit(surface, reading))
    return units


def wac_pairs(lines: Iterable[str], rng: random.Random, passes: int = WAC_PASSES) -> Iterator[Pair]:
    """Pairs from WAC JSON lines, in document order; context is the document's text so far."""
    doc, preceding = None, ""
    for line in lines:
        record = json.loads(line)
        if record["doc"] != doc:
            doc, preceding = record["doc"], ""
        units = wac_units(record)
        spans = sorted({span for _ in range(passes) for span in cut_spans(len(units), rng)})
        yield from sentence_pairs(units, preceding, spans, "wac")
        preceding = (preceding + record["text"])[-CONTEXT_KEEP:]


# -- Anthy's gold segments ---------------------------------------------------------------------------


def anthy_pairs(lines: Iterable[str], rng: random.Random) -> Iterator[Pair]:
    """Pairs from Anthy's corpus: each line a phrase cut into gold (reading, surface) segments; the context
    is the phrase up to the span (the phrases are independent). The few lines whose segment lists differ
    in length cannot be aligned and are skipped."""
    for line in lines:
        record = json.loads(line)
        if len(record["surface_segments"]) != len(record["reading_segments"]):
            continue
        units = [
            Unit(surface, to_katakana(reading))
            for surface, reading in zip(record["surface_segments"], record["reading_segments"])
        ]
        yield from sentence_pairs(units, "", cut_spans(len(units), rng), "anthy")


# -- plain text through MeCab ---------------------------------------------------------------------

_ATTACHED_POS = {"助詞", "助動詞", "接尾辞", "補助記号"}
_NOUN_POS = {"名詞", "代名詞"}


def _attaches(pos1: str, pos2: str, previous_pos1: str | None) -> bool:
    """Whether a token continues the current phrase (bunsetsu-like: function words and compounds attach)."""
    if previous_pos1 is None:
        return False
    return (
        pos1 in _ATTACHED_POS
        or pos2 == "非自立可能"
        or previous_pos1 == "接頭辞"
        or (pos1 in _NOUN_POS and previous_pos1 in _NOUN_POS)
    )


def token_reading(surface: str, kana: str | None) -> str | None:
    """The kana a person types for a token. UniDic's `kana` field (仮名形出現形) is the reading of the
    inflected surface in orthographic kana (は → ハ, 東京 → トウキョウ), unlike `pron` (ワ, トーキョー).
    Text without kanji is typed as written; a token needing a reading without one gives None."""
    if not needs_reading(surface):
        return to_katakana(surface)
    if kana and kana != "*" and not needs_reading(kana):
        return kana
    return None


def text_units(tokens: Iterable[tuple[str, str, str, str | None]]) -> list[Unit] | None:
    """Phrase units of (surface, pos1, pos2, kana) tokens; None when a token has no usable reading."""
    units: list[list[str]] = []
    previous_pos1 = None
    for surface, pos1, pos2, kana in tokens:
        reading = token_reading(surface, kana)
        if reading is None:
            return None
        if _attaches(pos1, pos2, previous_pos1):
            units[-1][0] += surface
            units[-1][1] += reading
        else:
            units.append([surface, reading])
        previous_pos1 = pos1
    return [Unit(surface, reading) for surface, reading in units]


def mecab_tokens(tagger, sentence: str) -> list[tuple[str, str, str, str | None]]:
    tokens = []
    for word in tagger(sentence):
        feature = word.feature
        tokens.append((word.surface, feature.pos1, feature.pos2, getattr(feature, "kana", None)))
    return tokens


def text_pairs(
    lines: Iterable[str],
    source: str,
    continuous: bool,
    rng: random.Random,
    tagger,
    context_keep: int = CONTEXT_KEEP,
) -> Iterator[Pair]:
    """Pairs from plain sentences, one per line; MeCab drops spaces, so lines with spaces are skipped."""
    preceding = ""
    for line in lines:
        sentence = line.rstrip("\n")
        units = text_units(mecab_tokens(tagger, sentence)) if sentence and " " not in sentence else None
        if units is not None and "".join(u.surface for u in units) == sentence:
            spans = cut_spans(len(units), rng)
            yield from sentence_pairs(units, preceding if continuous else "", spans, source, context_keep)
        preceding = (preceding + sentence)[-context_keep:]


def make_tagger():
    import fugashi  # optional dependency (pip install tsuzuri[train])

    return fugashi.Tagger()


# -- the whole corpus ---------------------------------------------------------------------------


def corpus_pairs(corpus: Path, seed: int = 0, text_lines: int | None = None) -> Iterator[Pair]:
    """WAC train pairs, Anthy's pairs, then plain-text pairs (at most `text_lines` lines per text file); none from
    what daemon/tools/corpus.py holds out."""
    rng = random.Random(seed)
    held_out = corpus_module.held_out(corpus).lines
    with open(corpus / "wac" / "train.jsonl", encoding="utf-8") as f:
        yield from wac_pairs((line for line in f if json.loads(line)["text"] not in held_out), rng)
    anthy = corpus / "anthy" / "train.jsonl"
    if anthy.is_file() and text_lines != 0:
        with open(anthy, encoding="utf-8") as f:
            lines = (line for line in f if "".join(json.loads(line)["surface_segments"]) not in held_out)
            yield from anthy_pairs(
                lines if text_lines is None else (line for _, line in zip(range(text_lines), lines)), rng
            )
    text_dir = corpus / "text"
    if text_lines == 0 or not any((text_dir / name).is_file() for name in TEXT_FILES):
        return
    tagger = make_tagger()
    for name in TEXT_FILES:
        path = text_dir / name
        if path.is_file():
            learnable = corpus_module.learnable_lines(corpus, path)[:text_lines]
            yield from text_pairs(learnable, path.stem, name in CONTINUOUS_TEXT, rng, tagger)


def vocabulary_characters(pairs: Iterable[Pair], min_count: int) -> list[str]:
    """build_vocab's default characters, then target characters seen at least min_count times
    (most frequent first)."""
    base = base_characters()
    known = set(base)
    counts = Counter(ch for pair in pairs for ch in pair.surface)
    extra = [
        ch
        for ch, n in counts.most_common()
        if n >= min_count and ch not in known and not unicodedata.category(ch).startswith("C")
    ]
    return base + extra


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_characters(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").split("\n")[:-1]
