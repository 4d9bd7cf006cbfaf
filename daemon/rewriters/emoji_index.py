"""Emoji candidates from Japanese readings (ねこ → 🐈 🐱, さくら → 🌸).

The names are the Japanese CLDR short names shipped by the `emoji` package (":ネコの顔:",
":旗_日本:"); pykakasi supplies hiragana readings for their kanji. Building the index costs
about a second, so it happens on first use, or earlier in a background thread through
`emoji_index()`; and it happens in a child process (daemon/child_json.py).
"""

import json
import logging
import sys
import threading
from collections import defaultdict
from collections.abc import Iterable

from daemon.child_json import ChildBuildFailed, json_from_a_child
from daemon.kana import to_hiragana
from daemon.rewriters.base import Rewrite

SOURCE = "emoji"
DEFAULT_LIMIT = 20  # かお matches ~100 faces; beyond a couple of pages is noise

# How well a reading matches a name, best first.
TIER_FULL_NAME = 0  # ねこ for ":ネコ:"
TIER_NAME_PART = 1  # にほん for ":旗_日本:", each "_"-separated part
TIER_WORD = 2  # ねこ for ":ネコの顔:", a content word inside the main part

_SKIN_TONE_MARKER = "肌色"  # "_薄い肌色" variants would bury the base emoji in duplicates
_KEY_IGNORED = str.maketrans("", "", " ・")  # ":アンティグア・バーブーダ:" is read without the dot

# CLDR names are descriptions (⭐ is ":スター:", 😢 ":泣き顔:"), so a few everyday
# readings never come out of them; this is our own small supplement.
_READINGS_MISSING_FROM_NAMES = {  # tuples: one emoji can be several code points (🇯🇵)
    "ほし": ("⭐", "🌟"),
    "にほん": ("🇯🇵",),
    "なく": ("😢", "😭"),
    "おこる": ("😠", "😡"),
    "いいね": ("👍",),
    "ありがとう": ("🙏",),
    "おめでとう": ("🎉", "🎊"),
    "つき": ("🌙", "🌕"),
}

_index: dict[str, tuple[str, ...]] | None = None
_index_lock = threading.Lock()
log = logging.getLogger(__name__)


def emoji_rewrites(reading: str, limit: int = DEFAULT_LIMIT) -> list[Rewrite]:
    return [Rewrite(emoji, "絵文字", SOURCE) for emoji in emoji_index().get(reading, ())[:limit]]


def emoji_index() -> dict[str, tuple[str, ...]]:
    """reading → emoji, best match first; built once, on the first call from any thread."""
    global _index
    with _index_lock:
        if _index is None:
            _index = _index_from_a_child_process()
        return _index


def _index_from_a_child_process() -> dict[str, tuple[str, ...]]:
    """_build_index run by `python -m daemon.rewriters.emoji_index`; empty (no emoji candidates, logged) if
    that fails."""
    try:
        return {key: tuple(chars) for key, chars in json_from_a_child(__name__).items()}
    except ChildBuildFailed as error:
        log.warning("no emoji candidates: their index did not build (%s)", error)
        return {}


def _build_index() -> dict[str, tuple[str, ...]]:
    # Imported here so that importing the rewriters costs nothing until emoji are needed.
    import emoji
    import pykakasi

    emoji.config.load_language("ja")
    kakasi = pykakasi.kakasi()
    ranked = defaultdict(list)
    for position, (char, data) in enumerate(emoji.EMOJI_DATA.items()):
        # Unqualified duplicates (❤ next to ❤️) would show twice.
        if data["status"] != emoji.STATUS["fully_qualified"] or "ja" not in data:
            continue
        name = data["ja"].strip(":")
        if _SKIN_TONE_MARKER in name:
            continue
        parts = [[(token["orig"], token["hira"]) for token in kakasi.convert(part)] for part in name.split("_")]
        for key, tier in name_keys(parts).items():
            # Within a tier, older emoji (Emoji version "E") are the familiar ones, and shorter
            # names the more basic: ❤️ before 🩷, ネコ before ネコの顔.
            ranked[key].append((tier, data["E"], len(name), position, char))
    for key, chars in _READINGS_MISSING_FROM_NAMES.items():
        # Negative positions put them ahead of the data, in the order written.
        ranked[key] += [(TIER_FULL_NAME, 0, 0, order - len(chars), char) for order, char in enumerate(chars)]
    return {
        key: tuple(dict.fromkeys(char for *_, char in sorted(entries)))  # first occurrence wins
        for key, entries in ranked.items()
    }


def name_keys(parts: list[list[tuple[str, str]]]) -> dict[str, int]:
    """Lookup keys for one emoji name, each with the best tier it matches at.

    `parts` are the name's "_"-separated parts, each a list of (original, hiragana) tokens
    as pykakasi segments them. Keys that are not pure kana (":okの手:") are dropped.
    """
    candidates = [(_key(token for part in parts for token in part), TIER_FULL_NAME)]
    if len(parts) > 1:
        candidates += [(_key(part), TIER_NAME_PART) for part in parts]
    # Words only from the main part: qualifier parts are keys as a whole already, and their
    # words (男性, 女性) would each match hundreds of emoji.
    candidates += [(_key([token]), TIER_WORD) for token in parts[0] if _is_content_word(token[0])]
    keys: dict[str, int] = {}
    for key, tier in candidates:
        if len(key) >= 2 and _is_reading(key):
            keys[key] = min(tier, keys.get(key, tier))
    return keys


def _key(tokens: Iterable[tuple[str, str]]) -> str:
    return to_hiragana("".join(reading for _, reading in tokens)).translate(_KEY_IGNORED)


def _is_content_word(original: str) -> bool:
    """Kanji or katakana words; bare hiragana tokens are mostly particles and okurigana (の, る)."""
    return any("\u4e00" <= c <= "\u9fff" or "\u30a1" <= c <= "\u30fa" for c in original)


def _is_reading(key: str) -> bool:
    return all("\u3041" <= c <= "\u3096" or c == "ー" for c in key)


if __name__ == "__main__":
    json.dump(_build_index(), sys.stdout)
