"""The session registry on its own: no bus, no converter (a session is any object here)."""

import pytest

from daemon.session_registry import (
    MAX_SESSIONS,
    MAX_SESSIONS_PER_PROCESS,
    NotSessionOwner,
    SessionLimitReached,
    SessionRegistry,
    UnknownSession,
)


class FakeSession:
    pass


def test_sessions_are_named_in_order_and_found_by_their_owner():
    registry = SessionRegistry("/s/")
    first = registry.create(":1.1", 100, FakeSession)[0]
    second = registry.create(":1.2", 200, FakeSession)[0]
    assert (first, second) == ("/s/1", "/s/2")
    assert registry.names() == ["/s/1", "/s/2"] and len(registry) == 2
    entry = registry.lookup(first, ":1.1")
    assert (entry.owner, entry.owner_pid, entry.generation, entry.keys, entry.background_task) == (
        ":1.1",
        100,
        0,
        0,
        None,
    )
    assert isinstance(entry.session, FakeSession)
    assert [e.owner for e in registry.entries()] == [":1.1", ":1.2"]


def test_an_unknown_or_removed_session_is_not_found():
    registry = SessionRegistry("/s/")
    with pytest.raises(UnknownSession):
        registry.lookup("/s/1", ":1.1")
    name = registry.create(":1.1", 100, FakeSession)[0]
    assert registry.remove(name) is not None
    assert registry.remove(name) is None
    with pytest.raises(UnknownSession):
        registry.lookup(name, ":1.1")
    assert registry.create(":1.1", 100, FakeSession)[0] == "/s/2"  # names are never reused


def test_another_client_may_not_use_a_session():
    registry = SessionRegistry("/s/")
    name = registry.create(":1.1", 100, FakeSession)[0]
    with pytest.raises(NotSessionOwner, match="belongs to another client"):
        registry.lookup(name, ":1.2")


def test_a_full_registry_makes_room_from_the_process_that_holds_the_most():
    registry = SessionRegistry("/s/", max_sessions=4, max_per_process=10)
    hog = [registry.create(f":1.{n}", 100, FakeSession)[0] for n in range(3)]  # one process, three connections
    frontend = registry.create(":1.9", 200, FakeSession)[0]
    registry.lookup(hog[0], ":1.0")  # used again: hog[1] is now its least recently used
    name, evicted = registry.create(":1.7", 300, FakeSession)
    assert evicted is not None and (evicted.owner, evicted.owner_pid) == (":1.1", 100)
    assert registry.names() == [hog[0], hog[2], frontend, name] and len(registry) == 4
    assert registry.create(":1.8", 300, FakeSession)[1].owner == ":1.2"  # the hog still holds the most
    assert registry.create(":1.6", 400, FakeSession)[1].owner == ":1.7"  # now process 300 does
    assert frontend in registry.names()
    with pytest.raises(UnknownSession):
        registry.lookup(hog[1], ":1.1")


def test_per_process_limit_counts_every_connection_of_the_process():
    registry = SessionRegistry("/s/", max_sessions=10, max_per_process=2)
    registry.create(":1.1", 100, FakeSession)
    registry.create(":1.2", 100, FakeSession)  # the same process on another connection
    with pytest.raises(SessionLimitReached, match=r"too many sessions for one process \(2\)"):
        registry.create(":1.3", 100, FakeSession)
    registry.create(":1.4", 200, FakeSession)  # another process does not count against it
    assert registry.sessions_of_process(100) == 2 and registry.sessions_of_process(200) == 1


def test_the_daemon_limits():
    registry = SessionRegistry("/s/")
    assert (registry.max_sessions, registry.max_per_process) == (MAX_SESSIONS, MAX_SESSIONS_PER_PROCESS) == (512, 64)


def test_reaping_an_owner_takes_out_its_sessions_only_and_forgets_its_process():
    registry = SessionRegistry("/s/")
    registry.remember_process(":1.1", 100)
    registry.remember_process(":1.2", 200)
    mine = [registry.create(":1.1", 100, FakeSession)[0] for _ in range(2)]
    other = registry.create(":1.2", 200, FakeSession)[0]
    reaped = registry.drop_owner(":1.1")
    assert [e.owner for e in reaped] == [":1.1", ":1.1"]
    assert registry.names() == [other]
    assert registry.process_of(":1.1") is None and registry.process_of(":1.2") == 200
    for name in mine:
        with pytest.raises(UnknownSession):
            registry.lookup(name, ":1.1")
    assert registry.drop_owner(":1.1") == []
