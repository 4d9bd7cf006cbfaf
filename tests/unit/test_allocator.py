"""daemon/allocator.py: the free heap is given back after the conversion of a long reading, and only then."""

import pytest

import daemon.converter
from daemon.allocator import release_free_memory
from daemon.converter import RELEASE_MEMORY_READING_CHARS, Converter


def test_releasing_free_memory_is_safe_to_call_at_any_time():
    release_free_memory()
    release_free_memory()


@pytest.mark.parametrize("length, releases", [(RELEASE_MEMORY_READING_CHARS - 1, 0), (RELEASE_MEMORY_READING_CHARS, 1)])
def test_a_long_readings_ranking_gives_the_free_heap_back(monkeypatch, length, releases):
    released = []
    monkeypatch.setattr(daemon.converter, "release_free_memory", lambda: released.append(True))
    converter = Converter()
    converter.candidates("あ" * length)
    converter.candidates("あ" * length)  # from the cache: nothing ranked, nothing freed
    assert len(released) == releases
