"""oxmq.Socket: pyzmq's Socket API on the native socket.

Sending and receiving methods (``send``, ``recv``, ``send_multipart``,
``recv_multipart``, ``send_string``, ``recv_string``, ``recv_into``) are the
native methods themselves: no Python frame on the hot path. This class adds
the conveniences that are not on it.
"""

from __future__ import annotations

from types import GenericAlias

import json
from errno import ENAMETOOLONG
import pickle
import random
import weakref
from typing import Any, Callable, Dict, List, Optional, Sequence, TypeVar, Union

from oxmq import _oxmq
from oxmq.constants import (
    EFAULT,
    EINVAL,
    ENOTSUP,
    LAST_ENDPOINT,

    RCVHWM,
    SNDHWM,
    SUBSCRIBE,
    UNSUBSCRIBE,
    SocketOption,
    SocketType,
)
from oxmq.error import ZMQBindError, ZMQError
from oxmq.utils.interop import cast_int_addr

T = TypeVar("T", bound="Socket")

# underlying address -> the first Python object over that native socket
_origins: "weakref.WeakValueDictionary[int, Any]" = weakref.WeakValueDictionary()

_OPTIONS = SocketOption.__members__
_native_get = _oxmq.Socket.get
_native_recv_into = _oxmq.Socket.recv_into

# libzmq 4.3.5's values for options the core does not implement yet; read-back only
_FALLBACK_DEFAULTS: Dict[int, Callable[[Any], Any]] = {
    SocketOption.IPV4ONLY: lambda s: int(not _native_get(s, SocketOption.IPV6)),
    SocketOption.MULTICAST_MAXTPDU: lambda s: 1500,
    SocketOption.USE_FD: lambda s: -1,
    SocketOption.LOOPBACK_FASTPATH: lambda s: 0,
    SocketOption.MULTICAST_LOOP: lambda s: 1,
    SocketOption.ZAP_ENFORCE_DOMAIN: lambda s: 0,
}
_BYTES_OPTS = {int(o) for o in SocketOption if o._opt_type == "bytes"}


class _SocketContext:
    """What ``bind``/``connect`` return: leaving the ``with`` block undoes them."""

    def __init__(self, socket: "Socket", kind: str, addr: str) -> None:
        self.socket = socket
        self.kind = kind
        self.addr = addr

    def __enter__(self) -> "Socket":
        return self.socket

    def __exit__(self, *exc: Any) -> None:
        if self.socket.closed:
            return
        if self.kind == "bind":
            self.socket.unbind(self.addr)
        else:
            self.socket.disconnect(self.addr)

    def __repr__(self) -> str:
        return f"<SocketContext({self.kind}={self.addr!r})>"


def _annotated(cls: type, key: str) -> bool:
    """Whether a subclass declares ``key`` as an attribute (``name: type``)."""
    return any(key in klass.__dict__.get("__annotations__", {}) for klass in cls.__mro__)


def _explain(e: ZMQError, addr: str) -> None:
    """Add the address to a bind/connect error, and say why an ipc path failed."""
    from oxmq.backend import IPC_PATH_MAX_LEN

    if addr.startswith("ipc://") and len(addr) - 6 > IPC_PATH_MAX_LEN and e.errno in (EINVAL, ENAMETOOLONG):
        e.strerror = (
            f"ipc path \"{addr[6:]}\" is longer than {IPC_PATH_MAX_LEN} characters "
            "(sizeof(sockaddr_un.sun_path)). zmq.IPC_PATH_MAX_LEN constant can be used "
            "to check addr length (if it is defined)."
        )
    e.strerror += f" (addr={addr!r})"


def _addr(addr: Union[str, bytes]) -> str:
    if isinstance(addr, bytes):
        return addr.decode("utf-8")
    if not isinstance(addr, str):
        raise TypeError(f"expected str, got: {addr!r}")
    return addr


class Socket(_oxmq.Socket):
    """A ZeroMQ socket; create it with ``Context.socket(type)``.

    Options are attributes: ``sock.linger = 0``, ``sock.rcvhwm``, ``sock.identity``.
    """

    # pyzmq's classes are Generic (``zmq.Context[Any]`` in annotations)
    __class_getitem__ = classmethod(GenericAlias)  # type: ignore[var-annotated]

    _shadow = False
    _shadow_obj: Any = None

    def __new__(cls, ctx: Any = None, socket_type: int = 0, *, shadow: Any = 0, **kwargs: Any) -> "Socket":
        if isinstance(ctx, _oxmq.Socket):
            shadow = ctx.underlying
        elif isinstance(shadow, _oxmq.Socket):
            shadow = shadow.underlying
        elif shadow:
            shadow = cast_int_addr(shadow)
        if shadow:
            return super().__new__(cls, None, 0, shadow=shadow)  # type: ignore[call-arg]
        return super().__new__(cls, ctx, socket_type)  # type: ignore[call-arg]

    def __init__(self, ctx: Any = None, socket_type: int = 0, *, shadow: Any = 0, **kwargs: Any) -> None:
        shadow_obj = None
        if isinstance(ctx, _oxmq.Socket):
            shadow_obj, ctx = ctx, None
        elif isinstance(shadow, _oxmq.Socket):
            shadow_obj = shadow
        if shadow_obj is not None or shadow:
            origin = shadow_obj if shadow_obj is not None else _origins.get(self.underlying)
            if ctx is None and origin is not None:
                ctx = origin.__dict__.get("context")
            object.__setattr__(self, "_shadow", True)
            object.__setattr__(self, "_shadow_obj", shadow_obj)
        else:
            _origins[self.underlying] = self
        object.__setattr__(self, "context", ctx)
        copy_threshold = kwargs.get("copy_threshold")
        if copy_threshold is not None:
            self.copy_threshold = copy_threshold

    @classmethod
    def shadow(cls: Any, address: Any) -> Any:
        """Another Socket object over the same native socket (pyzmq's
        ``Socket.shadow``): ``address`` is a Socket or its ``underlying``."""
        if isinstance(address, _oxmq.Socket):
            return cls(address)
        return cls(shadow=address)

    def __copy__(self, memo: Any = None) -> Any:
        return self.__class__.shadow(self.underlying)

    __deepcopy__ = __copy__

    def __reduce__(self) -> Any:
        raise TypeError(f"cannot pickle {self.__class__.__name__!r} object: sockets cannot be pickled")

    # -- attributes as socket options ------------------------------------

    def __getattr__(self, key: str) -> Any:
        if key.startswith("_"):
            raise AttributeError(key)
        upper = key.upper()
        opt = _OPTIONS.get(upper)
        if opt is None:
            raise AttributeError(f"{type(self).__name__} has no such option: {upper}")
        try:
            return self.get(opt)
        except ZMQError as e:
            if e.errno in (EINVAL, EFAULT):
                raise AttributeError(f"{key} attribute is write-only") from None
            raise

    def __setattr__(self, key: str, value: Any) -> None:
        if key.startswith("_") or key in self.__dict__:
            object.__setattr__(self, key, value)
            return
        lower = key.lower()
        if lower in ("subscribe", "unsubscribe"):
            # ``sock.subscribe = "topic"`` subscribes, as in pyzmq
            if isinstance(value, str):
                value = value.encode("utf-8")
            self.set(SUBSCRIBE if lower == "subscribe" else UNSUBSCRIBE, value)
            return
        if hasattr(type(self), key) or _annotated(type(self), key):
            object.__setattr__(self, key, value)
            return
        opt = _OPTIONS.get(key.upper())
        if opt is None:
            raise AttributeError(f"{type(self).__name__} has no such option: {key.upper()}")
        self.set(opt, value)

    def __dir__(self) -> List[str]:
        keys = list(super().__dir__())
        keys.extend(_OPTIONS)  # pyzmq lists the option names in upper case
        keys.extend(n.lower() for n in _OPTIONS)
        return keys

    def get(self, option: int) -> Any:
        """Read a socket option: int or bytes (CURVE keys as Z85)."""
        try:
            return _native_get(self, option)
        except ZMQError as e:
            # options libzmq knows and the core does not (yet): libzmq's defaults
            if e.errno == EINVAL and option in _FALLBACK_DEFAULTS and not self.closed:
                return _FALLBACK_DEFAULTS[option](self)
            raise

    getsockopt = get

    def recv_into(self, buffer: Any, nbytes: int = 0, flags: int = 0) -> int:
        """Receive one frame into ``buffer`` (writable, contiguous); returns the
        frame's size, which is larger than ``nbytes`` when it was truncated."""
        view = memoryview(buffer)
        if view.readonly:
            raise BufferError("recv_into needs a writable buffer")
        if not view.c_contiguous:
            raise BufferError("recv_into needs a contiguous buffer")
        if nbytes < 0:
            raise ValueError(f"nbytes={nbytes!r} must be non-negative")
        if nbytes > view.nbytes:
            raise ValueError(f"nbytes={nbytes} is larger than the buffer ({view.nbytes} bytes)")
        return _native_recv_into(self, buffer, nbytes, flags)

    # -- lifecycle --------------------------------------------------------

    def __enter__(self: T) -> T:
        return self

    def __exit__(self, *args: Any) -> None:
        self.close()

    _repr_cls = "zmq.Socket"

    def __repr__(self) -> str:
        cls = self.__class__
        # pyzmq's names for its own classes; a subclass shows its own
        name_cls = cls.__dict__.get("_repr_cls") or f"{cls.__module__}.{cls.__name__}"
        closed = " closed" if self.closed else ""
        try:
            name = SocketType(self.type).name
        except ValueError:
            name = str(self.type)
        return f"<{name_cls}(zmq.{name}) at {hex(id(self))}{closed}>"

    @property
    def type(self) -> int:
        """The socket type (``zmq.SocketType``)."""
        return SocketType(self._type)

    @property
    def socket_type(self) -> int:
        """The socket type (``zmq.SocketType``)."""
        return self.type

    # -- endpoints ---------------------------------------------------------

    def bind(self, addr: Union[str, bytes]) -> _SocketContext:
        """Accept connections on ``addr``; usable as a context manager (unbinds on exit)."""
        addr = _addr(addr)
        try:
            self._bind(addr)
        except ZMQError as e:
            _explain(e, addr)
            raise
        # Unbind what the bind resolved to (pyzmq does the same): libzmq
        # does not find a wildcard form such as tcp://127.0.0.1:* again.
        try:
            addr = self.get(LAST_ENDPOINT).decode("utf8")
        except (ZMQError, UnicodeDecodeError):
            pass
        return _SocketContext(self, "bind", addr)

    def connect(self, addr: Union[str, bytes]) -> _SocketContext:
        """Connect to ``addr``; usable as a context manager (disconnects on exit)."""
        addr = _addr(addr)
        try:
            self._connect(addr)
        except ZMQError as e:
            _explain(e, addr)
            raise
        return _SocketContext(self, "connect", addr)

    def bind_to_random_port(
        self,
        addr: str,
        min_port: int = 49152,
        max_port: int = 65536,
        max_tries: int = 100,
    ) -> int:
        """Bind to a random port on ``addr`` (e.g. ``tcp://127.0.0.1``); returns the port."""
        if min_port == 49152 and max_port == 65536:
            # let the OS choose (within the ephemeral range)
            self.bind(f"{addr}:*")
            url = self.last_endpoint.decode("ascii", "replace")
            return int(url.rsplit(":", 1)[-1])
        for _ in range(max_tries):
            port = random.randrange(min_port, max_port)
            try:
                self.bind(f"{addr}:{port}")
            except ZMQError as e:
                if e.errno in (ENOTSUP,):
                    raise
                continue
            return port
        raise ZMQBindError("Could not bind socket to random port.")

    # -- options -------------------------------------------------------------

    setsockopt = _oxmq.Socket.set

    def set_string(self, option: int, optval: str, encoding: str = "utf-8") -> None:
        """Set a byte-string option from a str."""
        if not isinstance(optval, str):
            raise TypeError(f"unicode strings only, got: {optval!r}")
        self.set(option, optval.encode(encoding))

    setsockopt_string = set_string
    setsockopt_unicode = set_string

    def get_string(self, option: int, encoding: str = "utf-8") -> str:
        """Read a byte-string option as a str."""
        if option not in _BYTES_OPTS:
            raise TypeError(f"option {option} will not return a string to be decoded")
        return self.get(option).decode(encoding)

    getsockopt_string = get_string
    getsockopt_unicode = get_string

    @property
    def hwm(self) -> int:
        """SNDHWM (reading); setting sets both SNDHWM and RCVHWM."""
        try:
            return self.get(SNDHWM)
        except ZMQError:
            return self.get(RCVHWM)

    @hwm.setter
    def hwm(self, value: int) -> None:
        errors = 0
        for opt in (SNDHWM, RCVHWM):
            try:
                self.set(opt, value)
            except ZMQError:
                errors += 1
        if errors == 2:
            raise ZMQError(EINVAL)

    def subscribe(self, topic: Union[str, bytes]) -> None:
        """Subscribe to ``topic`` (SUB/XSUB)."""
        if isinstance(topic, str):
            topic = topic.encode("utf-8")
        self.set(SUBSCRIBE, topic)

    def unsubscribe(self, topic: Union[str, bytes]) -> None:
        """Cancel a subscription to ``topic``."""
        if isinstance(topic, str):
            topic = topic.encode("utf-8")
        self.set(UNSUBSCRIBE, topic)

    # -- serialisation ---------------------------------------------------

    send_unicode = _oxmq.Socket.send_string
    recv_unicode = _oxmq.Socket.recv_string

    def send_json(self, obj: Any, flags: int = 0, **kwargs: Any) -> Any:
        """Send a Python object as a JSON message (utf-8)."""
        send_kwargs = {k: kwargs.pop(k) for k in ("routing_id", "group") if k in kwargs}
        msg = json.dumps(obj, separators=(",", ":"), **kwargs).encode("utf-8")
        return self.send(msg, flags=flags, **send_kwargs)

    def recv_json(self, flags: int = 0, **kwargs: Any) -> Any:
        """Receive a JSON message and decode it."""
        return json.loads(self.recv(flags), **kwargs)

    def send_pyobj(self, obj: Any, flags: int = 0, protocol: int = pickle.DEFAULT_PROTOCOL, **kwargs: Any) -> Any:
        """Send a Python object as a pickle."""
        return self.send(pickle.dumps(obj, protocol), flags=flags, **kwargs)

    def recv_pyobj(self, flags: int = 0) -> Any:
        """Receive a pickled Python object."""
        return pickle.loads(self.recv(flags))

    def send_serialized(self, msg: Any, serialize: Callable[[Any], Sequence[Any]], flags: int = 0, copy: bool = True, **kwargs: Any) -> Any:
        """Send ``serialize(msg)`` (a list of frames) as one message."""
        frames = serialize(msg)
        return self.send_multipart(frames, flags=flags, copy=copy, **kwargs)

    def recv_serialized(self, deserialize: Callable[[List[Any]], Any], flags: int = 0, copy: bool = True) -> Any:
        """Receive a message and return ``deserialize(frames)``."""
        frames = self.recv_multipart(flags=flags, copy=copy)
        return deserialize(frames)

    # -- monitor -----------------------------------------------------------

    def get_monitor_socket(self, events: Optional[int] = None, addr: Optional[str] = None) -> Any:
        """Start monitoring (all events unless ``events`` says otherwise) and
        return a PAIR socket that receives them, as pyzmq does."""
        current = self.__dict__.get("_monitor_socket")
        if current is not None and not current.closed:
            return current
        if addr is None:
            addr = f"inproc://monitor.s-{self.fileno()}"
        if events is None:
            events = 0xFFFF
        self.monitor(addr, events)
        mon = self.context.socket(SocketType.PAIR)
        mon.connect(addr)
        object.__setattr__(self, "_monitor_socket", mon)
        return mon

    def disable_monitor(self) -> None:
        """Stop monitoring this socket."""
        object.__setattr__(self, "_monitor_socket", None)
        self.monitor(None, 0)


__all__ = ["Socket"]

