"""`tsuzuri-bench live`: typing through the real daemon with live conversion, with and without a model."""

import json
import shutil

import pytest

from daemon.tools.bench import live_benchmark, live_items, romaji_keys

ITEMS = [
    {"input": "キョウハイイテンキ", "context": "", "expected": ["今日はいい天気"]},
    {"input": "ガッコウニイク", "context": "明日は", "expected": ["学校に行く"]},
    {"input": "ホンヲヨンダ。", "context": "", "expected": ["本を読んだ。"]},
]


def test_readings_are_spelled_as_people_type_them():
    assert romaji_keys("がっこう") == "gakkou"  # っ doubles the next consonant
    assert romaji_keys("はんい") == "hanni"  # ん before a vowel needs nn
    assert romaji_keys("さんぽ") == "sanpo"
    assert romaji_keys("キョウハ、") == "kyouha,"
    assert romaji_keys("）") is None  # no key types it


def test_items_that_romaji_cannot_type_are_counted(tmp_path):
    path = tmp_path / "set.jsonl"
    path.write_text(
        "\n".join(
            json.dumps(item, ensure_ascii=False) for item in [ITEMS[0], {"input": "）", "expected": ["）"]}, ITEMS[1]]
        )
        + "\n",
        encoding="utf-8",
    )
    items, skipped = live_items(path, 2)
    assert [item.keys for item in items] == ["kyouhaiitenki"] and skipped == 1
    assert live_items(path, 10)[0][1].context == "明日は"


@pytest.mark.dbus
@pytest.mark.dictionary
@pytest.mark.model
def test_live_typing_measures_every_key_with_and_without_the_model(tmp_path, model_path):
    if shutil.which("dbus-daemon") is None:
        pytest.skip("dbus-daemon is not installed (Debian package dbus)")
    path = tmp_path / "set.jsonl"
    path.write_text("".join(json.dumps(item, ensure_ascii=False) + "\n" for item in ITEMS), encoding="utf-8")
    result = live_benchmark(path, limit=3, key_interval_ms=20, model=str(model_path))
    json.dumps(result)  # one JSON line
    keys = sum(len(romaji_keys(item["input"])) for item in ITEMS)
    assert result["items"] == 3 and result["skipped"] == 0
    assert result["model_on"]["model_state"] == "ready"
    assert result["model_off"]["model_state"] == "failed"  # no model file: the dictionary converts
    for run in (result["model_on"], result["model_off"]):
        assert run["keys"] == keys and run["improvements"] >= 0
        assert run["no_window"] == 0 and run["spaces_for_window"] >= 1
        for kind, count in (("key_ms", keys), ("convert_ms", 3), ("space_ms", 3)):
            figures = run[kind]
            assert figures["n"] == count
            assert 0 < figures["p50"] <= figures["p95"] <= figures["p99"] <= figures["max"]
    ratios = result["ratios"]["model_on_over_model_off"]
    assert set(ratios) == {f"{kind}_{q}" for kind in ("key", "space") for q in ("p50", "p95", "p99")}
    assert all(ratio > 0 for ratio in ratios.values())
    if result["mozc"] is None:  # Mozc is not installed here: the reason is said, and there is no ratio
        assert result["mozc_reason"] and result["ratios"]["model_on_over_mozc"] is None
    else:
        assert result["mozc"]["keys"] == keys and result["mozc"]["key_ms"]["p50"] > 0
        assert result["mozc"]["space_ms"]["n"] == 3 and result["mozc_reason"] is None
        assert set(result["ratios"]["model_on_over_mozc"]) == set(ratios)


def test_without_peers_py_mozc_is_null_with_the_reason(tmp_path, monkeypatch):
    import daemon.tools.bench

    monkeypatch.setattr(daemon.tools.bench, "PEERS", tmp_path / "peers.py")
    assert daemon.tools.bench._mozc_typing([], 0.1) == (None, f"{tmp_path / 'peers.py'} not found")


@pytest.mark.dbus
@pytest.mark.dictionary
def test_startup_is_timed_from_the_daemons_start_to_each_first():
    from daemon.tools.bench import startup_benchmark

    marks = startup_benchmark("none")
    assert marks["model_state"] == "failed" and marks["model"]
    assert (
        0 < marks["first_answer_ms"] <= marks["first_key_ms"] <= marks["first_conversion_ms"] <= marks["model_ready_ms"]
    )


@pytest.mark.dbus
@pytest.mark.dictionary
def test_memory_is_reported_at_every_stage():
    from daemon.tools.bench import memory_benchmark

    result = memory_benchmark("none", typed=2, conversions=3)
    stages = result["stages_mib"]
    assert list(stages) == ["warm", "after_2_typed", "after_3_convert", "idle_10s"]
    for stage in stages.values():
        assert 0 < stage["RssAnon"] < stage["VmRSS"] <= stage["VmHWM"]
