"""Packed training data: the corpus's pairs as token ids, built once here, read on any machine.

    tsuzuri-train pack --corpus ../shared/corpus --out DIR [--max-mib 48] [--mix wac=3,anthy=2,...]

A pack is a folder that needs nothing but numpy and the standard library to read (the GPU machine has
neither fugashi nor the corpus):
- `manifest.json`: format, counts per source, the register mix asked for and the one obtained, each
  shard's examples/tokens/sha256, the vocabulary's sha256;
- `chars.txt`: the vocabulary's characters (build_vocab(characters) gives the GGUF's token ids);
- `site/`: the pure-Python packages the export needs that the GPU machine lacks (gguf, PyYAML), copied from
  this environment;
- `train-NNN.xz`, `valid.xz`: shards, each the xz of three arrays back to back: the lengths of every
  example's context, reading and target ids (uint8, N×3), the source index of every example (uint8, N),
  and all their token ids (uint16 or uint32, as the vocabulary needs).

The register mix: `--mix source=weight,...` gives each source's share of the examples (in proportion to
the weights; a source not named has weight 0). The examples are interleaved so that every prefix of the
pack keeps that mix, and `--max-mib` cuts the pack at a prefix: a smaller pack has the same mix. A source
that runs out leaves the others to fill the budget; the manifest says what was obtained. Validation
examples (VALID_PER_MILLE of every source, by a hash of the pair, so the same pairs at any budget) never
enter the training shards.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import lzma
import math
import random
import shutil
import sys
from collections import Counter
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from collections.abc import Iterable, Iterator, Sequence

import numpy as np

from training.data import (
    ATTRIBUTION,
    CHARS_FILE,
    MANIFEST_FILE,
    Pair,
    corpus_pairs,
    read_characters,
    sha256_file,
    vocabulary_characters,
)
from daemon.tools.gguf_writer import build_vocab
from training.tokens import CharTokenizer, ExampleParts

PACK_FORMAT = "tsuzuri-pack-1"
SHARD_EXAMPLES = 1 << 18
VALID_PER_MILLE = 2
MAX_VALID = 4000
# (import name, distribution) of what the device run imports beyond torch and numpy
DEVICE_PACKAGES = (("gguf", "gguf"), ("yaml", "PyYAML"))
MAX_PART_LENGTH = 255  # ids per context, reading or target (uint8 lengths); longer examples are dropped
# Shares of the default mix: the gold sources (hand-checked readings and bunsetsu) weigh most; web and
# news text next; novels and laws, whose registers are far from typed text, least.
DEFAULT_MIX = {
    "wac": 4,
    "anthy": 2,
    "jaquad": 3,
    "wikinews_articles": 2,
    "wikinews_headlines": 0.5,
    "jglue": 2,
    "gsd": 1,
    "tatoeba": 1.5,
    "aozora": 2,
    "laws": 1,
}


@dataclass(frozen=True)
class PackedExample:
    parts: ExampleParts
    source: int


def parse_mix(text: str) -> dict[str, float]:
    """`wac=3,anthy=2` → {"wac": 3.0, "anthy": 2.0}; weights must be ≥ 0 and not all 0."""
    mix = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, weight = item.partition("=")
        try:
            mix[name.strip()] = float(weight) if sep else float("nan")
        except ValueError:
            mix[name.strip()] = float("nan")
        if not mix[name.strip()] >= 0:
            raise ValueError(f"--mix: {item!r} is not source=weight with a weight ≥ 0")
    if not any(mix.values()):
        raise ValueError("--mix gives no source a weight above 0")
    return mix


def is_valid_pair(pair: Pair) -> bool:
    """Whether a pair is held out for validation: a hash of its texts, so independent of order and budget."""
    digest = hashlib.blake2b(f"{pair.context}\x00{pair.reading}\x00{pair.surface}".encode(), digest_size=8)
    return int.from_bytes(digest.digest(), "big") % 1000 < VALID_PER_MILLE


def interleave(by_source: dict[str, list[Pair]], mix: dict[str, float], seed: int) -> list[Pair]:
    """All pairs of the weighted sources in one order whose every prefix keeps the mix: the k-th pair of a
    source (after a seeded shuffle) is keyed (k + jitter) / weight, and the keys are sorted."""
    rng = random.Random(seed)
    keyed = []
    for index, (source, pairs) in enumerate(sorted(by_source.items())):
        weight = mix.get(source, 0.0)
        if weight <= 0:
            continue
        order = list(range(len(pairs)))
        rng.shuffle(order)
        keyed += [((k + rng.random()) / weight, index, i) for k, i in enumerate(order)]
    keyed.sort()
    names = sorted(by_source)
    return [by_source[names[index]][i] for _, index, i in keyed]


def encode_shard(examples: Sequence[PackedExample], id_dtype: np.dtype) -> bytes:
    lengths = np.array(
        [(len(e.parts.context), len(e.parts.reading), len(e.parts.target)) for e in examples], dtype=np.uint8
    ).reshape(-1, 3)
    sources = np.array([e.source for e in examples], dtype=np.uint8)
    ids = np.array([i for e in examples for i in (*e.parts.context, *e.parts.reading, *e.parts.target)], dtype=id_dtype)
    return lzma.compress(lengths.tobytes() + sources.tobytes() + ids.tobytes(), preset=6)


def decode_shard(data: bytes, n_examples: int, id_dtype: np.dtype) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lengths N×3, sources N, ids) of a shard's bytes."""
    raw = lzma.decompress(data)
    lengths = np.frombuffer(raw, dtype=np.uint8, count=3 * n_examples).reshape(n_examples, 3)
    sources = np.frombuffer(raw, dtype=np.uint8, count=n_examples, offset=3 * n_examples)
    ids = np.frombuffer(raw, dtype=id_dtype, offset=4 * n_examples)
    if ids.size != int(lengths.sum(dtype=np.int64)):
        raise ValueError(f"shard holds {ids.size} ids, its lengths {int(lengths.sum())}")
    return lengths, sources, ids


def packed_examples(
    pairs: Iterable[Pair], tokenizer: CharTokenizer, sources: dict[str, int]
) -> Iterator[PackedExample]:
    for pair in pairs:
        parts = tokenizer.parts(pair.context, pair.reading, pair.surface)
        if max(len(parts.context), len(parts.reading), len(parts.target)) <= MAX_PART_LENGTH:
            yield PackedExample(parts, sources[pair.source])


def write_shards(
    out: Path, prefix: str, examples: Iterator[PackedExample], id_dtype: np.dtype, budget_bytes: float
) -> list[dict]:
    """Shards of SHARD_EXAMPLES written while they fit `budget_bytes`; the one that would not fit is cut to a
    prefix that does (found by bisection on its compressed size)."""
    shards: list[dict] = []
    used = 0
    while chunk := list(islice(examples, SHARD_EXAMPLES)):
        data = encode_shard(chunk, id_dtype)
        full = len(chunk) == SHARD_EXAMPLES
        if used + len(data) > budget_bytes:
            low, high = 0, len(chunk)  # low fits, high does not
            while high - low > max(1, len(chunk) // 256):
                middle = (low + high) // 2
                if used + len(encode_shard(chunk[:middle], id_dtype)) <= budget_bytes:
                    low = middle
                else:
                    high = middle
            if low == 0:
                break
            chunk, data, full = chunk[:low], encode_shard(chunk[:low], id_dtype), False
        name = f"{prefix}-{len(shards):03d}.xz" if prefix == "train" else f"{prefix}.xz"
        (out / name).write_bytes(data)
        shards.append(
            {
                "file": name,
                "examples": len(chunk),
                "tokens": sum(len(e.parts.context) + len(e.parts.reading) + len(e.parts.target) for e in chunk),
                "by_source": dict(Counter(e.source for e in chunk)),
                "bytes": len(data),
                "sha256": hashlib.sha256(data).hexdigest(),
            }
        )
        used += len(data)
        if not full or prefix != "train":
            break
    return shards


def pack(
    corpus: Path,
    out: Path,
    max_mib: float | None = 32.0,
    mix: dict[str, float] | None = None,
    seed: int = 0,
    text_lines: int | None = None,
    min_char_count: int = 3,
    characters: list[str] | None = None,
) -> dict:
    """Write a pack of the corpus under `out` (see the module's docstring); return its manifest."""
    mix = dict(DEFAULT_MIX if mix is None else mix)
    out.mkdir(parents=True, exist_ok=True)
    by_source: dict[str, list[Pair]] = {}
    valid: list[Pair] = []
    for pair in corpus_pairs(corpus, seed, text_lines):
        (valid if is_valid_pair(pair) else by_source.setdefault(pair.source, [])).append(pair)
    unknown = sorted(set(mix) - set(by_source))
    ordered = interleave(by_source, mix, seed)
    if characters is None:
        characters = vocabulary_characters(ordered, min_char_count)
    vocab = build_vocab(characters)
    id_dtype = np.dtype(np.uint16 if len(vocab) <= 1 << 16 else np.uint32)
    tokenizer = CharTokenizer(vocab)
    source_index = {name: i for i, name in enumerate(sorted({*by_source, *(p.source for p in valid)}))}
    rng = random.Random(seed)
    rng.shuffle(valid)
    (out / CHARS_FILE).write_text("".join(ch + "\n" for ch in characters), encoding="utf-8")
    budget = math.inf if max_mib is None else max_mib * 2**20 - (out / CHARS_FILE).stat().st_size
    valid_shards = write_shards(
        out, "valid", packed_examples(valid[:MAX_VALID], tokenizer, source_index), id_dtype, budget
    )
    budget -= sum(shard["bytes"] for shard in valid_shards)
    train_shards = write_shards(out, "train", packed_examples(ordered, tokenizer, source_index), id_dtype, budget)
    n_train = sum(shard["examples"] for shard in train_shards)
    names = sorted(source_index, key=lambda name: source_index[name])
    obtained: Counter[str] = Counter()
    for shard in train_shards:
        obtained.update({names[i]: n for i, n in shard.pop("by_source").items()})
    for shard in valid_shards:
        shard.pop("by_source")
    manifest = {
        "format": PACK_FORMAT,
        "attribution": ATTRIBUTION,
        "corpus": str(corpus),
        "seed": seed,
        "text_lines": text_lines,
        "min_char_count": min_char_count,
        "max_mib": max_mib,
        "mix": mix,
        "mix_sources_missing": unknown,
        "sources": names,
        "id_dtype": id_dtype.name,
        "characters": len(characters),
        "n_vocab": len(vocab),
        "pairs": n_train,
        "pairs_by_source": dict(sorted(obtained.items())),
        "pairs_available_by_source": {name: len(pairs) for name, pairs in sorted(by_source.items())},
        "tokens": sum(shard["tokens"] for shard in train_shards),
        "train": train_shards,
        "valid": valid_shards,
        "sha256": {CHARS_FILE: sha256_file(out / CHARS_FILE)},
        "site": vendor_site(out),
    }
    (out / MANIFEST_FILE).write_text(json.dumps(manifest, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return manifest


def vendor_site(out: Path, packages: Sequence[tuple[str, str]] = DEVICE_PACKAGES) -> dict[str, str]:
    """Copy the pure-Python packages the device run needs but the GPU machine lacks (the GGUF writer and its
    YAML import) from this environment into out/site, their .py files only; return their versions."""
    import importlib
    from importlib.metadata import version

    versions = {}
    for name, distribution in packages:
        module_file = importlib.import_module(name).__file__
        assert module_file is not None  # a package of .py files
        source = Path(module_file).parent
        target = out / "site" / name
        shutil.rmtree(target, ignore_errors=True)
        for path in sorted(source.rglob("*.py")):
            (target / path.relative_to(source)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target / path.relative_to(source))
        versions[distribution] = version(distribution)
    return versions


class Pack:
    """A pack read back: its vocabulary, and its examples as (ids, prompt length) in the jinen format."""

    def __init__(self, folder: Path, split: str = "train"):
        self.folder = folder
        self.manifest = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
        if self.manifest.get("format") != PACK_FORMAT:
            raise ValueError(f"{folder} is not a {PACK_FORMAT} pack (format {self.manifest.get('format')!r})")
        self.characters = read_characters(folder / CHARS_FILE)
        self.vocab = build_vocab(self.characters)
        self.tokenizer = CharTokenizer(self.vocab)
        id_dtype = np.dtype(self.manifest["id_dtype"])
        lengths, sources, ids = [], [], []
        for shard in self.manifest[split]:
            data = (folder / shard["file"]).read_bytes()
            if hashlib.sha256(data).hexdigest() != shard["sha256"]:
                raise ValueError(f"{folder / shard['file']}: sha256 differs from the manifest's")
            shard_lengths, shard_sources, shard_ids = decode_shard(data, shard["examples"], id_dtype)
            lengths.append(shard_lengths)
            sources.append(shard_sources)
            ids.append(shard_ids)
        self.lengths = np.concatenate(lengths) if lengths else np.zeros((0, 3), np.uint8)
        self.sources = np.concatenate(sources) if sources else np.zeros(0, np.uint8)
        self.ids = np.concatenate(ids) if ids else np.zeros(0, id_dtype)
        self.offsets = np.concatenate(([0], np.cumsum(self.lengths.sum(axis=1, dtype=np.int64))))

    def __len__(self) -> int:
        return len(self.lengths)

    def parts(self, i: int) -> ExampleParts:
        n_context, n_reading, _ = (int(n) for n in self.lengths[i])
        ids = self.ids[self.offsets[i] : self.offsets[i + 1]].tolist()
        return ExampleParts(ids[:n_context], ids[n_context : n_context + n_reading], ids[n_context + n_reading :])

    def example(self, i: int, with_context: bool = True) -> tuple[list[int], int]:
        return self.tokenizer.assemble(self.parts(i), with_context)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="tsuzuri-train pack", description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True, help="shared/corpus")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument(
        "--max-mib",
        type=float,
        default=32.0,
        help="size of the pack, chars and shards (default 32: what the 64 MiB a device run may "
        "carry leaves beside the tracked tree's 26)",
    )
    parser.add_argument(
        "--mix",
        type=parse_mix,
        default=None,
        help="source=weight,... (default: " + ",".join(f"{k}={v:g}" for k, v in DEFAULT_MIX.items()) + ")",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--text-lines",
        type=int,
        default=None,
        help="read at most this many lines of each text file and of Anthy's (0: WAC only)",
    )
    parser.add_argument("--min-char-count", type=int, default=3)
    parser.add_argument(
        "--characters-from",
        type=Path,
        default=None,
        help="keep this earlier pack's or run's chars.txt (its model's token ids)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    characters = read_characters(args.characters_from) if args.characters_from else None
    manifest = pack(
        args.corpus, args.out, args.max_mib, args.mix, args.seed, args.text_lines, args.min_char_count, characters
    )
    summary = {k: manifest[k] for k in ("pairs", "tokens", "n_vocab", "pairs_by_source", "mix_sources_missing")}
    summary["mib"] = round(sum(s["bytes"] for s in manifest["train"] + manifest["valid"]) / 2**20, 2)
    summary["valid"] = sum(s["examples"] for s in manifest["valid"])
    print(json.dumps(summary, ensure_ascii=False))
    return manifest


if __name__ == "__main__":
    main(sys.argv[1:])
