"""ARCHITECTURE.md's import directions, checked on the source: the runtime never imports the tools or
training, the protocol imports no daemon, and the frontends (render only) import no daemon internals."""

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
    return [path for path in sorted((REPO / folder).rglob("*.py"))
            if leaving_out is None or not path.is_relative_to(REPO / leaving_out)]


@pytest.mark.parametrize("folder, leaving_out, forbidden", [
    ("daemon", "daemon/tools", ("daemon.tools", "training")),
    ("ime_protocol", None, ("daemon", "frontends", "training")),
    ("frontends", None, ("daemon", "training")),
])
def test_no_module_imports_across_a_forbidden_direction(folder, leaving_out, forbidden):
    crossing = {f"{path.relative_to(REPO)}: {module}" for path in sources(folder, leaving_out)
                for module in imported_modules(path)
                if any(module == name or module.startswith(name + ".") for name in forbidden)}
    assert not crossing
