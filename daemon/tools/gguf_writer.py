"""Writing llama-architecture GGUF conversion models: character vocabulary, random weights, export.

Used by the tests (a tiny model generated on the fly), by the benchmark (bigger random models) and by
the training pipeline (trained weights). The vocabulary is one SentencePiece piece per character plus
256 byte-fallback tokens, so llama.cpp tokenizes exactly one token per known character.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from collections.abc import Iterable

import gguf
import numpy as np

from daemon.engine.prompts import FORMAT_KEY, MARKERS

UNK, BOS, EOS = 0, 1, 2
SPACE_PIECE = "\u2581"  # SentencePiece's visible space


def _jis_x0208_rows(rows: Iterable[int]) -> list[str]:
    """Characters of the given JIS X 0208 rows, through the stdlib EUC-JP codec (no data files)."""
    chars = []
    for row in rows:
        for cell in range(1, 95):
            try:
                chars.append(bytes((0xA0 + row, 0xA0 + cell)).decode("euc_jp"))
            except UnicodeDecodeError:
                continue
    return chars


def base_characters() -> list[str]:
    """ASCII, kana (with half-width katakana), JIS X 0208 symbols (rows 1–8) and level-1 kanji (rows 16–47), in a
    fixed order."""
    ascii_chars = [chr(c) for c in range(0x21, 0x7F)]
    kana = [chr(c) for c in range(0x3041, 0x3097)] + [chr(c) for c in range(0x30A1, 0x30FB)]
    kana += ["ー", "ゝ", "ゞ", "ヽ", "ヾ"] + [chr(c) for c in range(0xFF61, 0xFFA0)]  # + half-width
    return ascii_chars + kana + _jis_x0208_rows(range(1, 9)) + _jis_x0208_rows(range(16, 48))


@dataclass(frozen=True)
class Vocab:
    pieces: list[str]
    types: list[int]

    def __len__(self) -> int:
        return len(self.pieces)


def build_vocab(characters: Iterable[str] | None = None) -> Vocab:
    """<unk> <s> </s>, <0x00>..<0xFF>, the \\uEE00..\\uEE08 markers (CONTROL), ▁, then the characters."""
    pieces = ["<unk>", "<s>", "</s>"]
    types = [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
    pieces += [f"<0x{b:02X}>" for b in range(256)]
    types += [gguf.TokenType.BYTE] * 256
    pieces += list(MARKERS)
    types += [gguf.TokenType.CONTROL] * len(MARKERS)
    seen = set(pieces)
    for ch in [SPACE_PIECE, *(base_characters() if characters is None else characters)]:
        if len(ch) != 1 or ch in seen or ch == " ":
            continue
        seen.add(ch)
        pieces.append(ch)
        types.append(gguf.TokenType.NORMAL)
    return Vocab(pieces, [int(t) for t in types])


@dataclass(frozen=True)
class ModelShape:
    d_model: int
    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_ff: int
    context: int = 512
    rope_base: float = 10000.0
    norm_eps: float = 1e-5

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    def n_params(self, n_vocab: int) -> int:
        kv = self.n_kv_heads * self.head_dim
        per_layer = 2 * self.d_model * self.d_model + 2 * self.d_model * kv + 3 * self.d_model * self.d_ff
        per_layer += 2 * self.d_model
        return 2 * n_vocab * self.d_model + self.n_layers * per_layer + self.d_model


# Shapes used by the tests and the benchmark (random weights, built on the fly).
SHAPES = {
    "tiny": ModelShape(d_model=128, n_layers=2, n_heads=4, n_kv_heads=4, d_ff=352),
    "m25": ModelShape(d_model=512, n_layers=6, n_heads=8, n_kv_heads=8, d_ff=1536),
    "m100": ModelShape(d_model=768, n_layers=12, n_heads=12, n_kv_heads=12, d_ff=2304),
}


def random_weights(
    shape: ModelShape, n_vocab: int, seed: int = 0, output_scale: float = 0.1, eos_boost: float = 1.0
) -> dict[str, np.ndarray]:
    """HF-layout (out, in) float32 weights. `eos_boost` scales the EOS output row so that a random
    model sometimes ends its output, which exercises the finishing paths of the search."""
    rng = np.random.default_rng(seed)
    d, kv = shape.d_model, shape.n_kv_heads * shape.head_dim

    def normal(*dims: int, std: float = 0.02) -> np.ndarray:
        return rng.normal(0.0, std, size=dims).astype(np.float32)

    weights = {"embed": normal(n_vocab, d, std=1.0), "norm": np.ones(d, np.float32)}
    out = normal(n_vocab, d, std=output_scale)
    out[EOS] *= eos_boost
    weights["lm_head"] = out
    for i in range(shape.n_layers):
        weights.update(
            {
                f"{i}.attn_norm": np.ones(d, np.float32),
                f"{i}.q": normal(d, d, std=d**-0.5),
                f"{i}.k": normal(kv, d, std=d**-0.5),
                f"{i}.v": normal(kv, d, std=d**-0.5),
                f"{i}.o": normal(d, d, std=d**-0.5),
                f"{i}.ffn_norm": np.ones(d, np.float32),
                f"{i}.gate": normal(shape.d_ff, d, std=d**-0.5),
                f"{i}.up": normal(shape.d_ff, d, std=d**-0.5),
                f"{i}.down": normal(d, shape.d_ff, std=shape.d_ff**-0.5),
            }
        )
    return weights


def rope_rows_to_gguf(w: np.ndarray, n_heads: int) -> np.ndarray:
    """Reorder q/k projection rows from HF's rotate-half RoPE layout to GGUF llama's interleaved pairs.

    Per head, HF rotates row r with row r + head_dim/2; llama.cpp rotates rows 2i and 2i+1.
    """
    rows, cols = w.shape
    half = rows // n_heads // 2
    return w.reshape(n_heads, 2, half, cols).transpose(0, 2, 1, 3).reshape(rows, cols)


FILE_TYPES = {
    "f32": gguf.LlamaFileType.ALL_F32,
    "f16": gguf.LlamaFileType.MOSTLY_F16,
    "q8_0": gguf.LlamaFileType.MOSTLY_Q8_0,
    "q4_0": gguf.LlamaFileType.MOSTLY_Q4_0,
}
_QUANT_TYPES = {"q8_0": gguf.GGMLQuantizationType.Q8_0, "q4_0": gguf.GGMLQuantizationType.Q4_0}


def write_gguf(
    path: str | Path,
    vocab: Vocab,
    shape: ModelShape,
    weights: dict[str, np.ndarray],
    dtype: str = "f16",
    prompt_format: str = "jinen",
    name: str = "tsuzuri",
) -> Path:
    """Write a llama-architecture GGUF with an SPM character tokenizer. dtype: one of FILE_TYPES."""
    if dtype not in FILE_TYPES:
        raise ValueError(f"dtype must be one of {', '.join(FILE_TYPES)}, not {dtype!r}")
    path = Path(path)
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name(name)
    writer.add_string(FORMAT_KEY, prompt_format)
    writer.add_vocab_size(len(vocab))
    writer.add_context_length(shape.context)
    writer.add_embedding_length(shape.d_model)
    writer.add_block_count(shape.n_layers)
    writer.add_feed_forward_length(shape.d_ff)
    writer.add_head_count(shape.n_heads)
    writer.add_head_count_kv(shape.n_kv_heads)
    writer.add_rope_dimension_count(shape.head_dim)
    writer.add_rope_freq_base(shape.rope_base)
    writer.add_layer_norm_rms_eps(shape.norm_eps)
    writer.add_file_type(FILE_TYPES[dtype])
    writer.add_tokenizer_model("llama")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(vocab.pieces)
    writer.add_token_scores([0.0] * len(vocab))
    writer.add_token_types(vocab.types)
    writer.add_unk_token_id(UNK)
    writer.add_bos_token_id(BOS)
    writer.add_eos_token_id(EOS)
    writer.add_add_bos_token(False)
    writer.add_add_eos_token(False)
    writer.add_add_space_prefix(False)

    def matrix(name: str, w: np.ndarray) -> None:
        if dtype in _QUANT_TYPES and w.shape[-1] % 32 == 0:  # quant blocks are 32 wide; others stay f16
            q = gguf.quants.quantize(np.ascontiguousarray(w, dtype=np.float32), _QUANT_TYPES[dtype])
            writer.add_tensor(name, q, raw_dtype=_QUANT_TYPES[dtype])
        else:
            writer.add_tensor(name, np.ascontiguousarray(w, dtype=np.float32 if dtype == "f32" else np.float16))

    def vector(name: str, w: np.ndarray) -> None:  # norms stay f32, as llama.cpp expects
        writer.add_tensor(name, np.ascontiguousarray(w, dtype=np.float32))

    matrix("token_embd.weight", weights["embed"])
    for i in range(shape.n_layers):
        vector(f"blk.{i}.attn_norm.weight", weights[f"{i}.attn_norm"])
        matrix(f"blk.{i}.attn_q.weight", rope_rows_to_gguf(weights[f"{i}.q"], shape.n_heads))
        matrix(f"blk.{i}.attn_k.weight", rope_rows_to_gguf(weights[f"{i}.k"], shape.n_kv_heads))
        matrix(f"blk.{i}.attn_v.weight", weights[f"{i}.v"])
        matrix(f"blk.{i}.attn_output.weight", weights[f"{i}.o"])
        vector(f"blk.{i}.ffn_norm.weight", weights[f"{i}.ffn_norm"])
        matrix(f"blk.{i}.ffn_gate.weight", weights[f"{i}.gate"])
        matrix(f"blk.{i}.ffn_up.weight", weights[f"{i}.up"])
        matrix(f"blk.{i}.ffn_down.weight", weights[f"{i}.down"])
    vector("output_norm.weight", weights["norm"])
    matrix("output.weight", weights["lm_head"])
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def write_random_model(
    path: str | Path,
    shape: ModelShape | str = "tiny",
    seed: int = 0,
    dtype: str = "f16",
    eos_boost: float = 1.0,
    characters: Iterable[str] | None = None,
) -> Path:
    shape = SHAPES[shape] if isinstance(shape, str) else shape
    vocab = build_vocab(characters)
    weights = random_weights(shape, len(vocab), seed=seed, eos_boost=eos_boost)
    return write_gguf(path, vocab, shape, weights, dtype=dtype)
