"""tsuzuri-lm: build the character n-gram language model, and fit the rescoring weights.

tsuzuri-lm build --corpus ../shared/corpus --out FILE [--order N] [--cap-chars C] [--cutoffs 1,2,3,4,5]
                 [--exclude SOURCE …] [--without-tuning]
tsuzuri-lm vectors --corpus ../shared/corpus --out FILE [--window W] [--dimensions D] [--max-words N]
                   [--exclude SOURCE …] [--without-tuning]
tsuzuri-lm fit --lm FILE [--suite DIR] [--folds K] [--model M] [--limit K] [--only FEATURE …]
               [--word-vectors FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from collections.abc import Sequence

from daemon.tools.corpus import DEFAULT_CAP_CHARS, capped, held_out, read_sources
from daemon.lm.ngram import BuildOptions, build
from daemon.lm.rescoring import FEATURE_NAMES
from daemon.tools import word_vectors


def _build(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    cap = None if args.cap_chars <= 0 else args.cap_chars
    lines, used = [], {}
    for source in read_sources(args.corpus, args.without_tuning):
        if source.name in args.exclude:
            continue
        kept = capped(source.lines, cap)
        lines += kept
        used[source.name] = [source.chars, sum(map(len, kept))]
        print(f"tsuzuri-lm: {source.name}: {used[source.name][1]:,} of {source.chars:,} characters", file=sys.stderr)
    options = BuildOptions(
        order=args.order, min_char_count=args.min_char_count, cutoffs=tuple(int(c) for c in args.cutoffs.split(","))
    )
    model = build(lines, options)
    model.meta.update({"cap_chars": cap, "sources": used, **_left_out(args)})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    model.save(args.out)
    seconds = time.perf_counter() - started
    print(
        json.dumps(
            {
                "out": str(args.out),
                "bytes": args.out.stat().st_size,
                "seconds": round(seconds, 1),
                "ngrams": model.meta["ngrams"],
                "chars": sum(v[1] for v in used.values()),
            }
        )
    )
    return 0


def _left_out(args: argparse.Namespace) -> dict:
    """What a built file records of the text it left out: the held-out documents (checked against the corpus by the
    tests) and whether the tuning documents too (checked by tsuzuri-lm fit on the tuning set)."""
    held = held_out(args.corpus)
    return {"held_out": {"sha256": held.sha256, "lines": len(held.lines)}, "without_tuning": args.without_tuning}


def _vectors(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    lines, used = [], {}
    for source in read_sources(args.corpus, args.without_tuning):
        if source.name not in args.exclude:
            lines += source.lines
            used[source.name] = source.chars
    vectors = word_vectors.build(lines, args.window, args.dimensions, args.max_words)
    vectors.meta.update({"sources": used, **_left_out(args)})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    vectors.save(args.out)
    seconds = round(time.perf_counter() - started, 1)
    report = {"out": str(args.out), "bytes": args.out.stat().st_size, "seconds": seconds, "words": len(vectors.words)}
    print(json.dumps({**report, "chars": sum(used.values()), **vectors.meta}))
    return 0


def _fit(args: argparse.Namespace) -> int:
    from daemon.tools.lm_fit import fit_command

    return fit_command(args)


_WITHOUT_TUNING = (
    "leave out the tuning documents too (daemon/tools/corpus.py): for tsuzuri-lm fit on the tuning set, not to ship"
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tsuzuri-lm", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    building = commands.add_parser("build", help="build the language model from the training corpus")
    building.add_argument("--corpus", type=Path, required=True, help="the corpus directory (../shared/corpus)")
    building.add_argument("--out", type=Path, required=True, help="the model file to write")
    building.add_argument("--order", type=int, default=BuildOptions.order)
    building.add_argument("--min-char-count", type=int, default=BuildOptions.min_char_count)
    building.add_argument(
        "--cutoffs",
        default=",".join(map(str, BuildOptions.cutoffs)),
        help="raw-count cutoffs for orders 2, 3, … (the last repeats)",
    )
    building.add_argument(
        "--cap-chars",
        type=int,
        default=DEFAULT_CAP_CHARS,
        help=f"characters at most per source (default {DEFAULT_CAP_CHARS:,}; 0: no cap)",
    )
    building.add_argument(
        "--exclude",
        nargs="*",
        default=[],
        metavar="SOURCE",
        help="sources to leave out (file stems such as laws, or wac_train, anthy_train)",
    )
    building.add_argument("--without-tuning", action="store_true", help=_WITHOUT_TUNING)
    building.set_defaults(run=_build)
    vectors_command = commands.add_parser("vectors", help="build the word vectors (daemon/lm/word_vectors.py)")
    vectors_command.add_argument("--corpus", type=Path, required=True, help="the corpus directory (../shared/corpus)")
    vectors_command.add_argument("--out", type=Path, required=True, help="the file to write")
    vectors_command.add_argument("--window", type=int, default=word_vectors.WINDOW)
    vectors_command.add_argument("--dimensions", type=int, default=word_vectors.DIMENSIONS)
    vectors_command.add_argument("--max-words", type=int, default=word_vectors.MAX_WORDS)
    vectors_command.add_argument("--exclude", nargs="*", default=[], metavar="SOURCE", help="sources to leave out")
    vectors_command.add_argument("--without-tuning", action="store_true", help=_WITHOUT_TUNING)
    vectors_command.set_defaults(run=_vectors)
    fitting = commands.add_parser("fit", help="fit the rescoring weights on the evaluation suite (cross-validated)")
    fitting.add_argument("--lm", type=Path, required=True, help="the language model")
    fitting.add_argument("--suite", type=Path, default=None, help="evaluation directory (default ../shared/eval)")
    fitting.add_argument("--folds", type=int, default=4)
    fitting.add_argument("--model", default=None, help="also fit the neural model's score (registered name or GGUF)")
    fitting.add_argument("--limit", type=int, default=None, help="items per set at most")
    fitting.add_argument("--features", type=Path, default=None, help="cache the extracted features in this file")
    fitting.add_argument("--word-vectors", type=Path, default=None, help="the word vectors (default: the shipped ones)")
    fitting.add_argument(
        "--only",
        nargs="+",
        choices=FEATURE_NAMES,
        default=None,
        metavar="FEATURE",
        help="fit these features' weights alone, the others held at the shipped ones",
    )
    fitting.set_defaults(run=_fit)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
