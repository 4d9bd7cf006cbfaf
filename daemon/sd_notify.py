"""sd_notify(3) in pure Python: tell systemd that the daemon is ready, alive or stopping.

Every function is a no-op returning False when the daemon does not run under systemd (no
$NOTIFY_SOCKET), so callers never need to check first.
"""

import os
import socket


def notify(message: str) -> bool:
    """Send `message` ("READY=1", "WATCHDOG=1", ...) to the service manager; False if not sent."""
    address = os.environ.get("NOTIFY_SOCKET", "")
    if address.startswith("@"):
        address = "\0" + address[1:]  # Linux abstract socket namespace
    elif not address.startswith("/"):
        return False  # unset, or a transport this module does not speak (e.g. vsock:)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as notify_socket:
            notify_socket.connect(address)
            notify_socket.send(message.encode("utf-8"))
    except OSError:
        return False  # the manager went away; a lost ping must not take the daemon down
    return True


def ready() -> bool:
    return notify("READY=1")


def watchdog_ping() -> bool:
    return notify("WATCHDOG=1")


def status(text: str) -> bool:
    """Set the one-line status that `systemctl --user status` shows."""
    return notify("STATUS=" + " ".join(text.splitlines()))  # a newline would start a new assignment


def stopping() -> bool:
    return notify("STOPPING=1")


def watchdog_interval() -> float | None:
    """Seconds between watchdog pings: half of WatchdogSec=, as sd_watchdog_enabled(3) advises.

    None when the watchdog is off, or when it is meant for another process ($WATCHDOG_PID).
    """
    try:
        timeout_usec = int(os.environ.get("WATCHDOG_USEC", ""))
        watchdog_pid = int(os.environ.get("WATCHDOG_PID") or os.getpid())
    except ValueError:
        return None
    if timeout_usec <= 0 or watchdog_pid != os.getpid():
        return None
    return timeout_usec / 2e6
