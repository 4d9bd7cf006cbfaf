"""Beam bookkeeping, checked on its own against brute force and a simulated KV cache."""

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.engine.constraint import SpellingConstraint
from daemon.engine.lookahead import JacobiWindow, LookaheadSettings, NgramPool
from daemon.engine.search import (
    beam_search,
    constrained_rows,
    greedy_search,
    log_softmax,
    permutation_plan,
    top_expansions,
)

VOCAB = 6
STOP = 0


def toy_logprobs(prefix: tuple[int, ...]) -> np.ndarray:
    """A deterministic next-token distribution that depends on the whole prefix."""
    rng = np.random.default_rng(hash(prefix) % (2**32))
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
    results: list[tuple[float, tuple[int, ...]]] = []
    frontier: list[tuple[tuple[int, ...], float]] = [((), 0.0)]
    for depth in range(max_new):
        nxt: list[tuple[tuple[int, ...], float]] = []
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
SPANS = [
    (0, 1, (1,)),
    (0, 2, (2,)),
    (0, 2, (1, 3)),
    (1, 2, (3,)),
    (1, 3, (4, 5)),
    (2, 3, (5,)),
    (2, 4, (2, 2)),
    (3, 4, (1,)),
    (3, 4, (4,)),
]
SPELLINGS = [
    (1, 3, 5, 1),
    (1, 3, 5, 4),
    (1, 3, 2, 2),
    (1, 4, 5, 1),
    (1, 4, 5, 4),
    (2, 5, 1),
    (2, 5, 4),
    (2, 2, 2),
]  # 1 3 also as the one word (0, 2, (1, 3))


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


def toy_greedy(max_new: int, draft=(), lookahead: LookaheadSettings | None = None, next_logprobs=None):
    """Greedy over the toy model, with the KV cache simulated: rows see the kept tokens and, as llama.cpp's
    masks make them, the rows of this batch that share a sequence and come before them. Returns the result
    and the number of rows of each batch."""
    next_logprobs = next_logprobs or toy_logprobs
    kept: list[int] = []  # tokens whose KV is kept
    batches: list[int] = []
    pool = NgramPool(lookahead) if lookahead else None
    window = JacobiWindow(lookahead, [1, 2, 3]) if lookahead else None
    last: list[int] = []

    def propose(tokens):
        guesses = [tuple(draft[len(tokens) :])] if tuple(draft[: len(tokens)]) == tokens else []
        return guesses + (pool.following(tokens[-1]) if pool else [])

    def verify(token, guesses):
        last[:] = [token]
        base = tuple(kept) + (token,)
        rows = {(): next_logprobs(base)}
        for guess in guesses:
            for k in range(len(guess)):
                rows[guess[: k + 1]] = next_logprobs(base + guess[: k + 1])
        window_rows = window.rows() if window else []
        predictions = {}
        for row in window_rows:
            seen = sorted(
                (r.offset, r.token) for r in window_rows if set(r.columns) & set(row.columns) and r.offset <= row.offset
            )
            if row.predicts:
                predictions[row.columns[0]] = int(np.argmax(next_logprobs(base + tuple(t for _, t in seen))))
        if window:
            for ngram in window.shift(token, [predictions[c] for c in range(window.width)]):
                pool.add(ngram)
        batches.append(len(rows) + len(window_rows))
        return rows

    def accept(path):
        kept.extend(last + list(path))

    result = greedy_search(next_logprobs(()), verify, max_new, {STOP}, propose, accept)
    return result, batches


def cycling_logprobs(prefix: tuple[int, ...]) -> np.ndarray:
    """A model that says 1 2 3 4 5 1 2 3 4 5 ...: what the n-gram pool learns to guess."""
    follows = (prefix[-1] % (VOCAB - 1)) + 1 if prefix else 1
    return log_softmax(np.where(np.arange(VOCAB) == follows, 3.0, 0.0))


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


@settings(max_examples=150, deadline=None)
@given(
    st.integers(1, 14),
    st.integers(1, 4),
    st.integers(3, 5),
    st.integers(1, 4),
    st.lists(st.integers(0, VOCAB - 1), max_size=8),
)
def test_lookahead_never_changes_the_greedy_result(max_new, window, ngram, per_token, draft):
    plain, _ = toy_greedy(max_new)
    ahead, batches = toy_greedy(max_new, draft, LookaheadSettings(window, ngram, per_token))
    assert (ahead.tokens, ahead.finished) == (plain.tokens, plain.finished)
    assert np.isclose(ahead.score, plain.score)


def test_lookahead_guesses_what_the_window_saw_and_takes_fewer_steps():
    plain, plain_batches = toy_greedy(24, next_logprobs=cycling_logprobs)
    ahead, batches = toy_greedy(24, lookahead=LookaheadSettings(4, 4, 2), next_logprobs=cycling_logprobs)
    assert ahead == plain
    assert len(plain_batches) == 23
    assert len(batches) <= 9  # after the window's first steps, three tokens a step


def test_the_pool_keeps_the_newest_distinct_continuations_per_first_token():
    pool = NgramPool(LookaheadSettings(1, 3, 2))
    for ngram in [(1, 2, 3), (1, 4, 5), (1, 2, 3), (1, 6, 6), (7, 1, 2)]:
        pool.add(ngram)
    assert pool.following(1) == [(6, 6), (2, 3)]
    assert pool.following(7) == [(1, 2)]
    assert pool.following(2) == []
    pool.add_sequence([2, 3, 4, 5])
    assert pool.following(2) == [(3, 4)] and pool.following(3) == [(4, 5)]


def test_the_window_lays_columns_out_diagonally_and_moves_up_a_level():
    window = JacobiWindow(LookaheadSettings(window=3, ngram=3, per_token=1), [10, 11, 12, 13, 14, 15])
    assert window.levels == [[10, 11, 12], [13, 14, 15]]
    assert [(r.token, r.offset, r.columns, r.predicts) for r in window.rows()] == [
        (11, 1, (1, 2), False),
        (12, 2, (2,), False),
        (13, 1, (0,), True),
        (14, 2, (1,), True),
        (15, 3, (2,), True),
    ]
    assert window.shift(9, [20, 21, 22]) == [(9, 13, 20), (11, 14, 21), (12, 15, 22)]
    assert window.levels == [[13, 14, 15], [20, 21, 22]]


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
@given(
    st.integers(1, 8).flatmap(
        lambda beam: st.tuples(st.just(beam), st.lists(st.integers(0, beam - 1), min_size=1, max_size=beam))
    )
)
def test_permutation_plan_moves_each_parent_into_its_child_slot(case):
    beam, parents = case
    n_live = max(parents) + 1
    cache = [f"hyp{i}" if i < n_live else None for i in range(2 * beam)]
    result = simulate(permutation_plan(parents, beam), list(cache))
    assert result[: len(parents)] == [cache[p] for p in parents]
    assert all(slot is None for slot in result[len(parents) :])  # scratch and unused slots are free


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
