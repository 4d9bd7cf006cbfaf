"""Root `Convert` in a process of its own, at the lowest CPU priority.

Any program on the bus may call Convert with readings of up to 1,000 kana. Made in the daemon's process, such a
conversion shares the interpreter's lock with every session's keys and the second core with their conversions:
under 8 callers keeping 8 calls each in flight, a typist's Space took ~100 ms instead of 8–35. In a child process
at nice 19 it shares neither the lock nor, while the keys want it, the CPU.

The child converts as the daemon's own converter would for Convert: Mozc's dictionary, the language model, the
neural model the daemon has ready (the same file, threads, beam width and number of the model's own candidates,
sent with each call) and the same spelling policy, none of the user's data; and without the document's own
words (daemon/dictionary/context_words.py), which need the reverse index the child does not build (3 s, 50 MB).
It starts on the first call, and again on the next call after it died.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import TYPE_CHECKING

from daemon.spelling import Spelling

if TYPE_CHECKING:
    from daemon.converter import Converter

LOWEST_PRIORITY = 19
IDLE_EXIT_S = 60.0
NO_MODEL_READY = "the daemon has no neural model ready"  # switched off, loading or failed there


@dataclass(frozen=True)
class ConverterSettings:
    """What of the daemon's settings a conversion uses: the neural model (None: none is ready), its settings, and
    the spelling policy."""

    model: str | None
    threads: int
    beam_width: int
    model_candidates: int
    spelling: Spelling = Spelling.RANKED


# The child's converter and the model settings it was last made for (set in the child only).
_child: tuple[Converter, ConverterSettings] | None = None


def _start_child() -> None:
    """The child's settings, before it makes any thread: the lowest CPU priority, the daemon's malloc tuning."""
    from daemon.allocator import tune_allocator

    os.nice(LOWEST_PRIORITY - os.nice(0))
    tune_allocator()


def _converter_for(settings: ConverterSettings) -> Converter:
    global _child
    from daemon.converter import Converter
    from daemon.dictionary import system_dictionary
    from daemon.engine import Engine
    from daemon.lm import load_language_model, load_word_vectors

    if _child is None:
        engine = Engine(n_threads=settings.threads, beam_width=settings.beam_width)
        converter = Converter(
            dictionary=system_dictionary(),
            engine=engine,
            language_model=load_language_model(),
            word_vectors=load_word_vectors(),
        )
        _child = converter, ConverterSettings(None, settings.threads, settings.beam_width, 0)
    converter, had = _child
    if settings != had:
        assert converter.engine is not None  # made with one above
        converter.engine.configure(settings.threads, settings.beam_width)
        converter.model_candidates = settings.model_candidates
        converter.spelling = settings.spelling
        if settings.model != had.model:
            if settings.model is None:
                converter.engine.unload(NO_MODEL_READY)
            else:
                converter.engine.load(settings.model).join()
        _child = converter, settings
    return converter


def convert_in_child(reading: str, context: str, n: int, settings: ConverterSettings) -> list[list[str]]:
    """Root Convert's answer: (text, source, annotation) of the first `n` candidates."""
    from daemon.conversion import PersonalData

    found = _converter_for(settings).candidates(reading, context, n, personal=PersonalData.NONE)
    return [[c.text, c.source.value, c.annotation] for c in found[:n]]


class StatelessWorker:
    """The child process and the calls sent to it, one at a time. The child exits after `idle_exit_s` without a
    call: its memory (~150 MiB resident after a thousand short conversions) goes back to the system, and the next
    call starts another (about a second)."""

    def __init__(self, idle_exit_s: float = IDLE_EXIT_S) -> None:
        self.idle_exit_s = idle_exit_s
        self._pool: ProcessPoolExecutor | None = None
        self._calls = 0  # under way
        self._idle_exit: asyncio.TimerHandle | None = None

    async def convert(self, reading: str, context: str, n: int, settings: ConverterSettings) -> list[list[str]]:
        """The child's answer. Raises what the conversion raised there (ReadingTooLong), or BrokenProcessPool if
        the child died meanwhile (the next call starts another)."""
        if self._idle_exit is not None:
            self._idle_exit.cancel()
            self._idle_exit = None
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                max_workers=1, mp_context=multiprocessing.get_context("spawn"), initializer=_start_child
            )
        pool = self._pool
        loop = asyncio.get_running_loop()
        self._calls += 1
        try:
            return await loop.run_in_executor(pool, convert_in_child, reading, context, n, settings)
        except BrokenProcessPool:
            if self._pool is pool:
                self._pool = None
            raise
        finally:
            self._calls -= 1
            if not self._calls:
                self._idle_exit = loop.call_later(self.idle_exit_s, self._exit_idle)

    @property
    def running(self) -> bool:
        return self._pool is not None

    def _exit_idle(self) -> None:
        self._idle_exit = None
        if not self._calls and self._pool is not None:
            self._pool.shutdown(wait=False)  # the idle child exits at once
            self._pool = None

    def shutdown(self) -> None:
        """Calls not begun are dropped; the one under way finishes; the child exits."""
        if self._idle_exit is not None:
            self._idle_exit.cancel()
            self._idle_exit = None
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
