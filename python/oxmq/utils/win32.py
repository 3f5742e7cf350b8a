"""Ctrl-C on Windows (pyzmq's ``zmq.utils.win32``): a no-op elsewhere.

On Linux blocking oxmq calls already wake for signals, so ``allow_interrupt``
does nothing but run its block.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Optional


class allow_interrupt:  # noqa: N801 - pyzmq's name
    """Context manager that lets Ctrl-C interrupt blocking calls (Windows only)."""

    def __init__(self, action: Optional[Callable[[], Any]] = None) -> None:
        if os.name == "nt":
            raise NotImplementedError("oxmq does not run on Windows")
        self.action = action

    def __enter__(self) -> "allow_interrupt":
        return self

    def __exit__(self, *args: Any) -> None:
        return None


__all__ = ["allow_interrupt"]
