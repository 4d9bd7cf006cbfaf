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
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from frontends.ibus.install import SYSTEM_PYTHON
from tests.dbus_fixtures import REPO, running_daemon, wait_until_warmed_up, write_daemon_activation
from tests.real_window import EVENT_WAIT_S, Window, json_lines, missing_requirement, x_display
from tests.integration.test_frontend_fcitx5 import Application as Fcitx5Field
from tests.integration.test_frontend_fcitx5 import addon_build, fcitx_root, running_fcitx  # noqa: F401 (fixtures)
from tests.integration.test_frontend_ibus import driver as ibus_driver
from tests.integration.test_frontend_ibus import ibus_env  # noqa: F401 (fixture)

NO_MODEL = "/nonexistent/model.gguf"


@pytest.fixture(scope="module")
def display():
    with x_display() as name:
        yield name


def use_fcitx_input_method(env: dict, input_method: str) -> None:
    """fcitx5's controller switches the field focused last (on the bus of `env`) to `input_method`."""
    done = subprocess.run(
        [
            "dbus-send",
            f"--bus={env['DBUS_SESSION_BUS_ADDRESS']}",
            "--print-reply",
            "--dest=org.fcitx.Fcitx5",
            "/controller",
            "org.fcitx.Fcitx.Controller1.SetCurrentIM",
            f"string:{input_method}",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr


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
        else:
            use_fcitx_input_method(env, input_method)

    def use_tsuzuri(self, widget: str = "entry", window: Window | None = None) -> None:
        """Switches the focused `widget` of `window` (this desktop's by default) to Tsuzuri, once it converts:
        IBus starts it on demand, and fcitx keeps an input method per field."""
        window = window or self.window
        before = window.switch_until_it_converts(lambda: self.use("tsuzuri"), widget)
        window.keys(*["BackSpace"] * (len(window.texts[widget]) - len(before)))
        window.wait_for_text(widget, before)


TOOLKITS = ["gtk3", "gtk4", "qt5", "qt6"]
IM_MODULES = {"ibus": "ibus", "fcitx5": "fcitx"}  # GTK_IM_MODULE and QT_IM_MODULE


@pytest.fixture(params=["ibus", "fcitx5"])
def framework(request):
    return request.param


@pytest.fixture(scope="module")
def fcitx_desktop_bus(addon_build, fcitx_root, display):  # noqa: F811
    """fcitx5 with its X11 addon on the display, as on a desktop."""
    with running_fcitx(addon_build, fcitx_root, {"DISPLAY": display}) as address:
        yield address


@pytest.fixture(params=TOOLKITS)
def toolkit(request):
    reason = missing_requirement(request.param)
    if reason is not None:
        pytest.skip(reason)
    return request.param


def framework_env(request, framework: str, display: str) -> tuple[dict, str]:
    """The environment an application of `framework` needs, and the framework's plain keyboard."""
    if framework == "ibus":
        env = request.getfixturevalue("ibus_env")
        address = subprocess.run(["ibus", "address"], env=env, capture_output=True, text=True).stdout.strip()
        env = {**env, "IBUS_ADDRESS": address}
        keyboard = "xkb:us::eng"
    else:
        env = {**os.environ, "DBUS_SESSION_BUS_ADDRESS": request.getfixturevalue("fcitx_desktop_bus")}
        keyboard = "keyboard-us"
    module = IM_MODULES[framework]
    env.update(DISPLAY=display, NO_AT_BRIDGE="1", GTK_IM_MODULE=module, QT_IM_MODULE=module)
    return env, keyboard


@pytest.fixture
def desktop(request, framework, toolkit, display, tmp_path):
    env, keyboard = framework_env(request, framework, display)
    with running_daemon(env["DBUS_SESSION_BUS_ADDRESS"], tmp_path, NO_MODEL) as daemon:
        window = Window(env, toolkit)
        try:
            desktop = Desktop(framework, window, daemon, keyboard)
            desktop.use_tsuzuri()
            yield desktop
        finally:
            window.close()


def test_typing_a_sentence(desktop):
    desktop.window.type("kyouhaiitenkidesune")
    desktop.window.keys("space", "Return")
    desktop.window.wait_for_text("entry", "今日はいい天気ですね")


def test_typing_on_after_a_conversion_commits_it_and_composes_the_next_word(desktop):
    """The commit and the next word's first kana come in one answer: a toolkit that resets its input method after a
    commit (GTK 4 does) must not take the new composition with it."""
    window = desktop.window
    converted(window, "kyou", "今日")
    window.type("ha")
    window.wait_for_text("entry", "今日")
    window.wait_for_preedit("entry", "は")
    window.type("iitenki")
    window.keys("space", "Return")
    window.wait_for_text("entry", "今日はいい天気")


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
        desktop.use_tsuzuri("textview")
    window.type("kyouto")
    window.keys("space", "Return")
    window.wait_for_text("textview", "京都")
    assert window.texts["entry"] == "東京"  # once, not 東京東京


# Where a composition goes when the user clicks inside its field, by who handles the click: "typed" where it was
# typed (the toolkit commits its copy before the cursor moves), "click" at the click (GTK 4 resets the input method
# as the cursor moves and the engine commits the daemon's answer, which arrives after; or the toolkit keeps the
# composition and the next key commits it at the new cursor). Never lost, never twice.
CLICK_COMMITS = {
    ("ibus", "gtk3"): "typed",
    ("ibus", "gtk4"): "click",
    ("ibus", "qt5"): "typed",
    ("ibus", "qt6"): "typed",
    ("fcitx5", "gtk3"): "click",
    ("fcitx5", "gtk4"): "click",
    ("fcitx5", "qt5"): "click",
    ("fcitx5", "qt6"): "click",
}


def test_a_click_inside_the_field_loses_nothing_and_typing_goes_on_at_the_click(desktop):
    window = desktop.window
    window.type("kyouha")
    window.keys("Return")
    window.wait_for_text("entry", "きょうは")
    converted(window, "toukyou", "東京")
    window.click("entry", "start")
    if CLICK_COMMITS[desktop.framework, window.toolkit] == "typed":
        window.wait_for_text("entry", "きょうは東京")
        typed = "にきょうは東京"
    else:
        typed = "東京にきょうは"
    window.type("ni")
    window.keys("Return")
    window.wait_for_text("entry", typed)
    window.wait_for_preedit("entry", "")


@contextmanager
def ibus_panel(env: dict):
    """tests/ibus_panel.py on the desktop's ibus-daemon; yields the queue of what it prints."""
    panel = subprocess.Popen(
        [str(SYSTEM_PYTHON), str(REPO / "tests" / "ibus_panel.py")], env=env, stdout=subprocess.PIPE, text=True
    )
    told = json_lines(panel.stdout)
    try:
        assert told.get(timeout=EVENT_WAIT_S) == {"ready": True}
        yield told
    finally:
        panel.terminate()
        panel.wait(10)


@pytest.mark.parametrize("framework", ["ibus"])  # fcitx5 draws its own, with no panel to stand in for
def test_the_candidate_window_opens_at_the_text(desktop):
    """IBus's panel opens the candidate window under the rectangle the field gives as its text cursor: it must lie
    on the entry (screen coordinates: with no window manager the window is at the origin)."""
    window = desktop.window
    with ibus_panel(window.env) as told:
        converted(window, "kyou", "今日")
        window.keys("space")  # the candidate window opens
        rectangles = [told.get(timeout=EVENT_WAIT_S)["cursor"]]
        while not told.empty():
            rectangles.append(told.get()["cursor"])
    left, top, width, height = window.rectangles["entry"]
    outside = [
        r for r in rectangles if not (left <= r[0] <= left + width and top <= r[1] and r[1] + r[3] <= top + height)
    ]
    if outside and window.toolkit == "gtk4":
        pytest.xfail(
            "IBus 1.5.27's GTK 4 module gives a rectangle as tall as the window (18, 32, 50 × 240 for an entry 34 "
            "high at its top): the panel opens the candidate window under the window, not the text"
        )
    assert not outside, (rectangles, window.rectangles["entry"])


def test_switching_input_method_commits_the_composition(desktop):
    window = desktop.window
    window.type("kyouha")
    window.wait_for_preedit("entry", "きょうは")
    desktop.use(desktop.keyboard)
    if desktop.framework == "ibus" and window.toolkit.startswith("qt"):
        # A Qt field may get no commit of its own on a switch (frontends/ibus/clients.py): then the composition
        # comes back into the field when Tsuzuri does, after what the other input method typed.
        window.type("ok")
        window.wait_until(lambda texts: texts["entry"].endswith("ok"))
        desktop.use("tsuzuri")
        window.wait_until(lambda texts: texts["entry"] in ("きょうはok", "okきょうは"))
        return
    window.wait_for_text("entry", "きょうは")
    window.type("ok")  # plain Latin letters now
    window.wait_for_text("entry", "きょうはok")


@contextmanager
def headless_field(desktop: Desktop):
    """A field of a program with no window, focused in the framework while the X focus stays where it was: the
    framework hears of another field's focus before the focused application's focus out (a busy machine's order)."""
    if desktop.framework == "ibus":
        with ibus_driver(desktop.window.env):
            yield
        return
    loop = asyncio.new_event_loop()
    field = loop.run_until_complete(Fcitx5Field.open(desktop.window.env["DBUS_SESSION_BUS_ADDRESS"]))
    try:
        yield
    finally:
        loop.run_until_complete(field.close())
        loop.close()


@pytest.mark.parametrize("order", ["as_it_comes", "other_window_first", "framework_hears_the_other_first"])
def test_focus_moving_to_another_application_commits_once_into_the_field_it_left(desktop, order):
    """`other_window_first`: the application is stopped while the other one takes the focus and types;
    `framework_hears_the_other_first`: see headless_field."""
    window = desktop.window
    if order == "framework_hears_the_other_first" and desktop.framework == "ibus" and window.toolkit.startswith("gtk"):
        pytest.xfail(
            "IBus 1.5.27 clears a GTK field's preedit without a commit when another field takes its "
            "engine first, and the engine cannot tell whether the field had committed it"
        )
    other = Window(window.env, "gtk3", title="tsuzuri other")
    try:
        window.focus_window()
        window.type("nihongo")
        window.wait_for_preedit("entry", "にほんご")
        with ExitStack() as stack:
            if order == "other_window_first":
                window.process.send_signal(signal.SIGSTOP)
                stack.callback(window.process.send_signal, signal.SIGCONT)
            elif order == "framework_hears_the_other_first":
                stack.enter_context(headless_field(desktop))
            other.focus_window()
            if desktop.framework == "fcitx5":
                desktop.use_tsuzuri(window=other)
            other.type("a")
            other.keys("Return")
            other.wait_for_text("entry", "あ")
        # Qt under IBus gets it when it has the focus again (frontends/ibus/clients.py), with its first key: IBus
        # ignores Qt 5's focus in, which never told it of the focus out.
        if not (desktop.framework == "ibus" and window.toolkit.startswith("qt")):
            window.wait_for_text("entry", "にほんご")
        window.focus_window()
        window.type("ka")
        window.keys("Return")
        window.wait_for_text("entry", "にほんごか")  # once, and typing goes on after it
        assert other.texts["entry"] == "あ"
    finally:
        other.close()


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


def test_keys_typed_while_the_daemon_is_gone_follow_the_composition(desktop, tmp_path):
    """No D-Bus activation: the daemon stays gone while the user types on, then is started by hand."""
    window, address = desktop.window, desktop.window.env["DBUS_SESSION_BUS_ADDRESS"]
    window.type("kyouha")
    window.wait_for_preedit("entry", "きょうは")
    desktop.daemon.send_signal(signal.SIGKILL)
    desktop.daemon.wait(10)
    window.type("iitenki")
    window.wait_for_text("entry", "きょうはiitenki")  # what was shown, where it was typed; then the keys as typed
    window.wait_for_preedit("entry", "")
    with running_daemon(address, tmp_path, NO_MODEL):
        window.type("desu")
        window.keys("Return")
        window.wait_for_text("entry", "きょうはiitenkiです")


@contextmanager
def activated_daemon(service_dir: Path, address: str, home: Path):
    """The bus may activate tsuzuri-daemon (0.6 s late) while this lasts."""
    service = write_daemon_activation(service_dir, address, home, NO_MODEL, delay_s=0.6)
    reload = [
        "dbus-send",
        f"--bus={address}",
        "--print-reply",
        "--dest=org.freedesktop.DBus",
        "/org/freedesktop/DBus",
        "org.freedesktop.DBus.ReloadConfig",
    ]
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
            desktop.use_tsuzuri(widget)
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


@pytest.mark.parametrize(
    "widget, select, selected, kept",
    [
        ("textview", ("shift+Home",), "今日はいい天気", ""),  # the case; the cursor at the selection's start
        ("textview", ("shift+Left", "shift+Left"), "天気", "今日はいい"),  # part of the text
        ("entry", ("Home", "shift+End"), "今日はいい天気", ""),  # an entry: the cursor at the selection's end
    ],
    ids=["textview", "textview-part", "entry"],
)
def test_reconverting_a_selection_replaces_it_with_the_chosen_candidate(desktop, widget, select, selected, kept):
    window = desktop.window
    if (desktop.framework, window.toolkit, widget, select) == ("ibus", "gtk4", "textview", ("shift+Left",) * 2):
        pytest.xfail(
            "GTK 4.8's text view reports a selection's cursor at its other end, and IBus 1.5.27's GTK 4 "
            "module passes on no anchor: the daemon is told of no selection and a cursor that is elsewhere"
        )
    committed_sentence(desktop, widget)
    window.keys(*select, "Henkan")
    # Its reading (きょうはいいてんき, てんき) converts again; what is committed replaces the selection.
    window.wait_for_preedit(widget, selected)
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
