"""One tsuzuri-daemon input session, reached over the daemon's private channel with GDBus (python3-gi).

The sessions live on a peer-to-peer connection to the daemon (daemon/private_channel.py), not on the session bus,
where any program of the user may watch every call and answer one first: what is typed crosses no shared wire.
`DaemonChannel` keeps that connection for all of the engine's sessions; its address is asked of the daemon on the
session bus and taken only from the connection that owns the daemon's name, as the bus daemon (whom no client can
pose as) says. The call that asks D-Bus-activates the daemon if it is installed as a bus service.

`send` waits for the daemon's answer, up to a timeout: an IBus engine must decide about a key
before it returns. An answer that comes later (a first conversion that loads the dictionary, a
slow model) is not lost: it is handed to `on_late_output`, in order, either when the next call
returns or from the main loop, so a late commit still reaches the application. OutputChanged
signals of the session go to the same callback.

When the daemon restarts, its channel closes and its sessions are gone; the next call notices (the connection
closed, UnknownSession), connects to the new daemon's channel, creates a new session and replays into it what
ime_protocol/recovery.py lists (the field's purpose,
surrounding text and input mode, then the keys of the composition in progress, answered or not), so
the user's unfinished typing survives. The fcitx5 addon's daemon_session.cpp replays the same.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from gi.repository import Gio, GLib

from ime_protocol import FocusIn, FrontendMessage, KeyEvent, Output, ProtocolError, decode, encode
from ime_protocol.dbus_names import BUS_NAME, ERROR_UNKNOWN_SESSION, ROOT_INTERFACE, ROOT_PATH, SESSION_INTERFACE
from ime_protocol.recovery import COMPOSITION_ENDING_MESSAGES, FIELD_STATE_MESSAGES, MAX_REPLAYED_KEYS

# First contact may start the daemon by D-Bus activation; it takes its bus name before loading anything.
CONNECT_TIMEOUT_MS = 3000
# How long a late answer is still awaited; past this the daemon is considered hung.
LATE_ANSWER_TIMEOUT_MS = 30_000
LATE_POLL_MS = 10
# The D-Bus errors that mean "this session no longer exists", as opposed to a bad or slow call.
SESSION_LOST_ERRORS = frozenset(
    {
        ERROR_UNKNOWN_SESSION,
        "org.freedesktop.DBus.Error.ServiceUnknown",
        "org.freedesktop.DBus.Error.NameHasNoOwner",
        "org.freedesktop.DBus.Error.NoReply",
    }
)


class DaemonUnavailable(Exception):
    """The daemon could not be reached or refused the call; the key goes to the application."""


class DaemonTimeout(DaemonUnavailable):
    """The daemon did not answer in time; its answer will come through `on_late_output`."""


BUS_DAEMON = "org.freedesktop.DBus"


def method_call(
    destination: str,
    path: str,
    interface: str,
    member: str,
    arguments: GLib.Variant | None = None,
    auto_start: bool = False,
) -> Gio.DBusMessage:
    message = Gio.DBusMessage.new_method_call(destination, path, interface, member)
    if arguments is not None:
        message.set_body(arguments)
    if not auto_start:
        message.set_flags(Gio.DBusMessageFlags.NO_AUTO_START)
    return message


def reply_to(connection: Gio.DBusConnection, message: Gio.DBusMessage) -> Gio.DBusMessage:
    """The reply to `message`, waited for up to CONNECT_TIMEOUT_MS; DaemonUnavailable if none came."""
    try:
        reply, _serial = connection.send_message_with_reply_sync(
            message, Gio.DBusSendMessageFlags.NONE, CONNECT_TIMEOUT_MS, None
        )
    except GLib.Error as error:
        raise DaemonUnavailable(error.message) from error
    return reply


def answer_of(reply: Gio.DBusMessage, sender: str | None, body_type: str) -> GLib.Variant:
    """The reply's body if it is a method return from `sender` with a body of `body_type`; DaemonUnavailable says
    why not. The bus daemon's own errors (the daemon gone: ServiceUnknown) count too: no client can send as the bus
    daemon. On the daemon's channel, where nobody else is, `sender` is None: no bus stamps a sender there."""
    if reply.get_sender() not in (sender, BUS_DAEMON):
        raise DaemonUnavailable(f"refused an answer from {reply.get_sender()}, not the daemon ({sender})")
    if reply.get_message_type() == Gio.DBusMessageType.ERROR:
        try:
            reply.to_gerror()
        except GLib.Error as error:
            raise DaemonUnavailable(error.message) from error
        raise DaemonUnavailable(f"{reply.get_error_name()}")
    body = reply.get_body()
    if body is None or body.get_type_string() != body_type:
        raise DaemonUnavailable(f"bad reply: not {body_type}")
    return body


class DaemonChannel:
    """The connection to the daemon's private channel that the sessions share, made again once it closes."""

    def __init__(self, bus: Gio.DBusConnection):
        self.bus = bus  # the session bus: only asked where the channel is
        self._connection: Gio.DBusConnection | None = None

    def connection(self) -> Gio.DBusConnection:
        if self._connection is None or self._connection.is_closed():
            self._connection = self._connect()
        return self._connection

    def _connect(self) -> Gio.DBusConnection:
        try:
            # Addressed to the well-known name, which D-Bus-activates the daemon if it is not running; whoever
            # answered must then own that name (asked once it has answered).
            reply = reply_to(
                self.bus, method_call(BUS_NAME, ROOT_PATH, ROOT_INTERFACE, "GetChannelAddress", auto_start=True)
            )
            (address,) = answer_of(reply, self._daemon_owner(), "(s)").unpack()
            return Gio.DBusConnection.new_for_address_sync(
                address, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT, None, None
            )
        except GLib.Error as error:
            raise DaemonUnavailable(f"cannot reach the daemon's channel: {error.message}") from error
        except DaemonUnavailable as error:
            raise DaemonUnavailable(f"cannot reach the daemon's channel: {error}") from error.__cause__

    def _daemon_owner(self) -> str:
        """The unique name that owns the daemon's name, as the bus daemon says."""
        ask = method_call(
            BUS_DAEMON, "/org/freedesktop/DBus", BUS_DAEMON, "GetNameOwner", GLib.Variant("(s)", (BUS_NAME,))
        )
        (owner,) = answer_of(reply_to(self.bus, ask), BUS_DAEMON, "(s)").unpack()
        return str(owner)


class _SendCall:
    """A Send in flight to the daemon's connection. Its reply is dispatched in a main context of its own, so that
    waiting for it runs none of the engine's other handlers."""

    def __init__(self, connection: Gio.DBusConnection, path: str, message: FrontendMessage):
        self.message = message
        self.connection = connection
        self.context = GLib.MainContext.new()
        self.results: list[Gio.AsyncResult] = []
        self.context.push_thread_default()  # GDBus dispatches the reply to the caller's thread-default context
        try:
            connection.send_message_with_reply(
                method_call(BUS_NAME, path, SESSION_INTERFACE, "Send", GLib.Variant("(ay)", (encode(message),))),
                Gio.DBusSendMessageFlags.NONE,
                LATE_ANSWER_TIMEOUT_MS,
                None,
                lambda _connection, result: self.results.append(result),
            )
        finally:
            self.context.pop_thread_default()

    def wait(self, timeout_ms: int) -> bool:
        """Whether the reply is in, after waiting for it at most `timeout_ms`."""
        timer = GLib.timeout_source_new(timeout_ms)
        timer.set_callback(lambda *_: False)
        timer.attach(self.context)
        while not self.results and not timer.is_destroyed():
            self.context.iteration(True)
        timer.destroy()
        return bool(self.results)

    def output(self) -> Output:
        try:
            reply = self.connection.send_message_with_reply_finish(self.results[0])
        except GLib.Error as error:
            raise DaemonUnavailable(error.message) from error
        (data,) = answer_of(reply, None, "(ay)").unpack()
        try:
            return decode(bytes(data), Output)
        except ProtocolError as error:
            raise DaemonUnavailable(f"bad reply: {error}") from error


class DaemonSession:
    def __init__(self, channel: DaemonChannel, on_late_output: Callable[[Output], None]):
        self._channel = channel
        self._connection: Gio.DBusConnection | None = None  # the channel's connection the session lives on
        self._on_late_output = on_late_output
        self._path: str | None = None
        self._subscription: int | None = None
        self._field_state: dict[type, FrontendMessage] = {}  # the latest of each FIELD_STATE_MESSAGES type
        self._composition_keys: list[KeyEvent] = []  # keys sent since the preedit was last empty, answered or not
        self._late_calls: deque[_SendCall] = deque()  # timed out, answer still to come, oldest first
        self._late_poll: int | None = None

    def send(self, message: FrontendMessage, timeout_ms: int) -> Output:
        """The daemon's Output for `message`; raises DaemonUnavailable (or DaemonTimeout)."""
        if isinstance(message, FIELD_STATE_MESSAGES):
            # Kept even if this call fails: a password field must stay secret in whatever session comes next.
            self._field_state[type(message)] = message
        if isinstance(message, COMPOSITION_ENDING_MESSAGES):
            # The composition ends here, answered or not: a restarted daemon must not bring it back elsewhere.
            self._composition_keys.clear()
        if self._path is None:
            self._open()
        try:
            return self._call_send(message, timeout_ms)
        except DaemonUnavailable as error:
            if not _session_lost(error):
                raise
        self._forget_session()
        self._open()
        return self._call_send(message, timeout_ms)

    def abandon_composition(self) -> None:
        """The composition went into the field some other way (the daemon was unreachable): none is replayed."""
        self._composition_keys.clear()

    def close(self) -> None:
        if self._path is not None and self._connection is not None and not self._connection.is_closed():
            self._connection.send_message(
                method_call(BUS_NAME, self._path, SESSION_INTERFACE, "Close"), Gio.DBusSendMessageFlags.NONE
            )
        self._forget_session()

    def _open(self) -> None:
        connection = self._channel.connection()
        try:
            reply = reply_to(connection, method_call(BUS_NAME, ROOT_PATH, ROOT_INTERFACE, "CreateSession"))
            (self._path,) = answer_of(reply, None, "(o)").unpack()  # nobody but the daemon is on the channel
        except DaemonUnavailable as error:
            raise DaemonUnavailable(f"cannot create a session: {error}") from error.__cause__
        self._connection = connection
        self._subscription = connection.signal_subscribe(
            None,  # a peer-to-peer connection has no senders to tell apart
            SESSION_INTERFACE,
            "OutputChanged",
            self._path,
            None,
            Gio.DBusSignalFlags.NONE,
            self._output_changed,
        )
        # In the order ime_protocol/recovery.py gives; the replayed keys are tracked again as they are sent.
        keys, self._composition_keys = self._composition_keys, []
        field_state = [self._field_state[kind] for kind in FIELD_STATE_MESSAGES if kind in self._field_state]
        for message in [*field_state, *keys]:
            try:
                self._call_send(message, CONNECT_TIMEOUT_MS)
            except DaemonUnavailable as error:  # refused or late: the replay goes on
                if _session_lost(error):
                    self._forget_session()
                    self._composition_keys = keys  # for the next try
                    raise

    def _forget_session(self) -> None:
        if self._subscription is not None and self._connection is not None:
            self._connection.signal_unsubscribe(self._subscription)
        self._path = self._subscription = self._connection = None
        self._late_calls.clear()  # their answers died with the session

    def _call_send(self, message: FrontendMessage, timeout_ms: int) -> Output:
        path, connection = self._path, self._connection
        if path is None or connection is None:  # send() and _open() make the session first
            raise DaemonUnavailable("no session")
        # A key counts as part of the composition from the moment it is sent: one whose answer does not come
        # in time is then replayed with the rest if the session turns out to be gone.
        tracked = (
            message
            if isinstance(message, KeyEvent)
            and not self._secret_field()
            and len(self._composition_keys) < MAX_REPLAYED_KEYS
            else None
        )
        if tracked is not None:
            self._composition_keys.append(tracked)
        call = _SendCall(connection, path, message)
        if not call.wait(timeout_ms):
            self._late_calls.append(call)
            if self._late_poll is None:
                self._late_poll = GLib.timeout_add(LATE_POLL_MS, self._deliver_late_answers)
            raise DaemonTimeout(f"no answer within {timeout_ms} ms")
        # The daemon answers a session's messages in order, so every earlier answer is in by now.
        self._deliver_late_answers()
        try:
            output = call.output()
        except DaemonUnavailable as error:
            if tracked is not None and isinstance(error.__cause__, GLib.Error):
                self._forget_key(tracked)  # never reached a session: the caller resends or drops it
            raise
        self._track_composition(message, output)
        return output

    def _deliver_late_answers(self) -> bool:
        while self._late_calls:
            call = self._late_calls[0]
            call.context.iteration(False)
            if not call.results:
                return True  # GLib: keep polling
            self._late_calls.popleft()
            try:
                output = call.output()
            except DaemonUnavailable:
                continue  # a call that failed late changed nothing to draw (its key is still replayed)
            self._track_composition(call.message, output)
            self._on_late_output(output)
        self._late_poll = None
        return False

    def _secret_field(self) -> bool:
        focus = self._field_state.get(FocusIn)
        return isinstance(focus, FocusIn) and focus.purpose.is_secret

    def _forget_key(self, key: KeyEvent) -> None:
        if key in self._composition_keys:
            self._composition_keys.remove(key)

    def _track_composition(self, message: FrontendMessage, output: Output) -> None:
        # Keep no copy of what is typed into a password field.
        if not output.preedit.segments and output.candidates is None or self._secret_field():
            self._composition_keys.clear()
        elif isinstance(message, KeyEvent) and not output.consumed:
            self._forget_key(message)  # the application had it: not part of the composition

    def _output_changed(self, _connection, _sender, _path, _interface, _signal, parameters: GLib.Variant) -> None:
        try:
            output = decode(bytes(parameters.unpack()[0]), Output)
        except ProtocolError:
            return  # not from a daemon speaking our protocol version: nothing to draw
        self._on_late_output(output)


def _session_lost(error: DaemonUnavailable) -> bool:
    """Whether the call failed because its session no longer exists (rather than a bad or slow call): the
    daemon said so, or the channel closed (the daemon is gone)."""
    cause = error.__cause__
    return isinstance(cause, GLib.Error) and (
        Gio.DBusError.get_remote_error(cause) in SESSION_LOST_ERRORS
        or cause.matches(Gio.io_error_quark(), Gio.IOErrorEnum.CLOSED)
    )
