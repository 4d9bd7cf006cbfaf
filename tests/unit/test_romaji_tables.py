"""Custom romaji tables (Mozc's TSV format) and the symbol styles, through the table and the composer."""

import re

import pytest

from daemon.composer import (
    MOZC_RULES,
    Brackets,
    Composer,
    InputMode,
    Punctuation,
    RomajiTableError,
    Rule,
    Slash,
    SpaceWidth,
    SymbolStyle,
    load_rules,
    romaji_table,
)
from daemon.composer.table import MAX_TABLE_BYTES, parse_rules, with_symbol_style

# A hand-written subset of AZIK: a consonant then z/k/j/d/l types the syllable with ん (kz → かん), then
# q/h/w/p types it with い/う/い/う (kq → かい, kp → こう); ; is っ.
AZIK = """\
# AZIK (subset)
a\tあ
i\tい
u\tう
e\tえ
o\tお
ka\tか
ki\tき
ku\tく
ke\tけ
ko\tこ
kz\tかん
kk\tきん
kj\tくん
kd\tけん
kl\tこん
kq\tかい
kh\tくう
kw\tけい
kp\tこう
sa\tさ
si\tし
su\tす
se\tせ
so\tそ
sz\tさん
sp\tそう
ta\tた
te\tて
to\tと
tz\tたん
ja\tじゃ
ji\tじ
n\tん
nn\tん
na\tな
ni\tに
ne\tね
no\tの
;\tっ
"""


@pytest.fixture
def azik_file(tmp_path):
    path = tmp_path / "azik.tsv"
    path.write_text(AZIK, encoding="utf-8")
    return path


DEFAULT_STYLE = SymbolStyle()


def compose(
    keys: str,
    rules: dict[str, Rule] = MOZC_RULES,
    style: SymbolStyle = DEFAULT_STYLE,
    mode: InputMode = InputMode.HIRAGANA,
) -> Composer:
    return Composer(mode, romaji_table(rules, style)).insert(keys)


@pytest.mark.parametrize(
    "keys,kana",
    [
        ("kz", "かん"),
        ("kzji", "かんじ"),
        ("kp", "こう"),
        ("kq", "かい"),
        ("sp", "そう"),
        ("tz", "たん"),
        ("ki;te", "きって"),
        ("kk", "きん"),
        ("kanji", "かんじ"),
    ],
)
def test_an_azik_table_composes(azik_file, keys, kana):
    composer = compose(keys, load_rules(azik_file))
    assert (composer.preedit(), composer.reading(), composer.raw()) == (kana, kana, keys)


def test_a_custom_table_replaces_the_bundled_one(azik_file):
    azik = load_rules(azik_file)
    assert compose("kya", azik).preedit() == "kｙあ"  # no ky… in this subset: y is no romaji, a is あ
    assert compose("kz").preedit() == "kz"  # ... and Mozc's table has no kz
    # The symbol keys the table leaves out type the configured style, as Mozc does.
    assert compose(",./[] ", azik).preedit() == "、。・「」\u3000"
    assert compose(",.", azik, SymbolStyle(Punctuation.COMMA_PERIOD)).preedit() == "，．"


def test_backspace_in_a_custom_table_keeps_the_raw_keys(azik_file):
    composer = compose("kzkp", load_rules(azik_file)).backspace()
    assert (composer.preedit(), composer.raw()) == ("かんこ", "kzko")


def test_a_table_with_capitals_is_case_sensitive():
    rules = parse_rules("a\tあ\nA\tア\nka\tか\n")
    assert compose("aA", rules).preedit() == "あア"
    assert compose("KA", rules).preedit() == "Ｋア"  # no rule starts with K: it is typed as a symbol
    assert compose("KA").preedit() == "か"  # Mozc's table has none: case does not matter


def test_parse_rules_reads_mozcs_format():
    text = "# comment\n\nkk\tっ\tk\nka\tか\t\t\nka\tカ\n#\t＃\n"
    assert parse_rules(text) == {
        "kk": Rule("っ", "k"),
        "ka": Rule("カ"),
        "#": Rule("＃"),
    }  # a later duplicate wins; `#<TAB>` is a rule


def test_load_rules_tolerates_a_byte_order_mark(tmp_path):
    path = tmp_path / "table.tsv"
    path.write_text("\ufeffka\tか\r\n", encoding="utf-8")
    assert load_rules(path) == {"ka": Rule("か")}


@pytest.mark.parametrize(
    "text,reason",
    [
        ("ka\tか\nkaか\n", "line 2: expected input<TAB>output[<TAB>pending]"),
        ("ka\tか\t\tNewChunk\n", "line 1: attributes (NewChunk) are not supported"),
        ("a\tb\tc\td\te\n", "line 1: expected"),
        ("\tか\n", "line 1: the input is empty"),
        ("t\t\tか\n", "line 1: pending 'か' is not a proper end of the input"),
        ("tt\tっ\ttt\n", "line 1: pending 'tt' is not a proper end of the input"),
    ],
)
def test_parse_rules_names_the_line_it_cannot_use(text, reason):
    with pytest.raises(RomajiTableError, match=re.escape(reason)):
        parse_rules(text)


@pytest.mark.parametrize(
    "content,reason",
    [
        (None, "cannot read it"),
        (b"# only a comment\n", "no rules in it"),
        ("ka\tか\n".encode("utf-16"), "not UTF-8"),
        (b"a\t\xe3\x81\x82\n" * (MAX_TABLE_BYTES // 5 + 1), "larger than"),
        (b"ka\n", "line 1: expected"),
    ],
)
def test_load_rules_says_why_a_file_cannot_be_used(tmp_path, content, reason):
    path = tmp_path / "table.tsv"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(RomajiTableError, match=reason):
        load_rules(path)


def test_load_rules_refuses_what_is_not_a_file(tmp_path):
    with pytest.raises(RomajiTableError, match="not a regular file"):
        load_rules(tmp_path)


@pytest.mark.parametrize(
    "style,typed",
    [
        (SymbolStyle(), "、。「」・\u3000"),
        (SymbolStyle(Punctuation.COMMA_PERIOD), "，．「」・\u3000"),
        (SymbolStyle(Punctuation.COMMA_KUTEN), "，。「」・\u3000"),
        (SymbolStyle(Punctuation.TOUTEN_PERIOD), "、．「」・\u3000"),
        (SymbolStyle(brackets=Brackets.SQUARE), "、。［］・\u3000"),
        (SymbolStyle(slash=Slash.SLASH), "、。「」／\u3000"),
        (SymbolStyle(space=SpaceWidth.HALF), "、。「」・ "),
        (SymbolStyle(Punctuation.COMMA_PERIOD, Brackets.SQUARE, Slash.SLASH, SpaceWidth.HALF), "，．［］／ "),
    ],
)
def test_symbol_styles(style, typed):
    composer = compose(",.[]/ ", style=style)
    assert (composer.preedit(), composer.reading(), composer.raw()) == (typed, typed, ",.[]/ ")
    assert compose(",.[]/ ", style=style, mode=InputMode.KATAKANA).preedit() == typed
    assert compose("z[z]z/z.", style=style).preedit() == "『』・…"  # the z- symbols are not styled
    assert compose("n,", style=style).preedit() == "ん" + typed[0]
    assert Composer(InputMode.HIRAGANA, romaji_table(MOZC_RULES, style)).space() == typed[-1]


def test_space_in_the_other_modes():
    half = romaji_table(MOZC_RULES, SymbolStyle(space=SpaceWidth.HALF))
    assert Composer(InputMode.HALFWIDTH_KATAKANA).space() == " "
    assert Composer(InputMode.FULLWIDTH_ASCII, half).space() == "\u3000"  # the full-width mode stays full
    assert Composer(InputMode.KATAKANA, half).space() == " "


def test_a_table_of_its_own_symbols_keeps_them():
    rules = {",": Rule("!"), ".": Rule("。"), "ka": Rule("か")}
    styled = with_symbol_style(rules, SymbolStyle(Punctuation.COMMA_PERIOD, Brackets.SQUARE))
    # `,` is the table's own; `.` is the default style's symbol, so the style replaces it; `[` was missing.
    assert (styled[","], styled["."], styled["["], styled["ka"]) == (Rule("!"), Rule("．"), Rule("［"), Rule("か"))
    assert rules == {",": Rule("!"), ".": Rule("。"), "ka": Rule("か")}  # not changed in place
