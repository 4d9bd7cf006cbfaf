"""The fcitx5 addon end to end, headless: the addon is built with cmake once per test session; a
private session bus carries a real tsuzuri-daemon (dictionary conversions) and the real fcitx5
binary with only keyboard, dbus, dbusfrontend and the addon; a dbus-fast client plays the
application through dbusfrontend's org.fcitx.Fcitx.InputContext1. A second route runs the addon
inside fcitx in-process, through fcitx's test frontend (the build's tsuzuri-addon-test program).

Needs Debian's fcitx5, fcitx5-modules, libfcitx5core-dev, libfcitx5utils-dev, libmsgpack-dev, cmake,
g++ and pkg-config, and fcitx5-modules-dev for the in-process route; skips without them.
"""

import asyncio
import os
import shutil
import signal
import statistics
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from dbus_fast import Message, MessageFlag, MessageType, Variant
from dbus_fast.aio import MessageBus

from tests.dbus_fixtures import activating_bus, private_bus, running_daemon, stalled, write_daemon_activation
from tests.fcitx5_build import ADDON_SOURCE, build_addon, missing_build_requirement

NO_MODEL = "/nonexistent/model.gguf"  # the daemon then serves dictionary conversions
FCITX = "org.fcitx.Fcitx5"
INPUT_CONTEXT = "org.fcitx.Fcitx.InputContext1"
# fcitx capability bits: Preedit, FormattedPreedit, ClientSideInputPanel (no panel UI is loaded).
CAPABILITIES = 1 << 1 | 1 << 4 | 1 << 39
PASSWORD = 1 << 3
KEYSYMS = {"space": 0x20, "Return": 0xFF0D, "Escape": 0xFF1B, "BackSpace": 0xFF08, "Left": 0xFF51}
SIGNAL_WAIT_S = 2.0
PROFILE = """[Groups/0]
Name=Default
Default Layout=us
DefaultIM=tsuzuri

[Groups/0/Items/0]
Name=keyboard-us
Layout=

[Groups/0/Items/1]
Name=tsuzuri
Layout=

[GroupOrder]
0=Default
"""


def missing_requirement() -> str | None:
    if shutil.which("fcitx5") is None:
        return "fcitx5 is not installed (Debian package fcitx5)"
    reason = missing_build_requirement()
    if reason is None and not (fcitx_addon_dir() / "libdbusfrontend.so").exists():
        return "fcitx5's dbusfrontend is not installed (Debian package fcitx5-modules)"
    return reason


def fcitx_addon_dir() -> Path:
    found = subprocess.run(["pkg-config", "--variable=libdir", "Fcitx5Core"], capture_output=True, text=True)
    return Path(found.stdout.strip()) / "fcitx5"


@pytest.fixture(scope="session")
def addon_build(tmp_path_factory):
    reason = missing_requirement()
    if reason is not None:
        pytest.skip(reason)
    return build_addon(tmp_path_factory)


def install_for_user(build: Path, home: Path) -> None:
    """`cmake --install` of a TSUZURI_USER_INSTALL build, as the README's per-user install runs it."""
    env = {**os.environ, "HOME": str(home)}
    env.pop("XDG_DATA_HOME", None)
    for step in (["cmake", "-S", str(ADDON_SOURCE), "-B", str(build)], ["cmake", "--install", str(build)]):
        done = subprocess.run(step, capture_output=True, text=True, env=env)  # the first step re-reads HOME
        assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture(scope="module")
def fcitx_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fcitx5")


@pytest.fixture(scope="module")
def fcitx_bus(addon_build, fcitx_root):
    """A private session bus with fcitx5 and the addon on it, no display; yields the bus address."""
    with running_fcitx(addon_build, fcitx_root) as address:
        yield address


@contextmanager
def running_fcitx(addon_build: Path | None, root: Path, display: dict[str, str] | None = None):
    """fcitx5 with the addon on a private session bus; yields the bus address. The bus activates what
    root/services describes: nothing, unless a test puts the daemon's .service file there. `display` (DISPLAY or
    WAYLAND_DISPLAY) gives fcitx the display's addons too, as a desktop has: its fields share the display's focus
    (a field taking it takes it from the others). `addon_build` None: the addon is in root/.local already."""
    if addon_build is not None:
        install_for_user(addon_build, root)  # into root/.local, found as the README says
    (root / "config" / "fcitx5").mkdir(parents=True)
    (root / "config" / "fcitx5" / "profile").write_text(PROFILE)
    (root / "services").mkdir(exist_ok=True)
    addons = ["keyboard", "dbus", "dbusfrontend", "tsuzuri"]
    if display and "DISPLAY" in display:
        addons.append("xcb")
    if display and "WAYLAND_DISPLAY" in display:
        addons += ["wayland", "waylandim"]
    with activating_bus(root, root / "services") as address:
        env = {
            **os.environ,
            "DBUS_SESSION_BUS_ADDRESS": address,
            "HOME": str(root),
            "XDG_DATA_HOME": str(root / ".local" / "share"),
            "XDG_CONFIG_HOME": str(root / "config"),
            "XDG_RUNTIME_DIR": str(root),
            "FCITX_ADDON_DIRS": f"{root / '.local/lib/fcitx5'}:{fcitx_addon_dir()}",
        }
        env.pop("DISPLAY", None)
        env.pop("WAYLAND_DISPLAY", None)
        env.update(display or {})
        log_path = root / "fcitx5.log"
        with open(log_path, "w") as log:
            fcitx = subprocess.Popen(
                ["fcitx5", "--disable=all", f"--enable={','.join(addons)}"],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
            try:
                wait_for_name(address, FCITX, fcitx, log_path)
                yield address
            finally:
                fcitx.terminate()
                fcitx.wait(10)


def wait_for_name(address: str, name: str, process: subprocess.Popen, log_path: Path) -> None:
    deadline = time.monotonic() + 20
    while (
        subprocess.run(
            [
                "dbus-send",
                f"--bus={address}",
                "--print-reply",
                "--dest=org.freedesktop.DBus",
                "/",
                "org.freedesktop.DBus.NameHasOwner",
                f"string:{name}",
            ],
            capture_output=True,
            text=True,
        ).stdout.find("true")
        < 0
    ):
        if process.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"{name} did not come up: {log_path.read_text()}")
        time.sleep(0.1)


class Application:
    """One fcitx input context, driven like an application would; records what fcitx sends it."""

    def __init__(self, bus: MessageBus, path: str):
        self.bus = bus
        self.path = path
        self.events: list[tuple] = []
        self.preedit_drawn = asyncio.Event()
        bus.add_message_handler(self._on_message)

    @classmethod
    async def open(cls, address: str, capabilities: int = CAPABILITIES) -> "Application":
        bus = await MessageBus(bus_address=address).connect()
        reply = await call(
            bus,
            "/org/freedesktop/portal/inputmethod",
            "org.fcitx.Fcitx.InputMethod1",
            "CreateInputContext",
            "a(ss)",
            [[["program", "tsuzuri-test"]]],
        )
        app = cls(bus, reply.body[0])
        await call(
            bus,
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus",
            "AddMatch",
            "s",
            [f"type='signal',path='{app.path}'"],
            destination="org.freedesktop.DBus",
        )
        await app.call("SetCapability", "t", [capabilities])
        await app.call("FocusIn")
        await call(bus, "/controller", "org.fcitx.Fcitx.Controller1", "SetCurrentIM", "s", ["tsuzuri"])
        return app

    async def close(self) -> None:
        await self.call("DestroyIC")
        self.bus.disconnect()

    async def call(self, member: str, signature: str = "", body: list | None = None) -> Message:
        return await call(self.bus, self.path, INPUT_CONTEXT, member, signature, body or [])

    async def press(self, key: str) -> bool:
        """Presses and releases `key`; whether fcitx took the press from the application."""
        keyval = KEYSYMS.get(key) or ord(key)
        reply = await self.call("ProcessKeyEvent", "uuubu", [keyval, 0, 0, False, 0])
        await self.call("ProcessKeyEvent", "uuubu", [keyval, 0, 0, True, 0])
        return reply.body[0]

    async def type(self, *keys: str) -> list[bool]:
        return [await self.press(key) for key in keys]

    async def until(self, drawn) -> bool:
        """Whether `drawn()` holds within a few seconds: a first conversion loads the dictionary and
        answers after the key's timeout, and the addon draws that late answer when it comes."""
        deadline = time.monotonic() + 5
        while not drawn() and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        return drawn()

    def commits(self) -> list[str]:
        return [event[1] for event in self.events if event[0] == "commit"]

    def last(self, kind: str) -> tuple:
        return [event for event in self.events if event[0] == kind][-1]

    def _on_message(self, message: Message) -> None:
        if message.message_type != MessageType.SIGNAL or message.path != self.path:
            return
        if message.member == "CommitString":
            self.events.append(("commit", message.body[0]))
        elif message.member == "UpdateFormattedPreedit":
            segments, cursor = message.body
            self.events.append(("preedit", "".join(text for text, _ in segments), cursor, segments))
            self.preedit_drawn.set()
        elif message.member == "ForwardKey":
            keyval, _states, is_release = message.body
            self.events.append(("forward", keyval, is_release))
        elif message.member == "UpdateClientSideUI":
            _, _, aux_up, _, candidates, index, _, has_prev, has_next = message.body
            self.events.append(("aux", "".join(text for text, _ in aux_up)))
            self.events.append(("candidates", [text for _, text in candidates], index, has_prev, has_next))


async def call(
    bus: MessageBus,
    path: str,
    interface: str,
    member: str,
    signature: str = "",
    body: list | None = None,
    destination: str = FCITX,
    autostart: bool = False,
) -> Message:
    # NO_AUTOSTART unless asked: a bus that activates services must not start a second fcitx5.
    reply = await bus.call(
        Message(
            destination=destination,
            path=path,
            interface=interface,
            member=member,
            signature=signature,
            body=body or [],
            flags=MessageFlag.NONE if autostart else MessageFlag.NO_AUTOSTART,
        )
    )
    assert reply.message_type == MessageType.METHOD_RETURN, (member, reply.body)
    return reply


@pytest.fixture
async def app(fcitx_bus):
    application = await Application.open(fcitx_bus)
    yield application
    await application.close()


async def test_typing_a_sentence_commits_its_conversion(fcitx_bus, app, tmp_path):
    with running_daemon(fcitx_bus, tmp_path, NO_MODEL):
        assert await app.type(*"kyouhaiitenki") == [True] * 13
        assert app.commits() == []
        _, text, cursor, segments = app.last("preedit")
        assert (text, cursor) == ("きょうはいいてんき", len("きょうはいいてんき".encode()))  # fcitx counts bytes
        assert await app.type("space") == [True]
        assert await app.until(lambda: app.last("preedit")[1] == "今日はいい天気")
        assert await app.type("Return") == [True]
        assert app.commits() == ["今日はいい天気"]
        assert app.last("preedit")[1] == ""
        assert await app.type("Return") == [False]  # no composition: the application gets the key


async def test_live_conversion_is_drawn_as_the_preedit(fcitx_bus, app, tmp_path):
    config = tmp_path / "config" / "tsuzuri" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("[conversion]\nlive = true\n", encoding="utf-8")
    with running_daemon(fcitx_bus, tmp_path, NO_MODEL):
        await app.type(*"kyouhaiitenki")
        assert await app.until(lambda: app.last("preedit")[1] == "今日はいい天気")  # the keys' answers
        await app.type("Return")
        # The keys' answers show 武装放棄; the conversion in advance, once the keys stop, finds 武装蜂起, and
        # only OutputChanged can draw that before Space.
        await app.type(*"busouhoukiwokekkousiyoutosita")
        assert await app.until(lambda: app.last("preedit")[1] == "武装蜂起を決行しようとした")
        await app.type("Return")
        assert app.commits() == ["今日はいい天気", "武装蜂起を決行しようとした"]


async def test_the_settings_page_shows_and_changes_the_daemons_configuration(fcitx_bus, app, tmp_path):
    """What fcitx5-configtool does: GetConfig and SetConfig of the input method's page on fcitx's controller."""
    page = "fcitx://config/inputmethod/tsuzuri"
    config = tmp_path / "config" / "tsuzuri" / "config.toml"
    with running_daemon(fcitx_bus, tmp_path, NO_MODEL):
        shown = (await call(app.bus, "/controller", "org.fcitx.Fcitx.Controller1", "GetConfig", "s", [page])).body[0]
        values = shown.value
        shown_values = (values[key].value for key in ("conversion.live", "input.punctuation", "conversion.spelling"))
        assert tuple(shown_values) == ("False", "、。", "ranked")
        assert [key.value for key in values["keys.toggle_input"].value.values()] == [
            "Zenkaku_Hankaku",
            "Kanji",
            "Control+space",
        ]  # the daemon's ctrl+space, in fcitx's words

        changed = {
            **values,
            "conversion.live": Variant("s", "True"),
            "input.punctuation": Variant("s", "，．"),
            "conversion.spelling": Variant("s", "official"),
        }
        await call(
            app.bus, "/controller", "org.fcitx.Fcitx.Controller1", "SetConfig", "sv", [page, Variant("a{sv}", changed)]
        )
        text = config.read_text(encoding="utf-8")
        assert "\nlive = true\n" in text and '\npunctuation = "，．"\n' in text and '\nspelling = "official"\n' in text
        assert '\ntoggle_input = ["Zenkaku_Hankaku", "Kanji", "ctrl+space"]\n' in text  # not changed: not written
        await app.type(*"kyou")
        assert await app.until(lambda: app.last("preedit")[1] == "今日")  # live conversion, at once
        await app.type("Return", ",", "Return")
        assert app.commits() == ["今日", "，"]


async def test_the_candidate_window_pages_and_takes_clicks_through_the_daemon(fcitx_bus, app, tmp_path):
    with running_daemon(fcitx_bus, tmp_path, NO_MODEL):
        await app.type(*"kyou", "space")
        assert await app.until(lambda: app.last("preedit")[1] == "今日")
        await app.type("space")  # the second conversion key opens the window
        assert await app.until(lambda: any(event[0] == "candidates" and event[2] == 1 for event in app.events))
        _, candidates, index, _, _ = app.last("candidates")
        assert len(candidates) > 1 and index == 1
        assert app.last("aux")[1].startswith("きょう")
        assert app.last("preedit")[1] == candidates[index].split()[0]
        await app.call("SelectCandidate", "i", [2])  # a click on the page's third candidate
        assert app.commits() == [candidates[2].split()[0]]


async def test_a_key_the_gone_daemon_cannot_take_follows_the_composition_into_the_field(fcitx_bus, app, tmp_path):
    with running_daemon(fcitx_bus, tmp_path, NO_MODEL) as first:
        await app.type(*"kyou")
        assert app.last("preedit")[1] == "きょう"
        first.kill()
        first.wait(10)
    assert await app.type("h") == [False]  # no daemon: the key reaches the application
    assert await app.until(lambda: app.last("preedit")[1] == "")
    assert app.commits() == ["きょう"]  # after what was shown, where it was typed
    with running_daemon(fcitx_bus, tmp_path, NO_MODEL):
        assert await app.type("h", "a") == [True, True]
        assert app.last("preedit")[1] == "は"  # what went into the field is not replayed
        await app.type("Return")
        assert app.commits() == ["きょう", "は"]


async def test_a_key_answered_late_waits_for_the_answer_that_says_whose_it_is(fcitx_bus, app, tmp_path):
    """A daemon too busy to answer within the addon's key timeout (a loaded machine): the key is kept from the
    application, never typed into the field and composed both, and one the daemon does not take reaches the
    application when the answer says so."""
    with running_daemon(fcitx_bus, tmp_path, NO_MODEL) as daemon:
        assert await app.type("Escape") == [False]  # the addon's session opens, not the stall's first key
        with stalled(daemon):
            assert await app.type("n") == [True]
            drawn = await app.until(lambda: [e[1] for e in app.events if e[0] == "preedit"][-1:] == ["n"])
            assert drawn  # when the answer came
        assert await app.type("i", "Return") == [True, True]
        assert app.commits() == ["に"]
        with stalled(daemon):
            assert await app.type("Return") == [True]  # nothing composed: the daemon does not take it
            assert await app.until(lambda: ("forward", KEYSYMS["Return"], False) in app.events)
        assert app.commits() == ["に"]


async def test_a_password_field_teaches_the_daemon_nothing(fcitx_bus, tmp_path):
    with running_daemon(fcitx_bus, tmp_path, NO_MODEL):
        secret = await Application.open(fcitx_bus, CAPABILITIES | PASSWORD)
        # fcitx 5.0 keeps input methods out of password fields itself; where a user lets them in, the addon
        # leaves the keys to the application all the same: none reaches the daemon.
        assert await secret.type(*"himitsu", "space", "Return") == [False] * 9
        await secret.close()
        public = await Application.open(fcitx_bus)
        await public.type(*"kyouhaiitenki", "space", "Return")
        assert await public.until(lambda: public.commits() == ["今日はいい天気"])
        await public.close()
    learned = (tmp_path / "data" / "tsuzuri" / "learning.tsv").read_text(encoding="utf-8")  # saved on exit
    assert "てんき" in learned
    assert "ひみつ" not in learned


def test_the_addon_commits_inside_fcitx_through_its_test_frontend(addon_build, tmp_path):
    """frontends/fcitx5/test/addon_test.cpp types kyouhaiitenki, Space and Return and checks the
    commit. No password case here: fcitx 5.0 switches a password field to the keyboard layout before any
    input method sees its keys, so this route cannot show the addon one."""
    program = addon_build / "tsuzuri-addon-test"
    if not program.exists():  # cmake builds it only where the test frontend's headers are
        pytest.skip("fcitx5's test frontend headers are not installed (Debian package fcitx5-modules-dev)")
    with private_bus() as address, running_daemon(address, tmp_path, NO_MODEL):
        done = subprocess.run(
            [str(program)],
            env={**os.environ, "DBUS_SESSION_BUS_ADDRESS": address},
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 0, done.stdout + done.stderr


async def test_keystroke_to_preedit_latency(fcitx_bus, app, tmp_path):
    """p50 of key press → preedit signal, through fcitx5, the addon and tsuzuri-daemon, against the
    same keys sent straight to a daemon session; printed for the record (pytest -s)."""
    keys = list("kyouhaiitenkidesune" * 3)
    with running_daemon(fcitx_bus, tmp_path, NO_MODEL):
        await app.type(*"warmup", "Escape", "Escape")
        through_fcitx = []
        for key in keys:
            app.preedit_drawn.clear()
            start = time.perf_counter()
            await app.call("ProcessKeyEvent", "uuubu", [ord(key), 0, 0, False, 0])
            await asyncio.wait_for(app.preedit_drawn.wait(), SIGNAL_WAIT_S)
            through_fcitx.append((time.perf_counter() - start) * 1000)
        direct = await daemon_round_trips(fcitx_bus, keys)
    p50_fcitx, p50_direct = statistics.median(through_fcitx), statistics.median(direct)
    print(
        f"\nkeystroke -> preedit p50: {p50_fcitx:.2f} ms via fcitx5 + addon + daemon; "
        f"{p50_direct:.2f} ms straight to the daemon; the fcitx5 path adds {p50_fcitx - p50_direct:.2f} ms"
    )
    assert p50_fcitx < 100


async def daemon_round_trips(address: str, keys: list[str]) -> list[float]:
    """Milliseconds per key sent straight to a new daemon session, as the addon sends it."""
    from ime_protocol import KeyEvent, encode
    from ime_protocol.dbus_names import BUS_NAME, ROOT_INTERFACE, ROOT_PATH, SESSION_INTERFACE

    bus = await MessageBus(bus_address=address).connect()
    try:
        session = await call(bus, ROOT_PATH, ROOT_INTERFACE, "CreateSession", destination=BUS_NAME)
        timings = []
        for request_id, key in enumerate(keys, 1):
            start = time.perf_counter()
            await call(
                bus,
                session.body[0],
                SESSION_INTERFACE,
                "Send",
                "ay",
                [encode(KeyEvent(ord(key), 0, 0, request_id))],
                destination=BUS_NAME,
            )
            timings.append((time.perf_counter() - start) * 1000)
        return timings
    finally:
        bus.disconnect()


async def test_moving_focus_commits_the_composition_exactly_once(fcitx_bus, app, tmp_path):
    with running_daemon(fcitx_bus, tmp_path, NO_MODEL):
        await app.type(*"toukyou", "space")
        assert await app.until(lambda: app.last("preedit")[1] == "東京")
        await app.call("FocusOut")  # fcitx commits the preedit the application shows; the addon must not
        assert await app.until(lambda: app.commits() == ["東京"])
        await app.call("FocusIn")
        await app.type(*"kyouto", "space", "Return")
        assert await app.until(lambda: app.commits() == ["東京", "京都"])


async def test_switching_to_another_input_method_commits_the_composition(fcitx_bus, app, tmp_path):
    with running_daemon(fcitx_bus, tmp_path, NO_MODEL):
        await app.type(*"kyouha")
        await call(app.bus, "/controller", "org.fcitx.Fcitx.Controller1", "SetCurrentIM", "s", ["keyboard-us"])
        assert await app.until(lambda: app.commits() == ["きょうは"])
        # Once: the next commit follows it directly.
        await call(app.bus, "/controller", "org.fcitx.Fcitx.Controller1", "SetCurrentIM", "s", ["tsuzuri"])
        await app.type("a", "Return")
        assert await app.until(lambda: len(app.commits()) > 1)
        assert app.commits() == ["きょうは", "あ"]


async def test_no_key_is_lost_while_the_bus_restarts_a_killed_daemon(fcitx_bus, fcitx_root, app, tmp_path):
    from ime_protocol.dbus_names import BUS_NAME, ROOT_INTERFACE, ROOT_PATH

    bus = app.bus
    # Started later than a key may wait for its answer: the key must wait for the new daemon, not vanish.
    service = write_daemon_activation(fcitx_root / "services", fcitx_bus, tmp_path, NO_MODEL, delay_s=0.6)
    daemons: list[int] = []

    async def activate_and_find_daemon() -> int:
        await call(bus, ROOT_PATH, ROOT_INTERFACE, "GetStatus", destination=BUS_NAME, autostart=True)
        reply = await call(
            bus,
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus",
            "GetConnectionUnixProcessID",
            "s",
            [BUS_NAME],
            destination="org.freedesktop.DBus",
        )
        daemons.append(reply.body[0])
        return reply.body[0]

    try:
        await call(
            bus, "/org/freedesktop/DBus", "org.freedesktop.DBus", "ReloadConfig", destination="org.freedesktop.DBus"
        )
        first = await activate_and_find_daemon()
        assert await app.type(*"kyouha") == [True] * 6
        os.kill(first, signal.SIGKILL)
        while (
            await call(
                bus,
                "/org/freedesktop/DBus",
                "org.freedesktop.DBus",
                "NameHasOwner",
                "s",
                [BUS_NAME],
                destination="org.freedesktop.DBus",
            )
        ).body[0]:
            await asyncio.sleep(0.02)
        # The next key finds the session gone, activates a new daemon and replays the composition into it.
        assert await app.type(*"iitenki") == [True] * 7
        assert app.last("preedit")[1] == "きょうはいいてんき"
        await app.type("space")
        assert await app.until(lambda: app.last("preedit")[1] == "今日はいい天気")
        await app.type("Return")
        assert app.commits() == ["今日はいい天気"]
        await activate_and_find_daemon()
    finally:
        service.unlink()
        await call(
            bus, "/org/freedesktop/DBus", "org.freedesktop.DBus", "ReloadConfig", destination="org.freedesktop.DBus"
        )
        for pid in daemons:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass


async def test_a_composition_left_behind_by_a_dead_daemon_stays_in_its_field(fcitx_bus, app, tmp_path):
    with running_daemon(fcitx_bus, tmp_path, NO_MODEL) as first:
        await app.type(*"kyou")
        first.kill()
        first.wait(10)
    await app.call("FocusOut")
    await app.call("FocusIn")  # the next field
    with running_daemon(fcitx_bus, tmp_path, NO_MODEL):
        assert await app.type("a") == [True]
        assert app.last("preedit")[1] == "あ"


async def test_a_missing_daemon_is_announced_and_keys_reach_the_application(fcitx_bus, app):
    assert await app.type("k") == [False]  # no daemon on the bus, nor one to activate
    assert await app.until(lambda: any(event[0] == "aux" and "tsuzuri-daemon" in event[1] for event in app.events))
