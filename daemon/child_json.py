"""A table built by a module run as a child process, which prints it as JSON.

pykakasi keeps its kanji table (96 MB of Python objects, 1.4 M of them) for the life of the process that loads
it; the tables the daemon builds from it (the emoji index, the kanji readings) are under 1 MB. So those are built
by `python -m <module>` in a child, and the daemon keeps only what it prints.
"""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

BUILD_SECONDS = 120


class ChildBuildFailed(RuntimeError):
    pass


def json_from_a_child(module: str) -> Any:
    """What `python -m module` prints as JSON; raises ChildBuildFailed, with its error output, if it fails."""
    package_root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))}
    try:
        built = subprocess.run(
            [sys.executable, "-m", module], capture_output=True, check=True, env=env, timeout=BUILD_SECONDS
        )
        return json.loads(built.stdout)
    except (OSError, subprocess.SubprocessError, ValueError) as error:
        stderr = getattr(error, "stderr", b"") or b""
        raise ChildBuildFailed(f"{error} {stderr.decode(errors='replace')[-500:]}") from error
