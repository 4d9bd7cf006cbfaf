import codecs
import os
from pathlib import Path

import pytest

from daemon.userdata import storage
from daemon.paths import user_data_dir
from daemon.userdata.storage import InvalidEntry, decode_lines, parse_lines
from daemon.userdata.user_dictionary import (
    FILE_NAME,
    UserDictionary,
    UserEntry,
    format_entry_line,
    make_entry,
    parse_entry_line,
)

GOOGLE_EXPORT = (
    "!Google Japanese Input Dictionary Export\r\n"
    "つづり\t綴り\t名詞\tプロジェクト名\r\n"
    "きょうと\t京都\t地名\t\r\n"
    "ありがとう\tありがとうございます\t短縮よみ\r\n"
)


def parse(text: str):
    return parse_lines(decode_lines(text.encode("utf-8")), parse_entry_line)


# --- format --------------------------------------------------------------------------------


def test_parses_mozc_lines_with_and_without_comment():
    entries, skipped = parse("# comment\nつづり\t綴り\t名詞\tプロジェクト名\nきょうと\t京都\t地名\n\n")
    assert entries == [
        UserEntry("つづり", "綴り", "名詞", "プロジェクト名"),
        UserEntry("きょうと", "京都", "地名"),
    ]
    assert skipped == []


def test_bad_lines_are_reported_with_line_numbers_and_the_rest_kept():
    text = "つづり\t綴り\t名詞\nthis line has no tabs\n\t空\t名詞\nよみ\t\t名詞\nねこ\t猫\t\nいぬ\t犬\t名詞\n"
    entries, skipped = parse(text)
    assert [entry.surface for entry in entries] == ["綴り", "犬"]
    assert [(s.line_number, s.reason) for s in skipped] == [
        (2, "expected reading, surface and part of speech separated by tabs, found 1 field(s)"),
        (3, "empty reading"),
        (4, "empty surface"),
        (5, "empty part of speech"),
    ]
    assert skipped[0].text == "this line has no tabs"
    assert "line 2" in str(skipped[0])


def test_extra_tabs_stay_in_the_comment():
    assert parse_entry_line("よみ\t読み\t名詞\ta\tb") == UserEntry("よみ", "読み", "名詞", "a b")


def test_katakana_readings_become_hiragana_and_fields_are_trimmed():
    assert make_entry(" ツヅリ ", " 綴り", "名詞 ") == UserEntry("つづり", "綴り", "名詞")


@pytest.mark.parametrize(
    "encode",
    [
        lambda text: text.encode("utf-8"),
        lambda text: codecs.BOM_UTF8 + text.encode("utf-8"),
        lambda text: codecs.BOM_UTF16_LE + text.encode("utf-16-le"),  # how Google IME exports
        lambda text: codecs.BOM_UTF16_BE + text.encode("utf-16-be"),
    ],
    ids=["utf-8", "utf-8-bom", "utf-16-le-bom", "utf-16-be-bom"],
)
def test_accepted_encodings(encode):
    entries, skipped = parse_lines(decode_lines(encode(GOOGLE_EXPORT)), parse_entry_line)
    assert skipped == []
    assert entries == [
        UserEntry("つづり", "綴り", "名詞", "プロジェクト名"),
        UserEntry("きょうと", "京都", "地名"),
        UserEntry("ありがとう", "ありがとうございます", "短縮よみ"),
    ]


def test_invalid_bytes_cost_only_their_line():
    data = "つづり\t綴り\t名詞\n".encode() + b"\xff\xfe\xfa\t\x80\t\xc3\n" + "ねこ\t猫\t名詞\n".encode()
    entries, skipped = parse_lines(decode_lines(data), parse_entry_line)
    assert [entry.surface for entry in entries] == ["綴り", "猫"]
    assert [(s.line_number, s.reason) for s in skipped] == [(2, "invalid bytes for the file's encoding")]


def test_format_round_trips():
    for entry in (UserEntry("つづり", "綴り", "名詞", "メモ"), UserEntry("ねこ", "猫", "名詞")):
        assert parse_entry_line(format_entry_line(entry)) == entry


def test_suppression_entries_are_marked():
    assert make_entry("ばか", "馬鹿", "抑制単語").suppresses
    assert not make_entry("ねこ", "猫", "名詞").suppresses


# --- the dictionary --------------------------------------------------------------------------


@pytest.fixture
def dictionary_path(tmp_path):
    return tmp_path / "tsuzuri" / FILE_NAME


def test_lookup_by_reading_and_prefix(dictionary_path):
    dictionary = UserDictionary(dictionary_path)
    dictionary.add("つづり", "綴り")
    dictionary.add("つづり", "ツヅリ", "固有名詞")
    dictionary.add("つづる", "綴る", "動詞ラ行五段")
    dictionary.add("つくえ", "机")
    assert [e.surface for e in dictionary.lookup("つづり")] == ["綴り", "ツヅリ"]
    assert dictionary.lookup("つ") == []
    assert [e.surface for e in dictionary.lookup_prefix("つづ")] == ["綴り", "ツヅリ", "綴る"]
    assert [e.surface for e in dictionary.lookup_prefix("つ")] == ["机", "綴り", "ツヅリ", "綴る"]
    dictionary.add("つづき", "続き")  # prefix lookup sees words added after the last one
    assert [e.surface for e in dictionary.lookup_prefix("つづ")][0] == "続き"


def test_add_same_word_updates_comment(dictionary_path):
    dictionary = UserDictionary(dictionary_path)
    assert dictionary.add("つづり", "綴り", comment="old")
    assert not dictionary.add("つづり", "綴り", comment="new")
    assert dictionary.lookup("つづり") == [UserEntry("つづり", "綴り", "名詞", "new")]


def test_add_rejects_what_the_file_cannot_hold(dictionary_path):
    dictionary = UserDictionary(dictionary_path)
    with pytest.raises(ValueError, match="empty surface"):
        dictionary.add("よみ", "")
    with pytest.raises(InvalidEntry, match="tab or a line break"):
        dictionary.add("よみ", "a\tb")
    assert len(dictionary) == 0


def test_remove(dictionary_path):
    dictionary = UserDictionary(dictionary_path)
    dictionary.add("つづり", "綴り")
    dictionary.add("つづり", "綴り", "固有名詞")
    dictionary.add("つづり", "ツヅリ")
    assert dictionary.remove("つづり", "綴り")
    assert not dictionary.remove("つづり", "綴り")
    assert [e.surface for e in dictionary.lookup("つづり")] == ["ツヅリ"]
    assert dictionary.remove("つづり", "ツヅリ")
    assert dictionary.lookup_prefix("つ") == []


def test_save_and_reload(dictionary_path):
    dictionary = UserDictionary(dictionary_path)
    assert not dictionary.save()  # nothing changed, nothing written
    dictionary.add("つづり", "綴り", comment="メモ")
    dictionary.add("ねこ", "猫")
    assert dictionary.save()
    assert not dictionary.save()
    reloaded = UserDictionary(dictionary_path)
    assert reloaded.entries() == dictionary.entries()
    assert reloaded.load_report.loaded == 2
    assert reloaded.load_report.skipped == []
    assert not list(dictionary_path.parent.glob(".*.tmp"))


def test_loading_is_lazy(dictionary_path):
    dictionary = UserDictionary(dictionary_path)
    dictionary_path.parent.mkdir(parents=True)
    dictionary_path.write_text("ねこ\t猫\t名詞\n", encoding="utf-8")  # written after construction
    assert [e.surface for e in dictionary.lookup("ねこ")] == ["猫"]


def test_missing_file_is_an_empty_dictionary(dictionary_path):
    dictionary = UserDictionary(dictionary_path)
    assert len(dictionary) == 0
    assert dictionary.load_report.skipped == []
    assert not dictionary_path.exists()


def test_corrupt_file_keeps_good_lines_and_reports_the_rest(dictionary_path):
    dictionary_path.parent.mkdir(parents=True)
    dictionary_path.write_bytes(
        "ねこ\t猫\t名詞\n".encode() + b"\x00\x01garbage\xff\n" + b"only one field\n" + "いぬ\t犬\t名詞\n".encode()
    )
    dictionary = UserDictionary(dictionary_path)
    assert [e.surface for e in dictionary.entries()] == ["猫", "犬"]
    report = dictionary.load_report
    assert report.loaded == 2
    assert [s.line_number for s in report.skipped] == [2, 3]
    assert "skipped 2 lines" in str(report)


def test_import_google_export(dictionary_path, tmp_path):
    export = tmp_path / "export.txt"
    export.write_bytes(codecs.BOM_UTF16_LE + (GOOGLE_EXPORT + "broken line\r\n").encode("utf-16-le"))
    dictionary = UserDictionary(dictionary_path)
    dictionary.add("つづり", "綴り")
    report = dictionary.import_file(export)
    assert report.loaded == 2  # つづり/綴り was already there: its comment is updated
    assert [(s.line_number, s.text) for s in report.skipped] == [(5, "broken line")]
    assert dictionary.lookup("つづり")[0].comment == "プロジェクト名"
    assert dictionary.save()
    assert len(UserDictionary(dictionary_path)) == 3


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_import_mozc_export_fixture(dictionary_path):
    dictionary = UserDictionary(dictionary_path)
    report = dictionary.import_file(FIXTURES / "mozc_user_dictionary.tsv")
    assert report.loaded == 4
    assert dictionary.lookup("もぐもぐや") == [UserEntry("もぐもぐや", "モグモグ屋", "固有名詞", "駅前のパン屋")]
    assert dictionary.lookup("おつ") == [UserEntry("おつ", "お疲れさまです", "短縮よみ")]
    assert [(s.line_number, s.reason) for s in report.skipped] == [
        (5, "expected reading, surface and part of speech separated by tabs, found 2 field(s)"),
        (6, "unknown part of speech 'めいし'"),
    ]


def test_import_microsoft_ime_export_fixture_maps_its_parts_of_speech(dictionary_path):
    assert (FIXTURES / "microsoft_ime_user_dictionary.txt").read_bytes().startswith(codecs.BOM_UTF16_LE)
    dictionary = UserDictionary(dictionary_path)
    report = dictionary.import_file(FIXTURES / "microsoft_ime_user_dictionary.txt")
    assert [(e.reading, e.surface, e.part_of_speech) for e in dictionary.entries()] == [
        ("ふわふわてい", "フワフワ亭", "地名"),
        ("ぽこぽこ", "ポコポコ", "名詞サ変"),
        ("とろとろ", "トロトロ", "名詞形動"),
        ("にゃんた", "ニャン太", "人名"),
    ]
    assert [(s.line_number, s.reason, s.text) for s in report.skipped] == [
        (12, "unknown part of speech 'あいまい品詞'", "ぷにぷに\tプニプニ\tあいまい品詞")
    ]


def test_microsoft_ime_names_apply_only_to_its_exports(dictionary_path):
    report = UserDictionary(dictionary_path).import_bytes("ぽこぽこ\tポコポコ\tさ変名詞\n".encode())
    assert [s.reason for s in report.skipped] == ["unknown part of speech 'さ変名詞'"]


def test_add_takes_only_mozc_parts_of_speech(dictionary_path):
    dictionary = UserDictionary(dictionary_path)
    with pytest.raises(InvalidEntry, match="unknown part of speech 'noun'"):
        dictionary.add("ねこ", "猫", "noun")
    assert dictionary.add("ねこ", "猫", "抑制単語")
    assert len(dictionary) == 1


def test_a_file_with_other_parts_of_speech_still_loads(dictionary_path):
    dictionary_path.parent.mkdir(parents=True)
    dictionary_path.write_text("ねこ\t猫\t普通名詞\n", encoding="utf-8")  # kept: it is the user's own file
    assert [e.surface for e in UserDictionary(dictionary_path).lookup("ねこ")] == ["猫"]


def test_failed_save_keeps_the_old_file(dictionary_path, monkeypatch):
    dictionary = UserDictionary(dictionary_path)
    dictionary.add("ねこ", "猫")
    dictionary.save()
    old = dictionary_path.read_bytes()
    dictionary.add("いぬ", "犬")

    def fail_replace(source, target):
        raise OSError("disk full")

    monkeypatch.setattr(storage.os, "replace", fail_replace)
    with pytest.raises(OSError, match="disk full"):
        dictionary.save()
    assert dictionary_path.read_bytes() == old
    assert not list(dictionary_path.parent.glob(".*.tmp"))


def test_stale_temp_files_are_removed_on_load(dictionary_path):
    dictionary_path.parent.mkdir(parents=True)
    stale = dictionary_path.parent / f".{FILE_NAME}.abc123.tmp"
    stale.write_text("torn")
    unrelated = dictionary_path.parent / ".other.tsv.abc123.tmp"
    unrelated.write_text("not ours")
    UserDictionary(dictionary_path).lookup("ねこ")
    assert not stale.exists()
    assert unrelated.exists()


def test_saved_file_is_private(dictionary_path):
    dictionary = UserDictionary(dictionary_path)
    dictionary.add("ねこ", "猫")
    dictionary.save()
    assert os.stat(dictionary_path).st_mode & 0o077 == 0


# --- location ------------------------------------------------------------------------------


def test_default_location_follows_xdg_data_home(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert user_data_dir() == tmp_path / "tsuzuri"
    assert UserDictionary().path == tmp_path / "tsuzuri" / FILE_NAME


@pytest.mark.parametrize("value", ["", "relative/path"])
def test_unset_or_relative_xdg_data_home_falls_back_to_home(monkeypatch, tmp_path, value):
    monkeypatch.setenv("XDG_DATA_HOME", value)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert user_data_dir() == tmp_path / ".local" / "share" / "tsuzuri"
