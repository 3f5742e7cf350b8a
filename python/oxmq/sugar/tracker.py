"""MessageTracker: know when the core is done with a zero-copy buffer."""

from __future__ import annotations

import threading
import time
from typing import Any

from oxmq._oxmq import Frame, _Tracker, _wait_trackers
from oxmq.error import NotDone


class MessageTracker:
    """Tracks whether one or more zero-copy sends are done with their buffers.

    Built from native trackers (what ``send(copy=False, track=True)`` makes),
    ``threading.Event`` objects, ``Frame`` objects and other ``MessageTracker``
    objects. ``done`` is true once all of them are done; ``wait(timeout)`` waits
    for that and raises ``NotDone`` on timeout.
    """

    def __init__(self, *towatch: Any) -> None:
        self.events: set = set()
        self.peers: set = set()
        self._native: list = []
        for obj in towatch:
            if isinstance(obj, _Tracker):
                self._native.append(obj)
            elif isinstance(obj, threading.Event):
                self.events.add(obj)
            elif isinstance(obj, MessageTracker):
                self.peers.add(obj)
            elif isinstance(obj, Frame):
                if not obj.tracker:
                    raise ValueError("Not a tracked message")
                self.peers.add(obj.tracker)
            else:
                raise TypeError(f"Require Events or Message Frames, not {type(obj)}")

    @property
    def done(self) -> bool:
        """Whether every tracked send has released its buffer."""
        return (
            all(t.done for t in self._native)
            and all(e.is_set() for e in self.events)
            and all(p.done for p in self.peers)
        )

    def wait(self, timeout: float | int = -1) -> None:
        """Wait until done; ``timeout`` in seconds (negative: forever).

        Raises ``NotDone`` if the sends are still in progress at the timeout.
        """
        # pyzmq: False or a negative timeout waits forever
        if timeout is None or timeout is False or timeout < 0:
            timeout, deadline = -1, None
        else:
            deadline = time.monotonic() + timeout
        natives, events = self._leaves()
        # Every native tracker in one wait of the core (GIL released, signals checked).
        if not _wait_trackers(natives, timeout):
            raise NotDone
        # threading.Event objects (pyzmq lets a tracker watch them) only Python can wait on.
        for e in events:
            if not e.wait(None if deadline is None else max(0.0, deadline - time.monotonic())):
                raise NotDone

    def _leaves(self) -> tuple[list, list]:
        """The native trackers and events of this tracker and of its peers, each once."""
        natives, events, seen, todo = [], [], set(), [self]
        while todo:
            mt = todo.pop()
            if id(mt) in seen:
                continue
            seen.add(id(mt))
            natives.extend(mt._native)
            events.extend(mt.events)
            todo.extend(mt.peers)
        return natives, events

    def __repr__(self) -> str:
        return f"<MessageTracker done={self.done}>"


_FINISHED_TRACKER = MessageTracker()

__all__ = ["MessageTracker", "_FINISHED_TRACKER"]
