"""Hostile input must give clear errors, never a llama.cpp abort. Each case runs in a child process:
an abort (SIGABRT) would kill pytest itself, here it fails the test with the child's exit status."""

import json

import pytest

from tests.conftest import run_isolated

PRELUDE = """
import json, sys, threading
from daemon.engine import Engine, EngineUnavailable
from daemon.engine.decoder import SessionDecoder
from daemon.engine.native import Context, LlamaError, Model
engine = Engine(n_threads=1)
engine.load({path!r})
assert engine.wait(60).state.value == "ready", engine.status
def outcome(fn):
    try:
        return ["ok", [c.text for c in fn()]]
    except (ValueError, TypeError, EngineUnavailable, LlamaError) as exc:
        return ["error", type(exc).__name__ + ": " + str(exc)]
"""


def run_cases(model_path, body: str) -> dict:
    result = run_isolated(PRELUDE.format(path=str(model_path)) + body)
    assert result.returncode == 0, f"child died with {result.returncode}: {result.stderr[-2000:]}"
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_beam_widths_zero_one_and_past_the_limit(model_path):
    out = run_cases(
        model_path,
        """
print(json.dumps({str(n): outcome(lambda: engine.convert("かんじ", "", n)) for n in (0, 1, 200, 10**9, -3)}))
""",
    )
    assert out["0"][0] == "error" and "positive integer" in out["0"][1]
    assert out["-3"][0] == "error"
    assert out["1"][0] == "ok"
    assert out["200"][0] == "ok" and len(out["200"][1]) >= 1  # clamped to 128, not aborted
    assert out["1000000000"][0] == "ok"


def test_reading_lengths(model_path):
    out = run_cases(
        model_path,
        """
cases = {"0": "", "1": "あ", "500": "あいうえお、" * 84, "too_long": "あ" * 5000}
print(json.dumps({k: outcome(lambda v=v: engine.convert(v, "", 3)) for k, v in cases.items()}))
""",
    )
    assert out["0"] == ["ok", []]
    assert out["1"][0] == "ok" and len(out["1"][1]) <= 3
    assert out["500"][0] == "ok"
    assert out["too_long"][0] == "error" and "exceeds" in out["too_long"][1]


def test_strange_characters(model_path):
    out = run_cases(
        model_path,
        """
cases = {"emoji": "😀🐈‍⬛👍🏽", "controls": "か\\x00\\x07\\x1b[31mな\\x7f", "surrogates": "か\\ud800な\\udfff",
         "non_kana": "abc 123 !?", "markers": "\\uee00\\uee01\\uee02かな", "only_controls": "\\x00\\x01",
         "combining": "か\\u3099\\u0301", "rtl": "\\u202eかな", "huge_codepoints": "\\U0010ffff\\U000e0001"}
print(json.dumps({k: outcome(lambda v=v: engine.convert(v, v, 4)) for k, v in cases.items()}))
""",
    )
    for name, (kind, texts) in out.items():
        assert kind == "ok", (name, texts)
    assert out["only_controls"] == ["ok", []]
    assert not [text for text in out["markers"][1] if set(text) & set("\uee00\uee01\uee02")]  # never passed on


def test_wrong_argument_types(model_path):
    out = run_cases(
        model_path,
        """
cases = {"bytes": lambda: engine.convert(b"kana", "", 1), "none_ctx": lambda: engine.convert("か", None, 1),
         "float_n": lambda: engine.convert("か", "", 2.0), "bool_n": lambda: engine.convert("か", "", True)}
print(json.dumps({k: outcome(f) for k, f in cases.items()}))
""",
    )
    assert all(kind == "error" for kind, _ in out.values()), out


def test_concurrent_calls_on_one_session(model_path):
    out = run_cases(
        model_path,
        """
session = engine.session()
results, errors = [], []
def worker(i):
    try:
        for j in range(5):
            results.append(len(session.convert("きょうはいいてんき"[: 3 + (i + j) % 6], "", 1 + (i * j) % 4)))
    except Exception as exc:
        errors.append(repr(exc))
threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
[t.start() for t in threads]; [t.join() for t in threads]
print(json.dumps({"results": len(results), "errors": errors}))
""",
    )
    assert out == {"results": 40, "errors": []}


def test_native_guards_refuse_out_of_range_arguments(model_path):
    out = run_cases(
        model_path,
        """
model = engine._loaded.model
ctx = Context(model, n_ctx=256, n_seq=4, n_batch=16)
cases = {
    "seq_cp_255": lambda: ctx.seq_cp(0, 255), "seq_cp_256": lambda: ctx.seq_cp(0, 256),
    "seq_rm_neg": lambda: ctx.seq_rm(-2), "seq_keep_9": lambda: ctx.seq_keep(9),
    "batch_too_big": lambda: ctx.decode([5] * 17, list(range(17)), [0] * 17, [False] * 17),
    "bad_token": lambda: ctx.decode([model.n_vocab], [0], [0], [True]),
    "bad_seq": lambda: ctx.decode([5], [0], [4], [True]),
    "bad_pos": lambda: ctx.decode([5], [10**6], [0], [True]),
    "ragged": lambda: ctx.decode([5, 6], [0], [0], [True]),
    "n_seq_257": lambda: Context(model, n_ctx=512, n_seq=257, n_batch=300),
    "batch_below_seqs": lambda: Context(model, n_ctx=512, n_seq=64, n_batch=32),
    "gap_in_positions": lambda: ctx.decode([5, 6], [0, 5], [1, 1], [False, True]),
    "shared_row_bad_seq": lambda: ctx.decode([5], [0], [(0, 4)], [True]),
    "shared_row_repeated_seq": lambda: ctx.decode([5], [0], [(1, 1)], [True]),
    "shared_row_no_seq": lambda: ctx.decode([5], [0], [()], [True]),
    "shared_row_diverged": lambda: (ctx.decode([5], [0], [2], [True]), ctx.decode([6], [0], [(2, 3)], [True])),
}
def attempt(f):
    try:
        f(); return "ok"
    except LlamaError as exc:
        return "refused: " + str(exc)
print(json.dumps({k: attempt(f) for k, f in cases.items()}))
""",
    )
    assert all(v.startswith("refused") for v in out.values()), out


@pytest.mark.parametrize("damage", ["garbage", "truncated", "header_only", "empty", "wrong_magic"])
def test_corrupt_model_file_fails_cleanly(model_path, tmp_path, damage):
    data = model_path.read_bytes()
    bad = tmp_path / f"{damage}.gguf"
    bad.write_bytes(
        {
            "garbage": b"GGUF" + bytes(range(256)) * 64,
            "truncated": data[: len(data) // 2],
            "header_only": data[:4096],
            "empty": b"",
            "wrong_magic": b"GGML" + data[4:],
        }[damage]
    )
    result = run_isolated(f"""
from daemon.engine import Engine
e = Engine()
e.load({str(bad)!r})
s = e.wait(60)
print(s.state.value, "|", s.reason)
""")
    assert result.returncode == 0, result.stderr[-2000:]
    state, reason = result.stdout.strip().split(" | ", 1)
    assert state == "failed" and reason.strip()
