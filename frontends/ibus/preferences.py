"""Tsuzuri's settings dialog for IBus: what ibus-setup's Preferences button (the component's <setup>) opens.

    /usr/bin/python3 frontends/ibus/preferences.py

The settings live in the daemon's configuration file (~/.config/tsuzuri/config.toml): the dialog reads them from
the daemon (GetSettings) and writes each change through it at once (SetSettings), as the fcitx5 addon's page in
fcitx5-configtool does, so the file and both pages always say the same. The daemon's answer — a problem, or why a
value was refused — is shown at the bottom. GTK 3, with Debian's python3-gi.
"""

from __future__ import annotations

import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gio, GLib, Gtk  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from ime_protocol.dbus_names import BUS_NAME, ROOT_INTERFACE, ROOT_PATH  # noqa: E402

CALL_TIMEOUT_MS = 3000  # may D-Bus-activate the daemon
UNREACHABLE = "変換サーバー (tsuzuri-daemon) に接続できません: {}"


@dataclass(frozen=True)
class Field:
    key: str  # the setting's dotted name in the daemon's configuration
    label: str
    kind: str  # "switch", "choice", "number" or "keys"
    choices: tuple[str, ...] = ()


# daemon/config.py's settings a user looks for first (the file holds the rest, with comments).
FIELDS = (
    Field("conversion.live", "ライブ変換 (show the conversion while typing)", "switch"),
    Field("conversion.neural_model", "ニューラル変換モデル (the neural model)", "switch"),
    Field("conversion.learning", "学習 (learn from your choices)", "switch"),
    Field(
        "conversion.spelling",
        "表記 (ranked: as ranked; official: kana where official documents use it)",
        "choice",
        ("ranked", "official"),
    ),
    Field("input.punctuation", "句読点 (what , and . type)", "choice", ("、。", "，．", "，。", "、．")),
    Field("candidates.page_size", "候補の数 (candidates per page)", "number"),
    Field("keys.toggle_input", "日本語入力オン・オフ (switch Japanese on or off)", "keys"),
    Field("keys.input_on", "日本語入力オン (switch Japanese on)", "keys"),
    Field("keys.input_off", "日本語入力オフ (switch Japanese off)", "keys"),
)


def toml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def literal_of(field: Field, value: bool | str | int) -> str:
    """The TOML literal SetSettings takes for a widget's value (keys: names separated by commas)."""
    if field.kind == "switch":
        return "true" if value else "false"
    if field.kind == "number":
        return str(int(value))
    if field.kind == "choice":
        return toml_string(str(value))
    names = [name.strip() for name in str(value).split(",") if name.strip()]
    return "[" + ", ".join(map(toml_string, names)) + "]"


def value_of(field: Field, literal: str) -> bool | str | int:
    """A widget's value for the daemon's TOML literal (GetSettings writes them as daemon/config.py does)."""
    value = tomllib.loads(f"value = {literal}")["value"]
    return ", ".join(value) if field.kind == "keys" else value


class Daemon:
    """GetSettings and SetSettings on the session bus, waiting for the answer."""

    def __init__(self, connection: Gio.DBusConnection):
        self.connection = connection

    def _call(self, method: str, arguments: GLib.Variant | None, reply_type: str) -> GLib.Variant:
        return self.connection.call_sync(
            BUS_NAME,
            ROOT_PATH,
            ROOT_INTERFACE,
            method,
            arguments,
            GLib.VariantType(reply_type),
            Gio.DBusCallFlags.NONE,
            CALL_TIMEOUT_MS,
            None,
        )

    def settings(self) -> dict[str, str]:
        return self._call("GetSettings", None, "(a{ss})").unpack()[0]

    def set(self, key: str, literal: str) -> list[str]:
        """The daemon's problems after applying it; GLib.Error if it refused."""
        return self._call("SetSettings", GLib.Variant("(a{ss})", ({key: literal},)), "(as)").unpack()[0]


class SettingsDialog(Gtk.Window):
    def __init__(self, daemon: Daemon):
        super().__init__(title="Tsuzuri の設定")
        self.daemon = daemon
        self.widgets: dict[str, Gtk.Widget] = {}
        self.shown: dict[str, str] = {}  # the daemon's literals, as last read or written
        self.status = Gtk.Label(xalign=0, wrap=True, selectable=True)
        grid = Gtk.Grid(row_spacing=8, column_spacing=16, margin=16)
        for row, field in enumerate(FIELDS):
            grid.attach(Gtk.Label(label=field.label, xalign=0), 0, row, 1, 1)
            self.widgets[field.key] = widget = self._widget(field)
            grid.attach(widget, 1, row, 1, 1)
        grid.attach(self.status, 0, len(FIELDS), 2, 1)
        self.add(grid)
        try:
            literals = daemon.settings()
        except GLib.Error as error:
            self.status.set_text(UNREACHABLE.format(error.message))
            grid.set_sensitive(False)
            self.status.set_sensitive(True)
            return
        self.show_values(literals)

    def _widget(self, field: Field) -> Gtk.Widget:
        if field.kind == "switch":
            switch = Gtk.Switch(halign=Gtk.Align.START)
            switch.connect("notify::active", lambda widget, _: self.apply(field, widget.get_active()))
            return switch
        if field.kind == "choice":
            combo = Gtk.ComboBoxText()
            for choice in field.choices:
                combo.append(choice, choice)
            combo.connect("changed", lambda widget: self.apply(field, widget.get_active_id()))
            return combo
        if field.kind == "number":
            spin = Gtk.SpinButton.new_with_range(1, 9, 1)
            spin.connect("value-changed", lambda widget: self.apply(field, widget.get_value_as_int()))
            return spin
        entry = Gtk.Entry(placeholder_text="Zenkaku_Hankaku, ctrl+space")
        entry.connect("activate", lambda widget: self.apply(field, widget.get_text()))
        entry.connect("focus-out-event", self._on_focus_out, field)
        return entry

    def _on_focus_out(self, entry: Gtk.Entry, _event, field: Field) -> bool:
        self.apply(field, entry.get_text())
        return False  # GTK's own handling goes on

    def show_values(self, literals: dict[str, str]) -> None:
        """The widgets as the daemon says; their change handlers find nothing to write back."""
        self.shown = dict(literals)
        for field in FIELDS:
            widget, value = self.widgets[field.key], value_of(field, literals[field.key])
            if isinstance(widget, Gtk.Switch):
                widget.set_active(bool(value))
            elif isinstance(widget, Gtk.ComboBoxText):
                widget.set_active_id(str(value))
            elif isinstance(widget, Gtk.SpinButton):
                widget.set_value(int(value))
            elif isinstance(widget, Gtk.Entry):
                widget.set_text(str(value))

    def apply(self, field: Field, value: bool | str | int) -> None:
        literal = literal_of(field, value)
        if self.shown.get(field.key) == literal:
            return
        try:
            problems = self.daemon.set(field.key, literal)
        except GLib.Error as error:
            Gio.dbus_error_strip_remote_error(error)  # the daemon's words, without the error's D-Bus name
            self.status.set_text(error.message)
            return
        self.shown[field.key] = literal
        self.status.set_text("\n".join(problems) or "保存しました (saved)")


def main() -> int:
    try:
        connection = Gio.bus_get_sync(Gio.BusType.SESSION, None)
    except GLib.Error as error:
        print(f"tsuzuri-preferences: {error.message}", file=sys.stderr)
        return 1
    dialog = SettingsDialog(Daemon(connection))
    dialog.connect("destroy", Gtk.main_quit)
    dialog.show_all()
    Gtk.main()
    return 0


if __name__ == "__main__":
    sys.exit(main())
