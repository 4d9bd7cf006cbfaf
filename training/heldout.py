"""tsuzuri-train heldout: the held-out evaluation set, made of the documents daemon/tools/corpus.py holds out.

    tsuzuri-train heldout --corpus ../shared/corpus --out build/heldout

Nothing was fitted, trained or built on these documents (daemon/tools/corpus.py; tests/unit/test_corpus.py), so
the set says how a change does on text it has not seen, where the suite in ../shared/eval is what the rescoring
weights were fitted on. Readings come from MeCab/UniDic as the training pairs' do (training/data.py), so they are
what a person types for the text as UniDic reads it. Two files of `tsuzuri-eval` items (id, context, input,
expected, and the item's source register): `phrases.jsonl`, spans of 1–4 phrases cut as the training pairs are
(5–40 kana), and `sentences.jsonl`, whole sentences of 10–80 kana; each after as much of its document's
preceding text as a conversion reads (MAX_CONTEXT_CHARS; tsuzuri-eval cuts it to the session's context_chars);
only readings typed without Latin letters; evenly sampled to at most PHRASES and SENTENCES items per source.
Deterministic: the same corpus gives the same bytes. Not committed (it is corpus
text); `heldout-manifest.json` records its digests.

    tsuzuri-train heldout --corpus ../shared/corpus --out build/tuning --tuning

writes the same kind of items from the tuning documents (daemon/tools/corpus.py: held-in text that tsuzuri-base was
not trained on), for what is fitted on text like the held-out set's.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
from pathlib import Path
from collections.abc import Iterable, Sequence

from daemon.conversion import MAX_CONTEXT_CHARS
from daemon.tools.corpus import HELD_OUT_MANIFEST, TUNING_MANIFEST, held_out, tuning_documents
from training.data import (
    CONTINUOUS_TEXT,
    Pair,
    make_tagger,
    mecab_tokens,
    needs_reading,
    text_pairs,
    text_units,
)

PHRASES = 700  # per source
SENTENCES = 200  # per source
# The tuning set: twice the documents of two sources, and more of their items (the neural model's weight is fitted
# on the phrases it has a say in).
TUNING_PHRASES, TUNING_SENTENCES = 1500, 400
MIN_SENTENCE_READING, MAX_SENTENCE_READING = 10, 80
SEED = 20261204
# What each held-out source stands for.
REGISTERS = {"jaquad.txt": "wikipedia", "wikinews_articles.txt": "news", "tatoeba.txt": "conversation"}


def sentence_items(lines: Iterable[str], continuous: bool, tagger) -> list[Pair]:
    """Each line with a reading of MIN–MAX_SENTENCE_READING kana that needs converting, after its document's text."""
    items, preceding = [], ""
    for line in lines:
        units = text_units(mecab_tokens(tagger, line)) if " " not in line else None
        if units is not None and "".join(unit.surface for unit in units) == line and needs_reading(line):
            reading = "".join(unit.reading for unit in units)
            if MIN_SENTENCE_READING <= len(reading) <= MAX_SENTENCE_READING:
                items.append(Pair(preceding if continuous else "", reading, line, "sentence"))
        preceding = (preceding + line)[-MAX_CONTEXT_CHARS:]
    return items


def typed_in_kana(pair: Pair) -> bool:
    """Whether the reading can be typed without leaving the kana modes: no Latin letters (digits and symbols are
    typed as they are)."""
    return not any(ch.isascii() and ch.isalpha() for ch in pair.reading)


def evenly(items: list, count: int) -> list:
    """At most `count` of `items`, spread evenly through them."""
    if len(items) <= count:
        return items
    return [items[index * len(items) // count] for index in range(count)]


def held_out_sets(corpus: Path, tagger) -> dict[str, list[dict]]:
    """{"phrases": items, "sentences": items} from the held-out documents."""
    return evaluation_sets(held_out(corpus).documents, tagger, "heldout", (PHRASES, SENTENCES))


def evaluation_sets(
    documents: dict[str, list[str]], tagger, prefix: str, counts: tuple[int, int]
) -> dict[str, list[dict]]:
    """{"phrases": items, "sentences": items} from each source's `documents`, at most `counts` (phrases,
    sentences) per source, ids starting with `prefix`."""
    sets: dict[str, list[dict]] = {"phrases": [], "sentences": []}
    for name, lines in sorted(documents.items()):
        continuous = name in CONTINUOUS_TEXT
        register = REGISTERS[name]
        phrases = list(
            filter(
                typed_in_kana,
                text_pairs(lines, Path(name).stem, continuous, random.Random(SEED), tagger, MAX_CONTEXT_CHARS),
            )
        )
        sentences = list(filter(typed_in_kana, sentence_items(lines, continuous, tagger)))
        chosen = {"phrases": evenly(phrases, counts[0]), "sentences": evenly(sentences, counts[1])}
        for kind, pairs in chosen.items():
            sets[kind] += [
                {
                    "id": f"{prefix}-{kind}-{register}-{number}",
                    "context": pair.context,
                    "input": pair.reading,
                    "expected": [pair.surface],
                    "register": register,
                }
                for number, pair in enumerate(pairs)
            ]
    return sets


def write(corpus: Path, out: Path, tuning: bool = False) -> dict:
    """The held-out set (or, `tuning`, the tuning set) into `out`, with a manifest of its files."""
    if tuning:
        sets = evaluation_sets(tuning_documents(corpus), make_tagger(), "tuning", (TUNING_PHRASES, TUNING_SENTENCES))
        manifest_name = TUNING_MANIFEST
    else:
        sets = held_out_sets(corpus, make_tagger())
        manifest_name = HELD_OUT_MANIFEST
    out.mkdir(parents=True, exist_ok=True)
    manifest: dict = {"held_out_sha256": held_out(corpus).sha256, "files": {}}
    for kind, items in sets.items():
        data = "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items).encode("utf-8")
        (out / f"{kind}.jsonl").write_bytes(data)
        registers: dict[str, int] = {}
        for item in items:
            registers[item["register"]] = registers.get(item["register"], 0) + 1
        manifest["files"][f"{kind}.jsonl"] = {
            "items": len(items),
            "by_register": registers,
            "sha256": hashlib.sha256(data).hexdigest(),
        }
    (out / manifest_name).write_text(json.dumps(manifest, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return manifest


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="tsuzuri-train heldout", description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True, help="../shared/corpus")
    parser.add_argument("--out", type=Path, required=True, help="the folder to write the set into")
    parser.add_argument(
        "--tuning",
        action="store_true",
        help="write the tuning set instead: the same items from the tuning documents (daemon/tools/corpus.py)",
    )
    args = parser.parse_args(argv)
    print(json.dumps(write(args.corpus, args.out, args.tuning), ensure_ascii=False))


if __name__ == "__main__":
    main()
