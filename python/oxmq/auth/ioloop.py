"""pyzmq's ``zmq.auth.ioloop``: ``IOLoopAuthenticator`` is the asyncio one
(tornado's IOLoop runs on asyncio); the ``io_loop`` argument is deprecated."""

from __future__ import annotations

import warnings
from typing import Any, Optional

import oxmq as zmq

from .asyncio import AsyncioAuthenticator


class IOLoopAuthenticator(AsyncioAuthenticator):
    """``AsyncioAuthenticator`` under its older tornado name."""

    def __init__(self, context: Optional[zmq.Context] = None, encoding: str = "utf-8", log: Any = None,
                 io_loop: Any = None) -> None:
        if io_loop is not None:
            warnings.warn(f"{self.__class__.__name__}(io_loop) is deprecated and ignored", DeprecationWarning,
                          stacklevel=2)
        super().__init__(context, encoding=encoding, log=log)


__all__ = ["IOLoopAuthenticator"]
