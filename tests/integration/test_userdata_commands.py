"""Managing your own words and what was learned with tsuzuri-client, as a user would: through a real daemon on
a private bus, each change seen by the next conversion and kept across a restart."""

import json
import os
import pwd
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from daemon.converter import Converter
from daemon.dbus_errors import ERROR_ACCESS_DENIED, CallError, check_same_user
from daemon.userdata.storage import UnwritableStore
from daemon.userdata.user_dictionary import UserDictionary
from tests.dbus_fixtures import client, multi_user_bus, private_bus, running_daemon

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture(scope="module")
def bus_address():
    with multi_user_bus() as address:
        yield address


@pytest.fixture(scope="module")
def home(bus_address, tmp_path_factory):
    """The daemon's home (its data under data/tsuzuri); no model: the dictionary converts."""
    home = tmp_path_factory.mktemp("home")
    with running_daemon(bus_address, home, model=str(home / "missing.gguf")):
        yield home


def run_client(address: str, *args: str) -> subprocess.CompletedProcess:
    done = client(address, *args)
    assert done.returncode == 0, done.stderr
    return done


def converted(address: str, romaji: str) -> str:
    """What the preedit shows after typing `romaji` and Space in a new session."""
    return json.loads(run_client(address, "type", romaji, "--key", "space", "--json").stdout)["preedit"]


def user_words(address: str) -> list[dict]:
    return json.loads(run_client(address, "dict", "list", "--json").stdout)


def learned(address: str, reading: str = "") -> list[tuple[str, str]]:
    choices = json.loads(run_client(address, "learning", "list", reading, "--json").stdout)
    return [(choice["reading"], choice["surface"]) for choice in choices]


def test_dict_add_converts_at_once_and_remove_takes_it_away(bus_address, home):
    assert converted(bus_address, "pikarikun") != "光里君"
    assert run_client(bus_address, "dict", "add", "ぴかりくん", "光里君").stdout == "added\n"
    assert converted(bus_address, "pikarikun") == "光里君"
    assert {"reading": "ぴかりくん", "surface": "光里君", "part_of_speech": "名詞", "comment": ""} in user_words(
        bus_address
    )
    saved = home / "data" / "tsuzuri" / "user_dictionary.tsv"
    assert "ぴかりくん\t光里君\t名詞\n" in saved.read_text(encoding="utf-8")  # saved at once, not in 30 s
    assert os.stat(saved).st_mode & 0o077 == 0

    run_client(bus_address, "dict", "remove", "ぴかりくん", "光里君")
    assert converted(bus_address, "pikarikun") != "光里君"
    assert "光里君" not in saved.read_text(encoding="utf-8")
    again = client(bus_address, "dict", "remove", "ぴかりくん", "光里君")
    assert again.returncode == 1 and "no word 光里君 for ぴかりくん" in again.stderr


def test_dict_add_refuses_what_mozc_would_not_take(bus_address, home):
    wrong_pos = client(bus_address, "dict", "add", "ねこ", "猫", "noun")
    assert wrong_pos.returncode == 1 and "unknown part of speech 'noun'" in wrong_pos.stderr
    empty = client(bus_address, "dict", "add", " ", "猫")
    assert empty.returncode == 1 and "empty reading" in empty.stderr
    assert not [word for word in user_words(bus_address) if word["surface"] == "猫"]


def test_import_a_mozc_export_reports_each_line_it_did_not_take(bus_address, home):
    done = client(bus_address, "dict", "import", str(FIXTURES / "mozc_user_dictionary.tsv"))
    assert done.returncode == 1  # not everything was imported: a script must notice
    assert done.stdout == "added 4 words\n"
    assert "2 lines not imported" in done.stderr
    assert "line 5: expected reading, surface and part of speech separated by tabs, found 2 field(s)" in done.stderr
    assert "line 6: unknown part of speech 'めいし'" in done.stderr
    assert converted(bus_address, "mogumoguya") == "モグモグ屋"
    assert {
        "reading": "もぐもぐや",
        "surface": "モグモグ屋",
        "part_of_speech": "固有名詞",
        "comment": "駅前のパン屋",
    } in user_words(bus_address)


def test_import_a_microsoft_ime_export(bus_address, home):
    done = client(bus_address, "dict", "import", str(FIXTURES / "microsoft_ime_user_dictionary.txt"))
    assert done.stdout == "added 4 words\n"
    assert "line 12: unknown part of speech 'あいまい品詞'" in done.stderr
    assert converted(bus_address, "fuwafuwatei") == "フワフワ亭"
    parts_of_speech = {word["reading"]: word["part_of_speech"] for word in user_words(bus_address)}
    assert parts_of_speech["ぽこぽこ"] == "名詞サ変"  # Microsoft IME's さ変名詞, as Mozc names it
    assert parts_of_speech["ふわふわてい"] == "地名"


def test_export_writes_mozc_tsv_that_imports_back(bus_address, home, tmp_path):
    run_client(bus_address, "dict", "add", "えくすぽーと", "書き出し", "名詞サ変", "--comment", "試験")
    exported = tmp_path / "words.tsv"
    run_client(bus_address, "dict", "export", str(exported))
    lines = exported.read_text(encoding="utf-8").splitlines()
    assert "えくすぽーと\t書き出し\t名詞サ変\t試験" in lines
    assert len(lines) == len(user_words(bus_address))
    assert os.stat(exported).st_mode & 0o077 == 0
    assert run_client(bus_address, "dict", "import", str(exported)).stdout == "added 0 words\n"


def test_learning_forget_removes_an_entry_at_once(bus_address, home):
    first = converted(bus_address, "kanji")
    done = run_client(bus_address, "type", "kanji", "--key", "space", "--key", "space", "--key", "Return", "--json")
    second = json.loads(done.stdout)["committed"]
    assert second != first
    assert learned(bus_address, "かんじ") == [("かんじ", second)]
    assert converted(bus_address, "kanji") == second  # what was learned comes first

    assert run_client(bus_address, "learning", "forget", "かんじ", second).stdout == "forgot 1 choices\n"
    assert learned(bus_address, "かんじ") == []
    assert converted(bus_address, "kanji") == first
    again = client(bus_address, "learning", "forget", "かんじ")
    assert again.returncode == 1 and "nothing learned for かんじ" in again.stderr


def test_learning_clear_forgets_everything(bus_address, home):
    run_client(bus_address, "type", "neko", "--key", "space", "--key", "Return")
    assert ("ねこ", "猫") in learned(bus_address)
    assert run_client(bus_address, "learning", "clear").stdout.startswith("forgot ")
    assert learned(bus_address) == []
    saved = home / "data" / "tsuzuri" / "learning.tsv"
    assert "猫" not in saved.read_text(encoding="utf-8")


def test_changes_survive_a_killed_daemon(tmp_path):
    with private_bus() as address:
        with running_daemon(address, tmp_path, model=str(tmp_path / "missing.gguf")) as daemon:
            run_client(address, "dict", "add", "ぴかりくん", "光里君")
            run_client(address, "type", "kanji", "--key", "space", "--key", "space", "--key", "Return")
            ((reading, surface),) = learned(address)
            run_client(address, "learning", "forget", reading, surface)
            daemon.send_signal(signal.SIGKILL)  # no save on the way out: only what was saved at once
            daemon.wait(10)
        with running_daemon(address, tmp_path, model=str(tmp_path / "missing.gguf")):
            assert converted(address, "pikarikun") == "光里君"
            assert learned(address) == []


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("dbus-send") is None,
    reason="needs root to run a caller as another user, and dbus-send",
)
def test_another_user_is_refused(bus_address, home):
    nobody = pwd.getpwnam("nobody").pw_uid

    def call_as_nobody(method: str, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [
                "dbus-send",
                f"--bus={bus_address}",
                "--print-reply",
                "--dest=org.tsuzuri.Tsuzuri1",
                "/org/tsuzuri/Tsuzuri1",
                f"org.tsuzuri.Tsuzuri1.{method}",
                *args,
            ],
            user=nobody,
            capture_output=True,
            text=True,
            timeout=30,
        )

    assert call_as_nobody("GetStatus").returncode == 0  # the bus lets them in: only the user's data is refused
    assert call_as_nobody("Convert", "string:きょう", "string:", "uint32:1").returncode == 0  # no personal data
    for method, args in [
        ("ListUserWords", []),
        ("ListLearned", ["string:"]),
        ("ClearLearned", []),
        ("AddUserWord", ["string:たにん", "string:他人", "string:名詞", "string:"]),
        ("CreateSession", []),
        ("ReloadConfig", []),
        ("GetSettings", []),
        ("SetSettings", ["dict:string:string:conversion.learning,false"]),
    ]:
        refused = call_as_nobody(method, *args)
        assert refused.returncode != 0 and "only the user the daemon runs as" in refused.stderr, (method, refused)
    assert not [word for word in user_words(bus_address) if word["surface"] == "他人"]


def test_the_caller_must_be_the_daemons_user():
    check_same_user(1000, 1000)
    with pytest.raises(CallError, match="only the user the daemon runs as") as refused:
        check_same_user(1001, 1000)
    assert refused.value.name == ERROR_ACCESS_DENIED


def test_a_store_whose_file_cannot_be_read_is_not_changed(tmp_path):
    (tmp_path / "user_dictionary.tsv").mkdir()  # a directory where the file should be
    words = UserDictionary(tmp_path / "user_dictionary.tsv")
    converter = Converter(user_dictionary=words)
    with pytest.raises(UnwritableStore, match="cannot be read"):
        converter.change_userdata(words, lambda store: store.add("ねこ", "猫"))
    assert len(words) == 0
