"""A headless IBus client that types into an input context, for tests and latency measurement.

    /usr/bin/python3 frontends/ibus/driver.py ENGINE

It connects to the running ibus-daemon (IBUS_ADDRESS or the address file under XDG_CONFIG_HOME),
makes an input context use ENGINE, prints {"ready": true}, then reads one JSON command per line
from stdin and answers each with one JSON line. No display is needed.

  {"keys": ["k", "space", "Return"]}  press and release each key (IBus key names);
        answer {"handled": [...], "latency_ms": [...]}: latency is from the press to the first
        preedit or commit the client sees, null for keys that drew nothing (or were not handled)
  {"purpose": "password"}             the field's input purpose (IBus.InputPurpose, lower case)
  {"surrounding": "text"}             the text around the cursor, cursor at its end
  {"focus": true | false}             focus in or out
  {"other_field": true}               focus moves to another input context of the same application (made
        on first use, with the same engine), and back on the next such command
  {"engine": "xkb:us::eng"}           switch the focused input context to another engine
  {"reset": true}                     the application resets the input context (its text changed)
  {"activate_property": "InputMode.katakana"}  a click on that item of the engine's panel menu
  {"pump": seconds}                   wait, collecting events (e.g. live conversion's late updates)
  {"click": index}                    click the candidate at this position of the shown page, as a
        panel does (the driver takes the panel's bus name for this)
  {"daemon_rtt": ["k", ...]}          the same keys sent straight to tsuzuri-daemon in a session
        of the driver's own: {"latency_ms": [...]}, the floor under the IBus path's latency

Every answer also carries "events" since the previous answer: ["commit", text, field] (field 1 or 2),
["preedit", text, cursor, visible], ["lookup", [candidates], cursor, visible], ["aux", text, visible],
["property", key, symbol, state], ["forward", keyval, keycode, state] (a key the engine passed on later).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import gi

gi.require_version("IBus", "1.0")
from gi.repository import Gio, GLib, IBus  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from frontends.ibus.daemon_session import DaemonChannel, DaemonSession  # noqa: E402
from ime_protocol import Discard, KeyEvent  # noqa: E402

ENGINE_START_SECONDS = 30
FIRST_DRAW_SECONDS = 5.0  # a daemon's first conversion loads its dictionary


class Driver:
    def __init__(self, bus: IBus.Bus):
        self.bus = bus
        self.panel: IBus.PanelService | None = None
        self.events: list[list] = []
        self.context = GLib.MainContext.default()
        self.engine_name = ""
        self.fields = [self._new_input_context(1)]
        self.input_context = self.fields[0]
        self.input_context.focus_in()

    def _new_input_context(self, field: int) -> IBus.InputContext:
        input_context = self.bus.create_input_context(f"tsuzuri-driver-{field}")
        input_context.set_capabilities(
            IBus.Capabilite.PREEDIT_TEXT
            | IBus.Capabilite.FOCUS
            | IBus.Capabilite.LOOKUP_TABLE
            | IBus.Capabilite.AUXILIARY_TEXT
            | IBus.Capabilite.SURROUNDING_TEXT
            | IBus.Capabilite.PROPERTY
        )
        connect = input_context.connect
        connect("commit-text", lambda _ic, text: self.events.append(["commit", text.get_text(), field]))
        connect(
            "update-preedit-text",
            lambda _ic, text, cursor, visible: self.events.append(["preedit", text.get_text(), cursor, visible]),
        )
        connect("hide-preedit-text", lambda _ic: self.events.append(["preedit", "", 0, False]))
        connect(
            "forward-key-event",
            lambda _ic, keyval, keycode, state: self.events.append(["forward", keyval, keycode, state]),
        )
        connect(
            "update-lookup-table",
            lambda _ic, table, visible: self.events.append(
                [
                    "lookup",
                    [table.get_candidate(i).get_text() for i in range(table.get_number_of_candidates())],
                    table.get_cursor_pos(),
                    visible,
                ]
            ),
        )
        connect("hide-lookup-table", lambda _ic: self.events.append(["lookup", [], 0, False]))
        connect(
            "update-auxiliary-text", lambda _ic, text, visible: self.events.append(["aux", text.get_text(), visible])
        )
        connect("hide-auxiliary-text", lambda _ic: self.events.append(["aux", "", False]))
        connect("register-properties", lambda _ic, properties: self._record_properties(properties))
        connect(
            "update-property",
            lambda _ic, prop: self.events.append(
                [
                    "property",
                    prop.get_key(),
                    prop.get_symbol().get_text() if prop.get_symbol() else "",
                    int(prop.get_state()),
                ]
            ),
        )
        return input_context

    def _record_properties(self, properties: IBus.PropList) -> None:
        index = 0
        while (prop := properties.get(index)) is not None:
            index += 1
            self.events.append(
                [
                    "property",
                    prop.get_key(),
                    prop.get_symbol().get_text() if prop.get_symbol() else "",
                    int(prop.get_state()),
                ]
            )

    def other_field(self) -> None:
        self.input_context.focus_out()
        first_visit = len(self.fields) == 1
        if first_visit:
            self.fields.append(self._new_input_context(2))
        self.input_context = self.fields[1] if self.input_context is self.fields[0] else self.fields[0]
        self.input_context.focus_in()
        if first_visit:
            self.use_engine(self.engine_name)

    def use_engine(self, name: str) -> bool:
        self.engine_name = name
        deadline = time.monotonic() + ENGINE_START_SECONDS
        while time.monotonic() < deadline:
            self.input_context.set_engine(name)  # ibus-daemon starts the component's process on demand
            self.pump(0.2)
            engine = self.input_context.get_engine()
            if engine is not None and engine.get_name() == name:
                return True
        return False

    def pump(self, seconds: float, until=lambda: False) -> None:
        deadline = time.monotonic() + seconds
        while not until() and time.monotonic() < deadline:
            if not self.context.iteration(False):
                time.sleep(0.001)

    def type_keys(self, names: list[str]) -> dict:
        handled, latencies = [], []
        for name in names:
            keyval = IBus.keyval_from_name(name)
            drawn = len(self.events)
            start = time.perf_counter()
            handled.append(self.input_context.process_key_event(keyval, 0, 0))
            if handled[-1]:
                self.pump(
                    FIRST_DRAW_SECONDS,
                    until=lambda drawn=drawn: any(
                        event[0] in ("preedit", "commit", "forward") for event in self.events[drawn:]
                    ),
                )
            latencies.append(round((time.perf_counter() - start) * 1000, 3) if len(self.events) > drawn else None)
            self.input_context.process_key_event(keyval, 0, IBus.ModifierType.RELEASE_MASK)
        self.pump(0.05)
        return {"handled": handled, "latency_ms": latencies}

    def click(self, index_in_page: int) -> None:
        if self.panel is None:
            self.panel = IBus.PanelService(connection=self.bus.get_connection(), object_path=IBus.PATH_PANEL)
            self.bus.request_name(IBus.SERVICE_PANEL, 0)
            self.pump(0.2)
        self.panel.candidate_clicked(index_in_page, 1, 0)

    def run(self, command: dict) -> dict:
        if "keys" in command:
            answer = self.type_keys(command["keys"])
        elif "purpose" in command:
            self.input_context.set_content_type(int(getattr(IBus.InputPurpose, command["purpose"].upper())), 0)
            answer = {}
        elif "surrounding" in command:
            text = command["surrounding"]
            self.input_context.set_surrounding_text(IBus.Text.new_from_string(text), len(text), len(text))
            answer = {}
        elif "focus" in command:
            (self.input_context.focus_in if command["focus"] else self.input_context.focus_out)()
            answer = {}
        elif "other_field" in command:
            self.other_field()
            answer = {}
        elif "activate_property" in command:
            self.input_context.property_activate(command["activate_property"], int(IBus.PropState.CHECKED))
            answer = {}
        elif "reset" in command:
            self.input_context.reset()
            answer = {}
        elif "engine" in command:
            self.input_context.set_engine(command["engine"])
            answer = {}
        elif "pump" in command:
            self.pump(command["pump"])
            answer = {}
        elif "click" in command:
            self.click(command["click"])
            answer = {}
        elif "daemon_rtt" in command:
            answer = {"latency_ms": daemon_round_trips(command["daemon_rtt"])}
        else:
            answer = {"error": f"unknown command {command!r}"}
        self.pump(0.1)
        answer["events"], self.events = self.events, []
        return answer


def daemon_round_trips(names: list[str]) -> list[float]:
    session = DaemonSession(DaemonChannel(Gio.bus_get_sync(Gio.BusType.SESSION, None)), lambda _output: None)
    latencies = []
    for request_id, name in enumerate(names, 1):
        start = time.perf_counter()
        session.send(KeyEvent(IBus.keyval_from_name(name), 0, 0, request_id), 1000)
        latencies.append(round((time.perf_counter() - start) * 1000, 3))
    session.send(Discard(), 1000)
    session.close()
    return latencies


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    IBus.init()
    bus = IBus.Bus()
    if not bus.is_connected():
        print(json.dumps({"ready": False, "error": "cannot connect to ibus-daemon"}), flush=True)
        return 1
    driver = Driver(bus)
    ready = driver.use_engine(sys.argv[1])
    print(json.dumps({"ready": ready}), flush=True)
    if not ready:
        return 1
    for line in sys.stdin:
        print(json.dumps(driver.run(json.loads(line)), ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
