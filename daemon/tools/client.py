"""`tsuzuri-client`: the D-Bus test client.

tsuzuri-client [--bus ADDRESS] status [--wait SECONDS] [--json]
tsuzuri-client [--bus ADDRESS] convert READING [--context TEXT] [--n N] [--json]
tsuzuri-client [--bus ADDRESS] type KEYS [--key NAME ...] [--json]
tsuzuri-client [--bus ADDRESS] repl
tsuzuri-client [--bus ADDRESS] dict list [--json] | add READING SURFACE [POS] [--comment TEXT]
               | remove READING SURFACE | import FILE | export FILE
tsuzuri-client [--bus ADDRESS] learning list [READING] [--json] | forget READING [SURFACE] | clear
tsuzuri-client [--bus ADDRESS] settings [KEY=VALUE ...]   (conversion.live=true; VALUE as TOML writes it)

`type` and `repl` type on the daemon's private channel, as the frontends do (daemon/private_channel.py).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

from dbus_fast import Message, MessageType
from dbus_fast.aio import MessageBus

from daemon.bus import connect_bus
from daemon.keys import keyval_of
from daemon.userdata.storage import atomic_write_bytes
from daemon.userdata.user_dictionary import DEFAULT_PART_OF_SPEECH, PARTS_OF_SPEECH, UserEntry, format_entry_line
from ime_protocol import KeyEvent, Output, decode, encode
from ime_protocol.dbus_names import BUS_NAME, ROOT_PATH, SESSION_INTERFACE

_request_ids = itertools.count(1)
LEARNED_TIME = "%Y-%m-%d %H:%M"  # when a choice was last made, in `learning list`


class ClientError(RuntimeError):
    pass


async def connect(address: str | None) -> MessageBus:
    return await connect_bus(address)


async def call(
    bus: MessageBus,
    member: str,
    signature: str = "",
    body: list | None = None,
    path: str = ROOT_PATH,
    interface: str = BUS_NAME,
    destination: str = BUS_NAME,
) -> list:
    reply = await genuine_reply(
        bus,
        Message(
            destination=destination, path=path, interface=interface, member=member, signature=signature, body=body or []
        ),
    )
    if reply.message_type is MessageType.ERROR:
        raise ClientError(f"{reply.error_name}: {reply.body[0] if reply.body else ''}")
    return reply.body


BUS_DAEMON = "org.freedesktop.DBus"
# The connection that owned each well-known name when last asked, by bus connection (id: dbus-fast's buses take
# no weak references). Only a shortcut: an answer from anyone else makes genuine_reply ask the bus daemon again.
_owners: dict[int, dict[str, str]] = {}


async def genuine_reply(bus: MessageBus, message: Message) -> Message:
    """The answer of the connection the call went to. On a session bus any program of the user may watch the calls
    and answer one first with its serial, and dbus-fast takes the first answer; here an answer counts only if it
    comes from the bus daemon itself (which no client can pose as) or from the connection that owns the
    destination name, as the bus daemon says. Any other is ignored, and the genuine answer still awaited."""
    destination = message.destination
    assert destination is not None  # a method call names its destination
    message.serial = bus.next_serial()
    answers: asyncio.Queue[Message] = asyncio.Queue()

    def on_message(received: Message) -> bool:
        if (
            received.message_type in (MessageType.METHOD_RETURN, MessageType.ERROR)
            and received.reply_serial == message.serial
        ):
            answers.put_nowait(received)
            return True
        return False

    bus.add_message_handler(on_message)
    try:
        await bus.send(message)
        while True:
            answer = await answers.get()
            if answer.sender is None:  # a bus stamps every message: a connection of its own, to the daemon alone
                return answer
            known = _owners.get(id(bus), {}).get(destination)
            if answer.sender in (BUS_DAEMON, destination, known) or answer.sender == await _owner(bus, destination):
                return answer
    finally:
        bus.remove_message_handler(on_message)


async def _owner(bus: MessageBus, name: str) -> str | None:
    """The unique name owning `name` now, as the bus daemon says (and remembered), None if none."""
    if name.startswith(":") or name == BUS_DAEMON:
        return None  # a unique name, and the bus daemon, answer only as themselves
    reply = await genuine_reply(
        bus,
        Message(
            destination=BUS_DAEMON,
            path="/org/freedesktop/DBus",
            interface=BUS_DAEMON,
            member="GetNameOwner",
            signature="s",
            body=[name],
        ),
    )
    if reply.message_type is not MessageType.METHOD_RETURN:
        return None
    _owners.setdefault(id(bus), {})[name] = reply.body[0]
    return reply.body[0]


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
    await call(
        bus,
        "AddMatch",
        "s",
        [f"type='signal',interface='{BUS_NAME}',member='StatusChanged'"],
        path="/org/freedesktop/DBus",
        interface="org.freedesktop.DBus",
        destination="org.freedesktop.DBus",
    )
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


class ClientSession:
    """A daemon session seen from this client: its object path on a connection, and the calls it takes."""

    def __init__(self, bus: MessageBus, path: str, own_connection: bool = False):
        self.bus = bus
        self.path = path
        self.own_connection = own_connection  # closing the session disconnects it

    @classmethod
    async def create(cls, bus: MessageBus) -> ClientSession:
        """A session on `bus` itself (on a session bus, what it is sent and answers can be watched)."""
        return cls(bus, (await call(bus, "CreateSession"))[0])

    @classmethod
    async def private(cls, bus: MessageBus) -> ClientSession:
        """A session on a connection of its own to the daemon's private channel, as the frontends make theirs:
        nothing typed into it crosses the bus. The channel's address is taken from the daemon alone (`call`)."""
        (address,) = await call(bus, "GetChannelAddress")
        channel = await connect_bus(address)
        try:
            return cls(channel, (await call(channel, "CreateSession"))[0], own_connection=True)
        except BaseException:
            channel.disconnect()
            raise

    async def send(self, message) -> Output:
        (data,) = await call(self.bus, "Send", "ay", [encode(message)], self.path, SESSION_INTERFACE)
        return decode(bytes(data), Output)

    async def key(self, name: str, modifiers: int = 0) -> Output:
        return await self.send(KeyEvent(keyval_of(name), 0, modifiers, next(_request_ids)))

    async def close(self) -> None:
        try:
            await call(self.bus, "Close", path=self.path, interface=SESSION_INTERFACE)
        finally:
            if self.own_connection:
                self.bus.disconnect()


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
    session = await ClientSession.private(bus)
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
    session = await ClientSession.private(bus)
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


async def user_words(bus: MessageBus) -> list[UserEntry]:
    (words,) = await call(bus, "ListUserWords")
    return [UserEntry(*word) for word in words]


async def manage_dictionary(bus: MessageBus, args: argparse.Namespace) -> int:
    if args.action == "list":
        words = await user_words(bus)
        if args.json:
            print(json.dumps([asdict(word) for word in words], ensure_ascii=False))
        else:
            for word in words:
                print(format_entry_line(word))
    elif args.action == "add":
        (added,) = await call(bus, "AddUserWord", "ssss", [args.reading, args.surface, args.pos, args.comment])
        print("added" if added else "already there (its comment is updated)")
    elif args.action == "remove":
        (removed,) = await call(bus, "RemoveUserWord", "ss", [args.reading, args.surface])
        if not removed:
            raise ClientError(f"no word {args.surface} for {args.reading} in the user dictionary")
        print("removed")
    elif args.action == "import":
        added, skipped = await call(bus, "ImportUserWords", "ay", [args.file.read_bytes()])
        print(f"added {added} words")
        if skipped:
            # Every line that was not imported, so that nothing is lost without the user knowing.
            print(f"{args.file}: {len(skipped)} lines not imported:", file=sys.stderr)
            for line_number, reason, text in skipped:
                print(f"  line {line_number}: {reason}: {text!r}", file=sys.stderr)
            return 1
    else:  # export, in Mozc's format: Mozc, Google IME and Tsuzuri import it
        words = await user_words(bus)
        atomic_write_bytes(args.file, "".join(f"{format_entry_line(word)}\n" for word in words).encode("utf-8"))
        print(f"exported {len(words)} words to {args.file}")
    return 0


async def manage_learning(bus: MessageBus, args: argparse.Namespace) -> int:
    if args.action == "list":
        (choices,) = await call(bus, "ListLearned", "s", [args.reading])
        if args.json:
            print(
                json.dumps(
                    [
                        {"reading": reading, "surface": surface, "weight": weight, "last_used": last_used}
                        for reading, surface, weight, last_used in choices
                    ],
                    ensure_ascii=False,
                )
            )
        else:
            for reading, surface, weight, last_used in choices:
                print(f"{reading}\t{surface}\t{weight:.2f}\t{time.strftime(LEARNED_TIME, time.localtime(last_used))}")
    elif args.action == "forget":
        (forgotten,) = await call(bus, "ForgetLearned", "ss", [args.reading, args.surface])
        if not forgotten:
            raise ClientError(f"nothing learned for {args.reading}{' as ' + args.surface if args.surface else ''}")
        print(f"forgot {forgotten} choices")
    else:
        (forgotten,) = await call(bus, "ClearLearned")
        print(f"forgot {forgotten} choices")
    return 0


async def change_settings(bus: MessageBus, assignments: list[str]) -> int:
    """Without assignments, print every setting; with them, set each and print the daemon's problems."""
    if not assignments:
        (settings,) = await call(bus, "GetSettings")
        for key, literal in sorted(settings.items()):
            print(f"{key} = {literal}")
        return 0
    literals = {}
    for assignment in assignments:
        key, equals, literal = assignment.partition("=")
        if not equals:
            raise ClientError(f"{assignment!r}: expected KEY=VALUE, like conversion.live=true")
        literals[key.strip()] = literal.strip()
    (problems,) = await call(bus, "SetSettings", "a{ss}", [literals])
    for problem in problems:
        print(problem)
    return 0


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
                print(json.dumps([{"text": t, "source": s, "annotation": a} for t, s, a in found], ensure_ascii=False))
            else:
                for i, (text, source, annotation) in enumerate(found, 1):
                    print(f"{i}. {text}\t{source}{' ' + annotation if annotation else ''}")
        elif args.command == "dict":
            return await manage_dictionary(bus, args)
        elif args.command == "learning":
            return await manage_learning(bus, args)
        elif args.command == "settings":
            return await change_settings(bus, args.assignments)
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
    status.add_argument(
        "--wait", type=float, default=0.0, help="wait this long for the daemon to appear and its model to load"
    )
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
    words = sub.add_parser("dict", help="your own words (the user dictionary)").add_subparsers(
        dest="action", required=True
    )
    words.add_parser("list", help="every word: reading, surface, part of speech, comment").add_argument(
        "--json", action="store_true"
    )
    add = words.add_parser("add", help="add a word; it converts at once")
    add.add_argument("reading")
    add.add_argument("surface")
    add.add_argument(
        "pos",
        nargs="?",
        default=DEFAULT_PART_OF_SPEECH,
        metavar="POS",
        help=f"Mozc's part of speech (default {DEFAULT_PART_OF_SPEECH}; 抑制単語 hides SURFACE for "
        f"READING): {' '.join(sorted(PARTS_OF_SPEECH))}",
    )
    add.add_argument("--comment", default="", help="shown beside the candidate")
    remove = words.add_parser("remove", help="remove a word")
    remove.add_argument("reading")
    remove.add_argument("surface")
    words.add_parser(
        "import", help="add the words of a Mozc / Google IME (TSV) or Microsoft IME (text) export"
    ).add_argument("file", type=Path)
    words.add_parser("export", help="write every word in Mozc's TSV format").add_argument("file", type=Path)
    learning = sub.add_parser("learning", help="what was learned from your choices").add_subparsers(
        dest="action", required=True
    )
    learned = learning.add_parser("list", help="reading, surface, weight (times chosen, fading), last used")
    learned.add_argument("reading", nargs="?", default="", help="only this reading's choices")
    learned.add_argument("--json", action="store_true")
    forget = learning.add_parser("forget", help="forget one choice, or every choice for a reading")
    forget.add_argument("reading")
    forget.add_argument("surface", nargs="?", default="")
    learning.add_parser("clear", help="forget everything learned")
    sub.add_parser("settings", help="show the configuration in use, or set some of it in the file").add_argument(
        "assignments", nargs="*", metavar="KEY=VALUE", help="conversion.live=true, input.punctuation='\"，．\"'"
    )
    args = parser.parse_args(argv)
    try:
        return asyncio.run(run(args))
    except (ClientError, ConnectionError, OSError, ValueError) as exc:
        print(f"tsuzuri-client: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
