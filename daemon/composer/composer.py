"""Romaji composition: keys in; preedit, reading and raw keys out. Immutable: every edit returns a new
Composer, so callers can keep, compare and undo states freely."""

from dataclasses import dataclass, field, replace
from enum import Enum

from daemon.forms import (
    to_fullwidth_ascii,
    to_fullwidth_hiragana,
    to_fullwidth_katakana,
    to_halfwidth_ascii,
    to_halfwidth_katakana,
)
from daemon.composer.table import ROMAJI_TABLE, RomajiTable, Rule
from daemon.kana import to_katakana


class InputMode(Enum):
    HIRAGANA = "hiragana"
    KATAKANA = "katakana"
    HALFWIDTH_KATAKANA = "halfwidth_katakana"
    FULLWIDTH_ASCII = "fullwidth_ascii"
    DIRECT = "direct"  # keys are kept untouched; the engine normally hands them straight to the application

    @property
    def composes_romaji(self) -> bool:
        return self in (InputMode.HIRAGANA, InputMode.KATAKANA, InputMode.HALFWIDTH_KATAKANA)


class Transliteration(Enum):
    """The forms the whole composition can be turned into, by function key."""

    HIRAGANA = "F6"
    KATAKANA = "F7"
    HALFWIDTH_KATAKANA = "F8"
    FULLWIDTH_ASCII = "F9"  # the keys as typed
    HALFWIDTH_ASCII = "F10"  # the keys as typed


def _unchanged(text: str) -> str:
    return text


# How a chunk's text shows in the mode it was typed in.
_RENDER = {
    InputMode.HIRAGANA: _unchanged,
    InputMode.KATAKANA: to_katakana,
    InputMode.HALFWIDTH_KATAKANA: to_halfwidth_katakana,
    InputMode.FULLWIDTH_ASCII: to_fullwidth_ascii,
    InputMode.DIRECT: _unchanged,
}


@dataclass(frozen=True)
class _Chunk:
    """Keys typed in one mode that make one piece of text (a kana, っ from `tt`, a symbol).

    `text` is what they became, mode aside: the table's output (hiragana) or a full-width symbol in the
    romaji modes, the key itself in the others. It is None while the romaji is unfinished (`ky`): the
    chunk then shows as typed, and the next key may still complete it."""

    raw: str
    text: str | None
    mode: InputMode

    def shown(self) -> str:
        return self.raw if self.text is None else _RENDER[self.mode](self.text)

    def read(self, table: RomajiTable) -> str:
        """As conversion reads it: unfinished romaji that is a rule by itself (a lone `n`) is applied."""
        rule = table.lookup(self.raw) if self.text is None else None
        if rule is None:
            return self.shown()
        return "".join(chunk.shown() for chunk in _apply(rule, self.raw, self.mode))

    def shortened(self, table: RomajiTable) -> tuple["_Chunk", ...]:
        """The chunk less its last letter or kana (none if nothing is left). A kana left from a longer
        output gets the romaji that types it alone, so the raw keys still match the text (きゃ → き: ki)."""
        if self.text is None:
            rest = self.raw[:-1]
            return (replace(self, raw=rest),) if rest else ()
        rest = self.text[:-1]
        if not rest:
            return ()
        return (replace(self, raw=table.romanize(rest, like=self.raw) or rest, text=rest),)


def _apply(rule: Rule, romaji: str, mode: InputMode) -> tuple[_Chunk, ...]:
    """`romaji` matched `rule`: a chunk for the keys that made its output, then one for the pending keys
    (`tt` → っ from the first t, the second t left to start the next kana)."""
    made = len(romaji) - len(rule.pending)
    done = _Chunk(romaji[:made], rule.output, mode)
    return (done, _Chunk(romaji[made:], None, mode)) if rule.pending else (done,)


def _compose(table: RomajiTable, romaji: str, mode: InputMode) -> tuple[_Chunk, ...] | None:
    """Chunks for `romaji` typed as one sequence, or None where no rule matches or starts with it.
    A rule that longer ones start with (`n`) waits: the next key decides."""
    if table.continues(romaji):
        return (_Chunk(romaji, None, mode),)
    rule = table.lookup(romaji)
    return None if rule is None else _apply(rule, romaji, mode)


@dataclass(frozen=True)
class Composer:
    """The text being composed, as chunks of typed keys. Keys are appended at the end; there is no cursor.
    `table` says what keys type in the romaji modes: Mozc's table and symbols unless configured."""

    mode: InputMode = InputMode.HIRAGANA
    table: RomajiTable = field(default=ROMAJI_TABLE, repr=False)
    _chunks: tuple[_Chunk, ...] = field(default=(), repr=False)

    def insert(self, keys: str) -> "Composer":
        composer = self
        for key in keys:
            composer = composer._insert_key(key)
        return composer

    def _insert_key(self, key: str) -> "Composer":
        if not self.mode.composes_romaji:
            return self._with(self._chunks + (_Chunk(key, key, self.mode),))
        chunks = self._chunks
        last = chunks[-1] if chunks else None
        # Like Mozc, a mode switch starts a new chunk: the key only completes romaji typed in its own mode.
        if last is not None and last.text is None and last.mode is self.mode:
            grown = _compose(self.table, last.raw + key, self.mode)
            if grown is not None:
                return self._with(chunks[:-1] + grown)
            rule = self.table.lookup(last.raw)
            if rule is not None:  # `n` followed by a key no rule continues it with: ん
                return self._with(chunks[:-1] + _apply(rule, last.raw, self.mode))._insert_key(key)
            # Otherwise it stays as typed (`kt` shows kt), and grows again once what follows is deleted.
        new = _compose(self.table, key, self.mode) or (_Chunk(key, to_fullwidth_ascii(key), self.mode),)
        return self._with(chunks + new)

    def backspace(self) -> "Composer":
        """Remove the last pending letter or the last kana."""
        if not self._chunks:
            return self
        return self._with(self._chunks[:-1] + self._chunks[-1].shortened(self.table))

    def clear(self) -> "Composer":
        return self._with(())

    def space(self) -> str:
        """What Space types by itself in the current mode (with nothing composed, it is committed at once):
        the table's space in the kana modes, full-width unless configured, and U+3000 in full-width ASCII."""
        return self.clear().insert(" ").preedit()

    def set_mode(self, mode: InputMode) -> "Composer":
        """Keys typed from now on use `mode`; what is composed already keeps the mode it was typed in."""
        return replace(self, mode=mode)

    def preedit(self) -> str:
        """What to display: kana so far, unfinished romaji as typed (`kyouky` → きょうky)."""
        return "".join(chunk.shown() for chunk in self._chunks)

    def reading(self) -> str:
        """What conversion uses: the preedit with a trailing lone `n` read as ん, other romaji as typed."""
        return "".join(chunk.read(self.table) for chunk in self._chunks)

    def settled_reading(self) -> tuple[str, str]:
        """(reading, pending): the reading of the composition less a trailing unfinished romaji, and that romaji
        as typed (`きょうh` → きょう, h). Live conversion converts the first and shows the second after it: the
        next key completes the kana, so converting `h` now would only change the text before it. A trailing lone
        `n` is read as ん, as in `reading()`, so nothing is pending then."""
        last = self._chunks[-1] if self._chunks else None
        if last is None or last.text is not None or last.read(self.table) != last.shown():
            return self.reading(), ""
        return "".join(chunk.read(self.table) for chunk in self._chunks[:-1]), last.shown()

    def raw(self) -> str:
        """The keys behind the composition, as typed."""
        return "".join(chunk.raw for chunk in self._chunks)

    def transliterate(self, form: Transliteration) -> str:
        match form:
            case Transliteration.HIRAGANA:
                return to_fullwidth_hiragana(self.reading())
            case Transliteration.KATAKANA:
                return to_fullwidth_katakana(self.reading())
            case Transliteration.HALFWIDTH_KATAKANA:
                return to_halfwidth_katakana(self.reading())
            case Transliteration.FULLWIDTH_ASCII:
                return to_fullwidth_ascii(self.raw())
            case Transliteration.HALFWIDTH_ASCII:
                return to_halfwidth_ascii(self.raw())

    def _with(self, chunks: tuple[_Chunk, ...]) -> "Composer":
        return replace(self, _chunks=chunks)


def romaji_to_kana(keys: str) -> str:
    """The kana conversion would use for `keys` typed in hiragana mode (`kanji` → かんじ, `kak` → かk)."""
    return Composer().insert(keys).reading()
