"""The system install (`make install`, `make uninstall`: scripts/system_install.py) as a user's desktop meets it:
the session bus starts the installed daemon through the installed activation file, IBus runs the installed engine
from the installed component, fcitx5 loads the installed addon, and each converts what is typed; nothing installed
names the checkout; uninstall takes away everything the install wrote and nothing else. The frameworks' folders
are under the test's folder (the Makefile's IBUS_COMPONENT_DIR, FCITX5_ADDON_DIR, FCITX5_DATA_DIR), and so is the
home of the user the daemon runs for. A staged install (DESTDIR, as a packager runs it) is checked too.
"""

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from ime_protocol import INPUT_MODES
from tests.dbus_fixtures import REPO, activating_bus
from tests.fcitx5_build import missing_build_requirement
from tests.integration.test_frontend_fcitx5 import Application, running_fcitx
from tests.integration.test_frontend_fcitx5 import missing_requirement as missing_fcitx5
from tests.integration.test_frontend_ibus import commits, driver, running_ibus
from tests.integration.test_frontend_ibus import missing_requirement as missing_ibus

pytestmark = [pytest.mark.dbus, pytest.mark.dictionary, pytest.mark.build, pytest.mark.slow]


@dataclass(frozen=True)
class System:
    root: Path
    prefix: Path
    ibus_components: Path
    fcitx_root: Path  # running_fcitx's root: the addon is installed into its .local, where that looks
    frontends: tuple[str, ...]


def make(*args: str) -> subprocess.CompletedProcess:
    done = subprocess.run(["make", "-C", str(REPO), *args], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def command_lines() -> list[str]:
    """The command line of every process running now, its arguments joined by spaces."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            found.append(cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:
            pass  # gone meanwhile
    return found


def files_under(*folders: Path) -> list[Path]:
    return sorted(path for folder in folders for path in folder.rglob("*") if path.is_file() or path.is_symlink())


@pytest.fixture(scope="module")
def system(tmp_path_factory):
    if shutil.which("make") is None:
        pytest.skip("make is not installed (Debian package make)")
    root = tmp_path_factory.mktemp("system")
    fcitx_root = root / "fcitx"
    ibus_components = root / "ibus-components"
    ibus_components.mkdir()  # the frameworks' folders are there before Tsuzuri is installed
    frontends = tuple(
        name for name, missing in (("ibus", None), ("fcitx5", missing_build_requirement())) if missing is None
    )
    with pytest.MonkeyPatch.context() as environment:
        # the user the session bus (and so the activated daemon) runs for
        for variable, folder in (
            ("HOME", "home"),
            ("XDG_DATA_HOME", "home/data"),
            ("XDG_CONFIG_HOME", "home/config"),
            ("XDG_CACHE_HOME", "home/cache"),
        ):
            environment.setenv(variable, str(root / folder))
        make(
            "install",
            f"PREFIX={root / 'usr'}",
            f"FRONTENDS={' '.join(frontends)}",
            f"IBUS_COMPONENT_DIR={ibus_components}",
            f"FCITX5_BUILD={root / 'fcitx5-build'}",
            f"FCITX5_ADDON_DIR={fcitx_root / '.local/lib/fcitx5'}",
            f"FCITX5_DATA_DIR={fcitx_root / '.local/share/fcitx5'}",
        )
        yield System(root, root / "usr", ibus_components, fcitx_root, frontends)


def installed_services(system: System) -> Path:
    return system.prefix / "share" / "dbus-1" / "services"


def test_the_install_puts_each_file_where_its_reader_looks(system):
    prefix = system.prefix
    assert f"ExecStart={prefix}/bin/tsuzuri-daemon" in (prefix / "lib/systemd/user/tsuzuri.service").read_text()
    activation = installed_services(system) / "org.tsuzuri.Tsuzuri1.service"
    assert f"Exec={prefix}/bin/tsuzuri-daemon" in activation.read_text()
    assert f"{prefix}/lib/tsuzuri/ibus/frontends/ibus/engine.py" in (system.ibus_components / "tsuzuri.xml").read_text()
    for command in ("tsuzuri-daemon", "tsuzuri-client", "tsuzuri-model"):
        assert os.access(prefix / "bin" / command, os.X_OK)
    if "fcitx5" in system.frontends:
        assert (system.fcitx_root / ".local/lib/fcitx5/libtsuzuri.so").is_file()
        assert (system.fcitx_root / ".local/share/fcitx5/inputmethod/tsuzuri.conf").is_file()
        icons = system.fcitx_root / ".local/share/icons/hicolor/scalable/apps"
        assert {f"fcitx-tsuzuri-{mode}.svg" for mode in INPUT_MODES} <= {icon.name for icon in icons.iterdir()}
    # the checkout can go: no installed file names it (byte code records where its source was installed)
    named = [
        path
        for path in files_under(system.root / "usr", system.ibus_components, system.fcitx_root)
        if not path.is_symlink() and str(REPO).encode() in path.read_bytes()
    ]
    assert named == []


def test_the_session_bus_starts_the_installed_daemon_which_converts(system):
    with activating_bus(system.root, installed_services(system)) as address:
        converted = subprocess.run(
            [str(system.prefix / "bin/tsuzuri-client"), "--bus", address, "convert", "きょう", "--n", "1"],
            cwd="/",
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert converted.returncode == 0, converted.stderr
        assert converted.stdout.split()[1] == "今日"
        assert any(f"{system.prefix}/bin/tsuzuri-daemon" in command for command in command_lines())


def test_ibus_types_through_the_installed_engine_and_daemon(system):
    reason = missing_ibus()
    if reason is not None:
        pytest.skip(reason)
    with (
        activating_bus(system.root, installed_services(system)) as address,
        running_ibus(address, system.root, system.ibus_components) as env,
        driver(env) as ime,
    ):
        ime.type(*"kyou")
        assert commits(ime.type("space", "Return")["events"]) == ["今日"]
        engine = f"{system.prefix}/lib/tsuzuri/ibus/frontends/ibus/engine.py"
        assert any(engine in command for command in command_lines())


async def test_fcitx5_types_through_the_installed_addon_and_daemon(system):
    if "fcitx5" not in system.frontends or missing_fcitx5() is not None:
        pytest.skip(missing_fcitx5() or "the fcitx5 addon could not be built")
    (system.fcitx_root / "services").symlink_to(installed_services(system))
    with running_fcitx(None, system.fcitx_root) as address:
        field = await Application.open(address)
        try:
            await field.type(*"kyou", "space")
            assert await field.until(lambda: field.last("preedit")[1] == "今日")
            await field.type("Return")
            assert field.commits() == ["今日"]
        finally:
            await field.close()


def test_uninstall_removes_what_the_install_wrote_and_nothing_else(system):
    kept = system.ibus_components / "another-engine.xml"  # not Tsuzuri's: stays
    kept.write_text("<component/>")
    make("uninstall", f"PREFIX={system.prefix}")
    assert not system.prefix.exists()  # every folder under it was made by the install
    assert files_under(system.ibus_components) == [kept]
    assert not (system.fcitx_root / ".local/lib/fcitx5/libtsuzuri.so").exists()
    assert not list((system.fcitx_root / ".local/share/fcitx5").rglob("tsuzuri.conf"))


def test_a_staged_install_is_one_a_package_can_hold(tmp_path):
    """DESTDIR, as a packager runs it: every file below the stage, each naming the paths of the installed system."""
    stage = tmp_path / "stage"
    frontends = "ibus fcitx5" if missing_build_requirement() is None else "ibus"
    make(
        "install",
        f"DESTDIR={stage}",
        "PREFIX=/usr",
        f"FRONTENDS={frontends}",
        f"FCITX5_BUILD={tmp_path / 'fcitx5-build'}",
    )
    assert "ExecStart=/usr/bin/tsuzuri-daemon" in (stage / "usr/lib/systemd/user/tsuzuri.service").read_text()
    component = stage / "usr/share/ibus/component/tsuzuri.xml"
    assert "/usr/lib/tsuzuri/ibus/frontends/ibus/engine.py" in component.read_text()
    assert (stage / "usr/bin/tsuzuri-client").read_text().startswith("#!/usr/lib/tsuzuri/env/bin/python3 -I\n")
    if "fcitx5" in frontends:
        assert list(stage.glob("usr/lib/*/fcitx5/libtsuzuri.so"))
    named = [path for path in files_under(stage) if not path.is_symlink() and str(stage).encode() in path.read_bytes()]
    assert named == []
    make("uninstall", f"DESTDIR={stage}", "PREFIX=/usr")
    assert not stage.exists() or files_under(stage) == []
