"""Who writes a composition into the field when it ends other than by a key, for each kind of IBus client.

The daemon decides the text (its answer to FocusOut or Reset commits what is shown); this says whether the engine
must write it or the client or ibus-daemon already did, as IBus 1.5.27 and its clients behave (read from their
sources; each case is a test in tests/integration/test_real_window.py):

- ibus-daemon moves its one engine between input contexts, and detaches it from a context before the engine
  hears of the focus change: whatever the engine commits after a focus out goes to the next context or nowhere.
  A preedit drawn in PreeditFocusMode.COMMIT is committed into the right field by the GTK modules themselves on
  focus out, and by ibus-daemon on an engine switch and (for clients that do not commit themselves) on focus out.
- GTK 3 commits its copy of a COMMIT-mode preedit itself on a click in the field, then resets; GTK 4 (whose module
  runs in IBus's sync mode 2) resets on a click and commits nothing: the engine must.
- Qt 5 and 6 commit their copy of the preedit on every focus change and click within the application (then reset),
  whatever the mode; with COMMIT mode ibus-daemon would commit it a second time on that reset, into whatever has
  focus by then. So Qt gets CLEAR mode. But Qt commits nothing when focus goes to another application: the text
  is kept for that input context and committed when it has focus again (the engine cannot reach it before).

This module needs no GI: the engine (engine.py) applies it, the unit tests check it directly.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from enum import Enum

# Contexts whose undelivered text is kept: more than any desktop has windows awaiting one.
MAX_UNDELIVERED = 32


class ClientKind(Enum):
    GTK3 = "gtk3"  # also GTK 2, whose module is the same code
    GTK4 = "gtk4"
    QT = "qt"
    OTHER = "other"  # XIM, or a context whose client the engine was not told (a plain FocusIn)


def client_kind(client_name: str) -> ClientKind:
    """The kind of the client named in IBus's FocusInId: "gtk3-im:gedit", "gtk4-im:…", "QIBusInputContext", "xim"."""
    module = client_name.partition(":")[0]
    if module in ("gtk3-im", "gtk-im"):
        return ClientKind.GTK3
    if module == "gtk4-im":
        return ClientKind.GTK4
    if module == "QIBusInputContext":
        return ClientKind.QT
    return ClientKind.OTHER


@dataclass(frozen=True)
class Delivery:
    """What the engine does for one kind of client."""

    commit_mode: bool  # draw the preedit in PreeditFocusMode.COMMIT (else CLEAR)
    write_on_reset: bool  # a reset's commit is the engine's to write (the client wrote none)
    keep_on_focus_out: bool  # a focus out's commit reached no one: kept until the context has focus again


DELIVERY = {
    ClientKind.GTK3: Delivery(commit_mode=True, write_on_reset=False, keep_on_focus_out=False),
    ClientKind.GTK4: Delivery(commit_mode=True, write_on_reset=True, keep_on_focus_out=False),
    ClientKind.QT: Delivery(commit_mode=False, write_on_reset=False, keep_on_focus_out=True),
    ClientKind.OTHER: Delivery(commit_mode=True, write_on_reset=False, keep_on_focus_out=False),
}


class UndeliveredCommits:
    """Text committed while its input context had no focus, by the context's object path, oldest dropped first."""

    def __init__(self, limit: int = MAX_UNDELIVERED):
        self._texts: OrderedDict[str, str] = OrderedDict()
        self._limit = limit

    def keep(self, context: str, text: str) -> None:
        if not text:
            return
        self._texts[context] = self._texts.pop(context, "") + text
        while len(self._texts) > self._limit:
            self._texts.popitem(last=False)

    def take(self, context: str) -> str:
        """The context's undelivered text, forgotten here."""
        return self._texts.pop(context, "")
