"""Version numbers (pyzmq's ``zmq.sugar.version``)."""

from __future__ import annotations

from typing import Tuple

#: The pyzmq API version oxmq follows.
VERSION_MAJOR = 27
VERSION_MINOR = 3
VERSION_PATCH = 0
VERSION_EXTRA = ""
__version__ = f"{VERSION_MAJOR}.{VERSION_MINOR}.{VERSION_PATCH}"
version_info = (VERSION_MAJOR, VERSION_MINOR, VERSION_PATCH)
__revision__ = ""


def pyzmq_version() -> str:
    """The pyzmq API version this package follows."""
    return __version__


def pyzmq_version_info() -> Tuple[int, ...]:
    """The pyzmq API version this package follows, as a tuple."""
    return version_info


def zmq_version() -> str:
    """The libzmq version implemented."""
    return "%i.%i.%i" % zmq_version_info()


def zmq_version_info() -> Tuple[int, int, int]:
    """The libzmq version implemented, as a tuple."""
    from oxmq._oxmq import zmq_version_info as _v

    return tuple(_v())  # type: ignore[return-value]


__all__ = ["zmq_version", "zmq_version_info", "pyzmq_version", "pyzmq_version_info", "__version__", "__revision__"]
