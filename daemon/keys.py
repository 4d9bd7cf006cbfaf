"""X11 keysyms (what IBus and fcitx5 both send) → the named keys the session understands."""

from __future__ import annotations

from dataclasses import dataclass

from ime_protocol import COMMAND_MODIFIERS, CONTROL_MASK, RELEASE_MASK, SHIFT_MASK

# keysym → name (X11 names, as used in the configuration's key bindings)
KEYSYM_NAMES = {
    0xFF08: "BackSpace",
    0xFF09: "Tab",
    0xFF0D: "Return",
    0xFF1B: "Escape",
    0xFFFF: "Delete",
    0xFF50: "Home",
    0xFF51: "Left",
    0xFF52: "Up",
    0xFF53: "Right",
    0xFF54: "Down",
    0xFF55: "Page_Up",
    0xFF56: "Page_Down",
    0xFF57: "End",
    0xFF8D: "KP_Enter",
    0xFF21: "Kanji",
    0xFF22: "Muhenkan",
    0xFF23: "Henkan",
    0xFF24: "Romaji",
    0xFF27: "Hiragana_Katakana",
    0xFF2A: "Zenkaku_Hankaku",
    0xFF28: "Zenkaku",
    0xFF29: "Hankaku",
    0xFFBE: "F1",
    0xFFBF: "F2",
    0xFFC0: "F3",
    0xFFC1: "F4",
    0xFFC2: "F5",
    0xFFC3: "F6",
    0xFFC4: "F7",
    0xFFC5: "F8",
    0xFFC6: "F9",
    0xFFC7: "F10",
    0x0020: "space",
}
NAME_KEYSYMS = {name: keysym for keysym, name in KEYSYM_NAMES.items()}


@dataclass(frozen=True)
class Key:
    name: str  # "a", "space", "Return", … (a printable key is its character)
    shift: bool = False
    control: bool = False
    alt: bool = False

    @property
    def printable(self) -> str | None:
        """The character a plain (or shifted) printable key types, else None."""
        if len(self.name) == 1 and not (self.control or self.alt):
            return self.name
        return None


def key_from_event(keyval: int, modifiers: int) -> Key | None:
    """The key of a press event; None for releases and keys the IME never handles."""
    if modifiers & RELEASE_MASK:
        return None
    shift, control = bool(modifiers & SHIFT_MASK), bool(modifiers & CONTROL_MASK)
    alt = bool(modifiers & (COMMAND_MODIFIERS & ~CONTROL_MASK))  # Alt, Super, Hyper, Meta
    if keyval in KEYSYM_NAMES:
        return Key(KEYSYM_NAMES[keyval], shift, control, alt)
    if 0x21 <= keyval <= 0x7E:  # Latin-1 keysyms equal their code points
        return Key(chr(keyval), shift, control, alt)
    return None


# How a binding names the modifiers it needs: "ctrl+space", "shift+Henkan", "alt+grave".
_MODIFIER_PREFIXES = {"ctrl": "control", "control": "control", "shift": "shift", "alt": "alt"}


@dataclass(frozen=True)
class KeySpec:
    """A key binding. With modifiers ("ctrl+space") it matches that chord only; a plain name ("space")
    matches the key with any modifiers, and gives way to a chord that matches more exactly."""

    name: str
    control: bool = False
    shift: bool = False
    alt: bool = False

    @classmethod
    def parse(cls, text: str) -> KeySpec:
        """ValueError for an unknown key or modifier name."""
        *prefixes, name = text.split("+") if text != "+" else [text]
        modifiers = {}
        for prefix in prefixes:
            if prefix.lower() not in _MODIFIER_PREFIXES:
                raise ValueError(f"unknown modifier {prefix!r} (use ctrl, shift or alt)")
            modifiers[_MODIFIER_PREFIXES[prefix.lower()]] = True
        keyval_of(name)
        return cls(name, **modifiers)

    @property
    def is_chord(self) -> bool:
        return self.control or self.shift or self.alt

    def matches(self, key: Key) -> bool:
        if key.name != self.name:
            return False
        return not self.is_chord or (key.control, key.shift, key.alt) == (self.control, self.shift, self.alt)


def keyval_of(name: str) -> int:
    """The keysym of a key name: a named key, or a single printable ASCII character."""
    if name in NAME_KEYSYMS:
        return NAME_KEYSYMS[name]
    if len(name) == 1 and 0x20 <= ord(name) <= 0x7E:
        return ord(name)
    raise ValueError(f"unknown key name {name!r}")
