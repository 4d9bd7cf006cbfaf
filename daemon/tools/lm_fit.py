"""tsuzuri-lm fit: fit the rescoring weights on the whole evaluation suite, cross-validated.

Every item of every set (../shared/eval) gives the converter's rescoring pool (the dictionary's top candidates and
the lattice search's best paths) with their features. Phrases and sentences (rescoring.ReadingLength) are fitted
apart, each on its own items, without the neural model; with `--model`, phrases get a second set with its score,
which counts where the model has a say (rescoring.model_has_a_say). Weights maximise the conditional
log-likelihood of the first accepted candidate (a softmax over the item's candidates, fitted by Newton's
method), with K folds over the items pooled from all sets. Features are dropped one at a time (backward
elimination) while the cross-validated acc@1 does not fall:
a source that does not help gets weight 0. The final weights are fitted on all items with the chosen features.
With `--only`, the named features' weights alone are fitted, the others held at the shipped ones (a feature
added after the others were fitted). `--suite build/tuning` fits on the tuning set instead (training/heldout.py
--tuning: held-in documents like the held-out set's, which tsuzuri-base was not trained on), with a language model
and word vectors built without them (`--without-tuning`, `--word-vectors`): the neural model's weight is fitted
there, on text it has not seen, where the suite is text it was chosen on.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import unicodedata
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from daemon.converter import LATTICE_PATHS, RESCORED_TOP
from daemon.lm import WordVectors, load_word_vectors
from daemon.lm.ngram import CharNgramLM
from daemon.lm.rescoring import (
    FEATURE_NAMES,
    WEIGHTS_WITH_MODEL,
    WEIGHTS_WITHOUT_MODEL,
    Features,
    ReadingLength,
    Weights,
    model_has_a_say,
)

# At most the converter's pool: the dictionary's top candidates and the lattice search's best paths.
POOL_SIZE = RESCORED_TOP + LATTICE_PATHS
_L2 = 1e-3
_NEWTON_STEPS = 25
_HALVINGS = 30


@dataclass(frozen=True)
class ItemCandidates:
    """One evaluation item with its rescoring pool (what does not depend on the weights being fitted)."""

    set_name: str
    reading: str  # katakana
    context: str
    texts: list[str]
    costs: list[float | None]
    morphemes: list[int]
    accepted: list[bool]


def collect_items(suite: Path, limit: int | None, lm: CharNgramLM | None) -> list[ItemCandidates]:
    from daemon.tools.corpus import HELD_OUT_MANIFEST
    from daemon.tools.eval import load_items, suite_sets

    if any((path.parent / HELD_OUT_MANIFEST).exists() for path in [suite / "x", *suite_sets(suite).values()]):
        raise SystemExit(
            f"tsuzuri-lm fit: {suite} holds the held-out set (training/heldout.py): nothing is fitted on it"
        )
    from daemon.converter import Converter
    from daemon.dictionary import system_dictionary, system_reader

    system_reader().load()  # the pools hold the document's words, as the daemon's do after its warm-up
    converter = Converter(system_dictionary(), language_model=lm)
    found = []
    for set_name, path in suite_sets(suite).items():
        for item in load_items(path)[:limit]:
            accepted = {unicodedata.normalize("NFKC", answer) for answer in item.expected}
            candidates = converter.rescoring_pool(item.reading, item.context)[:POOL_SIZE]
            found.append(
                ItemCandidates(
                    set_name,
                    item.reading,
                    item.context,
                    [c.text for c in candidates],
                    [c.cost for c in candidates],
                    [c.morphemes for c in candidates],
                    [unicodedata.normalize("NFKC", c.text) in accepted for c in candidates],
                )
            )
        print(f"tsuzuri-lm: {set_name}: {sum(i.set_name == set_name for i in found)} items", file=sys.stderr)
    return found


def item_features(
    item: ItemCandidates,
    lm: CharNgramLM | None,
    model_scores: list[float] | None,
    word_vectors: WordVectors | None = None,
) -> list[Features]:
    """The features the converter computes for the same candidates."""
    from daemon.conversion import CandidateSource, ConversionCandidate
    from daemon.converter import candidate_features

    candidates = [
        ConversionCandidate(text, CandidateSource.DICTIONARY, cost=cost, morphemes=morphemes)
        for text, cost, morphemes in zip(item.texts, item.costs, item.morphemes)
    ]
    lm_scores = lm.score(item.texts, item.context) if lm is not None else [0.0] * len(item.texts)
    coherence = word_vectors.coherence(item.texts, item.context) if word_vectors is not None else None
    return candidate_features(candidates, lm_scores, item.reading, item.context, model_scores, coherence)


def as_arrays(features: list[list[Features]], items: list[ItemCandidates]):
    """X (items × POOL_SIZE × features), a mask of real candidates, and of accepted ones."""
    x = np.zeros((len(items), POOL_SIZE, len(FEATURE_NAMES)))
    mask = np.zeros((len(items), POOL_SIZE), dtype=bool)
    gold = np.zeros((len(items), POOL_SIZE), dtype=bool)
    for i, (row, item) in enumerate(zip(features, items)):
        x[i, : len(row)] = [f.vector() for f in row]
        mask[i, : len(row)] = True
        gold[i, : len(row)] = item.accepted
    return x, mask, gold


def fit_logit(
    x: np.ndarray, mask: np.ndarray, gold: np.ndarray, use: np.ndarray, offset: np.ndarray | None = None
) -> np.ndarray:
    """Weights (one per feature; 0 where `use` is False) of a conditional logit for the first accepted
    candidate, on items that have one, by Newton's method on standardised features; `offset` (items ×
    candidates), if given, is a fixed part of every score (the weights held). Each step is halved until
    the penalised log-likelihood rises: a full step overshoots where a feature nearly separates the answers
    (the model's floored score is 0 for its favourite and −5 for most others), and the weights ran away."""
    trainable = gold.any(axis=1)
    x, mask, gold = x[trainable][:, :, use], mask[trainable], gold[trainable]
    fixed = np.zeros(mask.shape) if offset is None else offset[trainable]
    target = np.argmax(gold, axis=1)
    rows = x[mask]
    scale = np.where(rows.std(axis=0) > 0, rows.std(axis=0), 1.0)
    z = (x - rows.mean(axis=0)) / scale
    penalty = _L2 * len(z)

    def probabilities(w: np.ndarray) -> tuple[np.ndarray, float]:
        logits = np.where(mask, z @ w + fixed, -np.inf)
        top = logits.max(axis=1, keepdims=True)
        log_norm = top[:, 0] + np.log(np.exp(logits - top).sum(axis=1))
        objective = float((logits[np.arange(len(z)), target] - log_norm).sum() - penalty / 2 * w @ w)
        return np.exp(logits - log_norm[:, None]), objective

    w = np.zeros(z.shape[2])
    p, objective = probabilities(w)
    for _ in range(_NEWTON_STEPS):
        expected = np.einsum("ik,ikd->id", p, z)
        gradient = (z[np.arange(len(z)), target] - expected).sum(axis=0) - penalty * w
        centred = z - expected[:, None, :]
        hessian = np.einsum("ik,ikd,ike->de", p, centred, centred) + penalty * np.eye(len(w))
        step = np.linalg.solve(hessian, gradient)
        for _ in range(_HALVINGS):
            trial_p, trial_objective = probabilities(w + step)
            if trial_objective >= objective:
                break
            step = step / 2
        else:
            break  # no step improves: at the optimum to machine precision
        w, p, objective = w + step, trial_p, trial_objective
        if np.abs(step).max() < 1e-6:
            break
    weights = np.zeros(len(use))
    weights[use] = w / scale
    return weights


def top1_correct(x: np.ndarray, mask: np.ndarray, gold: np.ndarray, weights: np.ndarray) -> np.ndarray:
    scores = np.where(mask, x @ weights, -np.inf)
    best = np.argmax(scores, axis=1)  # the first of equal scores: the dictionary's order breaks ties
    return gold[np.arange(len(gold)), best] & mask.any(axis=1)


def cross_validated(x, mask, gold, use, folds: np.ndarray, held: np.ndarray | None = None) -> np.ndarray:
    """Per item: is its top-1 right under weights fitted on the other folds (those of `use`; the others held at
    `held`'s, or 0)?"""
    held = np.zeros(len(use)) if held is None else held
    offset = x @ held
    correct = np.zeros(len(x), dtype=bool)
    for fold in np.unique(folds):
        test = folds == fold
        weights = held + fit_logit(x[~test], mask[~test], gold[~test], use, offset[~test])
        correct[test] = top1_correct(x[test], mask[test], gold[test], weights)
    return correct


def select_features(x, mask, gold, folds, candidates: list[str]) -> tuple[np.ndarray, list[dict]]:
    """Backward elimination on pooled cross-validated acc@1: drop a feature while that does not hurt."""
    use = np.array([name in candidates for name in FEATURE_NAMES])
    trail: list[dict] = [
        {
            "features": [n for n, u in zip(FEATURE_NAMES, use) if u],
            "cv_acc@1": round(float(cross_validated(x, mask, gold, use, folds).mean()), 4),
        }
    ]
    while use.sum() > 1:
        best_drop, best_score = None, trail[-1]["cv_acc@1"]
        for index in np.flatnonzero(use):
            trial = use.copy()
            trial[index] = False
            score = round(float(cross_validated(x, mask, gold, trial, folds).mean()), 4)
            if score >= best_score:
                best_drop, best_score = index, score
        if best_drop is None:
            break
        use[best_drop] = False
        trail.append({"dropped": FEATURE_NAMES[best_drop], "cv_acc@1": best_score})
    return use, trail


def per_set(items: list[ItemCandidates], correct: np.ndarray) -> dict[str, float]:
    names = sorted({item.set_name for item in items})
    return {
        name: round(float(np.mean([c for item, c in zip(items, correct) if item.set_name == name])), 4)
        for name in names
    }


def fit_command(args: argparse.Namespace) -> int:
    from daemon.tools.eval import SUITE_DIR

    suite = args.suite or SUITE_DIR
    lm = CharNgramLM.load(args.lm)
    items = _cached_items(args.features, suite, args.limit, lm)
    model_scores = _model_scores(args.model, items, args.features) if args.model else None
    vectors = _word_vectors(args.word_vectors)
    _refuse_what_learnt_from_the_tuning_set(suite, lm, vectors)
    features = [
        item_features(item, lm, model_scores[i] if model_scores else None, vectors) for i, item in enumerate(items)
    ]
    x, mask, gold = as_arrays(features, items)
    folds = np.random.default_rng(20261201).permutation(len(items)) % args.folds
    report = {"items": len(items), "folds": args.folds, "oracle": per_set(items, gold.any(axis=1))}
    baselines = {"dictionary": Weights(rank=-1.0), "dictionary+context": Weights(cost=-1.0, context=1.0)}
    for name, weights in baselines.items():
        report[name] = per_set(items, top1_correct(x, mask, gold, np.array(weights.vector())))
    # Each reading length has weights of its own without the model, selected and cross-validated on its own
    # items; with a model, phrases have a second set, which counts where the model has a say.
    lengths = np.array([ReadingLength.of(item.reading).value for item in items])
    says = np.array([model_has_a_say(item.reading, item.context) for item in items]) if args.model else None
    correct = np.zeros(len(items), dtype=bool)
    report["without_model"] = {}
    for length in ReadingLength:
        part = lengths == length.value
        if args.only:
            held = WEIGHTS_WITHOUT_MODEL[length]
            report["without_model"][length.value], correct[part] = _fitted_with_held(
                x[part], mask[part], gold[part], folds[part], args.only, held
            )
            continue
        report["without_model"][length.value], correct[part] = _fitted(
            x[part], mask[part], gold[part], folds[part], [n for n in FEATURE_NAMES if n != "model"]
        )
    if says is not None:
        part = lengths == ReadingLength.PHRASE.value
        report["with_model"], with_model = (
            _fitted_with_held(x[part], mask[part], gold[part], folds[part], args.only, WEIGHTS_WITH_MODEL)
            if args.only
            else _fitted(x[part], mask[part], gold[part], folds[part], FEATURE_NAMES)
        )
        correct[part] = np.where(says[part], with_model, correct[part])
    report["cv"] = per_set(items, correct)
    report["cv_pooled"] = round(float(correct.mean()), 4)
    print(json.dumps(report, ensure_ascii=False))
    return 0


def _word_vectors(path: Path | None) -> WordVectors | None:
    """The vectors at `path` (an error if they do not load), else the shipped ones (None without)."""
    if path is None:
        return load_word_vectors()
    try:
        return WordVectors.load(path)
    except (OSError, ValueError, KeyError) as error:
        raise SystemExit(f"tsuzuri-lm fit: word vectors {path}: {error}") from error


def _refuse_what_learnt_from_the_tuning_set(suite: Path, lm: CharNgramLM, vectors: WordVectors | None) -> None:
    """On the tuning set, the features must come from models that never saw it (built --without-tuning)."""
    from daemon.tools.corpus import TUNING_MANIFEST

    if not (suite / TUNING_MANIFEST).exists():
        return
    for what, meta in (("language model", lm.meta), ("word vectors", vectors.meta if vectors is not None else None)):
        if meta is not None and not meta.get("without_tuning"):
            raise SystemExit(
                f"tsuzuri-lm fit: {suite} is the tuning set and the {what} learnt from it: "
                "build them with --without-tuning"
            )


def _fitted(x, mask, gold, folds, names) -> tuple[dict, np.ndarray]:
    """Features selected among `names`, their weights fitted on all the items given, and which items the
    cross-validated weights get right."""
    use, trail = select_features(x, mask, gold, folds, list(names))
    report = {"items": len(x), "selection": trail, "weights": asdict(Weights.of(list(fit_logit(x, mask, gold, use))))}
    return report, cross_validated(x, mask, gold, use, folds)


def _fitted_with_held(x, mask, gold, folds, names: list[str], held: Weights) -> tuple[dict, np.ndarray]:
    """The weights of `names` fitted with the others held at `held`'s, and which items the cross-validated
    weights get right."""
    use = np.array([name in names for name in FEATURE_NAMES])
    fixed = np.where(use, 0.0, np.array(held.vector()))
    weights = fixed + fit_logit(x, mask, gold, use, x @ fixed)
    report = {"items": len(x), "weights": asdict(Weights.of(list(weights)))}
    return report, cross_validated(x, mask, gold, use, folds, fixed)


def _cached_items(cache: Path | None, suite: Path, limit: int | None, lm: CharNgramLM) -> list[ItemCandidates]:
    if cache is not None and cache.is_file():
        return [ItemCandidates(**json.loads(line)) for line in cache.read_text(encoding="utf-8").splitlines()]
    items = collect_items(suite, limit, lm)
    if cache is not None:
        cache.write_text("".join(json.dumps(asdict(i), ensure_ascii=False) + "\n" for i in items), encoding="utf-8")
    return items


def _model_scores(model: str, items: list[ItemCandidates], cache: Path | None) -> list[list[float]]:
    """The neural model's log-probability of every candidate where it has a say (cached beside the item cache)."""
    path = cache.with_suffix(".model.json") if cache is not None else None
    if path is not None and path.is_file():
        return json.loads(path.read_text())
    from daemon.engine import Engine, ModelState

    engine = Engine(n_threads=2)
    engine.load(model)
    if engine.wait().state is not ModelState.READY:
        raise SystemExit(f"tsuzuri-lm: model {model} did not load")
    session = engine.session()
    scores = []
    for index, item in enumerate(items):
        has_a_say = item.texts and model_has_a_say(item.reading, item.context)
        found = engine.score(item.reading, item.context, item.texts, session) if has_a_say else []
        scores.append([s if math.isfinite(s) else -1e9 for s in found])
        if index % 500 == 0:
            print(f"tsuzuri-lm: model scores {index}/{len(items)}", file=sys.stderr)
    engine.close()
    if path is not None:
        path.write_text(json.dumps(scores))
    return scores
