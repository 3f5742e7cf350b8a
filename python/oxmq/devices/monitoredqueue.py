"""``monitored_queue``: a queue device that also copies every message to a
monitor socket, prefixed with where it came from (pyzmq's
``zmq.devices.monitoredqueue``)."""

from __future__ import annotations

from typing import Any, List

import oxmq as zmq


def _relay(src: zmq.Socket, dst: zmq.Socket, mon: zmq.Socket, prefix: bytes, swap_ids: bool) -> None:
    msg: List[Any] = src.recv_multipart(zmq.DONTWAIT, copy=False)
    mon.send_multipart([prefix] + msg, copy=False)
    if swap_ids and len(msg) >= 2:
        # ROUTER to ROUTER: the sender's id comes first, the destination's second
        msg = [msg[1], msg[0]] + msg[2:]
    dst.send_multipart(msg, copy=False)


def monitored_queue(
    in_socket: zmq.Socket,
    out_socket: zmq.Socket,
    mon_socket: zmq.Socket,
    in_prefix: bytes = b"in",
    out_prefix: bytes = b"out",
) -> None:
    """Forward messages both ways between ``in_socket`` and ``out_socket``;
    each one is also sent to ``mon_socket`` after a first frame saying its
    side (``in_prefix`` or ``out_prefix``). Runs until the context ends."""
    for name, prefix in (("in_prefix", in_prefix), ("out_prefix", out_prefix)):
        if not isinstance(prefix, bytes):
            raise TypeError(f"{name} must be bytes, not {type(prefix).__name__}")
    swap_ids = in_socket.type == zmq.ROUTER and out_socket.type == zmq.ROUTER
    poller = zmq.Poller()
    poller.register(in_socket, zmq.POLLIN)
    poller.register(out_socket, zmq.POLLIN)
    while True:
        events = dict(poller.poll())
        if in_socket in events:
            try:
                _relay(in_socket, out_socket, mon_socket, in_prefix, swap_ids)
            except zmq.Again:
                pass
        if out_socket in events:
            try:
                _relay(out_socket, in_socket, mon_socket, out_prefix, swap_ids)
            except zmq.Again:
                pass


__all__ = ["monitored_queue"]
