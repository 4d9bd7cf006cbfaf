"""Install the IBus component of Tsuzuri: one XML file that tells ibus-daemon how to start the engine.

    /usr/bin/python3 frontends/ibus/install.py                 # system-wide, /usr/share/ibus/component
    python3 frontends/ibus/install.py --dir ~/.local/share/ibus/component

ibus-daemon reads only /usr/share/ibus/component, or instead the directories in IBUS_COMPONENT_PATH
(colon-separated), so a per-user directory needs ibus-daemon started with that variable set.
Run `ibus restart` (or `ibus-daemon -rdx --cache=refresh`) afterwards. Standard library only, so any
Python can run it; the engine itself always runs under the interpreter named in the file.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

COMPONENT_NAME = "org.freedesktop.IBus.Tsuzuri"  # the bus name the engine process takes on IBus's bus
ENGINE_NAME = "tsuzuri"
COMPONENT_FILE = "tsuzuri.xml"
SYSTEM_COMPONENT_DIR = Path("/usr/share/ibus/component")
# Debian's python3-gi and python3-msgpack live here; a pyenv or venv python on PATH would lack them.
SYSTEM_PYTHON = Path("/usr/bin/python3")
ENGINE_SCRIPT = Path(__file__).resolve().with_name("engine.py")
ICON = Path(__file__).resolve().with_name("tsuzuri.svg")
PREFERENCES_SCRIPT = "preferences.py"  # the settings dialog ibus-setup opens, beside the engine


def component_xml(python: Path = SYSTEM_PYTHON, engine_script: Path = ENGINE_SCRIPT) -> str:
    component = ET.Element("component")
    for tag, text in [
        ("name", COMPONENT_NAME),
        ("description", "Tsuzuri Japanese input method"),
        ("exec", shlex.join([str(python), str(engine_script)])),
        ("version", "0.1.0"),
        ("author", "Tsuzuri"),
        ("license", "BSD-3-Clause"),
        ("textdomain", "tsuzuri"),
    ]:
        ET.SubElement(component, tag).text = text
    engine = ET.SubElement(ET.SubElement(component, "engines"), "engine")
    for tag, text in [
        ("name", ENGINE_NAME),
        ("language", "ja"),
        ("license", "BSD-3-Clause"),
        ("author", "Tsuzuri"),
        ("layout", "default"),
        ("longname", "Tsuzuri"),
        ("description", "Tsuzuri (綴り)"),
        ("symbol", "綴"),
        ("icon", str(engine_script.with_name(ICON.name))),
        ("setup", shlex.join([str(python), str(engine_script.with_name(PREFERENCES_SCRIPT))])),
        ("rank", "0"),
    ]:
        ET.SubElement(engine, tag).text = text
    ET.indent(component)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(component, encoding="unicode") + "\n"


def install(directory: Path, python: Path = SYSTEM_PYTHON) -> Path:
    """Write the component file into `directory` (created if missing) and return its path."""
    if not ENGINE_SCRIPT.is_file():
        raise FileNotFoundError(f"engine not found at {ENGINE_SCRIPT}")
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / COMPONENT_FILE
    path.write_text(component_xml(python), encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Install Tsuzuri's IBus component file")
    parser.add_argument(
        "--dir", type=Path, default=SYSTEM_COMPONENT_DIR, help=f"component directory (default: {SYSTEM_COMPONENT_DIR})"
    )
    parser.add_argument(
        "--python",
        type=Path,
        default=SYSTEM_PYTHON,
        help="interpreter with python3-gi and python3-msgpack (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    if not args.python.is_absolute():
        parser.error("--python must be an absolute path: a PATH lookup may find an interpreter without gi")
    try:
        path = install(args.dir, args.python)
    except OSError as error:
        print(f"tsuzuri-ibus-install: {error}", file=sys.stderr)
        return 1
    print(f"wrote {path}; restart IBus (ibus restart) and add Tsuzuri in its preferences")
    return 0


if __name__ == "__main__":
    sys.exit(main())
