"""The fcitx5 addon and its test programs, built with cmake once per test run, for the tests that need them
(tests/integration/: test_frontend_fcitx5.py, test_fcitx5_codec.py, test_frontend_recovery.py).

Needs Debian's cmake, g++, pkg-config, libfcitx5core-dev, libfcitx5utils-dev and libmsgpack-dev; the tests
skip without them.
"""

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO

ADDON_SOURCE = REPO / "frontends" / "fcitx5"


def missing_build_requirement() -> str | None:
    for tool, package in (("cmake", "cmake"), ("g++", "g++"), ("pkg-config", "pkg-config")):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Debian package {package})"
    if subprocess.run(["pkg-config", "--exists", "Fcitx5Core"]).returncode != 0:
        return "fcitx5 headers are not installed (Debian packages libfcitx5core-dev, libfcitx5utils-dev)"
    if not Path("/usr/include/msgpack.h").exists():
        return "msgpack-c is not installed (Debian package libmsgpack-dev)"
    return None


def skip_without_build_tools() -> None:
    reason = missing_build_requirement()
    if reason is not None:
        pytest.skip(reason)


def build_addon(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The build folder (skips the test where the addon cannot be built). One folder per test run: a second
    caller's build finds everything built already."""
    skip_without_build_tools()
    build = tmp_path_factory.getbasetemp() / "fcitx5-build"
    for step in (
        ["cmake", "-S", str(ADDON_SOURCE), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release", "-DTSUZURI_USER_INSTALL=ON"],
        ["cmake", "--build", str(build), "-j2"],
    ):
        done = subprocess.run(step, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
    return build
