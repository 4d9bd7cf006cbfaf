"""A real X display (Xvfb) with tests/gtk_app.py on it, typed into with xdotool: what a user does.

Every wait is on the application's own events (a widget's text changed, a widget took the focus),
with a deadline; nothing sleeps a fixed time.
"""
import json
import os
import queue
import shutil
import subprocess
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from frontends.ibus.install import SYSTEM_PYTHON

APP = Path(__file__).resolve().parent / "gtk_app.py"
EVENT_WAIT_S = 15.0
KEY_DELAY_MS = 40


def missing_requirement() -> str | None:
    for tool, package in (("Xvfb", "xvfb"), ("xdotool", "xdotool")):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Debian package {package})"
    probe = subprocess.run([str(SYSTEM_PYTHON), "-c", "import gi; gi.require_version('Gtk', '3.0')"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        return f"{SYSTEM_PYTHON} lacks GTK 3 (Debian packages python3-gi, gir1.2-gtk-3.0)"
    return None


@contextmanager
def x_display():
    """A private Xvfb; yields its DISPLAY."""
    reason = missing_requirement()
    if reason is not None:
        pytest.skip(reason)
    read_end, write_end = os.pipe()
    server = subprocess.Popen(["Xvfb", "-displayfd", str(write_end), "-screen", "0", "1024x768x24", "-nolisten",
                               "tcp"], pass_fds=(write_end,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write_end)
    with os.fdopen(read_end) as announced:
        number = announced.readline().strip()
    try:
        assert number, "Xvfb did not start"
        yield f":{number}"
    finally:
        server.terminate()
        server.wait(10)


class Window:
    """tests/gtk_app.py on `display`, with its input method module chosen by `env` (GTK_IM_MODULE)."""

    def __init__(self, env: dict):
        self.env = env
        self.texts = {"entry": "", "textview": "", "entry_preedit": "", "textview_preedit": ""}
        self.focused = ""
        self._events: queue.Queue = queue.Queue()
        self.process = subprocess.Popen([str(SYSTEM_PYTHON), str(APP)], env=env, stdout=subprocess.PIPE, text=True,
                                        stderr=subprocess.DEVNULL)
        threading.Thread(target=self._read, daemon=True).start()
        ready = self._next_event(lambda event: "ready" in event)
        self.rectangles = ready["ready"]
        self.xdotool("search", "--sync", "--name", "tsuzuri test", "windowfocus", "--sync")
        self.click("entry")

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(10)

    def _read(self) -> None:
        for line in self.process.stdout:
            self._events.put(json.loads(line))
        self._events.put(None)

    def _next_event(self, wanted, timeout: float = EVENT_WAIT_S) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            try:
                event = self._events.get(timeout=max(deadline - time.monotonic(), 0.001))
            except queue.Empty:
                raise AssertionError(f"timed out; texts {self.texts}, focus {self.focused!r}") from None
            if event is None:
                raise AssertionError("the application exited")
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
        # "start" is on the first character: the frame's padding before it (~8 px) takes a click without moving
        # the cursor.
        column = {"start": x + 9, "middle": x + width // 2, "end": x + width - 3}[at]
        self.xdotool("mousemove", "--sync", str(column), str(y + min(height // 2, 12)), "click", "1")
        if self.focused != widget:
            self._next_event(lambda _event: self.focused == widget)
