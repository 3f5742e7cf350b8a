"""Poller and select, over sockets and raw file descriptors."""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

from oxmq._oxmq import zmq_poll
from oxmq.constants import POLLERR, POLLIN, POLLOUT


class Poller:
    """A set of sockets / fds to poll together (``zmq_poll``)."""

    def __init__(self) -> None:
        self.sockets: List[Tuple[Any, int]] = []
        self._map: dict = {}

    def __contains__(self, socket: Any) -> bool:
        return socket in self._map

    def register(self, socket: Any, flags: int = POLLIN | POLLOUT) -> None:
        """Watch ``socket`` (a Socket, an fd, or an object with ``fileno()``) for ``flags``.

        Registering again modifies the flags; flags of 0 unregisters.
        """
        if flags:
            if socket in self._map:
                self.sockets[self._map[socket]] = (socket, flags)
            else:
                self.sockets.append((socket, flags))
                self._map[socket] = len(self.sockets) - 1
        elif socket in self._map:
            self.unregister(socket)

    def modify(self, socket: Any, flags: int = POLLIN | POLLOUT) -> None:
        """Change the flags of a registered socket."""
        self.register(socket, flags)

    def unregister(self, socket: Any) -> None:
        """Stop watching ``socket`` (KeyError if it was not registered)."""
        idx = self._map.pop(socket)
        self.sockets.pop(idx)
        for s, _ in self.sockets[idx:]:
            self._map[s] -= 1

    def poll(self, timeout: Optional[float] = None) -> List[Tuple[Any, int]]:
        """Wait up to ``timeout`` ms (None or negative: forever).

        Returns a list of ``(socket, events)`` for the ready items.
        """
        if timeout is None or timeout < 0:
            timeout = -1
        elif isinstance(timeout, float):
            timeout = int(timeout)
        return zmq_poll(self.sockets, timeout)


def select(rlist: list, wlist: list, xlist: list, timeout: Optional[float] = None) -> Tuple[list, list, list]:
    """``select.select`` for sockets and fds; ``timeout`` in seconds (None: forever)."""
    if timeout is None:
        ms = -1
    elif timeout < 0:
        ms = -1
    else:
        ms = int(timeout * 1000.0)
    flags: dict = {}
    order: list = []
    for lst, ev in ((rlist, POLLIN), (wlist, POLLOUT), (xlist, POLLERR)):
        for s in lst:
            if s not in flags:
                flags[s] = 0
                order.append(s)
            flags[s] |= ev
    ready = dict(zmq_poll([(s, flags[s]) for s in order], ms))
    r = [s for s in rlist if ready.get(s, 0) & POLLIN]
    w = [s for s in wlist if ready.get(s, 0) & POLLOUT]
    x = [s for s in xlist if ready.get(s, 0) & POLLERR]
    return r, w, x


__all__ = ["Poller", "select", "zmq_poll"]
