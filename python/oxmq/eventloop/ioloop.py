"""pyzmq's ``zmq.eventloop.ioloop``, deprecated there since pyzmq 17.

oxmq sockets work with tornado's own IOLoop (on asyncio), so this module only
re-exports it: ``IOLoop`` and ``ZMQIOLoop`` are ``tornado.ioloop.IOLoop``, and
``install()`` does nothing but warn.
"""

from __future__ import annotations

import warnings
from typing import Any

from tornado.ioloop import IOLoop

ZMQIOLoop = IOLoop


def _deprecated() -> None:
    warnings.warn(
        "zmq.eventloop.ioloop is deprecated in pyzmq 17: use tornado's IOLoop, which works with zmq sockets",
        DeprecationWarning,
        stacklevel=3,
    )


def install() -> None:
    """Deprecated no-op (tornado's IOLoop needs no installation)."""
    _deprecated()


def __getattr__(name: str) -> Any:
    # tornado.ioloop names (PeriodicCallback, ...) through this module, as pyzmq allowed
    import tornado.ioloop

    try:
        return getattr(tornado.ioloop, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


__all__ = ["IOLoop", "ZMQIOLoop", "install"]
