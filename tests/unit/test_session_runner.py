"""The session runner without D-Bus or threads' timing: sessions on tests/fake_conversion.py, executors that run
at once, and a pause that ends when the test says."""

import asyncio
from concurrent.futures import Executor, Future

from daemon.keys import keyval_of
from daemon.phases import Composing, Converting
from daemon.session import InputSession
from daemon.session_registry import SessionEntry
from daemon.session_runner import SessionRunner
from daemon.session_settings import SessionSettings
from ime_protocol import FocusIn, InputPurpose, KeyEvent
from tests.fake_conversion import FakeConversion


class AtOnce(Executor):
    """Runs each call as it is submitted, on the caller's thread."""

    def submit(self, fn, /, *args, **kwargs):
        future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as error:  # noqa: BLE001 — handed to the awaiting code, as a thread pool would
            future.set_exception(error)
        return future


class Pauses:
    """A clock whose pauses end when the test ends them."""

    def __init__(self):
        self.ends: dict[asyncio.Task, asyncio.Event] = {}

    async def sleep(self, seconds):
        end = self.ends[asyncio.current_task()] = asyncio.Event()
        await end.wait()

    async def end(self, task):
        """Ends the pause of `task` once it has begun (a task cancelled before it began has none)."""
        while task not in self.ends:
            await asyncio.sleep(0)  # a turn of the loop, not a wait of any length
        self.ends[task].set()


class Published:
    def __init__(self):
        self.outputs = []
        self.changed = asyncio.Event()

    def __call__(self, entry, output):
        self.outputs.append((entry.name, output))
        self.changed.set()


def entry_for(conversion, live=True):
    return SessionEntry("/session/1", ":1.1", 1, InputSession(conversion, SessionSettings(live_conversion=live)))


def key(name, request_id=0):
    return KeyEvent(keyval=keyval_of(name), keycode=0, modifiers=0, request_id=request_id)


async def typed(runner, entry, text):
    out = None
    for name in text:
        out = await runner.apply(entry, key(name))
    return out


async def settled(entry):
    """Until the session's background work is over."""
    if entry.background_task is not None:
        await asyncio.gather(entry.background_task, return_exceptions=True)


# The live text (the dictionary and the language model) says 京; Space's ranking, with the model's say, 今日.
WORDS = {"きょう": ["京", "今日"]}
MODEL_RANKED = {"きょう": ["今日", "京"]}


async def test_after_a_pause_the_conversion_in_advance_improves_the_live_text():
    pauses, published = Pauses(), Published()
    runner = SessionRunner(AtOnce(), AtOnce(), published, sleep=pauses.sleep)
    entry = entry_for(FakeConversion(WORDS, model_ranked=MODEL_RANKED))
    await typed(runner, entry, "kyo")
    out = await runner.apply(entry, key("u", request_id=7))
    assert out.preedit.text == "京" and not published.outputs
    await pauses.end(entry.background_task)
    await settled(entry)
    assert [(name, o.preedit.text, o.request_id) for name, o in published.outputs] == [("/session/1", "今日", 7)]
    assert (await runner.apply(entry, key("space"))).preedit.text == "今日"  # Space shows what was shown


async def test_a_message_during_the_pause_makes_the_conversion_in_advance_stale():
    pauses, published = Pauses(), Published()
    runner = SessionRunner(AtOnce(), AtOnce(), published, sleep=pauses.sleep)
    conversion = FakeConversion(WORDS, model_ranked=MODEL_RANKED)
    entry = entry_for(conversion)
    await typed(runner, entry, "kyou")
    await runner.apply(entry, FocusIn(purpose=InputPurpose.FREE_FORM))
    asked = len(conversion.asked)
    await pauses.end(entry.background_task)
    await settled(entry)
    assert not published.outputs and len(conversion.asked) == asked  # not even converted


async def test_each_key_cancels_the_work_the_key_before_it_scheduled():
    pauses, published = Pauses(), Published()
    runner = SessionRunner(AtOnce(), AtOnce(), published, sleep=pauses.sleep)
    entry = entry_for(FakeConversion(WORDS, model_ranked=MODEL_RANKED))
    await typed(runner, entry, "kyo")
    before = entry.background_task
    await runner.apply(entry, key("u"))
    await asyncio.sleep(0)
    assert before.cancelled() and entry.background_task is not before


async def test_without_live_conversion_nothing_is_converted_in_advance():
    published = Published()
    runner = SessionRunner(AtOnce(), AtOnce(), published, sleep=Pauses().sleep)
    entry = entry_for(FakeConversion(WORDS, model_ranked=MODEL_RANKED), live=False)
    await typed(runner, entry, "kyou")
    assert entry.background_task is None


async def test_space_answered_before_the_model_is_improved_by_its_ranking_after():
    published = Published()
    runner = SessionRunner(AtOnce(), AtOnce(), published, sleep=Pauses().sleep)
    conversion = FakeConversion(WORDS, model_ranked=MODEL_RANKED)
    entry = entry_for(conversion, live=False)
    await typed(runner, entry, "kyou")
    conversion.model_late = True
    out = await runner.apply(entry, key("space", request_id=3))
    assert out.preedit.text == "京" and isinstance(entry.session.phase, Converting)
    await published.changed.wait()
    assert [(o.preedit.text, o.request_id) for _, o in published.outputs] == [("今日", 3)]


class FailingInAdvance(FakeConversion):
    def candidates(self, reading, context="", n=10, session=None, personal=None, effort=None):
        if effort is None:  # the whole reading's conversion, in advance
            raise RuntimeError("the model broke")
        return super().candidates(reading, context, n, session, effort=effort)


async def test_a_failing_conversion_in_advance_is_logged_and_typing_goes_on(caplog):
    pauses, published = Pauses(), Published()
    runner = SessionRunner(AtOnce(), AtOnce(), published, sleep=pauses.sleep)
    entry = entry_for(FailingInAdvance(WORDS))
    await typed(runner, entry, "kyou")
    await pauses.end(entry.background_task)
    await settled(entry)
    assert not published.outputs and "conversion off the key path failed" in caplog.text
    assert isinstance(entry.session.phase, Composing)
    assert (await runner.apply(entry, key("Return"))).commit == "京"


async def test_disposing_of_a_session_stops_its_work_and_closes_it():
    pauses, closed = Pauses(), []
    runner = SessionRunner(AtOnce(), AtOnce(), Published(), sleep=pauses.sleep)
    entry = entry_for(FakeConversion(WORDS))
    entry.session.close = lambda: closed.append(True)
    await typed(runner, entry, "kyou")
    task = entry.background_task
    runner.dispose(entry)
    await asyncio.gather(task, return_exceptions=True)
    await asyncio.sleep(0)
    assert task.cancelled() and closed == [True]
