"""Word lookups straight from a MeCab system dictionary file (sys.dic), by exact reading or by prefix.

MeCab itself only finds the words that cover a sentence; predicting the words that *start* with a prefix needs
a walk of the file's double-array trie, done here over a memory map (nothing is read up front). Layout, after
MeCab's dictionary.cpp: a 72-byte header, the double array (8-byte units: int32 base, uint32 check), the
tokens (16 bytes each) and the NUL-terminated features. In Mozc's dictionary the key is the reading (UTF-8
hiragana) and the feature is the surface.
"""

from __future__ import annotations

import mmap
import struct
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from functools import lru_cache
from typing import NamedTuple
from collections.abc import Callable

import numpy as np

_HEADER = struct.Struct("<10I32s")  # magic, version, type, lexsize, lsize, rsize, dsize, tsize, fsize, dummy
_UNIT = np.dtype([("base", "<i4"), ("check", "<u4")])
_TOKEN = np.dtype(
    [
        ("left_id", "<u2"),
        ("right_id", "<u2"),
        ("pos_id", "<u2"),
        ("cost", "<i2"),
        ("feature", "<u4"),
        ("compound", "<u4"),
    ]
)
_BYTE_VALUES = 256
_BOS_EOS_ID = 0
# A short prefix such as か heads hundreds of thousands of words, so prediction walks the trie breadth first
# (shorter readings first) and stops after this many nodes or once it holds this many words per result asked.
MAX_PREDICT_NODES = 2000
PREDICT_POOL_PER_RESULT = 20


@dataclass(frozen=True)
class Word:
    """A dictionary entry. Its cost is that of the word standing alone: word cost plus the connection costs
    from a sentence start and to a sentence end, so that words of different parts of speech compare."""

    reading: str
    surface: str
    cost: int
    left_id: int
    right_id: int


class PrefixEntry(NamedTuple):
    """A word found by a common-prefix search: its reading is the key's first `length` characters."""

    length: int
    surface: str
    left_id: int
    right_id: int
    cost: int  # the word's own cost, without connection costs


class DictionaryFile(NamedTuple):
    """The parts of one sys.dic, as arrays over its memory map (read with `open_dictionary_file`)."""

    map: mmap.mmap  # the whole file, read-only
    units: np.ndarray  # the double array: fields base (int32) and check (uint32)
    tokens: np.ndarray  # fields left_id, right_id, pos_id, cost, feature (offset of its feature), compound
    features_offset: int  # where the NUL-terminated features start in `map`
    features_size: int


def open_dictionary_file(path: Path) -> DictionaryFile:
    """Maps a MeCab sys.dic into memory and finds its double array, tokens and features (nothing is read up
    front but the header)."""
    with open(path, "rb") as file:
        mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
    *_, units_size, tokens_size, features_size, _, _ = _HEADER.unpack_from(mapped)
    units = np.frombuffer(mapped, _UNIT, count=units_size // _UNIT.itemsize, offset=_HEADER.size)
    tokens = np.frombuffer(mapped, _TOKEN, count=tokens_size // _TOKEN.itemsize, offset=_HEADER.size + units_size)
    return DictionaryFile(mapped, units, tokens, _HEADER.size + units_size + tokens_size, features_size)


class Lexicon:
    """Exact and predictive lookups in one sys.dic file; `connection(right_id, left_id)` is the dictionary's
    connection cost."""

    def __init__(self, path: Path, connection: Callable[[int, int], int]) -> None:
        self._connection = connection
        dictionary = open_dictionary_file(path)
        self._map = dictionary.map
        self._base, self._check = dictionary.units["base"], dictionary.units["check"]
        self._tokens = dictionary.tokens
        self._features_offset = dictionary.features_offset
        # Surfaces by feature offset: a lattice decodes the same few thousand again and again.
        self._surface = lru_cache(maxsize=1 << 16)(self._feature)

    def lookup(self, reading: str) -> list[Word]:
        """Every entry whose reading is exactly `reading`, cheapest first."""
        key = reading.encode()
        node = self._walk(key)
        return [] if node is None else sorted(self._words_at(node, key), key=_by_cost)

    def prefix_words(self, key: str, per_reading: int | None = None) -> list[PrefixEntry]:
        """Every entry whose reading is a prefix of `key` (a common-prefix search), with the word's own
        cost; with `per_reading`, only that many of the cheapest entries of each reading."""
        found = []
        node: int | None = int(self._base[0])
        for length, char in enumerate(key, start=1):
            node = self._walk(char.encode(), node)
            if node is None:
                break
            tokens = self._tokens_at(node)
            if per_reading is not None and len(tokens) > per_reading:
                tokens = tokens[np.argsort(tokens["cost"], kind="stable")[:per_reading]]
            found += [
                PrefixEntry(length, self._surface(feature), left_id, right_id, cost)
                for left_id, right_id, cost, feature in tokens[["left_id", "right_id", "cost", "feature"]].tolist()
            ]
        return found

    def predict(self, prefix: str, limit: int) -> list[Word]:
        """The cheapest entries whose reading starts with `prefix` (one per surface), among the first
        MAX_PREDICT_NODES trie nodes below it."""
        root = self._walk(prefix.encode()) if prefix else None
        if root is None:
            return []
        found: dict[str, Word] = {}
        queue = deque([(root, prefix.encode())])
        for _ in range(MAX_PREDICT_NODES):
            if not queue or len(found) >= PREDICT_POOL_PER_RESULT * limit:
                break
            node, key = queue.popleft()
            for word in self._words_at(node, key):
                if word.surface not in found or word.cost < found[word.surface].cost:
                    found[word.surface] = word
            queue.extend(self._children(node, key))
        return sorted(found.values(), key=_by_cost)[:limit]

    # A node is identified, as in MeCab's Darts, by its base value b: the child for byte c sits at b + c + 1
    # and the node's own value (its words) at b, each valid when that unit's check equals b.

    def _walk(self, key: bytes, node: int | None = None) -> int | None:
        """The node reached from `node` (default: the root) by the bytes of `key`, if any."""
        node = int(self._base[0]) if node is None else node
        for byte in key:
            unit = node + byte + 1
            if unit >= len(self._check) or int(self._check[unit]) != node:
                return None
            node = int(self._base[unit])
        return node

    def _children(self, node: int, key: bytes) -> list[tuple[int, bytes]]:
        checks = self._check[node + 1 : node + 1 + _BYTE_VALUES]
        return [(int(self._base[node + 1 + byte]), key + bytes((byte,))) for byte in np.flatnonzero(checks == node)]

    def _words_at(self, node: int, key: bytes) -> list[Word]:
        tokens = self._tokens_at(node)
        if not len(tokens):
            return []
        reading = key.decode()  # a key with words is a whole reading, so valid UTF-8
        return [self._word(reading, token) for token in tokens]

    def _tokens_at(self, node: int) -> np.ndarray:
        """The entries whose reading ends at `node` (none where no reading ends)."""
        if node >= len(self._check) or int(self._check[node]) != node or int(self._base[node]) >= 0:
            return self._tokens[:0]
        packed = -int(self._base[node]) - 1  # token index << 8 | token count
        first, count = packed >> 8, packed & 0xFF
        return self._tokens[first : first + count]

    def _word(self, reading: str, token: np.void) -> Word:
        left_id, right_id = int(token["left_id"]), int(token["right_id"])
        cost = self._connection(_BOS_EOS_ID, left_id) + int(token["cost"]) + self._connection(right_id, _BOS_EOS_ID)
        return Word(reading, self._feature(int(token["feature"])), cost, left_id, right_id)

    def _feature(self, offset: int) -> str:
        start = self._features_offset + offset
        return self._map[start : self._map.find(b"\0", start)].decode()


def _by_cost(word: Word) -> int:
    return word.cost
