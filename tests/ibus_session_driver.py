"""The IBus shim's daemon session (frontends/ibus/daemon_session.py) on a line protocol, for
tests/integration/test_frontend_recovery.py; frontends/fcitx5/test/session_test.cpp is the fcitx5 addon's, with the
same commands and answers. Runs under Debian's /usr/bin/python3 (python3-gi), on $DBUS_SESSION_BUS_ADDRESS.

    focus_in PURPOSE   surrounding xTEXT CURSOR ANCHOR   mode MODE   focus_out   reset   discard
    key KEYVAL REQUEST_ID TIMEOUT_MS                      each answered: answered CONSUMED xPREEDIT,
                                                          timeout or unavailable
    pump MS                                               runs the main loop (late answers): answered ok

TEXT and PREEDIT are "x" followed by the hex digits of their UTF-8. Other messages wait MESSAGE_TIMEOUT_MS.
"""

import sys
from pathlib import Path

from gi.repository import Gio, GLib

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from frontends.ibus.daemon_session import DaemonChannel, DaemonSession, DaemonTimeout, DaemonUnavailable  # noqa: E402
from ime_protocol import (
    Discard,
    FocusIn,
    FocusOut,
    InputPurpose,
    KeyEvent,
    Reset,
    SetInputMode,  # noqa: E402
    SurroundingText,
)

MESSAGE_TIMEOUT_MS = 300


def text_of(token: str) -> str:
    return bytes.fromhex(token[1:]).decode()


def message_of(command: str, args: list[str]):
    match command:
        case "focus_in":
            return FocusIn(InputPurpose(args[0]))
        case "surrounding":
            return SurroundingText.around_cursor(text_of(args[0]), int(args[1]), int(args[2]))
        case "mode":
            return SetInputMode(args[0])
        case "focus_out":
            return FocusOut()
        case "reset":
            return Reset()
        case "discard":
            return Discard()
        case "key":
            return KeyEvent(int(args[0]), 0, 0, int(args[1]))
    raise ValueError(f"unknown command {command}")


def pump(milliseconds: int) -> None:
    context = GLib.MainContext.default()
    done = []
    GLib.timeout_add(milliseconds, lambda: done.append(True))
    while not done:
        context.iteration(True)


def main() -> None:
    session = DaemonSession(DaemonChannel(Gio.bus_get_sync(Gio.BusType.SESSION, None)), lambda _output: None)
    for line in sys.stdin:
        command, *args = line.split()
        if command == "pump":
            pump(int(args[0]))
            print("answered ok", flush=True)
            continue
        timeout_ms = int(args[2]) if command == "key" else MESSAGE_TIMEOUT_MS
        try:
            output = session.send(message_of(command, args), timeout_ms)
        except DaemonTimeout:
            print("timeout", flush=True)
        except DaemonUnavailable:
            print("unavailable", flush=True)
        else:
            print(f"answered {int(output.consumed)} x{output.preedit.text.encode().hex()}", flush=True)


if __name__ == "__main__":
    main()
