"""Space served by a conversion made in advance: ComputedOnce (each result computed once, however many threads
ask) and the session asking in advance for exactly what Space will ask for; Space that cannot wait for the
neural model, and its ranking arriving later. The converter's kept rankings against fresh ones, and its ranking
without the model while the model's is under way: tests/integration/test_converter.py."""

import threading

import pytest

from daemon.computed_once import ComputedOnce
from daemon.conversion import Effort
from daemon.session import InputSession
from daemon.session_settings import SessionSettings
from ime_protocol import SHIFT_MASK, InputPurpose
from tests.fake_conversion import FakeConversion
from tests.session_keys import press


def test_a_result_is_computed_once_and_the_least_recently_used_goes_first():
    store, calls = ComputedOnce(2), []

    def compute(value):
        calls.append(value)
        return value * 10

    assert store.get("a", lambda: compute(1)) == 10
    assert store.get("a", lambda: compute(2)) == 10 and calls == [1]
    store.get("b", lambda: compute(3))
    store.get("a", lambda: compute(4))  # a is now the most recent
    store.get("c", lambda: compute(5))  # b goes
    assert store.get("b", lambda: compute(6)) == 60 and calls == [1, 3, 5, 6]


def test_a_caller_waits_for_the_computation_under_way_instead_of_repeating_it():
    store, started, release, calls = ComputedOnce(4), threading.Event(), threading.Event(), []

    def slow():
        calls.append("slow")
        started.set()
        release.wait(10)
        return "ready"

    first = threading.Thread(target=lambda: store.get("k", slow))
    first.start()
    assert started.wait(10)
    results = []
    second = threading.Thread(target=lambda: results.append(store.get("k", lambda: calls.append("again"))))
    second.start()
    release.set()
    first.join(10)
    second.join(10)
    assert results == ["ready"] and calls == ["slow"]


def test_ready_waits_a_bounded_time_for_a_computation_under_way_and_never_computes():
    store, release, started = ComputedOnce(4), threading.Event(), threading.Event()

    def slow():
        started.set()
        assert release.wait(10)
        return "done"

    assert store.ready("k", 0.01) is None and store.get("k", lambda: "first") == "first"  # never computed by ready
    worker = threading.Thread(target=lambda: store.get("late", slow))
    worker.start()
    assert started.wait(10)
    assert store.ready("late", 0.01) is None  # under way, not done in time
    release.set()
    assert store.ready("late", 10) == "done"
    worker.join(10)
    with pytest.raises(ZeroDivisionError):
        store.get("failed", lambda: 1 / 0)
    assert store.ready("failed", 0.01) is None


def test_a_failed_computation_is_forgotten():
    store = ComputedOnce(4)
    with pytest.raises(ZeroDivisionError):
        store.get("k", lambda: 1 / 0)
    assert store.get("k", lambda: "fine") == "fine"


def test_the_conversion_in_advance_asks_exactly_what_space_asks():
    conversion = FakeConversion({"きょう": ["今日"]})
    session = InputSession(conversion, SessionSettings(live_conversion=True))
    press(session, *"kyou")
    in_advance = session.conversion_in_advance()
    in_advance()
    press(session, "space")
    assert conversion.calls[-1] == conversion.calls[-2] and conversion.calls[-1][-1] is Effort.SENTENCE


def test_nothing_is_converted_in_advance_in_a_secret_field_or_outside_a_composition():
    session = InputSession(FakeConversion({}))
    assert session.conversion_in_advance() is None
    press(session, *"kyouh")
    assert session.conversion_in_advance() is None  # romaji pending: the next key completes the kana
    press(session, "Escape")
    session.purpose = InputPurpose.PASSWORD
    press(session, *"kyou")
    assert session.conversion_in_advance() is None


def test_the_conversion_in_advance_improves_the_live_text_while_the_user_composes():
    session = InputSession(FakeConversion({"きょう": ["今日", "京"]}), SessionSettings(live_conversion=True))
    press(session, *"kyou")
    session.phase.live_text = "京"
    candidates = session.conversion_in_advance()()
    assert session.improve_live(candidates, 7).preedit.text == "今日" and session.phase.live_text == "今日"
    assert session.improve_live(candidates) is None  # the same text: nothing to send
    press(session, "space")
    assert session.improve_live(candidates) is None  # converting now: the live text is no more


# -- Space that cannot wait for the model: its ranking follows as an improvement ---------------------------


def late_model_session() -> tuple[FakeConversion, InputSession]:
    conversion = FakeConversion(
        {"こうえん": ["公園", "公演", "講演"]}, model_ranked={"こうえん": ["公演", "公園", "講演"]}
    )
    conversion.model_late = True
    return conversion, InputSession(conversion)


def test_space_that_could_not_wait_for_the_model_shows_its_choice_once_it_comes():
    conversion, session = late_model_session()
    assert press(session, *"kouen", "space").preedit.text == "公園"
    pending = session.conversion_to_improve()
    assert session.conversion_to_improve() is None  # given once
    conversion.model_late = False
    assert session.improve_conversion(pending, pending.convert()).preedit.text == "公演"
    assert press(session, "Return").commit == "公演"


def test_space_with_the_models_ranking_in_time_leaves_nothing_to_improve():
    conversion, session = late_model_session()
    conversion.model_late = False
    assert press(session, *"kouen", "space").preedit.text == "公演"
    assert session.conversion_to_improve() is None


def test_the_models_ranking_with_the_same_first_candidate_changes_nothing_shown():
    conversion, session = late_model_session()
    conversion.model_ranked["こうえん"] = ["公園", "講演", "公演"]
    press(session, *"kouen", "space")
    pending = session.conversion_to_improve()
    conversion.model_late = False
    assert session.improve_conversion(pending, pending.convert()) is None
    assert [c.text for c in press(session, "space").candidates.items][:3] == ["公園", "講演", "公演"]


@pytest.mark.parametrize(
    "key, modifiers",
    [("space", 0), ("Down", 0), ("Escape", 0), ("Return", 0), ("Left", SHIFT_MASK)],
    ids=["window-opened", "next-candidate", "cancelled", "committed", "segment-resized"],
)
def test_the_models_ranking_comes_too_late_once_the_user_has_moved_on(key, modifiers):
    conversion, session = late_model_session()
    press(session, *"kouen", "space")
    pending = session.conversion_to_improve()
    conversion.model_late = False
    shown = press(session, key, modifiers=modifiers)
    assert session.improve_conversion(pending, pending.convert()) is None
    assert session.current_output().preedit == shown.preedit
