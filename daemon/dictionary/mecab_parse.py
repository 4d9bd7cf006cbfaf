"""MeCab's N-best search over a lattice without holding the interpreter.

The binding (mecab-python3, SWIG) holds the GIL through every call into MeCab: a parse of 1,000 kana takes about
25 ms and walking its N-best paths (`Lattice.next`, `Lattice.toString`) as long again, during which no other
thread of the daemon runs — every session's keys waited for any caller's long conversion. libmecab's C API takes
the same objects (its `mecab_t` and `mecab_lattice_t` are the C++ Tagger and Lattice), and a call through ctypes
releases the GIL for its length. The C entry points are looked up through the binding's own compiled module,
so they are those of the libmecab it links, whatever other libmecab the process maps (fugashi bundles one);
without them, the binding's own calls. tests/integration/test_dictionary.py checks that both give the same N-best
paths.
"""

from __future__ import annotations

import ctypes
import logging
from pathlib import Path

import MeCab

log = logging.getLogger(__name__)


def binding_module() -> Path | None:
    """The binding's compiled module (SWIG's _MeCab), whose symbol scope holds the libmecab it links."""
    module = getattr(MeCab, "_MeCab", None)
    path = getattr(module, "__file__", None)
    return Path(path) if path else None


class NbestCalls:
    """The binding's calls for one tagger's N-best search: each holds the GIL throughout."""

    def __init__(self, tagger: MeCab.Tagger):
        self.tagger = tagger

    def parse(self, lattice: MeCab.Lattice) -> bool:
        return bool(self.tagger.parse(lattice))

    def next(self, lattice: MeCab.Lattice) -> bool:
        """The lattice moves on to its next best path; False when there is none."""
        return bool(lattice.next())

    def text(self, lattice: MeCab.Lattice) -> str:
        """The lattice's current path, in the model's output formats."""
        return lattice.toString()


class GilFreeNbestCalls(NbestCalls):
    """The same calls through libmecab's C API: other threads run while MeCab works."""

    def __init__(self, tagger: MeCab.Tagger, c: ctypes.CDLL):
        super().__init__(tagger)
        self._parse_lattice = c.mecab_parse_lattice
        self._parse_lattice.argtypes, self._parse_lattice.restype = [ctypes.c_void_p, ctypes.c_void_p], ctypes.c_int
        self._lattice_next = c.mecab_lattice_next
        self._lattice_next.argtypes, self._lattice_next.restype = [ctypes.c_void_p], ctypes.c_int
        self._lattice_tostr = c.mecab_lattice_tostr
        self._lattice_tostr.argtypes, self._lattice_tostr.restype = [ctypes.c_void_p], ctypes.c_char_p

    def parse(self, lattice: MeCab.Lattice) -> bool:
        return bool(self._parse_lattice(int(self.tagger.this), int(lattice.this)))

    def next(self, lattice: MeCab.Lattice) -> bool:
        return bool(self._lattice_next(int(lattice.this)))

    def text(self, lattice: MeCab.Lattice) -> str:
        text = self._lattice_tostr(int(lattice.this))
        return text.decode("utf-8") if text is not None else ""


def nbest_calls(tagger: MeCab.Tagger, module: Path | None = None) -> NbestCalls:
    """`tagger`'s N-best calls through the C API of the libmecab the binding links (found through `module`, the
    binding's compiled module by default), else the binding's."""
    module = module or binding_module()
    if module is None:
        return _held_calls(tagger, "the binding has no compiled module")
    try:
        # CDLL, not PyDLL: the GIL is released during each call. A symbol looked up through the module's handle
        # resolves in what it links: the binding's libmecab.
        return GilFreeNbestCalls(tagger, ctypes.CDLL(str(module)))
    except (OSError, AttributeError) as error:  # not loadable, or no C API behind it
        return _held_calls(tagger, str(error))


def _held_calls(tagger: MeCab.Tagger, why: str) -> NbestCalls:
    log.info("libmecab's C API not found through the binding (%s): MeCab's calls hold the interpreter", why)
    return NbestCalls(tagger)
