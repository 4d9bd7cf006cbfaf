"""`tsuzuri-bench`: benchmarks that print JSON (not timed tests; figures vary with machine load).

`tsuzuri-bench engine --json` builds random-weight models of three sizes (same architecture and
vocabulary as our real models), and times a 21-kana conversion on 2 threads. Random weights never
settle on an end of output, so every search runs the same max_new steps (stop tokens are ignored):
greedy and beam are compared at equal output length, the worst case for beam search.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

READING = "キョウハテンキガイイノデコウエンヲサンポシ"  # 21 kana
BEAMS = (3, 8, 16)


def _median_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 3)


def bench_model(path: Path, name: str, threads: int, repeat: int) -> dict:
    from daemon.engine.decoder import SessionDecoder
    from daemon.engine.engine import prompt_tokens
    from daemon.engine.native import Model
    from daemon.engine.prompts import build_prompt
    from daemon.engine.search import log_softmax

    model = Model(path)
    stops: frozenset[int] = frozenset()  # fixed-length outputs (see the module docstring)
    decoder = SessionDecoder(model, n_threads=threads, beam_capacity=max(BEAMS))
    prompt = prompt_tokens(model, build_prompt("jinen", READING, ""))
    shorter = prompt_tokens(model, build_prompt("jinen", READING[:-1], ""))
    max_new = len(READING) + 8  # what the engine allows for this reading

    def cold(fn):
        def run():
            decoder.reset()
            fn()
        return run

    def keystroke():
        decoder.reset()
        decoder.greedy(shorter, max_new, stops)  # the state after the previous key, not timed
        start = time.perf_counter()
        decoder.greedy(prompt, max_new, stops)
        return (time.perf_counter() - start) * 1000

    decoder.greedy(prompt, max_new, stops)  # warm-up: page in the weights
    prompt_ms = _median_ms(cold(lambda: decoder.prefill(prompt)), repeat)
    ctx = decoder._ctx
    decoder.prefill(prompt)
    step_times = []
    for i in range(max(repeat, 10)):
        start = time.perf_counter()
        log_softmax(ctx.decode([prompt[-1]], [len(prompt) + i], [0], [True])[0])
        step_times.append((time.perf_counter() - start) * 1000)
    decoder.reset()
    result = {
        "name": name,
        "params": model.n_params,
        "prompt_tokens": len(prompt),
        "max_new": max_new,
        "prompt_ms": prompt_ms,
        "step_ms": round(statistics.median(step_times), 3),
        "greedy_ms": _median_ms(cold(lambda: decoder.greedy(prompt, max_new, stops)), repeat),
        "beam_ms": {str(b): _median_ms(cold(lambda b=b: decoder.beam(prompt, b, max_new, stops)), repeat)
                    for b in BEAMS},
        "keystroke_ms": round(statistics.median(keystroke() for _ in range(repeat)), 3),
    }
    result["beam8_over_greedy"] = round(result["beam_ms"]["8"] / result["greedy_ms"], 3)
    decoder.close()
    model.close()
    return result


def engine_benchmark(sizes: list[str], threads: int, repeat: int, dtype: str) -> dict:
    from daemon.engine.gguf_model import write_random_model

    models = []
    with tempfile.TemporaryDirectory(prefix="tsuzuri-bench-") as tmp:
        for size in sizes:
            path = write_random_model(Path(tmp) / f"{size}.gguf", size, seed=0, dtype=dtype)
            models.append(bench_model(path, size, threads, repeat))
            path.unlink()
    return {"reading": READING, "threads": threads, "dtype": dtype, "models": models}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tsuzuri-bench", description=__doc__)
    sub = parser.add_subparsers(dest="what", required=True)
    engine = sub.add_parser("engine", help="greedy / beam / keystroke timings of the conversion engine")
    engine.add_argument("--json", action="store_true", help="print one JSON object (the default)")
    engine.add_argument("--sizes", default="tiny,m25,m100", help="comma-separated: tiny, m25, m100")
    engine.add_argument("--threads", type=int, default=2)
    engine.add_argument("--repeat", type=int, default=5)
    engine.add_argument("--dtype", default="q8_0", choices=["q8_0", "f16", "f32"],
                        help="weight type (default q8_0, what we ship)")
    args = parser.parse_args(argv)
    result = engine_benchmark(args.sizes.split(","), args.threads, args.repeat, args.dtype)
    print(json.dumps(result, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
