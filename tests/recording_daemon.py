"""A stand-in for tsuzuri-daemon that writes down every message its sessions receive, for the recovery tests.

    python -m tests.recording_daemon --bus ADDRESS --log FILE [--slow-keyval K --slow-seconds S]

It owns org.tsuzuri.Tsuzuri1 on the bus, prints "ready" once it does, gives the address of its private channel
(daemon/private_channel.py) as the daemon does, and answers CreateSession, Send and Close there or on the bus;
Send to a session it does not know answers UnknownSession, as a restarted daemon would. Each message received is
a line of FILE: {"session": path, "message": hex of its bytes}.

Its sessions compose simply: a printable ASCII key is consumed and joins the preedit; Return commits the
preedit (not consumed without one); FocusOut and Reset commit it, Discard drops it, SetInputMode sets the mode; any
other key is not consumed. A key of keyval K is answered S seconds late, so that a frontend times out on it.
"""

import argparse
import asyncio
import itertools
import json

from dbus_fast import Message, MessageType
from dbus_fast.aio import MessageBus

from daemon.private_channel import PrivateChannel, channel_socket_path
from ime_protocol import (
    FRONTEND_MESSAGES,
    Discard,
    FocusOut,
    KeyEvent,
    Output,
    Preedit,
    PreeditSegment,
    ProtocolError,
    Reset,
    SegmentStyle,
    SetInputMode,
    decode,
    encode,
)
from ime_protocol.dbus_names import (
    BUS_NAME,
    ERROR_PROTOCOL,
    ERROR_UNKNOWN_SESSION,
    ROOT_INTERFACE,
    ROOT_PATH,
    SESSION_INTERFACE,
    SESSION_PATH_PREFIX,
)

RETURN = 0xFF0D


class Session:
    def __init__(self) -> None:
        self.text = ""
        self.mode = "hiragana"

    def answer(self, message) -> Output:
        request_id, consumed, commit = getattr(message, "request_id", 0), True, ""
        match message:
            case KeyEvent() if 0x20 < message.keyval < 0x7F:
                self.text += chr(message.keyval)
            case KeyEvent() if message.keyval == RETURN and self.text:
                commit, self.text = self.text, ""
            case KeyEvent():
                consumed = False
            case FocusOut() | Reset():
                commit, self.text = self.text, ""
            case Discard():
                self.text = ""
            case SetInputMode():
                self.mode = message.mode
        segments = (PreeditSegment(self.text, SegmentStyle.UNDERLINE),) if self.text else ()
        return Output(request_id, consumed, commit, Preedit(segments, len(self.text)), None, "", self.mode)


async def serve(address: str, log_path: str, slow_keyval: int, slow_seconds: float) -> None:
    bus = await MessageBus(bus_address=address).connect()
    sessions: dict[str, Session] = {}
    numbers = itertools.count(1)
    log = open(log_path, "a", encoding="utf-8")

    async def answer_late(call: Message, output: Output) -> None:
        await asyncio.sleep(slow_seconds)
        reply = Message.new_method_return(call, "ay", [encode(output)])
        if not channel.deliver(reply):
            bus.send(reply)

    def handle(call: Message):
        if call.message_type != MessageType.METHOD_CALL:
            return None
        if (call.path, call.interface, call.member) == (ROOT_PATH, ROOT_INTERFACE, "GetChannelAddress"):
            return Message.new_method_return(call, "s", [channel.address])
        if (call.path, call.interface, call.member) == (ROOT_PATH, ROOT_INTERFACE, "CreateSession"):
            path = f"{SESSION_PATH_PREFIX}{next(numbers)}"
            sessions[path] = Session()
            return Message.new_method_return(call, "o", [path])
        if call.interface != SESSION_INTERFACE or call.member not in ("Send", "Close"):
            return None
        session = sessions.get(call.path or "")
        if session is None:
            return Message.new_error(call, ERROR_UNKNOWN_SESSION, f"no session {call.path}")
        if call.member == "Close":
            del sessions[call.path or ""]
            return Message.new_method_return(call)
        try:
            message = decode(bytes(call.body[0]), FRONTEND_MESSAGES)
        except ProtocolError as error:
            return Message.new_error(call, ERROR_PROTOCOL, str(error))
        log.write(json.dumps({"session": call.path, "message": call.body[0].hex()}) + "\n")
        log.flush()
        output = session.answer(message)
        if isinstance(message, KeyEvent) and message.keyval == slow_keyval:
            asyncio.ensure_future(answer_late(call, output))
            return True
        return Message.new_method_return(call, "ay", [encode(output)])

    channel = PrivateChannel(channel_socket_path(), handle, lambda _peer: None)
    await channel.listen()
    bus.add_message_handler(handle)
    await bus.request_name(BUS_NAME)
    print("ready", flush=True)
    await bus.wait_for_disconnect()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bus", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--slow-keyval", type=int, default=-1)
    parser.add_argument("--slow-seconds", type=float, default=0.0)
    args = parser.parse_args()
    asyncio.run(serve(args.bus, args.log, args.slow_keyval, args.slow_seconds))


if __name__ == "__main__":
    main()
