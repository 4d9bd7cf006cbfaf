"""The configuration file: first-run defaults, per-setting validation, and reloads that keep old values."""

import dataclasses
import errno
import json
import os
from enum import StrEnum
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import daemon.composer
import daemon.config
from daemon.composer import Brackets, Punctuation, Slash, SpaceWidth
from daemon.spelling import Spelling
from daemon.config import (
    SCHEMA,
    SECTIONS,
    CandidateSettings,
    Config,
    ConfigStore,
    InputSettings,
    TablePath,
    check_value,
    config_path,
    parse_changes,
    parse_config,
    render_config,
    setting_literals,
    with_changes,
)
from daemon.keys import NAME_KEYSYMS

# A romaji table file that exists wherever the tests run: Mozc's, as packaged.
MOZC_TABLE_FILE = str(Path(daemon.composer.__file__).parent / "romaji-hiragana.tsv")
CUSTOM = Config(
    model="/models/my model.gguf",
    threads=4,
    candidates=CandidateSettings(page_size=5, beam_width=3, model_candidates=0),
    input=InputSettings(
        TablePath(MOZC_TABLE_FILE), Punctuation.COMMA_KUTEN, Brackets.SQUARE, Slash.SLASH, SpaceWidth.HALF
    ),
)


def read_config(path=None):
    """The configuration a daemon starting now reads, and its problems (a missing file: the defaults written)."""
    store = ConfigStore(path)
    problems = store.reload()
    return store.config, problems


@pytest.fixture
def config_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    return tmp_path


def config_with(values: dict) -> Config:
    """A Config from {dotted key: value}; settings not given keep their defaults."""
    top: dict = {}
    sections: dict = {}
    for key, value in values.items():
        section, _, name = key.rpartition(".")
        (sections.setdefault(section, {}) if section else top)[name] = value
    return Config(**top, **{section: SECTIONS[section](**fields) for section, fields in sections.items()})


def setting_value(config: Config, key: str):
    for part in key.split("."):
        config = getattr(config, part)
    return config


def test_schema_defaults_pass_their_own_checks():
    for setting in SCHEMA.values():
        assert (
            check_value(setting, list(setting.default) if isinstance(setting.default, tuple) else setting.default)
            == setting.default
        ), setting.key
        assert setting.comment, setting.key
        assert (setting.bounds is not None) == (setting.kind is int), setting.key


def test_first_run_writes_the_commented_defaults(config_home):
    config, problems = read_config()
    path = config_home / "tsuzuri" / "config.toml"
    assert (config, problems) == (Config(), [])
    assert path == config_path()
    text = path.read_text(encoding="utf-8")
    assert text == render_config()
    assert "# CPU threads the model may use (1 to 16, default: 2)\nthreads = 2\n" in text
    assert "\n[keys]\n" in text
    assert [entry.name for entry in path.parent.iterdir()] == ["config.toml"]  # no temp file left behind
    assert read_config() == (Config(), [])


def test_relative_xdg_config_home_is_ignored(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/dir")
    assert config_path() == tmp_path / ".config" / "tsuzuri" / "config.toml"


def test_a_non_default_config_round_trips():
    assert parse_config(render_config(CUSTOM)) == (CUSTOM, [])


def _valid_values(setting):
    if setting.kind is int:
        return st.integers(*setting.bounds)
    if setting.kind is bool:
        return st.booleans()
    if setting.kind is str:
        return st.text(min_size=1)
    if setting.kind is TablePath:
        return st.sampled_from(["", MOZC_TABLE_FILE])
    if isinstance(setting.kind, type) and issubclass(setting.kind, StrEnum):
        return st.sampled_from([member.value for member in setting.kind])
    return st.lists(
        st.sampled_from(sorted(NAME_KEYSYMS)) | st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=3
    ).map(tuple)


@settings(max_examples=40, deadline=None)
@given(st.fixed_dictionaries({key: _valid_values(setting) for key, setting in SCHEMA.items()}))
def test_any_valid_config_round_trips(values):
    try:
        check_value(SCHEMA["model"], values["model"])
    except ValueError:
        assume(False)
    config = config_with(values)
    assert parse_config(render_config(config)) == (config, [])


@pytest.mark.parametrize(
    ("text", "key", "reason"),
    [
        ('threads = "many"', "threads", "expected an integer from 1 to 16"),
        ("threads = 0", "threads", "expected an integer from 1 to 16"),
        ("threads = 17", "threads", "expected an integer from 1 to 16"),
        ("threads = true", "threads", "expected an integer"),
        ("threads = 2.0", "threads", "expected an integer"),
        ("[candidates]\nmodel_candidates = -1", "candidates.model_candidates", "expected an integer from 0 to 16"),
        ("[conversion]\nlive = 1", "conversion.live", "expected true or false"),
        ('[conversion]\nlearning = "yes"', "conversion.learning", "expected true or false"),
        ('model = ""', "model", "expected a non-empty string"),
        ("model = 3", "model", "expected a non-empty string"),
        ('model = "a\\nb"', "model", "control characters"),
        ('[keys]\nconvert = "space"', "keys.convert", "expected a list of key names"),
        ("[keys]\nconvert = [1]", "keys.convert", "expected a list of key names"),
        ('[keys]\nconvert = ["spcae"]', "keys.convert", 'unknown key name "spcae" (did you mean "space"?)'),
        ('[keys]\ncommit = ["Return", "Enter_Key"]', "keys.commit", 'unknown key name "Enter_Key"'),
        (
            '[input]\npunctuation = "KUTEN_TOUTEN"',
            "input.punctuation",
            'expected one of "、。", "，．", "，。", "、．"',
        ),
        ('[input]\nbrackets = "[]"', "input.brackets", 'expected one of "「」", "［］"'),
        ("[input]\nslash = 1", "input.slash", 'expected one of "・", "／"'),
        ('[input]\nspace = "wide"', "input.space", 'expected one of "full", "half"'),
        ("[input]\nromaji_table = 1", "input.romaji_table", "expected a file path"),
        ('[input]\nromaji_table = "azik.tsv"', "input.romaji_table", "expected an absolute path"),
        (
            '[input]\nromaji_table = "/nonexistent/azik.tsv"',
            "input.romaji_table",
            "not a usable romaji table: cannot read it",
        ),
    ],
)
def test_a_bad_value_is_reported_and_the_previous_value_kept(text, key, reason):
    config, problems = parse_config(text, CUSTOM)
    assert setting_value(config, key) == setting_value(CUSTOM, key)
    assert len(problems) == 1
    assert problems[0].startswith(f"{key} = ") and reason in problems[0] and "; keeping " in problems[0]


def test_each_bad_value_keeps_only_its_own_setting():
    text = 'threads = "many"\nmodel = "other"\n[candidates]\npage_size = 12\nbeam_width = 7\n'
    config, problems = parse_config(text, CUSTOM)
    assert config.threads == CUSTOM.threads and config.candidates.page_size == CUSTOM.candidates.page_size
    assert config.model == "other" and config.candidates.beam_width == 7
    assert problems == [
        'threads = "many": expected an integer from 1 to 16; keeping 4',
        "candidates.page_size = 12: expected an integer from 1 to 9; keeping 5",
    ]


def test_settings_missing_from_the_file_take_their_defaults():
    assert parse_config("threads = 3", CUSTOM) == (dataclasses.replace(Config(), threads=3), [])


def test_unknown_settings_and_sections_are_reported_and_ignored():
    text = 'colour = "red"\nthreads = 3\n[candidates]\npage_sise = 4\n[appearance]\nfont = "x"\n'
    config, problems = parse_config(text)
    assert config == dataclasses.replace(Config(), threads=3)
    assert problems == [
        "unknown setting 'colour', ignored",
        "unknown setting 'candidates.page_sise', ignored",
        "unknown section [appearance], ignored",
    ]


def test_a_section_that_is_not_a_table_keeps_its_previous_settings():
    config, problems = parse_config("candidates = 3\nthreads = 8", CUSTOM)
    assert config == dataclasses.replace(Config(), threads=8, candidates=CUSTOM.candidates)
    assert problems == ["candidates = 3: expected a [candidates] table; keeping the previous [candidates] settings"]


def test_broken_toml_keeps_the_whole_previous_config_and_names_the_line():
    config, problems = parse_config("threads = 3\n[keys\nconvert = []\n", CUSTOM)
    assert config == CUSTOM
    assert len(problems) == 1 and "not valid TOML" in problems[0] and "line 2" in problems[0]


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(sorted(SCHEMA)) | st.text(min_size=1, max_size=8),
        st.integers()
        | st.booleans()
        | st.text(max_size=6)
        | st.floats(allow_nan=False)
        | st.lists(st.text(max_size=6) | st.integers(), max_size=3),
        max_size=8,
    )
)
def test_any_document_yields_a_valid_config(document):
    sections: dict = {}
    for key, value in document.items():
        section, _, name = key.rpartition(".")
        sections.setdefault(section, {})[name] = value
    text = "\n".join(
        f"[{json.dumps(section)}]\n" * bool(section)
        + "".join(f"{json.dumps(name)} = {json.dumps(value)}\n" for name, value in entries.items())
        for section, entries in sorted(sections.items())
    )
    config, problems = parse_config(text, CUSTOM)
    for key, setting in SCHEMA.items():
        value = setting_value(config, key)
        assert check_value(setting, list(value) if isinstance(value, tuple) else value) == value


def test_reload_applies_good_values_and_keeps_old_ones_for_bad_values(config_home):
    store = ConfigStore()
    assert store.config == Config()
    assert store.reload() == []  # first run
    path = config_home / "tsuzuri" / "config.toml"
    path.write_text("threads = 4\n[conversion]\nlive = true\n", encoding="utf-8")
    assert store.reload() == []
    assert (store.config.threads, store.config.conversion.live) == (4, True)

    path.write_text('threads = "many"\n[conversion]\nlive = true\ncontext_chars = 10\n', encoding="utf-8")
    assert store.reload() == [f'{path}: threads = "many": expected an integer from 1 to 16; keeping 4']
    assert (store.config.threads, store.config.conversion.live, store.config.conversion.context_chars) == (4, True, 10)

    before = store.config
    path.write_text("threads = = 3\n", encoding="utf-8")
    [problem] = store.reload()
    assert problem.startswith(f"{path}: not valid TOML") and "line 1" in problem
    assert store.config is before

    path.write_bytes(b'threads = 3\nmodel = "\xff"\n')
    [problem] = store.reload()
    assert "not UTF-8" in problem and store.config is before

    path.write_bytes("\ufeffthreads = 3\n".encode("utf-8"))  # a BOM from a Windows editor
    assert store.reload() == [] and store.config == dataclasses.replace(Config(), threads=3)


def test_reload_recreates_a_deleted_file_with_the_defaults(config_home):
    store = ConfigStore(config_home / "custom.toml")
    store.path.write_text("threads = 5\n", encoding="utf-8")
    store.reload()
    store.path.unlink()
    assert store.reload() == [] and store.config == Config()
    assert store.path.read_text(encoding="utf-8") == render_config()


def test_an_unreadable_file_keeps_the_old_config(config_home):
    store = ConfigStore(config_home / "config.toml")
    store.path.write_text("threads = 5\n", encoding="utf-8")
    store.reload()
    store.path.unlink()
    store.path.mkdir()  # reading a directory fails with an OSError other than "not found"
    [problem] = store.reload()
    assert "cannot read it" in problem and store.config.threads == 5


def test_an_unwritable_first_run_still_yields_the_defaults(tmp_path, monkeypatch):
    def read_only_file_system(path, data):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(daemon.config, "atomic_write_bytes", read_only_file_system)
    config, problems = read_config(tmp_path / "config.toml")
    assert (config, problems) == (
        Config(),
        [f"{tmp_path / 'config.toml'}: cannot write the default configuration: Read-only file system"],
    )


def test_the_input_styles_are_parsed_as_their_choices():
    text = '[input]\npunctuation = "，．"\nbrackets = "［］"\nslash = "／"\nspace = "half"\n'
    config, problems = parse_config(text)
    assert problems == []
    assert config.input == InputSettings(
        TablePath(""), Punctuation.COMMA_PERIOD, Brackets.SQUARE, Slash.SLASH, SpaceWidth.HALF
    )
    assert (
        '# What the , and . keys type ("、。" or "，．" or "，。" or "、．", default: "、。")\n'
        'punctuation = "、。"\n' in render_config()
    )


def test_the_spelling_policy_is_a_choice_of_conversion():
    config, problems = parse_config('[conversion]\nspelling = "official"\n')
    assert problems == [] and config.conversion.spelling is Spelling.OFFICIAL
    config, problems = parse_config('[conversion]\nspelling = "kanji"\n', config)
    assert config.conversion.spelling is Spelling.OFFICIAL and "conversion.spelling" in problems[0]
    assert 'spelling = "ranked"\n' in render_config()


def test_a_romaji_table_is_checked_when_the_config_is_read(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "azik.tsv").write_text("kz\tかん\n", encoding="utf-8")
    config, problems = parse_config('[input]\nromaji_table = "~/azik.tsv"', CUSTOM)
    assert (config.input.romaji_table, problems) == ("~/azik.tsv", [])

    (tmp_path / "azik.tsv").write_text("kz\tかん\nkq かい\n", encoding="utf-8")
    config, problems = parse_config('[input]\nromaji_table = "~/azik.tsv"', CUSTOM)
    assert config.input.romaji_table == CUSTOM.input.romaji_table
    assert problems == [
        'input.romaji_table = "~/azik.tsv": not a usable romaji table: line 2: expected '
        f"input<TAB>output[<TAB>pending], got 'kq かい'; keeping \"{MOZC_TABLE_FILE}\""
    ]


def test_every_key_binding_is_an_action_and_every_action_has_a_binding():
    from dataclasses import fields

    from daemon.config import Action, KeyBindings

    assert [f.name for f in fields(KeyBindings)] == [action.value for action in Action]


def test_an_unknown_action_in_the_keys_table_is_reported(tmp_path):
    from daemon.config import ConfigStore

    path = tmp_path / "config.toml"
    path.write_text('[keys]\nconvret = ["space"]\n', encoding="utf-8")
    problems = ConfigStore(path).reload()
    assert any("convret" in problem for problem in problems), problems


# -- changes from a settings page ------------------------------------------------------------------


def test_changes_are_checked_values_of_toml_literals():
    assert parse_changes(
        {"conversion.live": "true", "input.punctuation": '"，．"', "keys.toggle_input": '["ctrl+space"]'}
    ) == {"conversion.live": True, "input.punctuation": Punctuation.COMMA_PERIOD, "keys.toggle_input": ("ctrl+space",)}
    for literals, said in [
        ({"conversion.speed": "1"}, "unknown setting"),
        ({"candidates.page_size": "99"}, "page_size = 99: expected an integer from 1 to 9"),
        ({"conversion.live": "yes please"}, "not a TOML value"),
        ({"keys.commit": '["Retrun"]'}, "did you mean"),
    ]:
        with pytest.raises(ValueError, match=said):
            parse_changes(literals)


def test_a_change_edits_its_line_and_keeps_the_rest_of_the_users_file():
    text = '# my own notes\nthreads = 2\n\n[conversion]\n# faster\nlive = false\n\n[keys]\ncommit = ["Return"]\n'
    changed = with_changes(text, parse_changes({"conversion.live": "true", "threads": "4"}))
    assert changed == text.replace("live = false", "live = true").replace("threads = 2", "threads = 4")


def test_a_setting_the_file_lacks_goes_into_its_section_or_a_new_one():
    text = "# mine\n[conversion]\nlive = true\n"
    changed = with_changes(
        text, parse_changes({"conversion.learning": "false", "threads": "3", "input.space": '"half"'})
    )
    parsed, problems = parse_config(changed)
    assert problems == [] and changed.startswith("# mine\n")
    assert (parsed.conversion.live, parsed.conversion.learning, parsed.threads, parsed.input.space) == (
        True,
        False,
        3,
        SpaceWidth.HALF,
    )


def test_a_file_that_cannot_be_edited_line_by_line_is_written_anew_with_the_same_values():
    text = '[keys]\ntoggle_input = [\n  "Kanji",\n]\n[conversion]\nlive = true\n'
    changed = with_changes(text, parse_changes({"keys.toggle_input": '["ctrl+space"]'}))
    parsed, _ = parse_config(changed)
    assert parsed.keys.toggle_input == ("ctrl+space",) and parsed.conversion.live is True


def test_every_setting_reads_back_from_its_literal():
    literals = setting_literals(Config())
    assert literals["conversion.live"] == "false" and literals["input.punctuation"] == '"、。"'
    assert with_changes(render_config(), parse_changes(literals)) == render_config()


def test_writing_settings_never_overwrites_a_file_that_is_not_toml(tmp_path):
    path = tmp_path / "config.toml"
    path.write_bytes(b"live = = true\n")
    store = ConfigStore(path)
    with pytest.raises(ValueError, match="not valid TOML"):
        store.write_settings({"conversion.live": "true"})
    assert path.read_bytes() == b"live = = true\n"
    path.unlink()
    store.write_settings({"conversion.live": "true"})  # no file yet: the defaults, with the change
    assert store.reload() == [] and store.config.conversion.live is True
