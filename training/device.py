"""A training run on a lent GPU machine, and bringing its model back.

On the device (scripts/train-on-device.sh CONFIG MINUTES calls `python3 -m training.device`):
    check the GPU → a smoke run of SMOKE seconds (the loss must fall and the GGUF must export) → the budgeted
    run → into OUT: the Q8_0 GGUF in parts of at most PART_BYTES, run.json (with the parts' sha256), loss.tsv
    and smoke.json. Only the repository travels there, and at most 8 files of 16 MiB come back.
Here:
    tsuzuri-train assemble FILES_AT --out MODEL.gguf [--suite DIR] [--limit K]
    joins the parts, checks every sha256, and runs tsuzuri-eval --suite on the model.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

PART_BYTES = 15 * 2**20  # under the 16 MiB a returned file may have
MAX_RETURNED_FILES = 8
RETURNED = ("run.json", "loss.tsv", "smoke.json")  # beside the parts
SMOKE_SECONDS = 20.0


def split_file(path: Path, out: Path, part_bytes: int = PART_BYTES) -> list[dict]:
    """`path` cut into out/NAME.partNN files of at most part_bytes; their names, sizes and sha256."""
    parts: list[dict] = []
    with open(path, "rb") as f:
        while block := f.read(part_bytes):
            name = f"{path.name}.part{len(parts):02d}"
            (out / name).write_bytes(block)
            parts.append({"file": name, "bytes": len(block), "sha256": hashlib.sha256(block).hexdigest()})
    return parts


def join_parts(folder: Path, parts: list[dict], whole_sha256: str, out: Path) -> None:
    """Join the parts listed by run.json into `out` (atomically), checking each part's and the whole's sha256."""
    whole = hashlib.sha256()
    tmp = out.with_name(out.name + ".tmp")
    with open(tmp, "wb") as f:
        for part in parts:
            data = (folder / part["file"]).read_bytes()
            if hashlib.sha256(data).hexdigest() != part["sha256"] or len(data) != part["bytes"]:
                tmp.unlink()
                raise SystemExit(f"{folder / part['file']}: size or sha256 differs from run.json's")
            whole.update(data)
            f.write(data)
    if whole.hexdigest() != whole_sha256:
        tmp.unlink()
        raise SystemExit(f"the joined model's sha256 {whole.hexdigest()} is not run.json's {whole_sha256}")
    tmp.replace(out)


def check_device(device: str) -> dict:
    """What the run will use; stops with a clear message when the asked-for device is not there."""
    import torch

    info: dict[str, Any] = {"torch": torch.__version__, "device": device}
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise SystemExit(f"no CUDA device visible to torch {torch.__version__}")
        properties = torch.cuda.get_device_properties(0)
        info.update(
            name=properties.name,
            memory_gib=round(properties.total_memory / 2**30, 1),
            bf16=torch.cuda.is_bf16_supported(),
            count=torch.cuda.device_count(),
        )
    try:
        import gguf  # noqa: F401  (the GGUF export needs it: carried in the pack's site/ when not installed)
    except ImportError as error:
        raise SystemExit(f"cannot import gguf ({error}): put the pack's site/ on PYTHONPATH") from None
    return info


def verify_gguf(path: Path) -> int:
    """The number of tensors of an exported GGUF, read back (the export works)."""
    from gguf import GGUFReader

    return len(GGUFReader(path).tensors)


def steady_rate(losses: list[dict]) -> float:
    """Median tokens/s of the log windows after the first (which holds start-up and any compilation)."""
    rates = sorted(entry["tokens_per_s"] for entry in losses[1:]) or [losses[0]["tokens_per_s"]]
    return rates[len(rates) // 2]


def smoke(train, common: list[str], work: Path, seconds: float, try_compile: bool) -> tuple[dict, bool]:
    """A short eager run that must lower the loss and export a readable GGUF; with try_compile, a second one
    under torch.compile, kept if it ran and was faster. Returns the smoke record and whether to compile."""

    def one(use_compile: bool) -> dict:
        shutil.rmtree(work, ignore_errors=True)
        record = train(
            [
                *common,
                "--out",
                str(work),
                "--minutes",
                str(seconds / 60),
                "--log-every",
                "5",
                "--valid-items",
                "20",
                *(["--compile"] if use_compile else []),
            ]
        )
        losses = [entry["loss"] for entry in record["losses"]]
        return {
            "steps": record["steps"],
            "first_loss": losses[0] if losses else None,
            "last_loss": losses[-1] if losses else None,
            "loss_falls": len(losses) >= 2 and losses[-1] < losses[0],
            "gguf_tensors": verify_gguf(Path(record["gguf"]["path"])),
            "tokens_per_s": steady_rate(record["losses"]) if record["losses"] else None,
        }

    eager = one(False)
    if not eager["loss_falls"]:
        raise SystemExit(f"smoke run: the loss did not fall ({eager})")
    summary: dict[str, Any] = {"eager": eager, "compiled": None, "compile": False}
    if try_compile:
        try:
            compiled = one(True)
        except Exception as error:  # noqa: BLE001 (a failed compilation leaves the eager run)
            compiled = {"failed": f"{type(error).__name__}: {error}"[:2000]}
        summary["compiled"] = compiled
        summary["compile"] = (
            bool(compiled.get("loss_falls")) and compiled["tokens_per_s"] > 1.05 * eager["tokens_per_s"]
        )
    return summary, bool(summary["compile"])


def loss_tsv(losses: list[dict]) -> str:
    lines = ["step\tloss\tlr\ttokens_per_s\tmfu"]
    lines += [f"{e['step']}\t{e['loss']:.5f}\t{e['lr']:.3e}\t{e['tokens_per_s']}\t{e['mfu']}" for e in losses]
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> dict:
    from training.train import train

    started = time.perf_counter()
    info = check_device(args.device)
    print(json.dumps({"device_check": info}), flush=True)
    out, work = args.out, args.work
    out.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    common = [
        "--pack",
        str(args.pack),
        "--config",
        args.config,
        "--device",
        args.device,
        "--dev-items",
        "0",
        "--quiet",
        *args.train_args,
    ]
    smoke_record, use_compile = smoke(
        train, common, work / "smoke", args.smoke_seconds, args.device.startswith("cuda") and not args.no_compile
    )
    (out / "smoke.json").write_text(json.dumps(smoke_record, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({"smoke": smoke_record}), flush=True)
    record = train(
        [
            *common,
            "--out",
            str(work / "run"),
            "--minutes",
            str(args.minutes),
            "--valid-items",
            str(args.valid_items),
            *(["--compile"] if use_compile else []),
        ]
    )
    gguf_path = Path(record["gguf"]["path"])
    parts = split_file(gguf_path, out)
    if len(parts) + len(RETURNED) > MAX_RETURNED_FILES:
        raise SystemExit(f"the model needs {len(parts)} parts: more than {MAX_RETURNED_FILES} files come back")
    record.update(
        device_check=info, smoke=smoke_record, parts=parts, total_seconds=round(time.perf_counter() - started, 1)
    )
    (out / "loss.tsv").write_text(loss_tsv(record["losses"]), encoding="utf-8")
    (out / "run.json").write_text(json.dumps(record, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(
        json.dumps(
            {
                "tokens_per_s": record["tokens_per_s"],
                "mfu": record["mfu"],
                "steps": record["steps"],
                "tokens": record["tokens_this_run"],
                "valid": record["valid"],
                "parts": len(parts),
            }
        ),
        flush=True,
    )
    return record


def assemble(args: argparse.Namespace) -> int:
    record = json.loads((args.files_at / "run.json").read_text(encoding="utf-8"))
    join_parts(args.files_at, record["parts"], record["gguf"]["sha256"], args.out)
    print(
        json.dumps(
            {
                "model": str(args.out),
                "sha256": record["gguf"]["sha256"],
                "config": record["config"],
                "steps": record["steps"],
                "tokens_per_s": record["tokens_per_s"],
                "valid": record["valid"],
            },
            ensure_ascii=False,
        ),
        flush=True,
    )
    if args.no_eval:
        return 0
    from daemon.tools.eval import main as eval_main

    eval_args = ["--suite", *([str(args.suite)] if args.suite else []), "--json", "--model", str(args.out)]
    return eval_main(eval_args + (["--limit", str(args.limit)] if args.limit is not None else []))


def run_main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m training.device", description="the budgeted GPU run")
    parser.add_argument("config")
    parser.add_argument("minutes", type=float)
    parser.add_argument("--pack", type=Path, required=True)
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(os.environ.get("OUT", "build/device-out")),
        help="what comes back (default $OUT)",
    )
    parser.add_argument("--work", type=Path, default=Path("build/device-run"), help="checkpoints, full GGUF")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--smoke-seconds", type=float, default=SMOKE_SECONDS)
    parser.add_argument("--valid-items", type=int, default=1000, help="held-out examples decoded on the way out")
    parser.add_argument("--no-compile", action="store_true", help="never try torch.compile")
    parser.epilog = "Options after -- go to tsuzuri-train (the later of two equal options wins)."
    argv = sys.argv[1:] if argv is None else argv
    cut = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:cut])
    args.train_args = argv[cut + 1 :]
    run(args)


def assemble_main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="tsuzuri-train assemble", description="join a device run's model, eval it")
    parser.add_argument("files_at", type=Path, help="the folder the device's $OUT came back to")
    parser.add_argument("--out", type=Path, required=True, help="the joined GGUF")
    parser.add_argument("--suite", type=Path, default=None, help="eval sets (default: tsuzuri-eval's)")
    parser.add_argument("--limit", type=int, default=None, help="items per set")
    parser.add_argument("--no-eval", action="store_true")
    sys.exit(assemble(parser.parse_args(argv)))


if __name__ == "__main__":
    run_main()
