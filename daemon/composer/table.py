"""The romaji → kana rule table: Mozc's romanji-hiragana.tsv (see LICENSE.mozc), read once at import."""

from dataclasses import dataclass
from importlib.resources import files


@dataclass(frozen=True)
class Rule:
    """What a romaji sequence turns into: `output`, plus `pending` romaji that starts the next sequence
    (`tt` → っ with `t` still pending, so that `tte` → って)."""
    output: str
    pending: str = ""


class RomajiTable:
    """Exact and prefix look-ups over romaji rules; romaji is matched case-insensitively."""

    def __init__(self, rules: dict[str, Rule]):
        for romaji, rule in rules.items():
            # The keys in front of the pending part are the ones that produced the output (`tt`: the
            # first t made っ); the composer relies on that to keep the raw keys of every kana.
            if rule.pending and (rule.pending == romaji or not romaji.endswith(rule.pending)):
                raise ValueError(f"pending {rule.pending!r} of rule {romaji!r} is not a proper suffix of it")
        self._rules = rules
        self._proper_prefixes = {romaji[:end] for romaji in rules for end in range(1, len(romaji))}
        self._romaji_by_output: dict[str, list[str]] = {}
        for romaji, rule in rules.items():
            if not rule.pending:
                self._romaji_by_output.setdefault(rule.output, []).append(romaji)

    def lookup(self, romaji: str) -> Rule | None:
        return self._rules.get(romaji.lower())

    def continues(self, romaji: str) -> bool:
        """Whether some longer rule starts with `romaji`, so more keys may still change what it becomes."""
        return romaji.lower() in self._proper_prefixes

    def romanize(self, kana: str, like: str = "") -> str | None:
        """Romaji that types `kana` in one rule, or None. Among several (し: si, shi, ci) the one sharing
        the longest start with `like` wins, then the shortest: after `sha` loses its ゃ, し is `shi`."""
        candidates = self._romaji_by_output.get(kana)
        if not candidates:
            return None
        like = like.lower()
        return max(candidates, key=lambda romaji: (_common_prefix_length(romaji, like), -len(romaji)))


def _parse_rules(text: str) -> dict[str, Rule]:
    """Mozc's format: one `romaji<TAB>output[<TAB>pending]` rule a line; a later duplicate wins."""
    rules = {}
    for line in text.splitlines():
        if line:
            romaji, output, *pending = line.split("\t")
            rules[romaji] = Rule(output, *pending)
    return rules


def _common_prefix_length(a: str, b: str) -> int:
    length = 0
    while length < min(len(a), len(b)) and a[length] == b[length]:
        length += 1
    return length


# Mozc adds `/` → ・ at load time from its default symbol style (CORNER_BRACKET_MIDDLE_DOT), whose
# `[` → 「 and `]` → 」 are already in the file.
_MOZC_RULES = _parse_rules(files(__package__).joinpath("romaji-hiragana.tsv").read_text(encoding="utf-8"))
ROMAJI_TABLE = RomajiTable(_MOZC_RULES | {"/": Rule("・")})
