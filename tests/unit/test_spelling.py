"""The official spelling policy's rules, with a stand-in for the dictionary's longer words."""

import pytest

from daemon.kana import spells
from daemon.spelling import Spelling, official_spelling, spelled

# Words a dictionary would have that take a rule's kanji together with a kanji beside it.
LONGER_WORDS = {"一致": "いっち", "食べ物": "たべもの", "出来上がる": "できあがる"}


def in_longer_word(text: str, reading: str, start: int, end: int) -> bool:
    for word, word_reading in LONGER_WORDS.items():
        first = text.find(word)
        if first >= 0 and first < end and first + len(word) > start:
            return spells(text[:first] + word_reading + text[first + len(word) :], reading)
    return False


@pytest.mark.parametrize(
    "text, reading, expected",
    [
        ("話して下さい", "はなしてください", "話してください"),
        ("お越し下さい", "おこしください", "お越しください"),
        ("ご確認頂けますか", "ごかくにんいただけますか", "ご確認いただけますか"),
        ("お願い致します", "おねがいいたします", "お願いいたします"),
        ("読んで見る", "よんでみる", "読んでみる"),
        ("持って来た", "もってきた", "持ってきた"),
        ("持って来ない", "もってこない", "持ってこない"),
        ("持って来る", "もってくる", "持ってくる"),
        ("正しい物と認める", "ただしいものとみとめる", "正しいものと認める"),
        ("言う事を聞く", "いうことをきく", "言うことを聞く"),
        ("大事な事", "だいじなこと", "大事なこと"),
        ("その外", "そのほか", "そのほか"),
        ("問題が無い", "もんだいがない", "問題がない"),
        ("成田に成る", "なりたになる", "成田になる"),
        ("出来事が有る", "できごとがある", "出来事がある"),
        ("交通局等の話", "こうつうきょくなどのはなし", "交通局などの話"),
        ("田中様の様に", "たなかさまのように", "田中様のように"),
        ("私達", "わたしたち", "私たち"),
        ("又、彼は", "また、かれは", "また、彼は"),
    ],
)
def test_the_official_rules_write_auxiliary_words_in_kana(text, reading, expected):
    assert official_spelling(text, reading, "", in_longer_word) == expected


@pytest.mark.parametrize(
    "text, reading, why",
    [
        ("資料を下さい", "しりょうをください", "a verb of its own, not after て"),
        ("お菓子を頂く", "おかしをいただく", "the same"),
        ("テレビで見る", "てれびでみる", "で the particle, not the て form"),
        ("して行う", "しておこなう", "行う: the kana would not spell the reading"),
        ("3時に", "3じに", "時 read じ"),
        ("平等", "びょうどう", "等 read どう"),
        ("友達", "ともだち", "達 read だち"),
        ("事件", "じけん", "a kanji follows"),
        ("一致します", "いっちします", "一致 is a word"),
        ("食べ物", "たべもの", "食べ物 is a word"),
        ("出来上がる", "できあがる", "出来上がる is a word"),
        ("外に出る", "そとにでる", "外 read そと"),
        ("又は", "または", "又は stays in kanji, as the rules say"),
        ("規則に従って", "きそくにしたがって", "a verb, not the conjunction"),
    ],
)
def test_what_the_rules_do_not_cover_stays_as_it_is(text, reading, why):
    assert official_spelling(text, reading, "", in_longer_word) == text, why


def test_a_conjunction_is_one_at_the_start_of_a_sentence_the_context_has_ended():
    assert official_spelling("従って", "したがって", "これで終わる。", in_longer_word) == "したがって"
    assert official_spelling("従って", "したがって", "規則に", in_longer_word) == "従って"


def test_what_comes_before_the_conversion_counts_for_what_a_rule_follows():
    assert official_spelling("下さい", "ください", "話して", in_longer_word) == "ください"
    assert official_spelling("下さい", "ください", "資料を", in_longer_word) == "下さい"


def test_every_occurrence_is_rewritten():
    text = "来て下さい、見て下さい"
    assert official_spelling(text, "きてください、みてください", "", in_longer_word) == "来てください、見てください"


def test_a_text_that_does_not_spell_the_reading_is_left_alone():
    assert official_spelling("話して下さい", "おはよう", "", in_longer_word) == "話して下さい"


def test_the_ranked_policy_changes_nothing():
    assert spelled(Spelling.RANKED, "話して下さい", "はなしてください") == "話して下さい"
    assert spelled(Spelling.OFFICIAL, "話して下さい", "はなしてください") == "話してください"


@pytest.mark.parametrize(
    "text, reading, expected",
    [
        ("話してください", "はなしてください", True),
        ("カタカナ", "かたかな", True),
        ("2008年10月", "2008ねん10がつ", True),
        ("一いたします", "いっちします", False),
        ("今日", "", False),
        ("", "", True),
    ],
)
def test_spells_reads_every_run_of_other_characters_as_some_of_the_reading(text, reading, expected):
    assert spells(text, reading) is expected
