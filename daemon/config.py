"""The user's configuration: $XDG_CONFIG_HOME/tsuzuri/config.toml, checked setting by setting.

The dataclasses below are the schema. Each field carries its type, default, comment and (for
integers) its range; SCHEMA flattens them into one table keyed by the dotted name used in the
file ("candidates.page_size"), and that one table both validates a file and renders the
commented default file written on first run.

A value that fails its check is reported and the previous value kept, so one typo never resets
or breaks the other settings; a file that is not TOML at all keeps the whole previous configuration.
"""

import difflib
import re
import tomllib
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields, is_dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, NewType

from daemon.composer import Brackets, Punctuation, RomajiTableError, Slash, SpaceWidth, load_rules
from daemon.conversion import DEFAULT_CONTEXT_CHARS, MAX_CONTEXT_CHARS
from daemon.engine.beam import DEFAULT_BEAM_WIDTH
from daemon.keys import NAME_KEYSYMS, KeySpec
from daemon.paths import APP_DIRECTORY, xdg_base_dir
from daemon.spelling import Spelling
from daemon.userdata.storage import atomic_write_bytes

CONFIG_FILE_NAME = "config.toml"

KeyNames = tuple[str, ...]
TablePath = NewType("TablePath", str)  # a romaji table file: absolute or ~/...; "" for the built-in table

_FILE_HEADER = """\
# Tsuzuri configuration, written with the default values on first run.
# A value that is not valid is reported in the daemon's log and its previous setting is kept.
"""


def _setting(default: Any, comment: str, *, bounds: tuple[int, int] | None = None) -> Any:
    """A schema entry: a dataclass field whose metadata holds its comment and integer range."""
    return field(default=default, metadata={"comment": comment, "bounds": bounds})


@dataclass(frozen=True)
class CandidateSettings:
    """Candidate lists."""

    page_size: int = _setting(9, "Candidates shown per page of the candidate window", bounds=(1, 9))
    beam_width: int = _setting(
        DEFAULT_BEAM_WIDTH,
        "Beam width of the model's search for its own conversions "
        "(with model_candidates of 2 or more): wider finds more but "
        "takes longer",
        bounds=(1, 16),
    )
    model_candidates: int = _setting(
        0,
        "How many of the model's own conversions to offer besides the dictionary's it reranks (0: rerank only)",
        bounds=(0, 16),
    )
    show_source: bool = _setting(
        False,
        "Show beside each candidate where it came from (learning, user, model, "
        "dictionary, kana, rewriter): to find out why it is where it is",
    )


@dataclass(frozen=True)
class ConversionSettings:
    """Conversion."""

    live: bool = _setting(False, "Live conversion: show the top candidate while typing")
    context_chars: int = _setting(
        DEFAULT_CONTEXT_CHARS,
        "Characters of text before the cursor that conversion takes as context (what the "
        "document already writes counts from all of them; the neural model reads the last ten)",
        bounds=(0, MAX_CONTEXT_CHARS),
    )
    learning: bool = _setting(True, "Learn from committed conversions and rank them first next time")
    spelling: Spelling = _setting(
        Spelling.RANKED,
        'Auxiliary words in kana or kanji: "ranked" as the ranking chooses (て下さい or てください, as the text it '
        'learned from writes them); "official" in kana where the rules for official documents ask for it '
        "(…てください, こと, とき, できる, など)",
    )
    neural_model: bool = _setting(
        True,
        "Use the neural conversion model (the model setting); off: the dictionary "
        "and the language model alone, and the model's memory is freed",
    )


@dataclass(frozen=True)
class InputSettings:
    """Typing: the romaji table and what the symbol keys type in the kana modes."""

    romaji_table: TablePath = _setting(
        TablePath(""),
        'Romaji table to type with instead of Mozc\'s (""): an '
        "absolute or ~/ path to a file in Mozc's format, one "
        "input<TAB>output[<TAB>pending] rule a line, as AZIK "
        "tables are",
    )
    punctuation: Punctuation = _setting(Punctuation.TOUTEN_KUTEN, "What the , and . keys type")
    brackets: Brackets = _setting(Brackets.CORNER, "What the [ and ] keys type")
    slash: Slash = _setting(Slash.MIDDLE_DOT, "What the / key types")
    space: SpaceWidth = _setting(SpaceWidth.FULL, "Space in the kana modes: full-width (U+3000) or half-width")


class Action(StrEnum):
    """What a key does: one per field of KeyBindings, named as in the file's [keys] table."""

    CONVERT = "convert"
    RECONVERT = "reconvert"
    COMMIT = "commit"
    CANCEL = "cancel"
    BACKSPACE = "backspace"
    NEXT_CANDIDATE = "next_candidate"
    PREV_CANDIDATE = "prev_candidate"
    PAGE_DOWN = "page_down"
    PAGE_UP = "page_up"
    PREDICT = "predict"
    FOCUS_LEFT = "focus_left"
    FOCUS_RIGHT = "focus_right"
    TOGGLE_INPUT = "toggle_input"
    INPUT_ON = "input_on"
    INPUT_OFF = "input_off"
    TO_HIRAGANA = "to_hiragana"
    TO_KATAKANA = "to_katakana"
    TO_HALFWIDTH_KATAKANA = "to_halfwidth_katakana"
    TO_FULLWIDTH_ASCII = "to_fullwidth_ascii"
    TO_HALFWIDTH_ASCII = "to_halfwidth_ascii"


@dataclass(frozen=True)
class KeyBindings:
    """Key bindings: lists of X11 key names (space, Return, Henkan, Page_Down, F7, ...) or single
    characters, each optionally with modifiers (ctrl+space). An empty list [] leaves an action without a key."""

    convert: KeyNames = _setting(("space", "Henkan"), "Convert the reading")
    reconvert: KeyNames = _setting(
        ("Henkan",),
        "Convert again the selected text, or the word before the cursor, when nothing is being typed (再変換)",
    )
    commit: KeyNames = _setting(("Return", "KP_Enter"), "Commit the preedit")
    cancel: KeyNames = _setting(("Escape",), "Cancel the conversion, or clear the reading")
    backspace: KeyNames = _setting(("BackSpace",), "Delete the character before the cursor")
    next_candidate: KeyNames = _setting(("Down",), "Select the next candidate")
    prev_candidate: KeyNames = _setting(("Up",), "Select the previous candidate")
    page_down: KeyNames = _setting(("Page_Down",), "Show the next page of candidates")
    page_up: KeyNames = _setting(("Page_Up",), "Show the previous page of candidates")
    predict: KeyNames = _setting(("Tab",), "Show predictions that complete the reading")
    focus_left: KeyNames = _setting(("Left",), "Move to the segment on the left")
    focus_right: KeyNames = _setting(("Right",), "Move to the segment on the right")
    toggle_input: KeyNames = _setting(("Zenkaku_Hankaku", "Kanji", "ctrl+space"), "Switch Japanese input on or off")
    input_on: KeyNames = _setting(("Henkan",), "Switch Japanese input on (when it is off)")
    input_off: KeyNames = _setting(("Muhenkan",), "Switch Japanese input off (when nothing is being typed)")
    to_hiragana: KeyNames = _setting(("F6",), "Turn the reading (or the focused segment) into hiragana")
    to_katakana: KeyNames = _setting(("F7",), "Turn the reading (or the focused segment) into katakana")
    to_halfwidth_katakana: KeyNames = _setting(
        ("F8",), "Turn the reading (or the focused segment) into half-width katakana"
    )
    to_fullwidth_ascii: KeyNames = _setting(("F9",), "Turn the reading into the typed letters, full-width")
    to_halfwidth_ascii: KeyNames = _setting(("F10",), "Turn the reading into the typed letters (ASCII)")


@dataclass(frozen=True)
class Config:
    model: str = _setting("default", "Conversion model: a registered name (`tsuzuri-model list`) or a GGUF file path")
    threads: int = _setting(2, "CPU threads the model may use", bounds=(1, 16))
    candidates: CandidateSettings = field(default_factory=CandidateSettings)
    conversion: ConversionSettings = field(default_factory=ConversionSettings)
    input: InputSettings = field(default_factory=InputSettings)
    keys: KeyBindings = field(default_factory=KeyBindings)


@dataclass(frozen=True)
class Setting:
    key: str  # as written in the file: "threads", "candidates.page_size"
    kind: Any  # the field's annotation: int, bool, str, KeyNames, TablePath or a StrEnum of choices
    default: Any
    comment: str
    bounds: tuple[int, int] | None


def _schema_fields(owner: type, prefix: str = "") -> Iterator[Setting]:
    hints = typing.get_type_hints(owner)
    for entry in fields(owner):
        kind = hints[entry.name]
        if isinstance(kind, type) and is_dataclass(kind):
            yield from _schema_fields(kind, f"{prefix}{entry.name}.")
        else:
            yield Setting(prefix + entry.name, kind, entry.default, entry.metadata["comment"], entry.metadata["bounds"])


SCHEMA: dict[str, Setting] = {setting.key: setting for setting in _schema_fields(Config)}
SECTIONS: dict[str, type] = {
    name: kind for name, kind in typing.get_type_hints(Config).items() if isinstance(kind, type) and is_dataclass(kind)
}


# -- validation -----------------------------------------------------------------------------------


def _check_int(setting: Setting, value: Any) -> int:
    assert setting.bounds is not None  # every int setting declares its bounds
    low, high = setting.bounds
    # TOML's true is a bool, which Python counts as an int: refuse it explicitly.
    if type(value) is not int or not low <= value <= high:
        raise ValueError(f"expected an integer from {low} to {high}")
    return value


def _check_bool(setting: Setting, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("expected true or false")
    return value


def _check_text(setting: Setting, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError("expected a non-empty string")
    if any(char < " " or char == "\x7f" for char in value):
        raise ValueError("control characters are not allowed")
    return value


def _check_key_names(setting: Setting, value: Any) -> KeyNames:
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise ValueError('expected a list of key names, like ["space", "Henkan"]')
    for name in value:
        try:
            KeySpec.parse(name)
        except ValueError as error:
            key = name.split("+")[-1] or name
            if key in NAME_KEYSYMS or len(key) == 1:
                raise ValueError(f"{_toml_value(name)}: {error}") from None  # the modifier is wrong
            close = difflib.get_close_matches(key, NAME_KEYSYMS, n=1)
            hint = f" (did you mean {_toml_value(close[0])}?)" if close else ""
            raise ValueError(f"unknown key name {_toml_value(key)}{hint}") from None
    return tuple(value)


def _check_table_path(setting: Setting, value: Any) -> TablePath:
    if not isinstance(value, str):
        raise ValueError('expected a file path, or "" for the built-in table')
    if not value:
        return TablePath(value)
    _check_text(setting, value)
    path = Path(value).expanduser()
    if not path.is_absolute():  # the daemon's working directory is nothing the user chose
        raise ValueError("expected an absolute path, or one starting with ~/")
    try:
        load_rules(path)  # so that a table that cannot be used is reported now, with the reason
    except RomajiTableError as error:
        raise ValueError(f"not a usable romaji table: {error}") from None
    return TablePath(value)


def _is_choice(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, StrEnum)


def _check_choice(setting: Setting, value: Any) -> StrEnum:
    choices = [member.value for member in setting.kind]
    if value not in choices:
        raise ValueError(f"expected one of {', '.join(map(_toml_value, choices))}")
    return setting.kind(value)


_CHECKS: dict[Any, Callable[[Setting, Any], Any]] = {
    int: _check_int,
    bool: _check_bool,
    str: _check_text,
    KeyNames: _check_key_names,
    TablePath: _check_table_path,
}


def check_value(setting: Setting, value: Any) -> Any:
    """The value to store for `setting` (lists become tuples); ValueError says what is wrong."""
    check = _check_choice if _is_choice(setting.kind) else _CHECKS[setting.kind]
    return check(setting, value)


def _flatten(config: Config) -> dict[str, Any]:
    values = {}
    for key in SCHEMA:
        value: Any = config
        for part in key.split("."):
            value = getattr(value, part)
        values[key] = value
    return values


def _build(values: dict[str, Any], owner: type = Config, prefix: str = "") -> Any:
    hints = typing.get_type_hints(owner)
    return owner(
        **{
            entry.name: (
                _build(values, hints[entry.name], f"{prefix}{entry.name}.")
                if is_dataclass(hints[entry.name])
                else values[prefix + entry.name]
            )
            for entry in fields(owner)
        }
    )


def _apply_setting(
    key: str, value: Any, values: dict[str, Any], old_values: dict[str, Any], problems: list[str]
) -> None:
    setting = SCHEMA.get(key)
    if setting is None:
        problems.append(
            f"unknown section [{key}], ignored" if isinstance(value, dict) else f"unknown setting {key!r}, ignored"
        )
        return
    try:
        values[key] = check_value(setting, value)
    except ValueError as exc:
        values[key] = old_values[key]
        problems.append(f"{key} = {_toml_value(value)}: {exc}; keeping {_toml_value(old_values[key])}")


def parse_config(text: str, previous: Config | None = None) -> tuple[Config, list[str]]:
    """The configuration that `text` describes, and what is wrong with it.

    A setting missing from `text` takes its default; a bad value keeps its `previous` value
    (the defaults when None); broken TOML keeps all of `previous`.
    """
    previous = previous or Config()
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return previous, [f"not valid TOML, keeping the previous configuration: {exc}"]
    old_values = _flatten(previous)
    values = _flatten(Config())
    problems: list[str] = []
    for name, value in document.items():
        if name not in SECTIONS:
            _apply_setting(name, value, values, old_values, problems)
        elif isinstance(value, dict):
            for inner_name, inner_value in value.items():
                _apply_setting(f"{name}.{inner_name}", inner_value, values, old_values, problems)
        else:
            problems.append(
                f"{name} = {_toml_value(value)}: expected a [{name}] table; keeping the previous [{name}] settings"
            )
            values.update((key, old) for key, old in old_values.items() if key.startswith(f"{name}."))
    return _build(values), problems


# -- rendering ------------------------------------------------------------------------------------


def _toml_value(value: Any) -> str:
    """TOML for the setting types; also how problem messages quote whatever a file contained."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + "".join(map(_escape_char, value)) + '"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(map(_toml_value, value)) + "]"
    return str(value)


def _escape_char(char: str) -> str:
    if char in '"\\':
        return "\\" + char
    if char < " " or char == "\x7f":  # TOML strings may not hold control characters raw
        return f"\\u{ord(char):04x}"
    return char


def _comment(setting: Setting) -> str:
    limits = f"{setting.bounds[0]} to {setting.bounds[1]}, " if setting.bounds else ""
    if _is_choice(setting.kind):
        limits = " or ".join(_toml_value(member.value) for member in setting.kind) + ", "
    return f"# {setting.comment} ({limits}default: {_toml_value(setting.default)})"


def render_config(config: Config | None = None) -> str:
    """`config` (the defaults when None) as a commented TOML file that parses back to it."""
    values = _flatten(config or Config())
    lines = [_FILE_HEADER.rstrip("\n")]
    current_section = ""
    # TOML puts top-level keys before the first table, whatever the dataclass field order.
    for key, setting in sorted(SCHEMA.items(), key=lambda item: "." in item[0]):
        section, _, name = key.rpartition(".")
        if section != current_section:
            doc_lines = (SECTIONS[section].__doc__ or "").split("\n")
            lines += ["", "", *(f"# {line.strip()}" for line in doc_lines), f"[{section}]"]
            current_section = section
        lines += ["", _comment(setting), f"{name} = {_toml_value(values[key])}"]
    return "\n".join(lines) + "\n"


# -- changes from a settings page ------------------------------------------------------------------


def setting_literals(config: Config) -> dict[str, str]:
    """Every setting of `config` as the TOML literal the file would hold, by dotted name."""
    return {key: _toml_value(value) for key, value in _flatten(config).items()}


def parse_changes(literals: dict[str, str]) -> dict[str, Any]:
    """The checked values of settings given as TOML literals ({"conversion.live": "true"}); ValueError says
    which one is wrong and why."""
    changes = {}
    for key, literal in literals.items():
        setting = SCHEMA.get(key)
        if setting is None:
            raise ValueError(f"unknown setting {key!r}")
        try:
            value = tomllib.loads(f"value = {literal}")["value"]
            changes[key] = check_value(setting, value)
        except (tomllib.TOMLDecodeError, KeyError):
            raise ValueError(f"{key} = {literal}: not a TOML value") from None
        except ValueError as error:
            raise ValueError(f"{key} = {literal}: {error}") from None
    return changes


_SECTION_HEADER = re.compile(r"\s*\[\s*([A-Za-z0-9_-]+)\s*\]\s*(#.*)?$")


def _set_line(text: str, key: str, literal: str) -> str:
    """`text` with the line of `key` saying `literal`: replaced where the key has a line, else added at the start
    of its section (a missing section at the end)."""
    section, _, name = key.rpartition(".")
    lines = text.split("\n")
    assignment = re.compile(rf"\s*{re.escape(name)}\s*=")
    current, insert_at = "", None
    for number, line in enumerate(lines):
        header = _SECTION_HEADER.match(line)
        if header:
            if current == section and insert_at is None:
                insert_at = number  # a top-level key goes before the first table
            current = header.group(1)
            if current == section:
                insert_at = number + 1
        elif current == section and assignment.match(line):
            lines[number] = f"{name} = {literal}"
            return "\n".join(lines)
    if insert_at is None:
        if section:
            return "\n".join([*lines, f"[{section}]", f"{name} = {literal}", ""])
        insert_at = len(lines)
    lines.insert(insert_at, f"{name} = {literal}")
    return "\n".join(lines)


def with_changes(text: str, changes: dict[str, Any]) -> str:
    """`text`, a configuration file that is valid TOML, with the settings in `changes` (checked values) set and
    the rest of it — the user's comments, other settings, their order — as it was. Where that cannot be done
    line by line (a value over several lines, an inline table), the whole file is written anew with the same
    values."""
    wanted = {**_flatten(parse_config(text)[0]), **changes}
    edited = text
    for key, value in changes.items():
        edited = _set_line(edited, key, _toml_value(value))
    if _flatten(parse_config(edited)[0]) == wanted:
        return edited
    return render_config(_build(wanted))


# -- files ----------------------------------------------------------------------------------------


def config_path() -> Path:
    """$XDG_CONFIG_HOME/tsuzuri/config.toml, or ~/.config/tsuzuri/config.toml."""
    return xdg_base_dir("XDG_CONFIG_HOME", ".config") / APP_DIRECTORY / CONFIG_FILE_NAME


def _load(path: Path, previous: Config) -> tuple[Config, list[str]]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        try:
            atomic_write_bytes(path, render_config().encode("utf-8"))
        except OSError as exc:
            return Config(), [f"{path}: cannot write the default configuration: {exc.strerror}"]
        return Config(), []
    except OSError as exc:
        return previous, [f"{path}: cannot read it, keeping the previous configuration: {exc.strerror}"]
    try:
        text = data.decode("utf-8-sig")  # tolerate the BOM some editors write
    except UnicodeDecodeError as exc:
        return previous, [f"{path}: not UTF-8, keeping the previous configuration: {exc}"]
    config, problems = parse_config(text, previous)
    return config, [f"{path}: {problem}" for problem in problems]


class ConfigStore:
    """The current configuration, re-read from its file on request.

    Starts with the defaults; call reload() to read the file (and create it on first run).
    """

    def __init__(self, path: Path | None = None):
        self.path = path or config_path()
        self.config = Config()

    def reload(self) -> list[str]:
        """Re-read the file. Each bad value keeps its current setting; a broken file keeps them all."""
        self.config, problems = _load(self.path, self.config)
        return problems

    def write_settings(self, literals: dict[str, str]) -> None:
        """Set the settings given as TOML literals in the file, keeping the rest of it; reload() applies them.
        ValueError, changing nothing, for a bad setting or a file that is not valid TOML (the user's file is
        never overwritten with what could not be read)."""
        changes = parse_changes(literals)
        try:
            text = self.path.read_bytes().decode("utf-8-sig")
        except FileNotFoundError:
            text = render_config()
        except (OSError, UnicodeDecodeError) as error:
            raise ValueError(f"{self.path}: cannot read it ({error}); nothing changed") from None
        try:
            tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise ValueError(
                f"{self.path} is not valid TOML ({error}): correct or remove it; nothing changed"
            ) from None
        atomic_write_bytes(self.path, with_changes(text, changes).encode("utf-8"))
