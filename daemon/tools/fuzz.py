"""`tsuzuri-fuzz`: protocol fuzzing of the wire codec, the session state machine and the D-Bus daemon.

    tsuzuri-fuzz [--cases N] [--dbus-cases M] [--seed S] [--json]

In process, each case is a frontend message — a valid one, a valid one with bytes flipped, cut or
appended, or random bytes — decoded with ime_protocol; what decodes is applied to one of a few input
sessions (real dictionary, no model) exactly as the daemon applies it, and the answer is encoded again.
Anything but a ProtocolError from decoding is a crash; a case slower than 2 s is a hang. Over D-Bus,
the same kinds of bytes go to a real daemon's sessions through `Send`, 32 at a time; every reply must
be an Output or a protocol error (never "internal error"), within 2 s. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from collections.abc import Iterator

from ime_protocol import (
    FRONTEND_MESSAGES,
    REQUEST_ID_MAX,
    Discard,
    FocusIn,
    FocusOut,
    InputPurpose,
    KeyEvent,
    Output,
    ProtocolError,
    Reset,
    SelectCandidate,
    SetInputMode,
    SurroundingText,
    decode,
    encode,
)
from ime_protocol.messages import INPUT_MODES

HANG_S = 2.0
DBUS_IN_FLIGHT = 32
# Keys people press, weighted toward typing: romaji, then the keys that convert, choose and edit.
_TYPING = "aiueokstnhmyrwgzdbpjfcv-,."
_NAMED = (
    0x20,
    0xFF0D,
    0xFF1B,
    0xFF08,
    0xFF09,
    0xFF51,
    0xFF52,
    0xFF53,
    0xFF54,
    0xFF55,
    0xFF56,
    0xFFC3,
    0xFFC4,
    0xFFC5,
    0xFFC6,
    0xFFC7,
    0xFF2A,
    0xFF23,
    0xFF22,
    *range(0x31, 0x3A),
)


def random_message(rng: random.Random):
    """A valid frontend message, mostly keys."""
    roll = rng.random()
    if roll < 0.80:
        if rng.random() < 0.7:
            keyval = ord(rng.choice(_TYPING))
        elif rng.random() < 0.9:
            keyval = rng.choice(_NAMED)
        else:
            keyval = rng.randrange(0, 1 << 32)
        modifiers = 0 if rng.random() < 0.85 else rng.choice((1, 4, 8, 1 << 30, rng.randrange(0, 1 << 32)))
        return KeyEvent(keyval, rng.randrange(0, 256), modifiers, rng.randrange(0, REQUEST_ID_MAX + 1))
    if roll < 0.85:
        return SelectCandidate(rng.randrange(0, 300), rng.randrange(0, REQUEST_ID_MAX + 1))
    if roll < 0.90:
        text = "".join(
            chr(rng.choice((rng.randrange(0x20, 0x7F), rng.randrange(0x3041, 0x3097), rng.randrange(0x4E00, 0x9FFF))))
            for _ in range(rng.randrange(0, 60))
        )
        cursor = rng.randrange(0, len(text) + 1)
        return SurroundingText(text, cursor, rng.randrange(0, len(text) + 1) if rng.random() < 0.3 else cursor)
    if roll < 0.94:
        return FocusIn(rng.choice(list(InputPurpose)))
    if roll < 0.96:
        return SetInputMode(rng.choice(sorted(INPUT_MODES)))
    return rng.choice((FocusOut(), Reset(), Discard()))


def random_bytes(rng: random.Random) -> bytes:
    """The wire bytes of a case: valid (70 %), damaged (25 %) or random (5 %)."""
    roll = rng.random()
    if roll < 0.05:
        return rng.randbytes(rng.randrange(0, 200))
    data = bytearray(encode(random_message(rng)))
    if roll < 0.75:
        return bytes(data)
    for _ in range(rng.randrange(1, 4)):
        action = rng.randrange(3)
        if action == 0 and data:
            data[rng.randrange(len(data))] = rng.randrange(256)
        elif action == 1 and data:
            del data[rng.randrange(len(data)) :]
        else:
            data += rng.randbytes(rng.randrange(1, 16))
    return bytes(data)


def cases(seed: int, count: int) -> Iterator[bytes]:
    rng = random.Random(seed)
    for _ in range(count):
        yield random_bytes(rng)


def fuzz_in_process(count: int, seed: int) -> dict:
    from daemon.converter import Converter
    from daemon.dictionary import system_dictionary, system_reader
    from daemon.session import InputSession
    from daemon.session_runner import apply_message

    converter = Converter(dictionary=system_dictionary())
    converter.candidates("じゅんび")  # as the daemon warms up before it serves: the dictionary and reading index
    system_reader().load()
    sessions = [InputSession(converter) for _ in range(4)]
    rng = random.Random(seed + 1)
    decoded = crashes = hangs = 0
    slowest = 0.0
    examples: list[str] = []
    started = time.monotonic()
    for data in cases(seed, count):
        start = time.perf_counter()
        try:
            message = decode(data, FRONTEND_MESSAGES)
        except ProtocolError:
            message = None
        except Exception as error:  # noqa: BLE001 — what the fuzzer is looking for
            crashes += 1
            examples.append(f"decode {data!r:.80}: {type(error).__name__}: {error}")
            message = None
        if message is not None:
            decoded += 1
            try:
                encode(apply_message(rng.choice(sessions), message))
            except Exception as error:  # noqa: BLE001
                crashes += 1
                examples.append(f"apply {message!r:.80}: {type(error).__name__}: {error}")
        elapsed = time.perf_counter() - start
        slowest = max(slowest, elapsed)
        hangs += elapsed > HANG_S
    return {
        "cases": count,
        "decoded": decoded,
        "crashes": crashes,
        "hangs": hangs,
        "slowest_ms": round(slowest * 1000, 1),
        "seconds": round(time.monotonic() - started, 1),
        "examples": examples[:5],
    }


async def _fuzz_dbus(address: str, count: int, seed: int) -> dict:
    from dbus_fast import Message, MessageType

    from daemon.tools.client import ClientSession, call, connect, wait_for_status
    from ime_protocol.dbus_names import BUS_NAME, ERROR_PROTOCOL, SESSION_INTERFACE

    bus = await connect(address)
    await wait_for_status(bus, 60)
    sessions = [await ClientSession.create(bus) for _ in range(4)]
    rng = random.Random(seed + 1)
    answered = refused = crashes = hangs = 0
    slowest = 0.0
    examples: list[str] = []
    pending = iter(cases(seed, count))
    started = time.monotonic()

    async def one(data: bytes) -> None:
        nonlocal answered, refused, crashes, hangs, slowest
        start = time.perf_counter()
        message = Message(
            destination=BUS_NAME,
            path=rng.choice(sessions).path,
            interface=SESSION_INTERFACE,
            member="Send",
            signature="ay",
            body=[data],
        )
        try:
            reply = await asyncio.wait_for(bus.call(message), HANG_S * 5)
        except TimeoutError:
            hangs += 1
            return
        slowest = max(slowest, time.perf_counter() - start)
        if reply.message_type is MessageType.METHOD_RETURN:
            decode(bytes(reply.body[0]), Output)
            answered += 1
        elif reply.error_name == ERROR_PROTOCOL:
            refused += 1
        else:
            crashes += 1
            examples.append(f"{data!r:.80}: {reply.error_name}: {reply.body[0] if reply.body else ''}")

    async def worker() -> None:
        for data in pending:
            await one(data)

    await asyncio.gather(*(worker() for _ in range(DBUS_IN_FLIGHT)))
    (status,) = await call(bus, "GetStatus")
    bus.disconnect()
    return {
        "cases": count,
        "answered": answered,
        "refused": refused,
        "crashes": crashes,
        "hangs": hangs,
        "slowest_ms": round(slowest * 1000, 1),
        "seconds": round(time.monotonic() - started, 1),
        "daemon_serving_after": bool(status),
        "examples": examples[:5],
    }


def fuzz_over_dbus(count: int, seed: int) -> dict:
    from daemon.tools.bench import _with_daemon

    return _with_daemon("none", lambda address, _pid: asyncio.run(_fuzz_dbus(address, count, seed)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tsuzuri-fuzz", description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=1_000_000, help="in-process cases (default 10^6)")
    parser.add_argument("--dbus-cases", type=int, default=100_000, help="cases over D-Bus (default 10^5)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print one JSON object (the default)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory():
        result = {
            "seed": args.seed,
            "in_process": fuzz_in_process(args.cases, args.seed),
            "dbus": fuzz_over_dbus(args.dbus_cases, args.seed) if args.dbus_cases else None,
        }
    print(json.dumps(result, ensure_ascii=False))
    failed = any(part and (part["crashes"] or part["hangs"]) for part in (result["in_process"], result["dbus"]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
