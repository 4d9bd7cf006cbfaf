import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from daemon.userdata.learning import (
    FILE_NAME,
    LearnedChoice,
    LearningHistory,
    chosen_again,
    decayed_weight,
    format_choice_line,
    parse_choice_line,
)
from daemon.paths import user_data_dir
from daemon.userdata.storage import InvalidEntry

DAY = 86_400.0
REPO_ROOT = Path(__file__).resolve().parents[2]


class FakeClock:
    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, days: float) -> None:
        self.now += days * DAY


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def history_path(tmp_path):
    return tmp_path / "tsuzuri" / FILE_NAME


def make_history(path, clock, **options) -> LearningHistory:
    return LearningHistory(path, clock=clock, half_life_days=14, **options)


# --- pure parts ------------------------------------------------------------------------------


def test_weight_halves_every_half_life():
    choice = LearnedChoice("はし", "橋", 4.0, last_used=0.0)
    assert decayed_weight(choice, now=0.0, half_life_seconds=DAY) == 4.0
    assert decayed_weight(choice, now=2 * DAY, half_life_seconds=DAY) == pytest.approx(1.0)
    assert decayed_weight(choice, now=-DAY, half_life_seconds=DAY) == 4.0  # clock set back


def test_choosing_again_adds_one_to_the_decayed_weight():
    first = chosen_again(None, "はし", "橋", now=0.0, half_life_seconds=DAY)
    assert first == LearnedChoice("はし", "橋", 1.0, 0.0)
    second = chosen_again(first, "はし", "橋", now=DAY, half_life_seconds=DAY)
    assert second == LearnedChoice("はし", "橋", 1.5, DAY)


def test_line_format_round_trips():
    choice = LearnedChoice("はし", "橋", 2.5, 1_700_000_000.0)
    assert parse_choice_line(format_choice_line(choice)) == choice


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("はし\t橋\t1", "expected 4 tab-separated fields, found 3"),
        ("はし\t橋\tmany\t0", "must be numbers"),
        ("はし\t橋\t-1\t0", "weight must be a positive number"),
        ("はし\t橋\tnan\t0", "weight must be a positive number"),
        ("はし\t橋\t1\tinf", "last-used time must be a Unix time"),
        ("\t橋\t1\t0", "empty reading"),
        ("はし\t\t1\t0", "empty surface"),
    ],
)
def test_bad_lines_are_rejected_with_a_reason(line, reason):
    with pytest.raises(InvalidEntry, match=reason):
        parse_choice_line(line)


# --- ranking ---------------------------------------------------------------------------------


def test_unknown_reading_has_no_ranking(history_path, clock):
    assert make_history(history_path, clock).ranked("はし") == []


def test_frequent_choice_ranks_first(history_path, clock):
    history = make_history(history_path, clock)
    for _ in range(3):
        history.record("はし", "橋")
        clock.advance(0.01)
    history.record("はし", "箸")
    assert history.ranked("はし") == ["橋", "箸"]


def test_recent_choice_wins_a_tie(history_path, clock):
    history = make_history(history_path, clock)
    history.record("はし", "橋")
    clock.advance(1)
    history.record("はし", "箸")
    assert history.ranked("はし") == ["箸", "橋"]


def test_old_frequency_fades(history_path, clock):
    history = make_history(history_path, clock)
    for _ in range(5):
        history.record("はし", "橋")
    clock.advance(60)  # over four half-lives: 5 → ~0.26
    history.record("はし", "箸")
    assert history.ranked("はし") == ["箸", "橋"]


def test_forget_and_clear(history_path, clock):
    history = make_history(history_path, clock)
    history.record("はし", "橋")
    history.record("はし", "箸")
    history.record("かみ", "紙")
    assert history.forget("はし", "橋") == 1
    assert history.forget("はし", "橋") == 0
    assert history.forget("ねこ", "猫") == 0
    assert history.ranked("はし") == ["箸"]
    assert len(history) == 2
    assert history.clear() == 2
    assert len(history) == 0
    assert history.ranked("かみ") == []


def test_forget_every_choice_for_a_reading(history_path, clock):
    history = make_history(history_path, clock)
    for reading, surface in [("はし", "橋"), ("はし", "箸"), ("かみ", "紙")]:
        history.record(reading, surface)
    assert history.forget("はし") == 2
    assert history.ranked("はし") == [] and history.ranked("かみ") == ["紙"]
    assert history.save()
    assert [choice.reading for choice in make_history(history_path, clock).choices()] == ["かみ"]


def test_choices_by_reading_most_valuable_first(history_path, clock):
    history = make_history(history_path, clock)
    for reading, surface in [("はし", "箸"), ("かみ", "紙"), ("はし", "橋"), ("はし", "橋")]:
        history.record(reading, surface)
        clock.advance(0.01)
    assert [(c.reading, c.surface) for c in history.choices()] == [("かみ", "紙"), ("はし", "橋"), ("はし", "箸")]
    assert [c.surface for c in history.choices("はし")] == history.ranked("はし") == ["橋", "箸"]
    assert history.choices("ねこ") == []


def test_record_rejects_what_the_file_cannot_hold(history_path, clock):
    history = make_history(history_path, clock)
    with pytest.raises(ValueError):
        history.record("は\tし", "橋")
    with pytest.raises(ValueError):
        history.record("はし", "")
    assert len(history) == 0


# --- size cap --------------------------------------------------------------------------------


def test_cap_evicts_the_least_valuable(history_path, clock):
    history = make_history(history_path, clock, max_entries=3)
    history.record("ふるい", "古い")  # once, long ago: least valuable
    clock.advance(30)
    for _ in range(3):
        history.record("よく", "良く")
    history.record("たまに", "偶に")
    clock.advance(1)
    history.record("あたらしい", "新しい")
    assert len(history) == 3
    assert history.ranked("ふるい") == []
    assert history.ranked("よく") == ["良く"]


def test_the_choice_just_made_is_never_evicted(history_path, clock):
    history = make_history(history_path, clock, max_entries=2)
    for reading in ("いち", "に"):
        for _ in range(5):
            history.record(reading, reading.upper())
    history.record("さん", "三")  # weight 1 against 5s: still kept
    assert history.ranked("さん") == ["三"]
    assert len(history) == 2


def test_cap_applies_to_a_loaded_file(history_path, clock):
    big = make_history(history_path, clock)
    for index in range(10):
        clock.advance(1)
        big.record(f"よみ{index}", "表層")
    big.save()
    small = make_history(history_path, clock, max_entries=4)
    assert len(small) == 4
    assert small.ranked("よみ9") == ["表層"]  # the most recent survive
    assert small.ranked("よみ0") == []


# --- persistence -----------------------------------------------------------------------------


def test_save_and_reload(history_path, clock):
    history = make_history(history_path, clock)
    history.record("はし", "橋")
    history.record("はし", "橋")
    clock.advance(1)
    history.record("はし", "箸")
    assert history.save()
    assert not history.save()
    reloaded = make_history(history_path, clock)
    assert reloaded.ranked("はし") == ["橋", "箸"]
    assert reloaded.load_report.loaded == 2
    assert reloaded.load_report.skipped == []


def test_default_location_follows_xdg_data_home(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert LearningHistory().path == user_data_dir() / FILE_NAME == tmp_path / "tsuzuri" / FILE_NAME


def test_corrupt_file_keeps_good_lines_and_reports_the_rest(history_path, clock):
    history_path.parent.mkdir(parents=True)
    good = [
        format_choice_line(LearnedChoice("はし", "橋", 2.0, clock.now)),
        format_choice_line(LearnedChoice("かみ", "紙", 1.0, clock.now)),
    ]
    history_path.write_bytes(
        b"# header\n"
        + good[0].encode()
        + b"\n"
        + b"\x89PNG\r\n\x1a\n"  # binary garbage
        + "はし\t箸\tlots\t0\n".encode()
        + b"no tabs at all\n"
        + good[1].encode()
        + b"\n"
        + format_choice_line(LearnedChoice("はし", "端", 1.0, clock.now)).encode()  # no final newline
    )
    history = make_history(history_path, clock)
    assert history.ranked("はし") == ["橋", "端"]
    assert history.ranked("かみ") == ["紙"]
    report = history.load_report
    assert report.loaded == 3
    assert [(s.line_number, s.reason) for s in report.skipped] == [
        (3, "invalid bytes for the file's encoding"),
        (4, "expected 4 tab-separated fields, found 1"),
        (5, "weight and last-used time must be numbers"),
        (6, "expected 4 tab-separated fields, found 1"),
    ]


# The writer records one new choice per iteration, says so, and saves, forever, until killed. Each
# version of the file is therefore predictable: the header, BASE_SIZE base lines, then one line
# per saved version; every choice it said it recorded must survive (the journal keeps the rest).
_WRITER = """
import sys
from pathlib import Path
from daemon.userdata.learning import LearningHistory

history = LearningHistory(Path(sys.argv[1]), max_entries=10**6, clock=lambda: 1e9)
for index in range({base_size}):
    history.record(f"きそ{{index}}", "基礎" * 20)  # big enough that a save takes a while
print("ready", flush=True)
version = 0
while True:
    version += 1
    history.record(f"はん{{version}}", "版")
    print(version, flush=True)
    history.save()
"""
BASE_SIZE = 2000


def expected_file(versions: int) -> bytes:
    lines = [LearningHistory.HEADER]
    lines += [format_choice_line(LearnedChoice(f"きそ{i}", "基礎" * 20, 1.0, 1e9)) for i in range(BASE_SIZE)]
    lines += [format_choice_line(LearnedChoice(f"はん{v}", "版", 1.0, 1e9)) for v in range(1, versions + 1)]
    return "".join(f"{line}\n" for line in lines).encode()


@pytest.mark.slow
@pytest.mark.slow
def test_killed_writer_leaves_an_old_or_new_file_never_a_torn_one_and_loses_no_choice(tmp_path):
    rng = random.Random(20261129)
    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    saw_a_save = False
    for round_number in range(20):
        path = tmp_path / f"round{round_number}" / FILE_NAME
        writer = subprocess.Popen(
            [sys.executable, "-c", _WRITER.format(base_size=BASE_SIZE), str(path)],
            stdout=subprocess.PIPE,
            env=environment,
        )
        assert writer.stdout.readline() == b"ready\n"
        time.sleep(rng.uniform(0.0, 0.3))
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        recorded = [int(line) for line in writer.stdout.read().split()]
        writer.stdout.close()

        history = LearningHistory(path, clock=lambda: 1e9)
        if recorded:
            assert history.ranked(f"はん{recorded[-1]}") == ["版"], f"round {round_number}: a choice was lost"
        if not path.exists():  # killed before the first save completed: the "old" file is none
            continue
        data = path.read_bytes()
        versions = data.count("はん".encode())
        assert data == expected_file(versions), f"round {round_number}: torn file"
        saw_a_save = True
        assert len(history) >= BASE_SIZE + versions
        assert history.load_report.skipped == []
        assert not list(path.parent.glob(".*.tmp"))  # a killed save's temp file is cleaned up
    assert saw_a_save


def test_a_file_that_cannot_be_read_is_reported_and_left_alone(tmp_path):
    path = tmp_path / FILE_NAME
    path.mkdir()  # a directory where the file should be
    history = LearningHistory(path, clock=lambda: 1e9)
    history.record("きょう", "今日")  # learning goes on in memory
    assert history.ranked("きょう") == ["今日"]
    assert "cannot be read" in str(history.load_report) and "IsADirectoryError" in str(history.load_report)
    assert history.save() is False
    assert path.is_dir() and list(path.iterdir()) == []


def test_damaged_lines_are_copied_aside_before_a_save_drops_them(tmp_path):
    path = tmp_path / FILE_NAME
    original = "きょう\t今日\t1\t1000000000\nthis line is garbage\n".encode()
    path.write_bytes(original)
    history = LearningHistory(path, clock=lambda: 1e9)
    history.record("かんじ", "漢字")
    assert history.save()
    damaged = tmp_path / f"{FILE_NAME}.damaged"
    assert damaged.read_bytes() == original and damaged.stat().st_mode & 0o777 == 0o600
    assert "garbage" not in path.read_text(encoding="utf-8")
    history.record("かんじ", "感じ")
    history.save()
    assert damaged.read_bytes() == original  # copied once, not overwritten by a later save


def test_the_journal_is_private_and_folded_into_the_file_by_a_save(tmp_path):
    path = tmp_path / FILE_NAME
    history = LearningHistory(path, clock=lambda: 1e9)
    history.record("きょう", "今日")
    journal = tmp_path / f"{FILE_NAME}.journal"
    assert journal.stat().st_mode & 0o777 == 0o600
    assert LearningHistory(path, clock=lambda: 1e9).ranked("きょう") == ["今日"]  # replayed, as after a kill
    history.save()
    assert not journal.exists()
    assert LearningHistory(path, clock=lambda: 1e9).ranked("きょう") == ["今日"]


def test_a_choice_that_cannot_be_written_says_why_until_a_write_succeeds(tmp_path, clock):
    folder = tmp_path / "tsuzuri"
    history = LearningHistory(folder / FILE_NAME, clock=clock)
    history.record("はん", "版")
    assert history.keeping_problem == ""
    history.save()
    (folder / FILE_NAME).unlink()
    folder.rmdir()
    folder.write_text("", encoding="utf-8")  # a file where the folder was: every write fails (root too)
    history.record("かん", "缶")
    assert history.ranked("かん") == ["缶"]  # kept in memory
    assert "learning.tsv.journal cannot be written" in history.keeping_problem
    with pytest.raises(OSError):
        history.save()
    assert "learning.tsv cannot be written" in history.keeping_problem
    folder.unlink()
    folder.mkdir()
    history.record("てん", "点")  # the journal is written again
    assert history.keeping_problem == ""
    assert history.save() and history.keeping_problem == ""
