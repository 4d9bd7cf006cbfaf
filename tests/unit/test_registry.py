import os
import subprocess
import sys

import pytest

from daemon.engine.registry import RegistryError, load_registry, parse_registry, resolve_model

GOOD = """
[models.m]
format = "zenz-v3"
file = "m.gguf"
sha256 = ""
source = "hf:someone/m"
tokenizer = "gguf"
context_size = 256
context_chars = 40
"""


def test_shipped_registry_lists_the_public_models():
    registry = load_registry()
    assert registry["jinen-v2-small"].format == "jinen"
    assert registry["jinen-v2-small"].hf_repo == "togatogah/jinen-v2-small.gguf"
    assert registry["zenz-v2_5-small"].format == "zenz-v2.5"


def test_parse_entry_fields():
    entry = parse_registry(GOOD)["m"]
    assert (entry.format, entry.file, entry.context_chars, entry.hf_repo) == ("zenz-v3", "m.gguf", 40, "someone/m")


@pytest.mark.parametrize(
    "broken, message",
    [
        (GOOD.replace('format = "zenz-v3"', 'format = "gpt"'), "unknown format"),
        (GOOD.replace("context_size = 256\n", ""), "lacks context_size"),
        (GOOD.replace('tokenizer = "gguf"', 'tokenizer = "hf"'), "tokenizer"),
        ("[models.m\n", "not valid TOML"),
    ],
)
def test_bad_registry_is_reported(broken, message):
    with pytest.raises(RegistryError, match=message):
        parse_registry(broken)


def test_local_path_resolves_with_default_format(tmp_path):
    path, entry = resolve_model(str(tmp_path / "mine.gguf"))
    assert path == tmp_path / "mine.gguf" and entry.source == "local" and entry.format == "jinen"


def test_registered_model_resolves_into_the_data_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    path, _ = resolve_model("jinen-v2-small")
    assert path == tmp_path / "tsuzuri" / "models" / "jinen-v2-small-Q5_K_M.gguf"


def test_unknown_name_is_an_error():
    with pytest.raises(RegistryError, match="neither a registered model"):
        resolve_model("no-such-model")


def test_download_offline_gives_one_clear_line(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf"), "XDG_DATA_HOME": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-m", "daemon.tools.model", "download", "jinen-v2-small"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tsuzuri-model: cannot download"), result.stderr


def test_check_verifies_a_local_file(model_path):
    from daemon.tools.model import main, sha256_of

    assert main(["check", str(model_path)]) == 0
    assert len(sha256_of(model_path)) == 64


def test_the_embedded_default_model_is_shipped_intact():
    from daemon.tools.model import sha256_of

    path, entry = resolve_model("default")
    assert entry.source == "embedded" and path.is_file()
    assert path.stat().st_size <= 30 * 1024 * 1024
    assert sha256_of(path) == entry.sha256
