"""A small thread-safe LRU, for what the prediction service and the pricer keep between requests."""

from __future__ import annotations

import gc
import threading
from collections import OrderedDict
from typing import Any


class LruCache:
    """A small thread-safe LRU: of things built from stored documents, and of answers.

    `long_lived`: what it keeps lives as long as the service (a cost table's Pricer, a
    validated profile), so each new one is moved out of the garbage collector's reach
    (gc.freeze).  A full collection walks every object the process holds, and with a few
    such documents held it took 60-85 ms, in the middle of whichever request set it off."""

    def __init__(self, size: int, long_lived: bool = False) -> None:
        self._items: OrderedDict[Any, Any] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()
        self._long_lived = long_lived

    def peek(self, key: Any) -> Any:
        """The value kept under key, or None."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        return None

    def put(self, key: Any, value: Any) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)

    def get(self, key: Any, build: Any) -> Any:
        """The value kept under key, built (and kept) the first time; `build` must not return None."""
        value = self.peek(key)
        if value is None:
            value = build()
            self.put(key, value)
            if self._long_lived:
                gc.freeze()
        return value
