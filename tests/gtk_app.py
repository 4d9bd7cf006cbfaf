"""A real GTK3 application for the frontend tests: one window with a GtkEntry above a GtkTextView.

    /usr/bin/python3 tests/gtk_app.py [TITLE]

Run under an X server (Xvfb) with GTK_IM_MODULE set; the tests type into it with xdotool. Prints one
JSON line per event: {"ready": {"entry": [x, y, w, h], "textview": [...]}} (screen coordinates, for
clicks) once the window is shown, then {"entry": text} or {"textview": text} whenever a widget's
text changes, {"entry_preedit": text} or {"textview_preedit": text} when the composition an input method
shows in it changes, and {"focus": name} when a widget takes the keyboard focus.
"""

import json
import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402


def say(**event) -> None:
    print(json.dumps(event, ensure_ascii=False), flush=True)


def focused(widget: str) -> bool:
    """Reports the focus; False: GTK goes on handling the focus-in."""
    say(focus=widget)
    return False


def screen_rectangle(widget: Gtk.Widget) -> list[int]:
    origin_x, origin_y = widget.get_toplevel().get_window().get_origin()[1:]
    x, y = widget.translate_coordinates(widget.get_toplevel(), 0, 0)
    allocation = widget.get_allocation()
    return [origin_x + x, origin_y + y, allocation.width, allocation.height]


def main() -> int:
    window = Gtk.Window(title=sys.argv[1] if len(sys.argv) > 1 else "tsuzuri test")
    window.set_default_size(480, 240)
    window.connect("destroy", Gtk.main_quit)
    box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=12)
    entry = Gtk.Entry()
    text_view = Gtk.TextView()
    text_view.set_size_request(-1, 120)
    box.pack_start(entry, False, False, 0)
    box.pack_start(text_view, True, True, 0)
    window.add(box)

    buffer = text_view.get_buffer()
    entry.connect("changed", lambda widget: say(entry=widget.get_text()))
    buffer.connect("changed", lambda b: say(textview=b.get_text(b.get_start_iter(), b.get_end_iter(), False)))
    entry.connect("preedit-changed", lambda _widget, text: say(entry_preedit=text))
    text_view.connect("preedit-changed", lambda _widget, text: say(textview_preedit=text))
    entry.connect("focus-in-event", lambda *_: focused("entry"))
    text_view.connect("focus-in-event", lambda *_: focused("textview"))

    def announce() -> bool:
        say(ready={"entry": screen_rectangle(entry), "textview": screen_rectangle(text_view)})
        return False

    window.connect("map-event", lambda *_: GLib.idle_add(announce) and False)
    window.show_all()
    entry.grab_focus()
    Gtk.main()
    return 0


if __name__ == "__main__":
    sys.exit(main())
