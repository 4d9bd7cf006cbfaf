"""The README's two set-up commands are the ones CI and users run."""

import re

from tests.conftest import REPO


def readme_commands() -> list[str]:
    return re.findall(r"```sh\n(.*?)\n```", (REPO / "README.md").read_text(encoding="utf-8"), re.S)


def test_readme_has_exactly_the_two_setup_commands_first():
    commands = readme_commands()
    assert commands[:2] == ["scripts/bootstrap.sh && scripts/demo.sh",
                            "scripts/bootstrap.sh --test && .venv/bin/python -m pytest"]


def test_ci_runs_the_readme_test_command():
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert readme_commands()[1] in ci
