"""The input session state machine: keys in, what to show out (pure, platform-free).

Empty → Composing → Converting → commit, plus Predicting (Tab / Down while composing). The session holds
a composer and, while converting, a list of segments each with its candidates; it asks the converter
for candidates and never touches D-Bus. Positions are in code points.

Reconversion (再変換) enters Converting from Empty: the selected text (or the word before the cursor, as the
field's surrounding text says) is deleted from the field, its reading converts, and the choice is committed
in its place; cancelling puts the original text back.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, fields
from enum import Enum
from functools import partial
from pathlib import Path
from collections.abc import Callable
from typing import TYPE_CHECKING

from daemon.composer import (MOZC_RULES, ROMAJI_TABLE, Composer, InputMode, RomajiTable, RomajiTableError,
                             SymbolStyle, Transliteration, load_rules, romaji_table)
from daemon.forms import to_fullwidth_katakana, to_halfwidth_katakana
from daemon.config import Action, InputSettings, KeyBindings
from daemon.conversion import (MAX_READING_CHARS, CandidateSource, Conversion, ConversionCandidate, Effort,
                               PersonalData, ReadingTooLong, clean_reading, unique_texts)
from daemon.keys import Key, KeySpec, key_from_event
from daemon.kana import to_hiragana
from daemon.reconversion import ReconversionTarget, reconversion_target
from ime_protocol import (MAX_ANNOTATION_CHARS, MAX_CANDIDATE_CHARS, MAX_CANDIDATES, MAX_SHORT_TEXT_CHARS,
                          MAX_TEXT_CHARS, CandidateItem, CandidateWindow, InputPurpose, Output, Preedit,
                          PreeditSegment, SegmentStyle, SurroundingDeletion, SurroundingText)

if TYPE_CHECKING:
    from daemon.dictionary import TextReader

log = logging.getLogger(__name__)

LABELS = "123456789"
# Shown while the composition is as long as it may be: the keys typed past it go nowhere, and the user must know.
COMPOSITION_FULL_NOTICE = f"入力は {MAX_READING_CHARS} 文字までです。変換するか確定してください"
UNKEPT_CHOICE_NOTICE = "学習した変換を保存できません"
# The reading shown in the candidate window's auxiliary line, with room for " 12/345" in MAX_SHORT_TEXT_CHARS.
AUX_READING_CHARS = MAX_SHORT_TEXT_CHARS - 16
# Space answers with the neural model's ranking if it is done (mostly made in advance, while the user paused) or
# done within this wait; past it, at once with the ranking without the model, and the model's follows as an
# improvement (conversion_to_improve). On a busy machine the model's scoring is what keeps Space waiting.
SPACE_MODEL_WAIT_S = 0.005

def bindings_of(keys: KeyBindings) -> dict[Action, tuple[KeySpec, ...]]:
    """action → keys, from the configuration's key bindings (checked there)."""
    return {Action(f.name): tuple(KeySpec.parse(name) for name in getattr(keys, f.name)) for f in fields(keys)}


def romaji_table_of(settings: InputSettings) -> RomajiTable:
    """The romaji table of the configuration's [input] settings. The configuration checked the table file;
    if it has become unusable since, Mozc's table is used and the reason logged."""
    rules = MOZC_RULES
    if settings.romaji_table:
        path = Path(settings.romaji_table).expanduser()
        try:
            rules = load_rules(path)
        except RomajiTableError as error:
            log.warning("romaji table %s: %s; using Mozc's table", path, error)
    return romaji_table(rules, SymbolStyle(punctuation=settings.punctuation, brackets=settings.brackets,
                                           slash=settings.slash, space=settings.space))


DEFAULT_BINDINGS = bindings_of(KeyBindings())
FUNCTION_KEYS = {"F6": Transliteration.HIRAGANA, "F7": Transliteration.KATAKANA,
                 "F8": Transliteration.HALFWIDTH_KATAKANA, "F9": Transliteration.FULLWIDTH_ASCII,
                 "F10": Transliteration.HALFWIDTH_ASCII}


def carried_over(converted: str, improvement: tuple[str, str] | None) -> str:
    """What the live text shows for a key's conversion: where it begins with a conversion the conversion in
    advance improved on (`improvement`: that conversion, the better text), the better text in its place, so
    that the next key does not put back what was improved on; else the conversion itself."""
    if improvement is not None and improvement[0] and converted.startswith(improvement[0]):
        return improvement[1] + converted[len(improvement[0]):]
    return converted


@dataclass(frozen=True)
class LiveSettled:
    """The live text of the composition less its pending romaji, and what it was converted from."""

    reading: str
    context: str
    converted: str | None  # the key's conversion (the dictionary and the language model)
    shown: str | None  # what stands for it: the conversion, or the better text of the conversion in advance


class Phase(Enum):
    EMPTY = "empty"
    COMPOSING = "composing"
    CONVERTING = "converting"
    PREDICTING = "predicting"


@dataclass(frozen=True)
class SessionSettings:
    page_size: int = 9
    dictionary_candidates: int = 20
    live_conversion: bool = False
    context_chars: int = 40
    learning: bool = True
    bindings: dict[Action, tuple[KeySpec, ...]] = field(default_factory=lambda: dict(DEFAULT_BINDINGS))
    romaji_table: RomajiTable = ROMAJI_TABLE
    show_source: bool = False  # each candidate's source beside its annotation (a debugging aid)

    def actions(self, key: Key) -> list[Action]:
        """Every action bound to `key`: those bound to its exact chord first, then those bound to its name."""
        chords = [action for action, specs in self.bindings.items()
                  if any(spec.is_chord and spec.matches(key) for spec in specs)]
        plain = [action for action, specs in self.bindings.items()
                 if any(not spec.is_chord and spec.matches(key) for spec in specs)]
        return list(dict.fromkeys(chords + plain))

    def action(self, key: Key) -> Action | None:
        found = self.actions(key)
        return found[0] if found else None


@dataclass
class Segment:
    reading: str
    candidates: list[ConversionCandidate]
    index: int = 0

    @property
    def text(self) -> str:
        return self.candidates[self.index].text


@dataclass(frozen=True)
class PendingImprovement:
    """A conversion Space answered without waiting for the neural model: its segment, and the call that ranks
    its reading with the model's say (done in advance, under way, or made by the call)."""
    segment: Segment
    convert: Callable[[], list[ConversionCandidate]]


class InputSession:
    def __init__(self, converter: Conversion, settings: SessionSettings | None = None,
                 reader: TextReader | None = None):
        self.converter = converter
        # Readings of written text, for reconversion: the converter's unless given.
        self.reader = reader or converter.text_reader()
        self.settings = settings or SessionSettings()
        self.composer = Composer(table=self.settings.romaji_table)
        self.phase = Phase.EMPTY
        self.segments: list[Segment] = []
        self.focus = 0
        self.window_open = False
        self.purpose = InputPurpose.FREE_FORM
        self.committed = ""  # recent commits of this session: left context when the app sends none
        self.notice = ""  # said once in the auxiliary line of the next answer (a choice that cannot be kept)
        self.surrounding: SurroundingText | None = None  # the field's text around the cursor, as last reported
        self.reconverted: str | None = None  # while a reconversion is in progress, the text it deleted
        self.model_session = converter.model_session()
        self.live_text: str | None = None  # live conversion of the current composition
        # The live text of the composition less its pending romaji: a key that only adds romaji (the k of か)
        # converts nothing, and an improvement made in advance stays shown. The last improvement also stands
        # in for its conversion at the start of later keys' conversions (carried_over). Both are forgotten
        # with the composition (a commit may teach the next one otherwise).
        self._live_settled: LiveSettled | None = None
        self._live_improvement: tuple[str, str] | None = None
        # Text typed while the field was secret stays secret until it is committed or dropped, even if the
        # field's purpose changes meanwhile (IBus re-sends FocusIn on a content-type change).
        self.typed_in_secret = False
        self._pending_improvement: PendingImprovement | None = None

    # -- inputs ---------------------------------------------------------------------------------

    def handle_key(self, keyval: int, modifiers: int, request_id: int = 0, live: bool = True) -> Output:
        """The key applied, and what to show. With live conversion on, a key that changes the composition is
        answered with its conversion (as Mozc does: one drawing per key, the kana never flash first), unless
        `live` is False: the caller knows a newer key is waiting, whose answer will carry it."""
        consumed, commit, deletion = self._apply_key(keyval, modifiers)
        if live and self.phase is Phase.COMPOSING and self.live_text is None:
            self.live_text = self.live_conversion()
        return self._output(request_id, consumed, commit, deletion)

    def _apply_key(self, keyval: int, modifiers: int) -> tuple[bool, str, SurroundingDeletion | None]:
        """(consumed, text to commit, surrounding text to delete first)"""
        key = key_from_event(keyval, modifiers)
        if key is None:
            return False, "", None
        actions = self.settings.actions(key)
        if self.composer.mode is InputMode.DIRECT:
            if Action.TOGGLE_INPUT in actions or Action.INPUT_ON in actions:
                return True, self._toggle_input(), None
            return False, "", None
        if Action.INPUT_OFF in actions and self.phase is Phase.EMPTY:
            return True, self._toggle_input(), None
        if Action.RECONVERT in actions and self.phase is Phase.EMPTY:
            found = self._reconversion_target()
            if found is not None:
                self._start_reconversion(*found)
                return True, "", found[0].deletion
        handler = {Phase.EMPTY: self._key_empty, Phase.COMPOSING: self._key_composing,
                   Phase.CONVERTING: self._key_converting, Phase.PREDICTING: self._key_predicting}[self.phase]
        consumed, commit = handler(key, actions[0] if actions else None)
        return consumed, commit, None

    def select_candidate(self, index: int, request_id: int = 0) -> Output:
        """A click in the candidate window: choose that candidate (index into all items)."""
        if self.phase in (Phase.CONVERTING, Phase.PREDICTING) and 0 <= index < len(self._focused().candidates):
            self._focused().index = index
            return self._output(request_id, True, self._choose())
        return self._output(request_id, consumed=False)

    def set_surrounding_text(self, surrounding: SurroundingText) -> None:
        self.surrounding = surrounding

    def focus_in(self, purpose: InputPurpose) -> None:
        self.purpose = purpose

    def commit_shown(self) -> Output:
        """The composition ends other than by a key (focus lost, the field reset): what is shown is committed, as
        the user sees it (nothing is lost), and learned from as any commit."""
        return self._output(0, True, self._commit_all())

    def discard(self) -> Output:
        """The composition is dropped; a reconversion puts back the text it deleted."""
        return self._output(0, True, self._cancel())

    def set_mode(self, mode: InputMode) -> Output:
        commit = self._commit_all() if mode is InputMode.DIRECT else ""
        self.composer = self.composer.set_mode(mode)
        return self._output(0, True, commit)

    def current_output(self) -> Output:
        """What to show now (the answer to messages that change no text, such as FocusIn)."""
        return self._output(0, True)

    def close(self) -> None:
        if self.model_session is not None:
            self.model_session.close()

    @property
    def context(self) -> str:
        left = self.surrounding.text[:self.surrounding.cursor] if self.surrounding is not None else self.committed
        return left[-self.settings.context_chars:] if self.settings.context_chars else ""

    @property
    def private(self) -> bool:
        return self.purpose.is_secret or self.typed_in_secret

    @property
    def personal_data(self) -> PersonalData:
        return PersonalData.NO_HISTORY if self.private else PersonalData.ALL

    # -- per-phase key handling: `action` is the key's first bound action; each returns (consumed,
    # text to commit)

    def _key_empty(self, key: Key, action: Action | None) -> tuple[bool, str]:
        if action is Action.TOGGLE_INPUT:
            return True, self._toggle_input()
        if action is Action.CONVERT and key.name == "space" and not key.shift and not key.control:
            return True, self._new_composer().space()  # as Mozc does; Shift+Space leaves a plain space
        if key.printable:
            return self._insert(key.printable), ""
        return False, ""

    def _key_composing(self, key: Key, action: Action | None) -> tuple[bool, str]:
        if key.name in FUNCTION_KEYS:
            self._start_conversion([Segment(self.composer.reading(), [ConversionCandidate(
                self.composer.transliterate(FUNCTION_KEYS[key.name]), CandidateSource.KANA)])])
            return True, ""
        if action is Action.CONVERT:
            self._start_conversion(self._whole_reading_segments())
            return True, ""
        if action is Action.COMMIT:
            return True, self._commit_all()
        if action is Action.CANCEL:
            return True, self._cancel()
        if action is Action.BACKSPACE:
            self.composer = self.composer.backspace()
            self._after_composer_change()
            return True, ""
        if action in (Action.PREDICT, Action.NEXT_CANDIDATE) and not self.private:
            return True, self._start_prediction()
        if action is Action.TOGGLE_INPUT:
            return True, self._toggle_input()
        if key.printable:
            return self._insert(key.printable), ""
        # Cursor keys and the like would move the application's caret under the preedit: swallow them.
        return not (key.control or key.alt), ""

    def _key_converting(self, key: Key, action: Action | None) -> tuple[bool, str]:
        segment = self._focused()
        if action in (Action.CONVERT, Action.NEXT_CANDIDATE):  # the second Space opens the window on candidate 2
            self._move_cursor(1)
            self.window_open = True
        elif action is Action.PREV_CANDIDATE:
            self._move_cursor(-1)
            self.window_open = True
        elif action in (Action.PAGE_DOWN, Action.PAGE_UP):
            self._move_cursor(self.settings.page_size * (1 if action is Action.PAGE_DOWN else -1))
            self.window_open = True
        elif action is Action.COMMIT:
            return True, self._commit_all()
        elif action is Action.CANCEL and self.reconverted is not None:
            return True, self._cancel()
        elif action in (Action.CANCEL, Action.BACKSPACE):
            self._back_to_composing()
        elif action in (Action.FOCUS_LEFT, Action.FOCUS_RIGHT):
            step = -1 if action is Action.FOCUS_LEFT else 1
            if key.shift:
                self._resize_focused(step)
            else:
                self._split_whole()
                self.focus = min(max(self.focus + step, 0), len(self.segments) - 1)
                self.window_open = False
        elif key.name in FUNCTION_KEYS:
            self._transliterate_focused(FUNCTION_KEYS[key.name])
        elif self.window_open and key.name in LABELS[:self.settings.page_size] and not key.control:
            index = self._page_start() + LABELS.index(key.name)
            if index < len(segment.candidates):
                segment.index = index
                return True, self._choose()
        elif action is Action.TOGGLE_INPUT:
            return True, self._toggle_input()
        elif key.printable:  # typing on commits the conversion and starts a new composition
            commit = self._commit_all()
            return self._insert(key.printable), commit
        else:
            return not (key.control or key.alt), ""
        return True, ""

    def _key_predicting(self, key: Key, action: Action | None) -> tuple[bool, str]:
        if action in (Action.PREDICT, Action.NEXT_CANDIDATE, Action.CONVERT):
            self._move_cursor(1)
        elif action is Action.PREV_CANDIDATE:
            self._move_cursor(-1)
        elif action in (Action.PAGE_DOWN, Action.PAGE_UP):
            self._move_cursor(self.settings.page_size * (1 if action is Action.PAGE_DOWN else -1))
        elif action is Action.COMMIT:
            return True, self._commit_all()
        elif action in (Action.CANCEL, Action.BACKSPACE):
            self._back_to_composing()
        elif key.name in LABELS[:self.settings.page_size] and not key.control:
            index = self._page_start() + LABELS.index(key.name)
            if index < len(self._focused().candidates):
                self._focused().index = index
                return True, self._commit_all()
        elif key.printable:
            self._back_to_composing()
            return self._insert(key.printable), ""
        return True, ""

    # -- transitions ----------------------------------------------------------------------------

    def _insert(self, char: str) -> bool:
        if len(self.composer.raw()) >= MAX_READING_CHARS:  # keys type ASCII: no NFKC expansion to count
            return True  # swallowed: the composition is already as long as we allow
        if not self.composer.raw():
            self.composer = self._new_composer()
        self.composer = self.composer.insert(char)
        self.typed_in_secret |= self.purpose.is_secret
        self._after_composer_change()
        return True

    def _new_composer(self) -> Composer:
        """An empty composer on the current settings' table: a reloaded config applies from the next composition."""
        return Composer(self.composer.mode, self.settings.romaji_table)

    def _after_composer_change(self) -> None:
        self.live_text = None
        self.phase = Phase.COMPOSING if self.composer.raw() else Phase.EMPTY
        self.typed_in_secret &= self.phase is Phase.COMPOSING

    def _whole_reading_segments(self) -> list[Segment]:
        """One segment for the whole reading: whole-sentence candidates (model, dictionary N-best), ranked
        with the neural model's say if it comes within SPACE_MODEL_WAIT_S, else improved later."""
        reading = self.composer.reading()
        candidates, model_to_come = self.converter.timely_candidates(
            SPACE_MODEL_WAIT_S, reading, self.context, self.settings.dictionary_candidates, self.model_session,
            self.personal_data)
        segment = Segment(reading, candidates[:MAX_CANDIDATES] or [ConversionCandidate(reading, CandidateSource.KANA)])
        self._pending_improvement = (PendingImprovement(segment, self._whole_reading_conversion()) if model_to_come
                                     else None)
        return [segment]

    def _whole_reading_conversion(self) -> Callable[[], list[ConversionCandidate]]:
        """The whole reading's conversion with the neural model's say, as a call: made in advance while the user
        pauses (Space then finds it done), or after Space answered without it."""
        return partial(self.converter.candidates, self.composer.reading(), self.context,
                       self.settings.dictionary_candidates, self.model_session, self.personal_data)

    def _start_conversion(self, segments: list[Segment]) -> None:
        self.segments = segments
        self.focus = 0
        self.window_open = False
        self.phase = Phase.CONVERTING

    def _reconversion_target(self) -> tuple[ReconversionTarget, str] | None:
        """What the reconversion key converts again and its reading, if the field says and the reading can be
        found and converted. Until the daemon's warm-up has built the reading index, nothing: the key must not
        wait seconds for it (the frontend would give up on the answer that deletes the text). Nothing either for
        text whose reading is too long to convert (ﷺ is 18 characters after NFKC): the text stays."""
        if (self.surrounding is None or self.reader is None or not self.reader.loaded
                or self.purpose.is_secret):
            return None
        target = reconversion_target(self.surrounding.text, self.surrounding.cursor, self.surrounding.anchor)
        if target is None:
            return None
        reading = self.reader.reading_of(target.text)
        try:
            clean_reading(reading)
        except ReadingTooLong:
            return None
        return target, reading

    def _start_reconversion(self, target: ReconversionTarget, reading: str) -> None:
        """Convert `target` again from `reading`; the Output starting it deletes it from the field."""
        # The reading is text, not keys: composed in direct mode it stays as it is (letters are not romaji).
        mode = self.composer.mode
        self.composer = self._new_composer().set_mode(InputMode.DIRECT).insert(reading).set_mode(mode)
        self.reconverted = target.text
        # The field as it is once the text is deleted: the conversion's left context is what precedes it
        # (_reconversion_target found the target in it).
        assert self.surrounding is not None
        text, cursor = self.surrounding.text, self.surrounding.cursor
        start = cursor - target.before
        self.surrounding = SurroundingText(text[:start] + text[cursor + target.after:], start, start)
        self._start_conversion(self._whole_reading_segments())

    def _cancel(self) -> str:
        """Escape or a reset: the composition goes; a reconversion puts back the text it deleted."""
        restored = self.reconverted or ""
        self._clear()
        return restored

    def _start_prediction(self) -> str:
        predictions = self.converter.predictions(self.composer.reading(), self.settings.page_size)
        if not predictions:
            return ""
        self.segments = [Segment(self.composer.reading(), predictions)]
        self.focus = 0
        self.window_open = True
        self.phase = Phase.PREDICTING
        return ""

    def _back_to_composing(self) -> None:
        self.segments = []
        self.window_open = False
        self._after_composer_change()

    def _split_whole(self) -> None:
        """Segment operations on a whole-sentence conversion first cut it into dictionary bunsetsu."""
        if len(self.segments) != 1:
            return
        split = self.converter.bunsetsu(self.segments[0].reading)
        if len(split) > 1:
            self.segments = [self._segment(reading, first) for reading, first in split]
            self.focus = 0

    def _segment(self, reading: str, first: str) -> Segment:
        """A segment whose first candidate is the dictionary's choice in context."""
        candidates = [ConversionCandidate(first, CandidateSource.DICTIONARY)] + self.converter.candidates(
            reading, self.context, self.settings.dictionary_candidates, personal=self.personal_data,
            effort=Effort.SEGMENT)
        return Segment(reading, unique_texts(candidates)[:MAX_CANDIDATES])

    def _resize_focused(self, step: int) -> None:
        """Shift+Left/Right: the focused segment loses or gains one character; what follows re-converts."""
        self._split_whole()
        reading = "".join(s.reading for s in self.segments)
        start = sum(len(s.reading) for s in self.segments[:self.focus])
        end = start + len(self.segments[self.focus].reading) + step
        if not start < end <= len(reading):
            return
        kept = self.segments[:self.focus]
        boundaries = [sum(len(s.reading) for s in kept[:i + 1]) for i in range(len(kept))] + [end]
        converted = self.converter.bunsetsu(reading, boundaries)
        if not converted:
            return
        self.segments = kept + [self._segment(span, first) for span, first in converted[len(kept):]]
        self.window_open = False

    def _transliterate_focused(self, form: Transliteration) -> None:
        segment = self._focused()
        text: str | None
        if len(self.segments) == 1:
            text = self.composer.transliterate(form)
        else:
            text = {Transliteration.HIRAGANA: to_hiragana(segment.reading),
                    Transliteration.KATAKANA: to_fullwidth_katakana(segment.reading),
                    Transliteration.HALFWIDTH_KATAKANA: to_halfwidth_katakana(segment.reading)}.get(form)
        if text is not None:
            segment.candidates.insert(0, ConversionCandidate(text, CandidateSource.KANA))
            segment.index = 0

    def _move_cursor(self, step: int) -> None:
        segment = self._focused()
        segment.index = (segment.index + step) % len(segment.candidates)

    def _choose(self) -> str:
        """A candidate was picked: the next segment gets focus, or everything commits after the last."""
        self.window_open = False
        if self.phase is Phase.CONVERTING and self.focus < len(self.segments) - 1:
            self.focus += 1
            return ""
        return self._commit_all()

    def _commit_all(self) -> str:
        private = self.private  # before _clear() forgets what was typed in secret
        if self.phase in (Phase.CONVERTING, Phase.PREDICTING):
            text = "".join(s.text for s in self.segments)
            # A prediction's reading is only the typed prefix: learning it would rank the whole
            # word first for that prefix's own conversion.
            if self.phase is Phase.CONVERTING and self.settings.learning and not private:
                problem = self.converter.learn([(s.reading, s.text) for s in self.segments])
                if problem:
                    self.notice = f"{UNKEPT_CHOICE_NOTICE}: {problem}"[:MAX_SHORT_TEXT_CHARS]  # the aux line's limit
        elif self.phase is Phase.COMPOSING:
            text = self.live_text or self.composer.reading()
        else:
            text = ""
        self._clear()
        if text and not private:
            self.committed = (self.committed + text)[-max(self.settings.context_chars, 1):]
        return text

    def _toggle_input(self) -> str:
        commit = self._commit_all()
        mode = InputMode.HIRAGANA if self.composer.mode is InputMode.DIRECT else InputMode.DIRECT
        self.composer = self.composer.set_mode(mode)
        return commit

    def _clear(self) -> None:
        self.composer = self.composer.clear()
        self.segments = []
        self.focus = 0
        self.window_open = False
        self.live_text = None
        self._live_settled = None
        self._live_improvement = None
        self.typed_in_secret = False
        self.reconverted = None
        self._pending_improvement = None
        self.phase = Phase.EMPTY

    # -- live conversion ----------------------------------------------------------------------------

    def live_conversion(self) -> str | None:
        """The top candidate for the current composition less its pending romaji, that romaji after it (今日h).
        None in secret fields: what is typed there is shown as typed and sent nowhere else. Per key, the
        dictionary and the language model decide (about 2 ms); the neural model has its say in the conversion in
        advance and when the user converts."""
        if not self.settings.live_conversion or self.phase is not Phase.COMPOSING or self.private:
            return None
        reading, pending = self.composer.settled_reading()
        if not reading:
            return None
        settled = self._live_settled
        if settled is None or (settled.reading, settled.context) != (reading, self.context):
            candidates = self.converter.candidates(reading, self.context, 1, personal=self.personal_data,
                                                   effort=Effort.KEYSTROKE)
            converted = candidates[0].text if candidates else None
            shown = None if converted is None else carried_over(converted, self._live_improvement)
            settled = self._live_settled = LiveSettled(reading, self.context, converted, shown)
        return None if settled.shown is None else settled.shown + pending

    def conversion_in_advance(self) -> Callable[[], list[ConversionCandidate]] | None:
        """Space's conversion of the composition, to run while the user pauses after a live conversion: the
        converter keeps its result, so Space finds it done (or under way). None where there is nothing to
        convert, in secret fields, whose text goes nowhere it need not, and while romaji is pending: the next key
        completes the kana (Space seldom comes first), and the live text keeps the settled part's."""
        if self.phase is not Phase.COMPOSING or self.private or self.composer.settled_reading()[1]:
            return None
        return self._whole_reading_conversion()

    def improve_live(self, candidates: list[ConversionCandidate], request_id: int = 0) -> Output | None:
        """After the conversion in advance: its first candidate (what Space will show, the model and the
        lattice search having had their say) replaces the live text, if the user is still composing and it
        differs. None when nothing changes."""
        if self.phase is not Phase.COMPOSING or not candidates or candidates[0].text == self.live_text:
            return None
        reading, pending = self.composer.settled_reading()
        if pending:  # the live text is the settled part's, already improved in the pause before the romaji
            return None
        better = candidates[0].text
        settled = self._live_settled
        converted = settled.converted if settled is not None and (settled.reading, settled.context) == (
            reading, self.context) else None
        if converted is not None:
            self._live_improvement = (converted, better)
        self._live_settled = LiveSettled(reading, self.context, converted, better)
        return self.show_live(better, request_id)

    def conversion_to_improve(self) -> PendingImprovement | None:
        """Once after Space converted the whole reading without the neural model's ranking: what may improve it,
        to be made off the key's path and given to improve_conversion."""
        pending, self._pending_improvement = self._pending_improvement, None
        return pending

    def improve_conversion(self, pending: PendingImprovement, candidates: list[ConversionCandidate],
                           request_id: int = 0) -> Output | None:
        """The model's ranking of a conversion Space answered without it, while its segment is still the only one
        and the user has neither moved from its first candidate nor opened the window: the segment's candidates
        replaced; what to show if its first one changed, else None."""
        segment = pending.segment
        if (self.phase is not Phase.CONVERTING or len(self.segments) != 1 or self.segments[0] is not segment
                or segment.index != 0 or self.window_open or not candidates):
            return None
        before = segment.text
        segment.candidates = candidates[:MAX_CANDIDATES]
        return None if segment.text == before else self._output(request_id, True)

    def show_live(self, text: str | None, request_id: int = 0) -> Output:
        self.live_text = text
        return self._output(request_id, True)

    # -- output ---------------------------------------------------------------------------------

    def _focused(self) -> Segment:
        return self.segments[self.focus]

    def _page_start(self) -> int:
        return self._focused().index // self.settings.page_size * self.settings.page_size

    def _annotation(self, candidate: ConversionCandidate) -> str:
        if not self.settings.show_source:
            return candidate.annotation
        return f"{candidate.annotation} [{candidate.source}]".lstrip()[:MAX_ANNOTATION_CHARS]

    def _output(self, request_id: int, consumed: bool, commit: str = "",
                deletion: SurroundingDeletion | None = None) -> Output:
        segments: list[PreeditSegment] = []
        window = None
        aux, self.notice = self.notice, ""
        if self.phase is Phase.COMPOSING:
            shown = self.live_text or self.composer.preedit()
            segments = [PreeditSegment(shown[:MAX_TEXT_CHARS], SegmentStyle.UNDERLINE)]
            if len(self.composer.raw()) >= MAX_READING_CHARS:
                aux = COMPOSITION_FULL_NOTICE
        elif self.phase in (Phase.CONVERTING, Phase.PREDICTING):
            if self.phase is Phase.PREDICTING:
                segments = [PreeditSegment(self.composer.preedit()[:MAX_TEXT_CHARS], SegmentStyle.UNDERLINE)]
            else:
                segments = [PreeditSegment(s.text, SegmentStyle.HIGHLIGHT if i == self.focus
                                           else SegmentStyle.UNDERLINE) for i, s in enumerate(self.segments)]
            if self.window_open:
                focused = self._focused()
                window = CandidateWindow(
                    items=tuple(CandidateItem(c.text[:MAX_CANDIDATE_CHARS], self._annotation(c))
                                for c in focused.candidates),
                    cursor=focused.index, page_size=self.settings.page_size,
                    labels=LABELS[:self.settings.page_size])
                aux = f"{focused.reading[:AUX_READING_CHARS]} {focused.index + 1}/{len(focused.candidates)}"
        cursor = sum(len(s.text) for s in segments)
        return Output(request_id=request_id, consumed=consumed, commit=commit[:MAX_TEXT_CHARS],
                      preedit=Preedit(tuple(segments), min(cursor, MAX_TEXT_CHARS)), candidates=window,
                      aux=aux, mode=self.composer.mode.value, delete_surrounding=deletion)
