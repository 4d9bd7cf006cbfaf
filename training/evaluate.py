"""How good a model is, measured where it was trained: on the pack's held-out examples in PyTorch (any
device, no llama.cpp), and on dev items through the daemon's Engine on the exported GGUF (here)."""

from __future__ import annotations

import importlib.util
import json
import unicodedata
from pathlib import Path

import torch

from daemon.tools.gguf_writer import EOS
from training.model import IGNORE, LlamaLM, batch_tensors
from training.pack import Pack

EVAL_BATCH = 256


@torch.no_grad()
def valid_loss(model: LlamaLM, valid: Pack, limit: int, device: str) -> float | None:
    """Mean cross-entropy of the output tokens of the first `limit` held-out examples (with their context)."""
    summed, count = 0.0, 0
    n_examples = min(limit, len(valid))
    for first in range(0, n_examples, EVAL_BATCH):
        tokens, labels = batch_tensors([valid.example(i) for i in range(first, min(n_examples, first + EVAL_BATCH))])
        n_labels = int((labels != IGNORE).sum())
        summed += float(model.loss(tokens.to(device), labels.to(device))) * n_labels
        count += n_labels
    return summed / count if count else None


@torch.no_grad()
def greedy_outputs(model: LlamaLM, prompts: list[list[int]], max_new: int, device: str) -> list[list[int]]:
    """Each prompt's greedy continuation up to EOS (excluded) or `max_new` tokens. Prompts of one length
    run as one batch, so no padding is needed."""
    outputs: list[list[int]] = [[] for _ in prompts]
    by_length: dict[int, list[int]] = {}
    for index, prompt in enumerate(prompts):
        by_length.setdefault(len(prompt), []).append(index)
    for length, indices in by_length.items():
        for first in range(0, len(indices), EVAL_BATCH):
            rows = indices[first : first + EVAL_BATCH]
            tokens = torch.tensor([prompts[i] for i in rows], device=device)
            done = torch.zeros(len(rows), dtype=torch.bool, device=device)
            for _ in range(min(max_new, model.shape.context - length)):
                next_ids = model(tokens)[:, -1].argmax(-1)
                next_ids = torch.where(done, torch.full_like(next_ids, EOS), next_ids)
                done |= next_ids == EOS
                tokens = torch.cat((tokens, next_ids[:, None]), dim=1)
                if bool(done.all()):
                    break
            for row, generated in zip(rows, tokens[:, length:].tolist()):
                outputs[row] = generated[: generated.index(EOS)] if EOS in generated else generated
    return outputs


def valid_accuracy(model: LlamaLM, valid: Pack, limit: int, device: str) -> dict | None:
    """Exact-match acc@1 of greedy decoding on the first `limit` held-out examples (token ids compared)."""
    n = min(limit, len(valid))
    if n == 0:
        return None
    examples = [valid.example(i) for i in range(n)]
    targets = [ids[n_prompt:-1] for ids, n_prompt in examples]
    was_training = model.training
    model.eval()
    outputs = greedy_outputs(
        model, [ids[:n_prompt] for ids, n_prompt in examples], max(len(t) for t in targets) + 2, device
    )
    model.train(was_training)
    return {"items": n, "acc@1": sum(o == t for o, t in zip(outputs, targets)) / n}


def can_run_gguf() -> bool:
    """Whether llama.cpp's bindings are installed (not on the GPU machine)."""
    return importlib.util.find_spec("llama_cpp") is not None


def dev_accuracy(gguf_path: Path, dev_path: Path, limit: int, threads: int) -> dict:
    """Greedy acc@1 of the exported model through the daemon's Engine on the first `limit` dev items."""
    from daemon.engine import Engine, ModelState

    with open(dev_path, encoding="utf-8") as f:
        items = [json.loads(line) for _, line in zip(range(limit), f)]
    engine = Engine(n_threads=threads)
    try:
        engine.load(gguf_path)
        status = engine.wait()
        if status.state is not ModelState.READY:
            raise RuntimeError(f"the exported model did not load: {status.reason}")
        nfkc = lambda s: unicodedata.normalize("NFKC", s)  # noqa: E731
        correct = 0
        for item in items:
            candidates = engine.convert(item["input"], item.get("context", ""), n=1)
            correct += bool(candidates) and nfkc(candidates[0].text) in {nfkc(e) for e in item["expected"]}
    finally:
        engine.close()
    return {"items": len(items), "acc@1": correct / len(items) if items else None, "file": str(dev_path)}
