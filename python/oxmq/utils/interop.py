"""Turning foreign pointers into integer addresses (pyzmq's ``zmq.utils.interop``)."""

from __future__ import annotations

from typing import Any


def cast_int_addr(n: Any) -> int:
    """An int address from an int, a ctypes pointer or a CFFI pointer."""
    if isinstance(n, int):
        return n
    try:
        import cffi  # type: ignore[import-not-found]
    except ImportError:
        pass
    else:
        ffi = cffi.FFI()
        if isinstance(n, ffi.CData):
            return int(ffi.cast("size_t", n))
    import ctypes

    if isinstance(n, ctypes.c_void_p):
        return n.value or 0
    if isinstance(n, ctypes._Pointer):  # type: ignore[attr-defined]
        return ctypes.cast(n, ctypes.c_void_p).value or 0
    raise ValueError(f"Cannot cast {n!r} to int")


__all__ = ["cast_int_addr"]
