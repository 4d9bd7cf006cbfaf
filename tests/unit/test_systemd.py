"""sd_notify, the service installer, the unit checked by systemd-analyze, and real D-Bus activation."""

import asyncio
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from dbus_fast import Message, MessageType
from dbus_fast.aio import MessageBus

from daemon import sd_notify
from daemon.bus import call_bus_daemon
from daemon.tools import install
from tests.dbus_fixtures import activating_bus

REPO = Path(__file__).resolve().parents[2]
BUS_NAME = "org.tsuzuri.Tsuzuri1"
OBJECT_PATH = "/org/tsuzuri/Tsuzuri1"
PACKAGED_DAEMON = Path("/usr/bin/tsuzuri-daemon")  # what the reference copies in systemd/ are rendered for
# A folder name that needs quoting and escaping in both file formats: a space, a systemd
# specifier (%h) and a shell variable.
AWKWARD_DIR = "bin dir %h $HOME"

# Stands in for tsuzuri-daemon when the bus activates it: claims the name and answers Ping.
STAND_IN_DAEMON = f"""#!{sys.executable}
import asyncio, os
from dbus_fast.aio import MessageBus
from dbus_fast.service import ServiceInterface, method

class StandIn(ServiceInterface):
    @method()
    def Ping(self) -> "s":
        return "pong"

async def main():
    bus = await MessageBus(bus_address=os.environ["DBUS_STARTER_ADDRESS"]).connect()
    bus.export("{OBJECT_PATH}", StandIn("{BUS_NAME}"))
    await bus.request_name("{BUS_NAME}")
    try:
        await bus.wait_for_disconnect()
    except EOFError:
        pass  # the test's bus went away

asyncio.run(main())
"""


# -- sd_notify ------------------------------------------------------------------------------------


@pytest.fixture
def no_systemd(monkeypatch):
    for variable in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"):
        monkeypatch.delenv(variable, raising=False)


def receive_all(listener: socket.socket) -> list[bytes]:
    messages = []
    listener.setblocking(False)
    while True:
        try:
            messages.append(listener.recv(4096))
        except BlockingIOError:
            return messages


def test_notify_is_a_no_op_outside_systemd(no_systemd):
    assert not any(call() for call in (sd_notify.ready, sd_notify.watchdog_ping, sd_notify.stopping))
    assert sd_notify.status("idle") is False
    assert sd_notify.watchdog_interval() is None


def test_notify_sends_datagrams_to_the_socket(no_systemd, tmp_path, monkeypatch):
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as listener:
        listener.bind(str(tmp_path / "notify"))
        monkeypatch.setenv("NOTIFY_SOCKET", str(tmp_path / "notify"))
        assert sd_notify.ready() and sd_notify.status("loading\nthe model") and sd_notify.watchdog_ping()
        assert sd_notify.stopping() and sd_notify.notify("EXTEND_TIMEOUT_USEC=5000000")
        assert receive_all(listener) == [
            b"READY=1",
            b"STATUS=loading the model",
            b"WATCHDOG=1",
            b"STOPPING=1",
            b"EXTEND_TIMEOUT_USEC=5000000",
        ]


def test_notify_reaches_an_abstract_socket(no_systemd, monkeypatch):
    name = f"tsuzuri-test-{uuid.uuid4().hex}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as listener:
        listener.bind("\0" + name)
        monkeypatch.setenv("NOTIFY_SOCKET", "@" + name)
        assert sd_notify.ready()
        assert receive_all(listener) == [b"READY=1"]


@pytest.mark.parametrize("address", ["relative/notify", "vsock:2:1234", "/nonexistent/notify"])
def test_notify_returns_false_when_it_cannot_send(no_systemd, monkeypatch, address):
    monkeypatch.setenv("NOTIFY_SOCKET", address)
    assert sd_notify.watchdog_ping() is False


@pytest.mark.parametrize(
    ("usec", "pid", "interval"),
    [
        ("30000000", None, 15.0),
        ("30000000", "self", 15.0),
        ("30000000", "other", None),
        ("0", None, None),
        ("soon", None, None),
        ("30000000", "nobody", None),
    ],
)
def test_watchdog_interval_is_half_the_timeout_for_this_process(no_systemd, monkeypatch, usec, pid, interval):
    monkeypatch.setenv("WATCHDOG_USEC", usec)
    if pid is not None:
        monkeypatch.setenv("WATCHDOG_PID", {"self": str(os.getpid()), "other": str(os.getpid() + 1)}.get(pid, pid))
    assert sd_notify.watchdog_interval() == interval


# -- the installer --------------------------------------------------------------------------------


@pytest.fixture
def xdg(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path


@pytest.fixture
def daemon_script(tmp_path) -> Path:
    """An executable stand-in for tsuzuri-daemon, in a folder with an awkward name."""
    script = tmp_path / AWKWARD_DIR / "tsuzuri-daemon"
    script.parent.mkdir()
    script.write_text(STAND_IN_DAEMON, encoding="utf-8")
    script.chmod(0o755)
    return script


def unit_path(xdg: Path) -> Path:
    return xdg / "config" / "systemd" / "user" / "tsuzuri.service"


def activation_path(xdg: Path) -> Path:
    return xdg / "data" / "dbus-1" / "services" / f"{BUS_NAME}.service"


def assignments(text: str, key: str) -> list[str]:
    return [line.partition("=")[2] for line in text.splitlines() if line.startswith(f"{key}=")]


def test_install_writes_both_files_with_the_daemon_path(xdg, daemon_script, capsys):
    assert install.main(["install", "--daemon", str(daemon_script)]) == 0
    unit = unit_path(xdg).read_text(encoding="utf-8")
    activation = activation_path(xdg).read_text(encoding="utf-8")
    assert assignments(unit, "ExecStart") == [f'"{str(daemon_script).replace("%", "%%")}"']
    assert assignments(unit, "Type") == ["dbus"] and assignments(unit, "BusName") == [BUS_NAME]
    assert assignments(unit, "WantedBy") == ["default.target"]
    assert [shlex.split(command) for command in assignments(activation, "Exec")] == [[str(daemon_script)]]
    assert assignments(activation, "Name") == [BUS_NAME]
    assert assignments(activation, "SystemdService") == ["tsuzuri.service"]
    assert install.DAEMON_PLACEHOLDER not in unit + activation
    assert {path.stat().st_mode & 0o777 for path in (unit_path(xdg), activation_path(xdg))} == {0o644}
    out = capsys.readouterr().out
    assert f"wrote {unit_path(xdg)}" in out and "systemctl --user daemon-reload" in out


def test_install_finds_the_daemon_of_this_environment(xdg, daemon_script, monkeypatch):
    monkeypatch.setattr(install.sysconfig, "get_path", lambda name, scheme=None: str(daemon_script.parent))
    assert install.main(["install"]) == 0
    assert str(daemon_script) in unit_path(xdg).read_text(encoding="utf-8").replace("%%", "%")


def test_print_shows_the_files_and_writes_nothing(xdg, daemon_script, capsys):
    assert install.main(["--print", "--daemon", str(daemon_script)]) == 0
    out = capsys.readouterr().out
    assert f"# {unit_path(xdg)}\n" in out and f"# {activation_path(xdg)}\n" in out
    assert "[D-BUS Service]" in out and "[Service]" in out
    assert not (xdg / "config").exists() and not (xdg / "data").exists()


def test_uninstall_removes_the_files_and_the_enablement_link(xdg, daemon_script, capsys):
    install.main(["install", "--daemon", str(daemon_script)])
    wants = unit_path(xdg).parent / "default.target.wants"
    wants.mkdir()
    (wants / "tsuzuri.service").symlink_to(unit_path(xdg))
    assert install.main(["uninstall", "--print"]) == 0
    assert unit_path(xdg).exists() and "would remove" in capsys.readouterr().out
    assert install.main(["uninstall"]) == 0
    assert not unit_path(xdg).exists() and not activation_path(xdg).exists()
    assert not (wants / "tsuzuri.service").is_symlink()
    install.main(["uninstall"])
    assert f"not installed: {unit_path(xdg)}" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("daemon", "message"),
    [
        ("relative/tsuzuri-daemon", "must be absolute"),
        ("/nonexistent/tsuzuri-daemon", "not an executable file"),
        ("/opt/it's/tsuzuri-daemon", "quotes, backslashes or control characters"),
    ],
)
def test_install_refuses_a_daemon_path_it_cannot_use(xdg, capsys, daemon, message):
    with pytest.raises(SystemExit) as exit_info:
        install.main(["install", "--daemon", daemon])
    assert exit_info.value.code == 2 and message in capsys.readouterr().err
    assert not (xdg / "config").exists()


def test_install_without_a_daemon_in_this_environment_says_so(xdg, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(install.sysconfig, "get_path", lambda name, scheme=None: str(tmp_path))
    with pytest.raises(SystemExit):
        install.main(["install"])
    assert "no tsuzuri-daemon in this Python environment" in capsys.readouterr().err


def test_reference_copies_in_systemd_folder_are_rendered_from_the_templates():
    for service_file in install.SERVICE_FILES:
        assert (REPO / "systemd" / service_file.name).read_text(encoding="utf-8") == service_file.render(
            PACKAGED_DAEMON
        ), (
            f"systemd/{service_file.name} is stale: regenerate it with `python -m daemon.tools.install "
            f"--daemon {PACKAGED_DAEMON} --output-dir systemd`"
        )


# -- systemd-analyze ------------------------------------------------------------------------------


def systemd_analyze_verify(unit: Path, runtime_dir: Path) -> str:
    """Everything `systemd-analyze verify --user` says about `unit` (it exits 0 on warnings)."""
    result = subprocess.run(
        ["systemd-analyze", "verify", "--user", "--man=no", str(unit)],
        env={**os.environ, "XDG_RUNTIME_DIR": str(runtime_dir)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    return (
        f"exit status {result.returncode}\n{result.stdout}{result.stderr}"
        if (result.returncode or result.stdout or result.stderr)
        else ""
    )


needs_systemd_analyze = pytest.mark.skipif(
    shutil.which("systemd-analyze") is None, reason="systemd-analyze not installed (Debian package: systemd)"
)


@needs_systemd_analyze
def test_installed_unit_passes_systemd_analyze_verify(xdg, daemon_script):
    install.main(["install", "--daemon", str(daemon_script)])
    assert systemd_analyze_verify(unit_path(xdg), xdg) == ""


@needs_systemd_analyze
def test_systemd_analyze_verify_does_catch_a_missing_daemon(xdg):
    install.main(["install", "--daemon", str(xdg / "missing" / "tsuzuri-daemon"), "--output-dir", str(xdg)])
    assert "tsuzuri-daemon" in systemd_analyze_verify(xdg / "tsuzuri.service", xdg)


# -- D-Bus activation -----------------------------------------------------------------------------


@pytest.fixture
def private_session_bus(xdg):
    """A dbus-daemon whose only service directory is the one the installer writes to."""
    with activating_bus(xdg, activation_path(xdg).parent) as address:
        yield address


async def call_bus(bus: MessageBus, member: str, signature: str = "", body: list | None = None) -> list:
    reply = await call_bus_daemon(bus, member, signature, body)
    assert reply.message_type is MessageType.METHOD_RETURN, reply.body
    return reply.body


@pytest.mark.dbus
async def test_the_bus_activates_the_installed_daemon(xdg, daemon_script, private_session_bus):
    install.main(["install", "--daemon", str(daemon_script)])
    bus = await MessageBus(bus_address=private_session_bus).connect()
    activated_pid = None
    try:
        await call_bus(bus, "ReloadConfig")  # what the installer's hint tells users to do
        assert BUS_NAME in (await call_bus(bus, "ListActivatableNames"))[0]
        assert await call_bus(bus, "NameHasOwner", "s", [BUS_NAME]) == [False]

        reply = await asyncio.wait_for(
            bus.call(Message(destination=BUS_NAME, path=OBJECT_PATH, interface=BUS_NAME, member="Ping")), timeout=60
        )
        assert (reply.message_type, reply.body) == (MessageType.METHOD_RETURN, ["pong"]), (
            xdg / "dbus-daemon.log"
        ).read_text()
        [activated_pid] = await call_bus(bus, "GetConnectionUnixProcessID", "s", [BUS_NAME])
        command_line = Path(f"/proc/{activated_pid}/cmdline").read_bytes().split(b"\0")
        assert str(daemon_script).encode() in command_line  # started through Exec=, awkward path intact
    finally:
        bus.disconnect()
        if activated_pid is not None:
            try:
                os.kill(activated_pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
