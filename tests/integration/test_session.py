"""The session state machine, driven key by key with the real dictionary converter."""

from dataclasses import replace

import pytest

from daemon.conversion import MAX_CONTEXT_CHARS
from daemon.converter import Converter
from daemon.dictionary import system_dictionary, system_reader
from daemon.composer import Composer, Slash
from daemon.config import InputSettings, TablePath
from daemon.session_runner import apply_message
from daemon.phases import Composing, Converting, Empty
from daemon.session import InputSession
from daemon.session_settings import SessionSettings, romaji_table_of
from daemon.userdata.learning import LearningHistory
from daemon.userdata.user_dictionary import UserDictionary
from tests.session_keys import press, type_text
from ime_protocol import (
    SHIFT_MASK,
    CandidateItem,
    Discard,
    FocusOut,
    InputPurpose,
    Reset,
    SegmentStyle,
    SurroundingDeletion,
    SurroundingText,
)


@pytest.fixture
def learning(tmp_path):
    return LearningHistory(tmp_path / "learning.tsv")


@pytest.fixture
def session(tmp_path, learning):
    converter = Converter(
        dictionary=system_dictionary(), user_dictionary=UserDictionary(tmp_path / "u.tsv"), learning=learning
    )
    system_reader().load()  # as the daemon's warm-up does: reconversion needs the reading index
    return InputSession(converter)


def test_space_converts_and_enter_commits(session, learning):
    type_text(session, "kyouhaiitenkidesune")
    out = press(session, "space")
    assert out.preedit.text == "今日はいい天気ですね" and out.candidates is None
    out = press(session, "Return")
    assert out.commit == "今日はいい天気ですね" and out.preedit.text == "" and isinstance(session.phase, Empty)
    assert learning.ranked("きょうはいいてんきですね") == ["今日はいい天気ですね"]


def test_second_space_opens_the_window_on_the_next_candidate(session):
    type_text(session, "kanji")
    press(session, "space")
    out = press(session, "space")
    assert out.candidates is not None and out.candidates.cursor == 1
    assert out.preedit.text == out.candidates.items[1].text
    assert out.candidates.labels == "123456789"


def test_digit_chooses_from_the_window_and_commits(session):
    type_text(session, "kanji")
    press(session, "space", "space")
    items = session.phase.focused.candidates
    out = press(session, "3")
    assert out.commit == items[2].text


def test_escape_steps_back(session):
    type_text(session, "kanji")
    press(session, "space")
    out = press(session, "Escape")
    assert out.preedit.text == "かんじ" and isinstance(session.phase, Composing)
    out = press(session, "Escape")
    assert out.preedit.text == "" and isinstance(session.phase, Empty)


def test_segments_focus_and_resize(session):
    type_text(session, "kokodehakimonowonugu")
    press(session, "space")
    out = press(session, "Right")
    assert len(out.preedit.segments) >= 3
    assert [s.style for s in out.preedit.segments][:2] == [SegmentStyle.UNDERLINE, SegmentStyle.HIGHLIGHT]
    press(session, "Left")
    before = [s.reading for s in session.phase.segments]
    assert before[0] == "ここでは"
    out = press(session, "Left", modifiers=SHIFT_MASK)  # shrink ここでは → ここで
    assert [s.reading for s in session.phase.segments][0] == "ここで"
    assert "".join(s.reading for s in session.phase.segments) == "ここではきものをぬぐ"
    assert out.preedit.text.startswith("ここで")


def test_typing_while_converting_commits_first(session):
    type_text(session, "kanji")
    shown = press(session, "space").preedit.text
    out = press(session, "a")
    assert out.commit == shown != "かんじ" and out.preedit.text == "あ"


def test_tab_predicts(session):
    type_text(session, "konnnichi")
    out = press(session, "Tab")
    assert out.candidates is not None and "こんにちは" in [i.text for i in out.candidates.items]
    out = press(session, "1")
    assert out.commit and isinstance(session.phase, Empty)


def test_password_fields_get_no_live_conversion(tmp_path):
    converter = Converter(dictionary=system_dictionary())
    session = InputSession(converter, SessionSettings(live_conversion=True))
    session.purpose = InputPurpose.PASSWORD
    type_text(session, "kyouha")
    assert session.live_conversion() is None
    session.purpose = InputPurpose.FREE_FORM
    assert session.live_conversion() is None  # typed in secret
    session.discard()
    type_text(session, "kyouha")
    assert session.live_conversion() == "今日は"


def test_left_context_comes_from_commits_or_surrounding_text(session):
    type_text(session, "kanji")
    press(session, "Return")
    assert session.context == "かんじ"
    session.surrounding = SurroundingText("前の文です。後ろ", 6, 6)
    assert session.context == "前の文です。"
    before = "一" * 300 + "二" * 200
    session.surrounding = SurroundingText(before, len(before), len(before))
    assert session.context == before[-MAX_CONTEXT_CHARS:]  # by default all that a conversion takes
    session.settings = replace(session.settings, context_chars=0)
    assert session.context == ""


def test_click_selects_a_candidate(session):
    type_text(session, "kanji")
    press(session, "space", "space")
    text = session.phase.focused.candidates[4].text
    assert session.select_candidate(4).commit == text


def test_focus_out_and_reset_commit_what_is_shown_and_discard_drops_it(session):
    for message in (FocusOut(), Reset()):
        type_text(session, "kanji")
        assert apply_message(session, message).commit == "かんじ"
        assert isinstance(session.phase, Empty)
    type_text(session, "kanji")
    out = apply_message(session, Discard())
    assert out.commit == "" and out.preedit.text == "" and isinstance(session.phase, Empty)


def test_live_conversion_answers_the_key_with_the_top_candidate(tmp_path):
    converter = Converter(dictionary=system_dictionary())
    session = InputSession(converter, SessionSettings(live_conversion=True))
    assert type_text(session, "kyouhaiitenki").preedit.text == "今日はいい天気"
    assert press(session, "Return").commit == "今日はいい天気"


def session_typing(session, input_settings: InputSettings) -> InputSession:
    """A session on the same converter whose [input] settings are `input_settings`."""
    return InputSession(session.converter.conversion, SessionSettings(romaji_table=romaji_table_of(input_settings)))


def test_an_azik_table_converts_through_a_session(session, tmp_path):
    table = tmp_path / "azik.tsv"
    table.write_text("# AZIK: kz is かん\nka\tか\nkz\tかん\nji\tじ\nn\tん\nnn\tん\n", encoding="utf-8")
    azik = session_typing(session, InputSettings(romaji_table=TablePath(str(table))))
    assert type_text(azik, "kz").preedit.text == "かん"
    assert type_text(azik, "ji").preedit.text == "かんじ"
    shown = press(azik, "space").preedit.text
    assert [segment.reading for segment in azik.phase.segments] == ["かんじ"]
    assert {"漢字", "感じ"} <= {candidate.text for candidate in azik.phase.segments[0].candidates}
    assert shown != "かんじ"
    assert press(azik, "Return").commit == shown


def test_an_unusable_romaji_table_falls_back_to_mozcs(tmp_path, caplog):
    missing = tmp_path / "gone.tsv"
    table = romaji_table_of(InputSettings(romaji_table=TablePath(str(missing)), slash=Slash.SLASH))
    assert Composer(table=table).insert("kanji/").preedit() == "かんじ／"
    assert f"romaji table {missing}: cannot read it" in caplog.text and "using Mozc's table" in caplog.text


# --- Reconversion (再変換) ------------------------------------------------------------------------------------


def test_reconversion_of_a_selection_offers_the_candidates_of_its_reading_and_replaces_it(session, learning):
    session.surrounding = SurroundingText("昨日、今日は良い天気。", 3, 10)  # selected leftwards: cursor first
    out = press(session, "Henkan")
    assert out.consumed and isinstance(session.phase, Converting)
    assert out.delete_surrounding is None  # the commit replaces the selection
    assert out.commit == "" and out.preedit.text == "今日は良い天気"
    assert session.phase.segments[0].reading == "きょうはよいてんき"
    assert session.context == "昨日、"  # what precedes the selection
    out = press(session, "Henkan")  # Henkan goes on as Space would: the candidate window opens
    expected = [c.text for c in session.converter.conversion.candidates("きょうはよいてんき", "昨日、", 20)]
    assert [item.text for item in out.candidates.items] == expected[: len(out.candidates.items)]
    choice = out.candidates.items.index(next(item for item in out.candidates.items if item.text == "今日は良い天気"))
    out = press(session, str(choice + 1 - out.candidates.page_start))
    assert out.commit == "今日は良い天気" and out.delete_surrounding is None and isinstance(session.phase, Empty)
    assert learning.ranked("きょうはよいてんき") == ["今日は良い天気"]


def test_reconversion_without_a_selection_takes_the_word_before_the_cursor(session):
    session.surrounding = SurroundingText("メモ: 今日は良い天気", 11, 11)
    out = press(session, "Henkan")
    assert out.delete_surrounding == SurroundingDeletion(before=7, after=0)
    assert session.phase.segments[0].reading == "きょうはよいてんき"
    second = press(session, "Down").candidates.items[1].text
    assert press(session, "Return").commit == second


def test_candidates_can_show_where_they_come_from(tmp_path, learning):
    learning.record("かんじ", "感じ")
    converter = Converter(dictionary=system_dictionary(), learning=learning)
    plain = InputSession(converter)
    debugging = InputSession(converter, SessionSettings(show_source=True))
    for session in (plain, debugging):
        type_text(session, "kanji")
        press(session, "space")
    window = press(debugging, "space").candidates
    assert window.items[0] == CandidateItem("感じ", "[learning]")
    assert {item.annotation.split()[-1] for item in window.items} <= {
        "[learning]",
        "[user]",
        "[model]",
        "[dictionary]",
        "[kana]",
        "[rewriter]",
    }
    assert press(plain, "space").candidates.items[0].annotation == ""
