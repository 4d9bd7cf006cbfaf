"""Training that scales: the pack (built here, read anywhere), data-parallel training under torchrun with two
CPU processes, and the device run (scripts/train-on-device.sh) end to end on CPU with its companion here.
A small made-up corpus in the WAC and Anthy formats stands in for ../shared, so these run everywhere."""

import hashlib
import json
import os
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch", reason="training needs torch (pip install -e .[train])")

from training.data import Pair, corpus_pairs  # noqa: E402
from training.device import join_parts, split_file  # noqa: E402
from training.pack import Pack, interleave, is_valid_pair, pack, parse_mix  # noqa: E402

PHRASES = [
    ("今日は", "きょうは"),
    ("天気が", "てんきが"),
    ("とても", "とても"),
    ("東京へ", "とうきょうへ"),
    ("行きます", "いきます"),
    ("学校で", "がっこうで"),
    ("勉強する", "べんきょうする"),
    ("友達と", "ともだちと"),
    ("映画を", "えいがを"),
    ("見ました", "みました"),
    ("新しい", "あたらしい"),
    ("本を", "ほんを"),
    ("買いに", "かいに"),
    ("駅前の", "えきまえの"),
    ("図書館で", "としょかんで"),
    ("静かに", "しずかに"),
]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """400 WAC-format sentences in 40 documents and 300 Anthy-format phrases, drawn from PHRASES."""
    root = tmp_path_factory.mktemp("corpus")
    rng = random.Random(5)
    (root / "wac").mkdir()
    (root / "anthy").mkdir()
    with open(root / "wac" / "train.jsonl", "w", encoding="utf-8") as f:
        for n in range(400):
            phrases = rng.sample(PHRASES, rng.randint(3, 6))
            morphs = [list(p) for p in phrases] + [["。", "。"]]
            f.write(
                json.dumps(
                    {
                        "doc": f"d{n // 10}",
                        "text": "".join(m[0] for m in morphs),
                        "morphs": morphs,
                        "bnst": list(range(len(phrases))),
                    },
                    ensure_ascii=False,
                )
                + "\n"
            )
    with open(root / "anthy" / "train.jsonl", "w", encoding="utf-8") as f:
        for n in range(300):
            phrases = rng.sample(PHRASES, rng.randint(1, 3))
            f.write(
                json.dumps(
                    {
                        "id": f"a{n}",
                        "reading_segments": [r for _, r in phrases],
                        "surface_segments": [s for s, _ in phrases],
                    },
                    ensure_ascii=False,
                )
                + "\n"
            )
    return root


# -- the pack ------------------------------------------------------------------------------------


def test_pack_holds_exactly_the_tokenized_pairs_with_and_without_context(corpus, tmp_path):
    manifest = pack(corpus, tmp_path / "p", max_mib=None, mix={"wac": 2, "anthy": 1})
    examples = Pack(tmp_path / "p")
    pairs = [p for p in corpus_pairs(corpus) if not is_valid_pair(p)]
    assert len(examples) == manifest["pairs"] == len(pairs) > 1000
    assert manifest["pairs_by_source"] == dict(sorted(Counter(p.source for p in pairs).items()))
    # the pack's order is interleave's; every example is its pair tokenized as the jinen prompt would be
    ordered = interleave({s: [p for p in pairs if p.source == s] for s in ("anthy", "wac")}, manifest["mix"], 0)
    tokenizer = examples.tokenizer
    for i in range(0, len(ordered), 37):
        pair = ordered[i]
        assert examples.example(i) == tokenizer.example(pair.context, pair.reading, pair.surface)
        assert examples.example(i, with_context=False) == tokenizer.example("", pair.reading, pair.surface)
    assert examples.manifest["site"].keys() == {"gguf", "PyYAML"}
    assert (tmp_path / "p" / "site" / "gguf" / "__init__.py").is_file()


def test_pack_is_deterministic_and_keeps_validation_out_of_training(corpus, tmp_path):
    first = pack(corpus, tmp_path / "a", max_mib=None)
    second = pack(corpus, tmp_path / "b", max_mib=None)
    assert [s["sha256"] for s in first["train"] + first["valid"]] == [
        s["sha256"] for s in second["train"] + second["valid"]
    ]
    train, valid = Pack(tmp_path / "a"), Pack(tmp_path / "a", "valid")
    assert len(valid) > 0
    train_examples = {tuple(train.example(i)[0]) for i in range(len(train))}
    assert not any(tuple(valid.example(i)[0]) in train_examples for i in range(len(valid)))


def test_a_smaller_pack_is_a_prefix_with_the_same_mix(corpus, tmp_path):
    whole = pack(corpus, tmp_path / "whole", max_mib=None, mix={"wac": 3, "anthy": 1})
    chars = (tmp_path / "whole" / "chars.txt").stat().st_size
    budget_mib = (chars + whole["valid"][0]["bytes"] + whole["train"][0]["bytes"] / 2) / 2**20
    small = pack(corpus, tmp_path / "small", max_mib=budget_mib, mix={"wac": 3, "anthy": 1})
    size = sum(s["bytes"] for s in small["train"] + small["valid"]) + (tmp_path / "small" / "chars.txt").stat().st_size
    assert size <= budget_mib * 2**20 and 0 < small["pairs"] < whole["pairs"]
    wac, anthy = small["pairs_by_source"]["wac"], small["pairs_by_source"]["anthy"]
    assert abs(wac / (wac + anthy) - 0.75) < 0.02
    big, little = Pack(tmp_path / "whole"), Pack(tmp_path / "small")
    assert all(big.example(i) == little.example(i) for i in range(0, len(little), 11))


def test_interleave_keeps_the_mix_in_every_prefix():
    by_source = {
        "a": [Pair("", f"ア{i}", "a", "a") for i in range(3000)],
        "b": [Pair("", f"イ{i}", "b", "b") for i in range(3000)],
    }
    order = interleave(by_source, {"a": 2, "b": 1}, seed=1)
    for n in (30, 300, 3000):
        assert abs(sum(p.source == "a" for p in order[:n]) - 2 * n / 3) <= 2
    assert len(order) == 6000  # after `a` runs out, `b` fills the rest
    assert interleave(by_source, {"a": 1}, seed=1) == interleave(by_source, {"a": 1, "c": 5}, seed=1)[:3000]


def test_parse_mix_rejects_what_is_not_a_weight():
    assert parse_mix("wac=3, anthy=0.5") == {"wac": 3.0, "anthy": 0.5}
    for bad in ("wac", "wac=-1", "wac=x", "wac=0", ""):
        with pytest.raises(ValueError):
            parse_mix(bad)


def test_a_damaged_shard_is_refused_by_name(corpus, tmp_path):
    manifest = pack(corpus, tmp_path / "p", max_mib=None)
    shard = tmp_path / "p" / manifest["train"][0]["file"]
    shard.write_bytes(shard.read_bytes()[:-1] + b"\0")
    with pytest.raises(ValueError, match="train-000.xz: sha256"):
        Pack(tmp_path / "p")


def test_split_and_join_check_every_part(tmp_path):
    model = tmp_path / "model.gguf"
    model.write_bytes(os.urandom(2500))
    (tmp_path / "out").mkdir()
    parts = split_file(model, tmp_path / "out", part_bytes=1000)
    assert [p["bytes"] for p in parts] == [1000, 1000, 500]
    whole = hashlib.sha256(model.read_bytes()).hexdigest()
    join_parts(tmp_path / "out", parts, whole, tmp_path / "joined.gguf")
    assert (tmp_path / "joined.gguf").read_bytes() == model.read_bytes()
    (tmp_path / "out" / parts[1]["file"]).write_bytes(b"x" * 1000)
    with pytest.raises(SystemExit, match="part01: size or sha256"):
        join_parts(tmp_path / "out", parts, whole, tmp_path / "again.gguf")
    assert not (tmp_path / "again.gguf").exists() and not (tmp_path / "again.gguf.tmp").exists()


# -- data-parallel and device runs ----------------------------------------------------------------


def train_command(pack_dir: Path, out: Path) -> list[str]:
    return [
        "-m",
        "training.train",
        "--pack",
        str(pack_dir),
        "--out",
        str(out),
        "--config",
        "tiny",
        "--steps",
        "6",
        "--batch-size",
        "16",
        "--log-every",
        "1",
        "--dev-items",
        "0",
        "--valid-items",
        "0",
        "--quiet",
        "--threads",
        "1",
        "--dtype",
        "f32",
    ]


def test_two_gloo_processes_follow_one_process_on_the_same_global_batch(corpus, tmp_path):
    pack(corpus, tmp_path / "p", max_mib=None)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    subprocess.run(
        [sys.executable, *train_command(tmp_path / "p", tmp_path / "one")],
        cwd=REPO,
        env=env,
        check=True,
        capture_output=True,
        timeout=300,
    )
    subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc_per_node",
            "2",
            *train_command(tmp_path / "p", tmp_path / "two"),
        ],
        cwd=REPO,
        env=env,
        check=True,
        capture_output=True,
        timeout=300,
    )
    one = json.loads((tmp_path / "one" / "run.json").read_text(encoding="utf-8"))
    two = json.loads((tmp_path / "two" / "run.json").read_text(encoding="utf-8"))
    assert (one["world_size"], two["world_size"]) == (1, 2)
    # measured: the two runs' losses differ by ~2e-6 over 6 steps (float sums in another order)
    assert [e["loss"] for e in two["losses"]] == pytest.approx([e["loss"] for e in one["losses"]], abs=1e-4)
    a = torch.load(tmp_path / "one" / "checkpoint.pt", weights_only=False)["model"]
    b = torch.load(tmp_path / "two" / "checkpoint.pt", weights_only=False)["model"]
    assert max(float((a[k] - b[k]).abs().max()) for k in a) < 1e-4


def test_the_device_script_runs_on_cpu_and_its_model_comes_back_here(corpus, tmp_path):
    pack(corpus, tmp_path / "pack", max_mib=None)
    out = tmp_path / "out"
    env = {
        **os.environ,
        "OUT": str(out),
        "TSUZURI_PACK": str(tmp_path / "pack"),
        "TSUZURI_DEVICE": "cpu",
        "TSUZURI_WORK": str(tmp_path / "work"),
        "TSUZURI_SMOKE_SECONDS": "5",
        "PYTHON": sys.executable,
    }
    done = subprocess.run(
        [
            str(REPO / "scripts" / "train-on-device.sh"),
            "tiny",
            "0.2",
            "--batch-size",
            "16",
            "--log-every",
            "5",
            "--warmup",
            "10",
            "--steps",
            "100000",
            "--threads",
            "2",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    smoke = json.loads((out / "smoke.json").read_text(encoding="utf-8"))
    assert smoke["eager"]["loss_falls"] and smoke["eager"]["gguf_tensors"] > 0
    assert smoke["compiled"] is None and not smoke["compile"]  # compilation is tried on CUDA only
    record = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert record["tokens_per_s"] > 0 and 8 <= record["seconds"] < 60 and record["valid"]["loss"] is not None
    assert sorted(p.name for p in out.iterdir()) == ["loss.tsv", "model.gguf.part00", "run.json", "smoke.json"]
    assert (out / "loss.tsv").read_text(encoding="utf-8").startswith("step\tloss\tlr\ttokens_per_s\tmfu\n")

    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "phrases.jsonl").write_text(
        json.dumps({"input": "きょうはてんきが", "expected": ["今日は天気が"]}, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    back = subprocess.run(
        [
            sys.executable,
            "-m",
            "training.train",
            "assemble",
            str(out),
            "--out",
            str(tmp_path / "model.gguf"),
            "--suite",
            str(suite),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert back.returncode == 0, back.stderr[-3000:]
    lines = [json.loads(line) for line in back.stdout.splitlines()]
    assert lines[0]["sha256"] == hashlib.sha256((tmp_path / "model.gguf").read_bytes()).hexdigest()
    assert lines[-1]["suite"] is True and lines[-1]["sets"] == 1


def test_oversampling_repeats_a_source_within_each_epoch(corpus, tmp_path):
    from training.train import epoch_indices, parse_oversample

    pack(corpus, tmp_path / "p", max_mib=None)
    examples = Pack(tmp_path / "p")
    anthy = examples.manifest["sources"].index("anthy")
    n_anthy = int((examples.sources == anthy).sum())
    indices = epoch_indices(examples, parse_oversample("anthy=3"))
    assert len(indices) == len(examples) + 2 * n_anthy
    assert int((torch.from_numpy(examples.sources.astype("int64"))[indices] == anthy).sum()) == 3 * n_anthy
    with pytest.raises(SystemExit, match="no source 'laws'"):
        epoch_indices(examples, {"laws": 2})


def test_every_process_names_its_cuda_device_with_an_index():
    from training.train import process_device

    assert process_device("cuda", 1, 0) == "cuda:0"  # torch.cuda.set_device("cuda") raises
    assert process_device("cuda:1", 1, 0) == "cuda:1"
    assert process_device("cuda", 4, 3) == "cuda:3"
    assert process_device("cpu", 2, 1) == "cpu"


def test_the_weights_of_the_lowest_held_out_loss_are_kept():
    from daemon.tools.gguf_writer import build_vocab
    from training.model import CONFIGS, LlamaLM
    from training.train import Best, keep_if_best

    model = LlamaLM(CONFIGS["tiny"], len(build_vocab()))
    best = keep_if_best(model, 2.0, 10, Best())
    kept = {name: tensor.clone() for name, tensor in model.state_dict().items()}
    with torch.no_grad():
        model.norm.weight.add_(1.0)
    best = keep_if_best(model, 3.0, 20, best)  # worse: the step-10 weights stay
    best = keep_if_best(model, None, 30, best)  # no held-out examples: nothing changes
    assert (best.step, best.loss, best.history) == (10, 2.0, [2.0, 3.0, None])
    assert all(torch.equal(best.weights[name], kept[name]) for name in kept)
