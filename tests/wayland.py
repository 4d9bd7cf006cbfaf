"""A real Wayland compositor (headless sway) with a test application on it, typed into with wtype through
fcitx5's Wayland input-method frontend: what a user of a wlroots desktop does.

sway refuses to run as root: as root, it runs as `nobody` (setpriv) in a runtime folder of its own, whose socket
root's clients can reach. wtype makes a virtual keyboard per run, and sway re-enters the focused window on that
keyboard's first event: each `keys()` starts with a Control tap for it, then REENTER_MS, and a run types a whole step
(a composition does not span two runs). Every wait is on the application's own events, as in tests/real_window.py.
"""

import os
import shutil
import subprocess
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.real_window import Window

KEY_DELAY_MS = 40
# After the Control tap that makes sway re-enter the window (see above): the input method is deactivated and
# activated again, and a key sent before it has its keyboard grab back is lost. wtype can only pause.
REENTER_MS = 300
SOCKET_WAIT_S = 10.0
NOBODY = 65534
# The compositor's output: one virtual screen, no Xwayland.
SWAY_CONFIG = "output HEADLESS-1 resolution 1024x768\nxwayland disable\n"


def missing_requirement() -> str | None:
    for tool, package in (("sway", "sway"), ("swaymsg", "sway"), ("wtype", "wtype"), ("setpriv", "util-linux")):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Debian package {package})"
    return None


@contextmanager
def sway_display():
    """A headless sway; yields the environment its clients need (WAYLAND_DISPLAY, XDG_RUNTIME_DIR)."""
    reason = missing_requirement()
    if reason is not None:
        pytest.skip(reason)
    runtime = Path(tempfile.mkdtemp(prefix="tsuzuri-sway-"))  # in /tmp: `nobody` can reach it
    command = ["sway", "-c", str(runtime / "config")]
    if os.geteuid() == 0:
        os.chown(runtime, NOBODY, NOBODY)
        command = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *command]
    (runtime / "config").write_text(SWAY_CONFIG)
    env = {
        **os.environ,
        "XDG_RUNTIME_DIR": str(runtime),
        "HOME": str(runtime),
        "WLR_BACKENDS": "headless",
        "WLR_RENDERER": "pixman",
        "WLR_LIBINPUT_NO_DEVICES": "1",
    }
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)
    with open(runtime / "sway.log", "w") as log:
        sway = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        socket = runtime / "wayland-1"
        deadline = time.monotonic() + SOCKET_WAIT_S
        while not (socket.exists() and any(runtime.glob("sway-ipc.*.sock"))):
            assert sway.poll() is None and time.monotonic() < deadline, (runtime / "sway.log").read_text()
            time.sleep(0.05)
        ipc = next(runtime.glob("sway-ipc.*.sock"))
        yield {"WAYLAND_DISPLAY": str(socket), "XDG_RUNTIME_DIR": str(runtime), "SWAYSOCK": str(ipc)}
    finally:
        sway.terminate()
        sway.wait(10)
        shutil.rmtree(runtime, ignore_errors=True)


def wtype_arguments(names: tuple[str, ...]) -> list[str]:
    """xdotool-style key names ("k", "space", "shift+Left") as wtype's arguments. Letters in a row are one text
    argument: wtype joins its text arguments with spaces."""
    arguments: list[str] = []
    text = ""
    for name in names:
        *modifiers, key = name.split("+")
        if len(key) == 1 and not modifiers:
            text += key
            continue
        if text:
            arguments.append(text)
            text = ""
        for modifier in modifiers:
            arguments += ["-M", modifier]
        arguments += ["-k", key] if len(key) > 1 else [key]
        for modifier in reversed(modifiers):
            arguments += ["-m", modifier]
    return arguments + ([text] if text else [])


class WaylandWindow(Window):
    """A test application on sway: the compositor gives it the focus when it maps; keys come from wtype."""

    def focus_window(self) -> None:
        """The keyboard focus to this application's window, as a click on it or Alt+Tab would give it."""
        done = subprocess.run(
            ["swaymsg", f'[title="^{self.title}$"] focus'], env=self.env, capture_output=True, text=True, timeout=30
        )
        assert done.returncode == 0, done.stdout + done.stderr

    def focus_entry(self) -> None:
        """sway focuses a window as it maps, and GTK its entry: there is no pointer to click with."""
        self.wait_until(lambda _texts: self.focused == "entry")

    def click(self, widget: str, at: str = "middle") -> None:
        raise NotImplementedError("no pointer on the headless compositor")

    def keys(self, *names: str) -> None:
        done = subprocess.run(
            [
                "wtype",
                "-d",
                str(KEY_DELAY_MS),
                "-M",
                "ctrl",
                "-m",
                "ctrl",
                "-s",
                str(REENTER_MS),
                *wtype_arguments(names),
            ],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert done.returncode == 0, done.stderr
