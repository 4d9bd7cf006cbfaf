"""`tsuzuri-client`: the D-Bus test client.

  tsuzuri-client [--bus ADDRESS] status [--wait SECONDS] [--json]
  tsuzuri-client [--bus ADDRESS] convert READING [--context TEXT] [--n N] [--json]
  tsuzuri-client [--bus ADDRESS] type KEYS [--key NAME ...] [--json]
  tsuzuri-client [--bus ADDRESS] repl
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import sys

from dbus_fast import Message, MessageType
from dbus_fast.aio import MessageBus

from daemon.bus import connect_bus
from daemon.keys import keyval_of
from ime_protocol import KeyEvent, Output, decode, encode
from ime_protocol.dbus_names import BUS_NAME, ROOT_PATH, SESSION_INTERFACE

_request_ids = itertools.count(1)


class ClientError(RuntimeError):
    pass


async def connect(address: str | None) -> MessageBus:
    return await connect_bus(address)


async def call(bus: MessageBus, member: str, signature: str = "", body: list | None = None,
               path: str = ROOT_PATH, interface: str = BUS_NAME, destination: str = BUS_NAME) -> list:
    reply = await bus.call(Message(destination=destination, path=path, interface=interface, member=member,
                                   signature=signature, body=body or []))
    if reply.message_type is MessageType.ERROR:
        raise ClientError(f"{reply.error_name}: {reply.body[0] if reply.body else ''}")
    return reply.body


async def wait_for_status(bus: MessageBus, seconds: float) -> tuple[str, str, str]:
    """The daemon's status once its model is no longer loading; waits up to `seconds` for the daemon to
    appear (or activate) on the bus and for its model to be ready or to fail, then answers what it has."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    changed = asyncio.Event()

    def on_status_changed(message: Message) -> None:
        if message.member == "StatusChanged" and message.interface == BUS_NAME:
            changed.set()

    bus.add_message_handler(on_status_changed)
    await call(bus, "AddMatch", "s", [f"type='signal',interface='{BUS_NAME}',member='StatusChanged'"],
               path="/org/freedesktop/DBus", interface="org.freedesktop.DBus", destination="org.freedesktop.DBus")
    try:
        while True:
            changed.clear()
            try:
                status = tuple((await call(bus, "GetStatus"))[0])
            except ClientError:
                if loop.time() >= deadline:
                    raise
                await asyncio.sleep(0.1)  # not on the bus yet: nothing to be told by
                continue
            if status[0] != "loading" or loop.time() >= deadline:
                return status
            try:
                await asyncio.wait_for(changed.wait(), deadline - loop.time())
            except TimeoutError:
                pass
    finally:
        bus.remove_message_handler(on_status_changed)


class Session:
    def __init__(self, bus: MessageBus, path: str):
        self.bus = bus
        self.path = path

    @classmethod
    async def create(cls, bus: MessageBus) -> Session:
        return cls(bus, (await call(bus, "CreateSession"))[0])

    async def send(self, message) -> Output:
        (data,) = await call(self.bus, "Send", "ay", [encode(message)], self.path, SESSION_INTERFACE)
        return decode(bytes(data), Output)

    async def key(self, name: str, modifiers: int = 0) -> Output:
        return await self.send(KeyEvent(keyval_of(name), 0, modifiers, next(_request_ids)))

    async def close(self) -> None:
        await call(self.bus, "Close", path=self.path, interface=SESSION_INTERFACE)


def output_summary(output: Output, committed: str) -> dict:
    window = output.candidates
    return {
        "committed": committed,
        "preedit": output.preedit.text,
        "segments": [s.text for s in output.preedit.segments],
        "cursor": output.preedit.cursor,
        "candidates": [i.text for i in window.items] if window else [],
        "candidate_cursor": window.cursor if window else None,
        "aux": output.aux,
        "mode": output.mode,
    }


async def type_keys(bus: MessageBus, keys: str, named: list[str]) -> dict:
    session = await Session.create(bus)
    committed = ""
    output = None
    try:
        for name in [*keys, *named]:
            output = await session.key(name)
            committed += output.commit
    finally:
        await session.close()
    return output_summary(output, committed) if output else {"committed": "", "preedit": ""}


async def repl(bus: MessageBus) -> None:
    session = await Session.create(bus)
    print("type romaji; words in <angle brackets> are key names (<space> <Return> <F7>); Ctrl-D quits")
    loop = asyncio.get_running_loop()
    try:
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            committed, output = "", None
            for token in _tokens(line.rstrip("\n")):
                output = await session.key(token)
                committed += output.commit
            if output is not None:
                print(json.dumps(output_summary(output, committed), ensure_ascii=False))
    finally:
        await session.close()


def _tokens(line: str) -> list[str]:
    tokens, rest = [], line
    while rest:
        if rest.startswith("<") and ">" in rest:
            name, rest = rest[1:].split(">", 1)
            tokens.append(name)
        else:
            tokens.append(rest[0])
            rest = rest[1:]
    return tokens


async def run(args: argparse.Namespace) -> int:
    bus = await connect(args.bus)
    try:
        if args.command == "status":
            state, model, reason = await wait_for_status(bus, args.wait)
            result = {"state": state, "model": model, "reason": reason}
            print(json.dumps(result, ensure_ascii=False) if args.json else f"{state} {model} {reason}".strip())
        elif args.command == "convert":
            (found,) = await call(bus, "Convert", "ssu", [args.reading, args.context, args.n])
            if args.json:
                print(json.dumps([{"text": t, "source": s, "annotation": a} for t, s, a in found],
                                 ensure_ascii=False))
            else:
                for i, (text, source, annotation) in enumerate(found, 1):
                    print(f"{i}. {text}\t{source}{' ' + annotation if annotation else ''}")
        elif args.command == "type":
            result = await type_keys(bus, args.keys, args.key)
            if args.json:
                print(json.dumps(result, ensure_ascii=False))
            else:
                print(f"committed: {result['committed']}\npreedit: {result['preedit']}")
                for i, text in enumerate(result.get("candidates", []), 1):
                    print(f"  {i}. {text}")
        else:
            await repl(bus)
    finally:
        bus.disconnect()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tsuzuri-client", description="Tsuzuri D-Bus test client")
    parser.add_argument("--bus", help="D-Bus address (default: the session bus)")
    sub = parser.add_subparsers(dest="command", required=True)
    status = sub.add_parser("status", help="model state")
    status.add_argument("--wait", type=float, default=0.0,
                        help="wait this long for the daemon to appear and its model to load")
    status.add_argument("--json", action="store_true")
    convert = sub.add_parser("convert", help="stateless conversion")
    convert.add_argument("reading")
    convert.add_argument("--context", default="")
    convert.add_argument("--n", type=int, default=5)
    convert.add_argument("--json", action="store_true")
    typing = sub.add_parser("type", help="type romaji keys, then named keys, in a new session")
    typing.add_argument("keys")
    typing.add_argument("--key", action="append", default=[], help="a named key after the romaji (space, Return…)")
    typing.add_argument("--json", action="store_true")
    sub.add_parser("repl", help="interactive session")
    args = parser.parse_args(argv)
    try:
        return asyncio.run(run(args))
    except (ClientError, ConnectionError, OSError, ValueError) as exc:
        print(f"tsuzuri-client: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
