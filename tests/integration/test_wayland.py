"""fcitx5 on Wayland under a real compositor, headless sway: GTK 3 and GTK 4 windows on Wayland, typed into with
wtype through fcitx5, the addon and the real tsuzuri-daemon, with either input method module a user sets:
GTK's "wayland" (text-input-v3 to the compositor, which hands the keys to fcitx5's input-method-v2 frontend) or
fcitx5's own "fcitx" (the application sends its keys to fcitx5 over D-Bus, as on X11).

One desktop per toolkit — sway, fcitx5, the daemon and one window — for all its tests: sway 1.7 sometimes crashes
when a text-input client goes away while an input method is active, so applications are closed only at the end. A
test starts with a Space (a full-width space in the field) so that the text before the cursor is its own.

Needs Debian's sway, wtype, util-linux (setpriv, to run sway as nobody when the tests run as root), python3-gi,
gir1.2-gtk-3.0 and gir1.2-gtk-4.0 besides what the fcitx5 tests need; skips without them.
"""

import os

import pytest

from tests.dbus_fixtures import running_daemon
from tests.integration.test_frontend_fcitx5 import addon_build, running_fcitx  # noqa: F401 (fixture)
from tests.integration.test_real_window import use_fcitx_input_method, wait_until_the_daemon_reconverts
from tests.real_window import missing_requirement as missing_toolkit
from tests.wayland import WaylandWindow, sway_display

NO_MODEL = "/nonexistent/model.gguf"
SEPARATOR = "\u3000"  # what Space types on an empty composition


@pytest.fixture(
    scope="module",
    params=[("gtk3", "wayland"), ("gtk4", "wayland"), ("gtk3", "fcitx"), ("gtk4", "fcitx")],
    ids=lambda param: "-".join(param),
)
def window(request, addon_build, tmp_path_factory):  # noqa: F811
    toolkit, im_module = request.param
    reason = missing_toolkit(toolkit)
    if reason is not None:
        pytest.skip(reason)
    root = tmp_path_factory.mktemp(f"wayland-{toolkit}-{im_module}")
    with (
        sway_display() as wayland,
        running_fcitx(addon_build, root / "fcitx5", wayland) as address,
        running_daemon(address, root / "daemon", NO_MODEL),
    ):
        env = {
            **os.environ,
            **wayland,
            "DBUS_SESSION_BUS_ADDRESS": address,
            "GDK_BACKEND": "wayland",
            "GTK_IM_MODULE": im_module,
            "NO_AT_BRIDGE": "1",
            "GTK_A11Y": "none",
        }
        env.pop("DISPLAY", None)
        window = WaylandWindow(env, toolkit)
        try:
            use_tsuzuri(window)
            yield window
        finally:
            window.close()


def use_tsuzuri(window: WaylandWindow) -> None:
    """The focused field on Tsuzuri (fcitx's controller acts on it), converting once the daemon has loaded."""
    wait_until_the_daemon_reconverts(window.env["DBUS_SESSION_BUS_ADDRESS"])  # the dictionary loaded too
    window.switch_until_it_converts(lambda: use_fcitx_input_method(window.env, "tsuzuri"))


@pytest.fixture
def field(window) -> str:
    """The entry's text as the test starts, a separator last: a test's own text follows it."""
    start = window.texts["entry"] + SEPARATOR
    window.keys("space")
    window.wait_for_text("entry", start)
    return start


# A wtype run types a whole step: see tests/wayland.py.


def test_typing_converting_and_committing_a_sentence(window, field):
    window.keys(*"kyouhaiitenkidesune", "space", "Return")
    window.wait_for_preedit("entry", "きょうはいいてんきですね")
    window.wait_for_preedit("entry", "今日はいい天気ですね")
    window.wait_for_text("entry", field + "今日はいい天気ですね")
    window.wait_for_preedit("entry", "")


def test_typing_on_after_a_conversion(window, field):
    window.keys(*"kyou", "space", *"ha", "Return")
    window.wait_for_text("entry", field + "今日")  # committed by the next kana, which composes on
    window.wait_for_preedit("entry", "は")
    window.wait_for_text("entry", field + "今日は")


def text_input_v3(window: WaylandWindow) -> bool:
    """Whether the window speaks text-input-v3 to the compositor (GTK's "wayland" module), not D-Bus to fcitx5."""
    return window.env["GTK_IM_MODULE"] == "wayland"


def test_reconverting_the_word_before_the_cursor_and_cancelling_it(window, field):
    if window.toolkit == "gtk4" and text_input_v3(window):
        pytest.xfail(
            "GTK 4.8 deletes text-input-v3's delete_surrounding_text lengths as characters where the "
            "protocol gives bytes: the text is not taken out, and Escape puts it in a second time"
        )
    window.keys(*"kyouhaiitenki", "space", "Return")
    window.wait_for_text("entry", field + "今日はいい天気")
    window.keys("Henkan", "Escape")
    # The Japanese before the cursor goes from the field (the input method deletes it) and converts again.
    window.wait_for_preedit("entry", "今日はいい天気")
    window.wait_for_text("entry", field)
    window.wait_for_text("entry", field + "今日はいい天気")
    window.wait_for_preedit("entry", "")


def test_focus_moving_to_another_application_commits_the_composition(request, window, field):
    """The last test of its desktop: closing an application may take sway down (see above)."""
    if text_input_v3(window):
        request.applymarker(
            pytest.mark.xfail(
                strict=True,
                reason="text-input-v3 (sway 1.7, GTK 3.24 and 4.8): the field that loses the focus drops its "
                "preedit, and the compositor takes no commit from the input method it deactivated",
            )
        )
    other = WaylandWindow(window.env, window.toolkit, title="tsuzuri other")
    try:
        window.focus_window()
        window.keys(*"nihongo")
        window.wait_for_preedit("entry", "にほんご")
        other.focus_window()
        window.wait_for_text("entry", field + "にほんご")
    finally:
        other.close()
