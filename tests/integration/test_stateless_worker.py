"""Root Convert's process (daemon/stateless_worker.py): a real child, against the converter the daemon would use
in its own process."""

import asyncio
import os
import signal
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest

from daemon.conversion import PersonalData, ReadingTooLong
from daemon.converter import Converter
from daemon.dictionary import system_dictionary
from daemon.engine import Engine
from daemon.lm import load_language_model, load_word_vectors
from daemon.spelling import Spelling
from daemon.stateless_worker import LOWEST_PRIORITY, ConverterSettings, StatelessWorker

READINGS = ["きょうはいいてんきですね", "かんじ", "しょうがっこう", "ABC123", "きしゃのきしゃがきしゃできしゃした"]


@pytest.fixture
def worker():
    started = StatelessWorker()
    yield started
    started.shutdown()


def answers(converter: Converter, reading: str, n: int) -> list[list[str]]:
    found = converter.candidates(reading, "", n, personal=PersonalData.NONE)
    return [[c.text, c.source.value, c.annotation] for c in found[:n]]


def spawned_children() -> list[int]:
    """This process's children that multiprocessing spawned to run work (not its resource tracker)."""
    pids = [
        int(pid)
        for task in Path(f"/proc/{os.getpid()}/task").iterdir()
        for pid in (task / "children").read_text().split()
    ]
    return [pid for pid in pids if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()]


async def test_the_child_converts_as_the_daemons_converter_with_the_model_and_without(worker, model_path):
    engine = Engine(n_threads=2, beam_width=4)
    engine.load(model_path).join()
    in_process = Converter(
        dictionary=system_dictionary(),
        engine=engine,
        language_model=load_language_model(),
        word_vectors=load_word_vectors(),
    )
    with_model = ConverterSettings(str(model_path), threads=2, beam_width=4, model_candidates=0)
    for reading in READINGS:
        assert await worker.convert(reading, "", 8, with_model) == answers(in_process, reading, 8), reading
    in_process.model_candidates = 3  # the model's own conversions too
    own = ConverterSettings(str(model_path), threads=2, beam_width=4, model_candidates=3)
    found = await worker.convert(READINGS[0], "", 8, own)
    assert found == answers(in_process, READINGS[0], 8) and "model" in {source for _, source, _ in found}
    without = Converter(
        dictionary=system_dictionary(), language_model=load_language_model(), word_vectors=load_word_vectors()
    )
    no_model = ConverterSettings(None, threads=2, beam_width=4, model_candidates=0)
    for reading in READINGS:
        assert await worker.convert(reading, "", 8, no_model) == answers(without, reading, 8), reading
    without.spelling = Spelling.OFFICIAL
    official = ConverterSettings(None, threads=2, beam_width=4, model_candidates=0, spelling=Spelling.OFFICIAL)
    found = await worker.convert("そのときはれんらくする", "", 8, official)
    assert found == answers(without, "そのときはれんらくする", 8) and found[0][0] == "そのときは連絡する"
    engine.close()


async def test_the_child_runs_at_the_lowest_priority_and_comes_back_after_it_dies(worker):
    settings = ConverterSettings(None, threads=1, beam_width=4, model_candidates=0)
    first = await worker.convert("かんじ", "", 3, settings)
    (child,) = spawned_children()
    niceness = int(Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[16])
    assert niceness == LOWEST_PRIORITY
    os.kill(child, signal.SIGKILL)
    with pytest.raises(BrokenProcessPool):
        await worker.convert("かんじ", "", 1, settings)
    assert await worker.convert("かんじ", "", 3, settings) == first  # from another child
    with pytest.raises(ReadingTooLong):  # raised in the child, as the converter raises it
        await worker.convert("\ufdfa" * 100, "", 1, settings)


async def test_an_idle_child_exits_and_the_next_call_starts_another():
    worker = StatelessWorker(idle_exit_s=0)
    settings = ConverterSettings(None, threads=1, beam_width=4, model_candidates=0)
    try:
        first = await worker.convert("かんじ", "", 3, settings)
        (child,) = spawned_children()
        while worker.running:  # turns of the loop until the idle timer has run
            await asyncio.sleep(0)
        assert await worker.convert("かんじ", "", 3, settings) == first
        assert len([pid for pid in spawned_children() if pid != child]) == 1  # another child answered
    finally:
        worker.shutdown()
