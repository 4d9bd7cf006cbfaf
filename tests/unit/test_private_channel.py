"""The daemon's private channel (daemon/private_channel.py): its handshake and framing as pure functions, and a
channel in this process with dbus-fast as its client. No dbus-daemon is involved."""

import asyncio
import os
import pwd
import stat
import tempfile
import subprocess
from pathlib import Path

import pytest
from dbus_fast import Message, MessageType

from daemon.bus import connect_bus
from daemon.private_channel import (
    MAX_MESSAGE_BYTES,
    PEER_NAME_PREFIX,
    AuthFailed,
    PrivateChannel,
    SaslServer,
    channel_socket_path,
    message_length,
)

GUID = "0123456789abcdef0123456789abcdef"
UID = os.getuid()
UID_HEX = str(UID).encode().hex()


def conversation(lines: list[str], uid: int = UID) -> list[str | None]:
    server = SaslServer(uid, GUID)
    answers = []
    for line in lines:
        answer, begun = server.answer(line)
        answers.append("BEGUN" if begun else answer)
    return answers


def test_the_handshakes_of_gdbus_sd_bus_and_dbus_fast_are_accepted():
    # GDBus and dbus-fast: the identity at once; sd-bus also asks to pass file descriptors (refused: none here).
    assert conversation([f"AUTH EXTERNAL {UID_HEX}", "BEGIN"]) == [f"OK {GUID}", "BEGUN"]
    assert conversation([f"AUTH EXTERNAL {UID_HEX}", "NEGOTIATE_UNIX_FD", "BEGIN"])[1].startswith("ERROR")
    # The identity asked for separately; an empty DATA stands for the socket's own.
    assert conversation(["AUTH EXTERNAL", f"DATA {UID_HEX}", "BEGIN"]) == ["DATA", f"OK {GUID}", "BEGUN"]
    assert conversation(["AUTH EXTERNAL", "DATA", "BEGIN"]) == ["DATA", f"OK {GUID}", "BEGUN"]


def test_another_identity_or_mechanism_is_rejected_and_the_client_may_try_again():
    other = str(UID + 1).encode().hex()
    assert (
        conversation([f"AUTH EXTERNAL {other}", "AUTH DBUS_COOKIE_SHA1 abc", "AUTH", "AUTH EXTERNAL zz"])
        == ["REJECTED EXTERNAL"] * 4
    )
    assert conversation([f"AUTH EXTERNAL {other}", f"AUTH EXTERNAL {UID_HEX}"])[1] == f"OK {GUID}"
    assert conversation([f"AUTH EXTERNAL {UID_HEX}", "CANCEL"]) == [f"OK {GUID}", "REJECTED EXTERNAL"]
    assert conversation(["HELLO"]) == ["ERROR"]


def test_a_broken_handshake_ends_the_connection():
    with pytest.raises(AuthFailed):
        conversation(["BEGIN"])
    with pytest.raises(AuthFailed):
        conversation(["AUTH"] * 17)


def test_a_messages_length_is_read_from_its_fixed_header():
    message = Message(destination="a.b", path="/a", interface="a.b", member="M", signature="s", body=["きょう" * 50])
    message.serial = 7
    data = bytes(message._marshall(False))
    assert message_length(data[:15]) is None
    assert message_length(data[:16]) == len(data)
    big_endian = b"B" + data[1:4] + data[4:8][::-1] + data[8:12][::-1] + data[12:16][::-1]
    assert message_length(big_endian) == len(data)
    with pytest.raises(ValueError):
        message_length(b"x" + data[1:16])


def test_the_socket_is_in_the_users_runtime_folder_made_private(tmp_path, monkeypatch):
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o755)
    (runtime / "tsuzuri").mkdir(mode=0o755)
    stale = runtime / "tsuzuri" / "channel-999999999"  # no such process
    stale.touch()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    path = channel_socket_path(pid=42)
    assert path == runtime / "tsuzuri" / "channel-42"
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700 and not stale.exists()


@pytest.mark.parametrize("runtime", ["", "relative/run", "/nonexistent/run", "long"])
def test_without_a_usable_runtime_folder_the_socket_is_in_a_new_private_one(runtime, tmp_path, monkeypatch):
    if runtime == "long":
        runtime = str(tmp_path / ("x" * 100))
        os.mkdir(runtime)
    monkeypatch.setenv("XDG_RUNTIME_DIR", runtime)
    path = channel_socket_path(pid=42)
    try:
        assert path.parent.name.startswith("tsuzuri-channel-") and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        assert len(os.fsencode(path)) <= 107
    finally:
        path.parent.rmdir()


class EchoDaemon:
    """A channel whose handler answers Echo(s) with its argument and the caller's name."""

    def __init__(self, path: Path):
        self.gone: list[str] = []
        self.channel = PrivateChannel(path, self.handle, self.gone.append)

    def handle(self, message: Message):
        if message.member == "Echo":
            return Message.new_method_return(message, "ss", [message.body[0], message.sender])
        if message.member == "Later":
            asyncio.get_running_loop().call_soon(
                lambda: self.channel.deliver(Message.new_method_return(message, "s", ["later"]))
            )
            return True
        return None


def signal_to(destination: str) -> Message:
    return Message(message_type=MessageType.SIGNAL, destination=destination, path="/", interface="a.b", member="S")


async def echo(bus, text: str = "きょう", member: str = "Echo") -> Message:
    reply = await bus.call(
        Message(
            destination="org.example.Daemon",
            path="/",
            interface="org.example",
            member=member,
            signature="s" if member == "Echo" else "",
            body=[text] if member == "Echo" else [],
        )
    )
    assert reply is not None
    return reply


async def test_a_client_library_connects_says_hello_and_is_answered_under_its_own_name(tmp_path):
    daemon = EchoDaemon(tmp_path / "channel")
    await daemon.channel.listen()
    assert stat.S_IMODE((tmp_path / "channel").stat().st_mode) & 0o077 == 0
    first, second = await connect_bus(daemon.channel.address), await connect_bus(daemon.channel.address)
    try:
        assert first.unique_name.startswith(PEER_NAME_PREFIX) and first.unique_name != second.unique_name
        reply = await echo(first)
        assert reply.body == ["きょう", first.unique_name] and reply.sender is None  # no bus stamps one
        assert (await echo(second, member="Later")).body == ["later"]
        unknown = await echo(first, member="Nothing")
        assert unknown.message_type is MessageType.ERROR
        assert daemon.channel.credentials(first.unique_name).pid == os.getpid()
        assert daemon.channel.credentials(":1.1") is None
        name = first.unique_name
        first.disconnect()
        await first.wait_for_disconnect()
        for _ in range(100):
            if daemon.gone:
                break
            await asyncio.sleep(0.01)
        assert daemon.gone == [name]
        assert daemon.channel.deliver(signal_to(name)) is True  # its own to deliver, though there is nobody now
        assert daemon.channel.deliver(signal_to(":1.1")) is False  # a bus connection's
        assert (await echo(second)).body[0] == "きょう"  # the other peer is served on
    finally:
        second.disconnect()
        daemon.channel.close()
    assert not (tmp_path / "channel").exists()


async def raw_peer(path: Path, data: bytes) -> bytes:
    """What the channel sends back to `data`, until it closes the connection (or 5 s)."""
    reader, writer = await asyncio.open_unix_connection(str(path))
    writer.write(data)
    try:
        return await asyncio.wait_for(reader.read(), 5)
    finally:
        writer.close()


@pytest.mark.parametrize(
    "after_handshake",
    [
        b"garbage that is no message at all",
        b"l\x01\x00\x01" + (MAX_MESSAGE_BYTES).to_bytes(4, "little") + b"\x01\x00\x00\x00\x00\x00\x00\x00",
        b"l\x01\x00\x01\x04\x00\x00\x00\x01\x00\x00\x00\x08\x00\x00\x00" + b"\xff" * 12,
    ],
    ids=["garbage", "huge", "malformed"],
)
async def test_a_peer_that_sends_what_is_not_a_message_is_cut_off_and_the_rest_are_served(after_handshake, tmp_path):
    daemon = EchoDaemon(tmp_path / "channel")
    await daemon.channel.listen()
    bus = await connect_bus(daemon.channel.address)
    try:
        answer = await raw_peer(
            tmp_path / "channel", b"\0" + f"AUTH EXTERNAL {UID_HEX}\r\nBEGIN\r\n".encode() + after_handshake
        )
        assert answer == f"OK {GUID}\r\n".encode().replace(GUID.encode(), daemon.channel.guid.encode())
        assert (await echo(bus)).body[0] == "きょう"
    finally:
        bus.disconnect()
        daemon.channel.close()


async def test_a_handshake_without_the_nul_byte_or_too_slow_is_cut_off(tmp_path, monkeypatch):
    monkeypatch.setattr("daemon.private_channel.AUTH_TIMEOUT_S", 0.2)
    daemon = EchoDaemon(tmp_path / "channel")
    await daemon.channel.listen()
    try:
        assert await raw_peer(tmp_path / "channel", f"AUTH EXTERNAL {UID_HEX}\r\n".encode()) == b""
        assert await raw_peer(tmp_path / "channel", b"\0AUTH EXT") == b""  # closed after 0.2 s, not 5
    finally:
        daemon.channel.close()


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to connect as another user")
async def test_a_peer_of_another_user_is_refused_before_anything_is_read():
    # A folder that nobody may enter (pytest's are private): the channel's own check is what is tested.
    folder = Path(tempfile.mkdtemp(prefix="tsuzuri-open-"))
    os.chmod(folder, 0o755)
    daemon = EchoDaemon(folder / "channel")
    await daemon.channel.listen()
    os.chmod(folder / "channel", 0o777)
    nobody = pwd.getpwnam("nobody").pw_uid
    probe = (
        "import socket, sys\n"
        "s = socket.socket(socket.AF_UNIX)\n"
        "s.connect(sys.argv[1])\n"
        "try:\n"
        f"    s.sendall(b'\\0AUTH EXTERNAL {str(nobody).encode().hex()}\\r\\n')\n"
        "    print(repr(s.recv(100)))\n"
        "except OSError:\n"  # cut off before it could write, or while
        "    print(repr(b''))\n"
    )
    try:
        done = await asyncio.to_thread(
            subprocess.run,
            ["/usr/bin/python3", "-c", probe, str(folder / "channel")],  # a program nobody may run
            user=nobody,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert done.stdout.strip() == "b''", done
    finally:
        daemon.channel.close()
        folder.rmdir()


async def test_a_peer_that_stops_reading_is_cut_off_instead_of_its_answers_piling_up(tmp_path):
    daemon = EchoDaemon(tmp_path / "channel")
    await daemon.channel.listen()
    reader, writer = await asyncio.open_unix_connection(str(tmp_path / "channel"))
    try:
        writer.write(b"\0" + f"AUTH EXTERNAL {UID_HEX}\r\nBEGIN\r\n".encode())
        for serial in range(1, 41):  # 40 answers of 400 kB each, never read
            call = Message(
                destination="org.example.Daemon", path="/", member="Echo", signature="s", body=["x" * 400_000]
            )
            call.serial = serial
            try:
                writer.write(bytes(call._marshall(False)))
                await writer.drain()
            except ConnectionError:  # cut off already
                break
        for _ in range(200):
            if daemon.gone:
                break
            await asyncio.sleep(0.01)
        assert daemon.gone == [f"{PEER_NAME_PREFIX}1"]
    finally:
        writer.close()
        daemon.channel.close()
