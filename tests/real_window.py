"""A real X display (Xvfb) with a test application on it (tests/gtk_app.py, gtk4_app.py, qt_app.py), typed
into with xdotool: what a user does.

Every wait is on the application's own events (a widget's text changed, a widget took the focus),
with a deadline; nothing sleeps a fixed time.
"""

import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import pytest

from frontends.ibus.install import SYSTEM_PYTHON
from tests.dbus_fixtures import pipe

TESTS = Path(__file__).resolve().parent
# Each toolkit's test application (the same window and events) and what it needs from Debian.
# toolkit → (its application's arguments, a probe that imports the toolkit, the Debian packages it needs)
APPS: dict[str, tuple[list, str, str]] = {
    "gtk3": ([TESTS / "gtk_app.py"], "import gi; gi.require_version('Gtk', '3.0')", "python3-gi, gir1.2-gtk-3.0"),
    "gtk4": ([TESTS / "gtk4_app.py"], "import gi; gi.require_version('Gtk', '4.0')", "python3-gi, gir1.2-gtk-4.0"),
    "qt5": ([TESTS / "qt_app.py", "5"], "import PyQt5.QtWidgets", "python3-pyqt5"),
    "qt6": ([TESTS / "qt_app.py", "6"], "import PyQt6.QtWidgets", "python3-pyqt6"),
}
EVENT_WAIT_S = 15.0
KEY_DELAY_MS = 40


def missing_requirement(toolkit: str = "gtk3") -> str | None:
    for tool, package in (("Xvfb", "xvfb"), ("xdotool", "xdotool")):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Debian package {package})"
    _app, probe_code, packages = APPS[toolkit]
    probe = subprocess.run([str(SYSTEM_PYTHON), "-c", probe_code], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"{SYSTEM_PYTHON} lacks {toolkit} (Debian packages {packages})"
    return None


@contextmanager
def x_display():
    """A private Xvfb; yields its DISPLAY."""
    reason = missing_requirement()
    if reason is not None:
        pytest.skip(reason)
    read_end, write_end = os.pipe()
    server = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_end), "-screen", "0", "1024x768x24", "-nolisten", "tcp"],
        pass_fds=(write_end,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_end)
    with os.fdopen(read_end) as announced:
        number = announced.readline().strip()
    try:
        assert number, "Xvfb did not start"
        yield f":{number}"
    finally:
        server.terminate()
        server.wait(10)


def json_lines(stream: IO[str] | None) -> queue.Queue:
    """Each JSON line a child prints, read on a thread of its own into the queue returned; None once it exits."""
    lines: queue.Queue = queue.Queue()

    def read() -> None:
        for line in pipe(stream):
            lines.put(json.loads(line))
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    return lines


class Window:
    """`toolkit`'s test application on `display`, its input method module chosen by `env` (GTK_IM_MODULE,
    QT_IM_MODULE); `title` tells two applications apart."""

    def __init__(self, env: dict, toolkit: str = "gtk3", title: str = "tsuzuri test"):
        self.env = env
        self.toolkit = toolkit
        self.title = title
        self.texts = {"entry": "", "textview": "", "entry_preedit": "", "textview_preedit": ""}
        self.focused = ""
        app, _probe, _packages = APPS[toolkit]
        self._stderr = tempfile.TemporaryFile()  # shown if the application exits
        self.process = subprocess.Popen(
            [str(SYSTEM_PYTHON), *map(str, app), title], env=env, stdout=subprocess.PIPE, text=True, stderr=self._stderr
        )
        self._events = json_lines(self.process.stdout)
        ready = self._next_event(lambda event: "ready" in event)["ready"]
        # GTK 4 reports its widgets relative to its X window, whose id it gives; the others in screen coordinates.
        self.x_window = str(ready.pop("window")) if "window" in ready else None
        self.rectangles = ready
        self.focus_entry()

    def focus_entry(self) -> None:
        """The keyboard focus to the entry, as the tests begin."""
        self.focus_window()
        self.click("entry")

    def focus_window(self) -> None:
        """The X input focus to this application's window (there is no window manager to give it on a click)."""
        self.xdotool("search", "--sync", "--name", f"^{self.title}$", "windowfocus", "--sync")

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(10)

    def _next_event(self, wanted, timeout: float = EVENT_WAIT_S) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            try:
                event = self._events.get(timeout=max(deadline - time.monotonic(), 0.001))
            except queue.Empty:
                raise AssertionError(f"timed out; texts {self.texts}, focus {self.focused!r}") from None
            if event is None:
                self._stderr.seek(0)
                said = self._stderr.read().decode(errors="replace")[-2000:]
                raise AssertionError(f"the application exited ({self.process.wait(10)}): {said}")
            for name in self.texts:
                if name in event:
                    self.texts[name] = event[name]
            if "focus" in event:
                self.focused = event["focus"]
            if wanted(event):
                return event

    def wait_for_preedit(self, widget: str, text: str, timeout: float = EVENT_WAIT_S) -> None:
        self.wait_for_text(f"{widget}_preedit", text, timeout)

    def wait_for_text(self, widget: str, text: str, timeout: float = EVENT_WAIT_S) -> None:
        self.wait_until(lambda texts: texts[widget] == text, timeout)

    def wait_until(self, holds, timeout: float = EVENT_WAIT_S) -> None:
        """Until `holds(texts)` is true of the widgets' texts."""
        if not holds(self.texts):
            self._next_event(lambda _event: holds(self.texts), timeout)

    def switch_until_it_converts(self, switch, widget: str = "entry", tries: int = 20) -> str:
        """Calls `switch()` and types `a` Return until the focused `widget` gets あ: the input method starts on
        demand, and fcitx5's controller acts on the input context focused last, which can still be another
        field's while this one's focus is on its way. Returns the widget's text from before."""
        start = self.texts[widget]
        for _ in range(tries):
            switch()
            before = self.texts[widget]
            self.keys("a", "Return")
            self.wait_until(lambda texts, before=before: texts[widget] != before)
            if self.texts[widget].endswith("あ"):
                return start
        raise AssertionError(f"no あ after {tries} tries: {self.texts}")

    def xdotool(self, *args: str) -> str:
        done = subprocess.run(["xdotool", *args], env=self.env, capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def keys(self, *names: str) -> None:
        self.xdotool("key", "--delay", str(KEY_DELAY_MS), *names)

    def type(self, romaji: str) -> None:
        self.keys(*romaji)

    def click(self, widget: str, at: str = "middle") -> None:
        x, y, width, height = self.rectangles[widget]
        # "start" is on the first character's left half: a GTK entry's padding before it (~8 px) takes a click
        # without moving the cursor; a Qt line edit has ~3 px.
        start = 5 if self.toolkit.startswith("qt") else 9
        column = {"start": x + start, "middle": x + width // 2, "end": x + width - 3}[at]
        relative = ("--window", self.x_window) if self.x_window else ()
        self.xdotool("mousemove", *relative, "--sync", str(column), str(y + min(height // 2, 12)), "click", "1")
        if self.focused != widget:
            self._next_event(lambda _event: self.focused == widget)
