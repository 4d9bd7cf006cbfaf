"""tsuzuri-train: train the jinen conversion model on a pack and export it to GGUF.

    tsuzuri-train (--pack PACK | --corpus ../shared/corpus) --out DIR [--config NAME] [--steps N]
                  [--minutes M] [--device cpu|cuda] [--compile] [--resume] [--init-from EARLIER_DIR]
    torchrun --nproc_per_node N -m training.train ...            (data parallel, the same command)
    tsuzuri-train pack ...        (training/pack.py)      tsuzuri-train assemble ...  (training/device.py)
    tsuzuri-train heldout ...     (training/heldout.py: the held-out evaluation set)

With --corpus the corpus is packed into DIR/data first (once; reused on resume). DIR receives
checkpoint.pt, model.gguf and run.json (config, the pack's counts, steps, the loss curve with tokens/s and
MFU, the held-out loss and acc@1, and the dev acc@1 of the exported model where llama.cpp is installed).

--batch-size is the global batch: under torchrun each process takes every WORLD_SIZE-th example of it, and
the loss is scaled so that the averaged gradient is the whole batch's (a run on N processes follows the
run on one). --minutes bounds this run's wall clock (with --compile, from the end of the first step, which
compiles): the learning-rate schedule then runs on the elapsed share of it (or of --steps, whichever is
further), and the run stops, checkpoints, exports and evaluates when it is spent.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import queue
import random
import sys
import threading
import time
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path
from collections.abc import Iterator
from typing import Any

import torch

from training.data import CHARS_FILE, MANIFEST_FILE, read_characters, sha256_file
from training.evaluate import can_run_gguf, dev_accuracy, valid_accuracy, valid_loss
from daemon.tools.gguf_writer import write_gguf
from training.model import CONFIGS, LlamaLM, Objective, batch_tensors
from training.pack import Pack, parse_mix, pack
from training.tokens import PROMPT_FORMAT

DEFAULT_DEV = Path(__file__).resolve().parents[2] / "shared" / "eval" / "wac_dev.jsonl"  # ../shared beside the repo
BLANK_CONTEXT = 0.3  # share of examples trained without left context (the dev set has ~19%)
MIN_LR_RATIO = 0.1
PREFETCH_BATCHES = 4
# bf16 dense peak of the accelerators this project may be lent, for MFU (FLOP/s)
PEAK_FLOPS = {"H200": 989e12, "H100": 989e12, "A100": 312e12}


def learning_rate(step: int, progress: float, peak: float, warmup: int) -> float:
    """Linear warmup over `warmup` steps, times a cosine decay to MIN_LR_RATIO * peak over progress 0 → 1
    (the share of the run done: of its steps, or of its minutes)."""
    warm = min(1.0, (step + 1) / max(1, warmup))
    decay = MIN_LR_RATIO + (1 - MIN_LR_RATIO) * 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))
    return peak * warm * decay


class Batches:
    """Batch `step` is a pure function of (seed, step): an epoch-seeded shuffle, so a resumed run
    sees exactly the batches an uninterrupted one would, and every process of a data-parallel run the
    same global batch.

    Examples are drawn BUCKET_STEPS batches at a time, sorted by length and cut into batches of
    neighbours (served in a shuffled order), so a batch pads to a length close to each of its examples:
    with random batches half of the tokens were padding."""

    BUCKET_STEPS = 8

    def __init__(
        self, examples: Pack, batch_size: int, seed: int, max_len: int, oversample: dict[str, int] | None = None
    ):
        self.examples, self.batch_size, self.seed, self.max_len = examples, batch_size, seed, max_len
        self.epoch_indices = epoch_indices(examples, oversample or {})
        self._epoch, self._bucket = -1, -1
        self._order: list[int] = []
        self._batches: list[list[tuple[list[int], int]]] = []

    def __call__(self, step: int) -> list[tuple[list[int], int]]:
        """The global batch of `step` as (ids, prompt length) examples."""
        bucket = step // self.BUCKET_STEPS
        if bucket != self._bucket:
            self._bucket, self._batches = bucket, self._fill(bucket)
        return self._batches[step % self.BUCKET_STEPS]

    def _fill(self, bucket: int) -> list[list[tuple[list[int], int]]]:
        rng = random.Random(self.seed * 1_000_003 + bucket)
        first = bucket * self.BUCKET_STEPS * self.batch_size
        examples = []
        for i in range(first, first + self.BUCKET_STEPS * self.batch_size):
            example = self.examples.example(self._shuffled(i), with_context=rng.random() >= BLANK_CONTEXT)
            if len(example[0]) <= self.max_len:
                examples.append(example)
        if not examples:
            raise ValueError(f"no training example of steps {first // self.batch_size}.. fits {self.max_len} tokens")
        examples.sort(key=lambda example: len(example[0]))
        size = -(-len(examples) // self.BUCKET_STEPS)
        batches = [examples[k : k + size] for k in range(0, len(examples), size)]
        batches += [batches[-1]] * (self.BUCKET_STEPS - len(batches))  # only when many were too long
        rng.shuffle(batches)
        return batches

    def _shuffled(self, i: int) -> int:
        """The example at position i of the endless stream of epoch-wise shuffles."""
        size = len(self.epoch_indices)
        epoch = i // size
        if epoch != self._epoch:
            generator = torch.Generator().manual_seed(self.seed * 1_000_003 + epoch)
            self._epoch, self._order = epoch, self.epoch_indices[torch.randperm(size, generator=generator)].tolist()
        return self._order[i % size]


def epoch_indices(examples: Pack, oversample: dict[str, int]) -> torch.Tensor:
    """The examples of one epoch: each once, and those of an oversampled source `times` times in all (the
    gold sources are small: the whole of WAC and Anthy is ~7 % of a full pack)."""
    indices = [torch.arange(len(examples))]
    sources = torch.from_numpy(examples.sources.astype("int64"))
    for name, times in sorted(oversample.items()):
        if name not in examples.manifest["sources"]:
            known = ", ".join(examples.manifest["sources"])
            raise SystemExit(f"--oversample: the pack has no source {name!r} ({known})")
        chosen = torch.nonzero(sources == examples.manifest["sources"].index(name)).flatten()
        indices += [chosen] * (times - 1)
    return torch.cat(indices)


def parse_oversample(text: str) -> dict[str, int]:
    """`wac=3,anthy=2` → {"wac": 3, "anthy": 2}: whole times per epoch, at least 1."""
    counts = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, _, times = item.partition("=")
        if not times.strip().isdigit() or int(times) < 1:
            raise argparse.ArgumentTypeError(f"{item!r} is not source=TIMES with TIMES ≥ 1")
        counts[name.strip()] = int(times)
    return counts


def process_device(device: str, world_size: int, local_rank: int) -> str:
    """The torch device of this process: a CUDA device always with its index (torch.cuda.set_device refuses
    a bare "cuda"), under torchrun the process's own GPU."""
    if not device.startswith("cuda"):
        return device
    if world_size > 1:
        return f"cuda:{local_rank}"
    return device if ":" in device else "cuda:0"


class World:
    """This process's place in a data-parallel run (torchrun's environment), or a world of one."""

    def __init__(self, device: str):
        self.size = int(os.environ.get("WORLD_SIZE", "1"))
        self.rank = int(os.environ.get("RANK", "0"))
        self.device = process_device(device, self.size, int(os.environ.get("LOCAL_RANK", "0")))
        if self.device.startswith("cuda"):
            if not torch.cuda.is_available():
                raise SystemExit("--device cuda, but torch sees no CUDA device")
            torch.cuda.set_device(self.device)
        if self.size > 1:
            torch.distributed.init_process_group("nccl" if self.device.startswith("cuda") else "gloo")

    @property
    def main(self) -> bool:
        return self.rank == 0

    def rows(self, batch: list) -> list:
        return batch[self.rank :: self.size]

    def broadcast(self, value: float) -> float:
        """Rank 0's value on every process (a time that must be agreed: when to stop, the schedule)."""
        if self.size == 1:
            return value
        tensor = torch.tensor([value], dtype=torch.float64, device=self.device)
        torch.distributed.broadcast(tensor, 0)
        return float(tensor.item())

    def mean(self, value: torch.Tensor) -> float:
        if self.size > 1:
            value = value.detach().clone()
            torch.distributed.all_reduce(value)
            value /= self.size
        return float(value.item())

    def barrier(self) -> None:
        if self.size > 1:
            torch.distributed.barrier()

    def close(self) -> None:
        if self.size > 1:
            torch.distributed.destroy_process_group()


def prefetched(batches: Batches, world: World, steps: range) -> Iterator[tuple[torch.Tensor, torch.Tensor, int, int]]:
    """(tokens, labels, global label count, global token count) of this process's rows of each step's batch,
    built in a thread ahead of the training loop (the GPU need not wait on Python)."""
    ready: queue.Queue = queue.Queue(PREFETCH_BATCHES)
    stop = threading.Event()

    def produce() -> None:
        try:
            for step in steps:
                batch = batches(step)
                n_labels = sum(len(ids) - n_prompt for ids, n_prompt in batch)
                n_tokens = sum(len(ids) for ids, _ in batch)
                tokens, labels = batch_tensors(world.rows(batch))
                while not stop.is_set():
                    try:
                        ready.put((tokens, labels, n_labels, n_tokens), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
        except BaseException as error:  # surfaced in the training loop
            ready.put(error)

    thread = threading.Thread(target=produce, name="batches", daemon=True)
    thread.start()
    try:
        for _ in steps:
            item = ready.get()
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()


@dataclass
class Best:
    """The weights of the lowest held-out loss so far (on the CPU), with the losses seen."""

    loss: float = math.inf
    step: int | None = None
    weights: dict | None = None
    history: list = field(default_factory=list)


def keep_if_best(model: LlamaLM, loss: float | None, step: int, best: Best) -> Best:
    best.history.append(loss)
    if loss is not None and loss < best.loss:
        best.loss, best.step = loss, step
        best.weights = {name: tensor.detach().to("cpu", copy=True) for name, tensor in model.state_dict().items()}
    return best


def peak_flops(device: str, given_tflops: float | None) -> float | None:
    if given_tflops:
        return given_tflops * 1e12
    if device.startswith("cuda"):
        name = torch.cuda.get_device_name(device)
        return next((flops for key, flops in PEAK_FLOPS.items() if key in name), None)
    return None


def progress_bar(total: int, start: int, enabled: bool):
    """tqdm when installed and wanted; otherwise None (the loop prints a line every --log-every steps)."""
    if not enabled:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, initial=start, unit="step", file=sys.stderr, dynamic_ncols=True)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="tsuzuri-train", description=__doc__.split("\n\n")[0])
    data = parser.add_mutually_exclusive_group(required=True)
    data.add_argument("--pack", type=Path, help="a pack made by tsuzuri-train pack")
    data.add_argument("--corpus", type=Path, help="shared/corpus: packed into OUT/data first")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--config", choices=sorted(CONFIGS), default="small")
    parser.add_argument("--steps", type=int, default=20000, help="total optimizer steps")
    parser.add_argument("--minutes", type=float, default=None, help="wall-clock budget of this run")
    parser.add_argument("--resume", action="store_true", help="continue from OUT/checkpoint.pt if there is one")
    parser.add_argument(
        "--init-from",
        type=Path,
        default=None,
        help="start from this earlier run's weights and vocabulary (new data, fresh optimizer "
        "and schedule); ignored when resuming",
    )
    parser.add_argument(
        "--stop-at",
        type=int,
        default=None,
        help="end this run at this step (checkpointed; the schedule still spans --steps)",
    )
    parser.add_argument("--batch-size", type=int, default=64, help="examples per step, all processes together")
    parser.add_argument("--lr", type=float, default=1e-3, help="peak learning rate")
    parser.add_argument("--warmup", type=int, default=None, help="warmup steps (default: 5%% of --steps)")
    parser.add_argument("--weight-decay", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2, help="CPU threads for torch")
    parser.add_argument("--device", default="cpu", help="torch device (cpu, cuda)")
    parser.add_argument("--compile", action="store_true", help="torch.compile the loss (dynamic shapes)")
    parser.add_argument(
        "--peak-tflops",
        type=float,
        default=None,
        help="the device's peak for MFU (default: known GPUs' bf16 dense peak; none on CPU)",
    )
    parser.add_argument(
        "--text-lines",
        type=int,
        default=None,
        help="with --corpus: at most this many lines of each text file (0: WAC only)",
    )
    parser.add_argument("--mix", type=parse_mix, default=None, help="with --corpus: the register mix (see pack)")
    parser.add_argument("--max-mib", type=float, default=None, help="with --corpus: cap the pack (default: none)")
    parser.add_argument(
        "--oversample",
        type=parse_oversample,
        default=None,
        help="source=TIMES,...: show a source's examples TIMES times per epoch (e.g. wac=3,anthy=3)",
    )
    parser.add_argument("--checkpoint-every", type=int, default=500)
    parser.add_argument("--log-every", type=int, default=50)
    parser.add_argument("--dtype", choices=("q8_0", "f16", "f32"), default="q8_0", help="GGUF weight type")
    parser.add_argument(
        "--valid-every",
        type=int,
        default=0,
        help="held-out loss every N steps; the lowest one's weights are exported (0: the last)",
    )
    parser.add_argument(
        "--valid-loss-items", type=int, default=1000, help="held-out examples whose loss is reported on the way out"
    )
    parser.add_argument(
        "--valid-items", type=int, default=200, help="held-out examples decoded greedily on the way out (PyTorch)"
    )
    parser.add_argument("--dev", type=Path, default=DEFAULT_DEV, help="dev items (skipped when missing)")
    parser.add_argument("--dev-items", type=int, default=200, help="dev items converted by llama.cpp (0: none)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser.parse_args(argv)


def train(argv: list[str] | None = None) -> dict:
    """Run (or resume) training, export, evaluate; return the run record also written to OUT/run.json."""
    args = parse_args(argv)
    world = World(args.device)
    device = world.device
    try:
        return _train(args, world, device)
    finally:
        world.close()


def _train(args: argparse.Namespace, world: World, device: str) -> dict:
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    cuda = device.startswith("cuda")
    if cuda:
        torch.backends.cuda.matmul.allow_tf32 = True
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    checkpoint_path = out / "checkpoint.pt"
    resuming = args.resume and checkpoint_path.is_file()
    init_from = None if resuming else args.init_from
    pack_dir = args.pack or out / "data"
    if args.pack is None and not (pack_dir / MANIFEST_FILE).is_file():  # packed once, reused on resume
        if world.main:
            print(f"packing {args.corpus} …", file=sys.stderr)
            pack(
                args.corpus,
                pack_dir,
                max_mib=args.max_mib,
                mix=args.mix,
                seed=args.seed,
                text_lines=args.text_lines,
                characters=read_characters(init_from / "data" / CHARS_FILE) if init_from else None,
            )
        world.barrier()
    examples = Pack(pack_dir)
    valid = Pack(pack_dir, "valid")
    vocab = examples.vocab
    shape = CONFIGS[args.config]
    model = LlamaLM(shape, len(vocab)).to(device)
    objective = Objective(model)
    runner: Any = torch.nn.parallel.DistributedDataParallel(objective) if world.size > 1 else objective
    if args.compile:
        runner = torch.compile(runner, dynamic=True)
    matrices = [p for p in model.parameters() if p.dim() >= 2]  # norms are not decayed
    vectors = [p for p in model.parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW(
        [{"params": matrices, "weight_decay": args.weight_decay}, {"params": vectors, "weight_decay": 0.0}],
        lr=args.lr,
        betas=(0.9, 0.95),
        fused=cuda,
    )
    warmup = args.warmup if args.warmup is not None else max(1, args.steps // 20)
    autocast = torch.autocast("cuda", dtype=torch.bfloat16) if cuda else nullcontext()

    def load_checkpoint(path: Path) -> dict:
        state = torch.load(path, map_location=device, weights_only=False)
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
        if world.main:
            tmp = checkpoint_path.with_suffix(".tmp")
            torch.save(
                {
                    "config": args.config,
                    "n_vocab": len(vocab),
                    "step": step,
                    "losses": losses,
                    "initial": initial,
                    "model": model.state_dict(),
                    "optimizer": optimizer.state_dict(),
                },
                tmp,
            )
            tmp.replace(checkpoint_path)  # a kill mid-write never leaves a broken checkpoint
        world.barrier()

    n_params = sum(p.numel() for p in model.parameters())
    flops_per_token = 6 * (n_params - model.embed.weight.numel())  # 6N; attention's share (~4%) left out
    peak = peak_flops(device, args.peak_tflops)
    batches = Batches(examples, args.batch_size, args.seed, shape.context, args.oversample)
    stop_at = args.steps if args.stop_at is None else min(args.stop_at, args.steps)
    budget = None if args.minutes is None else args.minutes * 60
    bar = progress_bar(stop_at, step, world.main and not args.quiet)
    model.train()
    window_loss, window_steps, window_tokens = torch.zeros((), device=device), 0, 0
    started = window_started = time.perf_counter()
    first_step = step
    tokens_seen = 0
    best, validations = Best(), []
    for tokens, labels, n_labels, n_tokens in prefetched(batches, world, range(step, stop_at)):
        elapsed = world.broadcast(time.perf_counter() - started) if budget is not None else 0.0
        if budget is not None and elapsed >= budget:
            break
        progress = max(step / args.steps, elapsed / budget if budget else 0.0)
        lr = learning_rate(step, progress, args.lr, warmup)
        for group in optimizer.param_groups:
            group["lr"] = lr
        with autocast:
            loss = runner(
                tokens.to(device, non_blocking=True), labels.to(device, non_blocking=True), n_labels / world.size
            )
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        step += 1
        if args.compile and step == first_step + 1:  # the budget's clock starts after the compiling step
            started = window_started = time.perf_counter()
            window_loss.zero_()
            window_steps = window_tokens = 0
            continue
        window_loss += loss.detach()
        window_steps += 1
        window_tokens += n_tokens
        tokens_seen += n_tokens
        if bar is not None:
            bar.update(1)
        if step % args.log_every == 0 or step == stop_at:
            mean_loss = world.mean(window_loss) / window_steps  # the mean of the processes' shares
            seconds = time.perf_counter() - window_started
            rate = window_tokens / seconds
            losses.append(
                {
                    "step": step,
                    "loss": mean_loss,
                    "lr": lr,
                    "tokens_per_s": round(rate),
                    "mfu": round(rate * flops_per_token / peak, 4) if peak else None,
                }
            )
            if bar is not None:
                bar.set_postfix(loss=f"{mean_loss:.3f}", lr=f"{lr:.2e}", tok_s=f"{rate:.0f}")
            elif world.main and not args.quiet:
                print(f"step {step}/{args.steps} loss {mean_loss:.4f} lr {lr:.2e} {rate:.0f} tokens/s", file=sys.stderr)
            window_loss.zero_()
            window_steps, window_tokens, window_started = 0, 0, time.perf_counter()
        if args.valid_every and step % args.valid_every == 0 and world.main and len(valid):
            best = keep_if_best(model, valid_loss(model.eval(), valid, args.valid_loss_items, device), step, best)
            model.train()
            validations.append({"step": step, "valid_loss": best.history[-1]})
        if step % args.checkpoint_every == 0:
            save_checkpoint()
    if window_steps:  # the budget ended between two log lines
        losses.append(
            {
                "step": step,
                "loss": world.mean(window_loss) / window_steps,
                "lr": lr,
                "tokens_per_s": round(window_tokens / (time.perf_counter() - window_started)),
                "mfu": None,
            }
        )
    save_checkpoint()
    if bar is not None:
        bar.close()
    seconds = time.perf_counter() - started
    if not world.main:
        return {}

    model.eval()
    exported_step: int | None
    final_valid, exported_step = valid_loss(model, valid, args.valid_loss_items, device), step
    if best.weights is not None and final_valid is not None and best.loss < final_valid:
        model.load_state_dict(best.weights)  # many passes over a small pack: the step that generalised best
        final_valid, exported_step = best.loss, best.step
    gguf_path = write_gguf(
        out / "model.gguf", vocab, shape, model.export_weights(), dtype=args.dtype, prompt_format=PROMPT_FORMAT
    )
    manifest = examples.manifest
    record = {
        "config": args.config,
        "shape": asdict(shape),
        "n_vocab": len(vocab),
        "n_params": n_params,
        "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "device": torch.cuda.get_device_name(device) if cuda else "cpu",
        "world_size": world.size,
        "data": {
            "pack": str(pack_dir),
            "pairs": manifest["pairs"],
            "pairs_by_source": manifest["pairs_by_source"],
            "tokens": manifest["tokens"],
            "mix": manifest["mix"],
        },
        "initial": initial,
        "steps": step,
        "steps_this_run": step - first_step,
        "seconds": round(seconds, 1),
        "seconds_per_step": seconds / (step - first_step) if step > first_step else None,
        "tokens_this_run": tokens_seen,
        "tokens_per_s": round(tokens_seen / seconds) if seconds else None,
        "mfu": round(tokens_seen / seconds * flops_per_token / peak, 4) if peak and seconds else None,
        "epochs_this_run": round((step - first_step) * args.batch_size / len(batches.epoch_indices), 3),
        "losses": losses,
        "gguf": {
            "path": str(gguf_path),
            "dtype": args.dtype,
            "sha256": sha256_file(gguf_path),
            "bytes": gguf_path.stat().st_size,
        },
        "validations": validations,
        "exported_step": exported_step,
        "valid": {
            "examples": min(len(valid), args.valid_loss_items),
            "loss": final_valid,
            "greedy": valid_accuracy(model, valid, args.valid_items, device),
        },
        "dev": dev_accuracy(gguf_path, args.dev, args.dev_items, args.threads)
        if args.dev.is_file() and args.dev_items > 0 and can_run_gguf()
        else None,
    }
    (out / "run.json").write_text(json.dumps(record, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: record[k] for k in ("steps", "tokens_per_s", "mfu", "valid", "dev")}, ensure_ascii=False))
    return record


COMMANDS = {
    "pack": ("training.pack", "main"),
    "assemble": ("training.device", "assemble_main"),
    "heldout": ("training.heldout", "main"),
}


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in COMMANDS:
        from importlib import import_module

        module, function = COMMANDS[argv[0]]
        getattr(import_module(module), function)(argv[1:])
        return
    train(argv[1:] if argv[:1] == ["train"] else argv)


if __name__ == "__main__":
    main()
