"""asyncio support: ``Context``, ``Socket`` and ``Poller`` whose ``send``,
``recv`` and ``poll`` return awaitables (as ``zmq.asyncio``).

How waiting works: an operation is first tried without blocking. Only if it
would block is a waiter queued and the socket's readiness descriptor (``FD``)
watched with ``loop.add_reader``. The descriptor is edge-like: it fires when
the socket's state may have changed since an operation last found no work.
So on each wake-up the queued operations are retried in order until one
fails with EAGAIN (which re-arms the descriptor) or none is left. No busy
polling, and no wake-up is lost: a waiter is only queued after an attempt
that found no work. Cancelling an awaitable removes its waiter.
"""

from __future__ import annotations

import asyncio
import json
import pickle
from collections import deque
from typing import Any, Callable, Deque, List, Optional, Tuple

import oxmq as _zmq
from oxmq import _oxmq
from oxmq.constants import DONTWAIT, EVENTS, POLLIN, POLLOUT, RCVTIMEO, SNDTIMEO
from oxmq.error import Again, ZMQError

_native_send = _oxmq.Socket.send
_native_recv = _oxmq.Socket.recv
_native_send_multipart = _oxmq.Socket.send_multipart
_native_recv_multipart = _oxmq.Socket.recv_multipart
_native_get = _oxmq.Socket.get


class _Waiter:
    __slots__ = ("future", "op", "timer")

    def __init__(self, future: asyncio.Future, op: Callable[[], Any]) -> None:
        self.future = future
        self.op = op
        self.timer: Optional[asyncio.TimerHandle] = None


class Socket(_zmq.Socket):
    """A socket whose ``send``/``recv``/``poll`` return awaitables."""

    _repr_cls = "zmq.asyncio.Socket"

    def __init__(self, context: Any = None, socket_type: int = 0, **kwargs: Any) -> None:
        super().__init__(context, socket_type, **kwargs)
        object.__setattr__(self, "_loop", None)
        object.__setattr__(self, "_recv_q", deque())
        object.__setattr__(self, "_send_q", deque())
        object.__setattr__(self, "_poll_q", deque())
        object.__setattr__(self, "_watching", False)

    @classmethod
    def from_socket(cls, socket: Any, io_loop: Any = None) -> "Socket":
        """An asyncio Socket over the same native socket as ``socket``."""
        return cls(socket)

    # -- event plumbing ------------------------------------------------------

    def _get_loop(self) -> asyncio.AbstractEventLoop:
        try:
            running: Optional[asyncio.AbstractEventLoop] = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        loop = self._loop
        if loop is None or (running is not None and running is not loop):
            # first use, or used from another event loop than before (a
            # socket outlives the loop: asyncio.run per call, several loops)
            if loop is not None:
                self._fail_all(asyncio.CancelledError())
            loop = running if running is not None else asyncio.get_event_loop()
            object.__setattr__(self, "_loop", loop)
        return loop

    @property
    def _recv_futures(self) -> List[Any]:
        """Pending receive and poll futures (pyzmq's attribute name)."""
        return [w.future for w in list(self._recv_q) + list(self._poll_q) if not w.future.done()]

    @property
    def _send_futures(self) -> List[Any]:
        """Pending send futures (pyzmq's attribute name)."""
        return [w.future for w in self._send_q if not w.future.done()]

    def _watch(self) -> None:
        if not self._watching:
            self._get_loop().add_reader(self.fileno(), self._handle_events)
            object.__setattr__(self, "_watching", True)

    def _unwatch(self) -> None:
        if self._watching:
            object.__setattr__(self, "_watching", False)
            try:
                self._loop.remove_reader(self.fileno())
            except (ZMQError, ValueError, OSError, RuntimeError):
                pass  # socket closed, or its loop already closed

    def _run_queue(self, q: Deque[_Waiter]) -> None:
        while q:
            w = q[0]
            if w.future.done():
                q.popleft()
                continue
            try:
                result = w.op()
            except Again:
                return  # EAGAIN re-armed the descriptor
            except BaseException as e:  # noqa: BLE001
                q.popleft()
                _cancel_timer(w)
                w.future.set_exception(e)
                continue
            q.popleft()
            _cancel_timer(w)
            w.future.set_result(result)

    def _handle_events(self) -> None:
        if self.closed:
            self._fail_all(ZMQError(_zmq.ENOTSOCK))
            return
        self._run_queue(self._recv_q)
        self._run_queue(self._send_q)
        try:
            events = _native_get(self, EVENTS)  # also clears the descriptor when idle
        except ZMQError as e:
            self._fail_all(e)
            return
        self._retry_if_ready(events)
        if self._poll_q:
            keep: Deque[_Waiter] = deque()
            for w in self._poll_q:
                if w.future.done():
                    continue
                mask = w.op()
                if events & mask:
                    _cancel_timer(w)
                    w.future.set_result(events & mask)
                else:
                    keep.append(w)
            object.__setattr__(self, "_poll_q", keep)
        if not (self._recv_q or self._send_q or self._poll_q):
            self._unwatch()

    def _retry_if_ready(self, events: int) -> None:
        # Reading EVENTS processes the socket's pending commands: a pipe that
        # became readable (or writable) after a queued operation last failed
        # is noticed here, and the descriptor is cleared with it, so it will
        # not fire for that pipe again. The queued operations must be retried
        # now or they wait forever (seen: an asyncio receiver stuck with its
        # first message already queued).
        if (events & POLLIN and self._recv_q) or (events & POLLOUT and self._send_q):
            self._get_loop().call_soon(self._handle_events)

    def _fail_all(self, exc: BaseException) -> None:
        for q in (self._recv_q, self._send_q, self._poll_q):
            while q:
                w = q.popleft()
                _cancel_timer(w)
                if not w.future.done():
                    w.future.set_exception(exc)
        self._unwatch()

    def _enqueue(self, q: Deque[_Waiter], op: Callable[[], Any], timeout_opt: Optional[int], flags: int) -> asyncio.Future:
        loop = self._get_loop()
        fut = loop.create_future()
        if not q:
            try:
                fut.set_result(op())
                return fut
            except Again as e:
                if flags & DONTWAIT:
                    fut.set_exception(e)
                    return fut
            except BaseException as e:  # noqa: BLE001
                fut.set_exception(e)
                return fut
        w = _Waiter(fut, op)
        q.append(w)
        if timeout_opt is not None:
            ms = _native_get(self, timeout_opt)
            if ms >= 0:
                w.timer = loop.call_later(ms / 1000.0, self._expire, q, w)
        fut.add_done_callback(lambda f: self._discard(q, w))
        self._watch()
        return fut

    def _expire(self, q: Deque[_Waiter], w: _Waiter) -> None:
        w.timer = None
        if not w.future.done():
            w.future.set_exception(Again())
            try:
                q.remove(w)
            except ValueError:
                pass
            if not (self._recv_q or self._send_q or self._poll_q):
                self._unwatch()

    def _discard(self, q: Deque[_Waiter], w: _Waiter) -> None:
        _cancel_timer(w)
        if w.future.cancelled():
            try:
                q.remove(w)
            except ValueError:
                pass
            if not (self._recv_q or self._send_q or self._poll_q):
                self._unwatch()

    # -- awaitable API -----------------------------------------------------

    def send(self, data: Any, flags: int = 0, copy: bool = True, track: bool = False, **kwargs: Any) -> "asyncio.Future[Any]":  # type: ignore[override]
        """Send a frame; returns an awaitable (result: None or a MessageTracker)."""
        return self._enqueue(self._send_q, lambda: _native_send(self, data, flags | DONTWAIT, copy, track, **kwargs), SNDTIMEO, flags)

    def send_multipart(self, msg_parts: Any, flags: int = 0, copy: bool = True, track: bool = False, **kwargs: Any) -> "asyncio.Future[Any]":  # type: ignore[override]
        """Send a multipart message; returns an awaitable."""
        parts = list(msg_parts)
        return self._enqueue(self._send_q, lambda: _native_send_multipart(self, parts, flags | DONTWAIT, copy, track), SNDTIMEO, flags)

    def recv(self, flags: int = 0, copy: bool = True, track: bool = False) -> "asyncio.Future[Any]":  # type: ignore[override]
        """Receive a frame; returns an awaitable of bytes (or Frame if copy=False)."""
        return self._enqueue(self._recv_q, lambda: _native_recv(self, flags | DONTWAIT, copy, track), RCVTIMEO, flags)

    def recv_multipart(self, flags: int = 0, copy: bool = True, track: bool = False) -> "asyncio.Future[List[Any]]":  # type: ignore[override]
        """Receive a multipart message; returns an awaitable of a list."""
        return self._enqueue(self._recv_q, lambda: _native_recv_multipart(self, flags | DONTWAIT, copy, track), RCVTIMEO, flags)

    def recv_into(self, buffer: Any, nbytes: int = 0, flags: int = 0) -> "asyncio.Future[int]":  # type: ignore[override]
        """Receive one frame into ``buffer``; returns an awaitable of the frame's size."""
        return self._enqueue(self._recv_q, lambda: _zmq.Socket.recv_into(self, buffer, nbytes, flags | DONTWAIT), RCVTIMEO, flags)

    def send_string(self, u: str, flags: int = 0, copy: bool = True, encoding: str = "utf-8", **kwargs: Any) -> "asyncio.Future[Any]":  # type: ignore[override]
        """Send a str; returns an awaitable."""
        if not isinstance(u, str):
            raise TypeError("unicode/str objects only")
        return self.send(u.encode(encoding), flags=flags, copy=copy, **kwargs)

    send_unicode = send_string

    def recv_string(self, flags: int = 0, encoding: str = "utf-8") -> "asyncio.Future[str]":  # type: ignore[override]
        """Receive a str; returns an awaitable."""
        return _chain(self.recv(flags), lambda b: b.decode(encoding))

    recv_unicode = recv_string

    def recv_json(self, flags: int = 0, **kwargs: Any) -> "asyncio.Future[Any]":  # type: ignore[override]
        """Receive a JSON message; returns an awaitable of the decoded object."""
        return _chain(self.recv(flags), lambda b: json.loads(b, **kwargs))

    def recv_pyobj(self, flags: int = 0) -> "asyncio.Future[Any]":  # type: ignore[override]
        """Receive a pickled object; returns an awaitable."""
        return _chain(self.recv(flags), pickle.loads)

    def recv_serialized(self, deserialize: Callable[[List[Any]], Any], flags: int = 0, copy: bool = True) -> "asyncio.Future[Any]":  # type: ignore[override]
        """Receive a multipart message and deserialize it; returns an awaitable."""
        return _chain(self.recv_multipart(flags, copy=copy), deserialize)

    def poll(self, timeout: Optional[float] = None, flags: int = POLLIN) -> "asyncio.Future[int]":  # type: ignore[override]
        """Wait until ``flags`` events are ready; awaitable of the events (0 on timeout)."""
        if self.closed:
            raise ZMQError(_zmq.ENOTSOCK)
        loop = self._get_loop()
        fut = loop.create_future()
        events = _native_get(self, EVENTS)
        self._retry_if_ready(events)
        ev = events & flags
        if ev or timeout == 0:
            fut.set_result(ev)
            return fut
        w = _Waiter(fut, lambda: flags)
        self._poll_q.append(w)
        if timeout is not None and timeout >= 0:
            w.timer = loop.call_later(timeout / 1000.0, _resolve, w, 0)
        fut.add_done_callback(lambda f: self._discard(self._poll_q, w))
        self._watch()
        return fut

    def close(self, linger: Optional[int] = None) -> None:
        """Close the socket; pending awaitables are cancelled."""
        if not self.closed:
            for q in (self._recv_q, self._send_q, self._poll_q):
                while q:
                    w = q.popleft()
                    _cancel_timer(w)
                    if not w.future.done():
                        w.future.cancel()
            self._unwatch()
        super().close(linger)


def _cancel_timer(w: _Waiter) -> None:
    if w.timer is not None:
        w.timer.cancel()
        w.timer = None


def _resolve(w: _Waiter, value: Any) -> None:
    w.timer = None
    if not w.future.done():
        w.future.set_result(value)


def _chain(fut: asyncio.Future, fn: Callable[[Any], Any]) -> asyncio.Future:
    out = fut.get_loop().create_future()

    def done(f: asyncio.Future) -> None:
        if out.done():
            return
        if f.cancelled():
            out.cancel()
        elif f.exception() is not None:
            out.set_exception(f.exception())
        else:
            try:
                out.set_result(fn(f.result()))
            except BaseException as e:  # noqa: BLE001
                out.set_exception(e)

    def cancel_inner(o: asyncio.Future) -> None:
        if o.cancelled() and not fut.done():
            fut.cancel()

    fut.add_done_callback(done)
    out.add_done_callback(cancel_inner)
    return out


class Poller(_zmq.Poller):
    """A Poller whose ``poll`` returns an awaitable of ``[(socket, events)]``."""

    def poll(self, timeout: Optional[float] = None) -> "asyncio.Future[List[Tuple[Any, int]]]":  # type: ignore[override]
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        ready = _zmq.zmq_poll(self.sockets, 0)
        if ready or timeout == 0:
            fut.set_result(ready)
            return fut
        sub_futures: List[asyncio.Future] = []
        raw: List[Tuple[int, int]] = []

        def check(*_: Any) -> None:
            if fut.done():
                return
            try:
                r = _zmq.zmq_poll(self.sockets, 0)
            except BaseException as e:  # noqa: BLE001
                fut.set_exception(e)
                return
            if r:
                fut.set_result(r)
            else:
                rearm()

        def rearm() -> None:
            # re-watch the sockets whose wake-up found nothing
            for i, f in enumerate(sub_futures):
                if f.done():
                    sub_futures[i] = watch_socket(socks[i][0], socks[i][1])

        def watch_socket(s: Socket, flags: int) -> asyncio.Future:
            f = Socket.poll(s, None, flags)
            f.add_done_callback(check)
            return f

        socks = []
        for obj, flags in self.sockets:
            if isinstance(obj, Socket):
                socks.append((obj, flags))
            elif isinstance(obj, _zmq.Socket):
                # a plain socket: watch it through an asyncio shadow (same native socket)
                socks.append((Socket(obj), flags))
            else:
                fd = obj if isinstance(obj, int) else obj.fileno()
                if flags & POLLIN:
                    loop.add_reader(fd, check)
                    raw.append((fd, POLLIN))
                if flags & POLLOUT:
                    loop.add_writer(fd, check)
                    raw.append((fd, POLLOUT))
        for s, flags in socks:
            sub_futures.append(watch_socket(s, flags))
        timer = None
        if timeout is not None and timeout >= 0:
            timer = loop.call_later(timeout / 1000.0, lambda: fut.done() or fut.set_result([]))

        def cleanup(_: asyncio.Future) -> None:
            if timer is not None:
                timer.cancel()
            for f in sub_futures:
                if not f.done():
                    f.cancel()
            for fd, ev in raw:
                if ev == POLLIN:
                    loop.remove_reader(fd)
                else:
                    loop.remove_writer(fd)

        fut.add_done_callback(cleanup)
        return fut


class Context(_zmq.Context):
    """A Context whose sockets are ``oxmq.asyncio.Socket``."""

    _repr_cls = "zmq.asyncio.Context"

    _socket_class = Socket
    _instance = None
    _instance_pid = None


__all__ = ["Context", "Socket", "Poller"]
