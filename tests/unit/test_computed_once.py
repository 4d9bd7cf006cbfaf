"""Space served by a conversion made in advance: ComputedOnce (each result computed once, however many threads
ask) and the session asking in advance for exactly what Space will ask for. The converter's kept rankings
against fresh ones: tests/integration/test_converter.py."""

import threading

import pytest

from daemon.computed_once import ComputedOnce
from daemon.converter import Effort
from daemon.session import InputSession, SessionSettings
from ime_protocol import InputPurpose
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
    session.focus_in(InputPurpose.PASSWORD)
    press(session, *"kyou")
    assert session.conversion_in_advance() is None


def test_the_conversion_in_advance_improves_the_live_text_while_the_user_composes():
    session = InputSession(FakeConversion({"きょう": ["今日", "京"]}), SessionSettings(live_conversion=True))
    press(session, *"kyou")
    session.show_live("京")
    candidates = session.conversion_in_advance()()
    assert session.improve_live(candidates, 7).preedit.text == "今日" and session.live_text == "今日"
    assert session.improve_live(candidates) is None  # the same text: nothing to send
    press(session, "space")
    assert session.improve_live(candidates) is None  # converting now: the live text is no more
