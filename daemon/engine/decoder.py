"""Decoding on llama.cpp: a per-session decoder that keeps its prompt's KV between calls, and the
deliberately naive reference that re-prefills every hypothesis from scratch.

Sequence layout of a session's context (n_seq = 2 * beam capacity):
  * seq 0 holds exactly the cached prompt between calls;
  * during a beam search, live beams are slots [0, beam) and scratch slots [beam, 2*beam);
  * in greedy decoding, guesses (the draft, the n-gram pool's) take the slots after 0, one each, then
    the Jacobi window's columns one each; the rows the output kept are copied into seq 0;
  * in exact mode a free scratch slot pads single-row batches.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Collection, Sequence

import numpy as np

from daemon.engine.constraint import SpellingConstraint
from daemon.engine.lookahead import JacobiWindow, LookaheadSettings, NgramPool
from daemon.engine.native import Context, LlamaError, Model
from daemon.engine.beam import MAX_BEAM
from daemon.engine.search import Hypothesis, beam_search, greedy_search, log_softmax, permutation_plan

KV_HEADROOM_CELLS = 64
BATCH_HEADROOM = 8
PROMPT_BATCH = 96  # prompts longer than this are prefilled in several batches


def kv_cells_needed(prompt_len: int, beam: int, max_new: int) -> int:
    return prompt_len + 2 * beam * (max_new + 1) + KV_HEADROOM_CELLS


@dataclass
class GreedyStats:
    """What greedy decoding has done since the decoder was made (read by tsuzuri-bench engine)."""

    steps: int = 0  # batches decoded after the prompt's
    tokens: int = 0  # output tokens
    guessed: int = 0  # guessed tokens decoded alongside
    accepted: int = 0  # guessed tokens that were the arg-max


def common_prefix_len(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


class SessionDecoder:
    """Greedy and KV-sharing beam search for one input session, reusing its previous prompt's KV.

    Typing one more kana changes only the tail of the prompt, so only the tokens after the longest
    common prefix with the previous prompt are decoded again.
    """

    def __init__(
        self,
        model: Model,
        n_threads: int = 2,
        exact: bool = False,
        beam_capacity: int = 8,
        prompt_capacity: int = 64,
        max_new_capacity: int = 40,
        lookahead: LookaheadSettings | None = None,
    ):
        self.model = model
        self.n_threads = n_threads
        self.exact = exact
        self.lookahead = lookahead
        self._pool = NgramPool(lookahead) if lookahead else None  # kept across calls, like the KV
        self.stats = GreedyStats()
        self._ctx: Context | None = None
        self._capacity = (0, 0)  # (beam, cells) the current context was sized for
        self._cached: list[int] = []  # the prompt whose KV seq 0 holds
        self._cached_logprobs: np.ndarray | None = None  # next-token distribution after it
        self._last_output: tuple[int, ...] = ()  # the previous greedy output: the next one's draft
        self._ensure_context(
            min(beam_capacity, MAX_BEAM), kv_cells_needed(prompt_capacity, beam_capacity, max_new_capacity)
        )

    # -- context management -------------------------------------------------------------------

    def _ensure_context(self, beam: int, cells: int) -> Context:
        cap_beam, cap_cells = self._capacity
        if self._ctx is None or beam > cap_beam or cells > cap_cells:
            if self._ctx is not None:
                self._ctx.close()
                self._ctx = None
            self._forget_prompt()
            beam, cells = max(beam, cap_beam), max(cells, cap_cells)
            n_seq = 2 * beam
            n_batch = max(PROMPT_BATCH, n_seq) + BATCH_HEADROOM
            self._ctx = Context(
                self.model,
                n_ctx=max(cells, n_batch),
                n_seq=n_seq,
                n_batch=n_batch,
                n_threads=self.n_threads,
                exact=self.exact,
            )
            self._capacity = (beam, cells)
        return self._ctx

    def _forget_prompt(self) -> None:
        self._cached = []
        self._cached_logprobs = None
        if self._ctx is not None:
            self._ctx.clear()

    def reset(self) -> None:
        """Forget the cached prompt and the previous output: the next call starts cold."""
        self._forget_prompt()
        self._last_output = ()
        if self.lookahead:
            self._pool = NgramPool(self.lookahead)

    def close(self) -> None:
        if self._ctx is not None:
            self._ctx.close()
            self._ctx = None

    def _context(self) -> Context:
        """The context the search under way made (_ensure_context)."""
        if self._ctx is None:
            raise LlamaError("the decoder has no context (closed)")
        return self._ctx

    # -- prompt ---------------------------------------------------------------------------------

    def prefill(self, prompt: list[int]) -> np.ndarray:
        """Make seq 0 hold `prompt`; return the next-token log-probabilities after it."""
        if not prompt:
            raise LlamaError("empty prompt")
        ctx = self._context()
        common = common_prefix_len(self._cached, prompt)
        if common == len(prompt) == len(self._cached) and self._cached_logprobs is not None:
            return self._cached_logprobs
        start = min(common, len(prompt) - 1)  # at least the last token, for its logits
        self._cached_logprobs = None
        try:
            ctx.seq_rm(0, start, -1)
            self._cached = prompt[:start]
            logits = None
            for begin in range(start, len(prompt), PROMPT_BATCH):
                chunk = prompt[begin : begin + PROMPT_BATCH]
                last = begin + len(chunk) == len(prompt)
                logits = ctx.decode(
                    chunk,
                    list(range(begin, begin + len(chunk))),
                    [0] * len(chunk),
                    [last and i == len(chunk) - 1 for i in range(len(chunk))],
                    pad_seq=1,
                )
                self._cached = prompt[: begin + len(chunk)]
        except LlamaError:
            self._forget_prompt()
            raise
        assert logits is not None  # one chunk at least: start < len(prompt)
        self._cached_logprobs = log_softmax(logits[0])
        return self._cached_logprobs

    def _restore_prompt_only(self, prompt_len: int) -> None:
        """After a search: only seq 0, trimmed back to the prompt, stays in the cache."""
        try:
            ctx = self._context()
            if ctx.seq_pos_max(0) >= prompt_len - 1:
                ctx.seq_keep(0)
                ctx.seq_rm(0, prompt_len, -1)
                return
        except LlamaError:
            pass
        self._forget_prompt()  # seq 0 lost the prompt: the next call re-prefills

    # -- searches -------------------------------------------------------------------------------

    def greedy(
        self,
        prompt: list[int],
        max_new: int,
        stop_tokens: Collection[int],
        use_draft: bool = True,
        draft: Sequence[int] | None = None,
    ) -> Hypothesis:
        """Greedy decoding, each step verifying guesses in the same batch: `draft` when given (e.g. the
        dictionary's best path), else the previous call's output (the output only grows while the user
        types), and with lookahead the n-gram pool's entries while the Jacobi window fills the pool. The
        result is the same as without guesses; a guess the model agrees with saves its steps."""
        lookahead = self.lookahead
        guess_seqs = 1 + (lookahead.per_token if lookahead else 0)
        window_seqs = lookahead.window if lookahead else 0
        ctx = self._ensure_context(
            (2 + guess_seqs + window_seqs) // 2, kv_cells_needed(len(prompt), 1, max_new) + PROMPT_BATCH
        )
        first = self.prefill(prompt)
        window = JacobiWindow(lookahead, list(self._last_output) + prompt) if lookahead else None
        pool = self._pool
        draft = tuple((draft if draft is not None else self._last_output) if use_draft else ())
        stats = self.stats
        pos = len(prompt)  # where the token being verified goes
        trie: dict[tuple[int, ...], list[int]] = {}
        used = 0  # sequences besides 0 the last batch used

        def propose(tokens: tuple[int, ...]) -> list[Sequence[int]]:
            guesses: list[Sequence[int]] = [draft[len(tokens) :]] if draft[: len(tokens)] == tokens else []
            return guesses + (pool.following(tokens[-1]) if pool is not None else [])

        def verify(token: int, guesses: list[tuple[int, ...]]) -> dict[tuple[int, ...], np.ndarray]:
            nonlocal trie, used
            window_rows = window.rows() if window is not None else []
            room = ctx.n_batch - 2 - len(window_rows)  # the token's row, and exact mode's pad
            taken, trie = trie_batch([list(g[:room]) for g in guesses], guess_seqs, room)
            used = taken + window_seqs
            for seq in range(1, used + 1):
                ctx.seq_cp(0, seq)
            nodes = list(trie)
            rows = (
                [(token, pos, tuple(range(used + 1)), True)]
                + [(node[-1], pos + len(node), tuple(trie[node]), True) for node in nodes]
                + [(r.token, pos + r.offset, tuple(1 + taken + c for c in r.columns), r.predicts) for r in window_rows]
            )
            row_tokens, positions, seqs, outputs = (list(column) for column in zip(*rows))
            logprobs = log_softmax(ctx.decode(row_tokens, positions, seqs, outputs, pad_seq=used + 1))
            stats.steps += 1
            stats.guessed += len(nodes)
            if window is not None and pool is not None:  # both come with lookahead
                predictions = np.argmax(logprobs[1 + len(nodes) :], axis=-1)
                for ngram in window.shift(token, predictions):
                    pool.add(ngram)
            return {(): logprobs[0]} | {node: logprobs[1 + k] for k, node in enumerate(nodes)}

        def accept(path: tuple[int, ...]) -> None:
            nonlocal pos
            if path:
                ctx.seq_cp(trie[path][0], 0, pos + 1, pos + 1 + len(path))
            for seq in range(1, used + 1):
                ctx.seq_rm(seq)
            stats.accepted += len(path)
            pos += 1 + len(path)

        try:
            result = greedy_search(first, verify, max_new, stop_tokens, propose, accept)
        finally:
            self._restore_prompt_only(len(prompt))
        stats.tokens += len(result.tokens)
        if pool is not None:
            pool.add_sequence(result.tokens)
        self._last_output = result.tokens
        return result

    def beam(
        self,
        prompt: list[int],
        beam: int,
        max_new: int,
        stop_tokens: Collection[int],
        constraint: SpellingConstraint | None = None,
    ) -> list[Hypothesis]:
        beam = min(max(beam, 1), MAX_BEAM)
        ctx = self._ensure_context(beam, kv_cells_needed(len(prompt), beam, max_new))
        first = self.prefill(prompt)
        depth = 0

        def advance(parents: list[int], tokens: list[int]) -> np.ndarray:
            nonlocal depth
            for op, a, b in permutation_plan(parents, beam):
                if op == "cp":
                    ctx.seq_cp(a, b)
                else:
                    ctx.seq_rm(a)
            pos = len(prompt) + depth
            depth += 1
            n = len(tokens)
            # The first scratch slot is empty after the permutation: it pads a lone row.
            return log_softmax(ctx.decode(tokens, [pos] * n, list(range(n)), [True] * n, pad_seq=beam))

        try:
            return beam_search(first, advance, beam, max_new, stop_tokens, constraint)
        finally:
            self._restore_prompt_only(len(prompt))

    def score(self, prompt: list[int], candidates: list[list[int]], end_token: int) -> list[float]:
        """log P(candidate, then end_token | prompt) for each candidate, teacher-forced.

        The prompt's KV is shared: each candidate gets its own copy of seq 0, and candidates are
        decoded as a token trie — a prefix common to several (the dictionary's n-best share most of
        their text) is one batch row belonging to all their sequences. As many candidates per batch
        as free slots and n_batch allow.
        """
        ctx = self._ensure_context(1, kv_cells_needed(len(prompt), 1, max(map(len, candidates), default=0)))
        first = self.prefill(prompt)
        scores = [float(first[end_token]) for _ in candidates]  # empty candidates end at once
        pending = sorted((i for i, c in enumerate(candidates) if c), key=lambda i: candidates[i])
        try:
            while pending:
                # one slot and one row stay free for exact mode's padding row
                taken, trie = trie_batch([candidates[i] for i in pending], ctx.n_seq - 2, ctx.n_batch - 1)
                if not taken:
                    raise LlamaError(f"a candidate of {len(candidates[pending[0]])} tokens exceeds the batch")
                indices, pending = pending[:taken], pending[taken:]
                for slot in range(1, taken + 1):
                    ctx.seq_cp(0, slot)
                prefixes = list(trie)
                rows_logprobs = log_softmax(
                    ctx.decode(
                        [prefix[-1] for prefix in prefixes],
                        [len(prompt) + len(prefix) - 1 for prefix in prefixes],
                        list(trie.values()),
                        [True] * len(prefixes),
                        pad_seq=taken + 1,
                    )
                )
                after = dict(zip(prefixes, rows_logprobs))
                for index in indices:
                    scores[index] = candidate_score(first, after, candidates[index], end_token)
                for slot in range(1, taken + 1):
                    ctx.seq_rm(slot)
        finally:
            self._restore_prompt_only(len(prompt))
        return scores


def candidate_score(
    first: np.ndarray, after: dict[tuple[int, ...], np.ndarray], candidate: Sequence[int], end_token: int
) -> float:
    """log P(candidate, then end_token) from the prompt's next-token row and the rows after each of the
    candidate's prefixes (its trie nodes)."""
    following = list(candidate[1:]) + [end_token]
    return float(first[candidate[0]]) + sum(float(after[tuple(candidate[: k + 1])][t]) for k, t in enumerate(following))


def trie_batch(
    candidates: list[list[int]], max_candidates: int, max_rows: int
) -> tuple[int, dict[tuple[int, ...], list[int]]]:
    """The batch for the longest leading run of `candidates` (at most `max_candidates`) whose token trie
    has at most `max_rows` nodes: how many candidates that is, and each trie node — a token prefix, parents
    before children — with the slots (1-based) of the candidates sharing it."""
    trie: dict[tuple[int, ...], list[int]] = {}
    for taken, cand in enumerate(candidates[:max_candidates]):
        prefixes = [tuple(cand[: k + 1]) for k in range(len(cand))]
        if len(trie) + sum(prefix not in trie for prefix in prefixes) > max_rows:
            return taken, trie
        for prefix in prefixes:
            trie.setdefault(prefix, []).append(taken + 1)
    return min(len(candidates), max_candidates), trie
