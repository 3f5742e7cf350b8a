"""An authenticator that answers ZAP requests on the asyncio event loop
(pyzmq's ``zmq.auth.asyncio``)."""

from __future__ import annotations

import asyncio
from typing import Any, Optional

import oxmq as zmq
from oxmq.asyncio import Socket as AsyncSocket

from .base import Authenticator


class AsyncioAuthenticator(Authenticator):
    """An Authenticator served by a task on the running (or given) asyncio loop."""

    __poller: Any = None
    __task: Optional["asyncio.Task[None]"] = None

    def __init__(self, context: Optional[zmq.Context] = None, loop: Any = None, encoding: str = "utf-8",
                 log: Any = None) -> None:
        super().__init__(context, encoding=encoding, log=log)
        if loop is not None:
            import warnings

            warnings.warn(f"{self.__class__.__name__}(loop) is deprecated and ignored", DeprecationWarning,
                          stacklevel=2)
        self.__task = None

    async def __handle_zap(self, zap: AsyncSocket) -> None:
        while True:
            try:
                msg = await zap.recv_multipart()
            except (zmq.ZMQError, asyncio.CancelledError):
                return
            await self.handle_zap_message(msg)

    def start(self) -> None:
        """Bind the ZAP socket and start answering requests."""
        super().start()
        assert self.zap_socket is not None
        zap = AsyncSocket(self.zap_socket)
        self.__task = asyncio.ensure_future(self.__handle_zap(zap))

    def stop(self) -> None:
        """Stop answering and close the ZAP socket."""
        if self.__task:
            self.__task.cancel()
            self.__task = None
        super().stop()


__all__ = ["AsyncioAuthenticator"]
