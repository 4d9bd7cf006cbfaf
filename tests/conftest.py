import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# Must precede any llama.cpp import in the test process (see daemon/engine/native.py).
os.environ.setdefault("OMP_WAIT_POLICY", "passive")
os.environ.setdefault("GGML_NO_BACKTRACE", "1")

REPO = Path(__file__).resolve().parent.parent
STATIC_CHECKS = "tests/unit/test_static_checks.py"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The static checks (ruff, ruff format, mypy) run before every other test: CI says first what they find."""
    items.sort(key=lambda item: not item.nodeid.startswith(STATIC_CHECKS))


@pytest.fixture(scope="session")
def exact_model_path(tmp_path_factory) -> Path:
    """A tiny random f32 model: with f32 KV and flash attention off, KV sharing is bitwise exact."""
    from daemon.tools.gguf_writer import write_random_model

    return write_random_model(
        tmp_path_factory.mktemp("models") / "tiny-f32.gguf", "tiny", seed=7, dtype="f32", eos_boost=6.0
    )


@pytest.fixture(scope="session")
def model_path(tmp_path_factory) -> Path:
    """The same tiny model as a daemon would ship it: f16 weights."""
    from daemon.tools.gguf_writer import write_random_model

    return write_random_model(
        tmp_path_factory.mktemp("models") / "tiny-f16.gguf", "tiny", seed=7, dtype="f16", eos_boost=6.0
    )


def run_isolated(code: str, timeout: float = 120.0) -> subprocess.CompletedProcess:
    """Run code touching llama.cpp in a child process, so an abort fails the test, not pytest."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=REPO, capture_output=True, text=True, timeout=timeout
    )
