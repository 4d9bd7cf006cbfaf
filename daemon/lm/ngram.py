"""A character n-gram language model: interpolated modified Kneser–Ney, stored as a trie of numpy arrays.

Characters, not words: a candidate is scored as typed, so the daemon needs no tokenizer at run time (only
numpy), and the dictionary's segmentation never has to agree with the training corpus's.

Layout. Id 0 is BOS (a line start; never predicted), id 1 is UNK (a character too rare for the vocabulary).
Level 1 is dense over the vocabulary. A level-k node (k ≥ 2) is an n-gram whose first k−1 characters are a
level-(k−1) node `parent`; its key is parent · V + last character, and each level is sorted by key, so a
lookup is one binary search per level. Every node holds the interpolated log-probability of its last
character given the rest (the ARPA form of interpolated KN) and, below the top order, the log back-off weight
that applies when it is a context whose continuation was pruned or never seen.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Iterable, Sequence

import numpy as np

from daemon.lm.array_file import read_arrays, write_arrays

BOS = 0
UNK = 1
FILE_MAGIC = b"TSZLM002"
_CODES = 256
_NOT_FOUND = -1


@dataclass(frozen=True)
class BuildOptions:
    order: int = 6
    # Characters seen fewer times than this share UNK.
    min_char_count: int = 3
    # Raw-count cutoffs for orders 2, 3, …, order (a shorter list repeats its last value). Non-decreasing, so
    # a kept n-gram's prefix and suffix are kept as well.
    cutoffs: tuple[int, ...] = (1, 2, 3, 4, 5)
    # 8-bit log-probabilities and back-off weights above level 1 (see QuantizedValues); exact floats when
    # False (the estimator's tests).
    quantize: bool = True

    def cutoff(self, order: int) -> int:
        return self.cutoffs[min(order - 2, len(self.cutoffs) - 1)] if order >= 2 else 1


def normalise(text: str) -> str:
    """What the model sees: NFKC (evaluation compares after NFKC too), line breaks as spaces."""
    return unicodedata.normalize("NFKC", text).replace("\n", " ")


@dataclass(frozen=True)
class SortedKeys:
    """A level's sorted keys (parent node · V + character id, which can pass 2³²) in 32 bits each: the low
    halves, and where each value of the high half begins (it takes a handful of values)."""

    low: np.ndarray  # uint32, sorted within each high half
    starts: np.ndarray  # int64: keys with high half h are low[starts[h]:starts[h + 1]]

    @classmethod
    def of(cls, keys: np.ndarray) -> SortedKeys:
        keys = keys.astype(np.uint64)
        high = (keys >> np.uint64(32)).astype(np.int64)
        starts = np.searchsorted(high, np.arange(int(high.max(initial=0)) + 2))
        return cls((keys & np.uint64(0xFFFFFFFF)).astype(np.uint32), starts.astype(np.int64))

    def __len__(self) -> int:
        return len(self.low)

    def find(self, keys: np.ndarray, valid: np.ndarray) -> np.ndarray:
        """The index of each of `keys` (int64) where `valid`, or −1 where it is absent or not valid."""
        found = np.full(len(keys), _NOT_FOUND, dtype=np.int64)
        high, low = keys >> 32, (keys & 0xFFFFFFFF).astype(np.uint32)
        for h in np.unique(high[valid & (high < len(self.starts) - 1)]).tolist():
            part = valid & (high == h)
            table = self.low[self.starts[h] : self.starts[h + 1]]
            if not len(table):
                continue
            position = np.minimum(np.searchsorted(table, low[part]), len(table) - 1)
            found[part] = np.where(table[position] == low[part], self.starts[h] + position, _NOT_FOUND)
        return found


@dataclass(frozen=True)
class QuantizedValues:
    """A level's log-probabilities or back-off weights as 8-bit codes into a table of 256 values (the
    quantiles of the level's own values): a quarter of float32, ≈ 0.01 nats where values are dense."""

    codes: np.ndarray  # uint8
    table: np.ndarray  # float32, ascending

    @classmethod
    def of(cls, values: np.ndarray) -> QuantizedValues:
        if not len(values):
            return cls(np.zeros(0, dtype=np.uint8), np.zeros(1, dtype=np.float32))
        table = np.unique(np.quantile(values, (np.arange(_CODES) + 0.5) / _CODES)).astype(np.float32)
        # Each value takes its nearest table entry: cut at the midpoints.
        codes = np.searchsorted((table[1:] + table[:-1]) / 2, values).astype(np.uint8)
        return cls(codes, table)

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, index: np.ndarray) -> np.ndarray:
        return self.table[self.codes[index]]


class CharNgramLM:
    """A built model: score candidate strings after an optional left context."""

    def __init__(
        self, order: int, chars: str, keys: list[SortedKeys], logprob: list, backoff: list, meta: dict | None = None
    ):
        self.order = order
        self.chars = chars  # id - 2 -> character (ids 0 and 1 are BOS and UNK)
        self.vocab_size = len(chars) + 2
        self._ids = {ch: i + 2 for i, ch in enumerate(chars)}
        self.keys = keys  # [level 2 … order]
        # Natural logs, [level 1 … order] and [level 1 … order−1]: level 1 as a float32 array, the others
        # QuantizedValues (or float arrays when built with quantize=False).
        self.logprob = logprob
        self.backoff = backoff
        self.meta = meta or {}

    def encode(self, text: str) -> list[int]:
        ids = self._ids
        return [ids.get(ch, UNK) for ch in normalise(text)]

    def history(self, context: str) -> list[int]:
        """What the next character is conditioned on after `context`: its last order−1 ids, after a BOS
        when the context is shorter (a line start when it is empty)."""
        history = self.encode(context)[-(self.order - 1) :] if context else []
        return [BOS] + history if len(history) < self.order - 1 else history

    def score(self, texts: Sequence[str], context: str = "") -> list[float]:
        """Natural-log probability of each text after `context` (a line start when empty or short)."""
        return self.score_grid([self.history(context)], [self.encode(text) for text in texts])[0].tolist()

    def score_grid(self, histories: Sequence[Sequence[int]], encoded: Sequence[Sequence[int]]) -> np.ndarray:
        """log P(encoded[j] | histories[i]) as an array [i, j] (ids, as from `history` and `encode`), in one
        vectorised pass: one stream holds each pair as a separator (−1, which no n-gram crosses), the
        history and the text; the lattice search scores a few hundred pairs per offset this way."""
        keep = self.order - 1
        # A short history is padded in front with separators: no n-gram crosses those either.
        padded = np.full((len(histories), keep), _NOT_FOUND, dtype=np.int64)
        for row, history in enumerate(histories):
            if history:
                padded[row, -len(history[-keep:]) :] = history[-keep:]
        lengths = np.array([len(text) for text in encoded], dtype=np.int64)
        if not len(padded) or not len(lengths):
            return np.zeros((len(histories), len(encoded)))
        blocks = keep + 1 + lengths  # per text: a separator, the history, the text
        block_starts = np.concatenate([[0], np.cumsum(blocks)[:-1]])
        row_length = int(blocks.sum())
        row_offsets = np.arange(len(padded), dtype=np.int64)[:, None] * row_length
        text_positions = (
            np.repeat(block_starts + keep + 1, lengths)
            + np.arange(int(lengths.sum()))
            - np.repeat(np.cumsum(lengths) - lengths, lengths)
        )
        stream = np.empty(len(padded) * row_length, dtype=np.int64)
        stream[(row_offsets + block_starts).ravel()] = _NOT_FOUND
        history_positions = row_offsets[:, :, None] + block_starts[None, :, None] + 1 + np.arange(keep)
        stream[history_positions.ravel()] = np.broadcast_to(padded[:, None, :], history_positions.shape).ravel()
        targets = (row_offsets + text_positions).ravel()
        stream[targets] = np.tile(np.concatenate([np.asarray(t, dtype=np.int64) for t in encoded]), len(padded))
        owners = (np.arange(len(padded))[:, None] * len(encoded) + np.repeat(np.arange(len(encoded)), lengths)).ravel()
        logp = self._char_logprobs(stream, targets)
        return np.bincount(owners, weights=logp, minlength=len(padded) * len(encoded)).reshape(len(padded), -1)

    def char_logprob(self, history: Sequence[int], target: int) -> float:
        """log P(target | history) for ids (tests check normalisation with it)."""
        stream = np.asarray([_NOT_FOUND, *history, target], dtype=np.int64)
        return float(self._char_logprobs(stream, np.asarray([len(stream) - 1]))[0])

    def _char_logprobs(self, stream: np.ndarray, targets: np.ndarray) -> np.ndarray:
        nodes = self._nodes(stream)
        result = np.zeros(len(targets), dtype=np.float64)
        pending = np.ones(len(targets), dtype=bool)
        for m in range(self.order, 0, -1):
            start = targets - m + 1
            inside = start >= 0
            full = np.full(len(targets), _NOT_FOUND, dtype=np.int64)
            full[inside] = nodes[m - 1][start[inside]]
            hit = pending & (full >= 0)
            result[hit] += self.logprob[m - 1][full[hit]]
            pending &= ~hit
            if m >= 2:
                context = np.full(len(targets), _NOT_FOUND, dtype=np.int64)
                context[inside] = nodes[m - 2][start[inside]]
                backs = pending & (context >= 0)
                result[backs] += self.backoff[m - 2][context[backs]]
        return result

    def _nodes(self, stream: np.ndarray) -> list[np.ndarray]:
        """nodes[k-1][j]: the level-k node of stream[j : j+k], or −1 (unknown, past the end, or crossing a
        separator or a BOS that is not first)."""
        level = np.where(stream >= 0, stream, _NOT_FOUND)
        nodes = [level]
        for k in range(2, self.order + 1):
            parent = level[: max(len(stream) - k + 1, 0)]  # a stream shorter than k has no k-grams
            last = stream[k - 1 :]
            ok = (parent >= 0) & (last > BOS)
            key = np.where(ok, parent, 0) * self.vocab_size + np.where(ok, last, 0)
            level = np.concatenate([self.keys[k - 2].find(key, ok), np.full(k - 1, _NOT_FOUND, dtype=np.int64)])
            nodes.append(level)
        return nodes

    # --- storage: a JSON header, then the arrays at aligned offsets, read back memory-mapped ---

    def save(self, path: Path) -> None:
        arrays = {
            "logprob1": np.asarray(self.logprob[0], dtype=np.float32),
            "backoff1": np.asarray(self.backoff[0], dtype=np.float32),
        }
        for k in range(2, self.order + 1):
            arrays[f"keys{k}.low"], arrays[f"keys{k}.starts"] = self.keys[k - 2].low, self.keys[k - 2].starts
            values = [("logprob", self.logprob[k - 1])] + ([("backoff", self.backoff[k - 1])] if k < self.order else [])
            for name, level in values:
                level = level if isinstance(level, QuantizedValues) else QuantizedValues.of(np.asarray(level))
                arrays[f"{name}{k}.codes"], arrays[f"{name}{k}.table"] = level.codes, level.table
        # "arrays" (the layout, filled in by write_arrays) keeps its place in the header: same file, same bytes.
        header = {"order": self.order, "chars": self.chars, "arrays": {}, "meta": self.meta}
        write_arrays(path, FILE_MAGIC, header, arrays)

    @classmethod
    def load(cls, path: Path) -> CharNgramLM:
        header, array = read_arrays(
            path, FILE_MAGIC, "a Tsuzuri language model of this version (rebuild it with tsuzuri-lm build)"
        )

        def values(name: str, k: int):
            if k == 1:
                return array(f"{name}1")
            return QuantizedValues(array(f"{name}{k}.codes"), array(f"{name}{k}.table"))

        order = header["order"]
        return cls(
            order,
            header["chars"],
            [SortedKeys(array(f"keys{k}.low"), array(f"keys{k}.starts")) for k in range(2, order + 1)],
            [values("logprob", k) for k in range(1, order + 1)],
            [values("backoff", k) for k in range(1, order)],
            header.get("meta"),
        )


def build(lines: Iterable[str], options: BuildOptions = BuildOptions()) -> CharNgramLM:
    """Count every n-gram of the lines (each after a BOS) and turn the counts into interpolated modified KN."""
    codepoints = np.frombuffer(
        ("\n" + "\n".join(normalise(line) for line in lines)).encode("utf-32-le"), dtype=np.uint32
    )
    is_break = codepoints == ord("\n")
    distinct, counts = np.unique(codepoints[~is_break], return_counts=True)
    kept = distinct[counts >= options.min_char_count]
    # Ids by frequency keep frequent keys small; ties by code point, so builds are reproducible.
    kept_counts = counts[counts >= options.min_char_count]
    by_frequency = kept[np.lexsort((kept, -kept_counts))]
    lookup = np.full(max(int(codepoints.max(initial=0)) + 1, 1), UNK, dtype=np.int64)
    lookup[by_frequency] = np.arange(len(by_frequency)) + 2
    stream = np.where(is_break, BOS, lookup[codepoints])
    chars = "".join(map(chr, by_frequency.tolist()))
    vocab_size = len(chars) + 2
    return _estimate(stream, vocab_size, chars, options)


def _estimate(stream: np.ndarray, vocab_size: int, chars: str, options: BuildOptions) -> CharNgramLM:
    """Counts of every level (unpruned), then KN probabilities, then pruning and renumbering."""
    levels = [
        _Level(np.zeros(0, dtype=np.uint64), np.bincount(stream, minlength=vocab_size), np.zeros(0, dtype=np.int64))
    ]
    starts = stream.astype(np.int64)  # the level-k node of the n-gram starting at each position, or −1
    for k in range(2, options.order + 1):
        parent = starts[: len(stream) - k + 1]
        last = stream[k - 1 :]
        valid = (parent >= 0) & (last != BOS)
        key = parent[valid].astype(np.uint64) * np.uint64(vocab_size) + last[valid].astype(np.uint64)
        level_keys, first, inverse, count = np.unique(key, return_index=True, return_inverse=True, return_counts=True)
        positions = np.flatnonzero(valid)
        # The suffix (the k−1 characters after the first) starts one position later.
        levels.append(_Level(level_keys, count, starts[positions[first] + 1]))
        starts = np.full(len(stream), _NOT_FOUND, dtype=np.int64)
        starts[positions] = inverse.reshape(-1)
    return _kneser_ney(levels, vocab_size, chars, options)


@dataclass(frozen=True)
class _Level:
    keys: np.ndarray  # parent · V + last id, sorted (empty for level 1, which is dense)
    raw: np.ndarray  # occurrences
    suffix: np.ndarray  # node of the n-gram without its first id, one level down (empty for level 1)


def _kneser_ney(levels: list[_Level], vocab_size: int, chars: str, options: BuildOptions) -> CharNgramLM:
    """Interpolated modified Kneser–Ney; what pruning removes goes to the back-off weight, computed as the
    leftover mass, so every context's distribution still sums to one."""
    order = len(levels)
    vocab = np.uint64(vocab_size)
    parents = [np.zeros(0, dtype=np.int64)] + [(level.keys // vocab).astype(np.int64) for level in levels[1:]]
    first_ids = [np.arange(vocab_size, dtype=np.int64)]
    for k in range(2, order + 1):
        first_ids.append(first_ids[-1][parents[k - 1]])
    kn_counts = []
    for k in range(1, order + 1):
        raw = levels[k - 1].raw.astype(np.float64)
        if k == order:
            kn_counts.append(raw)
            continue
        # N1+(· w), distinct left extensions; an n-gram after BOS has none, so it keeps its raw count.
        continuation = np.bincount(levels[k].suffix, minlength=len(raw)).astype(np.float64)
        kn_counts.append(np.where(first_ids[k - 1] == BOS, raw, continuation))
    keep = [np.ones(vocab_size, dtype=bool)] + [levels[k - 1].raw >= options.cutoff(k) for k in range(2, order + 1)]
    # Level 1: interpolated with the uniform distribution over every predictable id (all but BOS).
    count1 = kn_counts[0].copy()
    count1[BOS] = 0
    discounted1 = np.maximum(count1 - _discount(count1, _discounts(count1)), 0)
    leftover1 = 1.0 - discounted1.sum() / count1.sum()
    probability = [discounted1 / count1.sum() + leftover1 / (vocab_size - 1)]
    probability[0][BOS] = 0.0
    gammas = []
    for k in range(2, order + 1):
        count, parent = kn_counts[k - 1], parents[k - 1]
        discounted = np.maximum(count - _discount(count, _discounts(count)), 0)
        totals = np.bincount(parent, weights=count, minlength=len(kn_counts[k - 2]))
        kept_mass = np.bincount(parent[keep[k - 1]], weights=discounted[keep[k - 1]], minlength=len(totals))
        safe_totals = np.where(totals > 0, totals, 1.0)
        gamma = np.where(totals > 0, 1.0 - kept_mass / safe_totals, 1.0)
        gammas.append(gamma)
        probability.append(discounted / safe_totals[parent] + gamma[parent] * probability[-1][levels[k - 1].suffix])
    # Keep what survives the cutoffs and renumber; renumbering is monotone, so keys stay sorted.
    renumbered = [np.arange(vocab_size, dtype=np.int64)]
    keys = []
    for k in range(2, order + 1):
        kept = keep[k - 1]
        new_parent = renumbered[-1][parents[k - 1][kept]]
        last = (levels[k - 1].keys[kept] % vocab).astype(np.int64)
        keys.append(SortedKeys.of(new_parent.astype(np.uint64) * vocab + last.astype(np.uint64)))
        renumbered.append(np.cumsum(kept) - 1)
    with np.errstate(divide="ignore"):
        logprob: list = [np.log(probability[k][keep[k]]) for k in range(order)]
        backoff: list = [np.log(np.maximum(gammas[k][keep[k]], 1e-30)) for k in range(order - 1)]
    # Level 1 (the vocabulary) stays exact; above it, 8 bits a value, far below what separates candidates.
    if options.quantize:
        logprob = logprob[:1] + [QuantizedValues.of(level) for level in logprob[1:]]
        backoff = backoff[:1] + [QuantizedValues.of(level) for level in backoff[1:]]
    logprob[0], backoff[0] = logprob[0].astype(np.float32), backoff[0].astype(np.float32)
    meta = {
        "options": {"order": order, "min_char_count": options.min_char_count, "cutoffs": list(options.cutoffs)},
        "ngrams": [int(vocab_size)] + [int(len(key)) for key in keys],
    }
    return CharNgramLM(order, chars, keys, logprob, backoff, meta)


def _discounts(count: np.ndarray) -> tuple[float, float, float]:
    """Modified KN discounts D1, D2, D3+ from the counts of counts (Chen & Goodman)."""
    n1, n2, n3, n4 = (float(np.count_nonzero(count == c)) for c in (1, 2, 3, 4))
    if min(n1, n2, n3, n4) == 0:  # a tiny corpus: the textbook defaults
        return 0.5, 1.0, 1.5
    y = n1 / (n1 + 2 * n2)
    estimates = (1 - 2 * y * n2 / n1, 2 - 3 * y * n3 / n2, 3 - 4 * y * n4 / n3)
    # Small or odd counts can push an estimate outside [0, c]; a negative one would add mass.
    d1, d2, d3 = (min(max(d, 0.0), float(c)) for c, d in enumerate(estimates, start=1))
    return d1, d2, d3


def _discount(count: np.ndarray, discounts: tuple[float, float, float]) -> np.ndarray:
    return np.select([count <= 0, count == 1, count == 2], [0.0, discounts[0], discounts[1]], discounts[2])
