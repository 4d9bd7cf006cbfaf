"""The D-Bus errors the daemon's methods answer with, and the exception that carries one out of a handler (the
protocol's own errors are in ime_protocol/dbus_names.py)."""

from __future__ import annotations

ERROR_INVALID_ARGS = "org.freedesktop.DBus.Error.InvalidArgs"
ERROR_LIMITS = "org.freedesktop.DBus.Error.LimitsExceeded"
ERROR_FAILED = "org.freedesktop.DBus.Error.Failed"
ERROR_ACCESS_DENIED = "org.freedesktop.DBus.Error.AccessDenied"
ERROR_UNKNOWN_METHOD = "org.freedesktop.DBus.Error.UnknownMethod"


class CallError(Exception):
    """A method call refused: the D-Bus error `name` with `text`, sent back instead of a reply."""

    def __init__(self, name: str, text: str):
        super().__init__(text)
        self.name = name


def check_same_user(caller_uid: int, daemon_uid: int) -> None:
    if caller_uid != daemon_uid:
        raise CallError(
            ERROR_ACCESS_DENIED,
            "only the user the daemon runs as may open sessions, reload its "
            "configuration, or read or change its user dictionary and "
            "learning history",
        )
