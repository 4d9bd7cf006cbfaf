"""tsuzuri-eval: score a converter on an evaluation set, in process.

    tsuzuri-eval ITEMS [--n N] [--mode dictionary|greedy|greedy-drafted|beam|constrained|auto|
                       constrained-auto|no-model] [--model M]
                       [--json] [--per-item FILE] [--limit K] [--lm FILE | --no-lm] [--errors]
    tsuzuri-eval --suite [DIR] [--n N] [--mode M] [--model M] [--json] [--limit K] [--errors]

ITEMS is a JSON list or JSON Lines of objects with `input` (katakana reading), `context` or `context_text`
(left context, may be empty) and `expected` or `expected_output` (accepted outputs), or Mozc's
quality-regression results (evaluation.tsv), of which the `Conversion Expected` rows count, with `argument` as
the one accepted output. Outputs and answers compare after NFKC. Reported: acc@1 and acc@n (an accepted output
first / among the top n), mincer (mean over items of the lowest character error rate of a top-n candidate
against an accepted output) and the p50/p95 conversion latency. --errors adds how many wrong first candidates
fall in each class of daemon/tools/errors.py (spelling variant, wrong kanji, segmentation, unknown word, not in
the pool of n candidates), acc@1 counting a spelling variant as right, and each item's class to --per-item.

--suite scores every set in DIR (default ../shared/eval beside the repository): each *.jsonl in it and Mozc's
evaluation.tsv at any depth, one table row or JSON line per set, with one converter for them all.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import unicodedata
from dataclasses import dataclass, replace
from pathlib import Path
from collections.abc import Callable, Sequence

from daemon.conversion import DEFAULT_CONTEXT_CHARS, MAX_CONTEXT_CHARS, left_context
from daemon.dictionary import DictionaryUnavailable, system_dictionary, system_reader
from daemon.kana import to_katakana
from daemon.spelling import Spelling
from daemon.tools.errors import ErrorClass, Lexicon, error_counts, error_of

# (katakana reading, left context, n) -> up to n candidates, best first.
ConvertFunction = Callable[[str, str, int], list[str]]
_MOZC_EXPECTED = "Conversion Expected"  # rank 0: the top-1 conversion must equal `argument`
_PROGRESS_STEPS = 10
SUITE_DIR = Path(__file__).resolve().parents[3] / "shared" / "eval"  # ../shared/eval from the repository


class ConverterUnavailable(RuntimeError):
    """The mode's converter cannot run here (no model, no dictionary)."""


def _loaded_dictionary():
    dictionary = system_dictionary()
    try:
        dictionary.load()  # now, so the first item's latency is a conversion's
        system_reader().load()  # as the daemon's warm-up does: context words need it
    except DictionaryUnavailable as error:
        raise ConverterUnavailable(str(error)) from error
    return dictionary


def _loaded_engine(options: argparse.Namespace, mode: str):
    from daemon.engine import Engine, ModelState

    if not options.model:
        raise ConverterUnavailable(f"mode {mode} needs a model: pass --model NAME_OR_PATH")
    engine = Engine(n_threads=options.threads)
    engine.load(options.model)
    status = engine.wait()
    if status.state is not ModelState.READY:
        raise ConverterUnavailable(f"model {options.model} did not load: {status.reason}")
    return engine


def _dictionary_converter(options: argparse.Namespace) -> ConvertFunction:
    dictionary = _loaded_dictionary()
    return lambda reading, context, n: [candidate.text for candidate in dictionary.convert(reading, n)]


def _model_converter(
    width: Callable[[int], int], mode: str, dictionary_draft: bool = False, constrained: bool = False
) -> Callable[[argparse.Namespace], ConvertFunction]:
    def factory(options: argparse.Namespace) -> ConvertFunction:
        from daemon.converter import spellings

        engine = _loaded_engine(options, mode)
        session = engine.session()
        dictionary = _loaded_dictionary() if dictionary_draft or constrained else None

        def convert(reading: str, context: str, n: int) -> list[str]:
            draft = dictionary.convert(reading, 1)[0].text if dictionary is not None and dictionary_draft else None
            words = spellings(dictionary, reading) if constrained else None
            return [c.text for c in session.convert(reading, context, width(n), draft, words)]

        return convert

    return factory


def _merging_converter(
    mode: str, constrained: bool = False, use_model: bool = True
) -> Callable[[argparse.Namespace], ConvertFunction]:
    """Every source merged and ranked as the daemon shows them (no learning or user dictionary: they are
    personal); without `use_model`, as the daemon serves when no model loads."""

    def factory(options: argparse.Namespace) -> ConvertFunction:
        from daemon.converter import Converter
        from daemon.lm import load_word_vectors

        if use_model and not options.model and mode == "auto" and default_model_present():
            options.model = "default"  # what the daemon runs when its configuration names no other
        engine = _loaded_engine(options, mode) if use_model and (options.model or constrained) else None
        converter = Converter(
            dictionary=_loaded_dictionary(),
            engine=engine,
            model_candidates=options.model_candidates,
            constrain_model=constrained,
            language_model=_language_model(options),
            spelling=options.spelling,
            word_vectors=None if options.no_word_vectors else load_word_vectors(),
        )
        session = engine.session() if engine is not None else None
        return lambda reading, context, n: [c.text for c in converter.candidates(reading, context, n, session)]

    return factory


def _language_model(options: argparse.Namespace):
    """--lm FILE, else the daemon's default model; none with --no-lm."""
    from daemon.lm import CharNgramLM, load_language_model

    if options.no_lm:
        return None
    if options.lm is None:
        return load_language_model()
    try:
        return CharNgramLM.load(options.lm)
    except (OSError, ValueError) as error:
        raise ConverterUnavailable(f"language model {options.lm}: {error}") from error


def default_model_present() -> bool:
    from daemon.engine.registry import RegistryError, resolve_model

    try:
        return resolve_model("default")[0].is_file()
    except RegistryError:
        return False


# Mode -> converter factory: the one registration point for conversion strategies.
CONVERTERS: dict[str, Callable[[argparse.Namespace], ConvertFunction]] = {
    "dictionary": _dictionary_converter,
    "greedy": _model_converter(lambda n: 1, "greedy"),
    # The same results as greedy; the dictionary's best path drafts what the model then verifies.
    "greedy-drafted": _model_converter(lambda n: 1, "greedy-drafted", dictionary_draft=True),
    "beam": _model_converter(lambda n: n, "beam"),
    # Beam search over chains of dictionary words (kana as the escape) that spell the reading.
    "constrained": _model_converter(lambda n: n, "constrained", constrained=True),
    "auto": _merging_converter("auto"),
    # auto, the model's own candidates (--model-candidates) constrained to chains of dictionary words.
    "constrained-auto": _merging_converter("constrained-auto", constrained=True),
    # What the daemon serves without a model: the dictionary rescored by the language model, kana, rewriters.
    "no-model": _merging_converter("no-model", use_model=False),
}


@dataclass(frozen=True)
class EvalItem:
    id: str
    reading: str  # katakana
    context: str
    expected: tuple[str, ...]


@dataclass(frozen=True)
class ItemResult:
    item: EvalItem
    candidates: list[str]
    seconds: float
    correct_at_1: bool
    correct_at_n: bool
    cer: float  # lowest character error rate of a top-n candidate
    error: ErrorClass | None = None  # with --errors: the class of a wrong first candidate


def load_items(path: Path) -> list[EvalItem]:
    text = path.read_text(encoding="utf-8")
    return _items_from_mozc_tsv(text) if path.suffix == ".tsv" else _items_from_json(text)


def _items_from_json(text: str) -> list[EvalItem]:
    stripped = text.strip()
    records = (
        json.loads(stripped)
        if stripped.startswith("[")
        else [json.loads(line) for line in stripped.splitlines() if line.strip()]
    )
    return [
        EvalItem(
            str(record.get("id", f"item-{index}")),
            record["input"],
            record.get("context_text", record.get("context", "")),
            _accepted_outputs(record),
        )
        for index, record in enumerate(records)
    ]


def _accepted_outputs(record: dict) -> tuple[str, ...]:
    accepted = record["expected_output"] if "expected_output" in record else record["expected"]
    return (accepted,) if isinstance(accepted, str) else tuple(accepted)


def _items_from_mozc_tsv(text: str) -> list[EvalItem]:
    header, *rows = text.splitlines()
    columns = header.lstrip("# ").split("\t")
    if not {"input", "command", "argument"} <= set(columns):
        raise ValueError(f"not a Mozc evaluation TSV (columns: {columns})")
    field = {name: index for index, name in enumerate(columns)}
    return [
        EvalItem(f"mozc-{line}", to_katakana(values[field["input"]]), "", (values[field["argument"]],))
        for line, values in enumerate((row.split("\t") for row in rows), start=2)
        if len(values) == len(columns) and values[field["command"]] == _MOZC_EXPECTED
    ]


def suite_sets(directory: Path) -> dict[str, Path]:
    """Set name -> file: every JSON Lines file directly in `directory`, and Mozc's evaluation.tsv at any depth
    (Mozc's oss.tsv and regression.tsv beside it are test definitions, not results load_items reads)."""
    paths = sorted(directory.glob("*.jsonl")) + sorted(directory.rglob("evaluation.tsv"))
    return {path.relative_to(directory).with_suffix("").as_posix(): path for path in paths}


def char_error_rate(hypothesis: str, reference: str) -> float:
    """Levenshtein distance over characters, divided by the reference length."""
    previous = list(range(len(hypothesis) + 1))
    for i, ref_char in enumerate(reference, start=1):
        current = [i]
        for j, hyp_char in enumerate(hypothesis, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ref_char != hyp_char)))
        previous = current
    return previous[-1] / max(len(reference), 1)


def _nfkc(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def evaluate_item(item: EvalItem, converter: ConvertFunction, n: int, lexicon: Lexicon | None = None) -> ItemResult:
    """One item scored; with `lexicon` (the dictionary's entries) a wrong first candidate is classified too."""
    started = time.perf_counter()
    candidates = converter(item.reading, item.context, n)[:n]
    seconds = time.perf_counter() - started
    accepted = {_nfkc(answer) for answer in item.expected}
    outputs = [_nfkc(candidate) for candidate in candidates]
    cer = min(char_error_rate(output, answer) for output in outputs or [""] for answer in accepted)
    error = error_of(outputs, sorted(accepted), lexicon) if lexicon is not None else None
    return ItemResult(
        item,
        candidates,
        seconds,
        bool(outputs) and outputs[0] in accepted,
        any(output in accepted for output in outputs),
        cer,
        error,
    )


def _percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(math.ceil(fraction * len(ordered)) - 1, 0)] if ordered else 0.0


def summarise(results: Sequence[ItemResult], n: int, mode: str, errors: bool = False) -> dict:
    count = max(len(results), 1)
    latencies = [result.seconds * 1000 for result in results]
    classes = {}
    if errors:
        counts = error_counts(result.error for result in results)
        correct = sum(result.correct_at_1 for result in results)
        classes = {"errors": counts, "acc@1_or_variant": round((correct + counts[ErrorClass.VARIANT.value]) / count, 4)}
    return {
        "acc@1": round(sum(r.correct_at_1 for r in results) / count, 4),
        "acc@n": round(sum(r.correct_at_n for r in results) / count, 4),
        "mincer": round(sum(r.cer for r in results) / count, 4),
        "n": n,
        "p50_ms": round(_percentile(latencies, 0.50), 3),
        "p95_ms": round(_percentile(latencies, 0.95), 3),
        "mode": mode,
        "items": len(results),
        **classes,
    }


def evaluate_items(
    items: Sequence[EvalItem], converter: ConvertFunction, n: int, label: str = "", lexicon: Lexicon | None = None
) -> list[ItemResult]:
    """Every item's result, with progress on stderr (prefixed with `label`, the set's name in a suite)."""
    prefix = f"tsuzuri-eval: {label} " if label else "tsuzuri-eval: "
    results: list[ItemResult] = []
    step = max(len(items) // _PROGRESS_STEPS, 1)
    for index, item in enumerate(items, start=1):
        results.append(evaluate_item(item, converter, n, lexicon))
        if index % step == 0 or index == len(items):
            correct = sum(r.correct_at_1 for r in results)
            print(f"{prefix}{index}/{len(items)} items, acc@1 {correct / index:.4f}", file=sys.stderr)
    return results


def _per_item_record(result: ItemResult) -> dict:
    item = result.item
    return {
        "id": item.id,
        "input": item.reading,
        "context": item.context,
        "expected": list(item.expected),
        "candidates": result.candidates,
        "correct@1": result.correct_at_1,
        "correct@n": result.correct_at_n,
        "cer": round(result.cer, 4),
        "ms": round(result.seconds * 1000, 3),
        **({"error": result.error.value} if result.error is not None else {}),
    }


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tsuzuri-eval", description=__doc__.split("\n\n")[0])
    parser.add_argument("items", type=Path, nargs="?", help="JSON / JSON Lines items, or Mozc's evaluation.tsv")
    parser.add_argument(
        "--suite",
        type=Path,
        nargs="?",
        const=SUITE_DIR,
        metavar="DIR",
        help="instead of ITEMS, score every *.jsonl in DIR and Mozc's evaluation.tsv under it "
        f"(default DIR: {SUITE_DIR})",
    )
    parser.add_argument("--n", type=int, default=5, help="candidates per item scored for acc@n (default 5)")
    parser.add_argument("--mode", choices=list(CONVERTERS), default="auto", help="converter (default auto)")
    parser.add_argument(
        "--json",
        action="store_true",
        help="end the output with one JSON line of the scores; with --suite, print only JSON "
        "lines: one per set, then a summary",
    )
    parser.add_argument("--per-item", type=Path, metavar="FILE", help="write each item's candidates as JSON Lines")
    parser.add_argument("--limit", type=int, metavar="K", help="score only the first K items (of each set)")
    parser.add_argument("--model", help="registered model name or GGUF path (greedy, beam; optional for auto)")
    parser.add_argument("--threads", type=int, default=2, help="model threads (default 2)")
    parser.add_argument(
        "--model-candidates",
        type=int,
        default=0,
        help="auto, constrained-auto: how many candidates the model generates itself (default 0: none)",
    )
    parser.add_argument(
        "--lm",
        type=Path,
        metavar="FILE",
        help="merging modes (auto, constrained-auto, no-model): the character language model that "
        "rescores the dictionary's top candidates (default: the daemon's, if built)",
    )
    parser.add_argument("--no-lm", action="store_true", help="merging modes: no language model")
    parser.add_argument(
        "--no-word-vectors", action="store_true", help="merging modes: rescore without the word vectors' coherence"
    )
    parser.add_argument(
        "--context-chars",
        type=int,
        default=DEFAULT_CONTEXT_CHARS,
        metavar="N",
        help=f"characters of each item's left context that conversion takes, as a session's context_chars "
        f"(default {DEFAULT_CONTEXT_CHARS}, the daemon's)",
    )
    parser.add_argument(
        "--spelling",
        type=Spelling,
        choices=list(Spelling),
        default=Spelling.RANKED,
        help="merging modes: which auxiliary words are written in kana, as the daemon's conversion.spelling "
        "(default ranked, the daemon's)",
    )
    parser.add_argument(
        "--errors",
        action="store_true",
        help="count the wrong first candidates by class (variant, wrong kanji, segmentation, "
        "unknown word, not in the pool)",
    )
    return parser


def _read_items(parser: argparse.ArgumentParser, path: Path, limit: int | None, context_chars: int) -> list[EvalItem]:
    """The items of `path`, each with the left context a session would take of its own."""
    try:
        items = load_items(path)[:limit]
    except (OSError, ValueError, KeyError, TypeError) as error:
        parser.error(f"cannot read items from {path}: {error!r}")
    return [replace(item, context=left_context(item.context, context_chars)) for item in items]


def _report_one(results: Sequence[ItemResult], args: argparse.Namespace) -> None:
    if args.per_item:
        with args.per_item.open("w", encoding="utf-8") as out:
            for result in results:
                out.write(json.dumps(_per_item_record(result), ensure_ascii=False) + "\n")
    scores = summarise(results, args.n, args.mode, args.errors)
    print(
        f"mode {scores['mode']}  items {scores['items']}  n {scores['n']}\n"
        f"acc@1 {scores['acc@1']:.4f}  acc@{scores['n']} {scores['acc@n']:.4f}  mincer {scores['mincer']:.4f}  "
        f"p50 {scores['p50_ms']:.2f} ms  p95 {scores['p95_ms']:.2f} ms"
    )
    if args.errors:
        print(
            f"acc@1 or a spelling variant {scores['acc@1_or_variant']:.4f}  errors "
            + "  ".join(f"{name} {count}" for name, count in scores["errors"].items())
        )
    if args.json:
        print(json.dumps(scores, ensure_ascii=False))


def _report_suite(results_by_set: dict[str, list[ItemResult]], args: argparse.Namespace) -> None:
    rows = [
        {"set": name, **summarise(results, args.n, args.mode, args.errors)} for name, results in results_by_set.items()
    ]
    accuracies = [row["acc@1"] for row in rows]
    summary = {
        "suite": True,
        "mode": args.mode,
        "sets": len(rows),
        "mean_acc@1": round(sum(accuracies) / len(accuracies), 4),
        "min_acc@1": min(accuracies),
    }
    if args.json:
        for record in [*rows, summary]:
            print(json.dumps(record, ensure_ascii=False))
        return
    width = max(len("set"), *(len(row["set"]) for row in rows))
    print(f"mode {args.mode}  n {args.n}")
    print(
        f"{'set':<{width}}  {'items':>6}  {'acc@1':>6}  {'acc@' + str(args.n):>6}  {'MinCER':>6}  "
        f"{'p50 ms':>8}  {'p95 ms':>8}"
    )
    for row in rows:
        print(
            f"{row['set']:<{width}}  {row['items']:>6}  {row['acc@1']:>6.4f}  {row['acc@n']:>6.4f}  "
            f"{row['mincer']:>6.4f}  {row['p50_ms']:>8.2f}  {row['p95_ms']:>8.2f}"
        )
    print(f"mean acc@1 {summary['mean_acc@1']:.4f}  min acc@1 {summary['min_acc@1']:.4f}")
    for row in rows if args.errors else []:
        print(f"errors {row['set']}: " + "  ".join(f"{name} {count}" for name, count in row["errors"].items()))


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if (args.items is None) == (args.suite is None):
        parser.error("give either ITEMS or --suite [DIR]")
    if args.n < 1 or (args.limit is not None and args.limit < 0):
        parser.error("--n must be at least 1 and --limit at least 0")
    if not 0 <= args.context_chars <= MAX_CONTEXT_CHARS:
        parser.error(f"--context-chars must be 0 to {MAX_CONTEXT_CHARS}")
    if args.suite is not None and args.per_item:
        parser.error("--per-item writes one set's items: give ITEMS, not --suite")
    if args.suite is not None and not args.suite.is_dir():
        parser.error(f"suite directory {args.suite} not found")
    paths = suite_sets(args.suite) if args.suite is not None else {"": args.items}
    if not paths:
        parser.error(f"no evaluation sets (*.jsonl, evaluation.tsv) in {args.suite}")
    # Every set is read before the converter loads, so a broken file fails in a second, not after a model load.
    items_by_set = {name: _read_items(parser, path, args.limit, args.context_chars) for name, path in paths.items()}
    try:
        converter = CONVERTERS[args.mode](args)
    except ConverterUnavailable as error:
        print(f"tsuzuri-eval: error: {error}", file=sys.stderr)
        return 2

    lexicon = system_reader() if args.errors else None
    results_by_set = {
        name: evaluate_items(items, converter, args.n, name, lexicon) for name, items in items_by_set.items()
    }
    if args.suite is None:
        _report_one(results_by_set[""], args)
    else:
        _report_suite(results_by_set, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
