"""The character n-gram language model, its rescoring combination and the converter's use of it."""

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import daemon.converter as converter_module
from daemon.converter import Converter
from daemon.dictionary import system_dictionary
from daemon.lm import (
    WEIGHTS_WITH_MODEL,
    WEIGHTS_WITHOUT_MODEL,
    BuildOptions,
    CharNgramLM,
    Features,
    ReadingLength,
    Weights,
    build,
    context_hits,
    digits_not_as_typed,
    floored_model_scores,
    likely_and_unlikely,
    load_language_model,
    model_can_change_the_choice,
    rescored_order,
    weights_for,
)
from daemon.tools.corpus import capped
from daemon.tools.lm_fit import fit_logit, top1_correct
from daemon.lm.ngram import BOS, SortedKeys

CORPUS = (
    ["今日はいい天気です。", "今日は雨です。", "明日はいい天気でしょう。", "天気がいい。", "いい天気ですね"] * 3
    + ["サンフランシスコ"] * 20
    + ["犬の", "猫の", "鳥の", "家の", "山の", "雨の日は家にいる。"]
)
UNPRUNED = BuildOptions(order=4, min_char_count=1, cutoffs=(1,), quantize=False)
PRUNED = BuildOptions(order=4, min_char_count=2, cutoffs=(1, 2, 3), quantize=False)


@pytest.fixture(scope="module")
def lm() -> CharNgramLM:
    return build(CORPUS, UNPRUNED)


@pytest.mark.parametrize("options", [UNPRUNED, PRUNED])
@pytest.mark.parametrize("history", ["", "今日", "いい天", "雨の日", "未知の"])
def test_every_context_is_a_distribution(options, history):
    model = build(CORPUS, options)
    ids = [BOS] + model.encode(history)
    total = sum(
        math.exp(model.char_logprob(ids[-(model.order - 1) :], target)) for target in range(BOS + 1, model.vocab_size)
    )
    # Probabilities are stored in half precision (≈ 5e-4 relative); a wrong back-off is off by far more.
    assert total == pytest.approx(1.0, abs=2e-3)


def test_seen_continuations_beat_unseen_ones(lm):
    assert lm.score(["天気"], "今日はいい")[0] > lm.score(["転機"], "今日はいい")[0]
    assert lm.score(["今日はいい天気"])[0] > lm.score(["京はいい天気"])[0]


def test_kneser_ney_counts_contexts_not_occurrences(lm):
    # コ occurs 20 times but only after ス; の occurs 5 times after 5 different characters. After a
    # context the model never saw, what counts is how many contexts a character follows.
    assert lm.score(["の"], "空")[0] > lm.score(["コ"], "空")[0]


def test_pruning_keeps_fewer_ngrams_and_scores_everything():
    full, pruned = build(CORPUS, UNPRUNED), build(CORPUS, PRUNED)
    assert sum(pruned.meta["ngrams"]) < sum(full.meta["ngrams"])
    assert all(math.isfinite(score) for score in pruned.score(["サンフランシスコ", "見たことのない字𠮷"], "今日"))


def test_saved_model_loads_and_scores_the_same(tmp_path):
    lm = build(CORPUS, replace(PRUNED, quantize=True))
    path = tmp_path / "lm.bin"
    lm.save(path)
    loaded = CharNgramLM.load(path)
    texts = ["今日はいい天気", "京はいい転機", "", "サンフランシスコの天気"]
    for context in ("", "明日は", "サンフラン"):
        assert loaded.score(texts, context) == pytest.approx(lm.score(texts, context), abs=1e-9)
    assert loaded.meta == lm.meta and loaded.chars == lm.chars


@pytest.mark.parametrize("options", [UNPRUNED, PRUNED])
def test_quantized_values_score_within_a_small_error_of_exact_ones(options):
    exact, quantized = build(CORPUS, options), build(CORPUS, replace(options, quantize=True))
    texts = ["今日はいい天気", "京はいい転機", "サンフランシスコの天気", "雨の日は家にいる。"]
    for context in ("", "明日は", "サンフラン"):
        per_char = [
            abs(a - b) / max(len(t), 1)
            for a, b, t in zip(exact.score(texts, context), quantized.score(texts, context), texts)
        ]
        assert max(per_char) < 0.05


def test_keys_past_32_bits_are_found():
    keys = np.array([3, 2**32 - 1, 2**32, 2**32 + 7, 3 * 2**32 + 1], dtype=np.uint64)
    table = SortedKeys.of(keys)
    queries = np.array([3, 2**32 + 7, 2**32 + 8, 2 * 2**32, 3 * 2**32 + 1, 9 * 2**32, 5], dtype=np.int64)
    valid = np.array([True, True, True, True, True, True, False])
    assert table.find(queries, valid).tolist() == [0, 3, -1, -1, 4, -1, -1]


def test_a_file_that_is_no_model_is_skipped(tmp_path):
    path = tmp_path / "lm.bin"
    path.write_bytes(b"not a model")
    assert load_language_model(path) is None
    assert load_language_model(tmp_path / "missing.bin") is None


def test_the_users_own_model_takes_the_place_of_the_packaged_one(lm, tmp_path, monkeypatch):
    import daemon.lm as lm_module

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert lm_module.default_lm_path() == lm_module.PACKAGED_LM
    lm_module.user_lm_path().parent.mkdir(parents=True)
    lm.save(lm_module.user_lm_path())
    assert lm_module.default_lm_path() == lm_module.user_lm_path()
    assert load_language_model().chars == lm.chars


def test_scores_of_a_batch_equal_scores_one_by_one(lm):
    texts = ["今日は", "いい天気", "雨"]
    assert lm.score(texts, "明日") == pytest.approx([lm.score([t], "明日")[0] for t in texts])


def test_capped_spreads_the_sample_and_respects_the_cap():
    lines = [f"{i:04d}" for i in range(1000)]  # 4,000 characters
    kept = capped(lines, 400)
    assert sum(map(len, kept)) <= 400 and len(kept) >= 90
    assert int(kept[-1]) > 900  # drawn from the whole file, not its beginning
    assert capped(lines, None) == lines and capped(lines, 10_000) == lines


def _features(rank, cost, lm, context=0):
    return Features(cost=cost, lm=lm, chars=4, morphemes=2, rank=rank, context=context)


def test_rescoring_weighs_each_source():
    from daemon.lm import rescored_order

    candidates = [_features(0, 5.0, -20.0), _features(1, 6.0, -10.0), _features(2, 12.0, -10.0, context=3)]
    assert rescored_order(candidates, Weights(rank=-1.0)) == [0, 1, 2]
    assert rescored_order(candidates, Weights(cost=-1.0)) == [0, 1, 2]
    assert rescored_order(candidates, Weights(cost=-1.0, lm=0.5)) == [1, 0, 2]
    assert rescored_order(candidates, Weights(cost=-1.0, lm=0.5, context=3.0)) == [2, 1, 0]
    # Ties keep the dictionary's order; a zero weight ignores its source.
    assert rescored_order(candidates, Weights(lm=1.0)) == [1, 2, 0]
    assert rescored_order(candidates, Weights(chars=1.0)) == [0, 1, 2]


def test_fitted_weights_follow_the_signal():
    rng = np.random.default_rng(0)
    items, k = 200, 5
    x = rng.normal(size=(items, k, 7))
    gold = np.zeros((items, k), dtype=bool)
    gold[np.arange(items), np.argmax(x[:, :, 1], axis=1)] = True  # the best "lm" is always right
    mask = np.ones((items, k), dtype=bool)
    use = np.array([True, True, False, False, False, False, False])
    weights = fit_logit(x, mask, gold, use)
    assert weights[1] > 0 and weights[2:].tolist() == [0.0] * 5
    assert top1_correct(x, mask, gold, weights).mean() > 0.95


def test_a_weight_fitted_beside_held_ones_completes_them():
    rng = np.random.default_rng(2)
    items, k = 400, 5
    x = rng.normal(size=(items, k, 7))
    gold = np.zeros((items, k), dtype=bool)
    gold[np.arange(items), np.argmax(3 * x[:, :, 0] + x[:, :, 1], axis=1)] = True
    mask = np.ones((items, k), dtype=bool)
    held = np.array([3.0, 0, 0, 0, 0, 0, 0])
    use = np.array([False, True, False, False, False, False, False])
    weights = fit_logit(x, mask, gold, use, offset=x @ held)
    assert weights[0] == 0.0 and weights[1] > 0
    assert top1_correct(x, mask, gold, held + weights).mean() > top1_correct(x, mask, gold, held).mean()


def test_a_feature_that_nearly_separates_the_answers_keeps_a_finite_weight():
    """Like the model's floored score (0 for its favourite, -5 for most others): full Newton steps ran away
    (here to 3,815, and the cost weight to -931, against its signal); halved steps converge."""
    rng = np.random.default_rng(1)
    items, k = 1000, 20
    x = np.zeros((items, k, 7))
    x[:, :, 0] = rng.normal(size=(items, k))  # a weak signal in "cost"
    gold = np.zeros((items, k), dtype=bool)
    gold[np.arange(items), np.argmax(x[:, :, 0] + rng.normal(scale=2, size=(items, k)), axis=1)] = True
    favourite = np.where(rng.random(items) < 0.9, np.argmax(gold, axis=1), rng.integers(0, k, items))
    x[:, :, 6] = -5.0
    x[np.arange(items), favourite, 6] = 0.0
    mask = np.ones((items, k), dtype=bool)
    use = np.array([True, False, False, False, False, False, True])
    weights = fit_logit(x, mask, gold, use)
    assert 0 < weights[0] < 10 and 0 < weights[6] < 10
    assert top1_correct(x, mask, gold, weights).mean() >= (favourite == np.argmax(gold, axis=1)).mean()


@pytest.mark.dictionary
def test_converter_rescores_with_the_language_model(lm, monkeypatch):
    dictionary = system_dictionary()
    reading = "かいとう"
    top = [c.text for c in dictionary.convert(reading, 10)]
    favourite = max(top, key=lambda text: lm.score([text])[0])
    monkeypatch.setattr(converter_module, "weights_for", lambda reading, context, model_ready: Weights(lm=1.0))
    with_lm = Converter(dictionary=dictionary, language_model=lm).candidates(reading)
    assert with_lm[0].text == favourite and with_lm[0].source == "dictionary"
    assert [c.text for c in Converter(dictionary=dictionary).candidates(reading)][: len(top)] == top
    assert {c.text for c in with_lm} >= set(top)


def test_training_sources_are_the_training_splits_only(tmp_path):
    import json

    from daemon.tools.corpus import read_sources

    (tmp_path / "text").mkdir()
    (tmp_path / "text" / "news.txt").write_text("一行目\n\n二行目\n", encoding="utf-8")
    (tmp_path / "text" / "aozora_works.tsv").write_text("id\ttitle\n", encoding="utf-8")
    (tmp_path / "wac").mkdir()
    for split in ("train", "dev", "test"):
        (tmp_path / "wac" / f"{split}.jsonl").write_text(json.dumps({"text": f"{split}の文"}) + "\n", encoding="utf-8")
    (tmp_path / "anthy").mkdir()
    (tmp_path / "anthy" / "train.jsonl").write_text(
        json.dumps({"surface_segments": ["今日は", "晴れ"]}) + "\n", encoding="utf-8"
    )
    sources = {source.name: source.lines for source in read_sources(tmp_path)}
    assert sources == {"news": ["一行目", "二行目"], "wac_train": ["trainの文"], "anthy_train": ["今日は晴れ"]}


def test_eval_takes_the_language_model_it_is_given(lm, tmp_path):
    import argparse

    from daemon.tools.eval import ConverterUnavailable, _language_model

    path = tmp_path / "lm.bin"
    lm.save(path)
    assert _language_model(argparse.Namespace(lm=path, no_lm=False)).chars == lm.chars
    assert _language_model(argparse.Namespace(lm=path, no_lm=True)) is None
    (tmp_path / "broken.bin").write_bytes(b"broken")
    with pytest.raises(ConverterUnavailable):
        _language_model(argparse.Namespace(lm=tmp_path / "broken.bin", no_lm=False))


@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(0, 30),
            st.floats(-60, 0),
            st.integers(1, 20),
            st.integers(1, 8),
            st.integers(0, 3),
            st.floats(-40, 0),
        ),
        min_size=1,
        max_size=10,
    )
)
def test_asking_the_model_only_when_it_could_change_the_choice_keeps_the_first_candidate(rows):
    """The equivalence behind Converter's model gate: the same first candidate as always asking the model."""
    weights = WEIGHTS_WITH_MODEL
    plain = [
        Features(cost, lm, chars, morphemes, rank, context)
        for rank, (cost, lm, chars, morphemes, context, _) in enumerate(rows)
    ]
    model = floored_model_scores([row[5] for row in rows])
    asked = [replace(features, model=m) for features, m in zip(plain, model)]
    always = rescored_order(asked, weights)[0]
    gated = rescored_order(asked if model_can_change_the_choice(plain, weights) else plain, weights)[0]
    assert gated == always


def test_the_model_weighs_in_only_on_phrases_with_left_context():
    from daemon.lm.rescoring import PHRASE_MAX_CHARS

    phrase, sentence = "あ" * PHRASE_MAX_CHARS, "あ" * (PHRASE_MAX_CHARS + 1)
    assert (ReadingLength.of(phrase), ReadingLength.of(sentence)) == (ReadingLength.PHRASE, ReadingLength.SENTENCE)
    assert weights_for(phrase, "前の文。", True) == WEIGHTS_WITH_MODEL
    assert (
        weights_for(phrase, "", True)
        == weights_for(phrase, "前の文。", False)
        == WEIGHTS_WITHOUT_MODEL[ReadingLength.PHRASE]
    )
    assert weights_for(sentence, "前の文。", True) == WEIGHTS_WITHOUT_MODEL[ReadingLength.SENTENCE]
    assert WEIGHTS_WITH_MODEL.model > 0 and all(w.model == 0 for w in WEIGHTS_WITHOUT_MODEL.values())


@pytest.mark.dictionary
def test_the_list_keeps_n_of_the_rescored_candidates_besides_the_dictionarys_first_n():
    from daemon.converter import RESCORED_TOP

    dictionary = system_dictionary()
    converter = Converter(dictionary=dictionary, language_model=load_language_model())
    reading, n = "かいとう", 3
    assert len(converter.rescoring_pool(reading)) > 2 * n  # the rescoring chooses among more than are shown
    shown = [c.text for c in converter.candidates(reading, n=n) if c.source == "dictionary"]
    assert len(shown) <= 2 * n
    assert set(shown) >= {c.text for c in dictionary.convert(reading, n)}
    assert len(converter.rescoring_pool(reading)) <= RESCORED_TOP


@pytest.mark.dictionary
def test_unlikely_candidates_come_after_the_kana_forms(monkeypatch):
    from daemon.lm.rescoring import UNLIKELY_SCORE_GAP

    dictionary = system_dictionary()
    # Scored by the dictionary cost alone (2 per thousand), the cut falls where the cost is 2,500 above the best.
    monkeypatch.setattr(converter_module, "weights_for", lambda reading, context, model_ready: Weights(cost=-2.0))
    converter = Converter(dictionary=dictionary, language_model=load_language_model())
    reading = "きしゃ"
    best = dictionary.convert(reading, 1)[0].cost
    kana_form = "キシャ"  # the dictionary's entry of it is the same candidate as the kana form
    far = {c.text for c in dictionary.convert(reading, 10) if (c.cost - best) * 2 / 1000 > UNLIKELY_SCORE_GAP} - {
        kana_form
    }
    listed = [c.text for c in converter.candidates(reading)]
    kana_at = listed.index(kana_form)
    assert far and far <= set(listed[kana_at + 1 :])  # still listed, after the kana forms
    assert not far & set(listed[:kana_at])
    assert listed[0] == dictionary.convert(reading, 1)[0].text


def test_the_cut_keeps_the_rescored_order():
    plain = [Features(cost, 0.0, 1, 1, rank, 0) for rank, cost in enumerate([3.0, 0.0, 9.0, 2.0, 7.5])]
    likely, unlikely = likely_and_unlikely(plain, Weights(cost=-1.0), gap=5.0)
    assert likely + unlikely == rescored_order(plain, Weights(cost=-1.0))
    assert (likely, unlikely) == ([1, 3, 0], [4, 2])
    assert likely_and_unlikely([], Weights(cost=-1.0)) == ([], [])


@pytest.mark.dictionary
def test_only_readings_of_sentence_length_get_the_lattice_searchs_paths():
    from daemon.converter import LATTICE_MIN_READING_CHARS, RESCORED_TOP

    dictionary = system_dictionary()
    converter = Converter(dictionary=dictionary, language_model=load_language_model())
    short = "きょうはいいてんき"
    assert len(short) < LATTICE_MIN_READING_CHARS
    top = [c.text for c in dictionary.convert(short, RESCORED_TOP)]
    assert [c.text for c in converter.rescoring_pool(short)] == top
    long = "きょうはいいてんきなのでさんぽにいきました"
    assert len(long) >= LATTICE_MIN_READING_CHARS
    top = {c.text for c in dictionary.convert(long, RESCORED_TOP)}
    assert {c.text for c in converter.rescoring_pool(long)} - top  # paths MeCab's 10-best does not have


def test_context_hits_count_the_written_words_the_context_already_uses():
    context = "一人目の呼称、"
    # 人目, 目の, の呼, 呼称 (not 二人); 人目の, 目の呼, の呼称; 人, 目, 呼, 称 (not 二)
    assert context_hits("二人目の呼称", context) == 11
    assert context_hits("二人目の故障", context) == 5  # 人目, 目の; 人目の; 人, 目
    assert context_hits("のの", "のの") == 0  # hiragana is no evidence
    assert context_hits("英国では", "合衆国では") == 2  # 国で; 国; not では, 国では
    assert context_hits("航空機の運航", "飛行機の運行") == 5  # 機の, の運; 機の運; 機, 運
    # イタ, タド, ドリ; イタド, タドリ: katakana words come back too
    assert context_hits("イタドリを", "イタドリの被害") == 5


def test_digits_not_as_typed_count_digits_written_and_not_typed_and_typed_and_not_written():
    assert digits_not_as_typed("1日", "いちにち") == 1
    assert digits_not_as_typed("一日", "いちにち") == 0
    assert digits_not_as_typed("2024年12月", "2024ねん12がつ") == 0  # typed
    assert digits_not_as_typed("２０２４年", "2024ねん") == 0  # the width is the user's
    assert digits_not_as_typed("1855年2上院", "1855ねんにじょういん") == 1
    assert digits_not_as_typed("十二月", "12がつ") == 2
    assert digits_not_as_typed("四ヶ月間の3度", "4かげつかんのさんど") == 2  # 4 dropped, 3 added
    assert digits_not_as_typed("1212", "2121") == 0  # the order is the dictionary's and the LM's to judge


def test_a_number_the_user_did_not_type_in_digits_comes_after_its_kanji():
    """いちにち is 一日 before 1日: no reference of the suite or the held-out set writes an untyped digit."""
    pool = [_features(0, 5.0, -12.0), _features(1, 5.5, -12.5)]
    digits_first = [replace(pool[0], digits_not_as_typed=1), pool[1]]
    for weights in (*WEIGHTS_WITHOUT_MODEL.values(), WEIGHTS_WITH_MODEL):
        assert weights.digits_not_as_typed < 0
        assert rescored_order(digits_first, weights) == [1, 0]
