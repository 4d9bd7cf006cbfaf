"""A small least-recently-used store of results, each computed once even when several threads ask for it."""

from __future__ import annotations

import threading
from collections import OrderedDict
from concurrent.futures import Future
from typing import Generic, TypeVar
from collections.abc import Callable, Hashable

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class ComputedOnce(Generic[K, V]):
    """Results by key, the `capacity` most recently used kept. A caller asking for a key whose computation is
    under way on another thread waits for that one rather than computing it again: a conversion started in
    advance serves the key that asks for it while it still runs. A computation that raises is forgotten (the
    waiting callers get its exception; the next caller computes again)."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self._lock = threading.Lock()
        self._entries: OrderedDict[K, Future] = OrderedDict()

    def ready(self, key: K, timeout: float) -> V | None:
        """The result for `key` if it is computed, or its computation under way finishes within `timeout`
        seconds; else None. Never computes."""
        with self._lock:
            future = self._entries.get(key)
            if future is not None:
                self._entries.move_to_end(key)
        if future is None:
            return None
        try:
            return future.result(timeout)
        except Exception:  # noqa: BLE001 (not done in time, or failed: the caller computes what it can)
            return None

    def get(self, key: K, compute: Callable[[], V]) -> V:
        with self._lock:
            under_way = self._entries.get(key)
            if under_way is None:
                future: Future = Future()
                self._entries[key] = future
                while len(self._entries) > self.capacity:
                    self._entries.popitem(last=False)
            else:
                self._entries.move_to_end(key)
        if under_way is not None:
            return under_way.result()
        try:
            value = compute()
        except BaseException as error:
            with self._lock:
                if self._entries.get(key) is future:
                    del self._entries[key]
            future.set_exception(error)
            raise
        future.set_result(value)
        return value
