"""Tsuzuri's IBus engine: forwards input to tsuzuri-daemon and draws what it answers.

ibus-daemon starts this file with Debian's /usr/bin/python3 (python3-gi, gir1.2-ibus-1.0,
python3-msgpack), as the component file written by install.py says. It holds no input-method logic:
every key goes to the input context's daemon session in a synchronous call, and the daemon's
Output decides whether the key is taken (so the application never sees a key the preedit also
shows) and what the preedit, candidate window, auxiliary text and commit are.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import sys
from pathlib import Path

import gi

gi.require_version("IBus", "1.0")
from gi.repository import Gio, GLib, IBus  # noqa: E402

# ime_protocol comes from this checkout: it needs only msgpack, not the daemon's dependencies.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from frontends.ibus.clients import DELIVERY, ClientKind, UndeliveredCommits, client_kind  # noqa: E402
from frontends.ibus.daemon_session import DaemonChannel, DaemonSession, DaemonTimeout, DaemonUnavailable  # noqa: E402
from frontends.ibus.install import COMPONENT_NAME, ICON  # noqa: E402
from ime_protocol import (  # noqa: E402
    REQUEST_ID_MAX,
    CandidateItem,
    CandidateWindow,
    FocusIn,
    FocusOut,
    FrontendMessage,
    InputPurpose,
    KeyEvent,
    Output,
    Preedit,
    Reset,
    SegmentStyle,
    SelectCandidate,
    SetInputMode,
    SurroundingText,
)

# The input-mode menu in the panel: the daemon's mode names (Output.mode, SetInputMode), each with
# the symbol the panel shows for it and its menu label, as Mozc names them.
INPUT_MODES = {
    "hiragana": ("あ", "ひらがな"),
    "katakana": ("ア", "全角カタカナ"),
    "halfwidth_katakana": ("_ｱ", "半角カタカナ"),
    "fullwidth_ascii": ("Ａ", "全角英数"),
    "direct": ("A", "直接入力"),
}
MODE_PROPERTY = "InputMode"
UNREACHABLE_NOTICE = "Tsuzuri: 変換サーバー (tsuzuri-daemon) に接続できません — 入力はそのまま送られます"
# How long the application waits for a key's answer before the engine decides without it; the
# answer is still drawn when it comes (daemon_session.py).
KEY_TIMEOUT_MS = 300
MESSAGE_TIMEOUT_MS = 300
HIGHLIGHT_FOREGROUND = 0xFFFFFF
HIGHLIGHT_BACKGROUND = 0x3465A4
ANNOTATION_FOREGROUND = 0x888A85
# IBus's input purposes carry the same names as the protocol's.
PURPOSES = {
    int(getattr(IBus.InputPurpose, purpose.name)): purpose
    for purpose in InputPurpose
    if hasattr(IBus.InputPurpose, purpose.name)
}

log = logging.getLogger("tsuzuri-ibus")


class TsuzuriEngine(IBus.Engine):
    __gtype_name__ = "TsuzuriEngine"

    def __init__(self, channel: DaemonChannel, undelivered: UndeliveredCommits, **properties):
        super().__init__(**properties)
        self._daemon = DaemonSession(channel, self._late_output)
        self._request_ids = itertools.cycle(range(1, REQUEST_ID_MAX + 1))
        self._last_request_id = 0
        self._purpose = InputPurpose.FREE_FORM
        self._capabilities = 0
        self._preedit_shown = ""  # the preedit's text as drawn
        # The focused input context (its object path, from FocusInId) and its kind of client (clients.py).
        self._context = ""
        self._client = ClientKind.OTHER
        self._undelivered = undelivered  # the factory's: IBus makes a new engine when the user switches back
        self._window: CandidateWindow | None = None  # as shown, to turn a clicked page position into an index
        self._mode = "hiragana"
        self._mode_menu, self._properties = mode_properties(self._mode)
        # Keys whose answers came too late, by request id, in the order typed: kept from the application until
        # their answers say whether the daemon took them (_late_output).
        self._held_keys: dict[int, tuple[int, int, int]] = {}

    # -- IBus → daemon ------------------------------------------------------------------------------

    def do_process_key_event(self, keyval: int, keycode: int, state: int) -> bool:
        if state & IBus.ModifierType.RELEASE_MASK:
            return False  # the daemon never takes a release (daemon/keys.py): spare the round trip
        if self._purpose.is_secret:
            return False  # a password or PIN field is direct input: what is typed there never leaves this process
        return self._send_key(keyval, keycode, state, typed=True)

    # IBus calls the *_id variants, which name the input context and its client, on an engine made with
    # has_focus_id (TsuzuriFactory does), and the plain ones before it has read that property.
    def do_focus_in(self) -> None:
        self._focus_in("", ClientKind.OTHER)

    def do_focus_in_id(self, context: str, client: str) -> None:
        self._focus_in(context, client_kind(client))

    def do_focus_out(self) -> None:
        self._end_composition(FocusOut())

    def do_focus_out_id(self, _context: str) -> None:
        self._end_composition(FocusOut())

    def do_disable(self) -> None:
        self._end_composition(FocusOut())

    def do_reset(self) -> None:
        self._end_composition(Reset())

    def do_property_activate(self, name: str, state: int) -> None:
        mode = name.removeprefix(f"{MODE_PROPERTY}.")
        if mode in INPUT_MODES and state == IBus.PropState.CHECKED:
            self._send(SetInputMode(mode))

    def do_set_content_type(self, purpose: int, hints: int) -> None:
        self._purpose = PURPOSES.get(purpose, InputPurpose.FREE_FORM)
        self._send(FocusIn(self._purpose), render=False)  # a focused field's purpose can change too

    def do_set_capabilities(self, capabilities: int) -> None:
        self._capabilities = capabilities
        self._ask_for_surrounding_text()  # IBus may report capabilities after focus in

    def do_set_surrounding_text(self, text: IBus.Text, cursor: int, anchor: int) -> None:
        IBus.Engine.do_set_surrounding_text(self, text, cursor, anchor)  # keeps get_surrounding_text() current
        self._send(SurroundingText.around_cursor(text.get_text(), cursor, anchor), render=False)

    def do_candidate_clicked(self, index_in_page: int, button: int, state: int) -> None:
        if self._window is not None:
            self._send(SelectCandidate(self._window.page_start + index_in_page, self._next_request_id()))

    # The candidate window's arrows act like the keys that do the same.
    def do_page_up(self) -> None:
        self._send_key(IBus.KEY_Page_Up, 0, 0, typed=False)

    def do_page_down(self) -> None:
        self._send_key(IBus.KEY_Page_Down, 0, 0, typed=False)

    def do_cursor_up(self) -> None:
        self._send_key(IBus.KEY_Up, 0, 0, typed=False)

    def do_cursor_down(self) -> None:
        self._send_key(IBus.KEY_Down, 0, 0, typed=False)

    def do_destroy(self) -> None:
        self._daemon.close()
        IBus.Engine.do_destroy(self)

    def _focus_in(self, context: str, client: ClientKind) -> None:
        self._context, self._client = context, client
        self.register_properties(self._properties)
        self._send(FocusIn(self._purpose), render=False)
        self._ask_for_surrounding_text()
        undelivered = self._undelivered.take(context) if context else ""
        if undelivered:
            self.commit_text(IBus.Text.new_from_string(undelivered))

    def _end_composition(self, message: FocusOut | Reset) -> None:
        """The daemon commits what was shown; clients.py says who writes it into the field."""
        delivery = DELIVERY[self._client]
        try:
            output = self._daemon.send(message, MESSAGE_TIMEOUT_MS)
        except DaemonUnavailable as error:
            log.warning("%s not delivered: %s", type(message).__name__, error)
            return
        if isinstance(message, Reset):
            # The engine still has the context: its drawing reaches the field (a client's stale preedit goes).
            self._render(output if delivery.write_on_reset else dataclasses.replace(output, commit=""))
            return
        if delivery.keep_on_focus_out and self._context:
            self._undelivered.keep(self._context, output.commit)
        self._preedit_shown = ""
        self._window = None

    def _ask_for_surrounding_text(self) -> None:
        if self._capabilities & IBus.Capabilite.SURROUNDING_TEXT:
            self.get_surrounding_text()  # asks the client to send it from now on

    def _send_key(self, keyval: int, keycode: int, state: int, typed: bool) -> bool:
        """`typed`: a key the application sent, which may be passed back to it; not a candidate window's button."""
        key = KeyEvent(keyval, keycode, state, self._next_request_id())
        try:
            output = self._daemon.send(key, KEY_TIMEOUT_MS)
        except DaemonTimeout:
            log.warning("daemon did not answer a key within %d ms", KEY_TIMEOUT_MS)
            # Kept from the application until its answer, drawn when it comes, says whether the daemon took it:
            # the application never gets a key that the daemon's composition also shows.
            if typed:
                self._held_keys[key.request_id] = (keyval, keycode, state)
            return True
        except DaemonUnavailable as error:
            log.warning("daemon unavailable: %s", error)
            # The keys now reach the application as typed: the composition shown goes into the field first, where
            # it was typed, and a daemon that comes back does not get it replayed.
            if self._preedit_shown:
                self.commit_text(IBus.Text.new_from_string(self._preedit_shown))
                self._daemon.abandon_composition()
            for held in self._held_keys.values():  # their answers died with the daemon
                self.forward_key_event(*held)
            self._held_keys.clear()
            self._render_nothing()
            self.update_auxiliary_text(IBus.Text.new_from_string(UNREACHABLE_NOTICE), True)
            return False
        # Every earlier answer came before this one (DaemonSession delivers them in order): a key still held has
        # none coming, its session lost, and was replayed into the new one.
        self._held_keys.clear()
        self._render(output)
        return output.consumed

    def _send(self, message: FrontendMessage, render: bool = True) -> None:
        try:
            output = self._daemon.send(message, MESSAGE_TIMEOUT_MS)
        except DaemonUnavailable as error:
            log.warning("%s not delivered: %s", type(message).__name__, error)
            return
        if render:
            self._render(output)

    def _next_request_id(self) -> int:
        self._last_request_id = next(self._request_ids)
        return self._last_request_id

    # -- daemon → IBus ------------------------------------------------------------------------------

    def _late_output(self, output: Output) -> None:
        """A live-conversion update, or the answer to a call that timed out."""
        if output.request_id == self._last_request_id:
            self._render(output)
        else:  # the rest is outdated by a newer key's answer, but the field's text must change as it said
            self._edit_text(output)
        held = self._held_keys.pop(output.request_id, None)
        if held is not None and not output.consumed:
            self.forward_key_event(*held)  # after the answer's commit, as the daemon ordered them

    def _render(self, output: Output) -> None:
        self._edit_text(output)
        self._render_mode(output.mode)
        self._render_preedit(output.preedit)
        self._render_candidates(output.candidates)
        if output.aux:
            self.update_auxiliary_text(IBus.Text.new_from_string(output.aux), True)
        else:
            self.hide_auxiliary_text()

    def _edit_text(self, output: Output) -> None:
        """The Output's changes to the field's text: what it deletes (a reconversion's text), then its commit."""
        deletion = output.delete_surrounding
        if deletion is not None:
            self.delete_surrounding_text(-deletion.before, deletion.before + deletion.after)
        if output.commit:
            self.commit_text(IBus.Text.new_from_string(output.commit))

    def _render_mode(self, mode: str) -> None:
        if mode == self._mode or mode not in INPUT_MODES:
            return
        self._mode = mode
        symbol, label = INPUT_MODES[mode]
        self._mode_menu.set_symbol(IBus.Text.new_from_string(symbol))
        self._mode_menu.set_label(IBus.Text.new_from_string(f"入力モード ({label})"))
        self.update_property(self._mode_menu)
        for item in properties_of(self._mode_menu.get_sub_props()):
            checked = item.get_key() == f"{MODE_PROPERTY}.{mode}"
            item.set_state(IBus.PropState.CHECKED if checked else IBus.PropState.UNCHECKED)
            self.update_property(item)

    def _render_nothing(self) -> None:
        self._render_preedit(Preedit((), 0))
        self._render_candidates(None)
        self.hide_auxiliary_text()

    def _render_preedit(self, preedit: Preedit) -> None:
        text = IBus.Text.new_from_string(preedit.text)
        attributes = IBus.AttrList()
        start = 0
        for segment in preedit.segments:
            end = start + len(segment.text)
            if segment.style is not SegmentStyle.NONE:
                attributes.append(IBus.attr_underline_new(IBus.AttrUnderline.SINGLE, start, end))
            if segment.style is SegmentStyle.HIGHLIGHT:
                attributes.append(IBus.attr_foreground_new(HIGHLIGHT_FOREGROUND, start, end))
                attributes.append(IBus.attr_background_new(HIGHLIGHT_BACKGROUND, start, end))
            start = end
        text.set_attributes(attributes)
        self._preedit_shown = preedit.text
        mode = IBus.PreeditFocusMode.COMMIT if DELIVERY[self._client].commit_mode else IBus.PreeditFocusMode.CLEAR
        self.update_preedit_text_with_mode(text, preedit.cursor, bool(preedit.segments), mode)

    def _render_candidates(self, window: CandidateWindow | None) -> None:
        self._window = window
        if window is None:
            self.hide_lookup_table()
            return
        table = IBus.LookupTable.new(window.page_size, window.cursor, True, False)
        for item in window.items:
            table.append_candidate(candidate_text(item))
        for position, label in enumerate(window.labels):
            table.set_label(position, IBus.Text.new_from_string(label))
        table.set_cursor_pos(window.cursor)  # also selects the page IBus shows
        self.update_lookup_table(table, True)


def properties_of(properties: IBus.PropList) -> list[IBus.Property]:
    found, index = [], 0
    while (prop := properties.get(index)) is not None:
        found.append(prop)
        index += 1
    return found


def mode_properties(mode: str) -> tuple[IBus.Property, IBus.PropList]:
    """The input-mode menu (a radio item per mode, `mode` checked) and the property list holding it."""
    items = IBus.PropList()
    for name, (_symbol, label) in INPUT_MODES.items():
        items.append(
            IBus.Property(
                key=f"{MODE_PROPERTY}.{name}",
                prop_type=IBus.PropType.RADIO,
                label=IBus.Text.new_from_string(label),
                visible=True,
                sensitive=True,
                state=IBus.PropState.CHECKED if name == mode else IBus.PropState.UNCHECKED,
            )
        )
    symbol, label = INPUT_MODES[mode]
    menu = IBus.Property(
        key=MODE_PROPERTY,
        prop_type=IBus.PropType.MENU,
        label=IBus.Text.new_from_string(f"入力モード ({label})"),
        symbol=IBus.Text.new_from_string(symbol),
        icon=str(ICON),
        tooltip=IBus.Text.new_from_string("入力モードを切り替える"),
        visible=True,
        sensitive=True,
        sub_props=items,
    )
    properties = IBus.PropList()
    properties.append(menu)
    return menu, properties


def candidate_text(item: CandidateItem) -> IBus.Text:
    """The candidate, then its annotation in grey: IBus's candidate window has no annotation column."""
    if not item.annotation:
        return IBus.Text.new_from_string(item.text)
    text = IBus.Text.new_from_string(f"{item.text}  {item.annotation}")
    attributes = IBus.AttrList()
    attributes.append(IBus.attr_foreground_new(ANNOTATION_FOREGROUND, len(item.text), len(text.get_text())))
    text.set_attributes(attributes)
    return text


class TsuzuriFactory(IBus.Factory):
    """Makes one engine, and so one daemon session, per input context."""

    def __init__(self, bus: IBus.Bus, channel: DaemonChannel):
        super().__init__(connection=bus.get_connection(), object_path=IBus.PATH_FACTORY)
        self._channel = channel  # every engine's sessions on one connection to the daemon
        self._engine_ids = itertools.count(1)
        self._undelivered = UndeliveredCommits()

    def do_create_engine(self, engine_name: str) -> TsuzuriEngine:
        return TsuzuriEngine(
            self._channel,
            self._undelivered,
            engine_name=engine_name,
            connection=self.get_connection(),
            object_path=f"/org/freedesktop/IBus/Engine/Tsuzuri/{next(self._engine_ids)}",
            has_focus_id=True,
        )


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="tsuzuri-ibus: %(levelname)s %(message)s")
    IBus.init()
    bus = IBus.Bus()
    if not bus.is_connected():
        log.error("cannot connect to ibus-daemon")
        return 1
    try:
        daemon_connection = Gio.bus_get_sync(Gio.BusType.SESSION, None)
    except GLib.Error as error:
        log.error("cannot connect to the session bus: %s", error.message)
        return 1
    loop = GLib.MainLoop()
    bus.connect("disconnected", lambda _bus: loop.quit())
    factory = TsuzuriFactory(bus, DaemonChannel(daemon_connection))
    bus.request_name(COMPONENT_NAME, 0)
    loop.run()
    factory.destroy()
    return 0


if __name__ == "__main__":
    sys.exit(main())
