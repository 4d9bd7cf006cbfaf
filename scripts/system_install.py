"""System install and uninstall of Tsuzuri, run by `make install` and `make uninstall` (see the Makefile).

    .venv/bin/python scripts/system_install.py install --prefix /usr/local [--destdir STAGE] [--frontends ibus fcitx5]
    python3 scripts/system_install.py uninstall --prefix /usr/local [--destdir STAGE]

What goes where (PREFIX=/usr/local; every path below DESTDIR when it is given):
  PREFIX/lib/tsuzuri/env/               a private Python environment: the daemon's packages and the runtime
                                        dependencies copied from the build environment (.venv), byte-compiled
  PREFIX/lib/tsuzuri/ibus/              the IBus engine (run by Debian's /usr/bin/python3, as IBus needs python3-gi)
  PREFIX/lib/tsuzuri/install-manifest.txt   what this install wrote outside those, for uninstall
  PREFIX/bin/tsuzuri-{daemon,client,model}
  PREFIX/lib/systemd/user/tsuzuri.service          read by every user's systemd (--user)
  PREFIX/share/dbus-1/services/org.tsuzuri.Tsuzuri1.service   D-Bus activation (XDG_DATA_DIRS)
  IBUS_COMPONENT_DIR/tsuzuri.xml        IBus's own folder (/usr/share/ibus/component), whatever PREFIX is
  the fcitx5 addon, by `cmake --install` of its build: fcitx5's own folders, whatever PREFIX is
Nothing installed refers to the checkout, so it can be deleted afterwards. The dependencies are copied, not
downloaded: an install needs no network, and installs what the tests ran with.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path, PurePosixPath

REPO = Path(__file__).resolve().parent.parent
PROJECT = "tsuzuri"
# The project's packages the daemon and its command-line tools need (training/ is not installed).
DAEMON_PACKAGES = ("daemon", "ime_protocol")
# The commands a user of an installed Tsuzuri runs, as named in pyproject.toml's [project.scripts].
COMMANDS = {
    "tsuzuri-daemon": "daemon.server:main",
    "tsuzuri-client": "daemon.tools.client:main",
    "tsuzuri-model": "daemon.tools.model:main",
}
IBUS_ENGINE_FILES = (
    "frontends/__init__.py",
    "frontends/ibus/__init__.py",
    "frontends/ibus/clients.py",
    "frontends/ibus/daemon_session.py",
    "frontends/ibus/engine.py",
    "frontends/ibus/install.py",
    "frontends/ibus/preferences.py",
    "frontends/ibus/tsuzuri.svg",
)
MANIFEST = "install-manifest.txt"
FRONTENDS = ("ibus", "fcitx5")


def normalized(name: str) -> str:
    """A distribution's name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def runtime_distributions(project: str = PROJECT) -> list[metadata.Distribution]:
    """The distributions `project` needs at run time, as installed in this environment, project excluded.

    A requirement behind an `extra` marker is a test or training dependency and is left out; one behind another
    marker (a Python version, a platform) that pip did not install here did not apply here."""
    found: dict[str, metadata.Distribution] = {}
    wanted = list(metadata.requires(project) or [])
    while wanted:
        requirement = wanted.pop()
        name_part, _, marker = requirement.partition(";")
        if "extra" in marker:
            continue
        match = re.match(r"[A-Za-z0-9._-]+", name_part.strip())
        assert match is not None, requirement
        key = normalized(match.group(0))
        if key in found:
            continue
        try:
            distribution = metadata.distribution(key)
        except metadata.PackageNotFoundError:
            if marker.strip():
                continue
            raise RuntimeError(
                f"{requirement!r} is required but not installed in {sys.prefix}: run scripts/bootstrap.sh first"
            ) from None
        found[key] = distribution
        wanted += distribution.requires or []
    return [found[key] for key in sorted(found)]


def distribution_files(distribution: metadata.Distribution) -> Iterator[tuple[Path, PurePosixPath]]:
    """(installed file, its path relative to site-packages) for what the distribution put into site-packages:
    not its scripts (they lie outside, and name the build environment's interpreter) nor byte code."""
    for file in distribution.files or []:
        relative = PurePosixPath(str(file))
        if relative.parts[0] == ".." or relative.suffix == ".pyc" or "__pycache__" in relative.parts:
            continue
        yield Path(str(distribution.locate_file(file))), relative


def project_files(packages: tuple[str, ...] = DAEMON_PACKAGES) -> Iterator[PurePosixPath]:
    """The project's package files, relative to the checkout: sources and package data, no byte code."""
    for package in packages:
        for path in sorted((REPO / package).rglob("*")):
            relative = PurePosixPath(path.relative_to(REPO).as_posix())
            if path.is_file() and "__pycache__" not in relative.parts and relative.suffix != ".pyc":
                yield relative


def command_script(python: PurePosixPath, entry_point: str) -> str:
    module, function = entry_point.split(":")
    # -I: neither PYTHONPATH nor the user's site-packages can put other code into the daemon. The guard: a child
    # process the daemon spawns (root Convert's) runs this file again as its main module, and must not start over.
    return (
        f"#!{python} -I\n# Installed by Tsuzuri's `make install`.\nimport sys\n\n"
        f'from {module} import {function}\n\nif __name__ == "__main__":\n    sys.exit({function}())\n'
    )


@dataclass(frozen=True)
class Layout:
    """Where an install puts things, as the installed system sees them (no DESTDIR)."""

    prefix: PurePosixPath
    ibus_component_dir: PurePosixPath

    @property
    def home(self) -> PurePosixPath:
        return self.prefix / "lib" / PROJECT

    @property
    def env(self) -> PurePosixPath:
        return self.home / "env"

    @property
    def site_packages(self) -> PurePosixPath:
        return self.env / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"

    @property
    def ibus_engine(self) -> PurePosixPath:
        return self.home / "ibus" / "frontends" / "ibus" / "engine.py"

    @property
    def daemon(self) -> PurePosixPath:
        return self.prefix / "bin" / "tsuzuri-daemon"

    @property
    def manifest(self) -> PurePosixPath:
        return self.home / MANIFEST


class Installer:
    """Writes under DESTDIR and records every file and folder it made outside Layout.home."""

    def __init__(self, layout: Layout, destdir: Path | None) -> None:
        self.layout = layout
        self.destdir = destdir
        self.recorded: list[str] = []

    def staged(self, path: PurePosixPath) -> Path:
        return Path(f"{self.destdir}{path}") if self.destdir else Path(path)

    def make_dirs(self, directory: PurePosixPath) -> None:
        missing = []
        while not self.staged(directory).exists() and directory != directory.parent:
            missing.append(directory)
            directory = directory.parent
        self.staged(directory).mkdir(parents=True, exist_ok=True)  # DESTDIR itself
        for made in reversed(missing):
            self.staged(made).mkdir()
            if not made.is_relative_to(self.layout.home):
                self.recorded.append(f"dir {made}")

    def write(self, path: PurePosixPath, text: str, mode: int = 0o644) -> None:
        self.make_dirs(path.parent)
        self.staged(path).write_text(text, encoding="utf-8")
        os.chmod(self.staged(path), mode)
        self.record_file(path)

    def copy(self, source: Path, path: PurePosixPath) -> None:
        self.make_dirs(path.parent)
        shutil.copy2(source, self.staged(path))
        self.record_file(path)

    def record_file(self, path: PurePosixPath) -> None:
        if not path.is_relative_to(self.layout.home):
            self.recorded.append(f"file {path}")

    def write_manifest(self) -> None:
        self.write(self.layout.manifest, "".join(f"{line}\n" for line in self.recorded))


def install_environment(installer: Installer) -> None:
    """The private environment: a venv's layout made by hand (python -m venv would write the staging folder
    into its activate scripts), the dependencies, the project's packages, byte code."""
    layout = installer.layout
    base_python = Path(getattr(sys, "_base_executable", sys.executable)).resolve()
    installer.make_dirs(layout.site_packages)
    installer.make_dirs(layout.env / "bin")
    for name in ("python", "python3"):
        os.symlink(base_python, installer.staged(layout.env / "bin" / name))
    installer.write(
        layout.env / "pyvenv.cfg",
        f"home = {base_python.parent}\ninclude-system-site-packages = false\nversion = {platform.python_version()}\n",
    )
    for distribution in runtime_distributions():
        for source, relative in distribution_files(distribution):
            installer.copy(source, layout.site_packages / relative)
    for relative in project_files():
        installer.copy(REPO / relative, layout.site_packages / relative)
    strip = ["-s", str(installer.destdir), "-p", "/"] if installer.destdir else []
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "-j0", *strip, str(installer.staged(layout.site_packages))],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    for command, entry_point in COMMANDS.items():
        installer.write(
            layout.prefix / "bin" / command, command_script(layout.env / "bin" / "python3", entry_point), mode=0o755
        )


def install_service_files(installer: Installer) -> None:
    from daemon.tools.install import SERVICE_FILES, UNIT_NAME

    folders = {UNIT_NAME: installer.layout.prefix / "lib" / "systemd" / "user"}
    default_folder = installer.layout.prefix / "share" / "dbus-1" / "services"
    for service_file in SERVICE_FILES:
        installer.write(
            folders.get(service_file.name, default_folder) / service_file.name,
            service_file.render(Path(installer.layout.daemon)),
        )


def install_ibus(installer: Installer) -> None:
    from frontends.ibus.install import COMPONENT_FILE, component_xml

    layout = installer.layout
    engine_root = layout.ibus_engine.parents[2]
    for relative in [*IBUS_ENGINE_FILES, *(str(path) for path in project_files(("ime_protocol",)))]:
        installer.copy(REPO / relative, engine_root / relative)
    installer.write(layout.ibus_component_dir / COMPONENT_FILE, component_xml(engine_script=Path(layout.ibus_engine)))


def install_fcitx5(installer: Installer, build: Path) -> None:
    """`cmake --install` of the addon's build (its folders were chosen when it was configured)."""
    if not (build / "CMakeCache.txt").is_file():
        raise RuntimeError(f"no fcitx5 addon build in {build}: run `make` first")
    environment = {**os.environ, "DESTDIR": str(installer.destdir or "")}
    subprocess.run(["cmake", "--install", str(build)], check=True, env=environment, stdout=subprocess.DEVNULL)
    for line in (build / "install_manifest.txt").read_text(encoding="utf-8").splitlines():
        installer.record_file(PurePosixPath(line.removeprefix(str(installer.destdir or ""))))


def install(layout: Layout, destdir: Path | None, frontends: list[str], fcitx5_build: Path) -> None:
    """Install (over an earlier install, which is removed first). A failed install still leaves its manifest,
    so that `make uninstall` takes away what it wrote."""
    installer = Installer(layout, destdir)
    if installer.staged(layout.manifest).is_file():
        uninstall(layout, destdir)
    sys.path.insert(0, str(REPO))
    try:
        install_environment(installer)
        install_service_files(installer)
        if "ibus" in frontends:
            install_ibus(installer)
        if "fcitx5" in frontends:
            install_fcitx5(installer, fcitx5_build)
    finally:
        installer.write_manifest()


def uninstall(layout: Layout, destdir: Path | None) -> list[Path]:
    """Remove what the manifest lists, the folders an install made once they are empty, and Layout.home;
    returns what was removed. Files the manifest does not list are left alone."""
    installer = Installer(layout, destdir)
    manifest = installer.staged(layout.manifest)
    if not manifest.is_file():
        raise RuntimeError(f"nothing installed: {manifest} does not exist")
    removed = []
    folders = []
    for line in manifest.read_text(encoding="utf-8").splitlines():
        kind, _, path = line.partition(" ")
        staged = installer.staged(PurePosixPath(path))
        if kind == "dir":
            folders.append(staged)
        elif staged.is_file() or staged.is_symlink():
            staged.unlink()
            removed.append(staged)
    shutil.rmtree(installer.staged(layout.home))
    removed.append(installer.staged(layout.home))
    for folder in sorted(folders, key=lambda path: len(path.parts), reverse=True):
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
            removed.append(folder)
    return removed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Install Tsuzuri for every user of this system, or remove it")
    parser.add_argument("action", choices=("install", "uninstall"))
    parser.add_argument("--prefix", type=PurePosixPath, default=PurePosixPath("/usr/local"))
    parser.add_argument("--destdir", default="", help="stage the files below this folder (packaging)")
    parser.add_argument("--frontends", nargs="*", choices=FRONTENDS, default=list(FRONTENDS))
    parser.add_argument("--ibus-component-dir", type=PurePosixPath, default=PurePosixPath("/usr/share/ibus/component"))
    parser.add_argument("--fcitx5-build", type=Path, default=REPO / "build" / "fcitx5-system")
    args = parser.parse_args(argv)
    if not args.prefix.is_absolute() or not args.ibus_component_dir.is_absolute():
        parser.error("--prefix and --ibus-component-dir must be absolute paths")
    layout = Layout(args.prefix, args.ibus_component_dir)
    destdir = Path(args.destdir).resolve() if args.destdir else None
    try:
        if args.action == "install":
            install(layout, destdir, args.frontends, args.fcitx5_build)
            print(f"installed Tsuzuri under {args.prefix}" + (f" (staged in {destdir})" if destdir else ""))
        else:
            for path in uninstall(layout, destdir):
                print(f"removed {path}")
    except (OSError, RuntimeError, subprocess.CalledProcessError) as error:
        print(f"system_install: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
