"""The sessions' messages and the work that follows them, without D-Bus: each session's messages in order
under its lock on the key workers; after a key with live conversion on, a pause, then Space's conversion made in
advance on a worker of its own and the live text it improves; after Space answered without the neural model,
the model's ranking. What changes later is handed to `publish` (the server sends it as OutputChanged).

The executors and the pause's clock are given, so that the tests drive it without threads' timing.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import Executor
from typing import Any

from daemon.composer import InputMode
from daemon.conversion import ConversionCandidate, ReadingTooLong
from daemon.phases import PendingImprovement
from daemon.session import InputSession
from daemon.session_registry import SessionEntry
from ime_protocol import (
    Discard,
    FocusIn,
    FocusOut,
    KeyEvent,
    Output,
    Reset,
    SelectCandidate,
    SetInputMode,
    SurroundingText,
)
from ime_protocol.schema import WireRecord

log = logging.getLogger(__name__)

# How long after a key's live conversion the whole reading is converted in advance for Space (if no other
# key came): typing runs at 5–10 keys a second, so most pauses between keys are longer.
CONVERT_IN_ADVANCE_AFTER_S = 0.03


class SessionRunner:
    def __init__(
        self,
        keys: Executor,
        in_advance: Executor,
        publish: Callable[[SessionEntry, Output], None],
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        pause_s: float = CONVERT_IN_ADVANCE_AFTER_S,
    ):
        self._keys = keys  # the sessions' messages
        self._in_advance = in_advance  # conversions in advance and improvements: keys never queue behind them
        self._publish = publish
        self._sleep = sleep
        self._pause_s = pause_s

    async def apply(self, entry: SessionEntry, message: WireRecord) -> Output:
        """`message` applied to the entry's session after those before it; the work it calls for scheduled.
        Every message makes the session's pending work in advance stale."""
        entry.generation += 1
        is_key = isinstance(message, KeyEvent)
        entry.keys += is_key
        keys = entry.keys

        def latest_key() -> bool:  # no newer key is waiting, whose answer would carry the live conversion
            return entry.keys == keys

        loop = asyncio.get_running_loop()
        async with entry.lock:
            output = await loop.run_in_executor(self._keys, apply_message, entry.session, message, latest_key)
            pending = entry.session.conversion_to_improve()
        if pending is not None:
            self._run_in_background(entry, self._improvement(entry, pending, output.request_id))
        elif is_key and entry.session.settings.live_conversion:
            self._run_in_background(entry, self._in_advance_after_pause(entry, entry.generation, output.request_id))
        return output

    def dispose(self, entry: SessionEntry) -> None:
        """A session taken out of the registry: its background work stops and it closes on a key worker."""
        if entry.background_task is not None:
            entry.background_task.cancel()
        asyncio.get_running_loop().run_in_executor(self._keys, entry.session.close)

    async def _in_advance_after_pause(self, entry: SessionEntry, generation: int, request_id: int) -> None:
        """After a key answered with its live conversion: when the user pauses, Space's conversion, made in
        advance; published if its first candidate changes the live text. Dropped if another message comes after
        the key (`generation`: the entry's when the key was answered)."""
        await self._sleep(self._pause_s)  # while the user types on, the next key would make the work stale
        async with entry.lock:
            in_advance = entry.session.conversion_in_advance() if entry.generation == generation else None
        if in_advance is None:
            return
        candidates = await self._off_the_key_path(in_advance)
        if candidates is None:
            return
        async with entry.lock:
            if entry.generation != generation:
                return
            better = entry.session.improve_live(candidates, request_id)
        if better is not None:
            self._publish(entry, better)

    async def _improvement(self, entry: SessionEntry, pending: PendingImprovement, request_id: int) -> None:
        """After Space answered without waiting for the neural model: the model's ranking, published if the
        session takes it (the user is still on the conversion's first candidate) and it changes what is shown."""
        candidates = await self._off_the_key_path(pending.convert)
        if candidates is None:
            return
        async with entry.lock:
            better = entry.session.improve_conversion(pending, candidates, request_id)
        if better is not None:
            self._publish(entry, better)

    def _run_in_background(self, entry: SessionEntry, work: Coroutine[Any, Any, None]) -> None:
        """`work` as the session's one background task: the one before it is cancelled (its conversion, once
        started on the thread, still runs to the end and is kept)."""
        if entry.background_task is not None:
            entry.background_task.cancel()
        entry.background_task = asyncio.get_running_loop().create_task(work)

    async def _off_the_key_path(
        self, convert: Callable[[], list[ConversionCandidate]]
    ) -> list[ConversionCandidate] | None:
        """`convert()` on the in-advance worker; None if it fails (Space will convert again and report; typing
        goes on)."""
        try:
            return await asyncio.get_running_loop().run_in_executor(self._in_advance, convert)
        except ReadingTooLong:
            return None
        except Exception:  # noqa: BLE001
            log.exception("conversion off the key path failed")
            return None


def apply_message(session: InputSession, message: WireRecord, latest_key: Callable[[], bool] = lambda: True) -> Output:
    """One protocol message applied to a session; every message is answered with an Output. A key is answered
    with its live conversion (where that is on) if `latest_key()` says no newer key waits."""
    match message:
        case KeyEvent():
            return session.handle_key(message.keyval, message.modifiers, message.request_id, latest_key())
        case SelectCandidate():
            return session.select_candidate(message.index, message.request_id)
        case SurroundingText():
            session.surrounding = message
        case FocusIn():
            session.purpose = message.purpose
        case FocusOut() | Reset():
            return session.commit_shown()
        case Discard():
            return session.discard()
        case SetInputMode():
            return session.set_mode(InputMode(message.mode))  # the protocol checked it is one of INPUT_MODES
    return session.current_output()
