"""Beam search over the dictionary's lattice, scored by the dictionary and the language model together.

MeCab's N-best ranks whole paths by dictionary cost alone, so for a long reading its ten best differ in one or
two words and the right combination is often missing (wac_sentences: in the top 10 for 61 % of sentences).
This search weighs every partial path with the additive terms of the rescoring — dictionary cost, LM
log-probability, characters, words — so the language model helps build paths, not only reorder finished ones.
Forward, partial paths that end at the same offset with the same right-hand word class and the same last
order−1 characters have the same future: they meet in one state, which keeps its best score and every arc into
it, and the `beam` best states of each offset go on. Backward, an A* search over those arcs (the forward scores
are its exact heuristic) lists the paths best first, as MeCab lists its N-best — so the list does not collapse
into the variants of one ending (今日、雨（晴れ）!? and 今日、雨（はれ）!? end in the same state).
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, field
from typing import NamedTuple
from collections.abc import Sequence

import numpy as np

from daemon.dictionary import ContextWord, Lattice
from daemon.lm.ngram import CharNgramLM
from daemon.lm.rescoring import Weights, context_hits, digits_not_as_typed

# States kept at each offset (16 and 32 found no more answers than 8), and the cheapest words of each reading
# that the lattice offers (5 left out the right homophone of long readings): measured in daemon/lm/README.md.
BEAM_WIDTH = 8
WORDS_PER_READING = 10
# Arcs whose path scores this much below the best path to the same offset are not followed. Measured on every
# fourth item of the suite (5 paths): 1 answer of the 982 found with no limit was lost, 15–20 % faster.
SCORE_MARGIN = 8.0
# Backward steps at most per search: paths that differ only in how a text is cut into words come out as
# duplicates and are skipped, so a list of n texts takes more than n.
MAX_BACKWARD_STEPS = 3000
_SENTENCE_EDGE_ID = 0


class PathWord(NamedTuple):
    start: int  # the stretch of the reading it spells
    end: int
    surface: str


@dataclass(frozen=True)
class LatticePath:
    text: str
    cost: int  # dictionary path cost from the sentence start to its end, as MeCab sums it
    words: tuple[PathWord, ...]

    @property
    def morphemes(self) -> int:
        return len(self.words)


class _Arc(NamedTuple):
    source: int  # the state the word follows
    surface: str
    score: float  # what the word adds to the path's score
    cost: int  # what it adds to the dictionary cost: its connection from the source and its own cost


@dataclass
class _State:
    offset: int
    right_id: int
    history: tuple[int, ...]  # the LM's last order−1 ids
    score: float  # the best score of a path from the sentence start to here
    arcs: list[_Arc] = field(default_factory=list)


def best_paths(
    lattice: Lattice,
    lm: CharNgramLM,
    weights: Weights,
    context: str = "",
    n: int = 10,
    beam: int = BEAM_WIDTH,
    margin: float = SCORE_MARGIN,
) -> list[LatticePath]:
    """Up to n paths over the whole lattice with distinct texts, best first by
    weights.cost · cost/1000 + weights.lm · LM log-prob after `context` + weights.chars · characters
    + weights.morphemes · words + weights.context · what each word shares with `context` (context_hits)
    + weights.digits_not_as_typed · digits written other than those typed, word by word."""
    if not lattice.reading:
        return []
    states = _forward(lattice, lm, weights, context, beam, margin)
    return _backward(lattice, states, weights, n)


def _forward(
    lattice: Lattice, lm: CharNgramLM, weights: Weights, context: str, beam: int, margin: float
) -> list[_State]:
    """Every state reached, the sentence start first; arcs leave only the `beam` best states of each offset."""
    keep = lm.order - 1
    encoded: dict[str, tuple[int, ...]] = {}
    # The context feature counts per word here (what a word shares with the context), so paths through the words
    # the document already writes are built, not only ranked; the pool's own scoring counts whole texts.
    word_terms_of: dict[tuple[str, str], float] = {}
    states = [_State(0, _SENTENCE_EDGE_ID, tuple(lm.history(context)), 0.0)]
    index: dict[tuple[int, int, tuple[int, ...]], int] = {}
    at_offset: list[list[int]] = [[0]] + [[] for _ in range(len(lattice.reading))]
    best_at = np.full(len(lattice.reading) + 1, -np.inf)
    for start, words in enumerate(lattice.words_from):
        sources = sorted(at_offset[start], key=lambda i: -states[i].score)[:beam]
        if not sources or not words:
            continue
        for word in words:
            if word.surface not in encoded:
                encoded[word.surface] = tuple(lm.encode(word.surface))
            if (word.surface, word.reading) not in word_terms_of:
                word_terms_of[word.surface, word.reading] = (
                    weights.chars * len(word.surface)
                    + weights.morphemes
                    + weights.context * context_hits(word.surface, context)
                    + weights.digits_not_as_typed * digits_not_as_typed(word.surface, word.reading)
                )
        texts = [encoded[w.surface] for w in words]
        ends = np.array([start + len(w.reading) for w in words])
        joins = lattice.connection[np.array([states[i].right_id for i in sources])][
            :, np.array([w.left_id for w in words])
        ]
        steps = joins.astype(np.int64) + np.array([w.cost for w in words])
        word_terms = np.array([word_terms_of[w.surface, w.reading] for w in words])
        lm_scores = lm.score_grid([states[i].history for i in sources], texts)
        arc_scores = weights.cost * steps / 1000 + weights.lm * lm_scores + word_terms
        totals = np.array([states[i].score for i in sources])[:, None] + arc_scores
        np.maximum.at(best_at, ends, totals.max(axis=0))
        rows, columns = np.nonzero(totals >= best_at[ends] - margin)
        for row, column, arc_score, step, total in zip(
            rows.tolist(),
            columns.tolist(),
            arc_scores[rows, columns].tolist(),
            steps[rows, columns].tolist(),
            totals[rows, columns].tolist(),
        ):
            source, word = sources[row], words[column]
            history = (states[source].history + texts[column])[-keep:]
            key = (start + len(word.reading), word.right_id, history)
            target = index.get(key)
            if target is None:
                target = index[key] = len(states)
                states.append(_State(key[0], word.right_id, history, total))
                at_offset[key[0]].append(target)
            elif total > states[target].score:
                states[target].score = total
            states[target].arcs.append(_Arc(source, word.surface, arc_score, step))
    return states


def _backward(lattice: Lattice, states: list[_State], weights: Weights, n: int) -> list[LatticePath]:
    """A* from the sentence end: a partial path's priority is its exact suffix score plus the best score of
    reaching its state, so complete paths come out best first."""
    counter = itertools.count()  # breaks ties without comparing the rest
    queue: list[tuple] = []
    for i, state in enumerate(states):
        if state.offset == len(lattice.reading):
            edge = int(lattice.connection[state.right_id, _SENTENCE_EDGE_ID])
            suffix_score = weights.cost * edge / 1000
            heapq.heappush(queue, (-(state.score + suffix_score), next(counter), i, suffix_score, "", edge, ()))
    paths: dict[str, LatticePath] = {}
    # A state reached again with the same text after it: every path on from there is a worse duplicate of
    # one already queued (the same word with another part of speech, or cut differently).
    expanded: set[tuple[int, str]] = set()
    for _ in range(MAX_BACKWARD_STEPS):
        if not queue or len(paths) == n:
            break
        _, _, i, suffix_score, text, cost, words = heapq.heappop(queue)
        if (i, text) in expanded:
            continue
        expanded.add((i, text))
        if i == 0:
            paths.setdefault(text, LatticePath(text, cost, words))
            continue
        for arc in states[i].arcs:
            score = suffix_score + arc.score
            heapq.heappush(
                queue,
                (
                    -(states[arc.source].score + score),
                    next(counter),
                    arc.source,
                    score,
                    arc.surface + text,
                    cost + arc.cost,
                    (PathWord(states[arc.source].offset, states[i].offset, arc.surface), *words),
                ),
            )
    return list(paths.values())


def with_context_words(path: LatticePath, found: Sequence[ContextWord]) -> list[LatticePath]:
    """The path with a word of the document in place of the words that spell the same stretch of the reading,
    where it has a word boundary at both ends of the stretch (長刀銅山で → 長登銅山で), one word at a time: the
    rest of the path stays, so a word of the document changes nothing else. The same dictionary cost as the
    path; texts the path or an earlier word gives are left out."""
    first_at = {word.start: index for index, word in enumerate(path.words)}
    last_at = {word.end: index for index, word in enumerate(path.words)}
    seen = {path.text}
    substituted: list[LatticePath] = []
    for word in found:
        first, last = first_at.get(word.start), last_at.get(word.end)
        if first is None or last is None or last < first:
            continue
        words = (*path.words[:first], PathWord(word.start, word.end, word.surface), *path.words[last + 1 :])
        text = "".join(w.surface for w in words)
        if text not in seen:
            seen.add(text)
            substituted.append(LatticePath(text, path.cost, words))
    return substituted
