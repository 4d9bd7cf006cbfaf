"""tsuzuri-train: train the jinen conversion model and export it to GGUF.

    tsuzuri-train --corpus ../shared/corpus --out DIR [--config small|tiny] [--steps N] [--resume]
                  [--init-from EARLIER_DIR]

DIR receives data/ (pairs, characters, manifest), checkpoint.pt, model.gguf and run.json (config, data
sha256, steps, losses, dev acc@1 of the exported model on the first K dev items).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
import unicodedata
from dataclasses import asdict
from pathlib import Path

import torch

from training.gguf_writer import build_vocab, write_gguf
from training.data import CHARS_FILE, MANIFEST_FILE, PAIRS_FILE, Pair, prepare, read_characters, read_pairs, \
    sha256_file
from training.model import CONFIGS, LlamaLM, batch_tensors
from training.tokens import PROMPT_FORMAT, CharTokenizer

DEFAULT_DEV = Path(__file__).resolve().parents[2] / "shared" / "eval" / "wac_dev.jsonl"  # ../shared beside the repo
BLANK_CONTEXT = 0.3  # share of examples trained without left context (the dev set has ~19%)
MIN_LR_RATIO = 0.1


def learning_rate(step: int, peak: float, warmup: int, total: int) -> float:
    """Linear warmup to `peak`, then cosine decay to MIN_LR_RATIO * peak at `total`."""
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = min(1.0, (step - warmup) / max(1, total - warmup))
    return peak * (MIN_LR_RATIO + (1 - MIN_LR_RATIO) * 0.5 * (1 + math.cos(math.pi * progress)))


class Batches:
    """Batch `step` is a pure function of (seed, step): an epoch-seeded shuffle, so a resumed run
    sees exactly the batches an uninterrupted one would.

    Examples are drawn BUCKET_STEPS batches at a time, sorted by length and cut into batches of
    neighbours (served in a shuffled order), so a batch pads to a length close to each of its examples:
    with random batches half of the tokens were padding."""

    BUCKET_STEPS = 8

    def __init__(self, pairs: list[Pair], tokenizer: CharTokenizer, batch_size: int, seed: int, max_len: int):
        self.pairs, self.tokenizer, self.batch_size, self.seed = pairs, tokenizer, batch_size, seed
        self.max_len = max_len
        self._epoch, self._order = -1, []
        self._bucket, self._batches = -1, []

    def __call__(self, step: int) -> tuple[torch.Tensor, torch.Tensor]:
        bucket = step // self.BUCKET_STEPS
        if bucket != self._bucket:
            self._bucket, self._batches = bucket, self._fill(bucket)
        return batch_tensors(self._batches[step % self.BUCKET_STEPS])

    def _fill(self, bucket: int) -> list[list[tuple[list[int], int]]]:
        rng = random.Random(self.seed * 1_000_003 + bucket)
        first = bucket * self.BUCKET_STEPS * self.batch_size
        examples = []
        for i in range(first, first + self.BUCKET_STEPS * self.batch_size):
            pair = self.pairs[self._shuffled(i)]
            context = "" if rng.random() < BLANK_CONTEXT else pair.context
            ids, n_prompt = self.tokenizer.example(context, pair.reading, pair.surface)
            if len(ids) <= self.max_len:
                examples.append((ids, n_prompt))
        if not examples:
            raise ValueError(f"no training example of steps {first // self.batch_size}.. fits {self.max_len} tokens")
        examples.sort(key=lambda example: len(example[0]))
        size = -(-len(examples) // self.BUCKET_STEPS)
        batches = [examples[k:k + size] for k in range(0, len(examples), size)]
        batches += [batches[-1]] * (self.BUCKET_STEPS - len(batches))  # only when many were too long
        rng.shuffle(batches)
        return batches

    def _shuffled(self, i: int) -> int:
        """The pair at position i of the endless stream of epoch-wise shuffles."""
        epoch = i // len(self.pairs)
        if epoch != self._epoch:
            generator = torch.Generator().manual_seed(self.seed * 1_000_003 + epoch)
            self._epoch, self._order = epoch, torch.randperm(len(self.pairs), generator=generator).tolist()
        return self._order[i % len(self.pairs)]


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


def progress(total: int, start: int):
    """tqdm when installed; otherwise None (the loop prints a line every --log-every steps)."""
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, initial=start, unit="step", file=sys.stderr, dynamic_ncols=True)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="tsuzuri-train", description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True, help="shared/corpus (wac/ and text/)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--config", choices=sorted(CONFIGS), default="small")
    parser.add_argument("--steps", type=int, default=20000, help="total optimizer steps")
    parser.add_argument("--resume", action="store_true", help="continue from OUT/checkpoint.pt if there is one")
    parser.add_argument("--init-from", type=Path, default=None,
                        help="start from this earlier run's weights and vocabulary (new data, fresh optimizer "
                             "and schedule); ignored when resuming")
    parser.add_argument("--stop-at", type=int, default=None,
                        help="end this run at this step (checkpointed; the schedule still spans --steps)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=1e-3, help="peak learning rate")
    parser.add_argument("--warmup", type=int, default=None, help="warmup steps (default: 5%% of --steps)")
    parser.add_argument("--weight-decay", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2, help="CPU threads for torch")
    parser.add_argument("--device", default="cpu", help="torch device (cpu, cuda)")
    parser.add_argument("--text-lines", type=int, default=None,
                        help="use at most this many lines of each plain-text file (0: WAC only)")
    parser.add_argument("--checkpoint-every", type=int, default=500)
    parser.add_argument("--log-every", type=int, default=50)
    parser.add_argument("--dtype", choices=("q8_0", "f16", "f32"), default="q8_0", help="GGUF weight type")
    parser.add_argument("--dev", type=Path, default=DEFAULT_DEV, help="dev items (skipped when missing)")
    parser.add_argument("--dev-items", type=int, default=200)
    return parser.parse_args(argv)


def train(argv: list[str] | None = None) -> dict:
    """Run (or resume) training, export, evaluate; return the run record also written to OUT/run.json."""
    args = parse_args(argv)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    out: Path = args.out
    data_dir = out / "data"
    checkpoint_path = out / "checkpoint.pt"
    resuming = args.resume and checkpoint_path.is_file()
    init_from = None if resuming else args.init_from
    if not (data_dir / MANIFEST_FILE).is_file():  # prepared once per output folder, reused on resume
        print(f"preparing data from {args.corpus} …", file=sys.stderr)
        prepare(args.corpus, data_dir, seed=args.seed, text_lines=args.text_lines,
                characters=read_characters(init_from / "data" / CHARS_FILE) if init_from else None)
    manifest = json.loads((data_dir / MANIFEST_FILE).read_text(encoding="utf-8"))
    pairs = read_pairs(data_dir / PAIRS_FILE)
    vocab = build_vocab(read_characters(data_dir / CHARS_FILE))
    shape = CONFIGS[args.config]
    model = LlamaLM(shape, len(vocab)).to(args.device)
    matrices = [p for p in model.parameters() if p.dim() >= 2]  # norms are not decayed
    vectors = [p for p in model.parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": matrices, "weight_decay": args.weight_decay},
                                   {"params": vectors, "weight_decay": 0.0}], lr=args.lr, betas=(0.9, 0.95))
    warmup = args.warmup if args.warmup is not None else max(1, args.steps // 20)

    def load_checkpoint(path: Path) -> dict:
        state = torch.load(path, map_location=args.device, weights_only=False)
        if state["config"] != args.config or state["n_vocab"] != len(vocab):
            raise SystemExit(f"{path} is for config {state['config']}, vocab {state['n_vocab']}")
        model.load_state_dict(state["model"])
        return state

    step, losses, initial = 0, [], None
    if resuming:
        state = load_checkpoint(checkpoint_path)
        optimizer.load_state_dict(state["optimizer"])
        step, losses, initial = state["step"], state["losses"], state.get("initial")
    elif init_from is not None:
        initial = {"run": str(init_from), "steps": load_checkpoint(init_from / "checkpoint.pt")["step"]}

    def save_checkpoint() -> None:
        tmp = checkpoint_path.with_suffix(".tmp")
        torch.save({"config": args.config, "n_vocab": len(vocab), "step": step, "losses": losses,
                    "initial": initial, "model": model.state_dict(), "optimizer": optimizer.state_dict()}, tmp)
        tmp.replace(checkpoint_path)  # a kill mid-write never leaves a broken checkpoint

    batches = Batches(pairs, CharTokenizer(vocab), args.batch_size, args.seed, shape.context)
    bar = progress(args.steps, step)
    model.train()
    window, started, first_step = [], time.perf_counter(), step
    stop_at = args.steps if args.stop_at is None else min(args.stop_at, args.steps)
    while step < stop_at:
        lr = learning_rate(step, args.lr, warmup, args.steps)
        for group in optimizer.param_groups:
            group["lr"] = lr
        tokens, labels = batches(step)
        loss = model.loss(tokens.to(args.device), labels.to(args.device))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        step += 1
        window.append(loss.item())
        if bar is not None:
            bar.update(1)
            bar.set_postfix(loss=f"{window[-1]:.3f}", lr=f"{lr:.2e}")
        if step % args.log_every == 0 or step == stop_at:
            losses.append({"step": step, "loss": sum(window) / len(window), "lr": lr})
            if bar is None:
                print(f"step {step}/{args.steps} loss {losses[-1]['loss']:.4f} lr {lr:.2e}", file=sys.stderr)
            window = []
        if step % args.checkpoint_every == 0 or step == stop_at:
            save_checkpoint()
    if bar is not None:
        bar.close()
    seconds = time.perf_counter() - started

    model.eval()
    gguf_path = write_gguf(out / "model.gguf", vocab, shape, model.export_weights(), dtype=args.dtype,
                           prompt_format=PROMPT_FORMAT)
    record = {
        "config": args.config, "shape": asdict(shape), "n_vocab": len(vocab),
        "n_params": sum(p.numel() for p in model.parameters()),
        "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "data": {"pairs": manifest["pairs"], "pairs_by_source": manifest["pairs_by_source"],
                 "sha256": manifest["sha256"]},
        "initial": initial, "steps": step, "steps_this_run": step - first_step,
        "seconds_per_step": seconds / (step - first_step) if step > first_step else None,
        "losses": losses,
        "gguf": {"path": str(gguf_path), "dtype": args.dtype, "sha256": sha256_file(gguf_path)},
        "dev": dev_accuracy(gguf_path, args.dev, args.dev_items, args.threads)
        if args.dev.is_file() and args.dev_items > 0 else None,
    }
    (out / "run.json").write_text(json.dumps(record, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: record[k] for k in ("steps", "seconds_per_step", "dev")}, ensure_ascii=False))
    return record


def main(argv: list[str] | None = None) -> None:
    train(argv)


if __name__ == "__main__":
    main()
