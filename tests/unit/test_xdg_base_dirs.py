"""One rule for the XDG base directories wherever Tsuzuri looks one up: $XDG_..._HOME when it is an absolute
path, otherwise ~/.config or ~/.local/share (the XDG spec: a relative path is invalid and is ignored; "~" is
not expanded). daemon.paths.xdg_base_dir is that rule; the daemon's configuration file, data and model
folders and the fcitx5 addon's per-user install (frontends/fcitx5/CMakeLists.txt, TSUZURI_USER_INSTALL) must
agree with it on the same environments. The CMake case needs what tests/fcitx5_build.py needs for a build.
"""

import os
import re
import subprocess
from pathlib import Path

import pytest

from daemon.config import config_path
from daemon.engine.registry import models_dir
from daemon.paths import user_data_dir, xdg_base_dir
from tests.fcitx5_build import ADDON_SOURCE, skip_without_build_tools

# The value of the variable in each case; None: unset.
CASES = {
    "unset": None,
    "empty": "",
    "absolute": "/xdg/base",
    "trailing-slash": "/xdg/base/",
    "relative": "relative/base",
    "dot": "./base",
    "tilde": "~/base",
}
IGNORED = {"unset", "empty", "relative", "dot", "tilde"}


def set_case(monkeypatch, home: Path, variable: str, case: str) -> None:
    monkeypatch.setenv("HOME", str(home))
    if CASES[case] is None:
        monkeypatch.delenv(variable, raising=False)
    else:
        monkeypatch.setenv(variable, CASES[case])


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("variable, fallback", [("XDG_CONFIG_HOME", ".config"), ("XDG_DATA_HOME", ".local/share")])
def test_the_rule(monkeypatch, tmp_path, case, variable, fallback):
    set_case(monkeypatch, tmp_path, variable, case)
    assert xdg_base_dir(variable, fallback) == (tmp_path / fallback if case in IGNORED else Path(CASES[case]))


@pytest.mark.parametrize("case", CASES)
def test_the_configuration_and_user_data_follow_it(monkeypatch, tmp_path, case):
    set_case(monkeypatch, tmp_path, "XDG_CONFIG_HOME", case)
    assert config_path() == xdg_base_dir("XDG_CONFIG_HOME", ".config") / "tsuzuri" / "config.toml"
    set_case(monkeypatch, tmp_path, "XDG_DATA_HOME", case)
    assert user_data_dir() == xdg_base_dir("XDG_DATA_HOME", ".local/share") / "tsuzuri"


@pytest.mark.parametrize("case", CASES)
def test_the_model_folder_follows_it(monkeypatch, tmp_path, case):
    set_case(monkeypatch, tmp_path, "XDG_DATA_HOME", case)
    assert models_dir() == xdg_base_dir("XDG_DATA_HOME", ".local/share") / "tsuzuri" / "models"


@pytest.fixture(scope="module")
def configure(tmp_path_factory):
    """cmake's configure step of a per-user build in an environment; returns where the addon's data would go."""
    skip_without_build_tools()
    build = tmp_path_factory.mktemp("fcitx5-configure")

    def data_dir(env: dict[str, str]) -> Path:
        done = subprocess.run(
            ["cmake", "-S", str(ADDON_SOURCE), "-B", str(build), "-DTSUZURI_USER_INSTALL=ON"],
            capture_output=True,
            text=True,
            env=env,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        found = re.search(r"tsuzuri: the addon goes to .*, its data to (.*)", done.stdout)
        assert found is not None, done.stdout
        return Path(found.group(1))

    return data_dir


@pytest.mark.parametrize("case", CASES)
def test_the_fcitx5_addons_user_install_follows_it(monkeypatch, tmp_path, configure, case):
    set_case(monkeypatch, tmp_path, "XDG_DATA_HOME", case)
    assert configure(dict(os.environ)) == xdg_base_dir("XDG_DATA_HOME", ".local/share") / "fcitx5"
