"""oxmq: ZeroMQ rebuilt in Rust, with pyzmq's Python API.

``import oxmq as zmq`` runs pyzmq programs unchanged::

    import oxmq as zmq

    ctx = zmq.Context()
    push = ctx.socket(zmq.PUSH)
    push.bind("tcp://127.0.0.1:5555")
    push.send(b"hello")
"""

from __future__ import annotations

import os as _os
import sys as _sys
import time as _time
import types as _types
from enum import Enum, IntEnum, IntFlag
from typing import Any, Optional, Tuple

from oxmq import backend, constants, error
from oxmq._oxmq import __version__ as __oxmq_version__
from oxmq._oxmq import proxy_steerable, strerror
from oxmq.constants import *  # noqa: F401,F403
from oxmq.error import *  # noqa: F401,F403
from oxmq.sugar import (
    _FINISHED_TRACKER,
    Context,
    Frame,
    Message,
    MessageTracker,
    Poller,
    Socket,
    proxy,
    select,
    zmq_poll,
)

from oxmq import sugar, utils  # noqa: E402  (pyzmq's zmq.sugar / zmq.utils)
from oxmq.backend import IPC_PATH_MAX_LEN

#: The pyzmq API version this package follows (``zmq.pyzmq_version()``).
from oxmq.sugar.version import __revision__, __version__  # noqa: E402

#: Draft sockets (CLIENT/SERVER, RADIO/DISH, ...) are built into oxmq.
PYZMQ_DRAFT_API = True

# pyzmq's names for the plain classes, as opposed to zmq.asyncio's
SyncContext = Context
SyncSocket = Socket


class Stopwatch:
    """Elapsed time in microseconds (pyzmq's ``zmq.Stopwatch``)."""

    def __init__(self) -> None:
        self._start: Optional[int] = None

    def start(self) -> None:
        """Start timing (again, if already started)."""
        self._start = _time.monotonic_ns()

    def stop(self) -> int:
        """Stop and return the microseconds since ``start()``."""
        if self._start is None:
            raise ZMQError(constants.EINVAL, "Must start the Stopwatch before calling stop.")
        elapsed = (_time.monotonic_ns() - self._start) // 1000
        self._start = None
        return elapsed

#: ``copy=False`` sends smaller than this are copied (pyzmq's default). A
#: socket's ``copy_threshold`` starts from it, and ``Frame`` uses it, as in
#: pyzmq; assigning it also switches sockets made afterwards to pyzmq's copy
#: policy (see ``_Module``).
COPY_THRESHOLD = 65536
_DEFAULT_COPY_THRESHOLD = COPY_THRESHOLD


class _Module(_types.ModuleType):
    """This package's module type: forwards run-time settings to the core.

    pyzmq reads ``zmq.COPY_THRESHOLD`` each time it makes a socket or a
    ``Frame``; oxmq's native code keeps a copy, updated on each assignment.
    Putting the original object back (pytest's ``monkeypatch`` undo) counts as
    unset, so oxmq's own policy returns.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "COPY_THRESHOLD":
            from oxmq._oxmq import _set_copy_threshold

            _set_copy_threshold(value, value is not _DEFAULT_COPY_THRESHOLD)
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Module



def zmq_version() -> str:
    """The libzmq version implemented: ``"4.3.5"``."""
    return "%i.%i.%i" % zmq_version_info()


def zmq_version_info() -> Tuple[int, int, int]:
    """The libzmq version implemented, as a tuple: ``(4, 3, 5)``."""
    from oxmq._oxmq import zmq_version_info as _v

    return tuple(_v())  # type: ignore[return-value]


def pyzmq_version() -> str:
    """The pyzmq API version this package follows."""
    return __version__


def pyzmq_version_info() -> Tuple[int, ...]:
    """The pyzmq API version this package follows, as a tuple."""
    return tuple(int(p) for p in __version__.split(".")[:3])


def has(capability: str) -> bool:
    """Whether a libzmq capability (``"ipc"``, ``"curve"``, ``"draft"``...) is available."""
    from oxmq._oxmq import has as _has

    return _has(capability)


def zmq_errno() -> int:
    """The errno of the last failed call (always 0: errors are raised as ZMQError)."""
    return 0


def device(device_type: int, frontend: Socket, backend: Socket) -> None:
    """Legacy ``zmq_device``: the same as ``proxy(frontend, backend)``."""
    proxy(frontend, backend)


def get_includes() -> list:
    """Directories to compile C code against oxmq with, as pyzmq's: the
    package's parent, its ``utils`` folder, and ``include`` with oxmq's
    ``zmq.h`` (libzmq 4.3's API; shipped with the package)."""
    base = _os.path.dirname(_os.path.abspath(__file__))
    return [_os.path.dirname(base), _os.path.join(base, "utils"), _os.path.join(base, "include")]


def get_library_dirs() -> list:
    """The directory holding oxmq's drop-in ``libzmq.so`` (its C ABI, shipped
    with the package), to link C code against with ``-lzmq``; named ``zmq``
    as pyzmq's is."""
    return [_os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "_capi", "zmq")]


def curve_keypair() -> Tuple[bytes, bytes]:
    """A new CURVE key pair ``(public, secret)``, each 40 Z85 characters (bytes)."""
    from oxmq._oxmq import curve_keypair as _keypair

    return _keypair()


def curve_public(secret_key: Any) -> bytes:
    """The Z85 public key of a Z85 (or raw 32-byte) CURVE secret key."""
    from oxmq._oxmq import curve_public as _public

    if isinstance(secret_key, str):
        secret_key = secret_key.encode("ascii")
    return _public(secret_key)


__all__ = [
    "Enum",
    "IntEnum",
    "IntFlag",
    "IPC_PATH_MAX_LEN",
    "PYZMQ_DRAFT_API",
    "Stopwatch",
    "SyncContext",
    "SyncSocket",
    "__revision__",
    "Context",
    "Socket",
    "Frame",
    "Message",
    "MessageTracker",
    "Poller",
    "select",
    "zmq_poll",
    "proxy",
    "proxy_steerable",
    "device",
    "zmq_version",
    "zmq_version_info",
    "pyzmq_version",
    "pyzmq_version_info",
    "has",
    "strerror",
    "zmq_errno",
    "COPY_THRESHOLD",
    "constants",
    "error",
] + constants.__all__ + error.__all__
