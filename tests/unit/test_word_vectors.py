"""Word vectors: the words of a text, coherence against hand-made vectors, the file, and the build's parts
against plain references."""

from __future__ import annotations

import logging
from collections import Counter

import numpy as np
import pytest

from daemon.lm import load_word_vectors
from daemon.lm.word_vectors import CONTEXT_WORDS, NEIGHBOURS, WordVectors, split_into_words
from daemon.tools.word_vectors import (
    SparseMatrix,
    additive_parts,
    baselines,
    build,
    cooccurrence,
    positive_pmi,
    principal_vectors,
    read_words,
)

WORDS = {"服役": 0, "期間": 1, "機関": 2, "期": 3}


def test_a_run_is_itself_if_known_else_its_longest_words_from_the_start():
    assert split_into_words("服役", WORDS, 2) == [0]
    assert split_into_words("服役期間", WORDS, 2) == [0, 1]
    assert split_into_words("期末", WORDS, 2) == [3]  # 末 starts no word: skipped
    assert split_into_words("未知", WORDS, 2) == []


def vectors_of(
    table: dict[str, list[float]], baselines: dict[str, float] | None = None, by_neighbours: float = 0.0
) -> WordVectors:
    words = list(table)
    rows = np.array([table[w] for w in words], dtype=np.float64)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    found = np.array([(baselines or {}).get(w, 0.0) for w in words])
    return WordVectors.of(words, rows).with_baselines(found, np.full(2 * NEIGHBOURS + 1, by_neighbours), {})


# 帽子 (a hat) goes with コート and 壁; 防止 (prevention) with 対策; 壁 is a wall.
HATS = vectors_of(
    {
        "帽子": [1.0, 0.1, 0.0],
        "防止": [0.0, 0.1, 1.0],
        "コート": [0.9, 0.3, 0.0],
        "壁": [0.6, 0.8, 0.0],
        "対策": [0.1, 0.0, 1.0],
    }
)


def test_the_words_of_a_text_are_its_kanji_and_katakana_runs():
    assert [HATS.words[i] for i in HATS.ids("壁に帽子とコートがかかっていた")] == ["壁", "帽子", "コート"]
    assert HATS.ids("ぼうしとこーと") == ()  # hiragana is no word
    assert HATS.ids("ト") == ()  # one katakana is no word either


def test_the_context_gives_its_last_words_and_not_a_run_cut_short():
    context = "対策。" + "壁、" * (CONTEXT_WORDS + 1)
    assert [HATS.words[i] for i in HATS.context_ids(context)] == ["壁"] * CONTEXT_WORDS
    long = "防止" * 40  # one run, longer than the tail that is read
    assert HATS.context_ids(long) == ()


def test_the_word_that_suits_its_neighbours_is_more_coherent():
    hat, prevention, kana = HATS.coherence(["壁に帽子とコート", "壁に防止とコート", "かべにぼうしとこーと"], "")
    assert hat > prevention
    assert kana == 0.0
    # The context's last words count as neighbours too.
    alone_hat, alone_prevention = HATS.coherence(["帽子", "防止"], "対策を")
    assert alone_prevention > alone_hat
    assert HATS.coherence(["帽子", "防止"], "") == [0.0, 0.0]  # no other word to compare with


def test_a_word_counts_only_what_it_gets_beyond_its_baseline():
    table = {"帽子": [1.0, 0.0], "コート": [1.0, 0.0]}
    usual = vectors_of(table, {"帽子": 0.6, "コート": 0.6}, by_neighbours=0.4)
    assert usual.coherence(["帽子とコート"], "") == [pytest.approx(0.0, abs=0.02)]
    assert vectors_of(table).coherence(["帽子とコート"], "") == [pytest.approx(2.0, abs=0.02)]


def test_neighbours_are_the_words_within_reach():
    far = "帽子" + "と壁" * NEIGHBOURS + "とコート"
    table = {"帽子": [1.0, 0.0], "コート": [1.0, 0.0], "壁": [0.0, 1.0]}
    assert vectors_of(table).coherence([far], "") == [pytest.approx(0.0, abs=0.02)]  # 帽子 and コート too far apart
    near = "帽子" + "と壁" * (NEIGHBOURS - 1) + "とコート"
    assert vectors_of(table).coherence([near], "") == [pytest.approx(2.0, abs=0.02)]
    # The context's words are neighbours of the candidate's first ones.
    assert vectors_of(table).coherence(["コート"], "帽子を") == [pytest.approx(1.0, abs=0.02)]


def test_quantised_vectors_keep_their_cosines():
    rng = np.random.default_rng(0)
    rows = rng.standard_normal((50, 16))
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    stored = WordVectors.of([f"語{i}" for i in range(50)], rows)
    np.testing.assert_allclose(stored.vectors(range(50)) @ stored.vectors(range(50)).T, rows @ rows.T, atol=0.02)


def test_the_file_round_trips_and_a_broken_one_is_skipped(tmp_path, caplog):
    path = tmp_path / "words.bin"
    HATS.save(path)
    loaded = WordVectors.load(path)
    assert loaded.words == HATS.words and loaded.meta == HATS.meta
    assert loaded.coherence(["壁に帽子とコート"], "対策") == HATS.coherence(["壁に帽子とコート"], "対策")
    path.write_bytes(b"TSZLM002" + bytes(100))
    with pytest.raises(ValueError, match="not Tsuzuri word vectors"):
        WordVectors.load(path)
    with caplog.at_level(logging.WARNING):
        assert load_word_vectors(path) is None
    assert "word vectors" in caplog.text
    assert load_word_vectors(tmp_path / "missing.bin") is None


# --- the build, each part against a plain reference ---

LINES = ["東京の大学で経済を学ぶ", "大学の経済学部に東京から通う", "経済の話", "山で鹿と熊を見た", "熊と鹿の山"] * 3


def test_cooccurrence_counts_the_pairs_within_the_window_of_a_line():
    corpus = read_words(LINES, min_count=1)
    matrix = cooccurrence(corpus, window=2)
    expected: Counter = Counter()
    for line in LINES:
        ids = list(read_words([line], min_count=1).ids)
        words = [read_words([line], min_count=1).words[i] for i in ids]
        for i, first in enumerate(words):
            for second in words[i + 1 : i + 3]:
                expected[(first, second)] += 1
                expected[(second, first)] += 1
    found = {
        (corpus.words[r], corpus.words[c]): v for r, c, v in zip(matrix.rows, matrix.cols, matrix.values, strict=True)
    }
    assert found == dict(expected)


def test_the_sparse_product_is_the_dense_one():
    rng = np.random.default_rng(1)
    dense = np.where(rng.random((30, 30)) < 0.2, rng.random((30, 30)), 0.0)
    rows, cols = np.nonzero(dense)
    matrix = SparseMatrix.of(30, rows, cols, dense[rows, cols])
    other = rng.standard_normal((30, 4))
    np.testing.assert_allclose(matrix.times(other), dense @ other)
    np.testing.assert_allclose(matrix.times(other, transposed=True), dense.T @ other)


def test_the_randomized_svd_finds_the_leading_directions():
    rng = np.random.default_rng(2)
    dense = rng.standard_normal((40, 3)) @ rng.standard_normal((3, 40)) + 0.01 * rng.standard_normal((40, 40))
    rows, cols = np.nonzero(dense)
    found = principal_vectors(SparseMatrix.of(40, rows, cols, dense[rows, cols]), dimensions=3)
    left, singular, _ = np.linalg.svd(dense)
    expected = left[:, :3] * np.sqrt(singular[:3])
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(found @ found.T, expected @ expected.T, atol=1e-6)  # the same up to a rotation


def test_baselines_are_the_best_cosine_with_the_neighbours_in_two_parts():
    corpus = read_words(LINES, min_count=1)
    orthogonal = WordVectors.of(corpus.words, np.eye(len(corpus.words)))
    per_word, per_count = baselines(corpus, orthogonal, reach=2)
    assert per_word == pytest.approx(np.zeros(len(corpus.words)), abs=0.01)  # every cosine 0
    assert per_count == pytest.approx(np.zeros(5), abs=0.01)
    same = WordVectors.of(corpus.words, np.full((len(corpus.words), 2), np.sqrt(0.5)))
    per_word, per_count = baselines(corpus, same, reach=2)
    seen = read_words(LINES, min_count=1).ids
    assert (per_word[seen][:, None] + per_count[1:][None, :]).mean() == pytest.approx(1.0, abs=0.02)


def test_additive_parts_recover_an_additive_table():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal(30), rng.standard_normal(6)
    first = rng.integers(0, 30, 2000)
    second = np.minimum(rng.geometric(0.4, 2000), 5)  # unbalanced, as neighbour counts are; index 0 never seen
    found_a, found_b = additive_parts(a[first] + b[second], first, 30, second, 6)
    np.testing.assert_allclose(found_a[first] + found_b[second], a[first] + b[second], atol=1e-3)
    assert found_b[0] == 0.0


def test_the_build_is_deterministic_and_puts_words_of_one_topic_together():
    first, second = build(LINES, window=3, dimensions=2), build(LINES, window=3, dimensions=2)
    np.testing.assert_array_equal(first.codes, second.codes)
    np.testing.assert_array_equal(first.baselines, second.baselines)
    np.testing.assert_array_equal(first.by_neighbours, second.by_neighbours)
    index = {w: i for i, w in enumerate(first.words)}

    def cosine(a: str, b: str) -> float:
        va, vb = first.vectors([index[a], index[b]])
        return float(va @ vb)

    assert cosine("鹿", "熊") > cosine("鹿", "経済")
    assert cosine("大学", "経済") > cosine("大学", "熊")


def test_positive_pmi_keeps_only_what_co_occurs_more_than_by_chance():
    corpus = read_words(LINES, min_count=1)
    ppmi = positive_pmi(cooccurrence(corpus, window=3))
    assert (ppmi.values > 0).all()
    pairs = {(corpus.words[r], corpus.words[c]) for r, c in zip(ppmi.rows, ppmi.cols, strict=True)}
    assert ("鹿", "熊") in pairs and ("鹿", "経済") not in pairs
