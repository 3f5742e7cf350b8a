"""Green Context and Socket: blocking calls wait in gevent's hub."""

from __future__ import annotations

import warnings
from typing import Any, Callable, Optional, TypeVar

from gevent.select import select as _gselect

import oxmq as _zmq
from oxmq.constants import NOBLOCK, POLLIN, RCVTIMEO, SNDTIMEO

T = TypeVar("T")


def _warn_timeo() -> None:
    # pyzmq warns here because its green sockets ignore these timeouts; these
    # sockets apply them, and keep the warning so programs see what pyzmq shows
    warnings.warn(
        "zmq.green: RCVTIMEO/SNDTIMEO are applied by oxmq's green sockets (pyzmq's green sockets ignore them)",
        UserWarning,
        stacklevel=3,
    )


class _Socket(_zmq.Socket):
    """A socket whose blocking calls yield to other greenlets."""

    _repr_cls = "zmq.green.Socket"

    def set(self, option: int, optval: Any) -> None:
        if option in (RCVTIMEO, SNDTIMEO):
            _warn_timeo()
        _zmq.Socket.set(self, option, optval)

    setsockopt = set

    def get(self, option: int) -> Any:
        if option in (RCVTIMEO, SNDTIMEO):
            _warn_timeo()
        return _zmq.Socket.get(self, option)

    getsockopt = get

    def _green(self, op: Callable[[int], T], flags: int, timeout_opt: int) -> T:
        if flags & NOBLOCK:
            return op(flags)
        try:
            return op(flags | NOBLOCK)
        except _zmq.Again:
            pass
        # The core retries it, waiting in gevent's select (oxmq::WaitHook::cooperative).
        return self._green_block(lambda: op(flags | NOBLOCK), timeout_opt, _gselect)

    def send(self, data: Any, flags: int = 0, copy: bool = True, track: bool = False, **kwargs: Any) -> Any:
        return self._green(lambda f: _zmq.Socket.send(self, data, f, copy, track, **kwargs), flags, SNDTIMEO)

    def send_multipart(self, msg_parts: Any, flags: int = 0, copy: bool = True, track: bool = False,
                       **kwargs: Any) -> Any:
        parts = list(msg_parts)
        return self._green(lambda f: _zmq.Socket.send_multipart(self, parts, f, copy, track, **kwargs), flags,
                           SNDTIMEO)

    def send_string(self, u: str, flags: int = 0, copy: bool = True, encoding: str = "utf-8",
                    **kwargs: Any) -> Any:
        return self._green(lambda f: _zmq.Socket.send_string(self, u, f, copy, encoding, **kwargs), flags,
                           SNDTIMEO)

    send_unicode = send_string

    def recv(self, flags: int = 0, copy: bool = True, track: bool = False) -> Any:
        return self._green(lambda f: _zmq.Socket.recv(self, f, copy, track), flags, RCVTIMEO)

    def recv_multipart(self, flags: int = 0, copy: bool = True, track: bool = False) -> Any:
        return self._green(lambda f: _zmq.Socket.recv_multipart(self, f, copy, track), flags, RCVTIMEO)

    def recv_string(self, flags: int = 0, encoding: str = "utf-8") -> Any:
        return self._green(lambda f: _zmq.Socket.recv_string(self, f, encoding), flags, RCVTIMEO)

    recv_unicode = recv_string

    def recv_into(self, buffer: Any, nbytes: int = 0, flags: int = 0) -> int:
        return self._green(lambda f: _zmq.Socket.recv_into(self, buffer, nbytes, f), flags, RCVTIMEO)

    def poll(self, timeout: Optional[float] = None, flags: int = POLLIN) -> int:
        from oxmq.green.poll import _Poller

        p = _Poller()
        p.register(self, flags)
        events = dict(p.poll(timeout))
        return events.get(self, 0)


class _Context(_zmq.Context):
    """A Context whose sockets are green."""

    _socket_class = _Socket
    _repr_cls = "zmq.green.Context"
    _instance = None
    _instance_pid = None


__all__ = ["_Context", "_Socket"]
