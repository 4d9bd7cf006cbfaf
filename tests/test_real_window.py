"""The frontends in a real application: a GTK3 window (a GtkEntry and a GtkTextView) under Xvfb, typed
into with xdotool through the real ibus-daemon or fcitx5 and the real tsuzuri-daemon, asserting what the
widgets hold. These are the scenarios a user trusts an input method on: the happy path, focus moving to
another widget, an engine switch, a daemon restart.

Needs Debian's xvfb, xdotool, python3-gi, gir1.2-gtk-3.0, ibus-gtk3 and fcitx5-frontend-gtk3 besides
the frameworks' own packages; skips without them.
"""
import os
import signal
import subprocess

import pytest

from tests.dbus_fixtures import running_daemon, write_daemon_activation
from tests.real_window import Window, x_display
from tests.test_frontend_fcitx5 import addon_build, fcitx_bus, fcitx_root  # noqa: F401 (fixtures)
from tests.test_frontend_ibus import ibus_env  # noqa: F401 (fixture)

NO_MODEL = "/nonexistent/model.gguf"


@pytest.fixture(scope="module")
def display():
    with x_display() as name:
        yield name


# -- IBus -------------------------------------------------------------------------------------------

@pytest.fixture
def ibus_window(ibus_env, display, tmp_path):  # noqa: F811
    address = subprocess.run(["ibus", "address"], env=ibus_env, capture_output=True, text=True).stdout.strip()
    env = {**ibus_env, "DISPLAY": display, "GTK_IM_MODULE": "ibus", "IBUS_ADDRESS": address, "NO_AT_BRIDGE": "1"}
    with running_daemon(ibus_env["DBUS_SESSION_BUS_ADDRESS"], tmp_path, NO_MODEL) as daemon:
        window = Window(env)
        try:
            use_ibus_engine(window, "tsuzuri")
            yield window, daemon
        finally:
            window.close()


def use_ibus_engine(window: Window, name: str) -> None:
    """Makes the focused field use `name`, and checks that it converts (its process starts on demand)."""
    # `ibus engine NAME` exits 1 although it sets the engine (IBus 1.5.27): what counts is what it reports next.
    subprocess.run(["ibus", "engine", name], env=window.env, capture_output=True)
    current = subprocess.run(["ibus", "engine"], env=window.env, capture_output=True, text=True).stdout.strip()
    assert current == name
    wait_until_it_converts(window)


def wait_until_it_converts(window: Window) -> None:
    for _ in range(20):
        before = window.texts["entry"]
        window.keys("a", "Return")  # "a" while the engine starts, "あ" once it converts
        window.wait_until(lambda texts: texts["entry"] != before)
        if window.texts["entry"].endswith("あ"):
            break
    assert window.texts["entry"].endswith("あ"), window.texts
    window.keys("ctrl+a", "BackSpace")
    window.wait_for_text("entry", "")


def test_ibus_typing_a_sentence(ibus_window):
    window, _ = ibus_window
    window.type("kyouhaiitenkidesune")
    window.keys("space", "Return")
    window.wait_for_text("entry", "今日はいい天気ですね")


def test_ibus_focus_moving_to_another_widget_commits_into_the_one_it_left(ibus_window):
    window, _ = ibus_window
    window.type("toukyou")
    window.keys("space")
    window.wait_for_preedit("entry", "東京")
    window.click("textview")
    window.wait_for_text("entry", "東京")
    window.type("kyouto")
    window.keys("space", "Return")
    window.wait_for_text("textview", "京都")
    assert window.texts["entry"] == "東京"


def test_ibus_switching_engine_commits_the_composition(ibus_window):
    window, _ = ibus_window
    window.type("kyouha")
    window.wait_for_preedit("entry", "きょうは")
    subprocess.run(["ibus", "engine", "xkb:us::eng"], env=window.env, capture_output=True)
    window.wait_for_text("entry", "きょうは")
    window.type("ok")  # plain Latin letters now
    window.wait_for_text("entry", "きょうはok")


def test_ibus_no_key_is_lost_across_a_daemon_restart(ibus_window, tmp_path):
    window, daemon = ibus_window
    window.type("kyouha")
    window.wait_for_preedit("entry", "きょうは")
    daemon.send_signal(signal.SIGKILL)
    daemon.wait(10)
    with running_daemon(window.env["DBUS_SESSION_BUS_ADDRESS"], tmp_path, NO_MODEL):
        window.type("iitenki")
        window.wait_for_preedit("entry", "きょうはいいてんき")
        window.keys("space")
        window.wait_for_preedit("entry", "今日はいい天気")
        window.keys("Return")
        window.wait_for_text("entry", "今日はいい天気")


# -- fcitx5 -----------------------------------------------------------------------------------------

def use_fcitx_input_method(window: Window, name: str) -> None:
    """Makes the focused field use input method `name` (fcitx's controller acts on the focused one)."""
    done = subprocess.run(["dbus-send", f"--bus={window.env['DBUS_SESSION_BUS_ADDRESS']}", "--print-reply",
                           "--dest=org.fcitx.Fcitx5", "/controller", "org.fcitx.Fcitx.Controller1.SetCurrentIM",
                           f"string:{name}"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.fixture
def fcitx_window(fcitx_bus, display, tmp_path):  # noqa: F811
    env = {**os.environ, "DBUS_SESSION_BUS_ADDRESS": fcitx_bus, "DISPLAY": display, "GTK_IM_MODULE": "fcitx",
           "NO_AT_BRIDGE": "1"}
    with running_daemon(fcitx_bus, tmp_path, NO_MODEL) as daemon:
        window = Window(env)
        try:
            use_fcitx_input_method(window, "tsuzuri")
            wait_until_it_converts(window)
            yield window, daemon
        finally:
            window.close()


def test_fcitx_typing_a_sentence(fcitx_window):
    window, _ = fcitx_window
    window.type("kyouhaiitenkidesune")
    window.keys("space", "Return")
    window.wait_for_text("entry", "今日はいい天気ですね")


def test_fcitx_focus_moving_to_another_widget_commits_once_into_the_one_it_left(fcitx_window):
    window, _ = fcitx_window
    window.type("toukyou")
    window.keys("space")
    window.wait_for_preedit("entry", "東京")
    window.click("textview")
    window.wait_for_text("entry", "東京")
    use_fcitx_input_method(window, "tsuzuri")  # fcitx keeps an input method per field
    window.type("kyouto")
    window.keys("space", "Return")
    window.wait_for_text("textview", "京都")
    assert window.texts["entry"] == "東京"  # once, not 東京東京


def test_fcitx_switching_input_method_commits_the_composition(fcitx_window):
    window, _ = fcitx_window
    window.type("kyouha")
    window.wait_for_preedit("entry", "きょうは")
    use_fcitx_input_method(window, "keyboard-us")
    window.wait_for_text("entry", "きょうは")
    window.type("ok")
    window.wait_for_text("entry", "きょうはok")


def test_fcitx_no_key_is_lost_while_the_bus_restarts_a_killed_daemon(fcitx_window, fcitx_root, tmp_path):  # noqa: F811
    window, daemon = fcitx_window
    service = write_daemon_activation(fcitx_root / "services", window.env["DBUS_SESSION_BUS_ADDRESS"], tmp_path,
                                      NO_MODEL, delay_s=0.6)
    try:
        subprocess.run(["dbus-send", f"--bus={window.env['DBUS_SESSION_BUS_ADDRESS']}", "--print-reply",
                        "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.ReloadConfig"],
                       check=True, capture_output=True)
        window.type("kyouha")
        window.wait_for_preedit("entry", "きょうは")
        daemon.send_signal(signal.SIGKILL)
        daemon.wait(10)
        window.type("iitenki")
        window.wait_for_preedit("entry", "きょうはいいてんき")
        window.keys("space")
        window.wait_for_preedit("entry", "今日はいい天気")
        window.keys("Return")
        window.wait_for_text("entry", "今日はいい天気")
    finally:
        service.unlink()
        subprocess.run(["dbus-send", f"--bus={window.env['DBUS_SESSION_BUS_ADDRESS']}", "--print-reply",
                        "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.ReloadConfig"],
                       capture_output=True)
        subprocess.run(["pkill", "-f", f"daemon.server --bus {window.env['DBUS_SESSION_BUS_ADDRESS']}"],
                       capture_output=True)
