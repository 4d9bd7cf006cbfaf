"""tsuzuri-install-service: install the systemd user unit and the D-Bus activation file.

The templates in daemon/systemd_units/ are the one source of both files; rendering fills in
the absolute path of the daemon. The copies in the repository's systemd/ folder are rendered
for a system-wide install (`tsuzuri-install-service --daemon /usr/bin/tsuzuri-daemon
--output-dir systemd`). Nothing here talks to systemd: it only writes files and prints hints.
"""

import argparse
import os
import shlex
import sys
import sysconfig
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from daemon.paths import xdg_base_dir
from daemon.userdata.storage import atomic_write_bytes

DAEMON_SCRIPT = "tsuzuri-daemon"
UNIT_NAME = "tsuzuri.service"
DAEMON_PLACEHOLDER = "@TSUZURI_DAEMON@"
# systemd refuses these in an executable's path ("Executable name contains special characters").
_UNSUPPORTED_PATH_CHARACTERS = "\"'\\\x7f"


def _systemd_executable(path: str) -> str:
    """`path` as the command of an ExecStart= line: % escaped (specifiers), quoted if it has spaces."""
    escaped = path.replace("%", "%%")
    return f'"{escaped}"' if any(char.isspace() for char in path) else escaped


@dataclass(frozen=True)
class ServiceFile:
    name: str  # the template's name in daemon/systemd_units/ and the installed file's name
    base_variable: str  # the XDG base directory it is installed under ...
    base_fallback: str  # ... or this, relative to the home directory, when that is unset
    subdirectory: str
    quote_executable: Callable[[str], str]  # how this format writes a path on its command line

    def install_dir(self) -> Path:
        return xdg_base_dir(self.base_variable, self.base_fallback) / self.subdirectory

    def render(self, daemon: Path) -> str:
        template = resources.files("daemon").joinpath("systemd_units", self.name).read_text(encoding="utf-8")
        return template.replace(DAEMON_PLACEHOLDER, self.quote_executable(str(daemon)))


SERVICE_FILES = (
    ServiceFile(UNIT_NAME, "XDG_CONFIG_HOME", ".config", "systemd/user", _systemd_executable),
    # dbus-daemon splits Exec= like a POSIX shell
    ServiceFile("org.tsuzuri.Tsuzuri1.service", "XDG_DATA_HOME", ".local/share", "dbus-1/services", shlex.quote),
)

_INSTALL_HINT = f"""\
Next steps with systemd:
  systemctl --user daemon-reload                   # make systemd and the bus see the files
  systemctl --user enable --now {UNIT_NAME}     # optional: start at login, not on first use
Without systemd, the session bus runs the daemon itself on first use. To make an already
running bus see the new file:
  dbus-send --session --type=method_call --dest=org.freedesktop.DBus /org/freedesktop/DBus \\
    org.freedesktop.DBus.ReloadConfig"""

_UNINSTALL_HINT = f"""\
To stop a daemon that is still running and make systemd forget the unit:
  systemctl --user stop {UNIT_NAME}
  systemctl --user daemon-reload"""


def find_daemon() -> Path | None:
    """The tsuzuri-daemon script of the running Python environment (its venv, or the user scheme)."""
    for scripts in (
        sysconfig.get_path("scripts"),
        sysconfig.get_path("scripts", sysconfig.get_preferred_scheme("user")),
    ):
        candidate = Path(scripts) / DAEMON_SCRIPT
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def check_daemon_path(daemon: Path) -> str | None:
    """Why `daemon` cannot go into the service files, or None if it can."""
    if not daemon.is_absolute():
        return f"{daemon}: the daemon path must be absolute"
    if any(char in _UNSUPPORTED_PATH_CHARACTERS or char < " " for char in str(daemon)):
        return f"{daemon}: systemd cannot start a program whose path has quotes, backslashes or control characters"
    return None


def _write(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))
    os.chmod(path, 0o644)  # not secret; a packager may copy it into a system directory


def _enablement_links(unit_dir: Path) -> list[Path]:
    """The symlinks `systemctl --user enable` made (WantedBy=default.target.wants/...)."""
    return [link for link in unit_dir.glob(f"*.wants/{UNIT_NAME}") if link.is_symlink()]


def install(daemon: Path, output_dir: Path | None, dry_run: bool) -> None:
    for service_file in SERVICE_FILES:
        target = (output_dir or service_file.install_dir()) / service_file.name
        text = service_file.render(daemon)
        if dry_run:
            print(f"# {target}\n{text}")
        else:
            _write(target, text)
            print(f"wrote {target}")
    if output_dir is None and not dry_run:
        print(_INSTALL_HINT)


def uninstall(dry_run: bool) -> None:
    unit_dir = SERVICE_FILES[0].install_dir()
    installed = [service_file.install_dir() / service_file.name for service_file in SERVICE_FILES]
    for path in [*installed, *_enablement_links(unit_dir)]:
        if not path.is_symlink() and not path.exists():
            print(f"not installed: {path}")
        elif dry_run:
            print(f"would remove {path}")
        else:
            path.unlink()
            print(f"removed {path}")
    if not dry_run:
        print(_UNINSTALL_HINT)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="tsuzuri-install-service",
        description=(
            f"Install the systemd user unit ({UNIT_NAME}, under $XDG_CONFIG_HOME/systemd/user) and the D-Bus "
            "activation file (under $XDG_DATA_HOME/dbus-1/services) that start tsuzuri-daemon."
        ),
    )
    parser.add_argument("action", nargs="?", choices=("install", "uninstall"), default="install")
    parser.add_argument(
        "--print", dest="dry_run", action="store_true", help="show what would be written or removed, and change nothing"
    )
    parser.add_argument(
        "--daemon",
        type=Path,
        default=None,
        help=f"the daemon's absolute path (default: the {DAEMON_SCRIPT} of this Python environment)",
    )
    parser.add_argument(
        "--output-dir",
        type=Path,
        default=None,
        help="write both files into this folder instead (for packaging; the daemon need not exist)",
    )
    args = parser.parse_args(argv)
    if args.action == "uninstall":
        uninstall(args.dry_run)
        return 0
    daemon = args.daemon or find_daemon()
    if daemon is None:
        parser.error(
            f"no {DAEMON_SCRIPT} in this Python environment ({sys.prefix}); install the package first or pass --daemon"
        )
    problem = check_daemon_path(daemon)
    if problem is None and args.output_dir is None and not os.access(daemon, os.X_OK):
        problem = f"{daemon}: not an executable file"
    if problem is not None:
        parser.error(problem)
    install(daemon, args.output_dir, args.dry_run)
    return 0


if __name__ == "__main__":
    sys.exit(main())
