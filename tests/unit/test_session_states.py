"""The session's state machine on an in-memory conversion (tests/fake_conversion.py): phases, segments,
resizing, the candidate window, learning, typing and transliteration, input modes and their keys, chords, symbol
styles, password fields, the composition limit and reconversion's states, without the dictionary.
tests/integration/test_session.py drives the same machine with the real dictionary as a regression layer."""

import pytest

from daemon.conversion import CandidateSource, ConversionCandidate, Effort
from daemon.keys import keyval_of
from daemon.composer import Brackets, Punctuation, Slash, SpaceWidth
from daemon.config import Action, InputSettings
from daemon.keys import KeySpec, key_from_event
from daemon.phases import COMPOSITION_FULL_NOTICE, Composing, Converting, Empty, Predicting, carried_over
from daemon.session import InputSession
from daemon.session_settings import SessionSettings, romaji_table_of
from ime_protocol import (
    CONTROL_MASK,
    RELEASE_MASK,
    SHIFT_MASK,
    InputPurpose,
    SegmentStyle,
    SurroundingDeletion,
    SurroundingText,
)
from tests.fake_conversion import FakeConversion, FakeReader
from tests.session_keys import press, type_text

WORDS = {
    "きょう": ["今日", "京"],
    "は": ["は", "葉"],
    "いい": ["良い", "いい"],
    "てんき": ["天気", "転機"],
    "きょうは": ["今日は"],
    "きょうはいいてんき": ["今日は良い天気", "今日はいい天気"],
    "てん": ["点"],
    "き": ["木"],
}


@pytest.fixture
def conversion():
    return FakeConversion(WORDS, cuts={"きょうはいいてんき": ["きょうは", "いい", "てんき"]})


@pytest.fixture
def session(conversion):
    return InputSession(conversion)


def test_space_shows_the_first_candidate_and_return_commits_and_learns_it(session, conversion):
    press(session, *"kyouhaiitenki")
    assert isinstance(session.phase, Composing)
    out = press(session, "space")
    assert out.preedit.text == "今日は良い天気" and isinstance(session.phase, Converting)
    assert conversion.asked[-1] == ("きょうはいいてんき", Effort.SENTENCE)
    out = press(session, "Return")
    assert out.commit == "今日は良い天気" and isinstance(session.phase, Empty)
    assert conversion.learned == [[("きょうはいいてんき", "今日は良い天気")]]


def test_a_choice_that_cannot_be_kept_is_said_in_the_panel_once(session, conversion):
    conversion.keeping_problem = "learning.tsv cannot be read (Permission denied): changes are kept in memory only"
    press(session, *"kyou", "space")
    out = press(session, "Return")
    assert out.commit == "今日" and out.aux.startswith("学習した変換を保存できません: learning.tsv cannot be read")
    assert press(session, "k").aux == ""  # said once: the next answer's line is the composition's again


def test_a_long_reason_for_an_unkept_choice_is_cut_to_the_auxiliary_lines_length(session, conversion):
    from ime_protocol import MAX_SHORT_TEXT_CHARS

    conversion.keeping_problem = "learning.tsv cannot be read ([Errno 13] Permission denied: '/" + "d/" * 200 + "')"
    press(session, *"kyou", "space")
    out = press(session, "Return")
    assert out.commit == "今日" and len(out.aux) == MAX_SHORT_TEXT_CHARS
    assert out.aux.startswith("学習した変換を保存できません: learning.tsv cannot be read")


def test_the_second_space_opens_the_window_on_the_next_candidate_and_a_digit_chooses(session, conversion):
    press(session, *"kyou", "space")
    out = press(session, "space")
    assert out.candidates is not None and out.candidates.cursor == 1 and out.preedit.text == "京"
    out = press(session, "1")
    assert out.commit == "今日" and conversion.learned == [[("きょう", "今日")]]


def test_segments_come_from_the_conversions_cut_and_resizing_re_cuts_the_rest(session, conversion):
    press(session, *"kyouhaiitenki", "space")
    out = press(session, "Right")  # a segment operation cuts the whole conversion into bunsetsu
    assert [s.reading for s in session.phase.segments] == ["きょうは", "いい", "てんき"]
    assert [s.style for s in out.preedit.segments] == [
        SegmentStyle.UNDERLINE,
        SegmentStyle.HIGHLIGHT,
        SegmentStyle.UNDERLINE,
    ]
    press(session, "Right")
    out = press(session, "Left", modifiers=SHIFT_MASK)  # てんき → てん; き follows on its own
    assert [s.reading for s in session.phase.segments] == ["きょうは", "いい", "てん", "き"]
    assert out.preedit.text == "今日は良い点木"
    assert conversion.asked[-1] == ("き", Effort.SEGMENT)
    out = press(session, "Return")
    assert out.commit == "今日は良い点木"
    assert conversion.learned == [[("きょうは", "今日は"), ("いい", "良い"), ("てん", "点"), ("き", "木")]]


def test_escape_goes_back_to_the_reading_and_again_clears_it(session):
    press(session, *"tenki", "space")
    out = press(session, "Escape")
    assert out.preedit.text == "てんき" and isinstance(session.phase, Composing)
    out = press(session, "Escape")
    assert out.preedit.text == "" and isinstance(session.phase, Empty)


def test_tab_predicts_from_the_reading(session):
    press(session, *"kyou")
    out = press(session, "Tab")
    assert isinstance(session.phase, Predicting)
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


# -- typing, modes, keys and limits (moved from the real-dictionary tests: none needs a dictionary) ----


def test_typing_composes_and_shows_pending_romaji(session):
    out = type_text(session, "kyouky")
    assert out.consumed and out.preedit.text == "きょうky"
    assert out.preedit.segments[0].style is SegmentStyle.UNDERLINE
    assert out.preedit.cursor == len("きょうky") and isinstance(session.phase, Composing)


def test_backspace_then_empty_passes_keys_on(session):
    type_text(session, "ka")
    out = press(session, "BackSpace")
    assert out.consumed and out.preedit.text == "" and isinstance(session.phase, Empty)
    assert not press(session, "BackSpace").consumed


def test_enter_commits_the_kana_with_a_trailing_n(session):
    type_text(session, "nihon")
    assert press(session, "Return").commit == "にほん"


def test_function_keys_transliterate(session):
    type_text(session, "tokyo")
    assert press(session, "F7").preedit.text == "トキョ"
    press(session, "Escape")
    assert press(session, "F10").preedit.text == "tokyo"
    press(session, "Escape")
    assert press(session, "F9").preedit.text == "ｔｏｋｙｏ"


def test_transliteration_is_an_action_that_any_key_can_be_bound_to(conversion):
    bindings = {**SessionSettings().bindings, Action.TO_KATAKANA: (KeySpec.parse("ctrl+k"),), Action.TO_HIRAGANA: ()}
    session = InputSession(conversion, SessionSettings(bindings=bindings))
    type_text(session, "tokyo")
    assert press(session, "F6").preedit.text == "ときょ"  # F6 unbound: swallowed, the reading stays
    assert isinstance(session.phase, Composing)
    assert press(session, "k", modifiers=CONTROL_MASK).preedit.text == "トキョ"


def test_a_segment_of_several_takes_the_kana_forms_of_its_own_reading(session):
    type_text(session, "kyouhaiitenki")
    press(session, "space", "Right")
    assert press(session, "F7").preedit.text == "今日はイイ天気"
    assert press(session, "F10").preedit.text == "今日はイイ天気"  # ASCII is the whole typed text's only


def test_space_on_empty_is_a_fullwidth_space(session):
    assert press(session, "space").commit == "\u3000"
    out = session.handle_key(keyval_of("space"), SHIFT_MASK)
    assert not out.consumed


def test_releases_and_shortcuts_pass_through(session):
    assert not session.handle_key(keyval_of("a"), RELEASE_MASK).consumed
    assert not session.handle_key(keyval_of("c"), CONTROL_MASK).consumed
    assert isinstance(session.phase, Empty)


def test_direct_mode_passes_everything_and_toggles_back(session):
    press(session, "Zenkaku_Hankaku")
    assert session.composer.mode.value == "direct"
    assert not press(session, "a").consumed
    press(session, "Zenkaku_Hankaku")
    assert press(session, "a").preedit.text == "あ"


def test_input_turns_off_and_on_with_the_keys_people_have(session):
    for off, on in (("Zenkaku_Hankaku", "Zenkaku_Hankaku"), ("Muhenkan", "Henkan")):
        assert press(session, off).consumed and session.composer.mode.value == "direct"
        assert not press(session, "a").consumed  # straight to the application
        assert press(session, on).consumed and type_text(session, "a").preedit.text == "あ"
        press(session, "Escape")
    assert session.handle_key(keyval_of("space"), CONTROL_MASK).consumed  # ctrl+space toggles
    assert session.composer.mode.value == "direct"
    assert session.handle_key(keyval_of("space"), CONTROL_MASK).consumed
    assert type_text(session, "ka").preedit.text == "か"


def test_muhenkan_does_not_drop_a_composition(session):
    type_text(session, "kanji")
    press(session, "Muhenkan")
    assert session.composer.mode.value == "hiragana" and isinstance(session.phase, Composing)


def test_a_chord_binding_wins_over_a_plain_one(session):
    settings = SessionSettings(
        bindings={**session.settings.bindings, Action.COMMIT: (KeySpec.parse("Return"), KeySpec.parse("ctrl+m"))}
    )
    key = key_from_event(keyval_of("m"), CONTROL_MASK)
    assert settings.actions(key) == [Action.COMMIT]
    assert settings.action(key_from_event(keyval_of("space"), CONTROL_MASK)) is Action.TOGGLE_INPUT
    assert settings.action(key_from_event(keyval_of("space"), 0)) == "convert"
    with pytest.raises(ValueError, match="unknown modifier"):
        KeySpec.parse("hyper+space")


def test_symbol_styles_apply_in_a_session(session):
    styled = session_typing(
        session,
        InputSettings(
            punctuation=Punctuation.COMMA_PERIOD, brackets=Brackets.SQUARE, slash=Slash.SLASH, space=SpaceWidth.HALF
        ),
    )
    assert press(styled, "space").commit == " "
    assert type_text(styled, "[a,i.]/").preedit.text == "［あ，い．］／"
    assert press(styled, "Return").commit == "［あ，い．］／"
    assert type_text(session, "[a,i.]/").preedit.text == "「あ、い。」・"  # Mozc's defaults


def test_reloaded_input_settings_apply_from_the_next_composition(session):
    type_text(session, "a,")
    comma_kuten = InputSettings(punctuation=Punctuation.COMMA_KUTEN)
    session.settings = SessionSettings(romaji_table=romaji_table_of(comma_kuten))
    assert type_text(session, ",").preedit.text == "あ、、"  # the composition keeps its table
    press(session, "Return")
    assert type_text(session, ",").preedit.text == "，"


def test_composition_length_is_bounded_and_the_user_is_told(session):
    assert type_text(session, "a" * 999).aux == ""
    out = type_text(session, "a" * 6)
    assert out.consumed and len(session.composer.raw()) == 1000
    assert out.aux == COMPOSITION_FULL_NOTICE and "1000" in out.aux
    assert press(session, "BackSpace").aux == ""  # below the limit again


def test_password_fields_neither_learn_nor_predict(session, conversion):
    session.purpose = InputPurpose.PASSWORD
    type_text(session, "kanji")
    assert press(session, "Tab").candidates is None
    press(session, "space")
    assert press(session, "Return").commit
    assert conversion.learned == []


def test_text_typed_in_a_password_field_stays_secret_when_the_purpose_changes(session, conversion):
    session.purpose = InputPurpose.PASSWORD
    type_text(session, "himitsu")
    session.purpose = InputPurpose.FREE_FORM  # IBus re-sends FocusIn on a content-type change
    press(session, "space")
    assert press(session, "Return").commit
    assert conversion.learned == [] and session.context == ""
    type_text(session, "kanji")  # what is typed after that commit is ordinary text again
    press(session, "space")
    press(session, "Return")
    assert conversion.learned == [[("かんじ", conversion.learned[0][0][1])]]


def session_typing(session, input_settings: InputSettings) -> InputSession:
    """A session on the same conversion whose [input] settings are `input_settings`."""
    return InputSession(session.converter.conversion, SessionSettings(romaji_table=romaji_table_of(input_settings)))


# -- reconversion's states, on readings from a table ----------------------------------------------------

READINGS = {"今日は良い天気": "きょうはよいてんき", "天気": "てんき"}


@pytest.fixture
def reconverting(conversion):
    return InputSession(conversion, reader=FakeReader(READINGS))


def test_cancelling_a_reconversion_puts_the_text_back(reconverting):
    reconverting.surrounding = SurroundingText("今日は良い天気", 7, 0)
    press(reconverting, "Henkan")
    out = press(reconverting, "Escape")
    assert out.commit == "今日は良い天気" and out.preedit.text == "" and isinstance(reconverting.phase, Empty)
    # Backspace edits the reading instead; Escape from there puts the text back too.
    reconverting.surrounding = SurroundingText("天気", 2, 0)
    press(reconverting, "Henkan")
    assert press(reconverting, "BackSpace").preedit.text == "てんき"
    assert press(reconverting, "Escape").commit == "天気"
    # Discarded (the frontend gave a key to the application instead), it is put back too.
    reconverting.surrounding = SurroundingText("天気", 2, 0)
    press(reconverting, "Henkan")
    assert reconverting.discard().commit == "天気"
    # A reset (the application's, e.g. a click in the field) commits what is shown, as focus out does.
    reconverting.surrounding = SurroundingText("天気", 2, 0)
    press(reconverting, "Henkan")
    shown = reconverting.current_output().preedit.text
    assert reconverting.commit_shown().commit == shown


def test_reconversion_needs_text_to_reconvert(reconverting):
    assert not press(reconverting, "Henkan").consumed  # no surrounding text
    for text, cursor, anchor in [("", 0, 0), ("abc ", 4, 4), ("今日\n明日", 5, 0)]:
        reconverting.surrounding = SurroundingText(text, cursor, anchor)
        assert not press(reconverting, "Henkan").consumed and isinstance(reconverting.phase, Empty)
    reconverting.surrounding = SurroundingText("天気", 2, 0)
    reconverting.purpose = InputPurpose.PASSWORD
    assert not press(reconverting, "Henkan").consumed


def test_text_whose_reading_is_too_long_to_convert_is_not_reconverted(reconverting):
    text = "漢" + "\ufdfa" * 200  # ﷺ is 18 characters after NFKC: the reading passes MAX_READING_CHARS
    reconverting.surrounding = SurroundingText(text, 0, len(text))
    out = press(reconverting, "Henkan")
    assert not out.consumed and out.delete_surrounding is None and isinstance(reconverting.phase, Empty)
    type_text(reconverting, "kanji")  # the session goes on
    assert isinstance(reconverting.phase, Composing)


def test_henkan_still_converts_while_composing(reconverting):
    reconverting.surrounding = SurroundingText("天気", 2, 2)
    type_text(reconverting, "kanji")
    out = press(reconverting, "Henkan")
    assert out.delete_surrounding is None and reconverting.phase.segments[0].reading == "かんじ"


def test_the_reconversion_key_is_configurable(conversion):
    settings = SessionSettings(bindings={**SessionSettings().bindings, Action.RECONVERT: (KeySpec.parse("ctrl+r"),)})
    reconverting = InputSession(conversion, settings, reader=FakeReader(READINGS))
    reconverting.surrounding = SurroundingText("天気", 2, 2)
    assert not press(reconverting, "Henkan").consumed
    out = reconverting.handle_key(keyval_of("r"), CONTROL_MASK)
    assert out.consumed and out.delete_surrounding == SurroundingDeletion(2, 0)


def test_reconversion_does_not_wait_for_the_reading_index(conversion):
    """Before the warm-up has built it, the key is not taken (it would hold the answer for seconds)."""
    reader = FakeReader(READINGS, loaded=False)
    reconverting = InputSession(conversion, reader=reader)
    reconverting.surrounding = SurroundingText("天気", 2, 2)
    assert not press(reconverting, "Henkan").consumed
    reader.loaded = True
    assert press(reconverting, "Henkan").delete_surrounding == SurroundingDeletion(2, 0)
