"""The D-Bus service end to end: a private dbus-daemon, the real tsuzuri-daemon, dbus-fast clients."""

import asyncio
import json
import os
import stat
import subprocess
import sys
from contextlib import asynccontextmanager

import pytest

from daemon.tools.client import ClientError, ClientSession, call, connect, type_keys, wait_for_status
from ime_protocol import Discard, FocusIn, InputPurpose, Output, decode
from ime_protocol.dbus_names import ERROR_PROTOCOL, ERROR_UNKNOWN_SESSION, SESSION_INTERFACE
from tests.dbus_fixtures import REPO, client, private_bus, running_daemon


@pytest.fixture(scope="module")
def bus_address():
    with private_bus() as address:
        yield address


@pytest.fixture(scope="module")
def dictionary_daemon(bus_address, tmp_path_factory):
    """A daemon whose model is missing: it must serve dictionary conversions."""
    home = tmp_path_factory.mktemp("home")
    with running_daemon(bus_address, home, model=str(home / "missing.gguf")) as proc:
        yield proc, home


def test_done_when_convert_returns_five_distinct_candidates(bus_address, dictionary_daemon):
    done = client(bus_address, "convert", "きょうはいいてんきですね", "--n", "5", "--json")
    assert done.returncode == 0, done.stderr
    texts = [c["text"] for c in json.loads(done.stdout)]
    assert len(texts) == 5 == len(set(texts))
    assert "今日はいい天気ですね" in texts


def test_done_when_type_shows_the_conversion_in_the_preedit(bus_address, dictionary_daemon):
    done = client(bus_address, "type", "kyouhaiitenkidesune", "--key", "space", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["preedit"] == "今日はいい天気ですね"


def test_missing_model_is_reported_and_dictionary_service_goes_on(bus_address, dictionary_daemon):
    done = client(bus_address, "status", "--json")
    status = json.loads(done.stdout)
    assert status["state"] == "failed" and "not found" in status["reason"]


async def test_two_sessions_are_isolated(bus_address, dictionary_daemon):
    bus = await connect(bus_address)
    a, b = await ClientSession.create(bus), await ClientSession.create(bus)
    for ch in "kanji":
        await a.key(ch)
    out_b = await b.key("t")
    assert out_b.preedit.text == "t"
    out_a = await a.key("space")
    assert out_a.preedit.text and out_a.preedit.text != "かんじ"
    assert (await b.key("a")).preedit.text == "た"
    bus.disconnect()


async def test_client_disconnect_reaps_its_sessions(bus_address, dictionary_daemon):
    owner = await connect(bus_address)
    session = await ClientSession.create(owner)
    await session.key("a")
    owner.disconnect()
    other = await connect(bus_address)
    await until_reaped(other, session.path)
    other.disconnect()


async def until_reaped(bus, path: str) -> None:
    """Waits until the session at `path` is gone (its client went away); fails after 2.5 s."""
    for _ in range(50):
        try:
            await call(bus, "Send", "ay", [b"x"], path, SESSION_INTERFACE)
        except ClientError as exc:
            if ERROR_UNKNOWN_SESSION in str(exc):
                return
        await asyncio.sleep(0.05)
    pytest.fail("the session outlived its client")


def test_a_second_daemon_leaves_and_takes_its_channel_with_it(bus_address, dictionary_daemon, tmp_path):
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    second = subprocess.run(
        [sys.executable, "-m", "daemon.server", "--bus", bus_address, "--model", str(tmp_path / "none.gguf")],
        cwd=REPO,
        env={**os.environ, "XDG_RUNTIME_DIR": str(runtime), "XDG_CONFIG_HOME": str(tmp_path / "config")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert second.returncode == 1 and "already owned" in second.stderr
    assert list((runtime / "tsuzuri").iterdir()) == []


async def test_malformed_messages_get_protocol_errors_and_the_daemon_lives(bus_address, dictionary_daemon):
    bus = await connect(bus_address)
    session = await ClientSession.create(bus)
    bad = [b"", b"\xc1", b"\x81\xa1v\x02", bytes(300 * 1024), b"\x92\x01\x02"]
    for data in bad:
        with pytest.raises(ClientError, match=ERROR_PROTOCOL):
            await call(bus, "Send", "ay", [data], session.path, SESSION_INTERFACE)
    with pytest.raises(ClientError, match="InvalidArgs"):
        await call(bus, "Send", "s", ["text"], session.path, SESSION_INTERFACE)
    with pytest.raises(ClientError, match="InvalidArgs"):
        await call(bus, "Convert", "ssu", ["", "", 5])
    with pytest.raises(ClientError, match="InvalidArgs"):
        await call(bus, "Convert", "ssu", ["か" * 5000, "", 5])
    with pytest.raises(ClientError, match=ERROR_UNKNOWN_SESSION):
        await call(bus, "Send", "ay", [b""], "/org/tsuzuri/Tsuzuri1/session/999999", SESSION_INTERFACE)
    with pytest.raises(ClientError, match="UnknownMethod"):
        await call(bus, "Explode")
    assert (await session.key("a")).preedit.text == "あ"  # still serving, state intact
    bus.disconnect()
    assert dictionary_daemon[0].poll() is None


async def test_a_session_belongs_to_its_creator(bus_address, dictionary_daemon):
    owner, stranger = await connect(bus_address), await connect(bus_address)
    session = await ClientSession.create(owner)
    with pytest.raises(ClientError, match="AccessDenied"):
        await ClientSession(stranger, session.path).key("a")
    owner.disconnect()
    stranger.disconnect()


async def test_twenty_clients_typing_at_once(bus_address, dictionary_daemon):
    async def one_client(i: int) -> str:
        bus = await connect(bus_address)
        try:
            result = await type_keys(bus, "kyouhaiitenkidesune", ["space", "Return"])
            return result["committed"]
        finally:
            bus.disconnect()

    committed = await asyncio.gather(*(one_client(i) for i in range(20)))
    assert committed == ["今日はいい天気ですね"] * 20


async def test_password_field_commit_is_not_learned(bus_address, dictionary_daemon):
    bus = await connect(bus_address)
    session = await ClientSession.create(bus)
    await session.send(FocusIn(InputPurpose.PASSWORD))
    for name in [*"himitsu", "space", "Return"]:
        await session.key(name)
    await session.close()
    bus.disconnect()
    _, home = dictionary_daemon
    learned = home / "data" / "tsuzuri" / "learning.tsv"
    assert not learned.exists() or "ひみつ" not in learned.read_text(encoding="utf-8")


async def test_model_loads_in_the_background_and_joins_conversion(model_path, tmp_path):
    config = tmp_path / "config" / "tsuzuri" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("[candidates]\nmodel_candidates = 3\n", encoding="utf-8")  # its own conversions too
    with private_bus() as address, running_daemon(address, tmp_path, model=str(model_path)):
        bus = await connect(address)
        state, model, _ = await wait_for_status(bus, 30)
        assert (state, model) == ("ready", str(model_path))
        (found,) = await call(bus, "Convert", "ssu", ["きょうはいいてんきですね", "", 8])
        sources = [source for _, source, _ in found]
        assert "model" in sources and "dictionary" in sources
        bus.disconnect()


async def test_status_is_also_a_property(bus_address, dictionary_daemon):
    bus = await connect(bus_address)
    (value,) = await call(
        bus, "Get", "ss", ["org.tsuzuri.Tsuzuri1", "Status"], interface="org.freedesktop.DBus.Properties"
    )
    assert value.signature == "(sss)" and value.value[0] == "failed"
    with pytest.raises(ClientError, match="InvalidArgs"):
        await call(bus, "Get", "ss", ["org.tsuzuri.Tsuzuri1", "Nope"], interface="org.freedesktop.DBus.Properties")
    bus.disconnect()


@asynccontextmanager
async def daemon_config(bus_address, dictionary_daemon):
    """The daemon's configuration file, its text and a connection; the file is put back and re-read after."""
    _, home = dictionary_daemon
    config = home / "config" / "tsuzuri" / "config.toml"
    text = config.read_text(encoding="utf-8")
    bus = await connect(bus_address)
    try:
        yield config, text, bus
    finally:
        config.write_text(text, encoding="utf-8")
        await call(bus, "ReloadConfig")
        bus.disconnect()


async def test_reload_config_reports_bad_values_and_keeps_old_ones(bus_address, dictionary_daemon):
    async with daemon_config(bus_address, dictionary_daemon) as (config, text, bus):
        config.write_text(text.replace("page_size = 9", 'page_size = "many"'), encoding="utf-8")
        (problems,) = await call(bus, "ReloadConfig")
        assert any("page_size" in p for p in problems)
        session = await ClientSession.create(bus)
        for name in [*"kanji", "space", "space"]:
            out = await session.key(name)
        assert out.candidates.page_size == 9  # the old setting stayed


async def test_a_settings_page_reads_and_writes_the_configuration_the_user_sees(bus_address, dictionary_daemon):
    async with daemon_config(bus_address, dictionary_daemon) as (config, text, bus):
        config.write_text("# the user's own note\n" + text, encoding="utf-8")
        (settings,) = await call(bus, "GetSettings")
        assert settings["conversion.live"] == "false" and settings["input.punctuation"] == '"、。"'
        assert await call(bus, "SetSettings", "a{ss}", [{"conversion.live": "true"}]) == [[]]
        assert "live = true" in config.read_text() and config.read_text().startswith("# the user's own note\n")
        assert (await call(bus, "GetSettings"))[0]["conversion.live"] == "true"
        session = await ClientSession.create(bus)
        for name in "kyou":
            out = await session.key(name)
        assert out.preedit.text == "今日"  # live conversion, at once

        before = config.read_bytes()
        with pytest.raises(ClientError, match="InvalidArgs.*page_size = 99: expected an integer from 1 to 9"):
            await call(bus, "SetSettings", "a{ss}", [{"conversion.live": "false", "candidates.page_size": "99"}])
        config.write_text("live = = true\n", encoding="utf-8")
        with pytest.raises(ClientError, match="InvalidArgs.*not valid TOML"):
            await call(bus, "SetSettings", "a{ss}", [{"conversion.live": "false"}])
        assert config.read_text() == "live = = true\n" and before.count(b"live = true") == 1


async def test_the_neural_model_is_switched_off_and_on_from_the_settings(tmp_path):
    with private_bus() as address, running_daemon(address, tmp_path, model=None):
        bus = await connect(address)
        try:
            assert (await wait_for_status(bus, 60))[:2] == ("ready", "default")
            assert await call(bus, "SetSettings", "a{ss}", [{"conversion.neural_model": "false"}]) == [[]]
            state, _, reason = (await call(bus, "GetStatus"))[0]
            assert state == "none" and "switched off" in reason
            (found,) = await call(bus, "Convert", "ssu", ["きょうはいいてんき", "", 5])
            assert found[0][0] == "今日はいい天気" and "model" not in {source for _, source, _ in found}
            assert await call(bus, "SetSettings", "a{ss}", [{"conversion.neural_model": "true"}]) == [[]]
            assert (await wait_for_status(bus, 60))[:2] == ("ready", "default")
        finally:
            bus.disconnect()


@pytest.mark.parametrize("connection", ["bus", "channel"])
async def test_keys_are_answered_with_their_live_conversion_and_improvements_arrive_as_signals(connection, tmp_path):
    config = tmp_path / "config" / "tsuzuri" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("[conversion]\nlive = true\n", encoding="utf-8")
    with private_bus() as address, running_daemon(address, tmp_path, model=str(tmp_path / "none.gguf")):
        bus = await connect(address)
        updates: list[Output] = []
        updated = asyncio.Event()

        def on_message(msg):
            if msg.member == "OutputChanged":
                updates.append(decode(bytes(msg.body[0]), Output))
                updated.set()

        # Another program on the bus asks for every session signal: it must see none of the typing.
        snoop = await connect(address)
        snooped = []
        snoop.add_message_handler(lambda msg: snooped.append(msg) if msg.member == "OutputChanged" else None)
        for listener in (bus, snoop):
            await call(
                listener,
                "AddMatch",
                "s",
                ["type='signal',interface='org.tsuzuri.Tsuzuri1.Session'"],
                path="/org/freedesktop/DBus",
                interface="org.freedesktop.DBus",
                destination="org.freedesktop.DBus",
            )
        session = await (ClientSession.create(bus) if connection == "bus" else ClientSession.private(bus))
        session.bus.add_message_handler(on_message)
        assert (await session.key("k")).preedit.text == "k"  # no kana yet: nothing to convert
        # One key at a time: each answer carries the conversion of the composition so far.
        for key, shown in [("y", "ky"), ("o", "きょ"), ("u", "今日")]:
            assert (await session.key(key)).preedit.text == shown
        # Typed faster than the daemon answers: all keys are in flight at once, in order. A key with another
        # waiting behind it is answered in kana (the next answer comes at once); the last one is converted.
        outputs = await asyncio.gather(*(session.key(ch) for ch in "haiitenki"))
        assert outputs[-1].preedit.text == "今日はいい天気"
        await session.send(Discard())
        # Once the keys stop, the conversion in advance (Space's, with the lattice search) is made; where its
        # first candidate differs from the live text, a signal shows it.
        for ch in "busouhoukiwokekkousiyoutosit":
            await session.key(ch)
        assert (await session.key("a")).preedit.text == "武装放棄を決行しようとした"
        while "武装蜂起を決行しようとした" not in [update.preedit.text for update in updates]:
            updated.clear()
            await asyncio.wait_for(updated.wait(), 10)
        assert updates[-1].preedit.text == "武装蜂起を決行しようとした"
        await call(snoop, "GetStatus")  # the daemon sends in order: any signal for the snoop is in by now
        assert snooped == []
        assert (await session.key("space")).preedit.text == "武装蜂起を決行しようとした"
        await session.close()
        bus.disconnect()
        snoop.disconnect()


async def test_the_channel_is_the_users_alone_and_goes_with_the_daemon(tmp_path):
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    env = {"XDG_RUNTIME_DIR": str(runtime)}
    with private_bus() as address, running_daemon(address, tmp_path, str(tmp_path / "none.gguf"), env) as daemon:
        bus = await connect(address)
        (channel,) = await call(bus, "GetChannelAddress")
        socket_path = runtime / "tsuzuri" / f"channel-{daemon.pid}"
        assert channel == f"unix:path={socket_path}" and stat.S_IMODE(socket_path.parent.stat().st_mode) == 0o700
        session = await ClientSession.private(bus)
        assert (await session.key("a")).preedit.text == "あ"
        with pytest.raises(ClientError, match="AccessDenied"):  # the session is the channel connection's
            await ClientSession(bus, session.path).key("a")
        session.bus.disconnect()
        await until_reaped(bus, session.path)
        bus.disconnect()
        daemon.terminate()
        assert daemon.wait(30) == 0
        assert not socket_path.exists()


async def test_stateless_convert_reveals_nothing_the_user_learned(bus_address, dictionary_daemon):
    bus = await connect(bus_address)
    try:
        (before,) = await call(bus, "Convert", "ssu", ["かんじ", "", 5])
        session = await ClientSession.create(bus)
        for name in [*"kanji", "space", "space", "space", "Return"]:  # choose the third candidate
            out = await session.key(name)
        assert out.commit == before[2][0]
        (after,) = await call(bus, "Convert", "ssu", ["かんじ", "", 5])
        assert after == before and "learning" not in [source for _, source, _ in after]
    finally:
        bus.disconnect()


async def test_the_daemon_describes_what_it_dispatches(bus_address, dictionary_daemon):
    from dbus_fast.introspection import Node

    from daemon.server import ROOT

    bus = await connect(bus_address)
    (xml,) = await call(bus, "Introspect", interface="org.freedesktop.DBus.Introspectable")
    described = {i.name: i for i in Node.parse(xml).interfaces}[ROOT.name]
    for method in described.methods:
        with pytest.raises(ClientError, match=rf"InvalidArgs: expected arguments \({method.in_signature}\)"):
            await call(bus, method.name, "x", [7])  # no method of the interface takes one int64
    session = await ClientSession.create(bus)
    (xml,) = await call(bus, "Introspect", path=session.path, interface="org.freedesktop.DBus.Introspectable")
    names = {interface.name for interface in Node.parse(xml).interfaces}
    assert SESSION_INTERFACE in names and ROOT.name not in names  # its own interface, not the root's
    bus.disconnect()


async def test_reload_config_loads_another_model_unless_one_was_named_on_the_command_line(
    bus_address, dictionary_daemon, tmp_path
):
    _, home = dictionary_daemon
    config = home / "config" / "tsuzuri" / "config.toml"
    text = config.read_text(encoding="utf-8")
    assert 'model = "default"' in text
    bus = await connect(bus_address)
    try:  # this daemon was started with --model: the configuration's model does not replace it
        config.write_text(text.replace('model = "default"', 'model = "other"'), encoding="utf-8")
        (problems,) = await call(bus, "ReloadConfig")
        assert any("model: other is not loaded" in p for p in problems)
    finally:
        config.write_text(text, encoding="utf-8")
        await call(bus, "ReloadConfig")
        bus.disconnect()
    missing = tmp_path / "missing.gguf"
    with private_bus() as address, running_daemon(address, tmp_path, model=None):
        own = tmp_path / "config" / "tsuzuri" / "config.toml"
        bus = await connect(address)
        try:
            own.write_text(
                own.read_text(encoding="utf-8").replace('model = "default"', f'model = "{missing}"'), encoding="utf-8"
            )
            assert await call(bus, "ReloadConfig") == [[]]
            state, model, _reason = await wait_for_status(bus, 30)
            assert (state, model) == ("failed", str(missing))  # it tried the new one; the dictionary serves
            assert (await call(bus, "Convert", "ssu", ["かな", "", 1]))[0]
        finally:
            bus.disconnect()
