"""Readings of single kanji, for reading the document's words piece by piece (daemon/dictionary/context_words.py).

Mozc's dictionary has few entries of one kanji read as it reads in a compound (霞 か in 丹霞, 登 と in 長登, 寧
ねい in 泰寧): its one-kanji entries are mostly names. pykakasi's kanji table has them: each kanji's readings as
pykakasi lists them (its entries of that one kanji, without a following-kana condition), in hiragana. Built on
first use in a child process (daemon/child_json.py): about a second, and 6,500 kanji kept.
"""

import json
import logging
import sys
import threading

from daemon.child_json import ChildBuildFailed, json_from_a_child
from daemon.kana import to_hiragana

log = logging.getLogger(__name__)
_table: dict[str, tuple[str, ...]] | None = None
_table_lock = threading.Lock()


def kanji_readings() -> dict[str, tuple[str, ...]]:
    """kanji → its readings in hiragana; built once, on the first call from any thread (empty, logged, if the
    child fails: the document's words are then read through the dictionary alone)."""
    global _table
    with _table_lock:
        if _table is None:
            try:
                _table = {kanji: tuple(readings) for kanji, readings in json_from_a_child(__name__).items()}
            except ChildBuildFailed as error:
                log.warning("kanji readings unavailable: %s", error)
                _table = {}
        return _table


def _build_table() -> dict[str, list[str]]:
    # Imported here: the daemon's process never loads pykakasi's table.
    from pykakasi.kanji import Kanwa

    table: dict[str, list[str]] = {}
    for first, entries in Kanwa()._jisyo_table.items():  # its table has no public accessor
        kanji = chr(first)
        readings = [to_hiragana(reading) for reading, condition in entries.get(kanji, ()) if condition is None]
        if readings:
            table[kanji] = list(dict.fromkeys(readings))
    return table


if __name__ == "__main__":
    json.dump(_build_table(), sys.stdout)
