"""Green Poller: waits in gevent's hub."""

from __future__ import annotations

import time
from typing import Any, List, Optional, Tuple

from gevent.select import select as _gselect

import oxmq as _zmq
from oxmq.constants import POLLIN, POLLOUT

from .core import _SLICE


class _Poller(_zmq.Poller):
    """A Poller whose ``poll`` yields to other greenlets while it waits."""

    def poll(self, timeout: Optional[float] = None) -> List[Tuple[Any, int]]:
        if timeout is None or timeout < 0:
            deadline = None
        else:
            deadline = time.monotonic() + timeout / 1000.0
        while True:
            ready = _zmq.zmq_poll(self.sockets, 0)
            if ready:
                return ready
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                return []
            rlist, wlist = [], []
            for obj, flags in self.sockets:
                if isinstance(obj, _zmq.Socket):
                    rlist.append(obj.fileno())  # the readiness descriptor signals any change
                else:
                    fd = obj if isinstance(obj, int) else obj.fileno()
                    if flags & POLLIN:
                        rlist.append(fd)
                    if flags & POLLOUT:
                        wlist.append(fd)
            wait = _SLICE if deadline is None else max(0.0, min(_SLICE, deadline - now))
            _gselect(rlist, wlist, [], wait)


__all__ = ["_Poller"]
