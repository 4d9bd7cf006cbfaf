"""What an input session takes from the configuration: key bindings resolved to actions, the romaji table, the
candidate window's and live conversion's settings. Built by the server from the daemon's Config, and again on
ReloadConfig."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, fields
from pathlib import Path

from daemon.composer import (
    MOZC_RULES,
    ROMAJI_TABLE,
    RomajiTable,
    RomajiTableError,
    SymbolStyle,
    load_rules,
    romaji_table,
)
from daemon.config import Action, InputSettings, KeyBindings
from daemon.conversion import DEFAULT_CONTEXT_CHARS
from daemon.keys import Key, KeySpec

log = logging.getLogger(__name__)


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
    return romaji_table(
        rules,
        SymbolStyle(
            punctuation=settings.punctuation, brackets=settings.brackets, slash=settings.slash, space=settings.space
        ),
    )


DEFAULT_BINDINGS = bindings_of(KeyBindings())


@dataclass(frozen=True)
class SessionSettings:
    page_size: int = 9
    dictionary_candidates: int = 20
    live_conversion: bool = False
    context_chars: int = DEFAULT_CONTEXT_CHARS
    learning: bool = True
    bindings: dict[Action, tuple[KeySpec, ...]] = field(default_factory=lambda: dict(DEFAULT_BINDINGS))
    romaji_table: RomajiTable = ROMAJI_TABLE
    show_source: bool = False  # each candidate's source beside its annotation (a debugging aid)

    def actions(self, key: Key) -> list[Action]:
        """Every action bound to `key`: those bound to its exact chord first, then those bound to its name."""
        chords = [
            action
            for action, specs in self.bindings.items()
            if any(spec.is_chord and spec.matches(key) for spec in specs)
        ]
        plain = [
            action
            for action, specs in self.bindings.items()
            if any(not spec.is_chord and spec.matches(key) for spec in specs)
        ]
        return list(dict.fromkeys(chords + plain))

    def action(self, key: Key) -> Action | None:
        found = self.actions(key)
        return found[0] if found else None
