"""Z85 encoding (ZeroMQ RFC 32), as pyzmq's ``zmq.utils.z85``; the codec is
oxmq's (``oxmq::security``), shared with the C ABI."""

from __future__ import annotations

from typing import Union

from oxmq._oxmq import z85_decode as _decode
from oxmq._oxmq import z85_encode as _encode


def encode(rawbytes: bytes) -> bytes:
    """Z85-encode ``rawbytes`` (length a multiple of 4)."""
    return _encode(rawbytes)


def decode(z85bytes: Union[bytes, str]) -> bytes:
    """Decode Z85 text (bytes or str, length a multiple of 5)."""
    return _decode(z85bytes)


__all__ = ["encode", "decode"]
