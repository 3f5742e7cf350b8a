"""Proxy devices: a device with a monitor (capture) socket, and the steerable
form with a control socket (pyzmq's ``zmq.devices.proxydevice`` /
``zmq.devices.proxysteerabledevice``)."""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

import oxmq as zmq
from oxmq.devices.basedevice import Device, ProcessDevice, ThreadDevice


class ProxyBase:
    """Adds the monitor socket (``mon_type``, PUB by default) to a Device."""

    def __init__(self, in_type: int, out_type: int, mon_type: int = zmq.PUB) -> None:
        Device.__init__(self, zmq.QUEUE, in_type, out_type)  # type: ignore[arg-type]
        self.mon_type = mon_type
        self._mon_binds: List[str] = []
        self._mon_connects: List[str] = []
        self._mon_sockopts: List[Tuple[int, Any]] = []

    def bind_mon(self, addr: str) -> None:
        """Bind the monitor socket to ``addr`` when the device starts."""
        self._mon_binds.append(addr)

    def bind_mon_to_random_port(self, addr: str, *args: Any, **kwargs: Any) -> int:
        """Reserve a random port on ``addr`` for the monitor socket."""
        port = self._reserve_random_port(addr, *args, **kwargs)  # type: ignore[attr-defined]
        self.bind_mon(f"{addr}:{port}")
        return port

    def connect_mon(self, addr: str) -> None:
        """Connect the monitor socket to ``addr`` when the device starts."""
        self._mon_connects.append(addr)

    def setsockopt_mon(self, opt: int, value: Any) -> None:
        """Set an option on the monitor socket when the device starts."""
        self._mon_sockopts.append((opt, value))

    def _setup_sockets(self) -> Tuple[zmq.Socket, zmq.Socket, zmq.Socket]:
        ins, outs = Device._setup_sockets(self)  # type: ignore[arg-type]
        ctx = self._context  # type: ignore[attr-defined]
        mons = ctx.socket(self.mon_type)
        self._sockets.append(mons)  # type: ignore[attr-defined]
        for opt, value in self._mon_sockopts:
            mons.setsockopt(opt, value)
        for iface in self._mon_binds:
            mons.bind(iface)
        for iface in self._mon_connects:
            mons.connect(iface)
        return ins, outs, mons

    def run_device(self) -> None:
        ins, outs, mons = self._setup_sockets()
        zmq.proxy(ins, outs, mons)


class Proxy(ProxyBase, Device):
    """A proxy with a monitor socket, run in the foreground."""


class ThreadProxy(ProxyBase, ThreadDevice):
    """A proxy with a monitor socket, in a thread."""


class ProcessProxy(ProxyBase, ProcessDevice):
    """A proxy with a monitor socket, in a child process."""


class ProxySteerableBase(ProxyBase):
    """Adds the control socket (``ctrl_type``) of ``zmq.proxy_steerable``."""

    def __init__(self, in_type: int, out_type: int, mon_type: int = zmq.PUB, ctrl_type: Optional[int] = None) -> None:
        super().__init__(in_type=in_type, out_type=out_type, mon_type=mon_type)
        self.ctrl_type = ctrl_type
        self._ctrl_binds: List[str] = []
        self._ctrl_connects: List[str] = []
        self._ctrl_sockopts: List[Tuple[int, Any]] = []

    def bind_ctrl(self, addr: str) -> None:
        """Bind the control socket to ``addr`` when the device starts."""
        self._ctrl_binds.append(addr)

    def bind_ctrl_to_random_port(self, addr: str, *args: Any, **kwargs: Any) -> int:
        """Reserve a random port on ``addr`` for the control socket."""
        port = self._reserve_random_port(addr, *args, **kwargs)  # type: ignore[attr-defined]
        self.bind_ctrl(f"{addr}:{port}")
        return port

    def connect_ctrl(self, addr: str) -> None:
        """Connect the control socket to ``addr`` when the device starts."""
        self._ctrl_connects.append(addr)

    def setsockopt_ctrl(self, opt: int, value: Any) -> None:
        """Set an option on the control socket when the device starts."""
        self._ctrl_sockopts.append((opt, value))

    def _setup_sockets(self) -> Any:
        ins, outs, mons = super()._setup_sockets()
        ctx = self._context  # type: ignore[attr-defined]
        ctrls = ctx.socket(self.ctrl_type)
        self._sockets.append(ctrls)  # type: ignore[attr-defined]
        for opt, value in self._ctrl_sockopts:
            ctrls.setsockopt(opt, value)
        for iface in self._ctrl_binds:
            ctrls.bind(iface)
        for iface in self._ctrl_connects:
            ctrls.connect(iface)
        return ins, outs, mons, ctrls

    def run_device(self) -> None:
        ins, outs, mons, ctrls = self._setup_sockets()
        zmq.proxy_steerable(ins, outs, mons, ctrls)


class ProxySteerable(ProxySteerableBase, Device):
    """A steerable proxy run in the foreground."""


class ThreadProxySteerable(ProxySteerableBase, ThreadDevice):
    """A steerable proxy in a thread."""


class ProcessProxySteerable(ProxySteerableBase, ProcessDevice):
    """A steerable proxy in a child process."""


__all__ = [
    "Proxy",
    "ThreadProxy",
    "ProcessProxy",
    "ProxySteerable",
    "ThreadProxySteerable",
    "ProcessProxySteerable",
]
