"""The classes tsuzuri-eval --errors puts a wrong first candidate in (daemon/tools/errors.py)."""

import pytest

from daemon.dictionary.readings import WrittenWord
from daemon.tools.errors import ErrorClass, classify_error, error_counts, error_of

# Word class ids from daemon/dictionary/word_class.py's runs.
NOUN, VERB, PARTICLE, PRONOUN, SYMBOL = 1851, 857, 279, 1852, 10
ENTRIES = {
    "冬景色": {("ふゆげしき", NOUN)},
    "中傷": {("ちゅうしょう", NOUN)},
    "抽象": {("ちゅうしょう", NOUN)},
    "着物": {("きもの", NOUN)},
    "履き物": {("はきもの", NOUN)},
    "環境": {("かんきょう", NOUN)},
    "下さい": {("ください", VERB)},
    "ください": {("ください", VERB)},
    "私達": {("わたしたち", PRONOUN)},
    "私たち": {("わたしたち", PRONOUN)},
    "取扱い": {("とりあつかい", NOUN)},
    "取り扱い": {("とりあつかい", NOUN)},
    "史家": {("しか", NOUN)},
    "しか": {("しか", PARTICLE)},
    "美術": {("びじゅつ", NOUN)},
}


class Lexicon:
    """The entries above; the words of a text by longest match, any other character a word of its own."""

    @staticmethod
    def entries(text: str) -> frozenset[tuple[str, int]]:
        return frozenset(ENTRIES.get(text, ()))

    @staticmethod
    def words_of(text: str) -> list[tuple[int, WrittenWord]]:
        words, start = [], 0
        while start < len(text):
            length = next(k for k in range(len(text) - start, 0, -1) if text[start : start + k] in ENTRIES or k == 1)
            reading, class_id = min(ENTRIES.get(text[start : start + length], {(text[start], SYMBOL)}))
            words.append((start, WrittenWord(length, reading, class_id, class_id, 0)))
            start += length
        return words


lexicon = Lexicon()


@pytest.mark.parametrize(
    "top, reference",
    [
        ("お越し下さい", "お越しください"),  # kanji against kana
        ("私達", "私たち"),  # kana for part of a word
        ("取扱い", "取り扱い"),  # okurigana on one side only
        ("ぱんを", "パンを"),  # hiragana against katakana
    ],
)
def test_a_spelling_of_the_same_words_is_a_variant_wherever_the_reference_stands(top, reference):
    assert classify_error(top, reference, reference_in_pool=True, lexicon=lexicon) is ErrorClass.VARIANT
    assert classify_error(top, reference, reference_in_pool=False, lexicon=lexicon) is ErrorClass.VARIANT


@pytest.mark.parametrize("top, reference", [("冬毛式", "冬景色"), ("抽象された", "中傷された")])
def test_kanji_against_kanji_is_a_wrong_kanji(top, reference):
    assert classify_error(top, reference, reference_in_pool=True, lexicon=lexicon) is ErrorClass.WRONG_KANJI


@pytest.mark.parametrize(
    "top, reference",
    [
        ("ここで履き物を", "ここでは着物を"),  # kana moved against kanji
        ("美術しかエ", "美術史家エ"),  # a particle for a noun of the same reading: not the same word
    ],
)
def test_another_split_of_the_reading_is_a_segmentation_error(top, reference):
    assert classify_error(top, reference, reference_in_pool=True, lexicon=lexicon) is ErrorClass.SEGMENTATION


def test_outside_the_pool_the_dictionary_decides_between_unknown_word_and_not_in_pool():
    # 冬景色 is an entry: the search missed it. 環境先進県 (widened from 県) is none.
    assert classify_error("冬毛式", "冬景色", reference_in_pool=False, lexicon=lexicon) is ErrorClass.NOT_IN_POOL
    assert (
        classify_error("環境先進権", "環境先進県", reference_in_pool=False, lexicon=lexicon) is ErrorClass.UNKNOWN_WORD
    )


def test_error_of_judges_against_the_closest_accepted_output_and_knows_the_pool():
    assert error_of(["東京", "東経"], ["東京"], lexicon) is None
    assert error_of(["抽象", "中傷"], ["中傷"], lexicon) is ErrorClass.WRONG_KANJI
    assert error_of(["抽象"], ["中傷"], lexicon) is ErrorClass.NOT_IN_POOL
    assert error_of(["私達は"], ["ぼくは", "私たちは"], lexicon) is ErrorClass.VARIANT
    assert error_of([], ["中傷"], lexicon) is ErrorClass.NOT_IN_POOL


def test_error_counts_lists_every_class():
    counts = error_counts([None, ErrorClass.VARIANT, ErrorClass.VARIANT, ErrorClass.SEGMENTATION])
    assert counts == {"variant": 2, "wrong_kanji": 0, "segmentation": 1, "unknown_word": 0, "not_in_pool": 0}
