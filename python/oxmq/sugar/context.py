"""oxmq.Context: pyzmq's Context API on the native context."""

from __future__ import annotations

from types import GenericAlias

import os
import threading
import warnings
import weakref
from typing import Any, Optional, Type, TypeVar

from oxmq import _oxmq
from oxmq.constants import ContextOption, Errno, SocketOption
from oxmq.error import ZMQError
from oxmq.sugar.socket import Socket
from oxmq.utils.interop import cast_int_addr

T = TypeVar("T", bound="Context")

_CTX_OPTS = ContextOption.__members__
_SOCK_OPTS = SocketOption.__members__


class Context(_oxmq.Context):
    """A ZeroMQ context: makes sockets; ``term()`` ends them.

    Socket options set as attributes (``ctx.linger = 0``) become defaults
    applied to every socket made afterwards; context options
    (``ctx.io_threads``) go to ``zmq_ctx_set``.
    """

    # pyzmq's classes are Generic (``zmq.Context[Any]`` in annotations)
    __class_getitem__ = classmethod(GenericAlias)  # type: ignore[var-annotated]

    _instance: Optional["Context"] = None
    _instance_lock = threading.Lock()
    _instance_pid: Optional[int] = None
    _shadow = False
    _socket_class: Type[Socket] = Socket

    def __new__(cls, io_threads: Any = 1, shadow: Any = 0, **kwargs: Any) -> "Context":
        if isinstance(io_threads, _oxmq.Context):
            shadow = io_threads
        if isinstance(shadow, _oxmq.Context):
            shadow = shadow.underlying
        elif shadow:
            shadow = cast_int_addr(shadow)
        return super().__new__(cls, shadow=shadow)  # type: ignore[call-arg]

    def __init__(self, io_threads: Any = 1, shadow: Any = 0, **kwargs: Any) -> None:
        shadow_obj = None
        if isinstance(io_threads, _oxmq.Context):
            shadow_obj, shadow, io_threads = io_threads, io_threads.underlying, 1
        elif isinstance(shadow, _oxmq.Context):
            shadow_obj = shadow
        object.__setattr__(self, "sockopts", {})
        object.__setattr__(self, "_sockets", weakref.WeakSet())
        object.__setattr__(self, "_pid", os.getpid())
        object.__setattr__(self, "_shadow", bool(shadow))
        object.__setattr__(self, "_shadow_obj", shadow_obj)
        object.__setattr__(self, "_closed_here", False)
        if not isinstance(io_threads, int) or io_threads < 0:
            raise ZMQError(Errno.EINVAL)
        if io_threads != 1 and not shadow:
            self.set(ContextOption.IO_THREADS, io_threads)

    @classmethod
    def shadow(cls: Type[T], address: Any) -> T:
        """Another Context object over the same native context (pyzmq's
        ``Context.shadow``): ``address`` is a Context or its ``underlying``."""
        return cls(shadow=address)

    def __copy__(self: T, memo: Any = None) -> T:
        return self.__class__.shadow(self.underlying)

    __deepcopy__ = __copy__

    @classmethod
    def instance(cls: Type[T], io_threads: int = 1) -> T:
        """The process-wide shared context (made on first use; remade after fork or term)."""
        inst = cls._instance
        if inst is None or inst.closed or cls._instance_pid != os.getpid():
            with cls._instance_lock:
                inst = cls._instance
                if inst is None or inst.closed or cls._instance_pid != os.getpid():
                    inst = cls(io_threads=io_threads)
                    cls._instance = inst
                    cls._instance_pid = os.getpid()
        return inst  # type: ignore[return-value]

    @property
    def closed(self) -> bool:
        """Whether the context was terminated (a shadow: through this object)."""
        if self.__dict__.get("_shadow"):
            return self.__dict__.get("_closed_here", False)
        return self._terminated

    def __enter__(self: T) -> T:
        return self

    def __exit__(self, *args: Any) -> None:
        open_sockets = [s for s in list(self._sockets) if not s.closed]
        if open_sockets:
            warnings.warn(
                f"{len(open_sockets)} socket(s) still open when leaving the Context block: closing them",
                ResourceWarning,
                stacklevel=2,
            )
        self.destroy()

    _repr_cls = "zmq.Context"

    def __repr__(self) -> str:
        cls = self.__class__
        name_cls = cls.__dict__.get("_repr_cls") or f"{cls.__module__}.{cls.__name__}"
        closed = " closed" if self.closed else ""
        n = sum(1 for s in list(self._sockets) if not s.closed)
        sockets = f"{n} socket{'s' if n != 1 else ''}" if n else ""
        return f"<{name_cls}({sockets}) at {hex(id(self))}{closed}>"

    def __dir__(self) -> list:
        keys = list(super().__dir__())
        keys.extend(_CTX_OPTS)
        return keys

    # -- lifecycle -----------------------------------------------------------

    def term(self) -> None:
        """Terminate: blocking calls fail with ETERM; waits until every socket is closed."""
        self._term()
        object.__setattr__(self, "_closed_here", True)

    def destroy(self, linger: Optional[int] = None) -> None:
        """Close every socket of this context (with ``linger`` if given), then terminate."""
        for s in list(self._sockets):
            if not s.closed:
                s.close(linger=linger)
        self.term()

    def socket(self, socket_type: int, socket_class: Optional[Type[Any]] = None, **kwargs: Any) -> Any:
        """Make a socket of ``socket_type`` with this context's default options."""
        if self.closed:
            raise ZMQError(Errno.ENOTSUP)
        if self._terminated:
            # a shadow whose native context was terminated elsewhere (libzmq: EFAULT)
            raise ZMQError(Errno.EFAULT)
        cls = socket_class or self._socket_class
        s = cls(self, socket_type, **kwargs)
        for opt, value in self.sockopts.items():
            try:
                s.setsockopt(opt, value)
            except ZMQError:
                # options that do not apply to this socket type are skipped
                pass
        self._sockets.add(s)
        return s

    # -- options -------------------------------------------------------------

    def set(self, option: int, optval: int) -> None:
        """Set a context option (``zmq_ctx_set``)."""
        self._ctx_set(option, optval)

    def get(self, option: int) -> int:
        """Read a context option (``zmq_ctx_get``)."""
        return self._ctx_get(option)

    def setsockopt(self, opt: int, value: Any) -> None:
        """Set a default socket option for sockets made afterwards."""
        self.sockopts[opt] = value

    def getsockopt(self, opt: int) -> Any:
        """A default socket option set with ``setsockopt``."""
        return self.sockopts[opt]

    def __setattr__(self, key: str, value: Any) -> None:
        if key.startswith("_") or key in self.__dict__ or hasattr(type(self), key):
            object.__setattr__(self, key, value)
            return
        upper = key.upper()
        if upper in _CTX_OPTS:
            self.set(_CTX_OPTS[upper], value)
        elif upper in _SOCK_OPTS:
            self.sockopts[_SOCK_OPTS[upper]] = value
        else:
            object.__setattr__(self, key, value)

    def __getattr__(self, key: str) -> Any:
        if key.startswith("_"):
            raise AttributeError(key)
        upper = key.upper()
        if upper in _CTX_OPTS:
            try:
                return self.get(_CTX_OPTS[upper])
            except ZMQError as e:
                if e.errno in (Errno.EINVAL, Errno.EFAULT):
                    raise AttributeError(f"{key} attribute is write-only") from None
                raise
        if upper in _SOCK_OPTS:
            opt = _SOCK_OPTS[upper]
            if opt in self.sockopts:
                return self.sockopts[opt]
        raise AttributeError(f"{type(self).__name__} has no such option: {upper}")

    def __delattr__(self, key: str) -> None:
        upper = key.upper()
        if upper in _SOCK_OPTS and _SOCK_OPTS[upper] in self.sockopts:
            del self.sockopts[_SOCK_OPTS[upper]]
        else:
            object.__delattr__(self, key)


__all__ = ["Context"]
