"""The romaji → kana rule table: Mozc's romanji-hiragana.tsv (see LICENSE.mozc), or the user's own table in
the same format, with the symbol keys (, . [ ] / and Space) typing the configured symbol style."""

from dataclasses import dataclass
from enum import StrEnum
from importlib.resources import files
from pathlib import Path

MAX_TABLE_BYTES = 1 << 20  # far above any real table (Mozc's is 3 KB); stops a mistyped path to a huge file


@dataclass(frozen=True)
class Rule:
    """What a romaji sequence turns into: `output`, plus `pending` romaji that starts the next sequence
    (`tt` → っ with `t` still pending, so that `tte` → って)."""

    output: str
    pending: str = ""


class RomajiTableError(ValueError):
    """A romaji table file that cannot be used; the message says where and why."""


class Punctuation(StrEnum):
    """What , and . type (Mozc's punctuation styles)."""

    TOUTEN_KUTEN = "、。"
    COMMA_PERIOD = "，．"
    COMMA_KUTEN = "，。"
    TOUTEN_PERIOD = "、．"


class Brackets(StrEnum):
    """What [ and ] type."""

    CORNER = "「」"
    SQUARE = "［］"


class Slash(StrEnum):
    """What / types."""

    MIDDLE_DOT = "・"
    SLASH = "／"


class SpaceWidth(StrEnum):
    """What Space types in the kana modes."""

    FULL = "full"
    HALF = "half"


@dataclass(frozen=True)
class SymbolStyle:
    """The symbols the punctuation keys type; the defaults are Mozc's."""

    punctuation: Punctuation = Punctuation.TOUTEN_KUTEN
    brackets: Brackets = Brackets.CORNER
    slash: Slash = Slash.MIDDLE_DOT
    space: SpaceWidth = SpaceWidth.FULL

    def rules(self) -> dict[str, Rule]:
        comma, period = self.punctuation.value
        opening, closing = self.brackets.value
        space = "\u3000" if self.space is SpaceWidth.FULL else " "
        return {
            ",": Rule(comma),
            ".": Rule(period),
            "[": Rule(opening),
            "]": Rule(closing),
            "/": Rule(self.slash.value),
            " ": Rule(space),
        }


def with_symbol_style(rules: dict[str, Rule], style: SymbolStyle) -> dict[str, Rule]:
    """`rules` with the symbol keys typing `style`, as Mozc does: a key the table leaves out, or maps to
    the default style's symbol, gets the style's; a table that maps it to something else keeps its own."""
    defaults = SymbolStyle().rules()
    styled = dict(rules)
    for key, rule in style.rules().items():
        if rules.get(key, defaults[key]) == defaults[key]:
            styled[key] = rule
    return styled


class RomajiTable:
    """Exact and prefix look-ups over romaji rules. As in Mozc, romaji is matched case-insensitively
    unless some rule's input has a capital letter."""

    def __init__(self, rules: dict[str, Rule]):
        for romaji, rule in rules.items():
            problem = rule_problem(romaji, rule)
            if problem:
                raise ValueError(f"rule {romaji!r}: {problem}")
        self._case_sensitive = any("A" <= char <= "Z" for romaji in rules for char in romaji)
        self._rules = {self._key(romaji): rule for romaji, rule in rules.items()}
        self._proper_prefixes = {romaji[:end] for romaji in self._rules for end in range(1, len(romaji))}
        self._romaji_by_output: dict[str, list[str]] = {}
        for romaji, rule in self._rules.items():
            if not rule.pending:
                self._romaji_by_output.setdefault(rule.output, []).append(romaji)

    def _key(self, romaji: str) -> str:
        return romaji if self._case_sensitive else romaji.lower()

    def lookup(self, romaji: str) -> Rule | None:
        return self._rules.get(self._key(romaji))

    def continues(self, romaji: str) -> bool:
        """Whether some longer rule starts with `romaji`, so more keys may still change what it becomes."""
        return self._key(romaji) in self._proper_prefixes

    def romanize(self, kana: str, like: str = "") -> str | None:
        """Romaji that types `kana` in one rule, or None. Among several (し: si, shi, ci) the one sharing
        the longest start with `like` wins, then the shortest: after `sha` loses its ゃ, し is `shi`."""
        candidates = self._romaji_by_output.get(kana)
        if not candidates:
            return None
        like = self._key(like)
        return max(candidates, key=lambda romaji: (_common_prefix_length(romaji, like), -len(romaji)))


def rule_problem(romaji: str, rule: Rule) -> str | None:
    """Why the composer cannot run `rule`, or None. The keys in front of the pending part must be the
    ones that made the output (`tt`: the first t made っ): the composer keeps the raw keys of every kana
    that way. So pending romaji is always the rule's own last keys, as in all of Mozc's romaji rules."""
    if not romaji:
        return "the input is empty"
    if rule.pending and (rule.pending == romaji or not romaji.endswith(rule.pending)):
        return f"pending {rule.pending!r} is not a proper end of the input"
    return None


def parse_rules(text: str) -> dict[str, Rule]:
    """Mozc's format: one `input<TAB>output[<TAB>pending]` rule a line; a later duplicate wins. A line that
    is not a rule is a comment if it starts with #; anything else raises RomajiTableError naming it."""
    rules = {}
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.split("\t")
        if not line or (len(fields) < 2 and line.startswith("#")):
            continue
        if not 2 <= len(fields) <= 4:
            raise RomajiTableError(f"line {number}: expected input<TAB>output[<TAB>pending], got {line!r}")
        # Mozc's 4th column holds attributes for its mobile keyboards; an empty one is what tables saved
        # with trailing tabs have.
        if len(fields) == 4 and fields[3]:
            raise RomajiTableError(f"line {number}: attributes ({fields[3]}) are not supported")
        rule = Rule(fields[1], fields[2] if len(fields) > 2 else "")
        problem = rule_problem(fields[0], rule)
        if problem:
            raise RomajiTableError(f"line {number}: {problem}")
        rules[fields[0]] = rule
    return rules


def load_rules(path: Path) -> dict[str, Rule]:
    """The rules of a romaji table file (Mozc's format); RomajiTableError says why it cannot be used (the
    caller names the file)."""
    try:
        if path.exists() and not path.is_file():  # a directory, or a pipe that would block the daemon
            raise RomajiTableError("not a regular file")
        with path.open("rb") as file:
            data = file.read(MAX_TABLE_BYTES + 1)
    except OSError as error:
        raise RomajiTableError(f"cannot read it: {error.strerror or error}") from None
    if len(data) > MAX_TABLE_BYTES:
        raise RomajiTableError(f"larger than {MAX_TABLE_BYTES} bytes, not a romaji table")
    try:
        text = data.decode("utf-8-sig")  # tolerate the BOM some editors write
    except UnicodeDecodeError as error:
        raise RomajiTableError(f"not UTF-8: {error}") from None
    rules = parse_rules(text)
    if not rules:
        raise RomajiTableError("no rules in it")
    return rules


def _common_prefix_length(a: str, b: str) -> int:
    length = 0
    while length < min(len(a), len(b)) and a[length] == b[length]:
        length += 1
    return length


def romaji_table(rules: dict[str, Rule], style: SymbolStyle) -> RomajiTable:
    """The table that `rules` make with `style`'s symbols."""
    return RomajiTable(with_symbol_style(rules, style))


MOZC_RULES = parse_rules(files(__package__).joinpath("romaji-hiragana.tsv").read_text(encoding="utf-8"))
ROMAJI_TABLE = romaji_table(MOZC_RULES, SymbolStyle())
