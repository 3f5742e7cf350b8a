"""Make ``import zmq`` (and every ``zmq.X``) resolve to oxmq, on request only.

Installed at interpreter start-up by the ``oxmq-as-zmq.pth`` file that comes
with the wheel, but only when the environment variable ``OXMQ_AS_ZMQ`` is set
to a true value (``python -m oxmq.run`` sets it). Without it nothing is
installed, so a real pyzmq in the same environment is never shadowed by
accident. The variable is inherited, which is what makes child processes
(Jupyter's kernel, multiprocessing spawn, ``subprocess``) follow the parent.

``zmq.X`` is an alias of ``oxmq.X``: the same module object, so classes keep
one identity whichever name imported them. ``python -m zmq.X`` works too: the
loader hands runpy oxmq's code for the module.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from types import ModuleType
from typing import Any, Optional, Sequence

ENV_VAR = "OXMQ_AS_ZMQ"
_ALIAS = "zmq"
_TARGET = "oxmq"


def requested(environ: Any = None) -> bool:
    """Whether the environment asks for ``zmq`` to be oxmq."""
    value = (environ if environ is not None else os.environ).get(ENV_VAR, "")
    return value.strip().lower() not in ("", "0", "false", "no", "off")


def _target_name(fullname: str) -> str:
    return _TARGET + fullname[len(_ALIAS) :]


class _AliasLoader(importlib.abc.Loader):
    """Loads ``zmq.X`` by importing ``oxmq.X`` and returning that module."""

    def __init__(self, target_spec: importlib.machinery.ModuleSpec) -> None:
        self._target_spec = target_spec

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self._target_spec.name)
        # importlib overwrites __spec__ on the module it is given; keep oxmq's.
        self._saved_spec = getattr(module, "__spec__", None)
        return module

    def exec_module(self, module: ModuleType) -> None:
        saved = getattr(self, "_saved_spec", None)
        if saved is not None:
            module.__spec__ = saved

    # runpy (``python -m zmq.X``) and tracebacks ask the loader for code and source.
    def _delegate(self) -> Any:
        return self._target_spec.loader

    def get_code(self, fullname: str) -> Any:
        return self._delegate().get_code(self._target_spec.name)

    def get_source(self, fullname: str) -> Any:
        return self._delegate().get_source(self._target_spec.name)

    def get_filename(self, fullname: str) -> str:
        return self._target_spec.origin or ""

    def is_package(self, fullname: str) -> bool:
        return self._target_spec.submodule_search_locations is not None


class ZmqAliasFinder(importlib.abc.MetaPathFinder):
    """Meta path finder answering for ``zmq`` and ``zmq.*`` with oxmq's modules."""

    def find_spec(
        self, fullname: str, path: Optional[Sequence[str]] = None, target: Optional[ModuleType] = None
    ) -> Optional[importlib.machinery.ModuleSpec]:
        if fullname != _ALIAS and not fullname.startswith(_ALIAS + "."):
            return None
        target_name = _target_name(fullname)
        try:
            target_spec = importlib.util.find_spec(target_name)
        except (ImportError, ValueError):
            target_spec = None
        if target_spec is None:
            # oxmq has no such module: fail as a missing module would, rather
            # than falling through to a real pyzmq.
            raise ModuleNotFoundError(f"No module named {fullname!r} (oxmq has no {target_name!r})", name=fullname)
        spec = importlib.machinery.ModuleSpec(
            fullname,
            _AliasLoader(target_spec),
            origin=target_spec.origin,
            is_package=target_spec.submodule_search_locations is not None,
        )
        if target_spec.submodule_search_locations is not None:
            spec.submodule_search_locations = list(target_spec.submodule_search_locations)
        spec.has_location = target_spec.has_location
        return spec


def install() -> None:
    """Put the alias finder first on ``sys.meta_path`` (idempotent)."""
    if not any(isinstance(f, ZmqAliasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, ZmqAliasFinder())
    # A zmq imported before the hook (it should not happen) would win; drop it.
    mod = sys.modules.get(_ALIAS)
    if mod is not None and not getattr(mod, "__name__", "").startswith(_TARGET):
        for name in [n for n in sys.modules if n == _ALIAS or n.startswith(_ALIAS + ".")]:
            del sys.modules[name]


def _startup() -> None:
    """Called from the .pth file at every interpreter start: cheap when not asked."""
    if requested():
        install()
