"""The protocol's messages: frozen dataclasses that validate themselves on construction.

An invalid message cannot be built: constructing one raises ProtocolError(code="invalid_field").
"""

from enum import Enum
from typing import Annotated, get_args

from .limits import (
    MAX_ANNOTATION_CHARS,
    MAX_CANDIDATE_CHARS,
    MAX_CANDIDATES,
    MAX_PAGE_SIZE,
    MAX_SEGMENTS,
    MAX_SHORT_TEXT_CHARS,
    MAX_TEXT_CHARS,
    REQUEST_ID_MAX,
    UINT32_MAX,
)
from .schema import IntRange, MaxLen, OneOf, WireRecord, invalid_field, is_wire_text, message, record

# IBus/X11 modifier masks, as both IBus and fcitx5 report them in KeyEvent.modifiers.
SHIFT_MASK = 1 << 0
LOCK_MASK = 1 << 1  # Caps Lock
CONTROL_MASK = 1 << 2
ALT_MASK = 1 << 3  # X11 Mod1
NUM_LOCK_MASK = 1 << 4  # X11 Mod2
SUPER_MASK = 1 << 26
HYPER_MASK = 1 << 27
META_MASK = 1 << 28
RELEASE_MASK = 1 << 30
# Held together with a key, these make it a command for the application rather than text.
COMMAND_MODIFIERS = CONTROL_MASK | ALT_MASK | SUPER_MASK | HYPER_MASK | META_MASK

INPUT_MODES = frozenset({"hiragana", "katakana", "halfwidth_katakana", "fullwidth_ascii", "direct"})

UInt32 = Annotated[int, IntRange(0, UINT32_MAX)]
RequestId = Annotated[int, IntRange(0, REQUEST_ID_MAX)]
TextPosition = Annotated[int, IntRange(0, MAX_TEXT_CHARS)]  # code points; checked against its text too
CandidateIndex = Annotated[int, IntRange(0, MAX_CANDIDATES - 1)]
Text = Annotated[str, MaxLen(MAX_TEXT_CHARS)]
ShortText = Annotated[str, MaxLen(MAX_SHORT_TEXT_CHARS)]
InputMode = Annotated[str, OneOf(INPUT_MODES)]


def _check_position(label: str, position: int, text: str) -> None:
    if position > len(text):
        raise invalid_field(label, f"{position} is past the end of a {len(text)}-character text")


class InputPurpose(Enum):
    """What the focused field is for, as IBus reports it (fcitx5 capabilities map onto it)."""

    FREE_FORM = "free_form"
    ALPHA = "alpha"
    DIGITS = "digits"
    NUMBER = "number"
    PHONE = "phone"
    URL = "url"
    EMAIL = "email"
    NAME = "name"
    PASSWORD = "password"
    PIN = "pin"
    TERMINAL = "terminal"

    @property
    def is_secret(self) -> bool:
        """Text typed here must never be learned from nor used for prediction."""
        return self in (InputPurpose.PASSWORD, InputPurpose.PIN)


class SegmentStyle(Enum):
    NONE = "none"
    UNDERLINE = "underline"
    HIGHLIGHT = "highlight"  # the segment being converted right now


# --- Frontend -> daemon ---------------------------------------------------------------------------


@message("key_event")
class KeyEvent(WireRecord):
    keyval: UInt32  # X11 keysym
    keycode: UInt32  # hardware keycode
    modifiers: UInt32  # the *_MASK bits above
    request_id: RequestId  # echoed in the Output that answers this key

    def has_modifiers(self, mask: int) -> bool:
        """Whether every modifier in `mask` is held."""
        return self.modifiers & mask == mask

    @property
    def is_release(self) -> bool:
        return self.has_modifiers(RELEASE_MASK)

    @property
    def has_command_modifier(self) -> bool:
        """Control, Alt, Super, Hyper or Meta is held: a shortcut, not text."""
        return bool(self.modifiers & COMMAND_MODIFIERS)


@message("surrounding_text")
class SurroundingText(WireRecord):
    text: Text
    cursor: TextPosition
    anchor: TextPosition  # the other end of the selection; equal to cursor when nothing is selected

    def _check_invariants(self) -> None:
        _check_position("SurroundingText.cursor", self.cursor, self.text)
        _check_position("SurroundingText.anchor", self.anchor, self.text)

    @classmethod
    def around_cursor(cls, text: str, cursor: int, anchor: int) -> "SurroundingText":
        """A field's text as the frontends send it: cut to MAX_TEXT_CHARS around the cursor, the positions
        moved into the cut and clamped to it. A text holding what the protocol cannot carry (NUL, a lone
        surrogate) is sent as none. The fcitx5 addon's surroundingText (protocol.cpp) is its twin, tested
        against it (tests/integration/test_fcitx5_codec.py)."""
        if not is_wire_text(text):
            return cls("", 0, 0)
        start = max(0, min(cursor, len(text)) - MAX_TEXT_CHARS // 2)
        window = text[start : start + MAX_TEXT_CHARS]

        def clamp(position: int) -> int:
            return min(max(position - start, 0), len(window))

        return cls(window, clamp(cursor), clamp(anchor))


@message("focus_in")
class FocusIn(WireRecord):
    purpose: InputPurpose


# How a composition ends other than by a key. FocusOut and Reset commit what is shown (the Output's commit): the
# daemon decides the text; the frontend writes it into the field unless its framework or toolkit already did
# (which each frontend knows, and says where). Discard drops it, committing nothing.


@message("focus_out")
class FocusOut(WireRecord):
    """The field lost the focus, or the input method."""


@message("reset")
class Reset(WireRecord):
    """The application reset the field's input context (a click in it, its text set by the program)."""


@message("discard")
class Discard(WireRecord):
    """The frontend gave the key to the application after all (its answer came too late): the composition the
    daemon built of it goes, and a reconversion puts back the text it took out of the field."""


@message("select_candidate")
class SelectCandidate(WireRecord):
    index: CandidateIndex  # into CandidateWindow.items (not into the page): frontends add page_start
    request_id: RequestId


@message("set_input_mode")
class SetInputMode(WireRecord):
    mode: InputMode


# --- Daemon -> frontend ---------------------------------------------------------------------------


@record
class PreeditSegment(WireRecord):
    text: Text
    style: SegmentStyle


@record
class Preedit(WireRecord):
    segments: Annotated[tuple[PreeditSegment, ...], MaxLen(MAX_SEGMENTS)]
    cursor: TextPosition

    @property
    def text(self) -> str:
        return "".join(segment.text for segment in self.segments)

    def _check_invariants(self) -> None:
        text = self.text
        if len(text) > MAX_TEXT_CHARS:
            raise invalid_field("Preedit.segments", f"{len(text)} characters in all, limit {MAX_TEXT_CHARS}")
        _check_position("Preedit.cursor", self.cursor, text)
        if sum(segment.style is SegmentStyle.HIGHLIGHT for segment in self.segments) > 1:
            raise invalid_field("Preedit.segments", "more than one HIGHLIGHT segment")


@record
class CandidateItem(WireRecord):
    text: Annotated[str, MaxLen(MAX_CANDIDATE_CHARS)]
    annotation: Annotated[str, MaxLen(MAX_ANNOTATION_CHARS)]  # e.g. a usage note, shown beside the text


@record
class CandidateWindow(WireRecord):
    items: Annotated[tuple[CandidateItem, ...], MaxLen(MAX_CANDIDATES)]
    cursor: CandidateIndex  # the highlighted item, an index into items
    page_size: Annotated[int, IntRange(1, MAX_PAGE_SIZE)]
    labels: Annotated[str, MaxLen(MAX_PAGE_SIZE)]  # one character per position on a page, e.g. "123456789"

    def _check_invariants(self) -> None:
        if not self.items:
            raise invalid_field("CandidateWindow.items", "empty; send candidates=None to hide the window")
        if self.cursor >= len(self.items):
            raise invalid_field("CandidateWindow.cursor", f"{self.cursor} is past the last of {len(self.items)} items")
        if len(self.labels) != self.page_size:
            raise invalid_field("CandidateWindow.labels", f"{len(self.labels)} labels for page size {self.page_size}")

    @property
    def page_index(self) -> int:
        return self.cursor // self.page_size

    @property
    def page_count(self) -> int:
        return -(-len(self.items) // self.page_size)

    @property
    def page_start(self) -> int:
        """Index into items of the first item on the cursor's page."""
        return self.page_index * self.page_size

    @property
    def page_items(self) -> tuple[CandidateItem, ...]:
        return self.items[self.page_start : self.page_start + self.page_size]

    @property
    def page_labels(self) -> str:
        """The label of each item on the cursor's page, in order."""
        return self.labels[: len(self.page_items)]

    @property
    def cursor_in_page(self) -> int:
        return self.cursor - self.page_start


@record
class SurroundingDeletion(WireRecord):
    """Text around the cursor that the frontend deletes before it commits (the text a reconversion replaces).
    It is one span that holds the cursor: `before` code points just before it and `after` just after it."""

    before: TextPosition
    after: TextPosition

    def _check_invariants(self) -> None:
        if self.before + self.after == 0:
            raise invalid_field("SurroundingDeletion", "deletes nothing; send delete_surrounding=None instead")


@message("output")
class Output(WireRecord):
    request_id: RequestId  # of the KeyEvent or SelectCandidate answered; 0 when unsolicited
    consumed: bool  # False: the frontend passes the key on to the application
    commit: Text  # committed to the application before the preedit is drawn
    preedit: Preedit
    candidates: CandidateWindow | None  # None hides the candidate window
    aux: ShortText  # auxiliary line, e.g. the reading being converted; "" hides it
    mode: InputMode
    # Deleted first, then the commit, then the preedit and the rest drawn. Last, with a default, so that an
    # Output that deletes nothing need not say so; on the wire it is always there (nil for None).
    delete_surrounding: SurroundingDeletion | None = None


FrontendMessage = KeyEvent | SurroundingText | FocusIn | FocusOut | Reset | Discard | SelectCandidate | SetInputMode
DaemonMessage = Output  # the model's state is GetStatus's, on the bus
FRONTEND_MESSAGES: tuple[type[WireRecord], ...] = get_args(FrontendMessage)  # for decode(expected=...)
DAEMON_MESSAGES: tuple[type[WireRecord], ...] = (Output,)
