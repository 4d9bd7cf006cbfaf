"""Both frontends recover from a daemon restart alike: the IBus shim's daemon session
(frontends/ibus/daemon_session.py, driven by tests/ibus_session_driver.py) and the fcitx5 addon's
(frontends/fcitx5/src/daemon_session.cpp, driven by the build's tsuzuri-session-test) go through the same
steps against a recording stand-in for the daemon (tests/recording_daemon.py) that is killed and started
again; the messages the new daemon's session receives must be the same for both, and be what
ime_protocol/recovery.py lists. A last test checks that the C++ twin's tables are the Python ones.

Needs Debian's /usr/bin/python3 with python3-gi and what tests/fcitx5_build.py needs; skips without them.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ime_protocol import FRONTEND_MESSAGES, FocusIn, InputPurpose, KeyEvent, SetInputMode, SurroundingText, decode
from ime_protocol.recovery import COMPOSITION_ENDING_MESSAGES, FIELD_STATE_MESSAGES, MAX_REPLAYED_KEYS
from tests.dbus_fixtures import REPO, pipe, private_bus
from tests.fcitx5_build import ADDON_SOURCE, build_addon

SYSTEM_PYTHON = Path("/usr/bin/python3")  # the IBus shim runs under it (frontends/ibus/install.py)
IBUS_DRIVER = REPO / "tests" / "ibus_session_driver.py"
KEY_TIMEOUT_MS = 300
SLOW_KEY = ord("s")  # answered late by the first daemon, after the frontend gave up waiting
F1 = 0xFFBE  # not consumed by the recording daemon


@pytest.fixture(scope="module")
def frontends(tmp_path_factory) -> dict[str, list[str]]:
    """The command line of each frontend's session driver."""
    probe = (
        subprocess.run(
            [str(SYSTEM_PYTHON), "-c", "from gi.repository import Gio; import msgpack"], capture_output=True, text=True
        )
        if SYSTEM_PYTHON.exists()
        else None
    )
    if probe is None or probe.returncode != 0:
        pytest.skip(f"{SYSTEM_PYTHON} lacks python3-gi or python3-msgpack")
    return {
        "ibus": [str(SYSTEM_PYTHON), str(IBUS_DRIVER)],
        "fcitx5": [str(build_addon(tmp_path_factory) / "tsuzuri-session-test")],
    }


@pytest.fixture(scope="module")
def bus():
    with private_bus() as address:
        yield address


class RecordingDaemon:
    """tests/recording_daemon.py on the bus; the first of a run answers SLOW_KEY late."""

    def __init__(self, address: str, log: Path, slow: bool):
        args = [sys.executable, "-m", "tests.recording_daemon", "--bus", address, "--log", str(log)]
        if slow:
            args += ["--slow-keyval", str(SLOW_KEY), "--slow-seconds", "5"]
        self.process = subprocess.Popen(args, cwd=REPO, stdout=subprocess.PIPE, text=True)
        if pipe(self.process.stdout).readline().strip() != "ready":
            self.kill()
            pytest.fail("the recording daemon did not come up")

    def kill(self) -> None:
        self.process.kill()  # as a crash would: no reply to what it still holds
        self.process.wait(10)
        pipe(self.process.stdout).close()


def start_driver(command: list[str], address: str) -> subprocess.Popen:
    """A frontend's session driver on the bus at `address`, commands in and answers out through pipes."""
    return subprocess.Popen(
        command,
        env={**os.environ, "DBUS_SESSION_BUS_ADDRESS": address},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def run(command: list[str], address: str, root: Path, steps: list[str]) -> tuple[list[list], list[str]]:
    """Runs `steps` through one frontend's driver; "restart" kills the daemon and starts another. Returns
    the messages each daemon's sessions received, per daemon ([session path, message] pairs), and the answers."""
    root.mkdir()
    driver = start_driver(command, address)
    logs, answers = [root / "daemon-1.log"], []
    daemon = RecordingDaemon(address, logs[0], slow=True)
    try:
        for step in steps:
            if step == "restart":
                daemon.kill()
                logs.append(root / f"daemon-{len(logs) + 1}.log")
                daemon = RecordingDaemon(address, logs[-1], slow=False)
                continue
            pipe(driver.stdin).write(step + "\n")
            pipe(driver.stdin).flush()
            answers.append(pipe(driver.stdout).readline().strip())
            assert answers[-1], f"the driver exited with {driver.wait(10)}"
    finally:
        daemon.kill()
        pipe(driver.stdin).close()
        driver.wait(10)
    received = []
    for log in logs:
        lines = log.read_text().splitlines() if log.exists() else []
        received.append(
            [
                [entry["session"], decode(bytes.fromhex(entry["message"]), FRONTEND_MESSAGES)]
                for entry in map(json.loads, lines)
            ]
        )
    return received, answers


def replayed(frontends, bus, tmp_path, steps: list[str]) -> list:
    """What the last daemon's session received, the same through both frontends."""
    seen = {}
    for name, command in frontends.items():
        received, answers = run(command, bus, tmp_path / name, steps)
        sessions = {session for session, _ in received[-1]}
        assert len(sessions) == 1, (name, received[-1])
        assert answers[-1].startswith("answered"), (name, answers)
        seen[name] = [message for _, message in received[-1]]
    assert seen["fcitx5"] == seen["ibus"]
    return seen["ibus"]


def key(character: str, request_id: int) -> str:
    return f"key {ord(character)} {request_id} {KEY_TIMEOUT_MS}"


def surrounding(text: str, cursor: int) -> str:
    return f"surrounding x{text.encode().hex()} {cursor} {cursor}"


def typed(text: str, first_id: int = 1) -> list[KeyEvent]:
    return [KeyEvent(ord(character), 0, 0, request_id) for request_id, character in enumerate(text, first_id)]


def test_the_field_state_comes_first_in_the_tables_order_then_the_composition(frontends, bus, tmp_path):
    steps = [
        "focus_in free_form",
        "mode katakana",
        surrounding("今日は", 3),
        "focus_in free_form",
        key("a", 1),
        key("b", 2),
        surrounding("今日はab", 5),
        key("c", 3),
        "restart",
        key("d", 4),
    ]
    expected = [
        FocusIn(InputPurpose.FREE_FORM),
        SurroundingText("今日はab", 5, 5),
        SetInputMode("katakana"),
        *typed("abcd"),
    ]
    assert tuple(map(type, expected[:3])) == FIELD_STATE_MESSAGES  # not the order they were first sent in
    assert replayed(frontends, bus, tmp_path, steps) == expected


def test_an_ended_composition_and_keys_the_application_had_are_not_replayed(frontends, bus, tmp_path):
    steps = [
        "focus_in free_form",
        key("a", 1),
        "reset",
        key("b", 2),
        f"key {0xFF0D} 3 {KEY_TIMEOUT_MS}",
        key("c", 4),
        "focus_out",
        key("d", 5),
        f"key {F1} 6 {KEY_TIMEOUT_MS}",
        key("e", 7),
        "discard",
        key("f", 8),
        "restart",
        key("g", 9),
    ]
    assert replayed(frontends, bus, tmp_path, steps) == [
        FocusIn(InputPurpose.FREE_FORM),
        *(KeyEvent(ord(character), 0, 0, request_id) for character, request_id in (("f", 8), ("g", 9))),
    ]


def test_nothing_typed_into_a_password_field_is_replayed(frontends, bus, tmp_path):
    steps = [
        "focus_in password",
        key("a", 1),
        key("b", 2),
        "restart",
        key("c", 3),
        "focus_in free_form",
        key("x", 4),
        "restart",
        key("y", 5),
    ]
    assert replayed(frontends, bus, tmp_path, steps) == [FocusIn(InputPurpose.FREE_FORM), *typed("xy", 4)]


def test_a_second_restart_replays_each_key_once(frontends, bus, tmp_path):
    steps = [key("a", 1), key("b", 2), "restart", key("c", 3), "restart", key("d", 4)]
    assert replayed(frontends, bus, tmp_path, steps) == typed("abcd")


def test_a_key_whose_answer_never_came_is_replayed(frontends, bus, tmp_path):
    steps = ["focus_in free_form", key("a", 1), key("s", 2), "pump 100", "restart", key("b", 3)]
    assert replayed(frontends, bus, tmp_path, steps) == [FocusIn(InputPurpose.FREE_FORM), *typed("asb")]


def test_at_most_max_replayed_keys_are_replayed(frontends, bus, tmp_path):
    steps = [
        *(key("a", request_id) for request_id in range(1, MAX_REPLAYED_KEYS + 2)),
        "restart",
        key("b", MAX_REPLAYED_KEYS + 2),
    ]
    assert replayed(frontends, bus, tmp_path, steps) == [
        *typed("a" * MAX_REPLAYED_KEYS),
        KeyEvent(ord("b"), 0, 0, MAX_REPLAYED_KEYS + 2),
    ]


def test_the_addons_replay_tables_are_ime_protocols():
    source = (ADDON_SOURCE / "src" / "daemon_session.cpp").read_text(encoding="utf-8")

    def kinds(name: str) -> tuple[str, ...]:
        found = re.search(rf"{name}\[\] = \{{([^}}]*)\}}", source)
        assert found is not None, name
        return tuple(re.findall(r"RequestKind::(\w+)", found.group(1)))

    assert kinds("FIELD_STATE_KINDS") == tuple(message.__name__ for message in FIELD_STATE_MESSAGES)
    assert kinds("COMPOSITION_ENDING_KINDS") == tuple(message.__name__ for message in COMPOSITION_ENDING_MESSAGES)
    assert re.search(r"MAX_REPLAYED_KEYS = (\d+);", source).group(1) == str(MAX_REPLAYED_KEYS)


class Spy:
    """tests/forging_spy.py on the bus: eavesdropping on everything, and answering first unless passive."""

    def __init__(self, address: str, passive: bool):
        args = [sys.executable, "-m", "tests.forging_spy", "--bus", address, *(["--passive"] if passive else [])]
        self.process = subprocess.Popen(args, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert pipe(self.process.stdout).readline().strip() == "ready"

    def counts(self) -> dict[str, int]:
        """What it did and saw, once it stops."""
        pipe(self.process.stdin).close()
        counts = json.loads(pipe(self.process.stdout).readline())
        self.process.wait(10)
        return counts


def type_through(command: list[str], address: str, text: str) -> list[str]:
    """The driver's answers to a focus and a key per character of `text`."""
    driver = start_driver(command, address)
    answers = []
    for step in ["focus_in free_form", *(key(character, i) for i, character in enumerate(text, 1))]:
        pipe(driver.stdin).write(step + "\n")
        pipe(driver.stdin).flush()
        answers.append(pipe(driver.stdout).readline().strip())
    pipe(driver.stdin).close()
    driver.wait(10)
    return answers


def test_nothing_typed_through_a_frontend_or_the_client_crosses_the_bus(frontends, tmp_path):
    """The stock session bus lets any program of the user eavesdrop: the frontends and the client library type on
    the daemon's private channel, so a spy watching every message on the bus sees none of it."""
    from tests.dbus_fixtures import client, running_daemon

    with private_bus() as address, running_daemon(address, tmp_path, "/nonexistent/model.gguf"):
        spy = Spy(address, passive=True)
        try:
            for name, command in frontends.items():
                answers = type_through(command, address, "kyou")
                assert answers[-1] == f"answered 1 x{'きょう'.encode().hex()}", (name, answers)
            typed = client(address, "type", "kyou", "--key", "space", "--json")
            assert json.loads(typed.stdout)["preedit"] == "今日", typed.stderr
        finally:
            counts = spy.counts()
    assert counts["typed_seen"] == 0, counts


def test_both_frontends_take_only_the_daemons_answers(frontends, tmp_path):
    """A program of the user answers every call first (tests/forging_spy.py), offering a channel of its own: no
    frontend draws what it says or connects to its socket."""
    from tests.dbus_fixtures import running_daemon
    from tests.forging_spy import FORGED_TEXT

    forged_hex = FORGED_TEXT.encode().hex()
    with private_bus() as address, running_daemon(address, tmp_path, "/nonexistent/model.gguf"):
        spy = Spy(address, passive=False)
        try:
            for name, command in frontends.items():
                answers = type_through(command, address, "kyou")
                assert answers and not [answer for answer in answers if forged_hex in answer], (name, answers)
        finally:
            counts = spy.counts()
    assert counts["forged"] >= 2  # it did answer first: the address of its channel, to both
    assert counts["channel_connections"] == 0 and counts["typed_seen"] == 0, counts
