"""The input session state machine: keys in, what to show out (pure, platform-free).

Empty → Composing → Converting → commit, plus Predicting (Tab / Down while composing). The phase is a value
carrying what is valid in it (daemon/phases.py); the session's converter (daemon/session_converter.py) makes
their segments and candidates through the `Conversion` interface; the session decides, per key, which phase
follows and what is committed. It never touches D-Bus. Positions are in code points.

Reconversion (再変換) enters Converting from Empty: the selected text (or the word before the cursor, as the
field's surrounding text says) is deleted from the field, its reading converts, and the choice is committed
in its place; cancelling puts the original text back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from daemon.composer import Composer, InputMode, Transliteration
from daemon.config import Action
from daemon.conversion import MAX_READING_CHARS, Conversion, ConversionCandidate, PersonalData, left_context
from daemon.keys import Key, key_from_event
from daemon.phases import (
    Composing,
    Converting,
    Empty,
    PendingImprovement,
    Phase,
    Predicting,
    answer,
    composition_of,
    committed_text,
    label_place,
    listed,
)
from daemon.reconversion import Reconversion, reconversion
from daemon.session_converter import Request, SessionConverter
from daemon.session_settings import SessionSettings
from ime_protocol import InputPurpose, Output, SurroundingDeletion, SurroundingText

if TYPE_CHECKING:
    from daemon.dictionary import TextReader

TRANSLITERATIONS = {
    Action.TO_HIRAGANA: Transliteration.HIRAGANA,
    Action.TO_KATAKANA: Transliteration.KATAKANA,
    Action.TO_HALFWIDTH_KATAKANA: Transliteration.HALFWIDTH_KATAKANA,
    Action.TO_FULLWIDTH_ASCII: Transliteration.FULLWIDTH_ASCII,
    Action.TO_HALFWIDTH_ASCII: Transliteration.HALFWIDTH_ASCII,
}
# Keys that move the cursor in a candidate list: a step, in candidates or (PAGE) in pages.
CANDIDATE_STEPS = {Action.NEXT_CANDIDATE: 1, Action.PREV_CANDIDATE: -1}
PAGE_STEPS = {Action.PAGE_DOWN: 1, Action.PAGE_UP: -1}


def list_step(action: Action | None, page_size: int) -> int | None:
    """How far a key's action moves the cursor in a candidate list; None for an action that does not."""
    if action in CANDIDATE_STEPS:
        return CANDIDATE_STEPS[action]
    return page_size * PAGE_STEPS[action] if action in PAGE_STEPS else None


class InputSession:
    def __init__(
        self, converter: Conversion, settings: SessionSettings | None = None, reader: TextReader | None = None
    ):
        self.converter = SessionConverter(converter)
        self.reader = reader or converter.text_reader()  # readings of written text, for reconversion
        self.settings = settings or SessionSettings()
        self.composer = Composer(table=self.settings.romaji_table)  # its mode outlives the compositions
        self.phase: Phase = Empty()
        self.purpose = InputPurpose.FREE_FORM  # the focused field's, as FocusIn said
        self.committed = ""  # recent commits of this session: left context when the app sends none
        self.notice = ""  # said once in the auxiliary line of the next answer (a choice that cannot be kept)
        self.surrounding: SurroundingText | None = None  # the field's text around the cursor, as last reported

    def handle_key(self, keyval: int, modifiers: int, request_id: int = 0, live: bool = True) -> Output:
        """The key applied, and what to show: with live conversion on, the composition's conversion (as Mozc: the
        kana never flash first), unless `live` is False: a newer key waits, whose answer will carry it."""
        consumed, commit, deletion = self._apply_key(keyval, modifiers)
        if live and isinstance(self.phase, Composing) and self.phase.live_text is None:
            self.phase.live_text = self.live_conversion()
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
        action = actions[0] if actions else None
        match self.phase:
            case Empty() if Action.INPUT_OFF in actions:
                return True, self._toggle_input(), None
            case Empty() if (
                Action.RECONVERT in actions
                and (found := reconversion(self.surrounding, self.reader, self.purpose.is_secret)) is not None
            ):
                self._start_reconversion(found)
                return True, "", found.target.deletion
            case Empty():
                return *self._key_empty(key, action), None
            case Composing() as composing:
                return *self._key_composing(composing, key, action), None
            case Converting() as converting:
                return *self._key_converting(converting, key, action), None
            case Predicting() as predicting:
                return *self._key_predicting(predicting, key, action), None

    def select_candidate(self, index: int, request_id: int = 0) -> Output:
        """A click in the candidate window: choose that candidate (index into all items)."""
        segment = listed(self.phase)
        if segment is not None and 0 <= index < len(segment.candidates):
            segment.index = index
            return self._output(request_id, True, self._choose())
        return self._output(request_id, consumed=False)

    def commit_shown(self) -> Output:
        """Focus lost or the field reset: what is shown is committed as the user sees it, and learned from."""
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
        self.converter.close()

    @property
    def context(self) -> str:
        left = self.surrounding.text[: self.surrounding.cursor] if self.surrounding is not None else self.committed
        return left_context(left, self.settings.context_chars)

    @property
    def private(self) -> bool:
        composing = composition_of(self.phase)
        return self.purpose.is_secret or (composing is not None and composing.typed_in_secret)

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

    def _key_composing(self, composing: Composing, key: Key, action: Action | None) -> tuple[bool, str]:
        if action in TRANSLITERATIONS:
            text = self.composer.transliterate(TRANSLITERATIONS[action])
            self.phase = Converting.transliterated(self.composer.reading(), text, composing)
        elif action is Action.CONVERT:
            self.phase = self.converter.convert(self.composer.reading(), self._request(), composing)
        elif action is Action.COMMIT:
            return True, self._commit_all()
        elif action is Action.CANCEL:
            return True, self._cancel()
        elif action is Action.BACKSPACE:
            self.composer = self.composer.backspace()
            self._after_composer_change(composing)
        elif action in (Action.PREDICT, Action.NEXT_CANDIDATE) and not self.private:
            self.phase = (
                self.converter.predict(self.composer.reading(), self.settings.page_size, composing) or composing
            )
        elif action is Action.TOGGLE_INPUT:
            return True, self._toggle_input()
        elif key.printable:
            return self._insert(key.printable), ""
        else:  # cursor keys and the like would move the application's caret under the preedit: swallowed
            return not (key.control or key.alt), ""
        return True, ""

    def _key_converting(self, converting: Converting, key: Key, action: Action | None) -> tuple[bool, str]:
        if action is Action.CONVERT:  # the second Space opens the window on candidate 2
            converting.focused.move_cursor(1)
            converting.window_open = True
        elif (step := list_step(action, self.settings.page_size)) is not None:
            converting.focused.move_cursor(step)
            converting.window_open = True
        elif action is Action.COMMIT:
            return True, self._commit_all()
        elif action is Action.CANCEL and converting.composing.reconverted is not None:
            return True, self._cancel()
        elif action in (Action.CANCEL, Action.BACKSPACE):
            self._after_composer_change(converting.composing)
        elif action in (Action.FOCUS_LEFT, Action.FOCUS_RIGHT):
            step = -1 if action is Action.FOCUS_LEFT else 1
            self.converter.move_focus(converting, step, key.shift, self._request())
        elif action in TRANSLITERATIONS:
            form = TRANSLITERATIONS[action]
            converting.transliterate_focused(form, self.composer.transliterate(form))
        elif converting.window_open and (place := label_place(key, self.settings.page_size)) is not None:
            return True, self._choose() if converting.focused.select_on_page(place, self.settings.page_size) else ""
        elif action is Action.TOGGLE_INPUT:
            return True, self._toggle_input()
        elif key.printable:  # typing on commits the conversion and starts a new composition
            commit = self._commit_all()
            return self._insert(key.printable), commit
        else:
            return not (key.control or key.alt), ""
        return True, ""

    def _key_predicting(self, predicting: Predicting, key: Key, action: Action | None) -> tuple[bool, str]:
        if action in (Action.PREDICT, Action.CONVERT):
            predicting.items.move_cursor(1)
        elif (step := list_step(action, self.settings.page_size)) is not None:
            predicting.items.move_cursor(step)
        elif action is Action.COMMIT:
            return True, self._commit_all()
        elif action in (Action.CANCEL, Action.BACKSPACE):
            self._after_composer_change(predicting.composing)
        elif (place := label_place(key, self.settings.page_size)) is not None:
            return True, self._choose() if predicting.items.select_on_page(place, self.settings.page_size) else ""
        elif key.printable:
            self._after_composer_change(predicting.composing)
            return self._insert(key.printable), ""
        return True, ""

    # -- transitions ----------------------------------------------------------------------------

    def _insert(self, char: str) -> bool:
        if len(self.composer.raw()) >= MAX_READING_CHARS:  # keys type ASCII: no NFKC expansion to count
            return True  # swallowed: the composition is already as long as we allow
        if not self.composer.raw():
            self.composer = self._new_composer()
        self.composer = self.composer.insert(char)
        composing = self.phase if isinstance(self.phase, Composing) else Composing()
        composing.typed_in_secret |= self.purpose.is_secret
        self._after_composer_change(composing)
        return True

    def _new_composer(self) -> Composer:
        """An empty composer on the current settings' table: a reloaded config applies from the next composition."""
        return Composer(self.composer.mode, self.settings.romaji_table)

    def _after_composer_change(self, composing: Composing) -> None:
        """Composing goes on with the composer as it is now, its live text made anew, or ends if nothing is left."""
        composing.live_text = None
        self.phase = composing if self.composer.raw() else Empty()

    def _request(self) -> Request:
        personal = PersonalData.NO_HISTORY if self.private else PersonalData.ALL
        return Request(self.context, self.settings.dictionary_candidates, personal)

    def _start_reconversion(self, found: Reconversion) -> None:
        """Convert the target again from its reading; the Output starting it deletes it from the field."""
        # The reading is text, not keys: composed in direct mode it stays as it is (letters are not romaji).
        mode = self.composer.mode
        self.composer = self._new_composer().set_mode(InputMode.DIRECT).insert(found.reading).set_mode(mode)
        self.surrounding = found.field
        self.phase = self.converter.convert(
            self.composer.reading(), self._request(), Composing(reconverted=found.target.text)
        )

    def _cancel(self) -> str:
        """Escape or a reset: the composition goes; a reconversion puts back the text it deleted."""
        composing = composition_of(self.phase)
        restored = (composing.reconverted if composing is not None else None) or ""
        self._clear()
        return restored

    def _choose(self) -> str:
        """A candidate was picked: the next segment gets focus, or everything commits after the last."""
        if isinstance(self.phase, Converting) and not self.phase.choose():
            return ""
        return self._commit_all()

    def _commit_all(self) -> str:
        private = self.private  # before _clear() forgets what was typed in secret
        text = committed_text(self.phase, self.composer)
        # Conversions are learned; not predictions: a prediction's reading is only the typed prefix, and
        # learning it would rank the whole word first for that prefix's own conversion.
        if isinstance(self.phase, Converting) and self.settings.learning and not private:
            self.notice = self.converter.learn(self.phase)
        self._clear()
        if text and not private:
            self.committed = (self.committed + text)[-max(self.settings.context_chars, 1) :]
        return text

    def _toggle_input(self) -> str:
        commit = self._commit_all()
        mode = InputMode.HIRAGANA if self.composer.mode is InputMode.DIRECT else InputMode.DIRECT
        self.composer = self.composer.set_mode(mode)
        return commit

    def _clear(self) -> None:
        self.composer = self.composer.clear()
        self.phase = Empty()

    # -- live conversion ----------------------------------------------------------------------------

    def live_conversion(self) -> str | None:
        """The top candidate for the current composition less its pending romaji, that romaji after it (今日h).
        None in secret fields: what is typed there is shown as typed and sent nowhere else."""
        composing = self.phase
        if not self.settings.live_conversion or not isinstance(composing, Composing) or self.private:
            return None
        reading, pending = self.composer.settled_reading()
        if not reading:
            return None
        request = self._request()
        shown = composing.settled_live(reading, request.context, lambda: self.converter.live(reading, request))
        return None if shown is None else shown + pending

    def conversion_in_advance(self) -> Callable[[], list[ConversionCandidate]] | None:
        """Space's conversion, to run while the user pauses: the converter keeps its result, so Space finds it done
        (or under way). None in secret fields, whose text goes nowhere it need not, and while romaji is pending:
        the next key completes the kana (Space seldom comes first), and the live text keeps the settled part's."""
        if not isinstance(self.phase, Composing) or self.private or self.composer.settled_reading()[1]:
            return None
        return self.converter.whole_conversion(self.composer.reading(), self._request())

    def improve_live(self, candidates: list[ConversionCandidate], request_id: int = 0) -> Output | None:
        """After the conversion in advance, the live text it improves (Composing.improve), if the user is still
        composing; None when nothing changes."""
        # With romaji pending, the live text is the settled part's, already improved in the pause before it.
        reading, pending = self.composer.settled_reading()
        composing = self.phase
        if not isinstance(composing, Composing) or pending or not composing.improve(reading, self.context, candidates):
            return None
        return self._output(request_id, True)

    def conversion_to_improve(self) -> PendingImprovement | None:
        """Once after a Space that did not wait for the neural model: its ranking to make, for improve_conversion."""
        return self.phase.take_pending_improvement() if isinstance(self.phase, Converting) else None

    def improve_conversion(
        self, pending: PendingImprovement, candidates: list[ConversionCandidate], request_id: int = 0
    ) -> Output | None:
        """The model's ranking of a conversion Space answered without it (Converting.improve): what to show if the
        first candidate changed, else None."""
        changed = isinstance(self.phase, Converting) and self.phase.improve(pending, candidates)
        return self._output(request_id, True) if changed else None

    # -- output ---------------------------------------------------------------------------------

    def _output(
        self, request_id: int, consumed: bool, commit: str = "", deletion: SurroundingDeletion | None = None
    ) -> Output:
        notice, self.notice = self.notice, ""
        return answer(self.phase, self.composer, self.settings, notice, request_id, consumed, commit, deletion)
