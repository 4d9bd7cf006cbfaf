"""A private dbus-daemon and a real tsuzuri-daemon on it, for the D-Bus tests."""

import os
import shutil
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@contextmanager
def private_bus():
    if shutil.which("dbus-daemon") is None:
        pytest.skip("dbus-daemon is not installed (Debian package dbus)")
    proc = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1"],
                            stdout=subprocess.PIPE, text=True)
    try:
        yield proc.stdout.readline().strip()
    finally:
        proc.terminate()
        proc.wait(10)


def client(address: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "daemon.client", "--bus", address, *args], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout)


@contextmanager
def running_daemon(address: str, home: Path, model: str | None, extra_env: dict | None = None):
    env = {**os.environ, "XDG_DATA_HOME": str(home / "data"), "XDG_CONFIG_HOME": str(home / "config"),
           **(extra_env or {})}
    args = [sys.executable, "-m", "daemon.server", "--bus", address]
    if model is not None:
        args += ["--model", model]
    proc = subprocess.Popen(args, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while client(address, "status").returncode != 0:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"daemon did not come up: {proc.stderr.read() if proc.poll() is not None else ''}")
            time.sleep(0.1)
        # One conversion waits for the daemon's warm-up (dictionary, emoji index): the tests are about
        # behaviour, and a frontend's first key must not race a cold start on a loaded CI machine.
        client(address, "convert", "じゅんび", "--n", "1")
        yield proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
