"""Beam bookkeeping, checked on its own against brute force and a simulated KV cache."""

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.engine.constraint import SpellingConstraint
from daemon.engine.search import (beam_search, constrained_rows, greedy_search, log_softmax,
                                  permutation_plan, top_expansions)

VOCAB = 6
STOP = 0


def toy_logprobs(prefix: tuple[int, ...]) -> np.ndarray:
    """A deterministic next-token distribution that depends on the whole prefix."""
    rng = np.random.default_rng(hash(prefix) % (2 ** 32))
    return log_softmax(rng.normal(0, 2, VOCAB))


def run_search(beam: int, max_new: int, constraint: SpellingConstraint | None = None):
    live: list[tuple[int, ...]] = [()]

    def advance(parents, tokens):
        nonlocal live
        live = [live[p] + (t,) for p, t in zip(parents, tokens)]
        return np.stack([toy_logprobs(s) for s in live])

    return beam_search(toy_logprobs(()), advance, beam, max_new, {STOP}, constraint)


def brute_force(max_new: int) -> list[tuple[float, tuple[int, ...]]]:
    """Every finished or max-length sequence with its score."""
    results = []
    frontier = [((), 0.0)]
    for depth in range(max_new):
        nxt = []
        for prefix, score in frontier:
            lp = toy_logprobs(prefix)
            for t in range(VOCAB):
                if t == STOP:
                    results.append((score + lp[t], prefix))
                elif depth == max_new - 1:
                    results.append((score + lp[t], prefix + (t,)))
                else:
                    nxt.append((prefix + (t,), score + lp[t]))
        frontier = nxt
    return sorted(results, key=lambda r: -r[0])


def test_wide_beam_equals_exhaustive_search():
    # With a beam wider than every frontier, beam search is exhaustive.
    max_new = 3
    found = run_search(beam=128, max_new=max_new)
    expected = brute_force(max_new)[:128]
    assert [h.tokens for h in found] == [tokens for _, tokens in expected]
    assert np.allclose([h.score for h in found], [s for s, _ in expected])


# Words over a 4-character reading, tokens 1..5: the ways to spell it are few enough to enumerate.
SPANS = [(0, 1, (1,)), (0, 2, (2,)), (0, 2, (1, 3)), (1, 2, (3,)), (1, 3, (4, 5)), (2, 3, (5,)),
         (2, 4, (2, 2)), (3, 4, (1,)), (3, 4, (4,))]
SPELLINGS = [(1, 3, 5, 1), (1, 3, 5, 4), (1, 3, 2, 2), (1, 4, 5, 1), (1, 4, 5, 4), (2, 5, 1), (2, 5, 4),
             (2, 2, 2)]  # 1 3 also as the one word (0, 2, (1, 3))


def test_constrained_beam_equals_exhaustive_search_over_the_spellings():
    def score(tokens):
        return sum(toy_logprobs(tokens[:i])[t] for i, t in enumerate(tokens)) + toy_logprobs(tokens)[STOP]

    expected = sorted(SPELLINGS, key=lambda s: -score(s))
    found = run_search(beam=128, max_new=5, constraint=SpellingConstraint(4, SPANS))
    assert [h.tokens for h in found] == expected
    assert all(h.finished for h in found)
    assert np.allclose([h.score for h in found], [score(s) for s in expected])


def test_narrow_constrained_beams_return_only_spellings():
    for beam in range(1, 6):
        found = run_search(beam, max_new=5, constraint=SpellingConstraint(4, SPANS))
        assert found and {h.tokens for h in found} <= set(SPELLINGS)


def test_constrained_rows_keep_model_log_probs_of_allowed_tokens_only():
    constraint = SpellingConstraint(1, [(0, 1, (2,)), (0, 1, (3, 4))])
    start = constraint.initial()
    done = constraint.allowed(start)[2]
    rows = log_softmax(np.arange(12.0).reshape(2, VOCAB))
    masked = constrained_rows(rows, [start, done], constraint, {STOP})
    assert np.isfinite(masked[0]).tolist() == [False, False, True, True, False, False]
    assert np.isfinite(masked[1]).tolist() == [True, False, False, False, False, False]  # only the stop
    assert masked[0, 2] == rows[0, 2]  # not renormalised


def test_results_are_sorted_and_bounded():
    for beam in (1, 2, 5):
        found = run_search(beam, max_new=6)
        assert 1 <= len(found) <= beam
        assert [h.score for h in found] == sorted((h.score for h in found), reverse=True)


def toy_greedy(max_new: int, draft=()):
    """Greedy over the toy model; returns the result and the sizes of the batches it asked for."""
    decoded: list[int] = []
    batches: list[int] = []

    def advance(tokens):
        batches.append(len(tokens))
        rows = []
        for t in tokens:
            decoded.append(t)
            rows.append(toy_logprobs(tuple(decoded)))
        return np.stack(rows)

    def rollback(n):
        del decoded[n:]

    return greedy_search(toy_logprobs(()), advance, max_new, {STOP}, draft=draft, rollback=rollback), batches


def test_beam_one_equals_greedy():
    greedy, _ = toy_greedy(8)
    best = run_search(beam=1, max_new=8)[0]
    assert (best.tokens, best.finished) == (greedy.tokens, greedy.finished)
    assert np.isclose(best.score, greedy.score)


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 12), st.lists(st.integers(0, VOCAB - 1), max_size=14), st.integers(0, 14))
def test_a_draft_never_changes_the_greedy_result(max_new, noise, keep):
    plain, plain_batches = toy_greedy(max_new)
    draft = list(plain.tokens[:keep]) + noise  # partly right, then anything
    drafted, _ = toy_greedy(max_new, draft)
    assert (drafted.tokens, drafted.finished) == (plain.tokens, plain.finished)
    assert np.isclose(drafted.score, plain.score)
    assert all(n == 1 for n in plain_batches)


def test_a_correct_draft_is_verified_in_one_batch():
    plain, _ = toy_greedy(10)
    drafted, batches = toy_greedy(10, plain.tokens)
    assert drafted == plain
    assert len(batches) <= 1  # everything after the first token rides along in one batch


def test_top_expansions_order_breaks_ties_by_parent_then_token():
    logprobs = np.log(np.array([[0.5, 0.25, 0.25], [0.5, 0.25, 0.25]]))
    picked = top_expansions(np.zeros(2), logprobs, per_row=3, keep=4)
    assert [(p, t) for p, t, _ in picked] == [(0, 0), (1, 0), (0, 1), (0, 2)]


def test_stop_tokens_finish_hypotheses_without_the_stop_token():
    first = np.log(np.array([0.9, 0.05, 0.05, 1e-9, 1e-9, 1e-9]))
    found = beam_search(first, lambda p, t: None, beam=1, max_new=5, stop_tokens={STOP})
    assert found[0].tokens == () and found[0].finished


def simulate(ops, cache):
    for op, a, b in ops:
        if op == "rm":
            cache[a] = None
        else:
            assert cache[a] is not None, "copied from an empty slot"
            cache[b] = cache[a]
    return cache


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 8).flatmap(
    lambda beam: st.tuples(st.just(beam),
                           st.lists(st.integers(0, beam - 1), min_size=1, max_size=beam))))
def test_permutation_plan_moves_each_parent_into_its_child_slot(case):
    beam, parents = case
    n_live = max(parents) + 1
    cache = [f"hyp{i}" if i < n_live else None for i in range(2 * beam)]
    result = simulate(permutation_plan(parents, beam), list(cache))
    assert result[:len(parents)] == [cache[p] for p in parents]
    assert all(slot is None for slot in result[len(parents):])  # scratch and unused slots are free


def test_permutation_plan_rejects_out_of_range_parents():
    import pytest
    with pytest.raises(ValueError):
        permutation_plan([0, 3], beam=3)
    with pytest.raises(ValueError):
        permutation_plan([0] * 4, beam=3)


def test_log_softmax_rows_sum_to_one():
    x = np.random.default_rng(0).normal(size=(3, 50)).astype(np.float32) * 30
    assert np.allclose(np.exp(log_softmax(x)).sum(axis=1), 1.0)
    assert list(itertools.chain(log_softmax(x).argmax(axis=1))) == list(x.argmax(axis=1))
