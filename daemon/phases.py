"""The phases of an input session, each a value that carries what is valid in it (as Karukan's InputState):
`Empty`; `Composing` (the live conversion's state); `Converting` (segments, focus, candidate window, the
improvement Space did not wait for); `Predicting` (the predictions). Converting and Predicting keep the
Composing they came from: Backspace and Escape return to it as it was, live text and all, and its reconverted
text and secrecy hold for them too. Pure: the calls to conversion that make segments are in
daemon/session_converter.py, and the session decides when a phase begins and ends.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

from daemon.composer import Transliteration
from daemon.conversion import MAX_READING_CHARS, CandidateSource, ConversionCandidate
from daemon.forms import to_fullwidth_katakana, to_halfwidth_katakana
from daemon.kana import to_hiragana
from ime_protocol import (
    MAX_ANNOTATION_CHARS,
    MAX_CANDIDATE_CHARS,
    MAX_CANDIDATES,
    MAX_SHORT_TEXT_CHARS,
    MAX_TEXT_CHARS,
    CandidateItem,
    CandidateWindow,
    Output,
    Preedit,
    PreeditSegment,
    SegmentStyle,
    SurroundingDeletion,
)

if TYPE_CHECKING:
    from daemon.composer import Composer
    from daemon.keys import Key
    from daemon.session_settings import SessionSettings

LABELS = "123456789"
# Shown while the composition is as long as it may be: the keys typed past it go nowhere, and the user must know.
COMPOSITION_FULL_NOTICE = f"入力は {MAX_READING_CHARS} 文字までです。変換するか確定してください"
# The reading shown in the candidate window's auxiliary line, with room for " 12/345" in MAX_SHORT_TEXT_CHARS.
AUX_READING_CHARS = MAX_SHORT_TEXT_CHARS - 16


def carried_over(converted: str, improvement: tuple[str, str] | None) -> str:
    """What the live text shows for a key's conversion: where it begins with a conversion the conversion in
    advance improved on (`improvement`: that conversion, the better text), the better text in its place, so
    that the next key does not put back what was improved on; else the conversion itself."""
    if improvement is not None and improvement[0] and converted.startswith(improvement[0]):
        return improvement[1] + converted[len(improvement[0]) :]
    return converted


@dataclass(frozen=True)
class LiveSettled:
    """The live text of the composition less its pending romaji, and what it was converted from."""

    reading: str
    context: str
    converted: str | None  # the key's conversion (the dictionary and the language model)
    shown: str | None  # what stands for it: the conversion, or the better text of the conversion in advance


@dataclass(frozen=True)
class Empty:
    """Nothing is being typed."""


@dataclass
class Composing:
    """Kana (or live text) being typed. A key that only adds romaji (the k of か) converts nothing and an
    improvement made in advance stays shown: `settled` is the live text less the pending romaji. The last
    improvement also stands in for its conversion at the start of later keys' conversions (carried_over). All
    of it goes with the composition: a commit may teach the next one otherwise."""

    reconverted: str | None = None  # the text a reconversion deleted from the field: cancelling puts it back
    # Text typed while the field was secret stays secret until it is committed or dropped, even if the field's
    # purpose changes meanwhile (IBus re-sends FocusIn on a content-type change).
    typed_in_secret: bool = False
    live_text: str | None = None  # the live conversion shown; None: the composer's kana
    settled: LiveSettled | None = None
    improvement: tuple[str, str] | None = None  # (a key's conversion, what the conversion in advance made of it)

    def settled_live(self, reading: str, context: str, convert: Callable[[], str | None]) -> str | None:
        """The live text of the settled `reading`: kept from the last key if reading and context are the same,
        else `convert()`, with the last improvement carried over."""
        settled = self.settled
        if settled is None or (settled.reading, settled.context) != (reading, context):
            converted = convert()
            shown = None if converted is None else carried_over(converted, self.improvement)
            settled = self.settled = LiveSettled(reading, context, converted, shown)
        return settled.shown

    def improve(self, reading: str, context: str, candidates: list[ConversionCandidate]) -> bool:
        """The conversion in advance of the settled `reading`: its first candidate (what Space will show, the
        model and the lattice search having had their say) becomes the live text and stands for the key's
        conversion from now on. False where it is what is shown already."""
        if not candidates or candidates[0].text == self.live_text:
            return False
        better = candidates[0].text
        settled = self.settled
        converted = (
            settled.converted
            if settled is not None and (settled.reading, settled.context) == (reading, context)
            else None
        )
        if converted is not None:
            self.improvement = (converted, better)
        self.settled = LiveSettled(reading, context, converted, better)
        self.live_text = better
        return True


@dataclass
class Segment:
    reading: str
    candidates: list[ConversionCandidate]
    index: int = 0

    @property
    def text(self) -> str:
        return self.candidates[self.index].text

    def move_cursor(self, step: int) -> None:
        self.index = (self.index + step) % len(self.candidates)

    def page_start(self, page_size: int) -> int:
        return self.index // page_size * page_size

    def select_on_page(self, place: int, page_size: int) -> bool:
        """The candidate at `place` on the cursor's page becomes the choice; False where the page has none."""
        index = self.page_start(page_size) + place
        if index >= len(self.candidates):
            return False
        self.index = index
        return True

    def put_first(self, text: str) -> None:
        """A form of the reading made on request (F6–F10) becomes the chosen first candidate."""
        self.candidates.insert(0, ConversionCandidate(text, CandidateSource.KANA))
        self.index = 0


@dataclass(frozen=True)
class PendingImprovement:
    """A conversion Space answered without waiting for the neural model: its segment, and the call that ranks
    its reading with the model's say (done in advance, under way, or made by the call)."""

    segment: Segment
    convert: Callable[[], list[ConversionCandidate]]


@dataclass
class Converting:
    """The reading converted, as one segment (Space) or several (once the user moves between them)."""

    segments: list[Segment]
    composing: Composing  # what Backspace and Escape go back to
    focus: int = 0
    window_open: bool = False
    pending_improvement: PendingImprovement | None = None  # taken once, by the session's conversion_to_improve

    @classmethod
    def transliterated(cls, reading: str, text: str, composing: Composing) -> Converting:
        """F6–F10 while composing: the reading in one form, as a conversion of one segment."""
        return cls([Segment(reading, [ConversionCandidate(text, CandidateSource.KANA)])], composing)

    @property
    def focused(self) -> Segment:
        return self.segments[self.focus]

    @property
    def reading(self) -> str:
        return "".join(s.reading for s in self.segments)

    @property
    def text(self) -> str:
        return "".join(s.text for s in self.segments)

    def take_pending_improvement(self) -> PendingImprovement | None:
        pending, self.pending_improvement = self.pending_improvement, None
        return pending

    def improve(self, pending: PendingImprovement, candidates: list[ConversionCandidate]) -> bool:
        """The model's ranking of a conversion Space answered without it replaces its candidates while its
        segment is still the only one and the user has neither moved from its first candidate nor opened the
        window. True if the first candidate changed."""
        segment = pending.segment
        if (
            len(self.segments) != 1
            or self.segments[0] is not segment
            or segment.index != 0
            or self.window_open
            or not candidates
        ):
            return False
        before = segment.text
        segment.candidates = candidates[:MAX_CANDIDATES]
        return segment.text != before

    def move_focus(self, step: int) -> None:
        self.focus = min(max(self.focus + step, 0), len(self.segments) - 1)
        self.window_open = False

    def choose(self) -> bool:
        """The focused segment's candidate is chosen: focus moves to the next segment; True after the last."""
        self.window_open = False
        if self.focus < len(self.segments) - 1:
            self.focus += 1
            return False
        return True

    def transliterate_focused(self, form: Transliteration, whole: str) -> None:
        """F6–F10: the focused segment's reading in that form. A single segment takes `whole`, the composer's
        form of what was typed (F9 and F10 give the romaji back); of several, each has only its kana."""
        reading = self.focused.reading
        text = (
            whole
            if len(self.segments) == 1
            else {
                Transliteration.HIRAGANA: to_hiragana(reading),
                Transliteration.KATAKANA: to_fullwidth_katakana(reading),
                Transliteration.HALFWIDTH_KATAKANA: to_halfwidth_katakana(reading),
            }.get(form)
        )
        if text is not None:
            self.focused.put_first(text)

    def preedit(self) -> list[PreeditSegment]:
        return [
            PreeditSegment(s.text, SegmentStyle.HIGHLIGHT if i == self.focus else SegmentStyle.UNDERLINE)
            for i, s in enumerate(self.segments)
        ]


@dataclass
class Predicting:
    """Completions of the typed prefix in an open candidate window (Tab, or Down while composing)."""

    items: Segment
    composing: Composing  # what Backspace and Escape go back to


Phase: TypeAlias = Empty | Composing | Converting | Predicting


def composition_of(phase: Phase) -> Composing | None:
    """What holds the composition's facts (reconverted text, secrecy, live state) in any phase but Empty."""
    return phase if isinstance(phase, Composing) else None if isinstance(phase, Empty) else phase.composing


def committed_text(phase: Phase, composer: Composer) -> str:
    """What committing a phase puts in the field: what it shows."""
    if isinstance(phase, Converting):
        return phase.text
    if isinstance(phase, Predicting):
        return phase.items.text
    return (phase.live_text or composer.reading()) if isinstance(phase, Composing) else ""


def listed(phase: Phase) -> Segment | None:
    """The segment whose candidates the window lists (or would, once opened)."""
    return phase.focused if isinstance(phase, Converting) else phase.items if isinstance(phase, Predicting) else None


def label_place(key: Key, page_size: int) -> int | None:
    """The place on the page of the candidate whose label (1–9) a key types."""
    labels = LABELS[:page_size]
    return labels.index(key.name) if key.name in labels and not key.control else None


def candidate_window(segment: Segment, page_size: int, show_source: bool) -> tuple[CandidateWindow, str]:
    """The window of a segment's candidates and its auxiliary line (the reading, the cursor's place)."""

    def annotation(candidate: ConversionCandidate) -> str:
        if not show_source:
            return candidate.annotation
        return f"{candidate.annotation} [{candidate.source}]".lstrip()[:MAX_ANNOTATION_CHARS]

    window = CandidateWindow(
        items=tuple(CandidateItem(c.text[:MAX_CANDIDATE_CHARS], annotation(c)) for c in segment.candidates),
        cursor=segment.index,
        page_size=page_size,
        labels=LABELS[:page_size],
    )
    aux = f"{segment.reading[:AUX_READING_CHARS]} {segment.index + 1}/{len(segment.candidates)}"
    return window, aux


def answer(
    phase: Phase,
    composer: Composer,
    settings: SessionSettings,
    notice: str,
    request_id: int,
    consumed: bool,
    commit: str,
    deletion: SurroundingDeletion | None,
) -> Output:
    """The session's answer: a key's effects (`consumed`, `commit`, `deletion`) and what the phase shows — the
    preedit, the candidate window, the auxiliary line (the phase's own, else `notice`)."""
    window, aux = None, ""
    if isinstance(phase, Composing):
        segments = [PreeditSegment((phase.live_text or composer.preedit())[:MAX_TEXT_CHARS], SegmentStyle.UNDERLINE)]
        aux = COMPOSITION_FULL_NOTICE if len(composer.raw()) >= MAX_READING_CHARS else ""
    elif isinstance(phase, Converting):
        segments = phase.preedit()
        if phase.window_open:
            window, aux = candidate_window(phase.focused, settings.page_size, settings.show_source)
    elif isinstance(phase, Predicting):
        segments = [PreeditSegment(composer.preedit()[:MAX_TEXT_CHARS], SegmentStyle.UNDERLINE)]
        window, aux = candidate_window(phase.items, settings.page_size, settings.show_source)
    else:
        segments = []
    cursor = min(sum(len(s.text) for s in segments), MAX_TEXT_CHARS)
    return Output(
        request_id=request_id,
        consumed=consumed,
        commit=commit[:MAX_TEXT_CHARS],
        preedit=Preedit(tuple(segments), cursor),
        candidates=window,
        aux=aux or notice,
        mode=composer.mode.value,
        delete_surrounding=deletion,
    )
