"""ARCHITECTURE.md's import directions, checked on the source: the runtime never imports the tools or
training, the tools never import training, the protocol imports no daemon, and the frontends (render only)
import no daemon internals."""

import ast
from pathlib import Path

import pytest

from tests.conftest import REPO


def imported_modules(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def sources(folder: str, leaving_out: str | None = None) -> list[Path]:
    return [
        path
        for path in sorted((REPO / folder).rglob("*.py"))
        if leaving_out is None or not path.is_relative_to(REPO / leaving_out)
    ]


@pytest.mark.parametrize(
    "folder, leaving_out, forbidden",
    [
        ("daemon", "daemon/tools", ("daemon.tools", "training")),
        ("daemon/tools", None, ("training",)),  # training builds on the tools, not the other way
        ("ime_protocol", None, ("daemon", "frontends", "training")),
        ("frontends", None, ("daemon", "training")),
    ],
)
def test_no_module_imports_across_a_forbidden_direction(folder, leaving_out, forbidden):
    crossing = {
        f"{path.relative_to(REPO)}: {module}"
        for path in sources(folder, leaving_out)
        for module in imported_modules(path)
        if any(module == name or module.startswith(name + ".") for name in forbidden)
    }
    assert not crossing


def test_the_session_and_its_seam_load_no_conversion_machinery():
    """The state machine imports conversion's interface (daemon/conversion.py), not the converter: its tests on
    the fake need neither MeCab, numpy nor llama.cpp."""
    import subprocess
    import sys

    heavy = (
        "numpy",
        "MeCab",
        "llama_cpp",
        "daemon.converter",
        "daemon.dictionary",
        "daemon.lm",
        "daemon.engine.engine",
    )
    probe = f"import sys, daemon.session; print([m for m in {heavy!r} if m in sys.modules])"
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
