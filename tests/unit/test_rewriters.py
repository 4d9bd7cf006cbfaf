from datetime import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from daemon.rewriters import (
    Rewrite,
    date_rewrites,
    emoji_rewrites,
    number_rewrites,
    parse_number_reading,
    rewrite_candidates,
    symbol_rewrites,
    width_rewrites,
)
from daemon.rewriters.emoji_index import TIER_FULL_NAME, TIER_NAME_PART, TIER_WORD, name_keys
from daemon.rewriters.numbers import to_daiji, to_kanji_numeral
from daemon.forms import to_fullwidth_katakana, to_halfwidth_katakana

NOW = datetime(2026, 11, 29, 19, 48)  # a Sunday


def texts(rewrites: list[Rewrite]) -> list[str]:
    return [rewrite.text for rewrite in rewrites]


def annotated(rewrites: list[Rewrite]) -> dict[str, str]:
    return {rewrite.text: rewrite.annotation for rewrite in rewrites}


# --- numbers -----------------------------------------------------------------------------


def test_digits_give_every_number_form():
    assert annotated(number_rewrites("123")) == {
        "123": "[半]",
        "１２３": "[全]",
        "百二十三": "漢数字",
        "一二三": "漢数字",
        "壱百弐拾参": "大字",
        "0x7B": "16進数",
    }


def test_large_numbers_get_separators_and_big_units():
    forms = annotated(number_rewrites("1234567"))
    assert forms["1,234,567"] == "桁区切り"
    assert forms["百二十三万四千五百六十七"] == "漢数字"
    assert forms["壱百弐拾参萬四阡伍百六拾七"] == "大字"


def test_small_numbers_get_roman_and_circled_forms():
    forms = annotated(number_rewrites("12"))
    assert forms["Ⅻ"] == "ローマ数字"
    assert forms["ⅻ"] == "ローマ数字(小)"
    assert forms["⑫"] == "丸数字"
    thirteen = annotated(number_rewrites("13"))
    assert thirteen["⑬"] == "丸数字"
    assert "ローマ数字" not in thirteen.values()
    assert "丸数字" not in annotated(number_rewrites("21")).values()


def test_full_width_digits_are_read_as_numbers():
    assert texts(number_rewrites("１２３")) == texts(number_rewrites("123"))


def test_leading_zeros_keep_only_digit_forms():
    assert texts(number_rewrites("007")) == ["007", "００７", "〇〇七"]


def test_zero():
    assert texts(number_rewrites("0")) == ["0", "０", "〇", "零"]


@pytest.mark.parametrize(
    ("value", "kanji", "daiji"),
    [
        (10, "十", "壱拾"),
        (1000, "千", "壱阡"),
        (10_000, "一万", "壱萬"),
        (2026, "二千二十六", "弐阡弐拾六"),
        (100_010_001, "一億一万一", "壱億壱萬壱"),
        (10**16, "一京", "壱京"),
    ],
)
def test_kanji_numerals(value, kanji, daiji):
    assert to_kanji_numeral(value) == kanji
    assert to_daiji(value) == daiji


def test_numbers_beyond_kanji_units_keep_digit_forms_only():
    forms = annotated(number_rewrites("1" + "0" * 20))
    assert "大字" not in forms.values()
    assert list(forms.values()).count("漢数字") == 1  # digit by digit


@pytest.mark.parametrize(
    ("reading", "value"),
    [
        ("ひゃくにじゅうさん", 123),
        ("いっせん", 1000),
        ("さんびゃく", 300),
        ("ろっぴゃくはち", 608),
        ("はっせんきゅうひゃくきゅうじゅうきゅう", 8999),
        ("じゅうまんさんぜん", 103_000),
        ("いちおくにせんまん", 120_000_000),
        ("いっちょう", 10**12),
        ("ぜろ", 0),
        ("なな", 7),
    ],
)
def test_number_readings(reading, value):
    assert parse_number_reading(reading) == value


@pytest.mark.parametrize(
    "reading",
    ["ねこ", "にさん", "ひゃくせん", "まんおく", "まん", "いっ", "ぜろじゅう", "ごひゃくえん", ""],
)
def test_non_number_readings(reading):
    assert parse_number_reading(reading) is None
    assert number_rewrites(reading) == []


def test_number_reading_gives_the_number_forms():
    assert texts(number_rewrites("ひゃくにじゅうさん"))[:3] == ["123", "１２３", "百二十三"]


@given(st.integers(min_value=1, max_value=10**20 - 1))
def test_kanji_numerals_read_back(value):
    """Spelling the kanji numeral in kana and parsing it gives the value back."""
    kana = {
        "一": "いち",
        "二": "に",
        "三": "さん",
        "四": "よん",
        "五": "ご",
        "六": "ろく",
        "七": "なな",
        "八": "はち",
        "九": "きゅう",
        "十": "じゅう",
        "百": "ひゃく",
        "千": "せん",
        "万": "まん",
        "億": "おく",
        "兆": "ちょう",
        "京": "けい",
    }
    reading = "".join(kana[c] for c in to_kanji_numeral(value))
    assert parse_number_reading(reading) == value


# --- dates and times ---------------------------------------------------------------------


def test_today_in_every_format():
    assert annotated(date_rewrites("きょう", NOW)) == {
        "2026/11/29": "日付 スラッシュ",
        "2026-11-29": "日付 ISO 8601",
        "2026年11月29日": "日付 西暦",
        "令和8年11月29日": "日付 和暦",
        "11月29日(日)": "日付 月日(曜)",
        "日曜日": "曜日",
    }


@pytest.mark.parametrize(
    ("reading", "expected"),
    [
        ("あした", "2026/11/30"),
        ("あす", "2026/11/30"),
        ("あさって", "2026/12/01"),
        ("きのう", "2026/11/28"),
        ("おととい", "2026/11/27"),
    ],
)
def test_relative_days(reading, expected):
    assert texts(date_rewrites(reading, NOW))[0] == expected


def test_relative_days_cross_years():
    assert "2027年1月1日" in texts(date_rewrites("あした", datetime(2026, 12, 31, 9, 0)))


def test_era_boundaries():
    assert "令和元年5月1日" in texts(date_rewrites("きょう", datetime(2019, 5, 1)))
    assert "平成31年4月30日" in texts(date_rewrites("きょう", datetime(2019, 4, 30)))
    assert "日付 和暦" not in annotated(date_rewrites("きょう", datetime(1900, 1, 1))).values()


@pytest.mark.parametrize("reading", ["いま", "じこく"])
def test_time(reading):
    assert texts(date_rewrites(reading, NOW)) == ["19:48", "19時48分", "午後7時48分"]


def test_time_around_midnight_and_noon():
    assert texts(date_rewrites("いま", datetime(2026, 1, 1, 0, 5)))[-1] == "午前0時5分"
    assert texts(date_rewrites("いま", datetime(2026, 1, 1, 12, 0)))[-1] == "午後0時0分"
    assert texts(date_rewrites("いま", datetime(2026, 1, 1, 9, 5)))[0] == "9:05"


def test_years():
    assert texts(date_rewrites("ことし", NOW)) == ["2026年", "令和8年"]
    assert texts(date_rewrites("らいねん", NOW)) == ["2027年", "令和9年"]
    assert texts(date_rewrites("きょねん", NOW)) == ["2025年", "令和7年"]
    # 2019 belongs to two eras.
    assert texts(date_rewrites("ことし", datetime(2019, 8, 1))) == ["2019年", "平成31年", "令和元年"]


def test_other_readings_have_no_dates():
    assert date_rewrites("ねこ", NOW) == []


# --- width and kana ----------------------------------------------------------------------


def test_kana_variants():
    assert annotated(width_rewrites("がっこう")) == {
        "がっこう": "ひらがな",
        "ガッコウ": "カタカナ",
        "ｶﾞｯｺｳ": "[半]カタカナ",
    }


def test_half_width_katakana_input_gives_the_same_variants():
    assert texts(width_rewrites("ﾊﾟｿｺﾝ")) == ["ぱそこん", "パソコン", "ﾊﾟｿｺﾝ"]


def test_ascii_width_variants():
    assert annotated(width_rewrites("abc 1")) == {"ａｂｃ\u3000１": "[全]", "abc 1": "[半]"}
    assert texts(width_rewrites("ＡＢＣ")) == ["ＡＢＣ", "ABC"]


def test_text_without_kana_or_ascii_has_no_width_variants():
    assert width_rewrites("漢字") == []


def test_half_width_katakana_details():
    assert to_halfwidth_katakana("ヴァイオリン、「ポー」。") == "ｳﾞｧｲｵﾘﾝ､｢ﾎﾟｰ｣｡"
    assert to_halfwidth_katakana("ゐヶ") == "ヰヶ"  # no half-width forms exist


@given(st.text(alphabet=st.characters(min_codepoint=0x30A1, max_codepoint=0x30F4)))
def test_half_width_katakana_round_trips(text):
    assert to_fullwidth_katakana(to_halfwidth_katakana(text)) == text


# --- symbols -----------------------------------------------------------------------------


def test_symbols():
    assert texts(symbol_rewrites("やじるし"))[:5] == ["→", "←", "↑", "↓", "⇒"]
    assert texts(symbol_rewrites("まる")) == ["○", "●", "◎", "◯"]
    assert texts(symbol_rewrites("ほし")) == ["☆", "★"]
    assert "「」" in texts(symbol_rewrites("かっこ"))
    assert all(r.annotation == "記号" and r.source == "symbol" for r in symbol_rewrites("しかく"))
    assert symbol_rewrites("ねこ") == []


# --- emoji -------------------------------------------------------------------------------


def test_name_keys_tiers():
    # ":ネコの顔:" as pykakasi segments it
    assert name_keys([[("ネコ", "ねこ"), ("の", "の"), ("顔", "かお")]]) == {
        "ねこのかお": TIER_FULL_NAME,
        "ねこ": TIER_WORD,
        "かお": TIER_WORD,
    }
    # ":旗_日本:"
    assert name_keys([[("旗", "はた")], [("日本", "にっぽん")]]) == {
        "はたにっぽん": TIER_FULL_NAME,
        "はた": TIER_NAME_PART,
        "にっぽん": TIER_NAME_PART,
    }


def test_name_keys_drop_non_kana_and_particles():
    keys = name_keys([[("ok", "ok"), ("の", "の"), ("手", "て")]])
    assert keys == {}  # "okのて" is not a reading, の is a particle, て is too short


@pytest.mark.parametrize(
    ("reading", "expected"),
    [
        ("ねこ", {"🐈", "🐱"}),
        ("いぬ", {"🐕", "🐶"}),
        ("さくら", {"🌸"}),
        ("はーと", {"❤️"}),
        ("わらい", {"🤣"}),
        ("すし", {"🍣"}),
        ("ほし", {"⭐"}),
        ("にほん", {"🇯🇵"}),
    ],
)
def test_emoji_from_japanese_readings(reading, expected):
    found = texts(emoji_rewrites(reading))
    assert expected <= set(found)
    assert all(r.annotation == "絵文字" for r in emoji_rewrites(reading))


def test_emoji_best_match_first_and_limited():
    assert texts(emoji_rewrites("ねこ"))[0] == "🐈"  # ":ネコ:" itself before ":ネコの顔:"
    assert len(emoji_rewrites("かお", limit=5)) == 5


def test_emoji_supplement_uses_real_fully_qualified_emoji():
    import emoji

    from daemon.rewriters.emoji_index import _READINGS_MISSING_FROM_NAMES

    for chars in _READINGS_MISSING_FROM_NAMES.values():
        for char in chars:
            assert emoji.EMOJI_DATA[char]["status"] == emoji.STATUS["fully_qualified"], char


def test_emoji_skips_skin_tone_and_unqualified_variants():
    found = texts(emoji_rewrites("さむずあっぷ"))
    assert found == ["👍"]


def test_the_emoji_index_is_built_in_a_child_and_pykakasi_stays_out_of_the_daemon():
    from tests.conftest import run_isolated

    ran = run_isolated("""
        import sys
        from daemon.rewriters import emoji_index
        assert emoji_index()["ねこ"][0] == "🐈"
        assert "pykakasi" not in sys.modules and "emoji" not in sys.modules
    """)
    assert ran.returncode == 0, ran.stderr


# --- all together ------------------------------------------------------------------------


def test_rewrite_candidates_combines_and_deduplicates():
    found = rewrite_candidates("123", now=NOW)
    assert texts(found).count("１２３") == 1
    assert found[0] == Rewrite("123", "[半]", "number")


def test_rewrite_candidates_take_width_variants_from_the_text():
    found = texts(rewrite_candidates("ぐーぐる", "Google", now=NOW))
    assert "Ｇｏｏｇｌｅ" in found
    assert "グーグル" not in found


def test_rewrite_candidates_for_today():
    found = rewrite_candidates("きょう", now=NOW)
    assert found[0].text == "2026/11/29"
    assert "キョウ" in texts(found)


def test_the_width_candidates_are_what_the_f9_and_f10_keys_write():
    """One module writes both: F9 of a"b-c~\\ and its [全] candidate used to differ (ａ”ｂ−ｃ〜￥ / ａ＂ｂ－ｃ～＼)."""
    from daemon.composer import Composer, Transliteration

    typed = 'a"b-c~\\'
    full, half = (r.text for r in width_rewrites(typed))
    composer = Composer().insert(typed)
    assert full == composer.transliterate(Transliteration.FULLWIDTH_ASCII) == "ａ”ｂ−ｃ〜￥"
    assert half == composer.transliterate(Transliteration.HALFWIDTH_ASCII) == typed
