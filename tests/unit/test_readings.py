"""Readings of written text (reconversion's reverse dictionary) and which text a reconversion takes."""

import numpy as np
import pytest

from daemon.dictionary import ContextWord, system_reader
from daemon.dictionary.readings import WrittenWord, best_reading
from daemon.reconversion import MAX_RECONVERTED_CHARS, ReconversionTarget, reconversion, reconversion_target
from ime_protocol import SurroundingText
from tests.fake_conversion import FakeReader


@pytest.mark.parametrize(
    "text, reading",
    [
        ("今日は良い天気", "きょうはよいてんき"),  # 今日は: noun and particle, not the greeting こんにちは
        ("今日はいい天気ですね", "きょうはいいてんきですね"),
        ("東京都に行きました", "とうきょうとにいきました"),
        ("私の名前は中野です", "わたしのなまえはなかのです"),
        ("生麦生米生卵", "なまむぎなまごめなまたまご"),
        ("ひらがな", "ひらがな"),  # kana in, kana out
        ("テレビを見る", "てれびをみる"),  # katakana reads in hiragana
        ("Tsuzuriで変換", "Tsuzuriでへんかん"),  # what has no reading stays as written
        ("「日本語」、入力。", "「にほんご」、にゅうりょく。"),
        ("", ""),
    ],
)
@pytest.mark.dictionary
def test_reading_of_written_text(text, reading):
    assert system_reader().reading_of(text) == reading


@pytest.mark.parametrize(
    "text, reading, start, end, expected",
    [
        ("一致します", "いっちします", 1, 2, True),  # 一致
        ("食べ物", "たべもの", 2, 3, True),  # 食べ物
        ("正しい物", "ただしいもの", 3, 4, False),
        ("交通局等の話", "こうつうきょくなどのはなし", 3, 4, False),  # 等の話 is an entry, read とうのはなし
        ("お願い致します", "おねがいいたします", 3, 4, False),
    ],
)
@pytest.mark.dictionary
def test_a_longer_word_takes_the_text_with_a_kanji_beside_it_as_the_reading_allows(text, reading, start, end, expected):
    assert system_reader().in_longer_word(text, reading, start, end) is expected


@pytest.mark.dictionary
def test_the_documents_words_are_read_piece_by_piece_through_the_dictionary_and_the_kanji_readings():
    reader = system_reader()
    found = reader.context_words("ていようえんにより", "テンポイントは蹄葉炎を発症した。")
    assert ContextWord(0, 6, "蹄葉炎") in found
    # 丹霞: 霞 reads か only in the kanji readings (Mozc's entries read it かすみ).
    assert ContextWord(0, 3, "丹霞") in reader.context_words("たんかの", "赤水の丹霞は")
    assert reader.context_words("じまで", "時間まで") == []  # 時間 is an entry: read じかん, never じま


def test_the_cheapest_path_wins_not_the_longest_word():
    # Two ways through 今日は: one word (こんにちは) or two (きょう + は); connection costs decide.
    connection = np.zeros((3, 3), dtype=np.int16)
    connection[1, 2] = -50  # a noun (right id 1) joins a particle (left id 2) cheaply
    words_from = [
        [WrittenWord(3, "こんにちは", 0, 0, 100), WrittenWord(2, "きょう", 1, 1, 40)],
        [WrittenWord(1, "にち", 0, 0, 500)],
        [WrittenWord(1, "は", 2, 2, 30)],
    ]
    assert best_reading("今日は", words_from, connection) == "きょうは"  # 40 - 50 + 30 < 100
    connection[1, 2] = 100
    assert best_reading("今日は", words_from, connection) == "こんにちは"


@pytest.mark.parametrize(
    "text, cursor, anchor, target",
    [
        # selected, cursor at its start
        ("昨日、今日は良い天気。", 3, 10, ReconversionTarget("今日は良い天気", 0, 7, True)),
        ("昨日、今日は良い天気。", 10, 3, ReconversionTarget("今日は良い天気", 7, 0, True)),  # cursor at its end
        ("メモ: 今日は良い天気", 11, 11, ReconversionTarget("今日は良い天気", 7, 0)),  # the run before the cursor
        ("今日は、良い天気です", 6, 6, ReconversionTarget("良い", 2, 0)),  # a run ends at punctuation
        ("abc 天気x", 6, 6, ReconversionTarget("天気", 2, 0)),
        ("天気 abc", 6, 6, None),  # nothing Japanese just before the cursor
        ("", 0, 0, None),
        ("今日\n明日", 5, 0, None),  # a line break cannot be in a reading
        ("  ", 0, 2, None),
        ("あ" * (MAX_RECONVERTED_CHARS + 1), 0, MAX_RECONVERTED_CHARS + 1, None),
    ],
)
def test_reconversion_target(text, cursor, anchor, target):
    assert reconversion_target(text, cursor, anchor) == target


def test_a_long_run_before_the_cursor_is_cut_to_the_limit():
    text = "あ" * (MAX_RECONVERTED_CHARS + 10)
    assert reconversion_target(text, len(text), len(text)).before == MAX_RECONVERTED_CHARS


def test_a_reconversion_has_the_targets_reading_and_the_field_without_it():
    reader = FakeReader({"今日は良い天気": "きょうはよいてんき"})
    found = reconversion(SurroundingText("メモ: 今日は良い天気。", 11, 11), reader, secret=False)
    assert found.target == ReconversionTarget("今日は良い天気", 7, 0) and found.reading == "きょうはよいてんき"
    assert found.field == SurroundingText("メモ: 。", 4, 4)


def test_no_reconversion_in_secret_fields_before_the_index_or_past_the_readings_limit():
    field = SurroundingText("天気", 2, 2)
    assert reconversion(field, FakeReader({"天気": "てんき"}), secret=True) is None
    assert reconversion(field, FakeReader({"天気": "てんき"}, loaded=False), secret=False) is None
    assert reconversion(None, FakeReader({}), secret=False) is None
    assert reconversion(field, FakeReader({"天気": "ﷺ" * 100}), secret=False) is None  # 1,800 characters after NFKC
