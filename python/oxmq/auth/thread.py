"""An authenticator that answers ZAP requests in a background thread
(pyzmq's ``zmq.auth.thread``)."""

from __future__ import annotations

import asyncio
import logging
from itertools import count
from threading import Event, Thread
from typing import Any, List, Optional

import oxmq as zmq

from .base import Authenticator

_pipe_ids = count()


class AuthenticationThread(Thread):
    """Runs an Authenticator: ZAP requests in, replies out, until told to stop.

    Credential callbacks may be coroutine functions: each request is handled
    on an event loop private to this thread.
    """

    def __init__(self, authenticator: Authenticator, pipe: zmq.Socket) -> None:
        super().__init__(daemon=True)
        self.authenticator = authenticator
        self.log = authenticator.log
        self.pipe = pipe
        self.started = Event()

    def run(self) -> None:
        loop = asyncio.new_event_loop()
        try:
            self._run(loop)
        finally:
            loop.close()
            self.pipe.close()

    def _run(self, loop: asyncio.AbstractEventLoop) -> None:
        Authenticator.start(self.authenticator)
        self.started.set()
        zap = self.authenticator.zap_socket
        poller = zmq.Poller()
        poller.register(self.pipe, zmq.POLLIN)
        poller.register(zap, zmq.POLLIN)
        try:
            while True:
                try:
                    socks = dict(poller.poll())
                except zmq.ZMQError:
                    break  # the context went away
                if self.pipe in socks and socks[self.pipe] == zmq.POLLIN:
                    msg = self.pipe.recv_multipart()
                    if self._handle_pipe_message(msg):
                        break
                if zap in socks and socks[zap] == zmq.POLLIN:
                    self._handle_zap(loop)
        finally:
            Authenticator.stop(self.authenticator)
            self.log.debug("auth thread stopped")

    def _handle_zap(self, loop: asyncio.AbstractEventLoop) -> None:
        if self.authenticator.zap_socket is None:
            return
        msg = self.authenticator.zap_socket.recv_multipart()
        loop.run_until_complete(self.authenticator.handle_zap_message(msg))

    def _handle_pipe_message(self, msg: List[bytes]) -> bool:
        command = msg[0]
        self.log.debug("auth received API command %r", command)
        if command == b"TERMINATE":
            return True
        self.log.error("Invalid auth command from API: %r", command)
        self.pipe.send(b"ERROR")
        return False


class ThreadAuthenticator(Authenticator):
    """An Authenticator whose ZAP socket is served by a background thread."""

    pipe: Optional[zmq.Socket] = None
    pipe_endpoint: str = ""
    thread: Optional[AuthenticationThread] = None

    def __init__(self, context: Optional[zmq.Context] = None, encoding: str = "utf-8", log: Any = None) -> None:
        super().__init__(context=context, encoding=encoding, log=log or logging.getLogger("zmq.auth"))
        self.pipe = None
        self.pipe_endpoint = f"inproc://{id(self)}.inproc.{next(_pipe_ids)}"
        self.thread = None

    def start(self) -> None:
        """Start the thread that binds the ZAP socket and answers requests."""
        self.pipe = self.context.socket(zmq.PAIR, socket_class=zmq.Socket)
        self.pipe.linger = 1
        self.pipe.bind(self.pipe_endpoint)
        thread_pipe = self.context.socket(zmq.PAIR, socket_class=zmq.Socket)
        thread_pipe.linger = 1
        thread_pipe.connect(self.pipe_endpoint)
        self.thread = AuthenticationThread(authenticator=self, pipe=thread_pipe)
        self.thread.start()
        if not self.thread.started.wait(timeout=10):
            raise RuntimeError("Authenticator thread failed to start")

    def stop(self) -> None:
        """Stop the thread (which closes the ZAP socket)."""
        if self.pipe:
            self.pipe.send(b"TERMINATE")
            if self.is_alive():
                assert self.thread is not None
                self.thread.join()
            self.pipe.close()
            self.pipe = None
        self.thread = None

    def is_alive(self) -> bool:
        """Whether the authenticator thread is running."""
        return bool(self.thread and self.thread.is_alive())

    def __del__(self) -> None:
        self.stop()


__all__ = ["ThreadAuthenticator"]
