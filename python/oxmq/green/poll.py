"""Green Poller: waits in gevent's hub."""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

from gevent.select import select as _gselect

import oxmq as _zmq
from oxmq._oxmq import _green_poll


class _Poller(_zmq.Poller):
    """A Poller whose ``poll`` yields to other greenlets while it waits."""

    def poll(self, timeout: Optional[float] = None) -> List[Tuple[Any, int]]:
        if timeout is None or timeout < 0:
            timeout = -1
        elif isinstance(timeout, float):
            timeout = int(timeout)
        # The core's poll, waiting in gevent's select (oxmq::WaitHook::cooperative).
        return _green_poll(self.sockets, timeout, _gselect)


__all__ = ["_Poller"]
