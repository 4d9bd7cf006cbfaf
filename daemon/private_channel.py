"""The daemon's private channel: peer-to-peer D-Bus connections on a socket of its own, for the frontends' sessions.

On the session bus, any program of the user may eavesdrop on every call (the stock policy allows it) and answer a
call first with its serial: what the user types would pass through a shared wire. The frontends therefore ask the
daemon on the bus for this channel's address (`GetChannelAddress`, whose answer they take only from the owner of the
daemon's name, as the bus daemon says) and talk to it directly: a Unix socket in a folder only the user can enter
(`$XDG_RUNTIME_DIR/tsuzuri`, which sandboxed applications are not given), and each connection's peer must run as the
daemon's user (SO_PEERCRED, checked before a byte is read). Nobody else sees these messages, and nobody else can
answer them.

It speaks enough of a bus for the clients' D-Bus libraries (GDBus, sd-bus through fcitx, dbus-fast): the SASL
EXTERNAL handshake, then messages, with `Hello` (a unique name of this channel, which sessions are owned by),
`AddMatch` and `RemoveMatch` answered here. Every other call goes to the handler the daemon gives, as a bus message
would, stamped with the peer's name as its sender: whatever the peer wrote there is replaced. What the daemon sends
carries no sender, as between peers (no bus stamps one): a client that gets an answer without a sender knows it is on
a connection of its own. dbus-fast cannot serve such connections; it marshals and unmarshals the messages.
"""

from __future__ import annotations

import asyncio
import io
import itertools
import logging
import os
import re
import socket
import struct
import tempfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from dbus_fast import Message, MessageType
from dbus_fast._private.unmarshaller import Unmarshaller

from daemon.bus import BUS_DAEMON
from daemon.dbus_errors import ERROR_UNKNOWN_METHOD

log = logging.getLogger("tsuzuri")

PEER_NAME_PREFIX = ":tsuzuri."  # a bus daemon names its clients ":1.N": the two never meet
MAX_AUTH_LINE = 1024
MAX_AUTH_COMMANDS = 16
AUTH_TIMEOUT_S = 5.0
# The largest message a frontend sends is a Send of at most ime_protocol's MAX_MESSAGE_BYTES, plus its header.
MAX_MESSAGE_BYTES = 512 * 1024
# What a peer may leave unread before it is cut off: it has stopped reading, and the daemon will not hold its answers.
MAX_UNREAD_BYTES = 8 * 1024 * 1024
TEMPORARY_FOLDER_PREFIX = "tsuzuri-channel-"
MAX_SOCKET_PATH = 107  # sun_path's room, less its terminating nul
FIXED_HEADER = struct.Struct("<4xIII")  # little-endian: body length, serial, header fields' length
FIXED_HEADER_BIG = struct.Struct(">4xIII")

# What the daemon's dispatcher does with a message: a reply to send, True when it answers later (or not at all:
# no reply expected), None when it does not know the call.
Handler = Callable[[Message], "Message | bool | None"]


@dataclass(frozen=True)
class PeerCredentials:
    pid: int
    uid: int


class AuthFailed(Exception):
    """The peer broke the SASL conversation; its connection is closed."""


class SaslServer:
    """The server's side of D-Bus's SASL handshake, EXTERNAL only: the peer says which uid it is, and that must be
    the uid the socket says it has. `answer` takes one command line (without its CRLF) and gives the line to send
    back (or None) and whether the handshake is over (BEGIN); after that the connection carries messages."""

    def __init__(self, peer_uid: int, guid: str):
        self.peer_uid = peer_uid
        self.guid = guid
        self.authenticated = False
        self.awaiting_data = False
        self.commands = 0

    def answer(self, line: str) -> tuple[str | None, bool]:
        self.commands += 1
        if self.commands > MAX_AUTH_COMMANDS:
            raise AuthFailed("too many commands")
        command, _, argument = line.partition(" ")
        if command == "BEGIN":
            if not self.authenticated:
                raise AuthFailed("BEGIN before authentication")
            return None, True
        if command in ("CANCEL", "ERROR"):
            self.authenticated = self.awaiting_data = False
            return "REJECTED EXTERNAL", False
        if self.authenticated:
            return ("ERROR" if command != "NEGOTIATE_UNIX_FD" else "ERROR no file descriptors here"), False
        if command == "AUTH":
            mechanism, _, response = argument.partition(" ")
            if mechanism != "EXTERNAL":
                return "REJECTED EXTERNAL", False
            if not response:
                self.awaiting_data = True
                return "DATA", False
            return self._external(response), False
        if command == "DATA" and self.awaiting_data:
            self.awaiting_data = False
            return self._external(argument), False
        return "ERROR", False

    def _external(self, response: str) -> str:
        """The claimed identity, hex-encoded ASCII digits of a uid; empty: the socket's."""
        try:
            claimed = bytes.fromhex(response).decode("ascii") if response else str(self.peer_uid)
        except (ValueError, UnicodeDecodeError):
            return "REJECTED EXTERNAL"
        if claimed != str(self.peer_uid):
            return "REJECTED EXTERNAL"
        self.authenticated = True
        return f"OK {self.guid}"


def message_length(buffer: bytes | bytearray) -> int | None:
    """The length of the message at the start of `buffer`, once its fixed header is in; None before."""
    if len(buffer) < 16:
        return None
    if buffer[0] == ord("l"):
        body, _serial, fields = FIXED_HEADER.unpack_from(buffer)
    elif buffer[0] == ord("B"):
        body, _serial, fields = FIXED_HEADER_BIG.unpack_from(buffer)
    else:
        raise ValueError("not a D-Bus message (bad endianness byte)")
    return 16 + (fields + 7) // 8 * 8 + body


def channel_socket_path(pid: int | None = None) -> Path:
    """Where this daemon's channel listens: $XDG_RUNTIME_DIR/tsuzuri/channel-PID (the folder made private), or, where
    that is unset, not the user's own or too long for a socket's name, a new private folder in the temporary one."""
    pid = os.getpid() if pid is None else pid
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(runtime) and os.path.isdir(runtime) and os.stat(runtime).st_uid == os.getuid():
        folder = Path(runtime) / "tsuzuri"
        path = folder / f"channel-{pid}"
        if len(os.fsencode(path)) <= MAX_SOCKET_PATH:
            folder.mkdir(mode=0o700, exist_ok=True)
            folder.chmod(0o700)
            remove_stale_sockets(folder)
            return path
    return Path(tempfile.mkdtemp(prefix=TEMPORARY_FOLDER_PREFIX)) / f"channel-{pid}"


def remove_stale_sockets(folder: Path) -> None:
    """The sockets of daemons that died without removing theirs (kill -9)."""
    for stale in folder.glob("channel-*"):
        found = re.fullmatch(r"channel-(\d+)", stale.name)
        if found and not Path(f"/proc/{found.group(1)}").exists():
            stale.unlink(missing_ok=True)


class PeerConnection(asyncio.Protocol):
    """One frontend's connection: the handshake, then messages both ways."""

    def __init__(self, channel: PrivateChannel):
        self.channel = channel
        self.name = ""
        self.credentials = PeerCredentials(0, -1)
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.sasl: SaslServer | None = None
        self.nul_seen = False
        self.serials = itertools.count(1)
        self.auth_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport) -> None:
        self.transport = transport
        sock = transport.get_extra_info("socket")
        pid, uid, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
        self.credentials = PeerCredentials(pid, uid)
        if uid != os.getuid():
            log.warning("channel: refused process %d of uid %d (not the daemon's user)", pid, uid)
            transport.abort()
            return
        self.sasl = SaslServer(uid, self.channel.guid)
        self.auth_timer = asyncio.get_running_loop().call_later(AUTH_TIMEOUT_S, self._give_up, "handshake too slow")

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        try:
            if self.sasl is not None:
                self._authenticate()
            if self.sasl is None and self.name:
                self._dispatch_messages()
        except (AuthFailed, ValueError) as error:
            self._give_up(str(error))

    def connection_lost(self, exc) -> None:
        if self.auth_timer is not None:
            self.auth_timer.cancel()
        if self.name:
            self.channel.forget(self)

    def send(self, message: Message) -> None:
        if self.transport is None or self.transport.is_closing():
            return
        if self.transport.get_write_buffer_size() > MAX_UNREAD_BYTES:
            self._give_up("it does not read what it is sent")
            return
        message.serial = next(self.serials)
        self.transport.write(bytes(message._marshall(False)))

    def _give_up(self, why: str) -> None:
        log.warning("channel: closed the connection of process %d: %s", self.credentials.pid, why)
        if self.transport is not None:
            self.transport.abort()

    def _authenticate(self) -> None:
        assert self.sasl is not None
        if not self.nul_seen and self.buffer:
            if self.buffer[0] != 0:
                raise AuthFailed("no nul byte before the handshake")
            del self.buffer[0]
            self.nul_seen = True
        while self.sasl is not None:
            end = self.buffer.find(b"\r\n")
            if end < 0:
                if len(self.buffer) > MAX_AUTH_LINE:
                    raise AuthFailed("handshake line too long")
                return
            line = self.buffer[:end].decode("ascii", "replace")
            del self.buffer[: end + 2]
            response, begun = self.sasl.answer(line)
            if response is not None and self.transport is not None:
                self.transport.write(response.encode("ascii") + b"\r\n")
            if begun:
                self.sasl = None
                if self.auth_timer is not None:
                    self.auth_timer.cancel()
                self.name = self.channel.welcome(self)

    def _dispatch_messages(self) -> None:
        while (length := message_length(self.buffer)) is not None:
            if length > MAX_MESSAGE_BYTES:
                raise ValueError(f"a message of {length} bytes")
            if len(self.buffer) < length:
                return
            data = bytes(self.buffer[:length])
            del self.buffer[:length]
            stream = cast(io.BufferedRWPair, io.BytesIO(data))  # it only reads the stream
            try:
                message = Unmarshaller(stream, negotiate_unix_fd=False).unmarshall()
            except Exception as error:  # whatever the unmarshaller makes of bytes that are no message
                raise ValueError(f"a malformed message ({type(error).__name__})") from error
            if message is None:
                raise ValueError("an incomplete message")
            message.sender = self.name  # whatever the peer wrote: it is this connection
            self._handle(message)
            if self.transport is None or self.transport.is_closing():
                return

    def _handle(self, message: Message) -> None:
        if message.message_type is not MessageType.METHOD_CALL:
            return  # the daemon expects no replies and no signals from a frontend
        if message.destination == BUS_DAEMON:
            reply = self._bus_method(message)
        else:
            answer = self.channel.handler(message)
            if isinstance(answer, Message):
                reply = answer
            elif answer is None:
                reply = Message.new_error(message, ERROR_UNKNOWN_METHOD, f"no method {message.member}")
            else:
                return
        if not message.flags & 0x1:  # NO_REPLY_EXPECTED
            self.send(reply)

    def _bus_method(self, message: Message) -> Message:
        """The bus daemon's methods a client library calls by itself."""
        if message.member == "Hello":
            return Message.new_method_return(message, "s", [self.name])
        if message.member in ("AddMatch", "RemoveMatch"):  # every message here is for this peer anyway
            return Message.new_method_return(message)
        return Message.new_error(message, ERROR_UNKNOWN_METHOD, f"no bus method {message.member} here")


class PrivateChannel:
    """The listening socket and its peers, known by the unique names they were given."""

    def __init__(self, path: Path, handler: Handler, on_gone: Callable[[str], None]):
        self.path = path
        self.handler = handler
        self.on_gone = on_gone
        self.guid = uuid.uuid4().hex
        self._peers: dict[str, PeerConnection] = {}
        self._numbers = itertools.count(1)
        self._server: asyncio.AbstractServer | None = None

    @property
    def address(self) -> str:
        return f"unix:path={self.path}"

    async def listen(self) -> None:
        self.path.unlink(missing_ok=True)
        umask = os.umask(0o077)  # the socket itself for the user only, too
        try:
            self._server = await asyncio.get_running_loop().create_unix_server(
                lambda: PeerConnection(self), str(self.path)
            )
        finally:
            os.umask(umask)

    def welcome(self, peer: PeerConnection) -> str:
        name = f"{PEER_NAME_PREFIX}{next(self._numbers)}"
        self._peers[name] = peer
        return name

    def forget(self, peer: PeerConnection) -> None:
        if self._peers.pop(peer.name, None) is not None:
            self.on_gone(peer.name)

    def credentials(self, name: str) -> PeerCredentials | None:
        """A peer's process and user, as its socket said; None for a name that is not one of this channel's."""
        peer = self._peers.get(name)
        return peer.credentials if peer is not None else None

    def deliver(self, message: Message) -> bool:
        """Sends `message` if it is for a peer of this channel (whether or not that peer is still there)."""
        destination = message.destination or ""
        if not destination.startswith(PEER_NAME_PREFIX):
            return False
        peer = self._peers.get(destination)
        if peer is not None:
            peer.send(message)
        return True

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for peer in list(self._peers.values()):
            if peer.transport is not None:
                peer.transport.close()
        self.path.unlink(missing_ok=True)
        if self.path.parent.name.startswith(TEMPORARY_FOLDER_PREFIX):
            self.path.parent.rmdir()
