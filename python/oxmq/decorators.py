"""``@context`` and ``@socket``: give a function a fresh Context or socket
for the length of each call (pyzmq's ``zmq.decorators``).

``@context()`` passes the Context as an extra positional argument;
``@context('name')`` (or ``name='name'``) passes it as that keyword. Other
arguments go to ``zmq.Context(...)``. ``@socket(zmq.PUB)`` does the same with
a socket of that type, made from the Context found in the call's arguments
(the ``context_name`` keyword, else the first Context among the positional
arguments, else ``zmq.Context.instance()``). Each call gets its own objects,
closed when it returns, so decorated functions are safe in several threads.
"""

from __future__ import annotations

from functools import wraps
from typing import Any, Callable, Optional, Tuple

import oxmq as zmq


def _split_name(args: Tuple[Any, ...], kwargs: dict) -> Tuple[Optional[str], Tuple[Any, ...]]:
    name = kwargs.pop("name", None)
    if args and isinstance(args[0], str):
        if name is not None:
            raise TypeError("name given both as the first argument and as name=")
        name, args = args[0], args[1:]
    return name, args


def _call_with(func: Callable, name: Optional[str], obj: Any, args: Tuple[Any, ...], kwargs: dict) -> Any:
    if name is None:
        return func(*args, obj, **kwargs)
    if name in kwargs:
        raise TypeError(f"{func.__name__}() got multiple values for argument {name!r}")
    kwargs[name] = obj
    return func(*args, **kwargs)


def context(*args: Any, **kwargs: Any) -> Callable[[Callable], Callable]:
    """Decorator: a new ``zmq.Context(*args, **kwargs)`` per call, destroyed after it."""
    name, ctx_args = _split_name(args, kwargs)
    ctx_kwargs = kwargs

    def decorator(func: Callable) -> Callable:
        @wraps(func)
        def wrapper(*fargs: Any, **fkwargs: Any) -> Any:
            with zmq.Context(*ctx_args, **ctx_kwargs) as ctx:
                return _call_with(func, name, ctx, fargs, fkwargs)

        return wrapper

    return decorator


def socket(*args: Any, **kwargs: Any) -> Callable[[Callable], Callable]:
    """Decorator: a new socket per call (``socket(type, **kw)`` on the call's
    Context), closed after it."""
    name, sock_args = _split_name(args, kwargs)
    context_name = kwargs.pop("context_name", None)
    sock_kwargs = kwargs

    def find_context(fargs: Tuple[Any, ...], fkwargs: dict) -> zmq.Context:
        if context_name is not None and fkwargs.get(context_name) is not None:
            return fkwargs[context_name]
        for a in list(fargs) + list(fkwargs.values()):
            if isinstance(a, zmq.Context):
                return a
        return zmq.Context.instance()

    def decorator(func: Callable) -> Callable:
        @wraps(func)
        def wrapper(*fargs: Any, **fkwargs: Any) -> Any:
            ctx = find_context(fargs, fkwargs)
            with ctx.socket(*sock_args, **sock_kwargs) as sock:
                return _call_with(func, name, sock, fargs, fkwargs)

        return wrapper

    return decorator


__all__ = ["context", "socket"]
