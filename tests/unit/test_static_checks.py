"""The tree passes the static checks configured in pyproject.toml: ruff's lint rules (pycodestyle, pyflakes,
bugbear, pyupgrade), ruff's formatting (`ruff format` writes it) and mypy's type checks, on the whole tree: the
Conversion protocol, the message records and the enums are checked, not hoped."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_ruff_finds_nothing():
    done = run("ruff", "check", "--no-cache", "--output-format", "concise", str(ROOT))
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_tree_is_formatted_as_ruff_format_writes_it():
    done = run("ruff", "format", "--check", "--no-cache", str(ROOT))
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_finds_nothing():
    done = run("mypy")  # the files and settings are pyproject.toml's; its cache (.mypy_cache) makes reruns fast
    assert done.returncode == 0, done.stdout + done.stderr
