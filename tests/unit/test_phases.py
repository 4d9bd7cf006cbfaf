"""The session's phases as values: their pure operations, without a session."""

from daemon.conversion import CandidateSource, ConversionCandidate
from daemon.composer import Composer
from daemon.config import Action
from daemon.keys import key_from_event, keyval_of
from daemon.phases import (
    Composing,
    Converting,
    Empty,
    PendingImprovement,
    Predicting,
    Segment,
    committed_text,
    composition_of,
    label_place,
    listed,
)
from daemon.session import list_step
from ime_protocol import CONTROL_MASK


def segment(reading, *texts, index=0):
    return Segment(reading, [ConversionCandidate(text, CandidateSource.DICTIONARY) for text in texts], index)


def test_each_phase_but_empty_carries_its_composition():
    composing = Composing(reconverted="天気")
    converting = Converting([segment("てんき", "天気")], composing)
    predicting = Predicting(segment("てん", "天気"), composing)
    assert [composition_of(phase) for phase in (Empty(), composing, converting, predicting)] == [
        None,
        composing,
        composing,
        composing,
    ]
    assert listed(Empty()) is None and listed(composing) is None
    assert listed(converting) is converting.focused and listed(predicting) is predicting.items


def test_what_a_phase_commits_is_what_it_shows():
    composer = Composer().insert("k").insert("a")
    assert committed_text(Composing(), composer) == "か"
    assert committed_text(Composing(live_text="蚊"), composer) == "蚊"
    two = Converting([segment("きょうは", "今日は"), segment("てんき", "天気", "転機", index=1)], Composing())
    assert committed_text(two, composer) == "今日は転機"
    assert committed_text(Predicting(segment("てん", "天気", "点数", index=1), Composing()), composer) == "点数"
    assert committed_text(Empty(), composer) == ""


def test_choosing_moves_the_focus_until_the_last_segment():
    converting = Converting([segment("きょうは", "今日は"), segment("てんき", "天気")], Composing(), window_open=True)
    assert converting.choose() is False and converting.focus == 1 and not converting.window_open
    assert converting.choose() is True


def test_labels_choose_on_the_cursor_page_only_where_there_is_a_candidate():
    listed_segment = segment("き", *"木気期機器基記帰季", "黄", index=9)  # the cursor on the second page
    assert label_place(key_from_event(keyval_of("2"), 0), 9) == 1
    assert label_place(key_from_event(keyval_of("2"), CONTROL_MASK), 9) is None
    assert label_place(key_from_event(keyval_of("9"), 0), 3) is None  # past the page's labels
    assert listed_segment.select_on_page(1, 9) is False and listed_segment.index == 9
    assert listed_segment.select_on_page(0, 9) is True and listed_segment.text == "黄"


def test_list_steps_are_candidates_or_pages():
    assert [
        list_step(action, 9)
        for action in (
            Action.NEXT_CANDIDATE,
            Action.PREV_CANDIDATE,
            Action.PAGE_DOWN,
            Action.PAGE_UP,
            Action.COMMIT,
            None,
        )
    ] == [1, -1, 9, -9, None, None]


def test_the_models_ranking_replaces_only_an_untouched_single_segment():
    first = segment("きょう", "京", "今日")
    better = [ConversionCandidate("今日", CandidateSource.MODEL), ConversionCandidate("京", CandidateSource.MODEL)]
    pending = PendingImprovement(first, list)
    converting = Converting([first], Composing(), pending_improvement=pending)
    assert converting.take_pending_improvement() is pending and converting.take_pending_improvement() is None
    converting.window_open = True
    assert converting.improve(pending, better) is False and first.text == "京"
    converting.window_open = False
    assert converting.improve(pending, []) is False
    assert converting.improve(pending, better) is True and first.text == "今日"
    assert converting.improve(pending, better) is False  # the same first candidate: nothing to show
    other = Converting([segment("きょう", "京")], Composing())
    assert other.improve(pending, better) is False  # not the segment it was made for


def test_an_improvement_stands_in_for_its_conversion_until_the_reading_or_context_changes():
    composing = Composing()
    assert composing.settled_live("きのうは", "", lambda: "機能は") == "機能は"
    assert composing.improve("きのうは", "", [ConversionCandidate("昨日は", CandidateSource.MODEL)]) is True
    assert composing.live_text == "昨日は" and composing.improve("きのうは", "", []) is False
    assert composing.settled_live("きのうは", "", lambda: "unused") == "昨日は"
    assert composing.settled_live("きのうはと", "", lambda: "機能はと") == "昨日はと"  # carried over
    assert composing.settled_live("きのうはと", "x", lambda: "機能はと") == "昨日はと"
