"""A private dbus-daemon and a real tsuzuri-daemon on it, for the D-Bus tests."""

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import pytest

REPO = Path(__file__).resolve().parent.parent


def pipe(stream: IO[str] | None) -> IO[str]:
    """A child's pipe that Popen was asked for (it types them as optional)."""
    assert stream is not None
    return stream


@contextmanager
def private_bus():
    if shutil.which("dbus-daemon") is None:
        pytest.skip("dbus-daemon is not installed (Debian package dbus)")
    proc = subprocess.Popen(
        ["dbus-daemon", "--session", "--nofork", "--print-address=1"], stdout=subprocess.PIPE, text=True
    )
    try:
        yield proc.stdout.readline().strip()
    finally:
        proc.terminate()
        proc.wait(10)


# A session bus that D-Bus-activates the services described in one folder of .service files.
ACTIVATING_BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <servicedir>{service_dir}</servicedir>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""


@contextmanager
def activating_bus(root: Path, service_dir: Path):
    """A private dbus-daemon whose only service folder is `service_dir`; yields its address."""
    if shutil.which("dbus-daemon") is None:
        pytest.skip("dbus-daemon is not installed (Debian package dbus)")
    config = root / "session.conf"
    config.write_text(ACTIVATING_BUS_CONFIG.format(socket=root / "bus", service_dir=service_dir))
    with open(root / "dbus-daemon.log", "w") as log:
        bus_daemon = subprocess.Popen(
            ["dbus-daemon", f"--config-file={config}", "--nofork", "--print-address"],
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )
    try:
        address = pipe(bus_daemon.stdout).readline().strip()
        assert address, (root / "dbus-daemon.log").read_text()
        yield address
    finally:
        bus_daemon.terminate()
        bus_daemon.wait(timeout=10)
        pipe(bus_daemon.stdout).close()


# A session bus that lets other users connect too, as a shared or proxied bus would: the daemon itself must
# refuse them what is the user's own.
MULTI_USER_BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""


@contextmanager
def multi_user_bus():
    """A private dbus-daemon that any user may connect to; yields its address."""
    if shutil.which("dbus-daemon") is None:
        pytest.skip("dbus-daemon is not installed (Debian package dbus)")
    with tempfile.TemporaryDirectory(prefix="tsuzuri-bus-") as root:
        os.chmod(root, 0o755)  # pytest's tmp_path is private to its user: other users could not reach the socket
        config = Path(root) / "session.conf"
        config.write_text(MULTI_USER_BUS_CONFIG.format(socket=Path(root) / "bus"))
        proc = subprocess.Popen(
            ["dbus-daemon", f"--config-file={config}", "--nofork", "--print-address=1"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            yield proc.stdout.readline().strip()
        finally:
            proc.terminate()
            proc.wait(10)
            proc.stdout.close()


def write_daemon_activation(service_dir: Path, address: str, home: Path, model: str, delay_s: float = 0) -> Path:
    """A .service file that starts this checkout's tsuzuri-daemon on `address`, its data under `home`,
    `delay_s` late (a cold start on a busy machine)."""
    service_dir.mkdir(parents=True, exist_ok=True)
    path = service_dir / "org.tsuzuri.Tsuzuri1.service"
    path.write_text(
        "[D-BUS Service]\nName=org.tsuzuri.Tsuzuri1\n"
        f"Exec=/bin/sh -c 'sleep {delay_s}; exec env XDG_DATA_HOME={home / 'data'} "
        f"XDG_CONFIG_HOME={home / 'config'} {sys.executable} -m daemon.server --bus {address} "
        f"--model {model}'\n"
    )
    return path


def client(address: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "daemon.tools.client", "--bus", address, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@contextmanager
def running_daemon(address: str, home: Path, model: str | None, extra_env: dict | None = None):
    env = {
        **os.environ,
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CONFIG_HOME": str(home / "config"),
        **(extra_env or {}),
    }
    args = [sys.executable, "-m", "daemon.server", "--bus", address]
    if model is not None:
        args += ["--model", model]
    proc = subprocess.Popen(args, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while client(address, "status").returncode != 0:
            if proc.poll() is not None or time.monotonic() > deadline:
                said = pipe(proc.stderr).read() if proc.poll() is not None else ""
                raise RuntimeError(f"daemon did not come up: {said}")
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


async def wait_until_warmed_up(session) -> None:
    """Until the daemon's warm-up is over: its last step builds the reading index reconversion needs (~3 s),
    and until then the daemon lets the reconversion key through. `session` is a daemon.tools.client.ClientSession."""
    from daemon.keys import keyval_of
    from ime_protocol import Discard, KeyEvent, SurroundingText

    deadline = time.monotonic() + 30
    await session.send(SurroundingText("天気", 2, 0))
    while not (await session.send(KeyEvent(keyval_of("Henkan"), 0, 0, 1))).consumed:
        assert time.monotonic() < deadline, "the daemon never finished warming up"
        await asyncio.sleep(0.1)
    await session.send(Discard())


@contextmanager
def stalled(daemon: subprocess.Popen, seconds: float = 1.0):
    """The daemon stopped for `seconds` from now, as a loaded machine may hold it: past the frontends' key timeout
    (300 ms), so that what the test types meanwhile is answered late."""
    daemon.send_signal(signal.SIGSTOP)
    resume = threading.Timer(seconds, daemon.send_signal, [signal.SIGCONT])
    resume.start()
    try:
        yield
    finally:
        resume.join()
