"""The generated character-level GGUF: llama.cpp must tokenize it one token per character."""

import numpy as np
import pytest

from daemon.tools.gguf_writer import build_vocab, rope_rows_to_gguf
from daemon.engine.native import LlamaError, Model
from daemon.engine.prompts import MARKERS

IN_VOCAB = ["今日はいい天気ですね", "コンニチハ", "ABC xyz 123!?", "「漢字」、。・ー", "ｶﾀｶﾅ"]
OUT_OF_VOCAB = ["𠮷野家", "😀🐈", "鷗外", "é ñ", "①"]


@pytest.fixture(scope="module")
def model(model_path):
    m = Model(model_path)
    yield m
    m.close()


def test_vocabulary_layout():
    vocab = build_vocab()
    assert vocab.pieces[:3] == ["<unk>", "<s>", "</s>"]
    assert vocab.pieces[3:259] == [f"<0x{b:02X}>" for b in range(256)]
    assert vocab.pieces[259:268] == list(MARKERS)
    assert len(set(vocab.pieces)) == len(vocab)
    assert "亜" in vocab.pieces and "腕" in vocab.pieces  # first and last JIS level-1 kanji


@pytest.mark.parametrize("text", IN_VOCAB)
def test_known_characters_are_one_token_each(model, text):
    tokens = model.tokenize(text, special=False)
    assert len(tokens) == len(text)
    assert model.detokenize(tokens) == text


@pytest.mark.parametrize("text", OUT_OF_VOCAB)
def test_unknown_characters_fall_back_to_bytes_losslessly(model, text):
    tokens = model.tokenize(text, special=False)
    assert model.detokenize(tokens) == text
    assert len(tokens) > len(text) or all(ch in build_vocab().pieces for ch in text)


def test_markers_are_single_control_tokens(model):
    for i, marker in enumerate(MARKERS):
        assert model.tokenize(marker, special=True) == [259 + i]
        assert model.token_bytes(259 + i) == b""  # control tokens render as nothing


def test_out_of_range_token_is_refused(model):
    with pytest.raises(LlamaError):
        model.token_bytes(model.n_vocab)


def test_rope_reorder_pairs_each_half_with_its_partner():
    # One head of dim 4: HF rotates rows (0,2) and (1,3); llama.cpp rotates (0,1) and (2,3).
    w = np.arange(4)[:, None] * np.ones((1, 2))
    assert rope_rows_to_gguf(w, n_heads=1)[:, 0].tolist() == [0, 2, 1, 3]
