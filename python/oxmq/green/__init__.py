"""gevent-friendly sockets (pyzmq's ``zmq.green``): ``import zmq.green as zmq``.

Blocking calls never block the process: each is tried without blocking, and
on EAGAIN the greenlet waits (through gevent's hub) for the socket's
readiness descriptor, then tries again, until the call succeeds or its
timeout (RCVTIMEO/SNDTIMEO) passes. The descriptor is edge-like, so every
wait is also bounded by a short slice after which the call is retried: a
missed wake-up costs at most one slice, never a hang. Needs gevent.
"""

from __future__ import annotations

import gevent  # noqa: F401  (ImportError here: zmq.green needs gevent)

import oxmq as _zmq
from oxmq import *  # noqa: F401,F403
from oxmq.green.core import _Context, _Socket
from oxmq.green.poll import _Poller

Context = _Context
Socket = _Socket
Poller = _Poller


def device(device_type: int, isocket: _Socket, osocket: _Socket) -> None:
    """``zmq.device`` for green sockets: forward messages both ways, yielding
    to other greenlets while waiting."""
    poller = _Poller()
    poller.register(isocket, _zmq.POLLIN)
    poller.register(osocket, _zmq.POLLIN)
    while True:
        events = dict(poller.poll())
        if isocket in events:
            osocket.send_multipart(isocket.recv_multipart())
        if osocket in events:
            isocket.send_multipart(osocket.recv_multipart())


__all__ = list(_zmq.__all__)
