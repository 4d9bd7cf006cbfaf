"""A program of the user that listens to the daemon's calls on the session bus and answers each first, with its
serial, as if it were the daemon: Send with an Output whose preedit is FORGED, CreateSession with a session of its
own, GetNameOwner with its own name. For the tests that every client takes only the daemon's answers.

    python -m tests.forging_spy --bus ADDRESS      prints "ready"; on end of input, the number of forged answers
"""

import argparse
import asyncio
import sys

from dbus_fast import Message, MessageType
from dbus_fast.aio import MessageBus

from daemon.bus import call_bus_daemon
from ime_protocol import Output, Preedit, PreeditSegment, SegmentStyle, encode

FORGED_TEXT = "FORGED"


def forgery(message: Message, own_name: str) -> tuple[str, list] | None:
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
    return None


async def main(address: str) -> None:
    spy = await MessageBus(bus_address=address).connect()
    forged = 0

    def answer_first(message: Message) -> bool:
        nonlocal forged
        answer = forgery(message, spy.unique_name or "") if message.sender != spy.unique_name else None
        if message.message_type is MessageType.METHOD_CALL and answer is not None:
            spy.send(
                Message(
                    message_type=MessageType.METHOD_RETURN,
                    destination=message.sender,
                    reply_serial=message.serial,
                    signature=answer[0],
                    body=answer[1],
                )
            )
            forged += 1
        return False

    spy.add_message_handler(answer_first)
    await call_bus_daemon(spy, "AddMatch", "s", ["type='method_call',eavesdrop=true"])
    print("ready", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    print(forged, flush=True)
    spy.disconnect()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--bus", required=True)
    asyncio.run(main(parser.parse_args().bus))
