"""String helpers kept for old pyzmq code (pyzmq's ``zmq.utils.strtypes``)."""

from __future__ import annotations

import warnings
from typing import Any, Union

bytes = bytes  # noqa: A001 - pyzmq exports these names
unicode = str
basestring = (str, bytes)


def cast_bytes(s: Union[str, bytes], encoding: str = "utf8", errors: str = "strict") -> bytes:
    """Encode a str to bytes; bytes are returned unchanged."""
    warnings.warn("zmq.utils.strtypes is deprecated", DeprecationWarning, stacklevel=2)
    if isinstance(s, bytes):
        return s
    if isinstance(s, str):
        return s.encode(encoding, errors)
    raise TypeError(f"Expected unicode or bytes, got {s!r}")


def cast_unicode(s: Union[str, bytes], encoding: str = "utf8", errors: str = "strict") -> str:
    """Decode bytes to a str; a str is returned unchanged."""
    warnings.warn("zmq.utils.strtypes is deprecated", DeprecationWarning, stacklevel=2)
    if isinstance(s, bytes):
        return s.decode(encoding, errors)
    if isinstance(s, str):
        return s
    raise TypeError(f"Expected unicode or bytes, got {s!r}")


b = asbytes = cast_bytes
u = cast_unicode

__all__ = ["asbytes", "bytes", "unicode", "basestring", "b", "u", "cast_bytes", "cast_unicode"]

