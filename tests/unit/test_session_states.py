"""The session's state machine on an in-memory conversion (tests/fake_conversion.py): phases, segments,
resizing, the candidate window and learning, without the dictionary. tests/integration/test_session.py drives the
same machine with the real dictionary as a regression layer."""

import pytest

from daemon.conversion import CandidateSource, ConversionCandidate, Effort
from daemon.keys import keyval_of
from daemon.session import InputSession, Phase, SessionSettings, carried_over
from ime_protocol import SHIFT_MASK, SegmentStyle
from tests.fake_conversion import FakeConversion
from tests.session_keys import press

WORDS = {"きょう": ["今日", "京"], "は": ["は", "葉"], "いい": ["良い", "いい"], "てんき": ["天気", "転機"],
         "きょうは": ["今日は"], "きょうはいいてんき": ["今日は良い天気", "今日はいい天気"], "てん": ["点"],
         "き": ["木"]}


@pytest.fixture
def conversion():
    return FakeConversion(WORDS, cuts={"きょうはいいてんき": ["きょうは", "いい", "てんき"]})


@pytest.fixture
def session(conversion):
    return InputSession(conversion)


def test_space_shows_the_first_candidate_and_return_commits_and_learns_it(session, conversion):
    press(session, *"kyouhaiitenki")
    assert session.phase is Phase.COMPOSING
    out = press(session, "space")
    assert out.preedit.text == "今日は良い天気" and session.phase is Phase.CONVERTING
    assert conversion.asked[-1] == ("きょうはいいてんき", Effort.SENTENCE)
    out = press(session, "Return")
    assert out.commit == "今日は良い天気" and session.phase is Phase.EMPTY
    assert conversion.learned == [[("きょうはいいてんき", "今日は良い天気")]]


def test_a_choice_that_cannot_be_kept_is_said_in_the_panel_once(session, conversion):
    conversion.keeping_problem = "learning.tsv cannot be read (Permission denied): changes are kept in memory only"
    press(session, *"kyou", "space")
    out = press(session, "Return")
    assert out.commit == "今日" and out.aux.startswith("学習した変換を保存できません: learning.tsv cannot be read")
    assert press(session, "k").aux == ""  # said once: the next answer's line is the composition's again


def test_the_second_space_opens_the_window_on_the_next_candidate_and_a_digit_chooses(session, conversion):
    press(session, *"kyou", "space")
    out = press(session, "space")
    assert out.candidates is not None and out.candidates.cursor == 1 and out.preedit.text == "京"
    out = press(session, "1")
    assert out.commit == "今日" and conversion.learned == [[("きょう", "今日")]]


def test_segments_come_from_the_conversions_cut_and_resizing_re_cuts_the_rest(session, conversion):
    press(session, *"kyouhaiitenki", "space")
    out = press(session, "Right")  # a segment operation cuts the whole conversion into bunsetsu
    assert [s.reading for s in session.segments] == ["きょうは", "いい", "てんき"]
    assert [s.style for s in out.preedit.segments] == [SegmentStyle.UNDERLINE, SegmentStyle.HIGHLIGHT,
                                                       SegmentStyle.UNDERLINE]
    press(session, "Right")
    out = press(session, "Left", modifiers=SHIFT_MASK)  # てんき → てん; き follows on its own
    assert [s.reading for s in session.segments] == ["きょうは", "いい", "てん", "き"]
    assert out.preedit.text == "今日は良い点木"
    assert conversion.asked[-1] == ("き", Effort.SEGMENT)
    out = press(session, "Return")
    assert out.commit == "今日は良い点木"
    assert conversion.learned == [[("きょうは", "今日は"), ("いい", "良い"), ("てん", "点"), ("き", "木")]]


def test_escape_goes_back_to_the_reading_and_again_clears_it(session):
    press(session, *"tenki", "space")
    out = press(session, "Escape")
    assert out.preedit.text == "てんき" and session.phase is Phase.COMPOSING
    out = press(session, "Escape")
    assert out.preedit.text == "" and session.phase is Phase.EMPTY


def test_tab_predicts_from_the_reading(session):
    press(session, *"kyou")
    out = press(session, "Tab")
    assert session.phase is Phase.PREDICTING
    assert [item.text for item in out.candidates.items] == ["今日は", "今日は良い天気"]


def test_the_converter_and_the_fake_offer_the_interface_the_session_uses():
    import inspect

    from daemon.conversion import Conversion
    from daemon.converter import Converter

    methods = [name for name, value in vars(Conversion).items() if not name.startswith("_") and callable(value)]
    assert len(methods) == 7
    for name in methods:
        wanted = list(inspect.signature(getattr(Conversion, name)).parameters)
        assert list(inspect.signature(getattr(Converter, name)).parameters) == wanted, name
        assert list(inspect.signature(getattr(FakeConversion, name)).parameters) == wanted, name


def test_with_live_conversion_a_key_is_answered_with_the_conversion_unless_a_newer_key_waits(conversion):
    session = InputSession(conversion, SessionSettings(live_conversion=True))
    assert press(session, *"kyo").preedit.text == "きょ"  # no word for きょ: its kana
    assert press(session, "u").preedit.text == "今日"
    assert conversion.asked[-1] == ("きょう", Effort.KEYSTROKE)
    asked = len(conversion.asked)
    # A newer key waits: this one is answered in kana, without converting; the waiting one converts.
    assert session.handle_key(keyval_of("h"), 0, 7, live=False).preedit.text == "きょうh"
    assert len(conversion.asked) == asked
    out = session.handle_key(keyval_of("a"), 0, 8)
    assert (out.request_id, out.preedit.text) == (8, "今日は")
    # A key that changes nothing keeps the live text without converting again.
    asked = len(conversion.asked)
    assert press(session, "Left").preedit.text == "今日は" and len(conversion.asked) == asked
    assert press(session, "BackSpace").preedit.text == "今日"
    assert press(session, "Return").commit == "今日"


def test_an_improvement_stands_in_for_what_it_improved_on_at_the_start_of_later_conversions():
    improvement = ("昨日は", "機能は")
    assert carried_over("昨日は友達と", improvement) == "機能は友達と"
    assert carried_over("昨日は", improvement) == "機能は"
    assert carried_over("昨日派友達と", improvement) == "昨日派友達と"  # converted otherwise: the key's own
    assert carried_over("今日", None) == "今日"
    assert carried_over("今日", ("", "x")) == "今日"


def test_a_key_that_only_adds_romaji_shows_it_after_the_live_text_without_converting(conversion):
    session = InputSession(conversion, SessionSettings(live_conversion=True))
    assert press(session, *"ky").preedit.text == "ky" and conversion.asked == []  # nothing settled yet
    assert press(session, *"ou").preedit.text == "今日"
    asked = len(conversion.asked)
    assert press(session, "h").preedit.text == "今日h" and len(conversion.asked) == asked
    assert press(session, "BackSpace").preedit.text == "今日" and len(conversion.asked) == asked
    # An improvement made in advance stays shown while romaji is pending; the next kana converts again.
    better = [ConversionCandidate("京", CandidateSource.DICTIONARY)]
    assert session.improve_live(better).preedit.text == "京"
    assert press(session, "h").preedit.text == "京h" and len(conversion.asked) == asked
    assert session.improve_live(conversion.candidates("きょうh")) is None  # pending: the settled part's stays
    # The next kana converts again, and the improvement stands in for what it improved on (今日は → 京は).
    assert press(session, "a").preedit.text == "京は" and conversion.asked[-1] == ("きょうは", Effort.KEYSTROKE)
    # Forgotten with the composition: typed again, it is converted again (a commit may have taught otherwise).
    press(session, "Escape")
    conversion.asked.clear()
    assert press(session, *"kyou").preedit.text == "今日"
    assert conversion.asked == [("きょ", Effort.KEYSTROKE), ("きょう", Effort.KEYSTROKE)]


def test_without_live_conversion_keys_show_kana_and_convert_nothing(session, conversion):
    assert press(session, *"kyou").preedit.text == "きょう"
    assert conversion.asked == []
