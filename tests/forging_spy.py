"""A program of the user that eavesdrops on every message on the session bus and, unless passive, answers each call
to the daemon first, with its serial, as if it were the daemon: Send with an Output whose preedit is FORGED,
CreateSession with a session of its own, GetNameOwner with its own name, GetChannelAddress with the address of a
socket of its own (whoever connects there is counted). For the tests that every client takes only the daemon's
answers and that nothing typed through a frontend crosses the bus.

    python -m tests.forging_spy --bus ADDRESS [--passive]
        prints "ready"; on end of input, a JSON line: {"forged": answers given, "typed_seen": messages seen that
        carry a session's traffic (Send, its reply, OutputChanged), "channel_connections": connections to its socket}
"""

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path

from dbus_fast import Message, MessageType
from dbus_fast.aio import MessageBus

from daemon.bus import call_bus_daemon
from ime_protocol import Output, Preedit, PreeditSegment, SegmentStyle, encode

FORGED_TEXT = "FORGED"


def forgery(message: Message, own_name: str, own_address: str) -> tuple[str, list] | None:
    """The answer the spy gives in the daemon's place, or None for a call it leaves alone."""
    if message.member == "Send":
        output = Output(
            request_id=0,
            consumed=True,
            commit=FORGED_TEXT,
            preedit=Preedit((PreeditSegment(FORGED_TEXT, SegmentStyle.UNDERLINE),), 6),
            candidates=None,
            aux="",
            mode="hiragana",
        )
        return "ay", [encode(output)]
    if message.member == "CreateSession":
        return "o", ["/org/tsuzuri/Tsuzuri1/session/999"]
    if message.member == "GetNameOwner":
        return "s", [own_name]
    if message.member == "GetChannelAddress":
        return "s", [own_address]
    return None


def carries_typing(message: Message) -> bool:
    """A session's traffic: a Send, a reply holding an Output, an OutputChanged signal."""
    return message.member in ("Send", "OutputChanged") or (
        message.message_type is MessageType.METHOD_RETURN and message.signature == "ay"
    )


async def main(address: str, passive: bool) -> None:
    spy = await MessageBus(bus_address=address).connect()
    counts = {"forged": 0, "typed_seen": 0, "channel_connections": 0}
    folder = tempfile.TemporaryDirectory(prefix="tsuzuri-spy-")
    socket_path = Path(folder.name) / "channel"

    async def connected(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        counts["channel_connections"] += 1
        writer.close()

    server = await asyncio.start_unix_server(connected, str(socket_path))

    def answer_first(message: Message) -> bool:
        if message.sender == spy.unique_name:
            return False
        counts["typed_seen"] += carries_typing(message)
        if message.message_type is not MessageType.METHOD_CALL or message.destination == spy.unique_name:
            return False
        answer = None if passive else forgery(message, spy.unique_name or "", f"unix:path={socket_path}")
        if answer is not None:
            spy.send(
                Message(
                    message_type=MessageType.METHOD_RETURN,
                    destination=message.sender,
                    reply_serial=message.serial,
                    signature=answer[0],
                    body=answer[1],
                )
            )
            counts["forged"] += 1
        return True  # no error answered in the daemon's place either

    spy.add_message_handler(answer_first)
    for kind in ("method_call", "method_return", "error", "signal"):
        await call_bus_daemon(spy, "AddMatch", "s", [f"type='{kind}',eavesdrop=true"])
    print("ready", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    print(json.dumps(counts), flush=True)
    server.close()
    spy.disconnect()
    folder.cleanup()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--bus", required=True)
    parser.add_argument("--passive", action="store_true", help="only eavesdrop")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.bus, arguments.passive))
