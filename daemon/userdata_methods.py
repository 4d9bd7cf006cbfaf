"""The D-Bus methods that read and change the user's own words and learning history, for callers running as the
daemon's user only; a change is seen by the next conversion and saved at once:
  ListUserWords() -> a(ssss)         (reading, surface, part of speech, comment)
  AddUserWord(s reading, s surface, s part_of_speech, s comment) -> b added (false: it was there)
  RemoveUserWord(s reading, s surface) -> b removed
  ImportUserWords(ay file) -> u added, a(uss) skipped   a Mozc / Google IME or Microsoft IME export; each line not
                                     imported as (line number, why, its text)
  ListLearned(s reading) -> a(ssdd)  (reading, surface, weight, last used as Unix time); "": every reading
  ForgetLearned(s reading, s surface) -> u forgotten    "" surface: every choice for the reading
  ClearLearned() -> u forgotten
Each handler takes the service (`UserDataHost`) first, as the server's method table calls them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from dbus_fast import Message

from daemon.dbus_errors import ERROR_FAILED, ERROR_INVALID_ARGS, ERROR_LIMITS, CallError
from daemon.dbus_interface import Arg, Method
from daemon.kana import to_hiragana
from daemon.parts import LEARNING_SAVE_SECONDS, DaemonParts
from daemon.userdata.storage import InvalidEntry, LineFileStore, UnwritableStore

MAX_IMPORT_BYTES = 16 * 1024 * 1024  # a Mozc user dictionary at its limit of 1,000,000 words is about this
MAX_ECHOED_LINE = 200  # characters of a skipped import line sent back

Store = TypeVar("Store", bound=LineFileStore)
T = TypeVar("T")


class UserDataHost(Protocol):
    parts: DaemonParts

    async def require_same_user(self, sender: str) -> None: ...


async def list_user_words(host: UserDataHost, msg: Message) -> list[Any]:
    entries = await _read(host, msg, host.parts.user_dictionary, lambda words: words.entries())
    return [[[e.reading, e.surface, e.part_of_speech, e.comment] for e in entries]]


async def add_user_word(
    host: UserDataHost, msg: Message, reading: str, surface: str, part_of_speech: str, comment: str
) -> list[Any]:
    return [
        await _change(
            host, msg, host.parts.user_dictionary, lambda words: words.add(reading, surface, part_of_speech, comment)
        )
    ]


async def remove_user_word(host: UserDataHost, msg: Message, reading: str, surface: str) -> list[Any]:
    return [await _change(host, msg, host.parts.user_dictionary, lambda words: words.remove(reading, surface.strip()))]


async def import_user_words(host: UserDataHost, msg: Message, data: bytes) -> list[Any]:
    if len(data) > MAX_IMPORT_BYTES:
        raise CallError(ERROR_LIMITS, f"an import may have at most {MAX_IMPORT_BYTES // 2**20} MiB")
    report = await _change(host, msg, host.parts.user_dictionary, lambda words: words.import_bytes(bytes(data)))
    skipped = [[line.line_number, line.reason, line.text[:MAX_ECHOED_LINE]] for line in report.skipped]
    return [report.loaded, skipped]


async def list_learned(host: UserDataHost, msg: Message, reading: str) -> list[Any]:
    choices = await _read(
        host, msg, host.parts.learning, lambda learning: learning.choices(to_hiragana(reading.strip()) or None)
    )
    return [[[c.reading, c.surface, c.weight, c.last_used] for c in choices]]


async def forget_learned(host: UserDataHost, msg: Message, reading: str, surface: str) -> list[Any]:
    return [
        await _change(
            host,
            msg,
            host.parts.learning,
            lambda learning: learning.forget(to_hiragana(reading.strip()), surface.strip() or None),
        )
    ]


async def clear_learned(host: UserDataHost, msg: Message) -> list[Any]:
    return [await _change(host, msg, host.parts.learning, lambda learning: learning.clear())]


async def _read(host: UserDataHost, msg: Message, store: Store | None, read: Callable[[Store], T]) -> T:
    await host.require_same_user(msg.sender)
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(None, host.parts.converter.read_userdata, _kept(store), read)


async def _change(host: UserDataHost, msg: Message, store: Store | None, change: Callable[[Store], T]) -> T:
    """`change` applied to `store` and saved (off the event loop: saving waits for the disk)."""
    await host.require_same_user(msg.sender)
    loop = asyncio.get_running_loop()
    try:
        return await loop.run_in_executor(None, host.parts.converter.change_userdata, _kept(store), change)
    except InvalidEntry as error:
        raise CallError(ERROR_INVALID_ARGS, str(error)) from None
    except UnwritableStore as error:
        raise CallError(ERROR_FAILED, str(error)) from None
    except OSError as error:
        raise CallError(
            ERROR_FAILED,
            f"changed, but not saved yet ({error}); the daemon tries again every {LEARNING_SAVE_SECONDS:.0f} s",
        ) from None


def _kept(store: Store | None) -> Store:
    if store is None:
        raise CallError(ERROR_FAILED, "this daemon keeps no such user data")
    return store


USER_DATA_METHODS = (
    Method("ListUserWords", list_user_words, outputs=(Arg("words", "a(ssss)"),)),
    Method(
        "AddUserWord",
        add_user_word,
        (Arg("reading", "s"), Arg("surface", "s"), Arg("part_of_speech", "s"), Arg("comment", "s")),
        (Arg("added", "b"),),
    ),
    Method("RemoveUserWord", remove_user_word, (Arg("reading", "s"), Arg("surface", "s")), (Arg("removed", "b"),)),
    Method("ImportUserWords", import_user_words, (Arg("file", "ay"),), (Arg("added", "u"), Arg("skipped", "a(uss)"))),
    Method("ListLearned", list_learned, (Arg("reading", "s"),), (Arg("choices", "a(ssdd)"),)),
    Method("ForgetLearned", forget_learned, (Arg("reading", "s"), Arg("surface", "s")), (Arg("forgotten", "u"),)),
    Method("ClearLearned", clear_learned, outputs=(Arg("forgotten", "u"),)),
)
