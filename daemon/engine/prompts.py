"""Prompt builders for the kana-kanji model formats we can run (pure functions).

A prompt is kept as parts, each either a marker (a control token the model was trained with) or user
text. The engine tokenizes user text with parse_special=False, so text typed by the user can never
forge a marker.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from daemon.kana import to_katakana

INPUT_START = "\uee00"
OUTPUT_START = "\uee01"
CONTEXT_START = "\uee02"
# \uEE00..\uEE08 are reserved for markers by both model families (zenz-v3 uses up to \uEE08).
MARKERS = tuple(chr(c) for c in range(0xEE00, 0xEE09))
FORMAT_KEY = "tsuzuri.prompt_format"  # GGUF metadata key naming the prompt format of our own models


@dataclass(frozen=True)
class Prompt:
    parts: tuple[tuple[str, bool], ...]  # (text, is_marker)

    @property
    def text(self) -> str:
        return "".join(text for text, _ in self.parts)


def _strip_markers(text: str) -> str:
    return "".join(ch for ch in text if ch not in MARKERS)


def _parts(*items: str) -> Prompt:
    """Alternate marker / text items: markers are recognised by value, empty texts dropped."""
    return Prompt(tuple((item, item in MARKERS) for item in items if item))


def _tail(context: str, chars: int) -> str:
    return context[-chars:] if chars > 0 else ""


def jinen(reading: str, context: str, context_chars: int) -> Prompt:
    """Karukan's jinen: NFKC(EE02 + last context chars + EE00 + katakana reading + EE01)."""
    nfkc = lambda s: unicodedata.normalize("NFKC", _strip_markers(s))  # noqa: E731
    return _parts(
        CONTEXT_START, nfkc(_tail(context, context_chars)), INPUT_START, nfkc(to_katakana(reading)), OUTPUT_START
    )


def zenz_v1(reading: str, context: str, context_chars: int) -> Prompt:
    """zenz-v1: EE00 + katakana reading + EE01 (no context)."""
    return _parts(INPUT_START, _strip_markers(to_katakana(reading)), OUTPUT_START)


def zenz_v2(reading: str, context: str, context_chars: int) -> Prompt:
    """zenz-v2 and v2.5: EE00 + katakana reading + EE02 + left context + EE01."""
    return _parts(
        INPUT_START,
        _strip_markers(to_katakana(reading)),
        CONTEXT_START,
        _strip_markers(_tail(context, context_chars)),
        OUTPUT_START,
    )


def zenz_v3(reading: str, context: str, context_chars: int) -> Prompt:
    """zenz-v3: EE02 + left context + EE00 + katakana reading + EE01 (context first, like jinen)."""
    return _parts(
        CONTEXT_START,
        _strip_markers(_tail(context, context_chars)),
        INPUT_START,
        _strip_markers(to_katakana(reading)),
        OUTPUT_START,
    )


# format name → (builder, default number of left-context characters)
FORMATS = {
    "jinen": (jinen, 10),
    "zenz-v1": (zenz_v1, 0),
    "zenz-v2": (zenz_v2, 40),
    "zenz-v2.5": (zenz_v2, 40),
    "zenz-v3": (zenz_v3, 40),
}


def build_prompt(fmt: str, reading: str, context: str, context_chars: int | None = None) -> Prompt:
    try:
        builder, default_chars = FORMATS[fmt]
    except KeyError:
        raise ValueError(f"unknown prompt format {fmt!r}; known: {', '.join(FORMATS)}") from None
    return builder(reading, context, default_chars if context_chars is None else context_chars)
