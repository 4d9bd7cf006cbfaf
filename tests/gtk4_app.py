"""A real GTK 4 application for the frontend tests: tests/gtk_app.py's window and events, in GTK 4.

    /usr/bin/python3 tests/gtk4_app.py [TITLE]

Prints the same JSON lines as tests/gtk_app.py, except that the "ready" rectangles are relative to the
window, and on X the X window's id is added as "window" (GTK 4 has no screen coordinates; xdotool moves the
pointer relative to a window).
"""

import json
import sys

import gi

gi.require_version("Gtk", "4.0")
gi.require_version("GdkX11", "4.0")
from gi.repository import GdkX11, GLib, Gtk  # noqa: E402


def say(**event) -> None:
    print(json.dumps(event, ensure_ascii=False), flush=True)


def window_rectangle(widget: Gtk.Widget, window: Gtk.Window) -> list[int]:
    """The widget's rectangle in its X window's coordinates (the surface's, client-side decorations included)."""
    found, bounds = widget.compute_bounds(window)
    assert found
    dx, dy = window.get_surface_transform()
    return [
        round(bounds.get_x() + dx),
        round(bounds.get_y() + dy),
        round(bounds.get_width()),
        round(bounds.get_height()),
    ]


def main() -> int:
    title = sys.argv[1] if len(sys.argv) > 1 else "tsuzuri test"
    app = Gtk.Application()

    def activate(_app: Gtk.Application) -> None:
        window = Gtk.ApplicationWindow(application=app, title=title)
        window.set_default_size(480, 240)
        box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=12)
        entry = Gtk.Entry()
        text_view = Gtk.TextView()
        text_view.set_size_request(-1, 120)
        box.append(entry)
        box.append(text_view)
        window.set_child(box)

        buffer = text_view.get_buffer()
        entry.connect("changed", lambda widget: say(entry=widget.get_text()))
        buffer.connect("changed", lambda b: say(textview=b.get_text(b.get_start_iter(), b.get_end_iter(), False)))
        entry.get_delegate().connect("preedit-changed", lambda _widget, text: say(entry_preedit=text))
        text_view.connect("preedit-changed", lambda _widget, text: say(textview_preedit=text))
        for widget, name in ((entry, "entry"), (text_view, "textview")):
            focus = Gtk.EventControllerFocus()
            focus.connect("enter", lambda _controller, name=name: say(focus=name))
            widget.add_controller(focus)

        def announce() -> bool:
            surface = window.get_surface()
            if surface is None or entry.get_width() == 0:
                return True  # not laid out yet
            rectangles = {"entry": window_rectangle(entry, window), "textview": window_rectangle(text_view, window)}
            if isinstance(surface, GdkX11.X11Surface):
                rectangles["window"] = surface.get_xid()
            say(ready=rectangles)
            return False

        window.present()
        entry.grab_focus()
        GLib.timeout_add(20, announce)

    app.connect("activate", activate)
    return app.run([])


if __name__ == "__main__":
    sys.exit(main())
