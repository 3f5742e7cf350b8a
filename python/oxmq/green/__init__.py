"""gevent-friendly sockets (pyzmq's ``zmq.green``): ``import zmq.green as zmq``.

Blocking calls never block the process: each is tried without blocking, and
on EAGAIN the core's blocking call (and likewise its poll and its proxy)
runs with gevent's hook (``oxmq::WaitHook::cooperative``): it waits in
gevent's ``select`` for the socket's readiness descriptor, so other greenlets
run meanwhile, and tries again, until the call succeeds or its timeout
(RCVTIMEO/SNDTIMEO) passes. Each wait is also bounded by a short slice after
which the call is retried. Needs gevent.
"""

from __future__ import annotations

import gevent  # noqa: F401  (ImportError here: zmq.green needs gevent)

import oxmq as _zmq
from gevent.select import select as _gselect
from oxmq import *  # noqa: F401,F403
from oxmq._oxmq import _green_proxy
from oxmq.green.core import _Context, _Socket
from oxmq.green.poll import _Poller

Context = _Context
Socket = _Socket
Poller = _Poller


def device(device_type: int, isocket: _Socket, osocket: _Socket) -> None:
    """``zmq.device`` for green sockets: the core's proxy, forwarding both
    ways and yielding to other greenlets while it waits (gevent's select)."""
    _green_proxy(isocket, osocket, _gselect)


__all__ = list(_zmq.__all__)
