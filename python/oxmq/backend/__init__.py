"""pyzmq's ``zmq.backend``: the low-level classes and functions.

In pyzmq these come from its Cython or CFFI extension; in oxmq they are the
native classes of ``oxmq._oxmq`` (which the ``oxmq.Context``/``oxmq.Socket``
sugar classes subclass) and the same functions as the top-level package.
"""

from __future__ import annotations

from typing import Any

from oxmq._oxmq import Context, Frame, Socket, proxy, strerror, zmq_poll
from oxmq._oxmq import zmq_version_info as _zmq_version_info

Message = Frame

#: Longest ipc:// path (Linux sockaddr_un.sun_path is 108 bytes, NUL-terminated).
IPC_PATH_MAX_LEN = 107


def zmq_version_info() -> tuple:
    """The libzmq version implemented, as a tuple."""
    return tuple(_zmq_version_info())


def zmq_errno() -> int:
    """The errno of the last failed call (oxmq raises instead: always 0)."""
    return 0


_FROM_TOP = ("has", "curve_keypair", "curve_public", "device", "proxy_steerable")


def __getattr__(name: str) -> Any:
    # these live in the top-level package, which imports this module first
    if name in _FROM_TOP:
        import oxmq

        return getattr(oxmq, name)
    if name == "monitored_queue":
        from oxmq.devices.monitoredqueue import monitored_queue

        return monitored_queue
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Context",
    "Socket",
    "Frame",
    "Message",
    "zmq_poll",
    "strerror",
    "zmq_errno",
    "zmq_version_info",
    "proxy",
    "IPC_PATH_MAX_LEN",
] + list(_FROM_TOP)
