"""JSON to and from bytes (pyzmq's ``zmq.utils.jsonapi``)."""

from __future__ import annotations

import json
from typing import Any, Union

#: the json module used (pyzmq's attribute)
jsonmod = json


def dumps(o: Any, **kwargs: Any) -> bytes:
    """Serialize ``o`` to JSON, encoded as utf-8 bytes."""
    return json.dumps(o, **kwargs).encode("utf8")


def loads(s: Union[bytes, str], **kwargs: Any) -> Any:
    """Load JSON from bytes (utf-8) or str."""
    if isinstance(s, (bytes, bytearray, memoryview)):
        s = bytes(s).decode("utf8")
    return json.loads(s, **kwargs)


__all__ = ["dumps", "loads"]
