"""The frontends in a real application: a GTK3 window (a GtkEntry and a GtkTextView) under Xvfb, typed
into with xdotool through the real ibus-daemon or fcitx5 and the real tsuzuri-daemon, asserting what the
widgets hold. These are the scenarios a user trusts an input method on: the happy path, focus moving to
another widget, an engine switch, a daemon restart.

Needs Debian's xvfb, xdotool, python3-gi, gir1.2-gtk-3.0, ibus-gtk3 and fcitx5-frontend-gtk3 besides
the frameworks' own packages; skips without them.
"""
import asyncio
import os
import signal
import subprocess
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.dbus_fixtures import running_daemon, wait_until_warmed_up, write_daemon_activation
from tests.real_window import Window, x_display
from tests.integration.test_frontend_fcitx5 import addon_build, fcitx_bus, fcitx_root  # noqa: F401 (fixtures)
from tests.integration.test_frontend_ibus import ibus_env  # noqa: F401 (fixture)

NO_MODEL = "/nonexistent/model.gguf"


@pytest.fixture(scope="module")
def display():
    with x_display() as name:
        yield name


@dataclass
class Desktop:
    """A GTK window typed into through one framework, with tsuzuri-daemon behind it."""
    framework: str  # "ibus" or "fcitx5"
    window: Window
    daemon: subprocess.Popen
    keyboard: str  # the framework's plain keyboard input method, to switch to

    def use(self, input_method: str) -> None:
        """Makes the focused field use `input_method`."""
        env = self.window.env
        if self.framework == "ibus":
            # `ibus engine NAME` exits 1 although it sets the engine (IBus 1.5.27): what counts is what it
            # reports next.
            subprocess.run(["ibus", "engine", input_method], env=env, capture_output=True)
            current = subprocess.run(["ibus", "engine"], env=env, capture_output=True, text=True).stdout.strip()
            assert current == input_method
        else:  # fcitx's controller acts on the focused field
            done = subprocess.run(["dbus-send", f"--bus={env['DBUS_SESSION_BUS_ADDRESS']}", "--print-reply",
                                   "--dest=org.fcitx.Fcitx5", "/controller",
                                   "org.fcitx.Fcitx.Controller1.SetCurrentIM", f"string:{input_method}"],
                                  capture_output=True, text=True)
            assert done.returncode == 0, done.stderr

    def use_tsuzuri(self) -> None:
        """Switches the focused field to Tsuzuri and waits until it converts (IBus starts it on demand)."""
        self.use("tsuzuri")
        for _ in range(20):
            before = self.window.texts["entry"]
            self.window.keys("a", "Return")  # "a" while the engine starts, "あ" once it converts
            self.window.wait_until(lambda texts: texts["entry"] != before)
            if self.window.texts["entry"].endswith("あ"):
                break
        assert self.window.texts["entry"].endswith("あ"), self.window.texts
        self.window.keys("ctrl+a", "BackSpace")
        self.window.wait_for_text("entry", "")


@pytest.fixture(params=["ibus", "fcitx5"])
def desktop(request, display, tmp_path):
    if request.param == "ibus":
        env = request.getfixturevalue("ibus_env")
        address = subprocess.run(["ibus", "address"], env=env, capture_output=True, text=True).stdout.strip()
        env = {**env, "GTK_IM_MODULE": "ibus", "IBUS_ADDRESS": address}
        keyboard = "xkb:us::eng"
    else:
        env = {**os.environ, "DBUS_SESSION_BUS_ADDRESS": request.getfixturevalue("fcitx_bus"),
               "GTK_IM_MODULE": "fcitx"}
        keyboard = "keyboard-us"
    env.update(DISPLAY=display, NO_AT_BRIDGE="1")
    with running_daemon(env["DBUS_SESSION_BUS_ADDRESS"], tmp_path, NO_MODEL) as daemon:
        window = Window(env)
        try:
            desktop = Desktop(request.param, window, daemon, keyboard)
            desktop.use_tsuzuri()
            yield desktop
        finally:
            window.close()


def test_typing_a_sentence(desktop):
    desktop.window.type("kyouhaiitenkidesune")
    desktop.window.keys("space", "Return")
    desktop.window.wait_for_text("entry", "今日はいい天気ですね")


def converted(window: Window, romaji: str, shown: str) -> None:
    """`romaji` typed into the focused entry and converted: `shown` in its preedit."""
    window.type(romaji)
    window.keys("space")
    window.wait_for_preedit("entry", shown)


def test_focus_moving_to_another_widget_commits_once_into_the_one_it_left(desktop):
    window = desktop.window
    converted(window, "toukyou", "東京")
    window.click("textview")
    window.wait_for_text("entry", "東京")
    if desktop.framework == "fcitx5":
        desktop.use("tsuzuri")  # fcitx keeps an input method per field
    window.type("kyouto")
    window.keys("space", "Return")
    window.wait_for_text("textview", "京都")
    assert window.texts["entry"] == "東京"  # once, not 東京東京


def test_a_click_inside_the_field_loses_nothing_and_typing_goes_on_at_the_click(desktop):
    window = desktop.window
    window.type("kyouha")
    window.keys("Return")
    window.wait_for_text("entry", "きょうは")
    converted(window, "toukyou", "東京")
    window.click("entry", "start")
    if desktop.framework == "ibus":
        # IBus's GTK module commits the preedit itself on a click (PreeditFocusMode.COMMIT) before the cursor
        # moves, and resets the engine: 東京 stays where it was typed.
        window.wait_for_text("entry", "きょうは東京")
        window.wait_for_preedit("entry", "")
        typed = "にきょうは東京"
    else:
        # fcitx5-gtk tells fcitx nothing of a click: the composition stays, drawn at the new cursor, and the
        # next key commits it there, as with fcitx5's own engines.
        typed = "東京にきょうは"
    window.type("ni")
    window.keys("Return")
    window.wait_for_text("entry", typed)


def test_switching_input_method_commits_the_composition(desktop):
    window = desktop.window
    window.type("kyouha")
    window.wait_for_preedit("entry", "きょうは")
    desktop.use(desktop.keyboard)
    window.wait_for_text("entry", "きょうは")
    window.type("ok")  # plain Latin letters now
    window.wait_for_text("entry", "きょうはok")


def test_no_key_is_lost_across_a_daemon_restart(desktop, fcitx_root, tmp_path):  # noqa: F811
    """IBus: the daemon is started again by hand; fcitx5: the bus activates a new one, later than a key
    may wait for its answer."""
    window, address = desktop.window, desktop.window.env["DBUS_SESSION_BUS_ADDRESS"]
    window.type("kyouha")
    window.wait_for_preedit("entry", "きょうは")
    desktop.daemon.send_signal(signal.SIGKILL)
    desktop.daemon.wait(10)
    if desktop.framework == "ibus":
        restarted = running_daemon(address, tmp_path, NO_MODEL)
    else:
        restarted = activated_daemon(fcitx_root / "services", address, tmp_path)
    with restarted:
        window.type("iitenki")
        window.wait_for_preedit("entry", "きょうはいいてんき")
        window.keys("space")
        window.wait_for_preedit("entry", "今日はいい天気")
        window.keys("Return")
        window.wait_for_text("entry", "今日はいい天気")


@contextmanager
def activated_daemon(service_dir: Path, address: str, home: Path):
    """The bus may activate tsuzuri-daemon (0.6 s late) while this lasts."""
    service = write_daemon_activation(service_dir, address, home, NO_MODEL, delay_s=0.6)
    reload = ["dbus-send", f"--bus={address}", "--print-reply", "--dest=org.freedesktop.DBus",
              "/org/freedesktop/DBus", "org.freedesktop.DBus.ReloadConfig"]
    try:
        subprocess.run(reload, check=True, capture_output=True)
        yield
    finally:
        service.unlink()
        subprocess.run(reload, capture_output=True)
        subprocess.run(["pkill", "-f", f"daemon.server --bus {address}"], capture_output=True)



def wait_until_the_daemon_reconverts(address: str) -> None:
    """The daemon builds the reading index reconversion needs once started (~3 s): waits for it."""
    from daemon.tools.client import ClientSession, connect

    async def wait() -> None:
        bus = await connect(address)
        try:
            session = await ClientSession.create(bus)
            await wait_until_warmed_up(session)
            await session.close()
        finally:
            bus.disconnect()
    asyncio.run(wait())


def committed_sentence(desktop: Desktop, widget: str) -> None:
    """今日はいい天気 typed and converted into `widget`, the cursor after it; the daemon ready to reconvert."""
    window = desktop.window
    if widget != window.focused:
        window.click(widget)
        if desktop.framework == "fcitx5":
            desktop.use("tsuzuri")  # fcitx keeps an input method per field
    wait_until_the_daemon_reconverts(window.env["DBUS_SESSION_BUS_ADDRESS"])
    window.type("kyouhaiitenki")
    window.keys("space", "Return")
    window.wait_for_text(widget, "今日はいい天気")


def choose_the_next_candidate(window: Window, widget: str, shown: str) -> str:
    """Space, as for any conversion: the next candidate, committed with Return; returns it."""
    window.keys("space")
    window.wait_until(lambda texts: texts[f"{widget}_preedit"] not in ("", shown))
    chosen = window.texts[f"{widget}_preedit"]
    window.keys("Return")
    window.wait_for_preedit(widget, "")
    return chosen


# A GtkTextView tells the input method its selection; a GTK 3 GtkEntry does not (its retrieve-surrounding
# handler reports the cursor alone, under IBus's and fcitx5's GTK 3 modules alike), so in an entry the
# reconversion key takes the text before the cursor: a selection made with the cursor at its end.

@pytest.mark.parametrize("widget, select, selected, kept", [
    ("textview", ("shift+Home",), "今日はいい天気", ""),  # the case; the cursor at the selection's start
    ("textview", ("shift+Left", "shift+Left"), "天気", "今日はいい"),  # part of the text
    ("entry", ("Home", "shift+End"), "今日はいい天気", ""),  # an entry: the cursor at the selection's end
], ids=["textview", "textview-part", "entry"])
def test_reconverting_a_selection_replaces_it_with_the_chosen_candidate(desktop, widget, select, selected, kept):
    window = desktop.window
    committed_sentence(desktop, widget)
    window.keys(*select, "Henkan")
    # Its reading (きょうはいいてんき, てんき) converts again, in place of the selection.
    window.wait_for_preedit(widget, selected)
    window.wait_for_text(widget, kept)
    chosen = choose_the_next_candidate(window, widget, selected)
    window.wait_for_text(widget, kept + chosen)


def test_cancelling_a_reconversion_of_the_word_before_the_cursor_puts_it_back(desktop):
    window = desktop.window
    committed_sentence(desktop, "entry")
    window.keys("Henkan")  # nothing selected: the text just before the cursor
    window.wait_for_preedit("entry", "今日はいい天気")
    window.wait_for_text("entry", "")
    window.keys("Escape")
    window.wait_for_text("entry", "今日はいい天気")
    window.wait_for_preedit("entry", "")
