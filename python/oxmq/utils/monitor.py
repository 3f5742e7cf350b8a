"""Decoding socket-monitor events (pyzmq's ``zmq.utils.monitor``)."""

from __future__ import annotations

import inspect
import struct
from typing import Any, Dict, List

_EVENT = struct.Struct("=hi")
_U64 = struct.Struct("=Q")


def parse_monitor_message(msg: List[bytes]) -> Dict[str, Any]:
    """Decode a two-frame monitor message into ``{'event', 'value', 'endpoint'}``."""
    if len(msg) != 2 or len(msg[0]) != 6:
        raise RuntimeError(f"Invalid event message format: {msg!r}")
    event, value = _EVENT.unpack(bytes(msg[0]))
    return {"event": event & 0xFFFF, "value": value, "endpoint": bytes(msg[1])}


def parse_monitor_message_v2(msg: List[bytes]) -> Dict[str, Any]:
    """oxmq only: decode an event of version 2 (``socket.monitor(addr,
    events, event_version=2)``, libzmq's draft layout: u64 event, u64 count,
    that many u64 values, local endpoint, remote endpoint) into ``{'event',
    'value', 'values', 'local_endpoint', 'remote_endpoint', 'routing_id'}``.
    ``routing_id`` is the peer's, from the values oxmq appends after
    libzmq's one (length, then the bytes 8 per value), or None."""
    if len(msg) < 4 or len(msg[0]) != 8 or len(msg[1]) != 8:
        raise RuntimeError(f"Invalid event message format: {msg!r}")
    (event,) = _U64.unpack(bytes(msg[0]))
    (count,) = _U64.unpack(bytes(msg[1]))
    if len(msg) != 4 + count or any(len(v) != 8 for v in msg[2 : 2 + count]):
        raise RuntimeError(f"Invalid event message format: {msg!r}")
    values = [_U64.unpack(bytes(v))[0] for v in msg[2 : 2 + count]]
    routing_id = None
    if count >= 2:
        n = values[1]
        raw = b"".join(bytes(v) for v in msg[4 : 2 + count])
        if len(raw) != (n + 7) // 8 * 8:
            raise RuntimeError(f"Invalid routing id values: {msg!r}")
        routing_id = raw[:n]
    return {
        "event": event,
        "value": values[0] if values else 0,
        "values": values,
        "local_endpoint": bytes(msg[2 + count]),
        "remote_endpoint": bytes(msg[3 + count]),
        "routing_id": routing_id,
    }


def recv_monitor_message(socket: Any, flags: int = 0) -> Any:
    """Receive one event from a monitor socket and decode it (an awaitable
    of the decoded event for a ``zmq.asyncio`` socket)."""
    msg = socket.recv_multipart(flags)
    if inspect.isawaitable(msg):
        return _parse_later(msg)
    return parse_monitor_message(msg)


async def _parse_later(msg: Any) -> Dict[str, Any]:
    return parse_monitor_message(await msg)


__all__ = ["parse_monitor_message", "parse_monitor_message_v2", "recv_monitor_message"]
