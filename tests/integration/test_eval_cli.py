import json
import subprocess
import sys
from pathlib import Path

import pytest

from daemon.conversion import MAX_CONTEXT_CHARS
from daemon.tools import eval as tsuzuri_eval
from daemon.tools.eval import char_error_rate, load_items, main

REPO = Path(__file__).resolve().parents[2]
KEYS = {"acc@1", "acc@n", "mincer", "n", "p50_ms", "p95_ms", "mode", "items"}

ITEMS = [
    {"id": "a", "context": "", "input": "キョウハイイテンキデスネ", "expected": ["今日はいい天気ですね"]},
    {"id": "b", "context": "人称とは、", "input": "ブンポウノヨウゴデ、", "expected": ["文法の用語で、"]},
    # The dictionary's top-1 is 認証; 人称 is further down.
    {"id": "c", "context": "", "input": "ニンショウトハ、", "expected": ["人称とは、"]},
]


WORDS = [
    {"id": "w1", "context": "", "input": "キョウ", "expected": ["今日"]},
    {"id": "w2", "context": "", "input": "ニンショウトハ、", "expected": ["人称とは、"]},
    {"id": "w3", "context": "", "input": "テンキ", "expected": ["天気"]},  # past --limit 2
]


def write_jsonl(path: Path, items: list[dict]) -> Path:
    path.write_text("".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items), encoding="utf-8")
    return path


@pytest.fixture
def items_file(tmp_path) -> Path:
    return write_jsonl(tmp_path / "items.jsonl", ITEMS)


@pytest.fixture
def suite_dir(tmp_path) -> Path:
    """Two JSON Lines sets, Mozc's evaluation.tsv one level down, and a file that is no set."""
    suite = tmp_path / "suite"
    (suite / "mozc").mkdir(parents=True)
    write_jsonl(suite / "sentences.jsonl", ITEMS)
    write_jsonl(suite / "words.jsonl", WORDS)
    (suite / "mozc" / "evaluation.tsv").write_text(
        "# status\tinput\toutput\tcommand\targument\tversion\n"
        "OK:\tきょうはいいてんきですね\t今日はいい天気ですね\tConversion Expected\t今日はいい天気ですね\t1\n"
        "OK:\tこれはうれしいごさんです\tこれは嬉しい誤算です\tConversion Match\t誤算\t1\n",
        encoding="utf-8",
    )
    (suite / "README.md").write_text("# not a set\n", encoding="utf-8")
    return suite


def last_json_line(output: str) -> dict:
    return json.loads(output.strip().splitlines()[-1])


def test_json_scores(items_file, tmp_path, capsys):
    per_item = tmp_path / "per_item.jsonl"
    assert main([str(items_file), "--mode", "dictionary", "--n", "10", "--json", "--per-item", str(per_item)]) == 0
    scores = last_json_line(capsys.readouterr().out)
    assert set(scores) == KEYS
    assert scores["acc@1"] == pytest.approx(2 / 3, abs=1e-4)
    assert scores["acc@n"] == 1.0  # 人称とは、 is among the top 10
    assert scores["mincer"] == 0.0  # every answer is among the top 10
    assert scores["n"] == 10 and scores["mode"] == "dictionary" and scores["items"] == 3
    assert 0 < scores["p50_ms"] <= scores["p95_ms"]

    records = [json.loads(line) for line in per_item.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in records] == ["a", "b", "c"]
    assert records[0]["candidates"][0] == "今日はいい天気ですね"
    assert records[2]["correct@1"] is False and records[2]["correct@n"] is True
    assert 1 < len(records[2]["candidates"]) <= 10


def test_errors_classify_each_wrong_first_candidate(items_file, tmp_path, capsys):
    per_item = tmp_path / "per_item.jsonl"
    assert (
        main([str(items_file), "--mode", "dictionary", "--n", "10", "--json", "--errors", "--per-item", str(per_item)])
        == 0
    )
    output = capsys.readouterr().out
    assert "errors variant 0  wrong_kanji 1  segmentation 0" in output
    scores = last_json_line(output)
    assert scores["errors"] == {"variant": 0, "wrong_kanji": 1, "segmentation": 0, "unknown_word": 0, "not_in_pool": 0}
    assert scores["acc@1_or_variant"] == scores["acc@1"]
    records = [json.loads(line) for line in per_item.read_text(encoding="utf-8").splitlines()]
    assert [record.get("error") for record in records] == [None, None, "wrong_kanji"]  # 認証 for 人称, in the pool


def test_mincer_with_one_candidate(items_file, capsys):
    main([str(items_file), "--n", "1", "--json"])
    scores = last_json_line(capsys.readouterr().out)
    assert scores["acc@n"] == scores["acc@1"]
    assert scores["mincer"] == pytest.approx((2 / 5) / 3, abs=1e-4)  # 認証とは、 vs 人称とは、: 2 of 5 characters


def test_json_list_with_long_key_names_and_limit(tmp_path, capsys):
    path = tmp_path / "items.json"
    path.write_text(
        json.dumps(
            [
                {"input": item["input"], "context_text": item["context"], "expected_output": item["expected"]}
                for item in ITEMS
            ],
            ensure_ascii=False,
        ),
        encoding="utf-8",
    )
    assert main([str(path), "--limit", "2", "--json"]) == 0
    scores = last_json_line(capsys.readouterr().out)
    assert scores["items"] == 2 and scores["acc@1"] == 1.0 and scores["mode"] == "auto"
    assert [item.context for item in load_items(path)] == ["", "人称とは、", ""]


def test_no_model_mode_is_the_daemon_without_a_model(items_file, model_path, tmp_path, capsys):
    runs = []
    for extra in ([], ["--model", str(model_path)]):  # a model named or not, none is loaded
        per_item = tmp_path / f"per_item{len(runs)}.jsonl"
        assert main([str(items_file), "--mode", "no-model", "--json", "--per-item", str(per_item), *extra]) == 0
        assert last_json_line(capsys.readouterr().out)["mode"] == "no-model"
        runs.append([json.loads(line)["candidates"] for line in per_item.read_text(encoding="utf-8").splitlines()])
    assert runs[0] == runs[1]
    assert runs[0][0][0] == "今日はいい天気ですね" and runs[0][2][:2] == ["認証とは、", "人称とは、"]


def test_the_spelling_policy_is_the_daemons_setting(tmp_path, capsys):
    path = tmp_path / "items.jsonl"
    path.write_text(
        '{"id": "a", "input": "そのときはれんらくする", "expected": ["そのときは連絡する"]}\n', encoding="utf-8"
    )
    scores = []
    for spelling in ("ranked", "official"):
        assert main([str(path), "--mode", "no-model", "--spelling", spelling, "--json"]) == 0
        scores.append(last_json_line(capsys.readouterr().out)["acc@1"])
    assert scores == [0.0, 1.0]  # ranked: その時は連絡する


def test_the_word_vectors_can_be_left_out_to_measure_them(tmp_path, capsys):
    path = tmp_path / "items.jsonl"
    path.write_text(
        '{"id": "a", "input": "かべにぼうしとこーとがかかっていた", "expected": ["壁に帽子とコートがかかっていた"]}\n',
        encoding="utf-8",
    )
    scores = []
    for leave_out in ([], ["--no-word-vectors"]):
        assert main([str(path), "--mode", "no-model", "--json", *leave_out]) == 0
        scores.append(last_json_line(capsys.readouterr().out)["acc@1"])
    assert scores == [1.0, 0.0]  # without them: 壁に防止と…


def test_mozc_evaluation_tsv(tmp_path, capsys):
    path = tmp_path / "evaluation.tsv"
    path.write_text(
        "# status\tinput\toutput\tcommand\targument\tversion\n"
        "OK:\tきょうはいいてんきですね\t今日はいい天気ですね\tConversion Expected\t"
        "今日はいい天気ですね\t1\n"
        "FAILED:\tにんしょうとは\t認証とは\tConversion Expected\t人称とは\t1\n"
        "OK:\tこれはうれしいごさんです\tこれは嬉しい誤算です\tConversion Match\t誤算\t1\n"
        "OK:\tへんかん\t変換\tConversion Expected 9\t返還\t1\n",
        encoding="utf-8",
    )
    items = load_items(path)
    assert [(i.reading, i.expected) for i in items] == [
        ("キョウハイイテンキデスネ", ("今日はいい天気ですね",)),
        ("ニンショウトハ", ("人称とは",)),
    ]
    assert main([str(path), "--json"]) == 0
    scores = last_json_line(capsys.readouterr().out)
    assert scores["items"] == 2 and scores["acc@1"] == 0.5


def test_suite_json_lines(suite_dir, capsys):
    assert main(["--suite", str(suite_dir), "--mode", "dictionary", "--json", "--limit", "2"]) == 0
    *rows, summary = [json.loads(line) for line in capsys.readouterr().out.strip().splitlines()]
    assert [(row["set"], row["items"], row["acc@1"]) for row in rows] == [
        ("sentences", 2, 1.0),
        ("words", 2, 0.5),
        ("mozc/evaluation", 1, 1.0),
    ]
    assert all(set(row) == KEYS | {"set"} and row["mode"] == "dictionary" for row in rows)
    assert summary == {"suite": True, "mode": "dictionary", "sets": 3, "mean_acc@1": 0.8333, "min_acc@1": 0.5}


def test_suite_table(suite_dir, capsys):
    assert main(["--suite", str(suite_dir), "--mode", "dictionary", "--n", "10"]) == 0
    header, *rows, footer = capsys.readouterr().out.strip().splitlines()[1:]
    assert header.split() == ["set", "items", "acc@1", "acc@10", "MinCER", "p50", "ms", "p95", "ms"]
    assert [row.split()[:3] for row in rows] == [
        ["sentences", "3", "0.6667"],
        ["words", "3", "0.6667"],
        ["mozc/evaluation", "1", "1.0000"],
    ]
    assert footer == "mean acc@1 0.7778  min acc@1 0.6667"


def test_suite_defaults_to_shared_eval_beside_the_repository():
    assert tsuzuri_eval._parser().parse_args(["--suite"]).suite == REPO.parent / "shared" / "eval"


@pytest.mark.parametrize("argv", [[], ["items.jsonl", "--suite"], ["--suite", "no-such-dir"]])
def test_suite_or_items_misuse_is_a_usage_error(argv, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2


@pytest.mark.parametrize("mode", ["greedy", "beam", "constrained"])
def test_model_modes_without_a_model_fail_with_one_line(items_file, capsys, mode):
    assert main([str(items_file), "--mode", mode]) == 2
    err = capsys.readouterr().err.strip()
    assert err.splitlines() == [f"tsuzuri-eval: error: mode {mode} needs a model: pass --model NAME_OR_PATH"]


def test_broken_model_fails_with_one_line(items_file, tmp_path, capsys):
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + b"\0" * 100)
    assert main([str(items_file), "--mode", "greedy", "--model", str(broken)]) == 2
    assert capsys.readouterr().err.strip().startswith("tsuzuri-eval: error: model ")


@pytest.mark.parametrize("mode", ["greedy", "beam", "constrained", "auto", "constrained-auto"])
def test_model_modes_run_on_a_real_gguf(items_file, model_path, capsys, mode):
    assert main([str(items_file), "--mode", mode, "--model", str(model_path), "--n", "10", "--json"]) == 0
    scores = last_json_line(capsys.readouterr().out)
    assert scores["mode"] == mode and scores["items"] == 3
    if mode in ("auto", "constrained-auto"):  # a random model's candidates may come first; the dictionary's count
        assert scores["acc@n"] > 0


def test_modes_come_from_one_registry(items_file, capsys, monkeypatch):
    monkeypatch.setitem(tsuzuri_eval.CONVERTERS, "greedy", lambda options: lambda reading, context, n: [reading])
    assert main([str(items_file), "--mode", "greedy", "--json"]) == 0
    scores = last_json_line(capsys.readouterr().out)
    assert scores["mode"] == "greedy" and scores["acc@1"] == 0.0


def test_items_take_the_left_context_a_session_reads(tmp_path, capsys, monkeypatch):
    seen: list[str] = []
    monkeypatch.setitem(
        tsuzuri_eval.CONVERTERS, "greedy", lambda options: lambda reading, context, n: seen.append(context) or []
    )
    before = "前" * 300 + "後" * 200
    path = write_jsonl(tmp_path / "long.jsonl", [{"input": "キョウ", "context": before, "expected": ["今日"]}])
    assert main([str(path), "--mode", "greedy"]) == 0
    assert main([str(path), "--mode", "greedy", "--context-chars", "40"]) == 0
    assert main([str(path), "--mode", "greedy", "--context-chars", "0"]) == 0
    assert seen == [before[-MAX_CONTEXT_CHARS:], before[-40:], ""]  # the daemon's default: all it can take
    with pytest.raises(SystemExit):
        main([str(path), "--mode", "greedy", "--context-chars", str(MAX_CONTEXT_CHARS + 1)])
    assert f"--context-chars must be 0 to {MAX_CONTEXT_CHARS}" in capsys.readouterr().err


def test_runs_as_a_module(items_file):
    done = subprocess.run(
        [sys.executable, "-m", "daemon.tools.eval", str(items_file), "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert set(last_json_line(done.stdout)) == KEYS
    assert "3/3 items" in done.stderr  # progress goes to stderr


def test_char_error_rate():
    assert char_error_rate("今日は", "今日は") == 0.0
    assert char_error_rate("今日わ", "今日は") == pytest.approx(1 / 3)
    assert char_error_rate("", "今日は") == 1.0
    assert char_error_rate("今日はね", "今日は") == pytest.approx(1 / 3)
