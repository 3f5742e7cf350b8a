"""``ZMQStream``: callbacks for a socket on tornado's IOLoop (pyzmq's
``zmq.eventloop.zmqstream``).

The stream watches the socket's readiness descriptor (``FD``), which is
edge-like: it fires when the socket's state may have changed. So after every
pass the stream re-reads ``EVENTS`` and, if the socket is still readable (or
writable with sends queued), schedules another pass on the next loop
iteration instead of waiting for the descriptor, which would not fire again.
"""

from __future__ import annotations

import asyncio
import pickle
import warnings
from queue import Queue
from typing import Any, Awaitable, Callable, List, Optional, Sequence, Union, cast

from tornado.ioloop import IOLoop
from tornado.log import gen_log

import oxmq as zmq
from oxmq import POLLIN, POLLOUT
from oxmq.utils import jsonapi

Callback = Callable[..., Any]


class ZMQStream:
    """A socket plus callbacks run by tornado's IOLoop.

    ``on_recv(callback)`` calls ``callback(msg)`` with each multipart message
    received; ``send``/``send_multipart`` queue messages that are sent when
    the socket can take them, calling the ``on_send`` callback with
    ``(msg, status)``.
    """

    socket: zmq.Socket
    io_loop: IOLoop
    poller: zmq.Poller
    _send_queue: Queue
    _recv_callback: Optional[Callback]
    _send_callback: Optional[Callback]
    _close_callback: Optional[Callback]
    _state: int = 0
    _flushed: bool = False
    _recv_copy: bool = False
    _fd: int

    def __init__(self, socket: zmq.Socket, io_loop: Optional[IOLoop] = None) -> None:
        from oxmq.asyncio import Socket as AsyncSocket

        if isinstance(socket, AsyncSocket):
            warnings.warn(
                f"ZMQStream only supports the base zmq.Socket class. Use zmq.Socket(shadow=other_socket) "
                f"or `ctx.socket(zmq.{socket.type.name}, socket_class=zmq.Socket)` to create a base zmq.Socket "
                f"object, no need to create {socket.__class__.__name__} at all: shadowing it",
                RuntimeWarning,
                stacklevel=2,
            )
            socket = zmq.Socket(socket)
        self.socket = socket
        self.io_loop = io_loop or IOLoop.current()
        self.poller = zmq.Poller()
        self._fd = self.socket.FD
        self._send_queue = Queue()
        self._recv_callback = None
        self._send_callback = None
        self._close_callback = None
        self._recv_copy = False
        self._flushed = False
        self._state = 0
        self._init_io_state()

        # shortcuts to the socket's own methods
        self.bind = self.socket.bind
        self.bind_to_random_port = self.socket.bind_to_random_port
        self.connect = self.socket.connect
        self.setsockopt = self.socket.setsockopt
        self.getsockopt = self.socket.getsockopt
        self.setsockopt_string = self.socket.setsockopt_string
        self.getsockopt_string = self.socket.getsockopt_string
        self.setsockopt_unicode = self.socket.setsockopt_unicode
        self.getsockopt_unicode = self.socket.getsockopt_unicode

    # -- callbacks -----------------------------------------------------------

    def stop_on_recv(self) -> None:
        """Stop receiving."""
        return self.on_recv(None)

    def stop_on_send(self) -> None:
        """Stop calling the send callback."""
        return self.on_send(None)

    def stop_on_err(self) -> None:
        """Deprecated: does nothing."""
        warnings.warn("on_err does nothing, and will be removed", DeprecationWarning, stacklevel=2)

    def on_err(self, callback: Callable) -> None:
        """Deprecated: does nothing."""
        warnings.warn("on_err does nothing, and will be removed", DeprecationWarning, stacklevel=2)

    def on_recv(self, callback: Optional[Callable[[List[Any]], Any]], copy: bool = True) -> None:
        """Call ``callback(msg)`` for every message received (``None`` stops).

        With ``copy=False`` the message is a list of ``Frame`` objects.
        """
        self._check_closed()
        assert callback is None or callable(callback)
        self._recv_callback = callback
        self._recv_copy = copy
        if callback is None:
            self._drop_io_state(POLLIN)
        else:
            self._add_io_state(POLLIN)

    def on_recv_stream(self, callback: Optional[Callable[["ZMQStream", List[Any]], Any]], copy: bool = True) -> None:
        """Like ``on_recv``, calling ``callback(stream, msg)``."""
        if callback is None:
            self.stop_on_recv()
        else:

            def stream_callback(msg: List[Any]) -> Any:
                return callback(self, msg)

            self.on_recv(stream_callback, copy=copy)

    def on_send(self, callback: Optional[Callable[[Sequence[Any], Any], Any]]) -> None:
        """Call ``callback(msg, status)`` after each queued message is sent.

        ``status`` is what ``send_multipart`` returned (a MessageTracker or
        None), or the ZMQError the send raised.
        """
        self._check_closed()
        assert callback is None or callable(callback)
        self._send_callback = callback

    def on_send_stream(self, callback: Optional[Callable[["ZMQStream", Sequence[Any], Any], Any]]) -> None:
        """Like ``on_send``, calling ``callback(stream, msg, status)``."""
        if callback is None:
            self.stop_on_send()
        else:
            self.on_send(lambda msg, status: callback(self, msg, status))

    # -- sending -------------------------------------------------------------

    def send(self, msg: Any, flags: int = 0, copy: bool = True, track: bool = False,
             callback: Optional[Callable] = None, **kwargs: Any) -> None:
        """Queue one frame for sending."""
        return self.send_multipart([msg], flags=flags, copy=copy, track=track, callback=callback, **kwargs)

    def send_multipart(self, msg_parts: Sequence[Any], flags: int = 0, copy: bool = True, track: bool = False,
                       callback: Optional[Callable] = None, **kwargs: Any) -> None:
        """Queue a multipart message for sending; ``callback`` replaces the on_send callback."""
        kwargs.update(dict(flags=flags, copy=copy, track=track))
        self._send_queue.put((msg_parts, kwargs))
        callback = callback or self._send_callback
        if callback is not None:
            self.on_send(callback)
        else:
            # noop callback
            self.on_send(lambda *args: None)
        self._add_io_state(POLLOUT)

    def send_string(self, u: str, flags: int = 0, encoding: str = "utf-8",
                    callback: Optional[Callable] = None, **kwargs: Any) -> None:
        """Queue a str (encoded) for sending."""
        if not isinstance(u, str):
            raise TypeError("unicode/str objects only")
        return self.send(u.encode(encoding), flags=flags, callback=callback, **kwargs)

    send_unicode = send_string

    def send_json(self, obj: Any, flags: int = 0, callback: Optional[Callable] = None, **kwargs: Any) -> None:
        """Queue an object as JSON for sending."""
        msg = jsonapi.dumps(obj)
        return self.send(msg, flags=flags, callback=callback, **kwargs)

    def send_pyobj(self, obj: Any, flags: int = 0, protocol: int = -1,
                   callback: Optional[Callable] = None, **kwargs: Any) -> None:
        """Queue an object as a pickle for sending."""
        msg = pickle.dumps(obj, protocol)
        return self.send(msg, flags, callback=callback, **kwargs)

    def _finish_flush(self) -> None:
        self._flushed = False

    def flush(self, flag: int = POLLIN | POLLOUT, limit: Optional[int] = None) -> int:
        """Run pending callbacks now (``flag``: POLLIN, POLLOUT or both), up to
        ``limit`` messages; returns how many were handled."""
        self._check_closed()
        already_flushed = self._flushed
        self._flushed = False
        count = 0

        def update_flag() -> int:
            return flag & zmq.POLLIN | (self.sending() and flag & zmq.POLLOUT)

        flag = update_flag()
        if not flag:
            return 0
        self.poller.register(self.socket, flag)
        events = self.poller.poll(0)
        while events and (not limit or count < limit):
            s, event = events[0]
            if event & POLLIN:
                self._handle_recv()
                count += 1
                if self.socket is None:
                    break
            if event & POLLOUT and self.sending():
                self._handle_send()
                count += 1
                if self.socket is None:
                    break
            flag = update_flag()
            if flag:
                self.poller.register(self.socket, flag)
                events = self.poller.poll(0)
            else:
                events = []
        if count:
            self._flushed = True
            if not already_flushed:
                self.io_loop.add_callback(self._finish_flush)
        elif already_flushed:
            self._flushed = True
        self._rebuild_io_state()
        return count

    # -- state ---------------------------------------------------------------

    def set_close_callback(self, callback: Optional[Callable]) -> None:
        """Call ``callback()`` when the stream is closed."""
        self._close_callback = callback

    def close(self, linger: Optional[int] = None) -> None:
        """Stop watching the socket and close it."""
        if self.socket is not None:
            if self.socket.closed:
                warnings.warn(
                    f"Unregistering FD {self._fd} after closing socket. "
                    "This could result in unregistering handlers for the wrong socket. "
                    "Please use stream.close() instead of closing the socket directly.",
                    stacklevel=2,
                )
                self.io_loop.remove_handler(self._fd)
            else:
                self.io_loop.remove_handler(self.socket)
                self.socket.close(linger)
            self.socket = None  # type: ignore[assignment]
            if self._close_callback:
                self._run_callback(self._close_callback)

    def receiving(self) -> bool:
        """Whether a receive callback is set."""
        return self._recv_callback is not None

    def sending(self) -> bool:
        """Whether messages are queued for sending."""
        return not self._send_queue.empty()

    def closed(self) -> bool:
        """Whether the stream (or its socket) is closed."""
        if self.socket is None:
            return True
        if self.socket.closed:
            # the socket was closed directly: stop watching it
            self.close()
            return True
        return False

    def _run_callback(self, callback: Callable, *args: Any, **kwargs: Any) -> None:
        """Run a callback; a coroutine it returns runs on the loop, and its
        exception is logged rather than lost."""
        try:
            f = callback(*args, **kwargs)
        except Exception:
            gen_log.error("Uncaught exception in ZMQStream callback", exc_info=True)
            raise
        if isinstance(f, Awaitable):
            fut = asyncio.ensure_future(cast(Awaitable, f))

            def _log_error(f: "asyncio.Future[Any]") -> None:
                if f.cancelled():
                    return
                exc = f.exception()
                if exc is not None:
                    gen_log.error("Uncaught exception in ZMQStream callback", exc_info=exc)

            fut.add_done_callback(_log_error)

    def _handle_events(self, fd: Any, events: int) -> None:
        """The descriptor fired (or a pass was scheduled): handle what is ready."""
        if not self.socket:
            gen_log.warning("Got events for closed stream %s", self)
            return
        try:
            zmq_events = self.socket.EVENTS
        except zmq.ContextTerminated:
            gen_log.warning("Got events for stream %s after terminating context", self)
            self._closed_socket_cleanup()
            return
        except zmq.ZMQError as e:
            if self.socket.closed:
                gen_log.warning("Got events for stream %s attached to closed socket: %s", self, e)
                self._closed_socket_cleanup()
            else:
                gen_log.error("Error getting events for %s: %s", self, e)
                self.socket.close()
            return
        try:
            if zmq_events & zmq.POLLIN and self.receiving():
                self._handle_recv()
                if not self.socket:
                    return
            if zmq_events & zmq.POLLOUT and self.sending():
                self._handle_send()
                if not self.socket:
                    return
            self._rebuild_io_state()
        except Exception:
            gen_log.error("Uncaught exception in zmqstream callback", exc_info=True)
            raise

    def _closed_socket_cleanup(self) -> None:
        # stop watching; the socket stays, so close() still warns that it was
        # closed under the stream
        try:
            self.io_loop.remove_handler(self._fd)
        except (KeyError, ValueError, OSError):
            pass

    def _handle_recv(self) -> None:
        try:
            msg = self.socket.recv_multipart(zmq.NOBLOCK, copy=self._recv_copy)
        except zmq.ZMQError as e:
            if e.errno == zmq.EAGAIN:
                return
            raise
        if self._recv_callback:
            self._run_callback(self._recv_callback, msg)

    def _handle_send(self) -> None:
        if not self.sending():
            gen_log.error("Shouldn't have handled a send event")
            return
        msg, kwargs = self._send_queue.get()
        try:
            status = self.socket.send_multipart(msg, **kwargs)
        except zmq.ZMQError as e:
            gen_log.error("SEND Error: %s", e)
            status = e
        if self._send_callback:
            self._run_callback(self._send_callback, msg, status)

    def _check_closed(self) -> None:
        if not self.socket:
            raise OSError("Stream is closed")

    def _rebuild_io_state(self) -> None:
        """Work out which events matter now and schedule another pass if one is ready."""
        if self.socket is None:
            return
        state = 0
        if self.receiving():
            state |= zmq.POLLIN
        if self.sending():
            state |= zmq.POLLOUT
        self._state = state
        self._update_handler(state)

    def _add_io_state(self, state: int) -> None:
        self._state = self._state | state
        self._update_handler(self._state)

    def _drop_io_state(self, state: int) -> None:
        self._state = self._state & ~state
        self._update_handler(self._state)

    def _update_handler(self, state: int) -> None:
        if self.socket is None or self.socket.closed:
            return
        # the descriptor is edge-like: events already pending will not fire it again
        if state & self.socket.events:
            self.io_loop.add_callback(lambda: self._handle_events(self.socket, 0))

    def _init_io_state(self) -> None:
        """Watch the socket's descriptor (always for reading: it signals any change)."""
        self.io_loop.add_handler(self.socket, self._handle_events, self.io_loop.READ)


__all__ = ["ZMQStream"]
