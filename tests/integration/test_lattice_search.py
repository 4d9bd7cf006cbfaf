"""The beam search over the dictionary's lattice, against exhaustive search and against MeCab's Viterbi."""

import numpy as np
import pytest

from daemon.dictionary import Lattice, Morpheme, system_dictionary
from daemon.lm import BuildOptions, Weights, build, context_hits, digits_not_as_typed, weights_for
from daemon.lm.lattice_search import best_paths

CORPUS = ["今日は良い天気です。", "きょうは雨。", "今日も雨です", "京は晴れ", "いい天気ですね"] * 3
WEIGHTS = Weights(cost=-0.9, lm=0.3, chars=0.1, morphemes=-0.6, context=1.0, digits_not_as_typed=-2.0)


@pytest.fixture(scope="module")
def lm():
    return build(CORPUS, BuildOptions(order=3, min_char_count=1, cutoffs=(1,)))


def _word(reading, surface, left, right, cost):
    return Morpheme(reading, surface, left, right, cost)


def _small_lattice() -> Lattice:
    """きょうは with competing spellings and word classes (and は as a number, 8), and a made-up connection
    matrix."""
    rng = np.random.default_rng(7)
    connection = rng.integers(-200, 3000, size=(4, 4)).astype(np.int16)
    words = (
        (
            _word("きょう", "今日", 1, 1, 3000),
            _word("きょう", "京", 2, 2, 4000),
            _word("き", "木", 1, 1, 5000),
            _word("き", "き", 3, 3, 8000),
        ),
        (_word("ょ", "ょ", 3, 3, 8000),),
        (_word("う", "う", 3, 3, 8000), _word("うは", "卯は", 2, 1, 9000)),
        (_word("は", "は", 3, 3, 500), _word("は", "葉", 1, 1, 4500), _word("は", "8", 2, 2, 1000)),
    )
    return Lattice("きょうは", words, connection)


def _all_paths(lattice: Lattice, lm, weights: Weights, context: str):
    """Every path by brute force: (score, text, cost, words)."""

    def walk(start):
        if start == len(lattice.reading):
            yield []
            return
        for word in lattice.words_from[start]:
            for rest in walk(start + len(word.reading)):
                yield [word] + rest

    found = []
    for path in walk(0):
        rights = [0] + [w.right_id for w in path]  # the sentence start, then each word
        lefts = [w.left_id for w in path] + [0]
        cost = sum(int(lattice.connection[r, left]) for r, left in zip(rights, lefts)) + sum(w.cost for w in path)
        text = "".join(w.surface for w in path)
        score = (
            weights.cost * cost / 1000
            + weights.lm * lm.score([text], context)[0]
            + weights.chars * len(text)
            + weights.morphemes * len(path)
            + weights.context * sum(context_hits(w.surface, context) for w in path)
            + weights.digits_not_as_typed * digits_not_as_typed(text, lattice.reading)
        )
        found.append((score, text, cost, len(path)))
    return found


@pytest.mark.parametrize("context", ["", "雨", "今日は", "京の葉"])
def test_a_wide_beam_lists_what_exhaustive_search_lists(lm, context):
    """Each distinct text once, at the score of its best path, best first."""
    lattice = _small_lattice()
    expected = {}
    for _score, text, cost, words in sorted(_all_paths(lattice, lm, WEIGHTS, context), key=lambda p: -p[0]):
        expected.setdefault(text, (cost, words))
    found = best_paths(lattice, lm, WEIGHTS, context, n=100, beam=1000, margin=float("inf"))
    assert [(p.text, p.cost, p.morphemes) for p in found] == [(text, *v) for text, v in expected.items()]


def test_a_narrow_beam_keeps_the_best_path(lm):
    lattice = _small_lattice()
    wide = best_paths(lattice, lm, WEIGHTS, "", n=1, beam=1000)
    assert best_paths(lattice, lm, WEIGHTS, "", n=1, beam=2) == wide


@pytest.mark.parametrize(
    "reading",
    [
        "きょうはいいてんきですね",
        "ここではきものをぬぐ",
        "しぜんげんごしょりのけんきゅう",
        "わたしはがくせいです。",
        "すもももももももものうち",
        "たいしょう15ねん",
        "2024ねん12がつ3にち",
        "ちゅう１０２３",
    ],
)
def test_dictionary_cost_alone_is_mecabs_viterbi(reading):
    """With every word and only the dictionary cost, the search's best path is MeCab's best path."""
    dictionary = system_dictionary()
    lm = build(["x"], BuildOptions(order=2, min_char_count=1, cutoffs=(1,)))
    best = best_paths(
        dictionary.lattice(reading, None), lm, Weights(cost=-1.0), n=1, beam=100_000, margin=float("inf")
    )[0]
    mecab = dictionary.convert(reading, 1)[0]
    assert (best.text, best.cost) == (mecab.text, mecab.cost)


def test_paths_spell_the_reading_as_typed():
    from daemon.lm import load_language_model

    dictionary = system_dictionary()
    reading = "きょう、あめ（はれ）!?"
    lm = load_language_model()
    paths = best_paths(dictionary.lattice(reading, 5), lm, weights_for(reading, "", False), n=5)
    assert len({p.text for p in paths}) == len(paths) == 5
    assert paths[0].text in ("今日、雨（晴れ）!?", "今日、雨（はれ）!?")
    assert all("、" in p.text and "（" in p.text and p.text.endswith("）!?") for p in paths)


def test_empty_reading_has_no_paths(lm):
    assert best_paths(Lattice("", (), np.zeros((1, 1), dtype=np.int16)), lm, WEIGHTS) == []


def test_lattice_holds_the_cheapest_words_of_each_reading():
    dictionary = system_dictionary()
    lattice = dictionary.lattice("かんじ", 3)
    whole = [w for w in lattice.words_from[0] if w.reading == "かんじ"]
    assert len(whole) == 3
    cheapest = sorted(
        (w for w in dictionary.lattice("かんじ", None).words_from[0] if w.reading == "かんじ"), key=lambda w: w.cost
    )[:3]
    assert sorted(w.cost for w in whole) == [w.cost for w in cheapest]
    assert all(w.unknown for w in (lattice.words_from[i][-1] for i in range(3)))
