"""Sockets whose methods return tornado Futures (pyzmq's ``zmq.eventloop.future``).

With tornado >= 5 a tornado Future is an asyncio Future and tornado's IOLoop
runs on asyncio, so these are ``oxmq.asyncio``'s classes under pyzmq's names.
"""

from __future__ import annotations

from asyncio import AbstractEventLoop, CancelledError
from typing import Any, Optional

from tornado.concurrent import Future
from tornado.ioloop import IOLoop

from oxmq import asyncio as _aio


def _ioloop_of(loop: AbstractEventLoop) -> Optional[IOLoop]:
    """The tornado IOLoop running on ``loop``, if there is one."""
    current = IOLoop.current(instance=False)
    if current is not None and getattr(current, "asyncio_loop", None) is loop:
        return current
    return None


class Socket(_aio.Socket):
    """A socket whose ``send``/``recv``/``poll`` return tornado Futures.

    As in pyzmq, on a tornado IOLoop the socket is registered with the IOLoop
    itself (``add_handler``) from its first use until it is closed, instead of
    only while an operation waits: ``IOLoop.close(all_fds=True)`` then closes
    it.
    """

    _future_class = Future
    # (IOLoop, fd) while registered with a tornado IOLoop
    _tornado_handler: Any = None

    def _get_loop(self) -> AbstractEventLoop:
        loop = super()._get_loop()
        reg = self._tornado_handler
        if reg is not None and reg[0].asyncio_loop is not loop:
            self._drop_tornado_handler()
            reg = None
        if reg is None and not self.closed:
            io_loop = _ioloop_of(loop)
            if io_loop is not None:
                fd = self.fileno()
                io_loop.add_handler(self, lambda _fd, _events: self._handle_events(), IOLoop.READ)
                object.__setattr__(self, "_tornado_handler", (io_loop, fd))
        return loop

    def _drop_tornado_handler(self) -> None:
        reg = self._tornado_handler
        if reg is not None:
            object.__setattr__(self, "_tornado_handler", None)
            try:
                reg[0].remove_handler(reg[1])
            except (ValueError, OSError, RuntimeError):
                pass  # the IOLoop is closed already

    def _watch(self) -> None:
        self._get_loop()
        if self._tornado_handler is None:
            super()._watch()

    def _unwatch(self) -> None:
        if self._tornado_handler is None:
            super()._unwatch()

    def close(self, linger: Optional[int] = None) -> None:
        """Close the socket and take it off the tornado IOLoop."""
        super().close(linger)
        self._drop_tornado_handler()


class Poller(_aio.Poller):
    """A Poller whose ``poll`` returns a tornado Future."""

    _socket_class = Socket


class Context(_aio.Context):
    """A Context whose sockets are ``zmq.eventloop.future.Socket``."""

    _socket_class = Socket
    _instance = None
    _instance_pid = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.pop("io_loop", None)
        super().__init__(*args, **kwargs)


__all__ = ["Context", "Socket", "Poller", "Future", "CancelledError"]
