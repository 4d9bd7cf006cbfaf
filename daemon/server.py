"""`tsuzuri-daemon`: the D-Bus service (dbus-fast, asyncio).

Bus name and root object: org.tsuzuri.Tsuzuri1 at /org/tsuzuri/Tsuzuri1, interface org.tsuzuri.Tsuzuri1:
  CreateSession() -> o               a session object owned by the caller, reaped when it disconnects; for
                                     callers running as the daemon's user only (a session learns from and
                                     shows the user's words and history)
  GetChannelAddress() -> s           the D-Bus address of the daemon's private channel, where the frontends
                                     make their sessions out of other programs' sight (daemon/private_channel.py:
                                     the same objects and methods, peer to peer); the daemon's user only
  Convert(s reading, s context, u n) -> a(sss)   stateless conversion: (text, source, annotation), without
                                     the user's learning history and user dictionary; in a process of its own
                                     at the lowest CPU priority (daemon/stateless_worker.py), one call of a
                                     connection at a time, dropped when the caller goes away
  GetStatus() -> (sss)               model state (none | loading | ready | failed), model, reason (the
                                     model's, then why learned choices or words may not be kept, if so);
                                     also the read-only property Status
  ReloadConfig() -> as               problems found; bad values keep their old setting, the rest applies
                                     at once (another model loads in the background); the daemon's user only
  GetSettings() -> a{ss}             every setting of the configuration in use, by dotted name
                                     ("conversion.live"), as its TOML literal ("false"); the daemon's user only
  SetSettings(a{ss} settings) -> as  writes those settings into the configuration file (keeping the rest of it)
                                     and applies it as ReloadConfig does; a bad setting, or a file that is not
                                     valid TOML, is an InvalidArgs error and changes nothing (settings pages
                                     call these two)
  signal StatusChanged(s state, s model, s reason)
  ListUserWords … ClearLearned       the user's own words and learning history (daemon/userdata_methods.py)
Session objects /org/tsuzuri/Tsuzuri1/session/N, interface org.tsuzuri.Tsuzuri1.Session:
  Send(ay message) -> ay output      ime_protocol messages in, an ime_protocol Output back
  Close()
  signal OutputChanged(ay output)    asynchronous updates (the live text improved by the conversion in
                                     advance), sent to the owner only

Methods are dispatched from one raw message handler, which sees the caller (session ownership) and
turns every failure into a D-Bus error reply instead of a dead daemon. The tables ROOT and SESSION below
(daemon/dbus_interface.py) are the definition of the above: dispatch checks a call's arguments against them,
and Introspect is written from them. A session's messages and the work after them run on worker threads,
never on the event loop, in order (daemon/session_runner.py); the daemon's parts are built in daemon/parts.py.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import os
import signal
import sys
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path

from dbus_fast import Message, MessageType, NameFlag, RequestNameReply, Variant
from dbus_fast.aio import MessageBus

from daemon import sd_notify
from daemon.allocator import tune_allocator
from daemon.bus import call_bus_daemon, connect_bus
from daemon.config import Config, ConfigStore, setting_literals
from daemon.conversion import MAX_CONTEXT_CHARS, MAX_READING_CHARS, ReadingTooLong
from daemon.dbus_errors import (
    ERROR_ACCESS_DENIED,
    ERROR_FAILED,
    ERROR_INVALID_ARGS,
    ERROR_LIMITS,
    ERROR_UNKNOWN_METHOD,
    CallError,
    check_same_user,
)
from daemon.dbus_interface import Arg, Interface, Method, Property, Signal, introspection_xml
from daemon.engine import EngineStatus, ModelState
from daemon.parts import LEARNING_SAVE_SECONDS, MODEL_SWITCHED_OFF, DaemonParts
from daemon.private_channel import PeerCredentials, PrivateChannel, channel_socket_path
from daemon.session import InputSession
from daemon.session_runner import SessionRunner
from daemon.session_settings import SessionSettings, bindings_of, romaji_table_of
from daemon.session_registry import NotSessionOwner, SessionEntry, SessionLimitReached, SessionRegistry, UnknownSession
from daemon.userdata_methods import USER_DATA_METHODS
from ime_protocol import FRONTEND_MESSAGES, Output, ProtocolError, decode, encode
from ime_protocol.dbus_names import (
    BUS_NAME,
    ERROR_PROTOCOL,
    ERROR_UNKNOWN_SESSION,
    ROOT_PATH,
    SESSION_INTERFACE,
    SESSION_PATH_PREFIX as SESSION_PREFIX,
)

MAX_CONVERT_N = 100
MAX_ECHOED_PATH = 100  # an error names the object it was sent to, but never echoes a huge path back
GIL_SWITCH_INTERVAL_S = 0.001

log = logging.getLogger("tsuzuri")


def object_path(msg: Message) -> str:
    """The object a method call is sent to (the bus delivers none without one)."""
    return msg.path or ""


@dataclass
class CallerLane:
    """One connection's stateless Convert calls: one at a time, and every one cancelled when it goes away."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    calls: set[asyncio.Task] = field(default_factory=set)


class TsuzuriService:
    def __init__(
        self,
        bus: MessageBus,
        parts: DaemonParts,
        settings: SessionSettings,
        config: ConfigStore | None = None,
        workers: int = 2,
        pinned_model: str | None = None,
    ):
        self.bus = bus
        self.channel: PrivateChannel | None = None  # serve() opens it
        self.parts = parts
        self.settings = settings
        self.config = config
        self.pinned_model = pinned_model  # named on the command line: the configuration does not change it
        self.sessions = SessionRegistry(SESSION_PREFIX)  # keyed by object path
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="tsuzuri-convert")
        # Stateless Convert calls (any program on the bus may make them) run in a process of their own
        # (parts.stateless), one call of a connection at a time: one caller cannot fill its queue.
        self._lanes: dict[str, CallerLane] = {}
        # Conversions in advance run on a thread of their own: keys never queue behind them.
        self._in_advance = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tsuzuri-in-advance")
        self.runner = SessionRunner(self._executor, self._in_advance, self._output_changed)
        self._loop = asyncio.get_running_loop()
        self._tasks: set[asyncio.Task] = set()

    # -- dispatch -------------------------------------------------------------------------------

    def handle_message(self, msg: Message):
        if msg.message_type is MessageType.SIGNAL:
            if msg.member == "NameOwnerChanged" and msg.sender == "org.freedesktop.DBus":
                name, _old, new = msg.body
                if not new:
                    self.drop_owner(name)
            return None
        if msg.message_type is not MessageType.METHOD_CALL:
            return None
        path, member = object_path(msg), msg.member or ""
        if msg.interface == INTROSPECTABLE.name and msg.member == "Introspect":
            described = SESSION_INTROSPECTION if path.startswith(SESSION_PREFIX) else ROOT_INTROSPECTION
            return Message.new_method_return(msg, "s", [described])
        if msg.interface == "org.freedesktop.DBus.Properties" and path == ROOT_PATH:
            return self._properties(msg)
        if path == ROOT_PATH and msg.interface in (ROOT.name, None):
            method = ROOT.method(member)
        elif path.startswith(SESSION_PREFIX) and msg.interface in (SESSION.name, None):
            method = SESSION.method(member)
        else:
            return None
        if method is None or method.handler is None:
            return Message.new_error(
                msg, ERROR_UNKNOWN_METHOD, f"no method {member[:MAX_ECHOED_PATH]} on {path[:MAX_ECHOED_PATH]}"
            )
        task = self._loop.create_task(self._reply(msg, method))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return True

    async def _reply(self, msg: Message, method: Method) -> None:
        try:
            if msg.signature != method.in_signature:
                raise CallError(
                    ERROR_INVALID_ARGS, f"expected arguments ({method.in_signature}), got ({msg.signature})"
                )
            assert method.handler is not None  # handle_message refuses the methods without one
            reply = Message.new_method_return(msg, method.out_signature, await method.handler(self, msg, *msg.body))
        except CallError as exc:
            reply = Message.new_error(msg, exc.name, str(exc))
        except ProtocolError as exc:
            reply = Message.new_error(msg, ERROR_PROTOCOL, f"{exc.code}: {exc}")
        except Exception as exc:  # a bug must cost one call, never the daemon
            log.exception("%s.%s failed", msg.path, msg.member)
            reply = Message.new_error(msg, ERROR_FAILED, f"internal error: {type(exc).__name__}")
        if not msg.flags & 0x1:  # NO_REPLY_EXPECTED
            self.send(reply)

    def send(self, message: Message) -> None:
        """To a peer of the private channel, or on the bus."""
        if self.channel is None or not self.channel.deliver(message):
            self.bus.send(message)

    # -- root methods ---------------------------------------------------------------------------

    async def _create_session(self, msg: Message):
        try:
            await self.require_same_user(msg.sender)
            pid = await self._process_of(msg.sender)
            path, evicted = self.sessions.create(
                msg.sender, pid, lambda: InputSession(self.parts.converter, self.settings)
            )
        except SessionLimitReached as error:
            raise CallError(ERROR_LIMITS, str(error)) from None
        if evicted is not None:
            log.warning(
                "%d sessions open: closed the least recently used one of process %d for a new one",
                self.sessions.max_sessions,
                evicted.owner_pid,
            )
            self._dispose(evicted)
        return [path]

    async def _process_of(self, sender: str) -> int:
        """The client's process id, as its socket (a peer of the channel) or the bus says (asked once per
        connection)."""
        peer = self._channel_peer(sender)
        if peer is not None:
            return peer.pid
        pid = self.sessions.process_of(sender)
        if pid is None:
            reply = await call_bus_daemon(self.bus, "GetConnectionUnixProcessID", "s", [sender])
            if reply.message_type is not MessageType.METHOD_RETURN:
                raise CallError(ERROR_FAILED, "the bus does not say which process this client is")
            pid = reply.body[0]
            self.sessions.remember_process(sender, pid)
        return pid

    def _channel_peer(self, sender: str) -> PeerCredentials | None:
        """What the socket says of a peer of the private channel; None for a bus client."""
        return self.channel.credentials(sender) if self.channel is not None else None

    async def _convert(self, msg: Message, reading: str, context: str, n: int):
        if not reading or len(reading) > MAX_READING_CHARS:
            raise CallError(ERROR_INVALID_ARGS, f"reading must have 1..{MAX_READING_CHARS} characters")
        if not 1 <= n <= MAX_CONVERT_N:
            raise CallError(ERROR_INVALID_ARGS, f"n must be 1..{MAX_CONVERT_N}")
        # Any program on the bus may call this: it must not reveal what the user has learned or added.
        lane = self._lanes.setdefault(msg.sender, CallerLane())
        call_task = asyncio.current_task()
        assert call_task is not None
        lane.calls.add(call_task)
        try:
            async with lane.lock:
                found = await self.parts.stateless.convert(
                    reading, context[-MAX_CONTEXT_CHARS:], n, self.parts.converter_settings()
                )
        except ReadingTooLong as error:
            raise CallError(ERROR_INVALID_ARGS, str(error)) from None
        except BrokenProcessPool:
            raise CallError(ERROR_FAILED, "the conversion's process stopped; the next call starts another") from None
        finally:
            lane.calls.discard(call_task)
            if not lane.calls and self._lanes.get(msg.sender) is lane:
                del self._lanes[msg.sender]
        return [found]

    async def _get_channel_address(self, msg: Message):
        await self.require_same_user(msg.sender)
        if self.channel is None:
            raise CallError(ERROR_FAILED, "this daemon has no private channel")
        return [self.channel.address]

    async def _get_status(self, msg: Message):
        status = self.status()
        return [[status.state.value, status.model, status.reason]]

    async def _reload_config(self, msg: Message):
        await self.require_same_user(msg.sender)
        return [self.reload_config()]

    async def _get_settings(self, msg: Message):
        await self.require_same_user(msg.sender)
        return [setting_literals(self._config_store().config)]

    async def _set_settings(self, msg: Message, literals: dict[str, str]):
        await self.require_same_user(msg.sender)
        try:
            self._config_store().write_settings(literals)
        except ValueError as error:
            raise CallError(ERROR_INVALID_ARGS, str(error)) from None
        except OSError as error:
            raise CallError(ERROR_FAILED, f"the configuration file could not be written: {error}") from None
        return [self.reload_config()]

    def _config_store(self) -> ConfigStore:
        if self.config is None:
            raise CallError(ERROR_FAILED, "this daemon reads no configuration file")
        return self.config

    async def require_same_user(self, sender: str) -> None:
        """Only the user the daemon runs as may type through it (a session shows and learns their words), change
        its configuration, or read or change their words and history. The session bus is theirs already; this
        holds where another user can reach it (a shared or proxied bus)."""
        peer = self._channel_peer(sender)
        if peer is not None:
            check_same_user(peer.uid, os.getuid())
            return
        reply = await call_bus_daemon(self.bus, "GetConnectionUnixUser", "s", [sender])
        if reply.message_type is not MessageType.METHOD_RETURN:
            raise CallError(ERROR_ACCESS_DENIED, "the bus does not say which user this client runs as")
        check_same_user(reply.body[0], os.getuid())

    def _properties(self, msg: Message) -> Message:
        """The read-only property Status (sss) = (state, model, reason), as GetStatus returns it."""
        status = self.status()
        value = Variant("(sss)", [status.state.value, status.model, status.reason[:250]])
        if msg.member == "Get" and msg.signature == "ss" and msg.body == [BUS_NAME, "Status"]:
            return Message.new_method_return(msg, "v", [value])
        if msg.member == "GetAll" and msg.signature == "s" and msg.body == [BUS_NAME]:
            return Message.new_method_return(msg, "a{sv}", [{"Status": value}])
        return Message.new_error(
            msg, ERROR_INVALID_ARGS, "the only property is org.tsuzuri.Tsuzuri1.Status (read-only)"
        )

    def status(self) -> EngineStatus:
        return self.parts.status()

    def reload_config(self) -> list[str]:
        """Re-reads the configuration and applies all of it: the sessions' settings, the model's number of
        conversions, threads and beam width, and another model, which loads in the background while the
        dictionary serves. Returns the problems found (a bad value keeps its old setting)."""
        if self.config is None:
            return []
        before = self.config.config
        problems = self.config.reload()
        after = self.config.config
        self.settings = settings_from_config(after)
        for entry in self.sessions.entries():
            entry.session.settings = self.settings
        self.parts.configure(after)
        wanted, had = model_wanted(after), model_wanted(before)
        if wanted != had:
            if self.pinned_model:
                problems.append(
                    f"model: {wanted or 'none'} is not loaded: the daemon was started with --model {self.pinned_model}"
                )
            elif wanted is None:
                log.info("config: the neural model is switched off")
                self.parts.engine.unload(MODEL_SWITCHED_OFF)
            else:
                log.info("config: model %s (was %s): loading it", wanted, had or "none")
                self.parts.engine.load(wanted)
        return problems

    # -- sessions -------------------------------------------------------------------------------

    def _entry(self, msg: Message) -> SessionEntry:
        try:
            return self.sessions.lookup(object_path(msg), msg.sender or "")
        except UnknownSession:
            raise CallError(
                ERROR_UNKNOWN_SESSION,
                f"no session {object_path(msg)[:MAX_ECHOED_PATH]} (closed, or its client went away)",
            ) from None
        except NotSessionOwner as error:
            raise CallError(ERROR_ACCESS_DENIED, str(error)) from None

    async def _send(self, msg: Message, data: bytes):
        entry = self._entry(msg)
        output = await self.runner.apply(entry, decode(bytes(data), FRONTEND_MESSAGES))
        return [encode(output)]

    async def _close(self, msg: Message):
        self._entry(msg)
        self.close_session(object_path(msg))
        return []

    def _output_changed(self, entry: SessionEntry, output: Output) -> None:
        """`output` to the session's owner alone: a broadcast would show every other client on the bus what the
        user types."""
        self.send(
            Message(
                destination=entry.owner,
                path=entry.name,
                interface=SESSION_INTERFACE,
                member="OutputChanged",
                message_type=MessageType.SIGNAL,
                signature=SESSION.signal("OutputChanged").signature,
                body=[encode(output)],
            )
        )

    def close_session(self, path: str) -> None:
        entry = self.sessions.remove(path)
        if entry is not None:
            self._dispose(entry)

    def drop_owner(self, owner: str) -> None:
        """A connection went away: its sessions close, and its Convert calls are cancelled (one waiting for the
        lane or the worker never runs; one running finishes unanswered)."""
        for entry in self.sessions.drop_owner(owner):
            self._dispose(entry)
        lane = self._lanes.pop(owner, None)
        for call_task in lane.calls if lane is not None else ():
            call_task.cancel()

    def _dispose(self, entry: SessionEntry) -> None:
        self.runner.dispose(entry)

    def status_changed(self, status: EngineStatus) -> None:
        """Called from the model-loading thread."""
        if status.state is ModelState.READY:
            log.info("model %s ready", status.model)
            freeze_what_is_loaded()
        elif status.state is ModelState.FAILED:
            log.warning("model %s failed to load: %s (dictionary conversion goes on)", status.model, status.reason)

        def emit() -> None:
            self.bus.send(
                Message.new_signal(
                    ROOT_PATH,
                    BUS_NAME,
                    "StatusChanged",
                    ROOT.signal("StatusChanged").signature,
                    [status.state.value, status.model, status.reason[:250]],
                )
            )

        self._loop.call_soon_threadsafe(emit)

    def shutdown(self) -> None:
        """Queued conversions are dropped (the daemon is stopping: nobody waits for their answers), the running
        ones finish, then the sessions close here, every worker being idle."""
        self._in_advance.shutdown(wait=True, cancel_futures=True)
        self.parts.stateless.shutdown()
        self._executor.shutdown(wait=True, cancel_futures=True)
        for path in self.sessions.names():
            entry = self.sessions.remove(path)
            if entry is not None:
                entry.session.close()


ROOT = Interface(
    BUS_NAME,
    (
        Method("CreateSession", TsuzuriService._create_session, outputs=(Arg("session", "o"),)),
        Method("GetChannelAddress", TsuzuriService._get_channel_address, outputs=(Arg("address", "s"),)),
        Method(
            "Convert",
            TsuzuriService._convert,
            (Arg("reading", "s"), Arg("context", "s"), Arg("n", "u")),
            (Arg("candidates", "a(sss)"),),
        ),
        Method("GetStatus", TsuzuriService._get_status, outputs=(Arg("status", "(sss)"),)),
        Method("ReloadConfig", TsuzuriService._reload_config, outputs=(Arg("problems", "as"),)),
        Method("GetSettings", TsuzuriService._get_settings, outputs=(Arg("settings", "a{ss}"),)),
        Method("SetSettings", TsuzuriService._set_settings, (Arg("settings", "a{ss}"),), (Arg("problems", "as"),)),
        *USER_DATA_METHODS,
    ),
    signals=(Signal("StatusChanged", (Arg("state", "s"), Arg("model", "s"), Arg("reason", "s"))),),
    properties=(Property("Status", "(sss)"),),
)
SESSION = Interface(
    SESSION_INTERFACE,
    (
        Method("Send", TsuzuriService._send, (Arg("message", "ay"),), (Arg("output", "ay"),)),
        Method("Close", TsuzuriService._close),
    ),
    signals=(Signal("OutputChanged", (Arg("output", "ay"),)),),
)
INTROSPECTABLE = Interface(
    "org.freedesktop.DBus.Introspectable", (Method("Introspect", None, outputs=(Arg("xml", "s"),)),)
)
# Each object describes what it answers: the root its interface and the Status property, a session its own.
ROOT_INTROSPECTION = introspection_xml((ROOT, INTROSPECTABLE))
SESSION_INTROSPECTION = introspection_xml((SESSION, INTROSPECTABLE))


def warm_up(parts: DaemonParts) -> None:
    parts.warm_up()
    freeze_what_is_loaded()


def freeze_what_is_loaded() -> None:
    """Moves every object alive now out of the garbage collector's sight. What is loaded lives as long as the
    daemon, and a full collection walking its ~330,000 objects took 43 ms, a stall for whichever key met it."""
    gc.collect()
    gc.freeze()


def model_wanted(config: Config) -> str | None:
    """The model the configuration asks for, None when it switches the neural model off."""
    return config.model if config.conversion.neural_model else None


def settings_from_config(config: Config) -> SessionSettings:
    return SessionSettings(
        page_size=config.candidates.page_size,
        live_conversion=config.conversion.live,
        context_chars=config.conversion.context_chars,
        learning=config.conversion.learning,
        bindings=bindings_of(config.keys),
        romaji_table=romaji_table_of(config.input),
        show_source=config.candidates.show_source,
    )


async def serve(args: argparse.Namespace) -> int:
    config = ConfigStore(Path(args.config) if args.config else None)
    for problem in config.reload():
        log.warning("config: %s", problem)
    cfg = config.config
    bus = await connect_bus(args.bus)
    parts = DaemonParts.build(cfg)
    engine = parts.engine
    loop = asyncio.get_running_loop()
    service = TsuzuriService(bus, parts, settings_from_config(cfg), config, workers=2, pinned_model=args.model)
    bus.add_message_handler(service.handle_message)
    channel = PrivateChannel(channel_socket_path(), service.handle_message, service.drop_owner)
    await channel.listen()
    service.channel = channel
    await call_bus_daemon(
        bus, "AddMatch", "s", ["type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged'"]
    )
    # Take the name before loading anything slow: frontends (and D-Bus activation) wait on it.
    reply = await bus.request_name(BUS_NAME, NameFlag.DO_NOT_QUEUE)
    if reply not in (RequestNameReply.PRIMARY_OWNER, RequestNameReply.ALREADY_OWNER):
        print(f"tsuzuri-daemon: {BUS_NAME} is already owned by another process", file=sys.stderr)
        channel.close()
        return 1
    engine.on_status = service.status_changed
    model = args.model or model_wanted(cfg)
    if model:
        engine.load(model)
    else:
        engine.unload(MODEL_SWITCHED_OFF)
    # Open the dictionary and build the emoji index now, off the loop, not on the first key (~1 s).
    loop.run_in_executor(None, warm_up, parts)
    sd_notify.ready()
    log.info("serving %s (model %s)", BUS_NAME, model or "none")

    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    loop.add_signal_handler(signal.SIGINT, stop.set)

    def reload_config() -> None:
        for problem in service.reload_config():
            log.warning("config: %s", problem)

    loop.add_signal_handler(signal.SIGHUP, reload_config)

    async def housekeeping() -> None:
        interval = sd_notify.watchdog_interval()
        tick = min(interval / 2, LEARNING_SAVE_SECONDS) if interval else LEARNING_SAVE_SECONDS
        while True:
            await asyncio.sleep(tick)
            sd_notify.watchdog_ping()
            await loop.run_in_executor(None, parts.save_userdata)

    keeper = loop.create_task(housekeeping())
    disconnected = loop.create_task(bus.wait_for_disconnect())
    await asyncio.wait([loop.create_task(stop.wait()), disconnected], return_when=asyncio.FIRST_COMPLETED)
    sd_notify.stopping()
    keeper.cancel()
    channel.close()
    service.shutdown()
    parts.save_userdata()
    engine.close()
    if disconnected.done():
        # Not asked to stop: a failure, so that systemd (Restart=on-failure) brings the daemon back.
        log.error("lost the bus connection: %s", disconnected.exception() or "closed")
        return 1
    bus.disconnect()
    log.info("stopped")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tsuzuri-daemon", description="Tsuzuri input method daemon")
    parser.add_argument("--bus", help="D-Bus address (default: the session bus)")
    parser.add_argument("--model", help="model name or GGUF path (default: from the configuration)")
    parser.add_argument("--config", default=None, help="configuration file (default: XDG config dir)")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO, format="tsuzuri-daemon: %(levelname)s %(message)s"
    )
    tune_allocator()  # before the executor's and llama.cpp's threads start
    # A key's thread gets the interpreter within 1 ms of asking, not 5 (Python's default), while a
    # conversion in advance or another session's sentence holds it.
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)
    try:
        return asyncio.run(serve(args))
    except (ConnectionError, OSError, EOFError) as exc:
        print(f"tsuzuri-daemon: cannot use the bus: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
