"""pyzmq's ``zmq.utils.garbage``, kept so code that imports it still loads.

pyzmq keeps zero-copy send buffers alive in a dict owned by a collector
thread. oxmq needs no such thread: the core releases a buffer through a
queue drained on later calls, so ``gc.refs`` here is always empty and
``store`` is never called by oxmq itself.
"""

from __future__ import annotations

import threading
from typing import Any, Dict, NamedTuple, Optional


class gcref(NamedTuple):  # noqa: N801 - pyzmq's name
    obj: Any
    event: Optional[threading.Event]


class GarbageCollector:
    """Holds objects by id until released (no thread: oxmq does not need one)."""

    def __init__(self, context: Any = None) -> None:
        self.refs: Dict[int, gcref] = {}
        self.context = context
        self._lock = threading.Lock()

    @property
    def is_alive(self) -> bool:
        return False

    def store(self, obj: Any, event: Optional[threading.Event] = None) -> int:
        ref = gcref(obj, event)
        key = id(ref)
        with self._lock:
            self.refs[key] = ref
        return key

    def release(self, key: int) -> None:
        with self._lock:
            ref = self.refs.pop(key, None)
        if ref is not None and ref.event is not None:
            ref.event.set()

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass


gc = GarbageCollector()

__all__ = ["GarbageCollector", "gc", "gcref"]
