"""Beam-search bookkeeping, independent of how logits are computed (pure, directly tested).

The search asks a backend to `advance(parents, tokens)`: hypothesis j of the next step extends live
hypothesis parents[j] by tokens[j]; the backend returns one row of next-token log-probabilities per new
hypothesis. The KV-sharing backend and the naive re-prefill reference implement the same contract, so
they can be compared candidate for candidate.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from collections.abc import Callable, Collection, Sequence

import numpy as np

from daemon.engine.beam import MAX_BEAM
from daemon.engine.constraint import SpellingConstraint, State


@dataclass(frozen=True)
class Hypothesis:
    tokens: tuple[int, ...]
    score: float  # sum of token log-probabilities (no length normalisation)
    finished: bool


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise log-softmax in float64 (scores are summed over many steps)."""
    x = logits.astype(np.float64)
    x -= x.max(axis=-1, keepdims=True)
    x -= np.log(np.exp(x).sum(axis=-1, keepdims=True))
    return x


def top_expansions(scores: np.ndarray, logprobs: np.ndarray, per_row: int, keep: int) -> list[tuple[int, int, float]]:
    """The `keep` best (parent, token, score) over the top `per_row` tokens of each row.

    Order is deterministic: higher score first, then lower parent, then lower token id.
    """
    per_row = min(per_row, logprobs.shape[1])
    candidates: list[tuple[int, int, float]] = []
    for parent, (base, row) in enumerate(zip(scores, logprobs)):
        top = np.argpartition(-row, per_row - 1)[:per_row] if per_row < row.size else np.arange(row.size)
        candidates.extend((parent, int(t), float(base + row[t])) for t in top)
    candidates = [c for c in candidates if c[2] > -np.inf]  # tokens a constraint ruled out
    candidates.sort(key=lambda c: (-c[2], c[0], c[1]))
    return candidates[:keep]


def constrained_rows(
    logprobs: np.ndarray, states: Sequence[State], constraint: SpellingConstraint, stop_tokens: Collection[int]
) -> np.ndarray:
    """`logprobs` with every token the constraint rules out in that row's state set to -inf (a stop
    token is allowed where the reading is fully spelled). Not renormalised: scores stay model log-probs."""
    masked = np.full_like(logprobs, -np.inf)
    for row, state in enumerate(states):
        allowed = list(constraint.allowed(state))
        if constraint.accepts(state):
            allowed += [t for t in stop_tokens if t < logprobs.shape[1]]
        masked[row, allowed] = logprobs[row, allowed]
    return masked


def permutation_plan(parents: list[int], beam: int) -> list[tuple[str, int, int]]:
    """KV operations that put a copy of live slot parents[j] into live slot j.

    Live slots are [0, beam), scratch slots [beam, 2*beam). Copying through scratch makes any
    mapping safe, including one parent feeding several children and a parent that is itself a
    destination. Ops: ("rm", seq, -1) and ("cp", src, dst).
    """
    if len(parents) > beam or any(not 0 <= p < beam for p in parents):
        raise ValueError(f"parents {parents} do not fit {beam} live slots")
    ops: list[tuple[str, int, int]] = []
    for j, parent in enumerate(parents):
        ops += [("rm", beam + j, -1), ("cp", parent, beam + j)]
    ops += [("rm", slot, -1) for slot in range(beam)]
    for j in range(len(parents)):
        ops += [("cp", beam + j, j), ("rm", beam + j, -1)]
    return ops


def beam_search(
    first_logprobs: np.ndarray,
    advance: Callable[[list[int], list[int]], np.ndarray],
    beam: int,
    max_new: int,
    stop_tokens: Collection[int],
    constraint: SpellingConstraint | None = None,
) -> list[Hypothesis]:
    """Beam search from the prompt's next-token distribution; best first, at most `beam` results.

    Each step expands the top max(beam, 4) tokens of every live hypothesis and keeps the `beam` best;
    an expansion ending in a stop token is finished (stop token dropped). The search stops early
    once `beam` hypotheses are finished and the best live one scores below the best finished one
    (scores only decrease). With a `constraint`, only outputs that spell the reading are searched, and
    only finished ones are returned.
    """
    if not 1 <= beam <= MAX_BEAM:
        raise ValueError(f"beam {beam} outside 1..{MAX_BEAM}")
    if max_new < 1:
        return []
    per_row = max(beam, 4)
    live: list[Hypothesis] = []
    finished: list[Hypothesis] = []
    states: list[State] = [constraint.initial()] if constraint is not None else []

    def expand(scores: np.ndarray, logprobs: np.ndarray) -> list[tuple[int, int, float]]:
        if constraint is not None:
            logprobs = constrained_rows(logprobs, states, constraint, stop_tokens)
        return top_expansions(scores, logprobs, per_row, beam)

    expansions = expand(np.zeros(1), first_logprobs[None, :])
    for depth in range(max_new):
        next_live, parents, next_states = [], [], []
        for parent, token, score in expansions:
            prefix = live[parent].tokens if live else ()
            if token in stop_tokens:
                finished.append(Hypothesis(prefix, score, True))
            else:
                next_live.append(Hypothesis(prefix + (token,), score, False))
                parents.append(parent)
                if constraint is not None:
                    next_states.append(constraint.allowed(states[parent])[token])
        live, states = next_live, next_states
        if not live or depth == max_new - 1:
            break
        if len(finished) >= beam and max(h.score for h in live) < max(h.score for h in finished):
            break
        logprobs = advance(parents, [h.tokens[-1] for h in live])
        expansions = expand(np.array([h.score for h in live]), logprobs)
    results = sorted(finished + (live if constraint is None else []), key=lambda h: (-h.score, h.tokens))
    return results[:beam]


def greedy_search(
    first_logprobs: np.ndarray,
    verify: Callable[[int, list[tuple[int, ...]]], dict],
    max_new: int,
    stop_tokens: Collection[int],
    propose: Callable[[tuple[int, ...]], Sequence[Sequence[int]]] | None = None,
    accept: Callable[[tuple[int, ...]], None] | None = None,
) -> Hypothesis:
    """Greedy decoding: the arg-max token each step (lowest id on ties).

    Each step decodes the arg-max token together with guesses of what follows it: `propose(tokens)` gives
    continuations of the output so far (e.g. the previous keystroke's output, the dictionary's best path, an
    n-gram pool's entries); `verify(token, guesses)` decodes the token and the guesses' token trie in one batch
    and returns a log-probability row per trie node, keyed by the guessed tokens it ends (() for the token
    itself). Each guessed token that is also the arg-max is accepted without a step of its own; `accept(path)`
    tells the backend which guessed tokens were kept, the rest to be dropped. The result is the same as
    without guesses.
    """
    tokens: list[int] = []
    score = 0.0
    logprobs = first_logprobs
    while True:
        token = int(np.argmax(logprobs))
        score += float(logprobs[token])
        if token in stop_tokens:
            return Hypothesis(tuple(tokens), score, True)
        tokens.append(token)
        if len(tokens) >= max_new:
            return Hypothesis(tuple(tokens), score, False)
        room = max_new - len(tokens)
        guesses = [
            tuple(itertools.takewhile(lambda t: t not in stop_tokens, guess[:room]))
            for guess in (propose(tuple(tokens)) if propose is not None else ())
        ]
        rows = verify(token, list(dict.fromkeys(g for g in guesses if g)))
        path: tuple[int, ...] = ()
        logprobs = rows[path]
        while True:
            guessed = int(np.argmax(logprobs))
            if path + (guessed,) not in rows:
                break
            score += float(logprobs[guessed])
            tokens.append(guessed)
            path += (guessed,)
            logprobs = rows[path]
        if accept is not None:
            accept(path)
        if len(tokens) >= max_new:
            return Hypothesis(tuple(tokens), score, False)
