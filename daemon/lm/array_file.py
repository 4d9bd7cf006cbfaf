"""The file format of the ranking's models: a magic, a JSON header, then numpy arrays at aligned offsets.

The daemon maps the file and reads the arrays in place (`np.frombuffer` over an `mmap`): loading costs a few
milliseconds and the pages are shared with every process that maps the same file.
"""

from __future__ import annotations

import json
import mmap
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np

_ALIGN = 64


def _aligned(size: int) -> int:
    return -(-size // _ALIGN) * _ALIGN


def write_arrays(path: Path, magic: bytes, header: Mapping, arrays: Mapping[str, np.ndarray]) -> None:
    """Write `header` (JSON; it gains the arrays' layout under "arrays") and `arrays` to `path`, atomically."""
    layout: dict[str, dict] = {}
    offset = 0
    for name, array in arrays.items():
        layout[name] = {"dtype": array.dtype.str, "shape": list(array.shape), "offset": offset}
        offset += _aligned(array.nbytes)
    encoded = json.dumps({**header, "arrays": layout}, ensure_ascii=False).encode("utf-8")
    start = _aligned(len(magic) + 8 + len(encoded))
    tmp = path.with_name(path.name + ".partial")
    with tmp.open("wb") as out:
        out.write(magic + len(encoded).to_bytes(8, "little") + encoded)
        for name, array in arrays.items():
            out.seek(start + layout[name]["offset"])
            out.write(np.ascontiguousarray(array).tobytes())
    tmp.replace(path)


def read_arrays(path: Path, magic: bytes, what: str) -> tuple[dict, Callable[[str], np.ndarray]]:
    """The header of the file at `path` and a function that maps one of its arrays by name. A file without
    `magic` raises ValueError naming `what` it should have been."""
    with Path(path).open("rb") as file:
        mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
    if mapped[: len(magic)] != magic:
        raise ValueError(f"{path} is not {what}")
    size = int.from_bytes(mapped[len(magic) : len(magic) + 8], "little")
    header = json.loads(mapped[len(magic) + 8 : len(magic) + 8 + size].decode("utf-8"))
    start = _aligned(len(magic) + 8 + size)

    def array(name: str) -> np.ndarray:
        spec = header["arrays"][name]
        count = int(np.prod(spec["shape"]))
        return np.frombuffer(mapped, dtype=np.dtype(spec["dtype"]), count=count, offset=start + spec["offset"]).reshape(
            spec["shape"]
        )

    return header, array
