"""The only module that calls into llama.cpp: a model and a context with every argument validated.

llama.cpp aborts the whole process (GGML_ASSERT → SIGABRT, no Python exception) on a sequence id out of
range, a batch larger than n_batch, more outputs than reserved, and more. Every call here checks its
arguments first and raises LlamaError instead.
"""

from __future__ import annotations

import ctypes
import os
import threading
from pathlib import Path
from collections.abc import Sequence

# Must be set before llama.cpp (and its OpenMP runtime) is loaded: spin-waiting threads stall the
# IME whenever the desktop is busy, and ggml's abort handler would otherwise attach gdb.
os.environ.setdefault("OMP_WAIT_POLICY", "passive")
os.environ.setdefault("GGML_NO_BACKTRACE", "1")

import gguf  # noqa: E402
import llama_cpp as ll  # noqa: E402
import numpy as np  # noqa: E402

from daemon.engine.prompts import FORMAT_KEY  # noqa: E402

MAX_SEQUENCES = int(ll.llama_max_parallel_sequences())
SUPPORTED_ARCHITECTURES = {"llama", "qwen2", "qwen3", "gpt2", "mistral"}
_GGML_TYPE_F32 = 0

_backend_lock = threading.Lock()
_backend_ready = False


class LlamaError(RuntimeError):
    """A llama.cpp call was refused (bad argument) or failed (bad file, full cache)."""


def _init_backend() -> None:
    global _backend_ready
    with _backend_lock:
        if not _backend_ready:
            ll.llama_backend_init()
            ll.llama_log_set(_silent_log, ctypes.c_void_p(0))
            _backend_ready = True


@ll.llama_log_callback
def _silent_log(level, text, user_data):  # llama.cpp's own logging would flood the daemon's journal
    return None


def check_gguf(path: Path) -> tuple[str, str | None]:
    """Validate a GGUF file before llama.cpp sees it; return (architecture, our prompt format or None).

    llama.cpp's loader can crash on some truncated files, so the header, metadata and tensor extents
    are checked with the pure-Python reader first.
    """
    if not path.is_file():
        raise LlamaError(f"model file not found: {path}")
    try:
        reader = gguf.GGUFReader(str(path))
        arch_field = reader.get_field("general.architecture")
        arch = arch_field.contents() if arch_field is not None else None
        size = path.stat().st_size
        for tensor in reader.tensors:
            if tensor.data_offset + tensor.n_bytes > size:
                raise LlamaError(f"{path.name}: tensor {tensor.name} extends past the end of the file")
    except LlamaError:
        raise
    except Exception as exc:  # the reader raises many types on garbage
        raise LlamaError(f"{path.name} is not a valid GGUF file ({type(exc).__name__}: {exc})") from None
    if arch not in SUPPORTED_ARCHITECTURES:
        raise LlamaError(f"{path.name}: unsupported architecture {arch!r}")
    if reader.get_field("tokenizer.ggml.tokens") is None:
        raise LlamaError(f"{path.name}: no tokenizer in the file")
    format_field = reader.get_field(FORMAT_KEY)
    return arch, (format_field.contents() if format_field is not None else None)


class Model:
    """Loaded weights and vocabulary; shared read-only by every context."""

    def __init__(self, path: str | Path):
        path = Path(path)
        self.architecture, self.prompt_format = check_gguf(path)
        _init_backend()
        params = ll.llama_model_default_params()
        params.n_gpu_layers = 0
        handle = ll.llama_model_load_from_file(str(path).encode(), params)
        if not handle:
            raise LlamaError(f"llama.cpp could not load {path.name}")
        self.path = path
        self._handle = handle
        self._vocab = ll.llama_model_get_vocab(handle)
        self.n_vocab = int(ll.llama_vocab_n_tokens(self._vocab))
        self.n_params = int(ll.llama_model_n_params(handle))
        self.eos = int(ll.llama_vocab_eos(self._vocab))
        self._pieces: dict[int, bytes] = {}

    @property
    def handle(self):
        if self._handle is None:
            raise LlamaError("model is closed")
        return self._handle

    def tokenize(self, text: str, special: bool) -> list[int]:
        """Token ids of `text`. special=False keeps marker characters typed by a user as plain text."""
        data = text.encode("utf-8")
        capacity = len(data) + 8
        buf = (ll.llama_token * capacity)()
        n = ll.llama_tokenize(self._vocab, data, len(data), buf, capacity, False, special)
        if n < 0:
            raise LlamaError(f"tokenizer needed {-n} tokens for {len(data)} bytes")
        return list(buf[:n])

    def token_bytes(self, token: int) -> bytes:
        """The bytes a token stands for (empty for control tokens)."""
        piece = self._pieces.get(token)
        if piece is None:
            self.check_tokens([token])
            buf = ctypes.create_string_buffer(64)
            n = ll.llama_token_to_piece(self._vocab, token, buf, len(buf), 0, False)
            if n < 0:
                buf = ctypes.create_string_buffer(-n)
                n = ll.llama_token_to_piece(self._vocab, token, buf, len(buf), 0, False)
            piece = buf.raw[:n]
            self._pieces[token] = piece
        return piece

    def detokenize(self, tokens: list[int]) -> str:
        # Byte-fallback tokens only make sense joined; a dangling partial character is dropped.
        return b"".join(self.token_bytes(t) for t in tokens).decode("utf-8", errors="ignore")

    def is_end_of_generation(self, token: int) -> bool:
        return bool(ll.llama_vocab_is_eog(self._vocab, token))

    def check_tokens(self, tokens) -> None:
        for t in tokens:
            if not 0 <= t < self.n_vocab:
                raise LlamaError(f"token id {t} outside the vocabulary (0..{self.n_vocab - 1})")

    def close(self) -> None:
        if self._handle is not None:
            ll.llama_model_free(self._handle)
            self._handle = None


class Context:
    """A llama.cpp context over a shared model: one unified KV cache holding `n_seq` sequences.

    `exact=True` selects f32 KV, flash attention off and no single-row batches, the configuration in
    which KV-sharing decodes are bitwise equal to re-prefilling (used by the equivalence tests).
    """

    def __init__(
        self,
        model: Model,
        n_ctx: int,
        n_seq: int,
        n_batch: int,
        n_threads: int = 2,
        exact: bool = False,
        n_ubatch: int | None = None,
    ):
        if not 1 <= n_seq <= MAX_SEQUENCES:
            raise LlamaError(f"n_seq {n_seq} outside 1..{MAX_SEQUENCES}")
        if n_batch < n_seq + 1:  # llama.cpp reserves n_batch outputs; one row per sequence + a pad
            raise LlamaError(f"n_batch {n_batch} must exceed n_seq {n_seq}")
        if n_ctx < n_batch:
            raise LlamaError(f"n_ctx {n_ctx} smaller than n_batch {n_batch}")
        n_ubatch = n_batch if n_ubatch is None else n_ubatch  # one ubatch a batch unless told otherwise
        if not 1 <= n_ubatch <= n_batch:
            raise LlamaError(f"n_ubatch {n_ubatch} outside 1..{n_batch}")
        params = ll.llama_context_default_params()
        params.n_ctx = n_ctx
        params.n_batch = n_batch
        params.n_ubatch = n_ubatch
        params.n_seq_max = n_seq
        params.kv_unified = True
        params.n_threads = n_threads
        params.n_threads_batch = n_threads
        params.no_perf = True
        if exact:
            params.flash_attn_type = 0
            params.type_k = _GGML_TYPE_F32
            params.type_v = _GGML_TYPE_F32
        handle = ll.llama_init_from_model(model.handle, params)
        if not handle:
            raise LlamaError(f"llama.cpp could not create a context (n_ctx {n_ctx}, n_seq {n_seq})")
        self.model = model
        self._handle = handle
        self._memory = ll.llama_get_memory(handle)
        self.n_ctx = int(ll.llama_n_ctx(handle))
        self.n_seq = n_seq
        self.n_batch = n_batch
        self.exact = exact
        self._batch = ll.llama_batch_init(n_batch, 0, n_seq)  # a row may belong to every sequence

    def _check_seq(self, seq: int, allow_all: bool = False) -> None:
        if allow_all and seq == -1:
            return
        if not 0 <= seq < self.n_seq:
            raise LlamaError(f"sequence id {seq} outside 0..{self.n_seq - 1}")

    def decode(
        self,
        tokens: list[int],
        positions: list[int],
        seqs: Sequence[int | Sequence[int]],
        outputs: list[bool],
        pad_seq: int | None = None,
    ) -> np.ndarray:
        """Decode one batch; return the logits of the rows flagged in `outputs`, in order.

        A row's sequence may be several ids: the row is then shared by those sequences (a prefix common
        to them), which must hold the same positions beforehand, as llama.cpp requires.
        In exact mode a single-row batch gets a throw-away row in the empty sequence `pad_seq`:
        llama.cpp computes one row with a different kernel than several, and the last bits differ.
        """
        n = len(tokens)
        if not (n == len(positions) == len(seqs) == len(outputs)) or n == 0:
            raise LlamaError("batch rows are empty or of unequal length")
        pad = pad_seq if self.exact and n == 1 else None  # the sequence of the pad row, if there is one
        rows_needed = n + (pad is not None)
        if rows_needed > self.n_batch:
            raise LlamaError(f"batch of {rows_needed} rows exceeds n_batch {self.n_batch}")
        self.model.check_tokens(tokens)
        row_seqs = [(seq,) if isinstance(seq, int) else tuple(seq) for seq in seqs]
        for ids, pos in zip(row_seqs, positions):
            if not ids or len(set(ids)) != len(ids):
                raise LlamaError(f"a row's sequence ids {ids} are empty or repeated")
            for seq in ids:
                self._check_seq(seq)
            if not 0 <= pos < self.n_ctx:
                raise LlamaError(f"position {pos} outside 0..{self.n_ctx - 1}")
        self._check_shared_rows(row_seqs)
        rows = list(zip(tokens, positions, row_seqs, outputs))
        if pad is not None:
            self._check_seq(pad)
            if pad in row_seqs[0] or self.seq_pos_max(pad) >= 0:
                raise LlamaError(f"pad sequence {pad} is not free")
            rows.append((tokens[0], 0, (pad,), False))
        batch = self._batch
        for i, (token, pos, ids, out) in enumerate(rows):
            batch.token[i] = token
            batch.pos[i] = pos
            batch.n_seq_id[i] = len(ids)
            for k, seq in enumerate(ids):
                batch.seq_id[i][k] = seq
            batch.logits[i] = out
        batch.n_tokens = len(rows)
        rc = ll.llama_decode(self._handle, batch)
        if pad is not None:
            self.seq_rm(pad)
        if rc != 0:
            reason = "the KV cache is full" if rc == 1 else f"error {rc}"
            raise LlamaError(f"llama_decode failed: {reason}")
        logits = np.empty((sum(outputs), self.model.n_vocab), dtype=np.float32)
        row = 0
        for i, out in enumerate(outputs):
            if out:
                ptr = ll.llama_get_logits_ith(self._handle, i)
                if not ptr:
                    raise LlamaError(f"no logits for batch row {i}")
                logits[row] = np.ctypeslib.as_array(ptr, shape=(self.model.n_vocab,))
                row += 1
        return logits

    def seq_cp(self, src: int, dst: int, start: int = -1, end: int = -1) -> None:
        """Make `dst` share positions [start, end) of `src` (-1: open-ended)."""
        self._check_seq(src)
        self._check_seq(dst)
        ll.llama_memory_seq_cp(self._memory, src, dst, start, end)

    def seq_rm(self, seq: int, start: int = -1, end: int = -1) -> None:
        """Remove positions [start, end) of `seq` (-1: open-ended; seq -1: every sequence)."""
        self._check_seq(seq, allow_all=True)
        if not ll.llama_memory_seq_rm(self._memory, seq, start, end):
            raise LlamaError(f"could not remove positions {start}..{end} of sequence {seq}")

    def seq_keep(self, seq: int) -> None:
        self._check_seq(seq)
        ll.llama_memory_seq_keep(self._memory, seq)

    def _check_shared_rows(self, row_seqs: list[tuple[int, ...]]) -> None:
        """Sequences sharing a row must span the same positions (llama.cpp refuses the batch otherwise)."""
        spans: dict[int, tuple[int, int]] = {}
        for ids in row_seqs:
            if len(ids) > 1:
                for seq in ids:
                    if seq not in spans:
                        spans[seq] = (int(ll.llama_memory_seq_pos_min(self._memory, seq)), self.seq_pos_max(seq))
                if len({spans[seq] for seq in ids}) > 1:
                    raise LlamaError(f"sequences {ids} share a row but hold different positions")

    def seq_pos_max(self, seq: int) -> int:
        """The highest position held by `seq`, -1 when empty."""
        self._check_seq(seq)
        return int(ll.llama_memory_seq_pos_max(self._memory, seq))

    def clear(self) -> None:
        ll.llama_memory_clear(self._memory, True)

    def close(self) -> None:
        if self._handle is not None:
            ll.llama_batch_free(self._batch)
            ll.llama_free(self._handle)
            self._handle = None
