"""A stand-in for IBus's panel, for tests/integration/test_real_window.py: it takes the panel's bus name on the
ibus-daemon of its environment and prints, one JSON line each, the rectangle the focused field gives as its text
cursor — where a panel opens the candidate window — in screen coordinates. Runs under Debian's /usr/bin/python3
(python3-gi).

    {"ready": true}
    {"cursor": [x, y, width, height]}
"""

import json

import gi

gi.require_version("IBus", "1.0")
from gi.repository import GLib, IBus  # noqa: E402


def say(**fields) -> None:
    print(json.dumps(fields), flush=True)


def main() -> None:
    IBus.init()
    bus = IBus.Bus()
    panel = IBus.PanelService(connection=bus.get_connection(), object_path=IBus.PATH_PANEL)
    panel.connect("set-cursor-location", lambda _panel, x, y, width, height: say(cursor=[x, y, width, height]))
    bus.request_name(IBus.SERVICE_PANEL, 0)
    say(ready=True)
    GLib.MainLoop().run()


if __name__ == "__main__":
    main()
