"""tsuzuri-lm vectors: the word vectors of daemon/lm/word_vectors.py, from the training text.

Words are the kanji and katakana runs of every line (the vocabulary: the most frequent, each seen at least
MIN_COUNT times; other runs are read as their longest known words, as the daemon reads them). Two words within
WINDOW words of each other in a line co-occur; their positive pointwise mutual information (the context
distribution smoothed by the 0.75 power) is factorised by a randomized SVD (Halko, Martinsson & Tropp, 2011), a
word's vector its row of U·√S, made unit length. Its baseline is what its best cosine with the words within
NEIGHBOURS of it comes to over its occurrences in the text, apart from how many such words there were.
Everything is numpy and seeded: the same text gives the same file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from daemon.lm.word_vectors import NEIGHBOURS, WORD, WordVectors, split_into_words

WINDOW = 8
MIN_COUNT = 5
MAX_WORDS = 80_000
DIMENSIONS = 100
_OVERSAMPLING = 10
_POWER_ITERATIONS = 4
_SEED = 20261206
_BASELINE_ROUNDS = 20
_CHUNK = 1 << 20  # nonzeros or pairs a step handles: bounds the memory of a product


@dataclass(frozen=True)
class Corpus:
    """The training text as word ids, with the line each occurrence is in."""

    words: list[str]
    ids: np.ndarray  # int64
    lines: np.ndarray  # int64, non-decreasing


def read_words(lines: Iterable[str], max_words: int = MAX_WORDS, min_count: int = MIN_COUNT) -> Corpus:
    runs = [WORD.findall(line) for line in lines]
    counts = Counter(run for line in runs for run in line)
    # Most frequent first; ties in the order the text first has them (Counter keeps it): deterministic.
    words = [word for word, count in counts.most_common(max_words) if count >= min_count]
    index = {word: i for i, word in enumerate(words)}
    longest = max(map(len, words), default=1)
    split: dict[str, list[int]] = {}
    ids: list[int] = []
    line_of: list[int] = []
    for number, line in enumerate(runs):
        for run in line:
            found = split.get(run)
            if found is None:
                found = split[run] = split_into_words(run, index, longest)
            ids += found
            line_of += [number] * len(found)
    return Corpus(words, np.array(ids, dtype=np.int64), np.array(line_of, dtype=np.int64))


@dataclass(frozen=True)
class SparseMatrix:
    """A square matrix as sorted coordinates (row-major), with the column-major order kept for its transpose."""

    size: int
    rows: np.ndarray
    cols: np.ndarray
    values: np.ndarray  # float64
    by_column: np.ndarray  # the permutation that sorts the entries by column

    @classmethod
    def of(cls, size: int, rows: np.ndarray, cols: np.ndarray, values: np.ndarray) -> SparseMatrix:
        return cls(size, rows, cols, values, np.argsort(cols, kind="stable"))

    def times(self, dense: np.ndarray, transposed: bool = False) -> np.ndarray:
        """self @ dense, or self.T @ dense: row by row, in a fixed order."""
        order = self.by_column if transposed else None
        out_index, in_index = (self.cols, self.rows) if transposed else (self.rows, self.cols)
        out = np.zeros((self.size, dense.shape[1]))
        for start in range(0, len(self.values), _CHUNK):
            part = slice(start, start + _CHUNK) if order is None else order[start : start + _CHUNK]
            targets = out_index[part]
            products = self.values[part, None] * dense[in_index[part]]
            starts = np.flatnonzero(np.diff(targets, prepend=-1))
            out[targets[starts]] += np.add.reduceat(products, starts, axis=0)
        return out


def cooccurrence(corpus: Corpus, window: int = WINDOW) -> SparseMatrix:
    """How often each two words are within `window` words of each other in a line (both orders)."""
    size = len(corpus.words)
    keys_found, counts_found = [], []
    for distance in range(1, window + 1):
        same_line = corpus.lines[:-distance] == corpus.lines[distance:]
        first, second = corpus.ids[:-distance][same_line], corpus.ids[distance:][same_line]
        keys, counts = np.unique(np.concatenate([first * size + second, second * size + first]), return_counts=True)
        keys_found.append(keys)
        counts_found.append(counts)
    keys, where = np.unique(np.concatenate(keys_found), return_inverse=True)
    counts = np.bincount(where, weights=np.concatenate(counts_found))
    return SparseMatrix.of(size, keys // size, keys % size, counts)


def positive_pmi(counts: SparseMatrix) -> SparseMatrix:
    row_sums = np.bincount(counts.rows, weights=counts.values, minlength=counts.size)
    smoothed = np.bincount(counts.cols, weights=counts.values, minlength=counts.size) ** 0.75
    pmi = np.log(counts.values * smoothed.sum() / (row_sums[counts.rows] * smoothed[counts.cols]))
    keep = pmi > 0
    return SparseMatrix.of(counts.size, counts.rows[keep], counts.cols[keep], pmi[keep])


def principal_vectors(matrix: SparseMatrix, dimensions: int = DIMENSIONS, seed: int = _SEED) -> np.ndarray:
    """Rows of U·√S of the matrix's `dimensions` largest singular values (randomized SVD), unit length."""
    rng = np.random.default_rng(seed)
    sketch = rng.standard_normal((matrix.size, min(dimensions + _OVERSAMPLING, matrix.size)))
    basis, _ = np.linalg.qr(matrix.times(sketch))
    for _ in range(_POWER_ITERATIONS):
        basis, _ = np.linalg.qr(matrix.times(basis, transposed=True))
        basis, _ = np.linalg.qr(matrix.times(basis))
    small = matrix.times(basis, transposed=True).T  # basis.T @ matrix
    left, singular, _ = np.linalg.svd(small, full_matrices=False)
    vectors = (basis @ left[:, :dimensions]) * np.sqrt(singular[:dimensions])
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)


def baselines(corpus: Corpus, vectors: WordVectors, reach: int = NEIGHBOURS) -> tuple[np.ndarray, np.ndarray]:
    """Each occurrence's best cosine with another word within `reach` of it in its line (the vectors as stored,
    quantised), split into a part per word and a part per number of such neighbours, each the mean of what the
    other part leaves (a few rounds of alternating means; 0 where none was seen)."""
    best = np.full(len(corpus.ids), -np.inf)
    neighbours = np.zeros(len(corpus.ids), dtype=np.int64)
    for distance in range(1, reach + 1):
        for start in range(0, len(corpus.ids) - distance, _CHUNK):
            first = slice(start, min(start + _CHUNK, len(corpus.ids) - distance))
            second = slice(first.start + distance, first.stop + distance)
            left, right = corpus.ids[first], corpus.ids[second]
            pair = (corpus.lines[first] == corpus.lines[second]) & (left != right)
            cosines = np.where(pair, np.einsum("ij,ij->i", vectors.vectors(left), vectors.vectors(right)), -np.inf)
            for side in (first, second):
                np.maximum(best[side], cosines, out=best[side])
                neighbours[side] += pair
    seen = neighbours > 0
    return additive_parts(best[seen], corpus.ids[seen], len(corpus.words), neighbours[seen], 2 * reach + 1)


def additive_parts(
    values: np.ndarray, first: np.ndarray, first_size: int, second: np.ndarray, second_size: int
) -> tuple[np.ndarray, np.ndarray]:
    """a (indexed by `first`) and b (by `second`) with values ≈ a[first] + b[second], by least squares (a few
    rounds of alternating means); 0 for an index never seen. b's first seen index is not pinned: a and b are
    determined up to a constant moved from one to the other, which their sum does not see."""
    a, b = np.zeros(first_size), np.zeros(second_size)
    for _ in range(_BASELINE_ROUNDS):
        a = _means(first, values - b[second], first_size)
        b = _means(second, values - a[first], second_size)
    return a, b


def _means(groups: np.ndarray, values: np.ndarray, size: int) -> np.ndarray:
    return np.bincount(groups, weights=values, minlength=size) / np.maximum(np.bincount(groups, minlength=size), 1)


def build(
    lines: Sequence[str], window: int = WINDOW, dimensions: int = DIMENSIONS, max_words: int = MAX_WORDS
) -> WordVectors:
    corpus = read_words(lines, max_words)
    vectors = principal_vectors(positive_pmi(cooccurrence(corpus, window)), min(dimensions, len(corpus.words)))
    quantised = WordVectors.of(corpus.words, vectors)
    meta = {"window": window, "dimensions": vectors.shape[1], "occurrences": len(corpus.ids)}
    return quantised.with_baselines(*baselines(corpus, quantised), meta)
