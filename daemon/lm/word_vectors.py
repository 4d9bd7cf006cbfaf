"""Which words go together: a vector for each kanji and katakana word of the training text, and how well the
words of a candidate fit each other and the text just before it.

A character n-gram sees five characters back; 帽子 and 防止 both read ぼうし, and only the words around them
(壁に…とコートが) say which one hangs on a wall. Words here are runs of kanji (with 々, 〆, ヶ) or of two or more
katakana, so neither the build nor the daemon needs a tokenizer; a run the vocabulary lacks is read as the
longest known words from its start (服役期間 → 服役 期間). The vectors are the principal directions of the words'
positive pointwise mutual information within a few words of each other in a line (daemon/tools/word_vectors.py
builds them; README.md here has the measurements).

`coherence`: for each word of a candidate, its best cosine with the words around it (within NEIGHBOURS words,
the context's last words included), less what that word usually gets with as many neighbours in the training
text (its baseline). Without the baseline every kanji word would score above its kana spelling (嬉しい over
うれしい); with one that ignores how many neighbours there are, below it (the best of many is higher than the
best of few). With both, a word counts only where its neighbours suit it better, or worse, than usual.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from daemon.kana import KANJI_CLASS, KATAKANA_CLASS
from daemon.lm.array_file import read_arrays, write_arrays

FILE_MAGIC = b"TSZWV001"
WORD = re.compile(f"[{KANJI_CLASS}ヶ]+|[{KATAKANA_CLASS}]{{2,}}")
# A word's neighbours: the words this close to it, before or after, in the context's last words and the candidate.
NEIGHBOURS = 4
CONTEXT_WORDS = NEIGHBOURS  # as far back as a candidate's first word reaches
# Enough context to hold them: words are rarely longer than 8 characters.
_CONTEXT_CHARS = 12 * CONTEXT_WORDS


def split_into_words(run: str, words: Mapping[str, int], longest: int) -> list[int]:
    """The ids of `run`: itself if it is a word, else the longest words from its start, left to right (a
    character no word starts with is skipped)."""
    whole = words.get(run)
    if whole is not None:
        return [whole]
    found: list[int] = []
    start = 0
    while start < len(run):
        for end in range(min(len(run), start + longest), start, -1):
            word = words.get(run[start:end])
            if word is not None:
                found.append(word)
                start = end
                break
        else:
            start += 1
    return found


class WordVectors:
    """Unit vectors of the vocabulary (int8 codes times a per-word scale) and each word's baseline."""

    def __init__(
        self,
        words: list[str],
        codes: np.ndarray,  # int8, one row a word
        scales: np.ndarray,  # float32: a row's vector is its codes · its scale
        baselines: np.ndarray,  # float32: a word's own part of its best cosine with its neighbours in the text
        by_neighbours: np.ndarray,  # float32: the part of how many neighbours it has (index 1 … 2·NEIGHBOURS)
        meta: dict | None = None,
    ):
        self.words, self.codes, self.scales = words, codes, scales
        self.baselines, self.by_neighbours = baselines, by_neighbours
        self.meta = meta or {}
        self._index = {word: i for i, word in enumerate(words)}
        self._longest = max(map(len, words), default=1)
        # A conversion's candidates share most of their words, and typing on converts the same ones again.
        self.ids: Callable[[str], tuple[int, ...]] = lru_cache(maxsize=4096)(self._ids)

    def _ids(self, text: str) -> tuple[int, ...]:
        """The ids of the words of `text`, in order."""
        return tuple(i for run in WORD.findall(text) for i in split_into_words(run, self._index, self._longest))

    def vectors(self, ids: Sequence[int] | np.ndarray) -> np.ndarray:
        rows = np.asarray(ids, dtype=np.int64)
        return self.codes[rows].astype(np.float32) * self.scales[rows, None]

    def context_ids(self, context: str) -> tuple[int, ...]:
        """The last CONTEXT_WORDS words of `context` (a run cut by taking its end is left out)."""
        tail = context[-_CONTEXT_CHARS:]
        runs = list(WORD.finditer(tail))
        if runs and runs[0].start() == 0 and len(context) > len(tail):
            runs = runs[1:]
        found = [i for run in runs for i in split_into_words(run.group(), self._index, self._longest)]
        return tuple(found[-CONTEXT_WORDS:])

    def coherence(self, texts: Sequence[str], context: str) -> list[float]:
        """For each text: the sum over its words of (best cosine with a neighbour, other than itself) − (the
        word's baseline + the part of its number of neighbours). A word with no neighbour counts 0."""
        before = self.context_ids(context)
        per_text = [self.ids(text) for text in texts]
        known = sorted({i for ids in per_text for i in ids} | set(before))
        if not known:
            return [0.0] * len(texts)
        place = {word: row for row, word in enumerate(known)}
        vectors = self.vectors(known)
        cosines = vectors @ vectors.T
        out = []
        for ids in per_text:
            words = (*before, *ids)
            total = 0.0
            for position in range(len(before), len(words)):
                word = words[position]
                around = (
                    words[max(0, position - NEIGHBOURS) : position] + words[position + 1 : position + 1 + NEIGHBOURS]
                )
                others = [place[o] for o in around if o != word]
                if others:
                    expected = self.baselines[word] + self.by_neighbours[len(others)]
                    total += float(cosines[place[word], others].max() - expected)
            out.append(total)
        return out

    # --- storage (array_file): the vocabulary in the header, then the codes, scales and baselines ---

    def save(self, path: Path) -> None:
        arrays = {
            "codes": self.codes,
            "scales": self.scales,
            "baselines": self.baselines,
            "by_neighbours": self.by_neighbours,
        }
        write_arrays(path, FILE_MAGIC, {"words": self.words, "meta": self.meta}, arrays)

    @classmethod
    def load(cls, path: Path) -> WordVectors:
        header, array = read_arrays(path, FILE_MAGIC, "Tsuzuri word vectors of this version (tsuzuri-lm vectors)")
        return cls(
            header["words"],
            array("codes"),
            array("scales"),
            array("baselines"),
            array("by_neighbours"),
            header.get("meta") or {},
        )

    @classmethod
    def of(cls, words: list[str], vectors: np.ndarray) -> WordVectors:
        """Quantised from float vectors of unit length, one row a word; baselines 0."""
        scales = np.abs(vectors).max(axis=1) / 127
        scales = np.where(scales > 0, scales, 1.0).astype(np.float32)
        codes = np.round(vectors / scales[:, None]).astype(np.int8)
        return cls(words, codes, scales, np.zeros(len(words), np.float32), np.zeros(2 * NEIGHBOURS + 1, np.float32))

    def with_baselines(self, baselines: np.ndarray, by_neighbours: np.ndarray, meta: dict) -> WordVectors:
        return WordVectors(
            self.words,
            self.codes,
            self.scales,
            np.asarray(baselines, dtype=np.float32),
            np.asarray(by_neighbours, dtype=np.float32),
            meta,
        )
