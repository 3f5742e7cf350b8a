"""Decoding socket-monitor events (pyzmq's ``zmq.utils.monitor``)."""

from __future__ import annotations

import inspect
import struct
from typing import Any, Dict, List

_EVENT = struct.Struct("=hi")


def parse_monitor_message(msg: List[bytes]) -> Dict[str, Any]:
    """Decode a two-frame monitor message into ``{'event', 'value', 'endpoint'}``."""
    if len(msg) != 2 or len(msg[0]) != 6:
        raise RuntimeError(f"Invalid event message format: {msg!r}")
    event, value = _EVENT.unpack(bytes(msg[0]))
    return {"event": event & 0xFFFF, "value": value, "endpoint": bytes(msg[1])}


def recv_monitor_message(socket: Any, flags: int = 0) -> Any:
    """Receive one event from a monitor socket and decode it (an awaitable
    of the decoded event for a ``zmq.asyncio`` socket)."""
    msg = socket.recv_multipart(flags)
    if inspect.isawaitable(msg):
        return _parse_later(msg)
    return parse_monitor_message(msg)


async def _parse_later(msg: Any) -> Dict[str, Any]:
    return parse_monitor_message(await msg)


__all__ = ["parse_monitor_message", "recv_monitor_message"]
