"""The engine API: background loading, status, conversion, candidates, chunking, sessions."""

import threading
import time

import pytest

from daemon.engine import Engine, EngineUnavailable, ModelState
from daemon.engine.engine import clean_text, split_reading


@pytest.fixture(scope="module")
def engine(model_path):
    e = Engine(n_threads=2)
    e.load(model_path)
    assert e.wait(60).state is ModelState.READY
    yield e
    e.close()


def texts(candidates) -> list[str]:
    """Repeated conversions agree on text; f16 scores move in the last bits with the batch shape."""
    return [c.text for c in candidates]


def test_loading_reports_states_in_order(model_path):
    seen = []
    e = Engine(on_status=lambda s: seen.append(s.state))
    thread = e.load(model_path)
    assert e.status.state is ModelState.LOADING  # load() returns at once
    thread.join(60)
    assert seen == [ModelState.LOADING, ModelState.READY]
    assert e.model_info.format == "jinen"  # read from the GGUF's own metadata
    e.close()


def test_convert_before_any_model_is_a_clear_error():
    with pytest.raises(EngineUnavailable, match="no model ready"):
        Engine().convert("かな")


def test_missing_model_fails_with_reason(tmp_path):
    e = Engine()
    e.load(tmp_path / "nothing.gguf")
    status = e.wait(30)
    assert status.state is ModelState.FAILED and "not found" in status.reason
    with pytest.raises(EngineUnavailable, match="failed"):
        e.convert("かな")


def test_unknown_registry_name_fails(tmp_path):
    e = Engine()
    e.load("no-such-model")
    assert e.wait(30).state is ModelState.FAILED


def test_greedy_returns_the_models_one_candidate(engine):
    candidates = engine.convert("きょうはいいてんき", "", 1)
    assert len(candidates) == 1 and candidates[0].text  # the kana forms are the converter's, not the engine's


def test_beam_returns_distinct_ranked_candidates(engine):
    candidates = engine.convert("きょうはいいてんき", "", 5)
    texts = [c.text for c in candidates]
    assert len(texts) == len(set(texts))
    assert 1 <= len(candidates) <= 5
    assert [c.score for c in candidates] == sorted((c.score for c in candidates), reverse=True)


def test_greedy_is_the_best_beam_candidate(engine):
    greedy = engine.convert("がくせい", "私は", 1)[0]
    beam = engine.convert("がくせい", "私は", 3)[0]
    assert greedy.score <= beam.score + 1e-2  # beam search can only find better


def test_sessions_are_independent(engine):
    a, b = engine.session(), engine.session()
    first = texts(a.convert("わたし", "", 1))
    b.convert("まったくべつのよみ", "", 3)
    assert texts(a.convert("わたし", "", 1)) == first
    a.close()
    b.close()


def test_repeated_conversion_is_stable(engine):
    with_context = texts(engine.convert("はし", "橋を渡る。", 1))
    assert with_context == texts(engine.convert("はし", "橋を渡る。", 1))


def test_split_reading_prefers_punctuation():
    assert split_reading("アイウ、エオ。カキ", limit=6) == ["アイウ、", "エオ。カキ"]
    assert split_reading("ア" * 65, limit=30) == ["ア" * 30, "ア" * 30, "ア" * 5]
    assert split_reading("", limit=30) == []
    text = "キョウハ、" * 20
    assert "".join(split_reading(text)) == text
    assert all(len(chunk) <= 30 for chunk in split_reading(text))


def test_long_readings_are_converted_chunk_by_chunk(engine):
    reading = "きょうはいいてんきですね、" * 6  # 78 kana → three chunks
    candidates = engine.convert(reading, "", 3)
    assert candidates and all(candidate.text for candidate in candidates)


def test_clean_text_drops_controls_surrogates_and_markers():
    assert clean_text("か\x00な\ud800\uee01\n") == "かな"


def test_reload_keeps_sessions_usable(model_path, exact_model_path):
    e = Engine()
    e.load(model_path)
    e.wait(60)
    session = e.session()
    session.convert("かな", "", 2)
    e.load(exact_model_path).join(60)
    assert e.status.state is ModelState.READY
    assert session.convert("かな", "", 2)
    e.close()


def test_status_while_loading_is_loading(model_path, monkeypatch):
    import daemon.engine.engine as engine_module

    gate = threading.Event()
    original = engine_module.Model

    def slow_model(path):
        gate.wait(10)
        return original(path)

    monkeypatch.setattr(engine_module, "Model", slow_model)
    e = Engine()
    e.load(model_path)
    time.sleep(0.05)
    assert e.status.state is ModelState.LOADING
    with pytest.raises(EngineUnavailable, match="loading"):
        e.convert("かな")
    gate.set()
    assert e.wait(60).state is ModelState.READY
    e.close()


def test_only_the_most_recent_sessions_keep_a_kv_cache(model_path):
    e = Engine(max_live_decoders=2)
    e.load(model_path)
    e.wait(60)
    sessions = [e.session() for _ in range(4)]
    first = texts(sessions[0].convert("かんじ", "", 2))
    for s in sessions[1:]:
        s.convert("かんじ", "", 2)
    assert [s._decoder is not None for s in sessions] == [False, False, True, True]
    assert texts(sessions[0].convert("かんじ", "", 2)) == first  # evicted: re-prefilled, same result
    assert [s._decoder is not None for s in sessions] == [True, False, False, True]
    e.close()
    assert all(s._decoder is None for s in sessions)


def test_scoring_other_candidates(engine):
    session = engine.session()
    texts = ["学生", "がくせい", "", "x" * 200]
    scores = session.score("がくせい", "", texts)
    assert all(-1e4 < s < 0 for s in scores[:3])
    assert scores[3] == float("-inf")  # too long to score in one batch
    assert session.score("がくせい", "", texts[:3]) == pytest.approx(scores[:3], abs=1e-2)
    with pytest.raises(ValueError):
        session.score("", "", texts)


def test_a_draft_changes_no_result(engine):
    session = engine.session()
    plain = session.convert("きょうはいいてんき", "", 1)[0]
    for draft in ["今日はいい天気", plain.text, "", "全然違う文"]:
        fresh = engine.session()
        assert fresh.convert("きょうはいいてんき", "", 1, draft)[0].text == plain.text
        fresh.close()


def spelled(text: str, reading: str, words) -> bool:
    """Whether `text` is a chain of the words (start, end, surface) covering all of `reading`."""
    ends = {(0, "")}
    while ends:
        position, written = ends.pop()
        if position == len(reading) and written == text:
            return True
        ends |= {
            (stop, written + surface)
            for start, stop, surface in words
            if start == position and text.startswith(written + surface)
        }
    return False


def test_spellings_restrict_the_model_to_chains_of_words(engine):
    reading = "キョウハイイテンキ"
    words = [(i, i + 1, char) for i, char in enumerate(reading)]
    words += [(0, 3, "今日"), (3, 4, "は"), (4, 6, "良い"), (6, 9, "天気"), (4, 6, "言い")]
    found = engine.convert(reading, n=5, spellings=words)
    assert found and all(spelled(c.text, reading, words) for c in found)
    assert [c.score for c in found] == sorted((c.score for c in found), reverse=True)
    one = engine.convert(reading, n=1, spellings=words)
    assert len(one) == 1 and spelled(one[0].text, reading, words)


def test_spellings_apply_chunk_by_chunk(engine):
    reading = "アイウエオカキクケコ、" * 4  # 44 characters: two chunks
    words = [(i, i + 1, char) for i, char in enumerate(reading)]
    found = engine.convert(reading, n=3, spellings=words)
    assert found and all(c.text == reading for c in found)  # the only spelling: the reading itself


def test_a_reading_that_loses_characters_to_cleaning_converts_unconstrained(engine):
    reading = "キョウ\x00ハ"
    words = [(i, i + 1, char) for i, char in enumerate(reading)]
    # offsets no longer fit: no constraint, no error
    assert texts(engine.convert(reading, n=2, spellings=words)) == texts(engine.convert(reading, n=2))


def test_the_beam_is_as_wide_as_configured_and_threads_change_on_the_fly(model_path, monkeypatch):
    from daemon.engine import ModelSession

    e = Engine(n_threads=2, beam_width=6)
    e.load(model_path)
    assert e.wait(60).state is ModelState.READY
    widths = []
    real_search = ModelSession._search

    def search(self, loaded, decoder, reading, context, width, *rest):
        widths.append(width)
        return real_search(self, loaded, decoder, reading, context, width, *rest)

    monkeypatch.setattr(ModelSession, "_search", search)
    session = e.session()
    assert len(session.convert("かいとう", "", 2)) <= 2
    assert len(session.convert("かいとう", "", 1)) == 1
    e.configure(n_threads=1, beam_width=3)
    session.convert("かいとう", "", 2)
    assert session._decoder.n_threads == 1  # made again for the new thread count
    e.close()
    assert widths == [6, 1, 3]  # two conversions searched 6 and 3 wide; one is greedy


def test_the_latest_load_wins(model_path, tmp_path):
    e = Engine()
    first = e.load(model_path)
    second = e.load(tmp_path / "nothing.gguf")
    first.join(60), second.join(60)
    assert e.status.state is ModelState.FAILED and e.status.model == str(tmp_path / "nothing.gguf")
    with pytest.raises(EngineUnavailable):
        e.convert("かな")  # the first model, loaded meanwhile, was not kept
