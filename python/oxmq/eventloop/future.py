"""Sockets whose methods return tornado Futures (pyzmq's ``zmq.eventloop.future``).

With tornado >= 5 a tornado Future is an asyncio Future and tornado's IOLoop
runs on asyncio, so these are ``oxmq.asyncio``'s classes under pyzmq's names.
"""

from __future__ import annotations

from asyncio import CancelledError
from typing import Any

from tornado.concurrent import Future

from oxmq import asyncio as _aio


class Socket(_aio.Socket):
    """A socket whose ``send``/``recv``/``poll`` return tornado Futures."""

    _future_class = Future


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
