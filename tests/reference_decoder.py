"""The naive reference the KV-sharing decoder (daemon/engine/decoder.py) is checked against in
tests/integration/test_decoder_equivalence.py: every hypothesis re-prefilled from an empty cache at every step."""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from daemon.engine.beam import MAX_BEAM
from daemon.engine.constraint import SpellingConstraint
from daemon.engine.native import Context, Model
from daemon.engine.search import Hypothesis, beam_search, greedy_search, log_softmax


class ReferenceDecoder:
    """Every hypothesis re-prefilled from an empty cache at every step."""

    def __init__(self, model: Model, n_threads: int = 2, exact: bool = True, n_ctx: int = 512):
        self.model = model
        self._ctx = Context(model, n_ctx=n_ctx, n_seq=2, n_batch=n_ctx, n_threads=n_threads, exact=exact)

    def _next_logprobs(self, tokens: list[int]) -> np.ndarray:
        ctx = self._ctx
        ctx.clear()
        n = len(tokens)
        logits = ctx.decode(tokens, list(range(n)), [0] * n, [i == n - 1 for i in range(n)], pad_seq=1)
        return log_softmax(logits[0])

    def beam(
        self,
        prompt: list[int],
        beam: int,
        max_new: int,
        stop_tokens: Collection[int],
        constraint: SpellingConstraint | None = None,
    ) -> list[Hypothesis]:
        sequences = [list(prompt)]

        def advance(parents: list[int], tokens: list[int]) -> np.ndarray:
            nonlocal sequences
            sequences = [sequences[p] + [t] for p, t in zip(parents, tokens)]
            return np.stack([self._next_logprobs(s) for s in sequences])

        return beam_search(self._next_logprobs(prompt), advance, min(beam, MAX_BEAM), max_new, stop_tokens, constraint)

    def greedy(self, prompt: list[int], max_new: int, stop_tokens: Collection[int]) -> Hypothesis:
        sequence = list(prompt)

        def verify(token: int, _guesses) -> dict[tuple[int, ...], np.ndarray]:
            sequence.append(token)
            return {(): self._next_logprobs(sequence)}

        return greedy_search(self._next_logprobs(prompt), verify, max_new, stop_tokens)

    def score(self, prompt: list[int], candidates: list[list[int]], end_token: int) -> list[float]:
        scores = []
        for cand in candidates:
            sequence = list(prompt) + cand
            ctx = self._ctx
            ctx.clear()
            n = len(sequence)
            wanted = len(cand) + 1  # the rows predicting each candidate token and the end
            logits = ctx.decode(sequence, list(range(n)), [0] * n, [i >= n - wanted for i in range(n)], pad_seq=1)
            logprobs = log_softmax(logits)
            scores.append(sum(float(logprobs[k][t]) for k, t in enumerate(cand + [end_token])))
        return scores

    def close(self) -> None:
        self._ctx.close()
