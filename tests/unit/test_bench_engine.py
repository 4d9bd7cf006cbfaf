"""`tsuzuri-bench engine --drafts / --sessions`: greedy decoding's guesses, and several sessions in one batch."""

import json

import pytest

from daemon.tools.bench import BATCHED_SESSIONS, DRAFT_KINDS, UBATCHES, batching_benchmark, draft_benchmark

pytestmark = pytest.mark.model  # a real (tiny) GGUF through llama.cpp

ITEMS = [
    {"input": "キョウハイイテンキ", "context": "", "expected": ["今日はいい天気"]},
    {"input": "ガッコウニイク", "context": "明日は", "expected": ["学校に行く"]},
]


def write_set(tmp_path):
    path = tmp_path / "set.jsonl"
    path.write_text("".join(json.dumps(item, ensure_ascii=False) + "\n" for item in ITEMS), encoding="utf-8")
    return path


def test_every_way_of_guessing_is_measured_on_the_same_conversions(tmp_path, model_path):
    result = draft_benchmark(write_set(tmp_path), limit=2, threads=2, model_name=str(model_path), lookahead="2,3,2")
    json.dumps(result)
    assert result["conversions"] == sum(len(item["input"]) for item in ITEMS)  # every prefix
    assert result["lookahead"] == {"window": 2, "ngram": 3, "per_token": 2}
    drafts = result["drafts"]
    assert list(drafts) == list(DRAFT_KINDS)
    assert drafts["none"]["acceptance_rate"] is None and drafts["none"]["outputs_unlike_plain"] == 0
    assert 0.9 <= drafts["none"]["steps_per_token"] <= 1.0
    for kind in DRAFT_KINDS:
        figures = drafts[kind]
        assert figures["ms"]["n"] == result["conversions"]
        assert figures["steps_per_token"] <= drafts["none"]["steps_per_token"]
    assert drafts["lookahead"]["guessed_per_step"] > 0


def test_batched_sessions_are_measured_against_separate_ones(tmp_path, model_path):
    result = batching_benchmark(write_set(tmp_path), threads=2, model_name=str(model_path), repeat=1)
    json.dumps(result)
    assert [r["sessions"] for r in result["rounds"]] == list(BATCHED_SESSIONS)
    for row in result["rounds"]:
        assert row["separate_ms"] > 0 and row["separate_mean_wait_ms"] <= row["separate_ms"]
        for n_ubatch in UBATCHES:
            assert row[f"batched_ms_ubatch_{n_ubatch or 'all'}"] > 0
            assert row[f"max_score_difference_ubatch_{n_ubatch or 'all'}"] < 1.0  # f16 KV: close, not equal
