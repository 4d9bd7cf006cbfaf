"""The training pipeline: span cutting and pair building (pure), the PyTorch model against llama.cpp on
the exported GGUF (proves the RoPE permutation and tensor layout), and a few steps end to end."""

import json
import random
from pathlib import Path

import pytest

from tests.conftest import REPO

from training.data import (
    Pair,
    Unit,
    cut_spans,
    sentence_pairs,
    text_units,
    token_reading,
    typable,
    wac_pairs,
    wac_units,
)

torch = pytest.importorskip("torch", reason="training needs torch (pip install -e .[train])")

from daemon.tools.gguf_writer import EOS, build_vocab, write_gguf  # noqa: E402
from training.model import CONFIGS, IGNORE, LlamaLM, batch_tensors  # noqa: E402
from training.tokens import CharTokenizer  # noqa: E402
from training.train import learning_rate, train  # noqa: E402

WAC_TRAIN = REPO.parent / "shared" / "corpus" / "wac" / "train.jsonl"  # CI lays ../shared beside the repo


# -- pure data functions --------------------------------------------------------------------------


@pytest.mark.parametrize("n_units", [0, 1, 2, 5, 17])
def test_cut_spans_partitions_into_one_to_four_units(n_units):
    for seed in range(20):
        spans = cut_spans(n_units, random.Random(seed))
        assert [i for start, end in spans for i in range(start, end)] == list(range(n_units))
        assert all(1 <= end - start <= 4 for start, end in spans)


UNITS = [
    Unit("人称とは、", "ニンショウトハ、"),
    Unit("文法の", "ブンポウノ"),
    Unit("用語で", "ヨウゴデ"),
    Unit("1949年に", "1949ネンニ"),
    Unit("東京　Tower", "トウキョウ　Tower"),
]


def test_sentence_pairs_context_is_preceding_text_plus_sentence_prefix():
    pairs = list(sentence_pairs(UNITS, "前の文。", [(0, 1), (1, 3)], "wac"))
    assert pairs == [
        Pair("前の文。", "ニンショウトハ、", "人称とは、", "wac"),
        Pair("前の文。人称とは、", "ブンポウノヨウゴデ", "文法の用語で", "wac"),
    ]


def test_sentence_pairs_keep_the_context_asked_for():
    long_before = "前" * 300
    default, held_out = (
        [p.context for p in sentence_pairs(UNITS, long_before, [(1, 3)], "wac", *keep)] for keep in ((), (200,))
    )
    assert default == [(long_before + "人称とは、")[-40:]]
    assert held_out == [(long_before + "人称とは、")[-200:]]


def test_sentence_pairs_drop_short_long_and_untypable_readings():
    spans = [(1, 2), (3, 4), (4, 5)]  # 5 kana: kept; digits: kept; a space inside: dropped
    assert [p.surface for p in sentence_pairs(UNITS, "", spans, "wac")] == ["文法の", "1949年に"]
    long_unit = [Unit("あ" * 41, "ア" * 41)]
    assert list(sentence_pairs(long_unit, "", [(0, 1)], "wac")) == []
    assert list(sentence_pairs([Unit("用", "ヨウ")], "", [(0, 1)], "wac")) == []
    assert not typable("ヨウ語") and typable("ＡＢＣ１２３ー。") and not typable("")


def test_wac_units_join_morphemes_per_bunsetsu_in_katakana():
    record = {
        "doc": "d1",
        "text": "人称とは、文法",
        "morphs": [["人称", "にんしょう"], ["と", "と"], ["は", "は"], ["、", "、"], ["文法", "ぶんぽう"]],
        "bnst": [0, 4],
    }
    assert wac_units(record) == [Unit("人称とは、", "ニンショウトハ、"), Unit("文法", "ブンポウ")]


def test_wac_pairs_context_runs_within_a_document_only():
    def line(doc, text, reading):
        return json.dumps({"doc": doc, "text": text, "morphs": [[text, reading]], "bnst": [0]})

    lines = [
        line("a", "最初の文です。", "さいしょのぶんです。"),
        line("a", "次の文です。", "つぎのぶんです。"),
        line("b", "別の文書です。", "べつのぶんしょです。"),
    ]
    pairs = list(wac_pairs(lines, random.Random(0)))
    assert [(p.context, p.reading) for p in pairs] == [
        ("", "サイショノブンデス。"),
        ("最初の文です。", "ツギノブンデス。"),
        ("", "ベツノブンショデス。"),
    ]


def test_token_reading_uses_unidic_kana_and_types_kana_as_written():
    assert token_reading("は", "ハ") == "ハ"
    assert token_reading("東京", "トウキョウ") == "トウキョウ"
    assert token_reading("コーヒー", "コーヒー") == "コーヒー"
    assert token_reading("1949", None) == "1949"  # unknown to UniDic, typed as is
    assert token_reading("ひらがな", "ヒラガナ") == "ヒラガナ"
    assert token_reading("𠮷", None) is None and token_reading("漢", "*") is None


def test_text_units_attach_function_words_and_compound_nouns():
    tokens = [
        ("東京", "名詞", "固有名詞", "トウキョウ"),
        ("都", "名詞", "普通名詞", "ト"),
        ("へ", "助詞", "格助詞", "ヘ"),
        ("行こ", "動詞", "一般", "イコ"),
        ("う", "助動詞", "*", "ウ"),
        ("。", "補助記号", "句点", ""),
    ]
    assert text_units(tokens) == [Unit("東京都へ", "トウキョウトヘ"), Unit("行こう。", "イコウ。")]
    assert text_units([("謎", "名詞", "普通名詞", None)]) is None


# -- model and tokens ---------------------------------------------------------------------------


def test_batch_labels_cover_output_tokens_and_eos_only():
    tokens, labels = batch_tensors([([5, 6, 7, 8, EOS], 3), ([5, 6, 9, EOS], 3)])
    assert tokens.tolist() == [[5, 6, 7, 8, EOS], [5, 6, 9, EOS, 0]]
    assert labels.tolist() == [[IGNORE, IGNORE, 8, EOS, IGNORE], [IGNORE, IGNORE, EOS, IGNORE, IGNORE]]


def test_learning_rate_warms_up_then_decays():
    rates = [learning_rate(step, step / 100, 1e-3, 10) for step in range(100)]
    assert rates[0] == pytest.approx(1e-4, rel=1e-3) and rates[9] == pytest.approx(1e-3, rel=0.03)
    assert all(a >= b for a, b in zip(rates[9:], rates[10:])) and rates[-1] >= 1e-4 - 1e-12
    assert learning_rate(500, 1.0, 1e-3, 10) == pytest.approx(1e-4)  # a spent time budget: the floor


@pytest.fixture(scope="module")
def tiny_export(tmp_path_factory):
    """A random tiny model (norms perturbed too) exported in f32."""
    torch.manual_seed(3)
    vocab = build_vocab(list("今日は天気がいいので公園を散歩した。") + [chr(c) for c in range(0x30A1, 0x30F7)])
    model = LlamaLM(CONFIGS["tiny"], len(vocab)).eval()
    with torch.no_grad():
        for name, param in model.named_parameters():
            param.add_(torch.randn_like(param) * (0.3 if "norm" in name else 0.05))
    path = write_gguf(
        tmp_path_factory.mktemp("export") / "tiny-f32.gguf", vocab, model.shape, model.export_weights(), dtype="f32"
    )
    return model, vocab, path


@pytest.mark.torch
def test_exported_gguf_logits_match_pytorch(tiny_export):
    from daemon.engine.engine import prompt_tokens
    from daemon.engine.native import Context, Model
    from daemon.engine.prompts import build_prompt

    model, vocab, path = tiny_export
    tokenizer = CharTokenizer(vocab)
    native = Model(path)
    context = Context(native, n_ctx=128, n_seq=2, n_batch=64, exact=True)
    try:
        # "歩" is outside this vocab (byte fallback) and the space becomes ▁: both as llama.cpp does it
        prompt = build_prompt("jinen", "キョウハ テンキ", "公園を散歩した。今日")
        ids = tokenizer.prompt(prompt)
        assert ids == prompt_tokens(native, prompt)
        ids, _ = tokenizer.example("公園を散歩した。今日", "キョウハ テンキ", "今日は天気")
        got = context.decode(ids, list(range(len(ids))), [0] * len(ids), [True] * len(ids))
        with torch.no_grad():
            want = model(torch.tensor([ids]))[0].numpy()
        assert abs(got - want).max() < 1e-3, abs(got - want).max()
    finally:
        context.close()
        native.close()


# -- the whole pipeline -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_corpus(tmp_path_factory):
    if not WAC_TRAIN.is_file():
        pytest.skip(f"{WAC_TRAIN} not found (the shared corpus is not on this machine)")
    corpus = tmp_path_factory.mktemp("corpus")
    (corpus / "wac").mkdir()
    with open(WAC_TRAIN, encoding="utf-8") as f:
        (corpus / "wac" / "train.jsonl").write_text("".join(f.readline() for _ in range(30)), encoding="utf-8")
    dev = corpus / "dev.jsonl"
    dev.write_text(
        "".join(
            json.dumps({"context": c, "input": r, "expected": [s]}, ensure_ascii=False) + "\n"
            for c, r, s in [("", "ニンショウトハ", "人称とは"), ("今日は", "テンキガイイ", "天気がいい")]
        ),
        encoding="utf-8",
    )
    return corpus, dev


def run_args(corpus: Path, out: Path, steps: int, *extra: str) -> list[str]:
    return [
        "--corpus",
        str(corpus),
        "--out",
        str(out),
        "--config",
        "tiny",
        "--steps",
        str(steps),
        "--batch-size",
        "8",
        "--log-every",
        "1",
        "--checkpoint-every",
        "2",
        "--threads",
        "2",
        *extra,
    ]


@pytest.mark.torch
def test_pipeline_trains_exports_and_the_engine_converts(tiny_corpus, tmp_path):
    from daemon.engine import Engine, ModelState

    corpus, dev = tiny_corpus
    out = tmp_path / "run"
    record = train(run_args(corpus, out, 3, "--dev", str(dev), "--dev-items", "2"))
    assert record["steps"] == 3 and len(record["losses"]) == 3
    assert record["data"]["pairs_by_source"]["wac"] > 0 and record["dev"]["items"] == 2
    assert json.loads((out / "run.json").read_text(encoding="utf-8"))["gguf"]["dtype"] == "q8_0"
    engine = Engine(n_threads=2)
    try:
        engine.load(out / "model.gguf")
        assert engine.wait(30).state is ModelState.READY
        assert engine.model_info.format == "jinen"
        assert engine.convert("ニンショウトハ", "文法の用語で") != []
    finally:
        engine.close()


@pytest.mark.torch
def test_resumed_run_repeats_an_uninterrupted_one(tiny_corpus, tmp_path):
    corpus, _ = tiny_corpus
    straight = train(run_args(corpus, tmp_path / "straight", 4, "--dev-items", "0", "--dtype", "f16"))
    train(run_args(corpus, tmp_path / "resumed", 4, "--dev-items", "0", "--stop-at", "2"))
    resumed = train(run_args(corpus, tmp_path / "resumed", 4, "--dev-items", "0", "--dtype", "f16", "--resume"))
    assert resumed["steps_this_run"] == 2
    assert [round(x["loss"], 5) for x in resumed["losses"]] == [round(x["loss"], 5) for x in straight["losses"]]


@pytest.mark.torch
def test_init_from_continues_an_earlier_model_on_new_data_with_its_vocabulary(tiny_corpus, tmp_path):
    corpus, _ = tiny_corpus
    first = tmp_path / "first"
    train(run_args(corpus, first, 2, "--dev-items", "0"))
    (corpus / "text").mkdir(exist_ok=True)  # new data with a character the first vocabulary lacks
    (corpus / "text" / "jglue.txt").write_text("鸛が空を飛んでいるのを見ました。\n", encoding="utf-8")
    try:
        second = train(
            run_args(
                corpus,
                tmp_path / "second",
                2,
                "--dev-items",
                "0",
                "--text-lines",
                "5",
                "--lr",
                "0",
                "--init-from",
                str(first),
            )
        )
    finally:
        (corpus / "text" / "jglue.txt").unlink()
    assert second["initial"] == {"run": str(first), "steps": 2} and second["steps"] == 2
    assert second["data"]["pairs_by_source"].get("jglue", 0) > 0
    assert (tmp_path / "second" / "data" / "chars.txt").read_bytes() == (first / "data" / "chars.txt").read_bytes()
    before = torch.load(first / "checkpoint.pt", weights_only=False)["model"]
    after = torch.load(tmp_path / "second" / "checkpoint.pt", weights_only=False)["model"]
    assert all(torch.equal(before[name], after[name]) for name in before)  # lr 0: the weights it started from
