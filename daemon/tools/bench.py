"""`tsuzuri-bench`: benchmarks that print JSON (not timed tests; figures vary with machine load).

`tsuzuri-bench dbus --json` starts a private bus and the real daemon, and reports the round trip of a key
event that only composes (no conversion) on the daemon's private channel, as the frontends send it, and on the
bus, next to an empty call on the bus, and the daemon's RSS with 1, 10 and 50 sessions that each ran one model
conversion.

`tsuzuri-bench startup [--model M] --json` starts a private bus and the real daemon and reports, from the
daemon's start: its first answer on the bus, a session's first key and first conversion (Space), and the model
ready (StatusChanged); none of the first three may wait for the model.

`tsuzuri-bench memory [--model M] [--typed T] [--conversions N] --json` reports the daemon's resident memory
(RSS, anonymous, file-backed, peak) after warm-up, after a session typed T conversions (default 200), after N
`Convert` calls (default 1,000), and after 10 s idle.

`tsuzuri-bench soak --sessions N --seconds T --json` starts a private bus and the real daemon (default model),
and N sessions on N connections type distinct phrases (drawn from ~90,000, more than the daemon's ranking cache
holds) at a person's pace (8 keys/s, Space, then Return) for T
seconds: latency per call (p50/p99 of keys, Space and Return), errors, the daemon's RSS at the start and
the end (and its anonymous part at every tenth of the run), then every client disconnects (the daemon must
reap their sessions) and N new ones connect and type once more (the daemon must still serve).

`tsuzuri-bench hostile [--clients C] [--in-flight F] [--seconds T] [--model M] --json` starts the real daemon, and
C connections in another process each keep F maximal `Convert` calls (1,000 distinct kana, 100 candidates) going
for T seconds while one session types distinct phrases at a person's pace: the typist's key latency (p50/p95/p99,
max, keys over 200 ms), the calls answered and refused, the daemon's peak RSS, and its anonymous memory 10 s after
the hostile clients have gone.

`tsuzuri-bench live [--set FILE] [--limit K] [--key-interval MS] [--load N] --json` turns live conversion on
and starts the real daemon twice on a private bus, with the default model and with none; one session types each
item's reading (romaji, key by key, one key every MS milliseconds from the previous key's send, as a person
types) and then Space; `--load N` keeps N CPU-bound processes running beside every run. Per key: the time from
sending the key to its answer, which carries its live conversion (and how many OutputChanged signals improved
the live text after a pause, and how many of those improvements a later key put back: its live text began again
with the text the improvement replaced); per item: the time from Space to the reply that shows the candidate
window (with live conversion the first Space converts and the second opens the window, as in Mozc). The same
keys go to Mozc through ../shared/tools/peers.py where it runs (its answer to a key holds its realtime
conversion too): p50/p95/p99 of each, and the ratios model on / model off and model on / Mozc.

`tsuzuri-bench engine --json` builds random-weight models of three sizes (same architecture and
vocabulary as our real models), and times a 21-kana conversion on 2 threads. Random weights never
settle on an end of output, so every search runs the same max_new steps (stop tokens are ignored):
greedy and beam are compared at equal output length, the worst case for beam search.

`tsuzuri-bench engine --drafts [--set FILE] [--limit K] [--lookahead W,N,G]` types a set's readings kana by kana
into the real model's greedy decoding, guessing ahead in each way (none, the previous output, the dictionary's
best path, lookahead, lookahead and the previous output): steps per output token, the share of guessed tokens
accepted, time per conversion, and outputs unlike plain greedy's.

`tsuzuri-bench engine --sessions` times 1, 2 and 8 sessions' keystrokes at once, each rescoring its dictionary
candidates: decoded session after session, as the daemon does, and batched into one llama_decode per stage
for several n_ubatch.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
    ctx = decoder._context()
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
        "beam_ms": {
            str(b): _median_ms(cold(lambda b=b: decoder.beam(prompt, b, max_new, stops)), repeat) for b in BEAMS
        },
        "keystroke_ms": round(statistics.median(keystroke() for _ in range(repeat)), 3),
    }
    result["beam8_over_greedy"] = round(result["beam_ms"]["8"] / result["greedy_ms"], 3)
    decoder.close()
    model.close()
    return result


def engine_benchmark(sizes: list[str], threads: int, repeat: int, dtype: str) -> dict:
    from daemon.tools.gguf_writer import write_random_model

    models = []
    with tempfile.TemporaryDirectory(prefix="tsuzuri-bench-") as tmp:
        for size in sizes:
            path = write_random_model(Path(tmp) / f"{size}.gguf", size, seed=0, dtype=dtype)
            models.append(bench_model(path, size, threads, repeat))
            path.unlink()
    return {"reading": READING, "threads": threads, "dtype": dtype, "models": models}


# How greedy decoding guesses ahead, compared by tsuzuri-bench engine --drafts.
DRAFT_KINDS = ("none", "previous_output", "dictionary_path", "lookahead", "lookahead_and_previous_output")
DRAFTING_KINDS = ("previous_output", "dictionary_path", "lookahead_and_previous_output")
LOOKAHEAD = "4,4,4"  # W, N, G


def draft_benchmark(set_path: Path, limit: int, threads: int, model_name: str, lookahead: str) -> dict:
    """Each item's reading converted greedily kana by kana (its every prefix, one session), once per way of
    guessing ahead: decoding steps per output token, the guessed tokens the model accepted, the time per
    conversion, and how many outputs differ from plain greedy's."""
    from daemon.dictionary.system import SystemDictionary
    from daemon.engine.decoder import GreedyStats, SessionDecoder
    from daemon.engine.engine import conversion_prompt, max_new_tokens, stop_tokens
    from daemon.engine.lookahead import LookaheadSettings
    from daemon.engine.native import Model
    from daemon.engine.registry import resolve_model
    from daemon.kana import to_katakana

    settings = LookaheadSettings(*(int(x) for x in lookahead.split(",")))
    path, entry = resolve_model(model_name)
    model = Model(path)
    stops = stop_tokens(model)
    dictionary = SystemDictionary()
    items, _ = live_items(set_path, limit)
    conversions = []  # (prompt, max_new, the dictionary's best path in tokens)
    for item in items:
        for end in range(1, len(item.reading) + 1):
            reading = to_katakana(item.reading[:end])
            best = dictionary.convert(reading, 1)
            conversions.append(
                (
                    conversion_prompt(model, entry, reading, item.context),
                    max_new_tokens(model, reading),
                    model.tokenize(best[0].text, special=False) if best else [],
                )
            )
    results, plain_outputs = {}, None
    for kind in DRAFT_KINDS:
        decoder = SessionDecoder(
            model, n_threads=threads, beam_capacity=1, lookahead=settings if kind.startswith("lookahead") else None
        )
        decoder.greedy(conversions[0][0], 8, stops)  # warm-up: page in the weights
        decoder.reset()
        decoder.stats = GreedyStats()
        outputs, times = [], []
        for prompt, max_new, best_path in conversions:
            start = time.perf_counter()
            found = decoder.greedy(
                prompt,
                max_new,
                stops,
                use_draft=kind in DRAFTING_KINDS,
                draft=best_path if kind == "dictionary_path" else None,
            )
            times.append((time.perf_counter() - start) * 1000)
            outputs.append(found.tokens)
        stats = decoder.stats
        decoder.close()
        plain_outputs = plain_outputs or outputs
        results[kind] = {
            "steps_per_token": round(stats.steps / max(stats.tokens, 1), 3),
            "accepted_per_step": round(stats.accepted / max(stats.steps, 1), 3),
            "acceptance_rate": round(stats.accepted / stats.guessed, 3) if stats.guessed else None,
            "guessed_per_step": round(stats.guessed / max(stats.steps, 1), 2),
            "ms": _percentiles(times),
            # f16 KV and flash attention: a batch's shape moves logits in their last bits, and
            # a near-tie can go the other way (exact mode, as in the tests, never differs)
            "outputs_unlike_plain": sum(a != b for a, b in zip(outputs, plain_outputs)),
        }
    model.close()
    return {
        "set": str(set_path),
        "items": len(items),
        "conversions": len(conversions),
        "model": entry.name,
        "lookahead": {"window": settings.window, "ngram": settings.ngram, "per_token": settings.per_token},
        "drafts": results,
    }


BATCHED_SESSIONS = (1, 2, 8)
BATCH_PAD_ROWS = 8
SCORED_CANDIDATES = 10  # the rescoring's dictionary candidates per reading
UBATCHES = (0, 64, 16)  # 0: the whole batch as one ubatch (so is a smaller batch than n_ubatch)


def decode_columns(rows: Sequence[tuple[int, int, int | Sequence[int]]]) -> tuple[list[int], list[int], list]:
    """Batch rows (token, position, sequence id or ids) as Context.decode's tokens, positions and sequences."""
    return [row[0] for row in rows], [row[1] for row in rows], [row[2] for row in rows]


def batching_benchmark(set_path: Path, threads: int, model_name: str, repeat: int) -> dict:
    """Several sessions' keystrokes at once, each rescoring its reading's dictionary candidates with the model
    (the re-decoded prompt tail, then the candidates' token trie): one context and two decodes per session, one
    after another (what the daemon does), against one shared context decoding every session's rows in the same
    two batches, for several n_ubatch. Wall time of the whole round and the mean time a session waits for its
    scores; and how far the batched scores are from the separate ones."""
    from daemon.dictionary.system import SystemDictionary
    from daemon.engine.decoder import SessionDecoder, candidate_score, common_prefix_len, trie_batch
    from daemon.engine.engine import conversion_prompt
    from daemon.engine.native import Context, Model
    from daemon.engine.registry import resolve_model
    from daemon.engine.search import log_softmax
    from daemon.kana import to_katakana

    path, entry = resolve_model(model_name)
    model = Model(path)
    dictionary = SystemDictionary()
    # (prompt before the key, prompt after it, candidates in tokens)
    keystrokes: list[tuple[list[int], list[int], list[list[int]]]] = []
    for item in live_items(set_path, 4 * max(BATCHED_SESSIONS))[0]:
        reading = to_katakana(item.reading)
        if len(reading) < 4 or len(keystrokes) == max(BATCHED_SESSIONS):
            continue
        prompts = [conversion_prompt(model, entry, r, item.context) for r in (reading[:-1], reading)]
        texts = [c.text for c in dictionary.convert(reading, SCORED_CANDIDATES)]
        keystrokes.append((prompts[0], prompts[1], [model.tokenize(t, special=False) for t in texts]))
    if not keystrokes:
        raise ValueError(f"{set_path}: no reading of 4 kana or more that romaji can type")
    keystrokes = [keystrokes[i % len(keystrokes)] for i in range(max(BATCHED_SESSIONS))]  # a short set repeats

    def separate(sessions: int) -> tuple[float, float, list[list[float]]]:
        decoders = [
            SessionDecoder(model, n_threads=threads, beam_capacity=SCORED_CANDIDATES // 2 + 1) for _ in range(sessions)
        ]
        rounds = []
        for _ in range(repeat):
            for decoder, (before, _, _) in zip(decoders, keystrokes):
                decoder.prefill(before)
            start, answered, scores = time.perf_counter(), [], []
            for decoder, (_, after, candidates) in zip(decoders, keystrokes):
                scores.append(decoder.score(after, candidates, model.eos))
                answered.append(time.perf_counter() - start)
            rounds.append((answered[-1] * 1000, statistics.mean(answered) * 1000, scores))
        for decoder in decoders:
            decoder.close()
        return statistics.median(r[0] for r in rounds), statistics.median(r[1] for r in rounds), rounds[0][2]

    def batched(sessions: int, n_ubatch: int) -> tuple[float, list[list[float]]]:
        span = SCORED_CANDIDATES + 1  # each session's seq ids: its prompt, then one per candidate
        work = keystrokes[:sessions]
        trie_rows = [trie_batch(c, SCORED_CANDIDATES, 10**6)[1] for _, _, c in work]
        n_batch = max(sum(len(t) for t in trie_rows), sum(len(b) for b, _, _ in work), sessions * span) + BATCH_PAD_ROWS
        ctx = Context(
            model,
            n_ctx=sessions * 256 + n_batch,
            n_seq=sessions * span,
            n_batch=n_batch,
            n_threads=threads,
            n_ubatch=min(n_ubatch or n_batch, n_batch),
        )
        times, scores = [], []
        for _ in range(repeat):
            ctx.clear()
            prompt_rows = [(t, i, k * span) for k, (before, _, _) in enumerate(work) for i, t in enumerate(before)]
            ctx.decode(*decode_columns(prompt_rows), [False] * len(prompt_rows))
            start = time.perf_counter()
            tail_rows: list[tuple[int, int, int]] = []
            lasts = []
            for k, (before, after, _) in enumerate(work):
                common = min(common_prefix_len(before, after), len(after) - 1)
                ctx.seq_rm(k * span, common, -1)
                tail_rows += [(t, i, k * span) for i, t in enumerate(after) if i >= common]
                lasts.append(len(tail_rows) - 1)
            firsts = log_softmax(ctx.decode(*decode_columns(tail_rows), [i in lasts for i in range(len(tail_rows))]))
            rows: list[tuple[int, int, list[int]]] = []
            nodes = []
            for k, ((_, after, candidates), trie) in enumerate(zip(work, trie_rows)):
                for slot in range(1, len(candidates) + 1):
                    ctx.seq_cp(k * span, k * span + slot)
                for prefix, slots in trie.items():
                    rows.append((prefix[-1], len(after) + len(prefix) - 1, [k * span + s for s in slots]))
                    nodes.append((k, prefix))
            logprobs = log_softmax(ctx.decode(*decode_columns(rows), [True] * len(rows)))
            after_rows: list[dict[tuple[int, ...], Any]] = [{} for _ in work]
            for (k, prefix), row in zip(nodes, logprobs):
                after_rows[k][prefix] = row
            scores = [
                [candidate_score(firsts[k], after_rows[k], c, model.eos) for c in candidates]
                for k, (_, _, candidates) in enumerate(work)
            ]
            times.append((time.perf_counter() - start) * 1000)
        ctx.close()
        return statistics.median(times), scores

    results = []
    for sessions in BATCHED_SESSIONS:
        total, waited, reference = separate(sessions)
        row = {"sessions": sessions, "separate_ms": round(total, 3), "separate_mean_wait_ms": round(waited, 3)}
        for n_ubatch in UBATCHES:
            ms, scores = batched(sessions, n_ubatch)
            row[f"batched_ms_ubatch_{n_ubatch or 'all'}"] = round(ms, 3)
            row[f"max_score_difference_ubatch_{n_ubatch or 'all'}"] = round(
                max(abs(a - b) for x, y in zip(scores, reference) for a, b in zip(x, y)), 5
            )
        row["batched_over_separate"] = round(row["batched_ms_ubatch_all"] / total, 3)
        results.append(row)
    model.close()
    return {
        "model": entry.name,
        "threads": threads,
        "candidates": SCORED_CANDIDATES,
        "repeat": repeat,
        "rounds": results,
    }


def _rss_mib(pid: int, field: str = "VmRSS") -> float:
    """Resident memory in MiB; field RssAnon leaves out the memory-mapped dictionary and language model,
    whose pages come in as readings touch them (not a leak)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def _children(pid: int) -> list[int]:
    """The processes `pid` started (the daemon's: root Convert's process)."""
    tasks = Path(f"/proc/{pid}/task")
    return [int(child) for task in tasks.iterdir() for child in (task / "children").read_text().split()]


async def _dbus_measurements(address: str, daemon_pid: int, keys: int) -> dict:
    from daemon.tools.client import ClientSession, call, connect, wait_for_status

    bus = await connect(address)
    await wait_for_status(bus, 30)

    async def timed(fn) -> float:
        start = time.perf_counter()
        await fn()
        return (time.perf_counter() - start) * 1000

    async def key_round_trips(session: ClientSession) -> list[float]:
        timings = [await timed(lambda i=i: session.key("a" if i % 2 == 0 else "BackSpace")) for i in range(keys)]
        await session.close()
        return timings

    status_ms = [await timed(lambda: call(bus, "GetStatus")) for _ in range(keys)]
    key_ms = await key_round_trips(await ClientSession.private(bus))  # as the frontends type
    bus_key_ms = await key_round_trips(await ClientSession.create(bus))
    rss = {"0": _rss_mib(daemon_pid)}
    sessions: list = []
    for count in (1, 10, 50):
        while len(sessions) < count:
            s = await ClientSession.create(bus)
            for name in ["k", "a", "n", "j", "i", "space"]:  # one model conversion per session
                await s.key(name)
            sessions.append(s)
        rss[str(count)] = _rss_mib(daemon_pid)
    bus.disconnect()

    def p50_p95(values: list[float]) -> dict:
        return {"p50": round(statistics.median(values), 3), "p95": round(statistics.quantiles(values, n=20)[-1], 3)}

    return {
        "key_roundtrip_ms": p50_p95(key_ms),
        "key_roundtrip_on_the_bus_ms": p50_p95(bus_key_ms),
        "empty_call_ms": p50_p95(status_ms),
        "rss_mib_by_sessions": rss,
        "rss_mib_per_session_at_50": round((rss["50"] - rss["0"]) / 50, 2),
    }


SOAK_WARM_UP_PHRASES = ("kyouhaiitenkidesune", "ashitahaamegafurusoudesu")
# The typed phrases are drawn from these parts (noun particle noun particle verb: about 90,000 phrases), so that
# they are as distinct as a person's and the daemon's ranking cache (RANKINGS_KEPT) cannot hold them all.
SOAK_NOUNS = (
    "kaigi",
    "eki",
    "tomodachi",
    "sensei",
    "gakkou",
    "kaisha",
    "densha",
    "kuruma",
    "tegami",
    "shukudai",
    "ryouri",
    "eiga",
    "hon",
    "shinbun",
    "tenki",
    "kouen",
    "byouin",
    "toshokan",
    "kissaten",
    "shigoto",
    "kazoku",
    "kodomo",
    "ongaku",
    "shashin",
    "yakusoku",
    "jikan",
    "kippu",
    "nimotsu",
    "heya",
    "mado",
)
SOAK_PARTICLES = ("wo", "ni", "de", "to", "ha", "kara", "made", "no")
SOAK_VERBS = (
    "mimashita",
    "ikimasu",
    "kakimashita",
    "yomimasu",
    "tsukurimashita",
    "machimasu",
    "kaimashita",
    "tsukaimasu",
    "hajimemasu",
    "owarimashita",
    "todokemasu",
    "sagashimasu",
)
SOAK_KEY_INTERVAL_S = 1 / 8


def soak_phrase(rng) -> str:
    """A phrase's romaji, drawn from the parts above with `rng` (random.Random)."""
    return (
        rng.choice(SOAK_NOUNS)
        + rng.choice(SOAK_PARTICLES)
        + rng.choice(SOAK_NOUNS)
        + rng.choice(SOAK_PARTICLES)
        + rng.choice(SOAK_VERBS)
    )


def _percentiles(values: list[float]) -> dict:
    if not values:
        return {"n": 0}
    ordered = sorted(values)
    at = lambda q: round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)  # noqa: E731
    return {"n": len(values), "p50": at(0.5), "p95": at(0.95), "p99": at(0.99), "max": round(ordered[-1], 3)}


SOAK_SESSIONS_PER_PROCESS = 25  # people type from many programs, and the daemon allows 64 sessions a process
SOAK_WARM_UP_S = 5.0


def _soak(address: str, daemon_pid: int, sessions: int, seconds: float) -> dict:
    """Crowds of typists in child processes start together at a wall-clock moment, after each session
    has typed and converted once (its memory is then in place); RSS is read then and after the typing."""
    from concurrent.futures import ProcessPoolExecutor, wait

    from daemon.tools.client import connect, wait_for_status

    async def status() -> tuple[str, str, str]:
        bus = await connect(address)
        try:
            return await wait_for_status(bus, 60)
        finally:
            bus.disconnect()

    state, model, _ = asyncio.run(status())
    crowds = [
        range(first, min(first + SOAK_SESSIONS_PER_PROCESS, sessions))
        for first in range(0, sessions, SOAK_SESSIONS_PER_PROCESS)
    ]
    start_at = time.time() + SOAK_WARM_UP_S + 0.1 * sessions
    with ProcessPoolExecutor(max_workers=len(crowds)) as pool:
        typing = [pool.submit(_soak_crowd, address, list(crowd), start_at, start_at + seconds) for crowd in crowds]
        time.sleep(max(start_at - time.time(), 0))
        rss_start, anon_start = _rss_mib(daemon_pid), _rss_mib(daemon_pid, "RssAnon")
        # Anonymous RSS every tenth of the run: growth that levels off is warm-up, growth that goes on a leak.
        timeline = []
        for tenth in range(1, 11):
            done = wait(typing, timeout=max(start_at + seconds * tenth / 10 - time.time(), 0))[0]
            timeline.append(_rss_mib(daemon_pid, "RssAnon"))
            if len(done) == len(typing):
                break
        results = [future.result() for future in typing]
        rss_end, anon_end = _rss_mib(daemon_pid), _rss_mib(daemon_pid, "RssAnon")
        # The typists' connections are gone: their sessions must be too. Then a new crowd types once.
        reaped = asyncio.run(_count_reaped(address, [path for result in results for path in result["paths"]]))
        churn_ok = sum(pool.map(_churn_crowd, [address] * len(crowds), [len(crowd) for crowd in crowds]))
    latencies = {kind: [ms for result in results for ms in result["latency_ms"][kind]] for kind in SOAK_KINDS}
    errors = [error for result in results for error in result["errors"]]
    typed = [phrase for result in results for phrase in result["typed"]]
    return {
        "sessions": sessions,
        "processes": len(crowds),
        "seconds": seconds,
        "model": model,
        "model_state": state,
        "distinct_phrases": len(set(typed)),
        "latency_ms": {kind: _percentiles(values) for kind, values in latencies.items()},
        "errors": len(errors),
        "error_examples": errors[:3],
        "rss_mib": {
            "start": rss_start,
            "end": rss_end,
            "growth": round(rss_end - rss_start, 1),
            "anonymous_growth": round(anon_end - anon_start, 1),
            "anonymous_by_tenth": timeline,
        },
        "reaped": f"{reaped}/{sessions}",
        "served_after_churn": f"{churn_ok}/{sessions}",
    }


SOAK_KINDS = ("key", "space", "return")


def _soak_crowd(address: str, indices: list[int], start_at: float, until: float) -> dict:
    return asyncio.run(_typists(address, indices, start_at, until))


async def _typists(address: str, indices: list[int], start_at: float, until: float) -> dict:
    import random

    from daemon.tools.client import ClientError, ClientSession, connect

    latencies: dict[str, list[float]] = {kind: [] for kind in SOAK_KINDS}
    errors: list[str] = []
    typed: set[str] = set()

    async def typist(index: int) -> str:
        bus = await connect(address)
        session = await ClientSession.create(bus)
        rng = random.Random(index)
        # Warm-up: two phrases, the second with the first as left context (the model's first call for
        # this session), so that the session's memory is in place before RSS is read.
        for name in [*SOAK_WARM_UP_PHRASES[0], "space", "Return", *SOAK_WARM_UP_PHRASES[1], "space", "Return"]:
            await session.key(name)
        await asyncio.sleep(max(start_at - time.time(), 0) + rng.uniform(0, 1))  # people do not start in step
        while time.time() < until:
            phrase = soak_phrase(rng)
            typed.add(phrase)
            for name in [*phrase, "space", "Return"]:
                kind = {"space": "space", "Return": "return"}.get(name, "key")
                start = time.perf_counter()
                try:
                    await session.key(name)
                except ClientError as error:
                    errors.append(str(error)[:200])
                latencies[kind].append((time.perf_counter() - start) * 1000)
                await asyncio.sleep(SOAK_KEY_INTERVAL_S)
        bus.disconnect()
        return session.path

    paths = await asyncio.gather(*(typist(index) for index in indices))
    return {"latency_ms": latencies, "errors": errors, "paths": paths, "typed": sorted(typed)}


async def _count_reaped(address: str, paths: list[str]) -> int:
    from daemon.tools.client import ClientError, call, connect

    bus = await connect(address)
    reaped = 0
    for path in paths:
        for _ in range(50):
            try:
                await call(bus, "Send", "ay", [b""], path, "org.tsuzuri.Tsuzuri1.Session")
            except ClientError as error:
                if "UnknownSession" in str(error):
                    reaped += 1
                    break
            await asyncio.sleep(0.02)
    bus.disconnect()
    return reaped


def _churn_crowd(address: str, count: int) -> int:
    from daemon.tools.client import ClientSession, connect

    async def crowd() -> int:
        return sum(await asyncio.gather(*(_type_once(address, connect, ClientSession) for _ in range(count))))

    return asyncio.run(crowd())


async def _type_once(address: str, connect, session_class) -> bool:
    bus = await connect(address)
    try:
        session = await session_class.create(bus)
        for name in "kanji":
            out = await session.key(name)
        return out.preedit.text == "かんじ"
    except Exception:  # noqa: BLE001 — counted as not served
        return False
    finally:
        bus.disconnect()


def _with_daemon(model: str | None, measure, config: str = ""):
    """Runs `measure(address, daemon_pid)` against the real daemon on a private bus; its result. `config`:
    the text of the daemon's configuration file (default: none, so the daemon writes the defaults)."""
    with tempfile.TemporaryDirectory(prefix="tsuzuri-bench-") as tmp:
        if config:
            from daemon.config import CONFIG_FILE_NAME
            from daemon.paths import APP_DIRECTORY

            config_file = Path(tmp, "config", APP_DIRECTORY, CONFIG_FILE_NAME)
            config_file.parent.mkdir(parents=True)
            config_file.write_text(config, encoding="utf-8")
        bus = subprocess.Popen(
            ["dbus-daemon", "--session", "--nofork", "--print-address=1"], stdout=subprocess.PIPE, text=True
        )
        assert bus.stdout is not None  # a pipe, asked for
        address = bus.stdout.readline().strip()
        env = {**os.environ, "XDG_DATA_HOME": f"{tmp}/data", "XDG_CONFIG_HOME": f"{tmp}/config"}
        command = [sys.executable, "-m", "daemon.server", "--bus", address]
        if model is not None:
            command += ["--model", model if model != "none" else f"{tmp}/no-model.gguf"]
        daemon = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)
        try:
            return measure(address, daemon.pid)
        finally:
            daemon.terminate()
            daemon.wait(30)
            bus.terminate()
            bus.wait(10)


def startup_benchmark(model: str | None) -> dict:
    started = time.perf_counter()
    return _with_daemon(model, lambda address, pid: asyncio.run(_startup(address, started)))


async def _startup(address: str, started: float) -> dict:
    from daemon.tools.client import ClientError, ClientSession, call, connect, wait_for_status

    def since_start() -> float:
        return round((time.perf_counter() - started) * 1000, 1)

    bus = await connect(address)
    while True:
        try:
            status = (await call(bus, "GetStatus"))[0]
            break
        except ClientError:
            await asyncio.sleep(0.005)  # not on the bus yet
    marks = {"first_answer_ms": since_start(), "model_state_then": status[0]}
    session = await ClientSession.private(bus)
    await session.key("k")
    marks["first_key_ms"] = since_start()
    for key in "youha":
        await session.key(key)
    await session.key("space")
    marks["first_conversion_ms"] = since_start()
    state, model, _ = await wait_for_status(bus, 120)
    marks.update(model_ready_ms=since_start(), model=model, model_state=state)
    await session.close()
    bus.disconnect()
    return marks


MEMORY_TYPED = ("kyouhaiitenkidesune", "watashihagakuseidesu", "ashitahaamedeshou", "toukyoudeaimashou")
MEMORY_CONVERTED = ("きょうはいいてんき", "あしたはあめ", "わたしはがくせい", "とうきょうでかいぎ")


def memory_benchmark(model: str | None, typed: int, conversions: int) -> dict:
    return _with_daemon(model, lambda address, pid: asyncio.run(_memory(address, pid, typed, conversions)))


async def _memory(address: str, pid: int, typed: int, conversions: int) -> dict:
    """The daemon's memory at each stage: RSS, anonymous and file-backed resident MiB, and the peak so far."""
    from daemon.tools.client import ClientSession, call, connect, wait_for_status

    def resident() -> dict:
        """The daemon's, and (`convert_process_`) its children's together: root Convert's process."""
        fields = ("VmRSS", "RssAnon", "RssFile", "VmHWM")
        children = _children(pid)
        return {field: round(_rss_mib(pid, field), 1) for field in fields} | {
            f"convert_process_{field}": round(sum(_rss_mib(child, field) for child in children), 1) for field in fields
        }

    bus = await connect(address)
    await wait_for_status(bus, 120)
    session = await ClientSession.private(bus)
    await session.key("k")  # waits for the warm-up's first conversion
    await asyncio.sleep(5)  # the rest of the warm-up (the reconversion index) runs in the background
    stages = {"warm": resident()}
    for index in range(typed):
        for key in MEMORY_TYPED[index % len(MEMORY_TYPED)] + str(index % 10):
            await session.key(key)
        await session.key("space")
        await session.key("Return")
    stages[f"after_{typed}_typed"] = resident()
    for index in range(conversions):
        # Distinct readings, so that no cached ranking answers.
        reading = MEMORY_CONVERTED[index % len(MEMORY_CONVERTED)] + "でした" * (index % 7) + "ね" * (index // 28 % 5)
        await call(bus, "Convert", "ssu", [reading, "", 5])
    stages[f"after_{conversions}_convert"] = resident()
    await asyncio.sleep(10)
    stages["idle_10s"] = resident()
    await session.close()
    bus.disconnect()
    return {"typed": typed, "conversions": conversions, "stages_mib": stages}


# A maximal root Convert: the longest reading the daemon takes, and the most candidates.
HOSTILE_READING_CHARS = 1000
HOSTILE_CANDIDATES = 100
HOSTILE_SETTLE_S = 10.0  # how long after the hostile clients stop the daemon's anonymous memory is read


def _hostile_convert_reading(rng) -> str:
    """A distinct maximal reading (no cached ranking answers it)."""
    syllables = "あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわん"
    return "".join(rng.choice(syllables) for _ in range(HOSTILE_READING_CHARS))


def _hostile_clients(address: str, clients: int, in_flight: int, start_at: float, until: float) -> dict:
    """`clients` connections, each keeping `in_flight` maximal Convert calls going until `until`."""
    return asyncio.run(_keep_converting(address, clients, in_flight, start_at, until))


async def _keep_converting(address: str, clients: int, in_flight: int, start_at: float, until: float) -> dict:
    import random

    from daemon.tools.client import ClientError, call, connect

    answered, refused = 0, 0

    async def caller(bus, rng) -> None:
        nonlocal answered, refused
        while time.time() < until:
            try:
                await call(bus, "Convert", "ssu", [_hostile_convert_reading(rng), "", HOSTILE_CANDIDATES])
                answered += 1
            except ClientError:
                refused += 1

    buses = [await connect(address) for _ in range(clients)]
    await asyncio.sleep(max(start_at - time.time(), 0))
    callers = [
        caller(bus, random.Random(index * in_flight + slot))
        for index, bus in enumerate(buses)
        for slot in range(in_flight)
    ]
    await asyncio.gather(*callers)
    for bus in buses:
        bus.disconnect()
    return {"answered": answered, "refused": refused}


def _hostile(address: str, daemon_pid: int, clients: int, in_flight: int, seconds: float) -> dict:
    """A typist's keys while hostile clients keep the daemon busy with maximal Convert calls; the daemon's peak
    memory through the run and its anonymous memory once they have gone."""
    import random
    from concurrent.futures import ProcessPoolExecutor

    from daemon.tools.client import ClientSession, connect, wait_for_status

    async def typist(start_at: float, until: float) -> list[float]:
        bus = await connect(address)
        await wait_for_status(bus, 60)
        session = await ClientSession.private(bus)
        for name in [*SOAK_WARM_UP_PHRASES[0], "space", "Return"]:
            await session.key(name)
        await asyncio.sleep(max(start_at - time.time(), 0) + 1.0)  # the hostile calls are under way
        rng, latencies = random.Random(7), []
        while time.time() < until:
            for name in [*soak_phrase(rng), "space", "Return"]:
                start = time.perf_counter()
                await session.key(name)
                latencies.append((time.perf_counter() - start) * 1000)
                await asyncio.sleep(SOAK_KEY_INTERVAL_S)
        await session.close()
        bus.disconnect()
        return latencies

    start_at = time.time() + 3.0
    with ProcessPoolExecutor(max_workers=1) as pool:
        hostile = pool.submit(_hostile_clients, address, clients, in_flight, start_at, start_at + seconds)
        keys_ms = asyncio.run(typist(start_at, start_at + seconds))
        calls = hostile.result()
    peak_rss = _rss_mib(daemon_pid, "VmHWM")
    children = _children(daemon_pid)
    children_peak_rss = round(sum(_rss_mib(child, "VmHWM") for child in children), 1)
    time.sleep(HOSTILE_SETTLE_S)
    return {
        "hostile_clients": clients,
        "calls_in_flight_each": in_flight,
        "seconds": seconds,
        "convert_calls": calls,
        "key_ms": _percentiles(keys_ms),
        "keys_over_200_ms": sum(1 for ms in keys_ms if ms > 200),
        "peak_rss_mib": peak_rss,
        f"anonymous_mib_{HOSTILE_SETTLE_S:.0f}s_after": _rss_mib(daemon_pid, "RssAnon"),
        # root Convert's process (daemon/stateless_worker.py), counted apart: the unit's memory limit holds both
        "children_peak_rss_mib": children_peak_rss,
        f"children_anonymous_mib_{HOSTILE_SETTLE_S:.0f}s_after": round(
            sum(_rss_mib(c, "RssAnon") for c in children), 1
        ),
    }


def hostile_benchmark(clients: int, in_flight: int, seconds: float, model: str | None) -> dict:
    return _with_daemon(model, lambda address, pid: _hostile(address, pid, clients, in_flight, seconds))


def soak_benchmark(sessions: int, seconds: float, model: str | None) -> dict:
    return _with_daemon(model, lambda address, pid: _soak(address, pid, sessions, seconds))


def dbus_benchmark(size: str, keys: int) -> dict:
    """A private bus, the real daemon with a random model of `size`, one client in this process."""
    from daemon.tools.gguf_writer import write_random_model

    with tempfile.TemporaryDirectory(prefix="tsuzuri-bench-model-") as tmp:
        model = write_random_model(Path(tmp) / f"{size}.gguf", size, seed=0, dtype="q8_0")
        result = _with_daemon(str(model), lambda address, pid: asyncio.run(_dbus_measurements(address, pid, keys)))
    return {"model": size, "keys": keys, **result}


LIVE_SET = Path(__file__).resolve().parents[3] / "shared" / "eval" / "wac_dev.jsonl"
PEERS = Path(__file__).resolve().parents[3] / "shared" / "tools" / "peers.py"
LIVE_CONFIG = "[conversion]\nlive = true\n"
LIVE_SPACES_FOR_WINDOW = 3  # Space is pressed at most this often for the candidate window to show


def romaji_keys(reading: str) -> str | None:
    """The keys that type `reading` (kana) with Mozc's romaji table, or None if a character has none. Each
    kana is spelled by the table's `romanize` (the longest run with a rule: きゃ, not き + ゃ; the shortest
    spelling), except that っ doubles the next consonant and ん is n where the composer reads it so, else nn;
    composing the keys back must give the reading."""
    from daemon.composer import ROMAJI_TABLE, romaji_to_kana
    from daemon.kana import to_hiragana

    kana = to_hiragana(reading)
    chunks: list[tuple[str, str]] = []  # (kana, its romaji)
    start = 0
    while start < len(kana):
        for end in range(min(start + 3, len(kana)), start, -1):
            romaji = ROMAJI_TABLE.romanize(kana[start:end])
            if romaji is not None:
                chunks.append((kana[start:end], romaji))
                start = end
                break
        else:
            return None
    keys, typed = "", ""
    for index, (chunk, romaji) in enumerate(chunks):
        after_kana, after_keys = chunks[index + 1] if index + 1 < len(chunks) else ("", "")
        spellings = [*{"っ": [after_keys[:1]], "ん": ["n", "nn"]}.get(chunk, []), romaji]
        romaji = next(
            (
                spelling
                for spelling in spellings
                if romaji_to_kana(keys + spelling + after_keys) == typed + chunk + after_kana
            ),
            romaji,
        )
        keys, typed = keys + romaji, typed + chunk
    return keys if romaji_to_kana(keys) == kana else None


@dataclass(frozen=True)
class LiveItem:
    reading: str
    context: str
    keys: str


def live_items(path: Path, limit: int) -> tuple[list[LiveItem], int]:
    """The first `limit` items of an evaluation set (JSON lines with "input" and "context") that romaji can
    type, and how many of those first items it cannot."""
    items: list[LiveItem] = []
    skipped = 0
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if len(items) + skipped >= limit:
                break
            if not line.strip():
                continue
            item = json.loads(line)
            keys = romaji_keys(item["input"])
            if keys is None:
                skipped += 1
            else:
                items.append(LiveItem(item["input"], item.get("context", ""), keys))
    return items, skipped


async def _live_typing(address: str, items: list[LiveItem], interval_s: float) -> dict:
    """One session types every item at `interval_s` a key, then Space until the candidate window shows, then
    Discard. A key's latency runs from its send to its answer (which carries its live conversion); the
    OutputChanged signals that improve the live text during the pauses are counted, and so are the keys whose
    live text puts back what such an improvement replaced."""
    from daemon.tools.client import ClientSession, connect, wait_for_status
    from ime_protocol import Discard, Output, SurroundingText, decode

    bus = await connect(address)
    state, model, reason = await wait_for_status(bus, 120)
    session = await ClientSession.private(bus)
    counts = {"keys": 0, "improvements": 0, "put_back": 0, "no_window": 0, "spaces_for_window": 0}
    recording = False
    shown = ""  # the live text on screen: the last key's, or the last improvement's
    replaced: str | None = None  # what the last improvement took off the screen, until a key puts it back

    def on_output_changed(message) -> None:
        nonlocal shown, replaced
        if message.member == "OutputChanged" and message.path == session.path:
            text = decode(bytes(message.body[0]), Output).preedit.text
            replaced, shown = shown, text
            counts["improvements"] += recording

    session.bus.add_message_handler(on_output_changed)  # the channel's messages are all for this client
    measured: dict[str, list[float]] = {"key": [], "convert": [], "space": []}

    async def type_item(item: LiveItem) -> None:
        nonlocal shown, replaced
        shown, replaced = "", None
        await session.send(SurroundingText(item.context, len(item.context), len(item.context)))
        next_at = time.perf_counter()
        for name in item.keys:
            await asyncio.sleep(max(next_at - time.perf_counter(), 0))
            sent = time.perf_counter()
            next_at = sent + interval_s
            shown = (await session.key(name)).preedit.text
            if replaced and shown.startswith(replaced):
                counts["put_back"] += recording
                replaced = None
            if recording:
                counts["keys"] += 1
                measured["key"].append((time.perf_counter() - sent) * 1000)
        await asyncio.sleep(max(next_at - time.perf_counter(), 0))
        sent = time.perf_counter()
        for spaces in range(1, LIVE_SPACES_FOR_WINDOW + 1):
            output = await session.key("space")
            if spaces == 1 and recording:
                measured["convert"].append((time.perf_counter() - sent) * 1000)
            if output.candidates is not None:
                break
        if recording:
            if output.candidates is None:
                counts["no_window"] += 1
            else:
                measured["space"].append((time.perf_counter() - sent) * 1000)
                counts["spaces_for_window"] = max(counts["spaces_for_window"], spaces)
        await session.send(Discard())

    await type_item(items[0])  # warm-up: the dictionary, the language model, the model's session
    recording = True
    for item in items:
        await type_item(item)
    await session.close()
    bus.disconnect()
    return {
        "model": model,
        "model_state": state,
        "model_reason": reason,
        **counts,
        **{f"{kind}_ms": _percentiles(values) for kind, values in measured.items()},
    }


def _mozc_typing(items: list[LiveItem], interval_s: float) -> tuple[dict | None, str]:
    """The same keys typed into Mozc through peers.py's MozcPeer, at the same pace: Mozc answers each key
    with its realtime conversion in the reply, so a key's latency is its round trip. (None, why) where
    peers.py or Mozc cannot run."""
    if not PEERS.is_file():
        return None, f"{PEERS} not found"
    spec = importlib.util.spec_from_file_location("tsuzuri_bench_peers", PEERS)
    if spec is None or spec.loader is None:
        return None, f"{PEERS} cannot be loaded"
    peers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(peers)
    try:
        peer = peers.MozcPeer()
    except (peers.PeerError, OSError, KeyError) as error:
        return None, f"Mozc does not run: {error}"
    measured: dict[str, list[float]] = {"key": [], "space": []}
    no_window = 0
    try:
        peer.convert(peers.WARMUP_READING, 1, "ranksum")
        for item in items:
            session = peer._call("CreateSession")["emacs-session-id"]  # the helper's protocol, as convert() speaks it
            next_at = time.perf_counter()
            for name in item.keys:
                time.sleep(max(next_at - time.perf_counter(), 0))
                sent = time.perf_counter()
                next_at = sent + interval_s
                peer._call(f"SendKey {session} {ord(name)}")
                measured["key"].append((time.perf_counter() - sent) * 1000)
            time.sleep(max(next_at - time.perf_counter(), 0))
            sent = time.perf_counter()
            for _ in range(LIVE_SPACES_FOR_WINDOW):
                output = peer._call(f"SendKey {session} space").get("output") or {}
                if output.get("candidates"):
                    measured["space"].append((time.perf_counter() - sent) * 1000)
                    break
            else:
                no_window += 1
            peer._call(f"DeleteSession {session}")
    except peers.PeerError as error:
        return None, f"Mozc failed: {error}"
    finally:
        peer.close()
    return {
        "version": peer.version,
        "keys": len(measured["key"]),
        "no_window": no_window,
        **{f"{kind}_ms": _percentiles(values) for kind, values in measured.items()},
    }, ""


def _ratios(over: dict, under: dict | None) -> dict | None:
    """p50/p95/p99 of `over` divided by those of `under`, for keys and Space."""
    if under is None:
        return None
    ratios = {}
    for kind in ("key_ms", "space_ms"):
        for q in ("p50", "p95", "p99"):
            a, b = over[kind].get(q), under[kind].get(q)
            ratios[f"{kind[:-3]}_{q}"] = round(a / b, 2) if a is not None and b else None
    return ratios


@contextlib.contextmanager
def cpu_load(processes: int):
    """`processes` CPU-bound processes running beside what is measured, as a user's browser or build would."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(processes)]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def live_benchmark(set_path: Path, limit: int, key_interval_ms: float, model: str | None = None, load: int = 0) -> dict:
    items, skipped = live_items(set_path, limit)
    if not items:
        raise SystemExit(f"tsuzuri-bench: no item of {set_path} can be typed")
    interval_s = key_interval_ms / 1000

    def typing(address: str, _pid: int) -> dict:
        return asyncio.run(_live_typing(address, items, interval_s))

    with cpu_load(load):
        model_on = _with_daemon(model, typing, config=LIVE_CONFIG)
        model_off = _with_daemon("none", typing, config=LIVE_CONFIG)
        mozc, mozc_reason = _mozc_typing(items, interval_s)
    return {
        "set": str(set_path),
        "items": len(items),
        "skipped": skipped,
        "key_interval_ms": key_interval_ms,
        "load": load,
        "model_on": model_on,
        "model_off": model_off,
        "mozc": mozc,
        "mozc_reason": mozc_reason or None,
        "ratios": {
            "model_on_over_model_off": _ratios(model_on, model_off),
            "model_on_over_mozc": _ratios(model_on, mozc),
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tsuzuri-bench", description=__doc__)
    sub = parser.add_subparsers(dest="what", required=True)
    engine = sub.add_parser("engine", help="greedy / beam / keystroke timings of the conversion engine")
    engine.add_argument("--json", action="store_true", help="print one JSON object (the default)")
    engine.add_argument("--sizes", default="tiny,m25,m100", help="comma-separated: tiny, m25, m100")
    engine.add_argument("--threads", type=int, default=2)
    engine.add_argument("--repeat", type=int, default=5)
    engine.add_argument(
        "--dtype", default="q8_0", choices=["q8_0", "f16", "f32"], help="weight type (default q8_0, what we ship)"
    )
    engine.add_argument(
        "--drafts",
        action="store_true",
        help="instead: greedy decoding's guesses (none, the previous output, the dictionary's "
        "path, lookahead) on the real model, typing a set's readings kana by kana",
    )
    engine.add_argument(
        "--sessions",
        action="store_true",
        help=f"instead: {', '.join(map(str, BATCHED_SESSIONS))} sessions' rescoring decoded one "
        f"after another or batched into one llama_decode, for several n_ubatch",
    )
    engine.add_argument(
        "--set",
        type=Path,
        default=LIVE_SET,
        help=f"with --drafts or --sessions: JSON lines with input and context (default {LIVE_SET})",
    )
    engine.add_argument("--limit", type=int, default=60, help="with --drafts: items typed (default 60)")
    engine.add_argument("--model", default="default", help="with --drafts or --sessions: model name or GGUF")
    engine.add_argument(
        "--lookahead",
        default=LOOKAHEAD,
        metavar="W,N,G",
        help=f"with --drafts: window, n-gram size, n-grams per token (default {LOOKAHEAD})",
    )
    dbus = sub.add_parser("dbus", help="key round trip through the real daemon, and its memory per session")
    dbus.add_argument("--json", action="store_true", help="print one JSON object (the default)")
    dbus.add_argument("--model-size", default="m25", choices=["tiny", "m25", "m100"])
    dbus.add_argument("--keys", type=int, default=400)
    soak = sub.add_parser("soak", help="many sessions typing at a person's pace through the real daemon")
    soak.add_argument("--json", action="store_true", help="print one JSON object (the default)")
    soak.add_argument("--sessions", type=int, default=10)
    soak.add_argument("--seconds", type=float, default=60.0)
    soak.add_argument("--model", default=None, help="model name or GGUF, or none (default: the configured one)")
    hostile = sub.add_parser(
        "hostile",
        help="a typist's keys while other clients keep maximal Convert calls going; "
        "the daemon's peak and settled memory",
    )
    hostile.add_argument("--json", action="store_true", help="print one JSON object (the default)")
    hostile.add_argument("--clients", type=int, default=8, help="hostile connections (default 8)")
    hostile.add_argument("--in-flight", type=int, default=8, help="Convert calls each keeps going (default 8)")
    hostile.add_argument("--seconds", type=float, default=30.0)
    hostile.add_argument("--model", default=None, help="model name or GGUF, or none (default: the configured one)")
    live = sub.add_parser(
        "live",
        help="live conversion: key → its OutputChanged, Space → the candidate window, "
        "with the model, without it, and Mozc",
    )
    live.add_argument("--json", action="store_true", help="print one JSON object (the default)")
    live.add_argument(
        "--set", type=Path, default=LIVE_SET, help=f"JSON lines with input and context (default {LIVE_SET})"
    )
    live.add_argument("--limit", type=int, default=60, help="items typed (default 60)")
    live.add_argument(
        "--key-interval",
        type=float,
        default=100.0,
        metavar="MS",
        help="milliseconds from one key's send to the next (default 100)",
    )
    live.add_argument(
        "--model", default=None, help="model name or GGUF of the model-on run (default: the configured one)"
    )
    live.add_argument(
        "--load",
        type=int,
        default=0,
        metavar="N",
        help="N CPU-bound processes running beside every run (default 0: a quiet machine)",
    )
    startup = sub.add_parser(
        "startup", help="from the daemon's start to its first answer, key, conversion and model ready"
    )
    startup.add_argument("--json", action="store_true", help="print one JSON object (the default)")
    startup.add_argument("--model", default=None, help="model name or GGUF, or none (default: the configured one)")
    memory = sub.add_parser(
        "memory", help="the daemon's resident memory after warm-up, typing, Convert calls and idling"
    )
    memory.add_argument("--json", action="store_true", help="print one JSON object (the default)")
    memory.add_argument("--model", default=None, help="model name or GGUF, or none (default: the configured one)")
    memory.add_argument("--typed", type=int, default=200, help="conversions typed in a session (default 200)")
    memory.add_argument("--conversions", type=int, default=1000, help="Convert calls (default 1,000)")
    args = parser.parse_args(argv)
    if args.what == "startup":
        result = startup_benchmark(args.model)
    elif args.what == "memory":
        result = memory_benchmark(args.model, args.typed, args.conversions)
    elif args.what == "live":
        result = live_benchmark(args.set, args.limit, args.key_interval, args.model, args.load)
    elif args.what == "soak":
        result = soak_benchmark(args.sessions, args.seconds, args.model)
    elif args.what == "hostile":
        result = hostile_benchmark(args.clients, args.in_flight, args.seconds, args.model)
    elif args.what == "dbus":
        result = dbus_benchmark(args.model_size, args.keys)
    elif args.sessions:
        result = batching_benchmark(args.set, args.threads, args.model, args.repeat)
    elif args.drafts:
        result = draft_benchmark(args.set, args.limit, args.threads, args.model, args.lookahead)
    else:
        result = engine_benchmark(args.sizes.split(","), args.threads, args.repeat, args.dtype)
    print(json.dumps(result, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
