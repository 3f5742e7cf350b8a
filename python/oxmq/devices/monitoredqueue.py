"""``monitored_queue``: a queue device that also copies every message to a
monitor socket, prefixed with where it came from (pyzmq's
``zmq.devices.monitoredqueue``). The forwarding is the core's proxy."""

from __future__ import annotations

import oxmq as zmq
from oxmq._oxmq import monitored_queue as _monitored_queue


def monitored_queue(
    in_socket: zmq.Socket,
    out_socket: zmq.Socket,
    mon_socket: zmq.Socket,
    in_prefix: bytes = b"in",
    out_prefix: bytes = b"out",
) -> None:
    """Forward messages both ways between ``in_socket`` and ``out_socket``;
    each one is also sent to ``mon_socket`` after a first frame saying its
    side (``in_prefix`` or ``out_prefix``). Between two ROUTERs the first two
    frames are swapped, so the addressee sees the sender's id. Runs until the
    context ends."""
    for name, prefix in (("in_prefix", in_prefix), ("out_prefix", out_prefix)):
        if not isinstance(prefix, bytes):
            raise TypeError(f"{name} must be bytes, not {type(prefix).__name__}")
    _monitored_queue(in_socket, out_socket, mon_socket, in_prefix, out_prefix)


__all__ = ["monitored_queue"]
