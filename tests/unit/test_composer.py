from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import daemon.composer
from daemon.composer import (
    Composer,
    InputMode,
    Transliteration,
    romaji_to_kana,
    to_fullwidth_ascii,
    to_fullwidth_hiragana,
    to_fullwidth_katakana,
    to_halfwidth_ascii,
    to_halfwidth_katakana,
)
from daemon.kana import to_katakana

# Read independently of the composer's own parser: (romaji, output, pending) in file order.
MOZC_TABLE = [
    tuple(line.split("\t")) + ("",) * (3 - len(line.split("\t")))
    for line in (Path(daemon.composer.__file__).parent / "romaji-hiragana.tsv").read_text(encoding="utf-8").splitlines()
]
MOZC_INPUTS = [romaji for romaji, _, _ in MOZC_TABLE]

ascii_keys = st.text(st.characters(max_codepoint=0x7F))
romaji_modes = st.sampled_from([InputMode.HIRAGANA, InputMode.KATAKANA, InputMode.HALFWIDTH_KATAKANA])


def test_vendored_table_is_mozcs():
    assert len(MOZC_TABLE) == 323
    assert ("tt", "っ", "t") in MOZC_TABLE and ("n", "ん", "") in MOZC_TABLE
    # Rules that newer Mozc has and older copies lack (ww with its pending form replaced wwa … wwho).
    assert {("tch", "っ", "ch"), ("ww", "っ", "w"), ("www", "w", "ww"), ("kwu", "くぅ", "")} <= set(MOZC_TABLE)
    assert {consonant + "w" + vowel for consonant in "gsz" for vowel in "aiueo"} <= set(MOZC_INPUTS)
    assert "wwa" not in MOZC_INPUTS


@pytest.mark.parametrize(
    "romaji,output,pending", MOZC_TABLE, ids=[f"{line}:{romaji}" for line, romaji in enumerate(MOZC_INPUTS, 1)]
)
def test_every_mozc_rule(romaji, output, pending):
    # Conversion reads pending romaji that is a rule by itself (`www` → w, pending `ww` → っw) as that rule.
    assert romaji_to_kana(romaji) == output + romaji_to_kana(pending)
    assert Composer(InputMode.KATAKANA).insert(romaji).reading() == to_katakana(output + romaji_to_kana(pending))
    composer = Composer().insert(romaji)
    assert composer.raw() == romaji
    if pending:  # the pending keys start the next kana (`tch` `a` → っちゃ)
        assert romaji_to_kana(romaji + "a") == output + romaji_to_kana(pending + "a")
    if any(other != romaji and other.startswith(romaji) for other in MOZC_INPUTS):
        # Longer rules start with it (`n`): it waits as typed until a key that none continues it with.
        assert composer.preedit() == romaji
        follower = next(
            key for key in "bcdfghjklmpqrstvwxz" if not any(other.startswith(romaji + key) for other in MOZC_INPUTS)
        )
        assert Composer().insert(romaji + follower).preedit() == output + pending + follower
    else:
        assert composer.preedit() == output + pending


@pytest.mark.parametrize(
    "keys,kana",
    [
        ("kannji", "かんじ"),
        ("kanji", "かんじ"),
        ("konnnichiha", "こんにちは"),
        ("tte", "って"),
        ("n'a", "んあ"),
        ("xtsu", "っ"),
        ("xtu", "っ"),
        ("ltu", "っ"),
        ("ltsu", "っ"),
        ("vvu", "っゔ"),
        ("-", "ー"),
        ("kyouhaiitenkidesune", "きょうはいいてんきですね"),
        ("shinbun", "しんぶん"),
        ("ninja", "にんじゃ"),
        ("zh", "←"),
        ("zj", "↓"),
        ("zk", "↑"),
        ("zl", "→"),
        ("z.", "…"),
        ("z,", "‥"),
        ("z/", "・"),
        ("z-", "〜"),
        ("z[", "『"),
        ("z]", "』"),
        ("za", "ざ"),
        (",", "、"),
        (".", "。"),
        ("[", "「"),
        ("]", "」"),
        ("/", "・"),
        ("~", "〜"),
        ("xya", "ゃ"),
        ("lyo", "ょ"),
        ("wi", "うぃ"),
        ("we", "うぇ"),
        ("wo", "を"),
        ("vavivuvevo", "ゔぁゔぃゔゔぇゔぉ"),
        ("wwa", "っわ"),
        ("kka", "っか"),
        ("chotto", "ちょっと"),
        ("nn", "ん"),
        ("nnn", "んん"),
        ("onna", "おんあ"),
        ("n", "ん"),
        ("kan", "かん"),
        ("nya", "にゃ"),
        ("itchome", "いっちょめ"),
        ("matcha", "まっちゃ"),
        ("tca", "tcあ"),
        ("www", "wっw"),
        ("wwwa", "wっわ"),
        ("kwu", "くぅ"),
        ("gwi", "ぐぃ"),
        ("swe", "すぇ"),
        ("zwo", "ずぉ"),
        ("wwyi", "っゐ"),
        ("ky", "ky"),
        ("kak", "かk"),
        ("kt", "kt"),
        ("shy", "shy"),
        ("KANJI", "かんじ"),
        ("Tokyo", "ときょ"),
        ("!?#", "！？＃"),
        ("2024nen", "２０２４ねん"),
        ("a b", "あ　b"),
        ("\"'\\`", "”’￥｀"),
        ("n!", "ん！"),
    ],
)
def test_tricky_sequences(keys, kana):
    assert romaji_to_kana(keys) == kana


def test_pending_romaji_shows_as_typed():
    composer = Composer().insert("kanaky")
    assert (composer.preedit(), composer.reading(), composer.raw()) == ("かなky", "かなky", "kanaky")
    assert Composer().insert("shinbun").preedit() == "しんぶn"  # a trailing n is ん only for conversion
    assert Composer().insert("Ky").preedit() == "Ky"


@pytest.mark.parametrize(
    "keys,settled",
    [
        ("kyouh", ("きょう", "h")),
        ("ky", ("", "ky")),
        ("kyou", ("きょう", "")),
        ("kan", ("かん", "")),
        ("kanaky", ("かな", "ky")),
        ("ktak", ("kた", "k")),
        ("", ("", "")),
        ("Ky", ("", "Ky")),
    ],
)
def test_settled_reading_leaves_out_the_trailing_unfinished_romaji(keys, settled):
    assert Composer().insert(keys).settled_reading() == settled


@given(ascii_keys, st.sampled_from(list(InputMode)))
def test_settled_reading_and_pending_make_the_reading(keys, mode):
    reading, pending = Composer(mode).insert(keys).settled_reading()
    assert reading + pending == Composer(mode).insert(keys).reading()


@pytest.mark.parametrize(
    "keys,preedit,raw",
    [
        ("kya", "き", "ki"),  # the kana left gets the romaji that types it
        ("sha", "し", "shi"),  # ... preferring what was typed (not si)
        ("tsa", "つ", "tsu"),
        ("wwi", "っう", "wwu"),
        ("tte", "っ", "t"),
        ("ky", "k", "k"),
        ("kyoukyo", "きょうき", "kyouki"),
        ("n", "", ""),
        ("", "", ""),
    ],
)
def test_backspace_removes_last_kana_or_letter(keys, preedit, raw):
    composer = Composer().insert(keys).backspace()
    assert (composer.preedit(), composer.raw()) == (preedit, raw)


def test_backspace_lets_unfinished_romaji_grow_again():
    assert Composer().insert("kt").backspace().insert("a").preedit() == "か"
    assert Composer().insert("shimb").backspace().insert("u").preedit() == "しむ"
    assert Composer().insert("kya").backspace().insert("a").preedit() == "きあ"


def test_clear_keeps_mode():
    assert Composer(InputMode.KATAKANA).insert("ka").clear() == Composer(InputMode.KATAKANA)


@pytest.mark.parametrize(
    "mode,keys,preedit",
    [
        (InputMode.HIRAGANA, "gakkou-!", "がっこうー！"),
        (InputMode.KATAKANA, "gakkou-!", "ガッコウー！"),
        (InputMode.KATAKANA, "vuxka", "ヴヵ"),
        (InputMode.HALFWIDTH_KATAKANA, "gakkou-!", "ｶﾞｯｺｳｰ!"),
        (InputMode.HALFWIDTH_KATAKANA, "vu,.[]/", "ｳﾞ､｡｢｣･"),
        (InputMode.FULLWIDTH_ASCII, "Ka 1!", "Ｋａ　１！"),
        (InputMode.DIRECT, "ka 1!", "ka 1!"),
    ],
)
def test_input_modes(mode, keys, preedit):
    composer = Composer(mode).insert(keys)
    assert (composer.preedit(), composer.reading(), composer.raw()) == (preedit, preedit, keys)


def test_mode_switch_starts_new_chunk():
    composer = Composer().insert("kan").set_mode(InputMode.KATAKANA).insert("ji")
    assert (composer.preedit(), composer.reading()) == ("かnジ", "かんジ")
    assert Composer().insert("k").set_mode(InputMode.KATAKANA).insert("a").preedit() == "kア"
    assert Composer().insert("ka").set_mode(InputMode.DIRECT).insert("ka").preedit() == "かka"


def test_function_key_conversions():
    composer = Composer().insert("gakkouhe")
    assert [composer.transliterate(form) for form in Transliteration] == [
        "がっこうへ",
        "ガッコウヘ",
        "ｶﾞｯｺｳﾍ",
        "ｇａｋｋｏｕｈｅ",
        "gakkouhe",
    ]
    assert Composer(InputMode.HALFWIDTH_KATAKANA).insert("vu-").transliterate(Transliteration.HIRAGANA) == "ゔー"
    assert Composer().insert("kan").transliterate(Transliteration.KATAKANA) == "カン"
    assert Composer().insert("kyaA").backspace().transliterate(Transliteration.HALFWIDTH_ASCII) == "kya"


def test_character_forms():
    assert to_halfwidth_katakana("がっこうヴヷ、。「」・ー") == "ｶﾞｯｺｳｳﾞﾜﾞ､｡｢｣･ｰ"
    assert to_halfwidth_katakana("ヵヶゎＡ！　") == "ヵヶヮA! "  # no half-width ヵ ヶ ヮ
    assert to_fullwidth_katakana("ｶﾞｳﾞﾜﾞはﾞｷﾟ") == "ガヴヷバキ゜"  # no precomposed キ゚: the mark stays spacing
    assert to_fullwidth_katakana("aﾞｰ｡") == "a゛ー。"  # a mark with nothing to join stays a spacing mark
    assert to_fullwidth_hiragana("ｶﾞｯｺｳヴヵ") == "がっこうゔヵ"
    assert to_fullwidth_ascii("a~-'\"\\ ") == "ａ〜−’”￥　"
    assert to_halfwidth_ascii("ａ＇’〜～あ") == "a''~~あ"


@given(ascii_keys, st.sampled_from(list(InputMode)))
def test_any_ascii_composes(keys, mode):
    composer = Composer(mode).insert(keys)
    assert composer.raw() == keys
    assert all(
        isinstance(text, str)
        for text in [composer.preedit(), composer.reading()]
        + [composer.transliterate(form) for form in Transliteration]
    )
    assert composer.transliterate(Transliteration.FULLWIDTH_ASCII) == to_fullwidth_ascii(keys)
    assert composer.transliterate(Transliteration.HALFWIDTH_ASCII) == keys


@given(ascii_keys, st.sampled_from(list(InputMode)))
def test_backspacing_everything_returns_to_empty(keys, mode):
    composer = Composer(mode).insert(keys)
    while composer.preedit():
        shorter = composer.backspace()
        assert len(shorter.preedit()) < len(composer.preedit())
        composer = shorter
    assert composer == Composer(mode)
    assert (composer.reading(), composer.raw()) == ("", "")


@given(ascii_keys, romaji_modes)
def test_typing_in_a_mode_equals_converting_hiragana(keys, mode):
    form = {
        InputMode.HIRAGANA: Transliteration.HIRAGANA,
        InputMode.KATAKANA: Transliteration.KATAKANA,
        InputMode.HALFWIDTH_KATAKANA: Transliteration.HALFWIDTH_KATAKANA,
    }[mode]
    assert Composer(mode).insert(keys).reading() == Composer().insert(keys).transliterate(form)


@given(ascii_keys)
def test_ascii_modes(keys):
    assert Composer(InputMode.FULLWIDTH_ASCII).insert(keys).reading() == to_fullwidth_ascii(keys)
    assert Composer(InputMode.DIRECT).insert(keys).reading() == keys
    assert to_halfwidth_ascii(to_fullwidth_ascii(keys)) == keys


@given(st.text(st.characters(min_codepoint=0x3041, max_codepoint=0x3096) | st.just("ー")))
def test_halfwidth_katakana_round_trip(kana):
    assert to_fullwidth_katakana(to_halfwidth_katakana(kana)) == to_katakana(kana)
