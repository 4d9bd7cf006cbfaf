"""The one way Tsuzuri's programs connect to D-Bus (dbus-fast, asyncio).

dbus-fast 5.2 (the latest release) treats a full socket as a dead connection: its writer calls
`socket.send`, which raises BlockingIOError (EAGAIN) when the kernel buffer is full, and the bus is
finalised. A client that makes the daemon send faster than the bus daemon reads (many large replies at
once) could so make it drop off the bus. Until dbus-fast waits for writability itself, the writer gets a
socket whose `send` reports "0 bytes sent" instead of raising; the writer then keeps the rest of the
message and waits for the socket to become writable, as it does after a partial send.
"""

from __future__ import annotations

import socket
from typing import cast

from dbus_fast import BusType, Message
from dbus_fast.aio import MessageBus

BUS_DAEMON = "org.freedesktop.DBus"


class WaitingSocket:
    """A socket whose send() returns 0 when it would block; everything else goes to the real socket."""

    def __init__(self, sock: socket.socket):
        self._sock = sock

    def send(self, data) -> int:
        try:
            return self._sock.send(data)
        except BlockingIOError:
            return 0

    def __getattr__(self, name: str):
        return getattr(self._sock, name)


async def connect_bus(address: str | None = None) -> MessageBus:
    """A connected bus: `address`, or the session bus."""
    bus = MessageBus(bus_address=address) if address else MessageBus(bus_type=BusType.SESSION)
    await bus.connect()
    writer = bus._writer  # private: the workaround above needs the writer's socket
    assert writer is not None and writer.sock is not None  # connect() made them
    writer.sock = cast(socket.socket, WaitingSocket(writer.sock))  # a stand-in: the writer only calls send()
    return bus


async def call_bus_daemon(bus: MessageBus, member: str, signature: str = "", body: list | None = None) -> Message:
    """A method of the bus daemon itself (org.freedesktop.DBus); its reply, an error reply included."""
    reply = await bus.call(
        Message(
            destination=BUS_DAEMON,
            path="/org/freedesktop/DBus",
            interface=BUS_DAEMON,
            member=member,
            signature=signature,
            body=body or [],
        )
    )
    assert reply is not None  # a method call made with a reply expected
    return reply
