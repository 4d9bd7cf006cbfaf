"""The README's two set-up commands are the ones CI and users run."""

import re

import pytest

from tests.conftest import REPO


def readme_commands() -> list[str]:
    return re.findall(r"```sh\n(.*?)\n```", (REPO / "README.md").read_text(encoding="utf-8"), re.S)


def test_readme_has_exactly_the_two_setup_commands_first():
    commands = readme_commands()
    assert commands[:2] == [
        "scripts/bootstrap.sh && scripts/demo.sh",
        "scripts/bootstrap.sh --test && .venv/bin/python -m pytest",
    ]


def test_ci_runs_the_readme_test_command():
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert readme_commands()[1] in ci


@pytest.mark.dbus
@pytest.mark.dictionary
@pytest.mark.model
def test_the_main_job_converts_through_the_daemon(tmp_path):
    import os
    import shutil
    import subprocess

    import pytest

    if shutil.which("dbus-daemon") is None:
        pytest.skip("dbus-daemon is not installed (Debian package dbus)")
    env = {k: v for k, v in os.environ.items() if k != "DBUS_SESSION_BUS_ADDRESS"}
    env.update(XDG_DATA_HOME=str(tmp_path / "data"), XDG_CONFIG_HOME=str(tmp_path / "config"))
    done = subprocess.run(
        [str(REPO / "scripts" / "demo.sh")], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert "1. 今日はいい天気ですね" in done.stdout
    assert "preedit: 今日はいい天気ですね" in done.stdout
