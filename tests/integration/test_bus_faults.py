"""The daemon on the bus under hostile and heavy clients: it keeps serving, whatever they send."""

import asyncio
import time

import pytest

from dbus_fast import Message, MessageType

from daemon.tools.client import ClientError, ClientSession, call, connect
from daemon.userdata.learning import LearningHistory
from ime_protocol.dbus_names import BUS_NAME, SESSION_INTERFACE, SESSION_PATH_PREFIX
from tests.dbus_fixtures import client, private_bus, running_daemon, wait_until_warmed_up

NO_MODEL = "/nonexistent/model.gguf"


async def flood_unknown_sessions(address: str, calls: int, path_chars: int) -> int:
    """Sends `calls` Send messages to unknown session paths of `path_chars` characters, all at once, and
    counts the error replies that came back."""
    bus = await connect(address)
    try:
        path = SESSION_PREFIX_X + "x" * (path_chars - len(SESSION_PREFIX_X))
        replies = await asyncio.gather(
            *(
                bus.call(
                    Message(
                        destination=BUS_NAME,
                        path=path,
                        interface=SESSION_INTERFACE,
                        member="Send",
                        signature="ay",
                        body=[b"\x80"],
                    )
                )
                for _ in range(calls)
            )
        )
        return sum(reply.message_type is MessageType.ERROR for reply in replies)
    finally:
        bus.disconnect()


SESSION_PREFIX_X = SESSION_PATH_PREFIX + "9"


async def test_oversized_unknown_session_calls_from_many_clients_do_not_stop_the_daemon(tmp_path):
    with private_bus() as address, running_daemon(address, tmp_path, NO_MODEL) as daemon:
        errors = await asyncio.gather(*(flood_unknown_sessions(address, 60, 65_000) for _ in range(8)))
        assert errors == [60] * 8
        assert daemon.poll() is None
        bus = await connect(address)
        try:
            session = await ClientSession.create(bus)
            for key in "kanji":
                out = await session.key(key)
            assert out.preedit.text == "かんじ"
            (status,) = await call(bus, "GetStatus")
            assert status[0] == "failed"  # the missing model, as before the flood
        finally:
            bus.disconnect()


def anonymous_rss_mib(pid: int) -> float:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no RssAnon")


async def test_the_daemons_memory_stays_flat_over_thousands_of_conversions_through_dbus(tmp_path):
    """Each conversion used to leave ~1.5 MB behind; after warm-up, 3,000 more (Convert calls and a session's
    conversions, alternating) must not grow the daemon by more than the allocator's slack."""
    with private_bus() as address, running_daemon(address, tmp_path, NO_MODEL) as daemon:
        bus = await connect(address)
        try:
            session = await ClientSession.create(bus)
            await wait_until_warmed_up(session)

            async def convert_twice(i: int) -> None:
                reading = "きょうはいい" if i % 2 else "しぶんぎ"
                assert await call(bus, "Convert", "ssu", [reading, "", 5])
                for key in ["k", "a", "space", "Escape", "Escape"]:
                    await session.key(key)

            for i in range(100):
                await convert_twice(i)
            before = anonymous_rss_mib(daemon.pid)
            for i in range(1500):
                await convert_twice(i)
            growth = anonymous_rss_mib(daemon.pid) - before
            assert growth < 20, f"{growth:.1f} MiB"
        finally:
            bus.disconnect()


async def commit_third_candidate(session: ClientSession, romaji: str) -> str:
    for key in [*romaji, "space", "space", "space", "Return"]:
        out = await session.key(key)
    return out.commit


async def test_kill_9_loses_no_committed_choice(tmp_path):
    learning_file = tmp_path / "data" / "tsuzuri" / "learning.tsv"
    with private_bus() as address:
        with running_daemon(address, tmp_path, NO_MODEL) as daemon:
            bus = await connect(address)
            session = await ClientSession.create(bus)
            chosen = {
                reading: await commit_third_candidate(session, romaji)
                for reading, romaji in (("かんじ", "kanji"), ("きしゃ", "kisha"), ("こうえん", "kouen"))
            }
            daemon.kill()  # right after the last answer, long before a periodic save
            daemon.wait(10)
            bus.disconnect()
        history = LearningHistory(learning_file)
        assert {reading: history.ranked(reading)[0] for reading in chosen} == chosen


async def test_an_unreadable_learning_file_is_reported_and_typing_goes_on(tmp_path):
    learning_file = tmp_path / "data" / "tsuzuri" / "learning.tsv"
    learning_file.mkdir(parents=True)  # a directory where the file should be
    with private_bus() as address:
        with running_daemon(address, tmp_path, NO_MODEL) as daemon:
            bus = await connect(address)
            session = await ClientSession.create(bus)
            for key in [*"kanji", "space", "space"]:
                await session.key(key)
            committed = await session.key("Return")
            assert committed.commit and committed.aux.startswith("学習した変換を保存できません: learning.tsv cannot")
            assert await commit_third_candidate(session, "kisha")
            assert (await session.key("a")).aux == ""  # the panel said it once; the status goes on saying it
            (status,) = await call(bus, "GetStatus")  # the choice is not kept: the status says why
            assert "learning.tsv cannot be read (IsADirectoryError" in status[2] and "in memory only" in status[2]
            assert status[2].startswith("model file not found")  # after the model's own reason
            bus.disconnect()
            daemon.terminate()
            _, stderr = daemon.communicate(timeout=20)
    assert daemon.returncode == 0
    assert "learning.tsv: cannot be read (IsADirectoryError" in stderr
    assert "Traceback" not in stderr
    assert learning_file.is_dir() and list(learning_file.iterdir()) == []


async def test_hostile_and_huge_readings_are_answered_quickly_and_others_keep_typing(tmp_path, model_path):
    with private_bus() as address, running_daemon(address, tmp_path, str(model_path)):
        bus = await connect(address)
        try:
            with pytest.raises(ClientError, match="InvalidArgs.*after NFKC"):
                await call(bus, "Convert", "ssu", ["\ufdfa" * 100, "", 5])  # 100 characters, 1,800 after NFKC
            assert (await call(bus, "Convert", "ssu", ["\x01\x02\uee00", "", 5]))[0] == []
            session = await ClientSession.create(bus)
            start = time.monotonic()
            huge = asyncio.ensure_future(call(bus, "Convert", "ssu", ["きょうはいいてんきですね" * 83, "", 100]))
            typed = [await session.key(key) for key in "kyouha"]
            typing_s = time.monotonic() - start
            (found,) = await huge
            assert typed[-1].preedit.text == "きょうは" and found[0][0].startswith("今日はいい天気ですね")
            assert typing_s < 2.0 and time.monotonic() - start < 10.0
        finally:
            bus.disconnect()


async def test_one_process_cannot_take_every_session(tmp_path):
    with private_bus() as address, running_daemon(address, tmp_path, NO_MODEL):
        buses = [await connect(address) for _ in range(9)]
        try:
            outcomes = []
            for index in range(90):
                try:
                    await ClientSession.create(buses[index % len(buses)])
                    outcomes.append("created")
                except ClientError as error:
                    outcomes.append("LimitsExceeded" if "LimitsExceeded" in str(error) else str(error))
            assert outcomes == ["created"] * 64 + ["LimitsExceeded"] * 26
            done = client(address, "type", "kanji", "--json")  # another process still gets a session
            assert done.returncode == 0, done.stderr
        finally:
            for bus in buses:
                bus.disconnect()


def test_the_soak_benchmark_types_reaps_and_serves_after_churn():
    from daemon.tools.bench import soak_benchmark

    result = soak_benchmark(sessions=3, seconds=2.0, model="none")
    assert result["errors"] == 0 and result["latency_ms"]["key"]["n"] > 10
    assert result["reaped"] == "3/3" and result["served_after_churn"] == "3/3"
    assert 1 <= len(result["rss_mib"]["anonymous_by_tenth"]) <= 10
    assert result["distinct_phrases"] >= 3  # each typist its own phrases


def test_soak_phrases_are_too_many_for_the_ranking_cache():
    import random

    from daemon.converter import RANKINGS_KEPT
    from daemon.tools.bench import soak_phrase

    rng = random.Random(1)
    assert len({soak_phrase(rng) for _ in range(4 * RANKINGS_KEPT)}) > 3.5 * RANKINGS_KEPT


def test_fuzzing_the_protocol_finds_no_crash_and_no_hang():
    """A small run of tsuzuri-fuzz (the full one: 10^6 cases in process, 10^5 over D-Bus; see its docstring)."""
    from daemon.tools.fuzz import fuzz_in_process, fuzz_over_dbus

    for result in (fuzz_in_process(20_000, seed=1), fuzz_over_dbus(2_000, seed=1)):
        assert (result["crashes"], result["hangs"]) == (0, 0), result["examples"]


DAMAGED_FILES = {
    "learning garbage": ("data/tsuzuri/learning.tsv", b"\xfe garbage\x00\nno tabs here\n", "learning.tsv: skipped 2"),
    "learning truncated": (
        "data/tsuzuri/learning.tsv",
        "きょう\t今日\t1\t1000000000\nかん".encode(),
        "learning.tsv: skipped 1",
    ),
    "user dictionary garbage": (
        "data/tsuzuri/user_dictionary.tsv",
        b"\x00\x01\x02\nonly-one-field\n",
        "user_dictionary.tsv: skipped 2",
    ),
    "config wrong types": (
        "config/tsuzuri/config.toml",
        b'threads = "many"\n[candidates]\npage_size = -3\n',
        'threads = "many"',
    ),
    "config garbage": ("config/tsuzuri/config.toml", b"[[[not toml\n", "config:"),
}


@pytest.mark.parametrize("damage", list(DAMAGED_FILES))
async def test_a_damaged_user_file_is_reported_and_never_lost(damage, tmp_path):
    relative, content, report = DAMAGED_FILES[damage]
    damaged = tmp_path / relative
    damaged.parent.mkdir(parents=True)
    damaged.write_bytes(content)
    with private_bus() as address:
        with running_daemon(address, tmp_path, NO_MODEL) as daemon:
            bus = await connect(address)
            session = await ClientSession.create(bus)
            assert await commit_third_candidate(session, "kanji")  # typing goes on
            bus.disconnect()
            daemon.terminate()  # saves on the way out
            _, stderr = daemon.communicate(timeout=20)
    assert daemon.returncode == 0
    assert report in stderr and "Traceback" not in stderr
    assert "かんじ" not in stderr  # nothing typed is logged, not even from the damaged lines
    kept = damaged.with_name(damaged.name + ".damaged")
    assert damaged.read_bytes() == content or kept.read_bytes() == content  # the user's bytes survive
    for data_file in set((tmp_path / "data" / "tsuzuri").glob("*")) - {damaged}:  # what the daemon wrote
        assert data_file.stat().st_mode & 0o077 == 0, f"{data_file.name} is readable by others"


def test_the_allocator_is_tuned_for_a_long_running_daemon():
    """glibc takes every setting (daemon/allocator.py has the figures behind them)."""
    import platform

    from daemon.allocator import tune_allocator

    if platform.libc_ver()[0] != "glibc":
        pytest.skip("not glibc")
    assert tune_allocator()


async def test_stopping_drops_queued_conversions_instead_of_running_them(tmp_path):
    """SIGTERM with 32 long Convert calls queued (about 1 s each, two at a time): the running ones finish, the
    queued ones are dropped, so the daemon stops in about 3 s, not the ~15 s running them all took."""
    kana = "あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをん"
    with private_bus() as address, running_daemon(address, tmp_path, NO_MODEL) as daemon:
        bus = await connect(address)
        calls = [convert_call(bus, "".join(kana[(i * 7 + k * 13) % len(kana)] for k in range(1000))) for i in range(32)]
        await call(bus, "GetStatus")  # answered after every Convert above was handed to the workers
        stopping = time.monotonic()
        daemon.terminate()
        daemon.wait(30)
        assert daemon.returncode == 0 and time.monotonic() - stopping < 8
        for pending in calls:
            pending.cancel()
        bus.disconnect()


def long_readings(count: int) -> list[str]:
    kana = "あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをん"
    return ["".join(kana[(i * 7 + k * 13) % len(kana)] for k in range(1000)) for i in range(count)]


def convert_call(bus, reading: str, n: int = 100):
    return asyncio.ensure_future(
        bus.call(
            Message(
                destination=BUS_NAME,
                path="/org/tsuzuri/Tsuzuri1",
                interface=BUS_NAME,
                member="Convert",
                signature="ssu",
                body=[reading, "", n],
            )
        )
    )


async def test_another_callers_long_conversions_do_not_hold_up_typing(tmp_path):
    """Two connections each keep 8 Convert calls of 1,000 kana in flight (~1 s each): keys of a third client's
    session answer at once (they queued behind all 16 before: 13-16 s), and its own short Convert waits for at
    most one of theirs per connection."""
    with private_bus() as address, running_daemon(address, tmp_path, NO_MODEL):
        hogs = [await connect(address) for _ in range(2)]
        flood = [convert_call(hog, reading) for hog in hogs for reading in long_readings(8)]
        bus = await connect(address)
        await call(bus, "GetStatus")  # the flood is in the daemon's hands
        session = await ClientSession.create(bus)
        started = time.monotonic()
        for key in "kyou":
            out = await session.key(key)
        assert out.preedit.text == "きょう" and time.monotonic() - started < 2
        started = time.monotonic()
        (candidates,) = await call(bus, "Convert", "ssu", ["きょう", "", 1])
        assert candidates[0][0] and time.monotonic() - started < 6
        for pending in flood:
            pending.cancel()
        for connection in [*hogs, bus]:
            connection.disconnect()


async def test_the_calls_of_a_caller_that_went_away_are_dropped(tmp_path):
    with private_bus() as address, running_daemon(address, tmp_path, NO_MODEL):
        hog = await connect(address)
        flood = [convert_call(hog, reading) for reading in long_readings(12)]
        await call(hog, "GetStatus")
        hog.disconnect()  # 11 calls still wait: they must never run (~11 s of work)
        for pending in flood:
            pending.cancel()
        bus = await connect(address)
        started = time.monotonic()
        (candidates,) = await call(bus, "Convert", "ssu", ["きょう", "", 1])
        assert candidates[0][0] and time.monotonic() - started < 4
        bus.disconnect()


async def test_the_client_library_refuses_replies_forged_by_an_eavesdropper(tmp_path):
    """On the stock session bus any program of the user may watch the calls to the daemon and answer each first,
    with its serial: dbus-fast alone takes that answer (a commit the user never typed). The client library takes
    only the daemon's."""
    from ime_protocol import Output, Preedit, encode

    with private_bus() as address, running_daemon(address, tmp_path, NO_MODEL):
        spy = await connect(address)
        forged = []

        def answer_first(message: Message) -> bool:
            if (
                message.message_type is MessageType.METHOD_CALL
                and message.sender != spy.unique_name
                and (message.member in ("Send", "GetStatus", "GetNameOwner", "CreateSession", "GetChannelAddress"))
            ):
                forgeries: dict[str, tuple[str, list]] = {
                    "Send": (
                        "ay",
                        [
                            encode(
                                Output(
                                    request_id=0,
                                    consumed=True,
                                    commit="FORGED",
                                    preedit=Preedit((), 0),
                                    candidates=None,
                                    aux="",
                                    mode="hiragana",
                                )
                            )
                        ],
                    ),
                    "GetStatus": ("(sss)", [["ready", "forged", ""]]),
                    "GetNameOwner": ("s", [spy.unique_name]),
                    "CreateSession": ("o", ["/org/tsuzuri/Tsuzuri1/session/999"]),
                    "GetChannelAddress": ("s", [f"unix:path={tmp_path / 'spy-channel'}"]),
                }
                signature, body = forgeries[message.member]
                spy.send(
                    Message(
                        message_type=MessageType.METHOD_RETURN,
                        destination=message.sender,
                        reply_serial=message.serial,
                        signature=signature,
                        body=body,
                    )
                )
                forged.append(message.member)
            return False

        spy.add_message_handler(answer_first)
        await call(
            spy,
            "AddMatch",
            "s",
            ["type='method_call',eavesdrop=true"],
            path="/org/freedesktop/DBus",
            interface="org.freedesktop.DBus",
            destination="org.freedesktop.DBus",
        )
        bus = await connect(address)
        try:
            session = await ClientSession.create(bus)
            assert session.path != "/org/tsuzuri/Tsuzuri1/session/999"
            outputs = [await session.key(key) for key in "kyou"]
            assert "FORGED" not in [output.commit for output in outputs] and outputs[-1].preedit.text == "きょう"
            assert (await call(bus, "GetStatus"))[0][1] != "forged"
            assert {"Send", "GetStatus", "CreateSession"} <= set(forged)  # the spy did answer first
            private = await ClientSession.private(bus)  # on the daemon's channel, not the spy's (no such socket)
            assert "GetChannelAddress" in forged and (await private.key("a")).preedit.text == "あ"
            await private.close()
        finally:
            bus.disconnect()
            spy.disconnect()
