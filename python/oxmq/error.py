"""Exceptions, as pyzmq raises them."""

from __future__ import annotations

from typing import Optional


class ZMQBaseError(Exception):
    """Base exception class for all oxmq errors."""


class ZMQError(ZMQBaseError):
    """An error from libzmq's API: ``errno`` and libzmq's message in ``strerror``."""

    errno: Optional[int] = None
    strerror: str

    def __init__(self, errno: Optional[int] = None, msg: Optional[str] = None) -> None:
        from oxmq._oxmq import strerror

        if errno is None:
            import errno as _errno_mod  # noqa: F401  (pyzmq would read zmq_errno())

            errno = 0
        self.errno = errno
        self.strerror = msg if msg is not None else strerror(errno)
        super().__init__(self.strerror)

    def __str__(self) -> str:
        return self.strerror

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}('{self}')"


class ZMQBindError(ZMQBaseError):
    """Raised when ``bind_to_random_port`` finds no free port."""


class NotDone(ZMQBaseError):
    """Raised when a ``MessageTracker`` times out."""


class ContextTerminated(ZMQError):
    """The context was terminated (ETERM)."""

    def __init__(self, errno: object = "ignored", msg: object = "ignored") -> None:
        from oxmq.constants import ETERM

        super().__init__(ETERM)


class Again(ZMQError):
    """The operation would block (EAGAIN)."""

    def __init__(self, errno: object = "ignored", msg: object = "ignored") -> None:
        from oxmq.constants import EAGAIN

        super().__init__(EAGAIN)


class InterruptedSystemCall(ZMQError, InterruptedError):
    """A blocking call was interrupted by a signal (EINTR)."""

    def __init__(self, errno: object = "ignored", msg: object = "ignored") -> None:
        from oxmq.constants import EINTR

        super().__init__(EINTR)

    def __str__(self) -> str:
        s = super().__str__()
        return s + ": This call should have been retried. Please report this to pyzmq."


class ZMQVersionError(NotImplementedError):
    """Raised when a feature is not provided by the linked libzmq version."""

    min_version = None

    def __init__(self, min_version: str, msg: str = "Feature") -> None:
        from oxmq import zmq_version

        self.msg = msg
        self.min_version = min_version
        self.version = zmq_version()

    def __repr__(self) -> str:
        return f"ZMQVersionError('{self}')"

    def __str__(self) -> str:
        return f"{self.msg} requires libzmq >= {self.min_version}, have {self.version}"


class DraftFDWarning(RuntimeWarning):
    """Warning for using the FD of a thread-safe (draft) socket."""

    def __init__(self, msg: str = "") -> None:
        if not msg:
            msg = "Draft socket types are not supported by oxmq"
        super().__init__(msg)


def _check_rc(rc: int, errno: Optional[int] = None, error_without_errno: bool = True) -> None:
    """Raise the right ZMQError for a non-zero return code (pyzmq compatibility)."""
    if rc == -1:
        if errno is None:
            errno = 0
        from oxmq.constants import EAGAIN, ETERM

        if errno == EAGAIN:
            raise Again(errno)
        if errno == ETERM:
            raise ContextTerminated(errno)
        raise ZMQError(errno)


__all__ = [
    "ZMQBaseError",
    "ZMQBindError",
    "ZMQError",
    "NotDone",
    "ContextTerminated",
    "InterruptedSystemCall",
    "Again",
    "ZMQVersionError",
    "DraftFDWarning",
]
