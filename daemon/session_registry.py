"""The daemon's input sessions by name: who owns each, how many a client may have, and reaping.

Knows nothing of D-Bus. The D-Bus adapter (daemon/server.py) names sessions by object path, tells the
registry which client (its unique bus name) and which process asked, and turns the exceptions below into
D-Bus errors. A session belongs to the client that created it; when that client goes away, `drop_owner`
hands back its sessions for the adapter to close. When every place is taken, a new session takes the place of
the least recently used session of the process that holds the most: a few processes filling the registry
lose their own idle sessions, not a frontend's.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from collections.abc import Callable, Iterator

if TYPE_CHECKING:
    from daemon.session import InputSession

MAX_SESSIONS = 512
MAX_SESSIONS_PER_PROCESS = 64  # however many connections the process opens


class SessionRegistryError(Exception):
    """A session that cannot be created or used; the message says why."""


class SessionLimitReached(SessionRegistryError):
    """Creating another session would pass MAX_SESSIONS_PER_PROCESS for its process."""


class UnknownSession(SessionRegistryError):
    """No session has this name: it was closed, or its client went away."""


class NotSessionOwner(SessionRegistryError):
    """The session belongs to another client."""


@dataclass
class SessionEntry:
    name: str  # on D-Bus, its object path
    owner: str  # the client that created it (on D-Bus, its unique bus name)
    owner_pid: int  # its process
    session: InputSession
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    generation: int = 0  # bumped by every message: a conversion in advance started before it is stale
    keys: int = 0  # key events received: a key with a newer one waiting is answered without live conversion
    background_task: asyncio.Task | None = None  # its conversion in advance, or the improvement of Space's
    last_used: int = 0  # the registry's count of creations and lookups when it was last created or looked up


class SessionRegistry:
    """Sessions named `prefix` + 1, 2, 3, …, at most `max_sessions` in all and `max_per_process` for one
    process. Not thread-safe: the daemon uses it from its event loop only."""

    def __init__(self, prefix: str, max_sessions: int = MAX_SESSIONS, max_per_process: int = MAX_SESSIONS_PER_PROCESS):
        self.prefix = prefix
        self.max_sessions = max_sessions
        self.max_per_process = max_per_process
        self._entries: dict[str, SessionEntry] = {}
        self._ids = itertools.count(1)
        self._uses = itertools.count(1)
        self._pids: dict[str, int] = {}  # client → process id, for clients with sessions

    def __len__(self) -> int:
        return len(self._entries)

    def names(self) -> list[str]:
        """The names of the open sessions, oldest first."""
        return list(self._entries)

    def entries(self) -> Iterator[SessionEntry]:
        return iter(self._entries.values())

    def sessions_of_process(self, pid: int) -> int:
        return sum(entry.owner_pid == pid for entry in self._entries.values())

    def create(self, owner: str, pid: int, make_session: Callable[[], InputSession]) -> tuple[str, SessionEntry | None]:
        """A new session for `owner` (running as process `pid`), made by `make_session` once the per-process
        limit allows it: its name, and the session taken out to make room (closing it is the caller's), if the
        registry was full."""
        if self.sessions_of_process(pid) >= self.max_per_process:
            raise SessionLimitReached(f"too many sessions for one process ({self.max_per_process})")
        evicted = self._make_room()
        name = f"{self.prefix}{next(self._ids)}"
        self._entries[name] = SessionEntry(name, owner, pid, make_session(), last_used=next(self._uses))
        return name, evicted

    def _make_room(self) -> SessionEntry | None:
        """Below max_sessions, nothing; else takes out the least recently used session of the process that
        holds the most sessions."""
        if len(self._entries) < self.max_sessions:
            return None
        held = Counter(entry.owner_pid for entry in self._entries.values())
        most = max(held.values())
        name = min(
            (name for name, entry in self._entries.items() if held[entry.owner_pid] == most),
            key=lambda name: self._entries[name].last_used,
        )
        return self._entries.pop(name)

    def lookup(self, name: str, caller: str) -> SessionEntry:
        """The session `name`, for its owner `caller`; UnknownSession or NotSessionOwner otherwise."""
        entry = self._entries.get(name)
        if entry is None:
            raise UnknownSession(name)
        if entry.owner != caller:
            raise NotSessionOwner("this session belongs to another client")
        entry.last_used = next(self._uses)
        return entry

    def remove(self, name: str) -> SessionEntry | None:
        """Takes the session out of the registry (None if there was none): closing it is the caller's."""
        return self._entries.pop(name, None)

    def drop_owner(self, owner: str) -> list[SessionEntry]:
        """Reaps a client that went away: takes out and returns its sessions, and forgets its process."""
        self._pids.pop(owner, None)
        return [self._entries.pop(name) for name in [n for n, e in self._entries.items() if e.owner == owner]]

    def process_of(self, owner: str) -> int | None:
        """The process id remembered for `owner`, or None (ask once per client, then `remember_process`)."""
        return self._pids.get(owner)

    def remember_process(self, owner: str, pid: int) -> None:
        self._pids[owner] = pid
