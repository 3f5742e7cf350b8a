"""Devices run in the foreground, a thread or a process (pyzmq's ``zmq.devices.basedevice``)."""

from __future__ import annotations

import time
from multiprocessing import Process
from threading import Thread
from typing import Any, Callable, List, Optional, Tuple

import oxmq as zmq
from oxmq.constants import QUEUE


class Device:
    """A 0MQ device: two sockets (``in_type``, ``out_type``) joined by ``zmq.device``.

    The sockets are made, configured (``setsockopt_in/out``), bound and
    connected (``bind_in``, ``connect_out``, ...) only when the device runs,
    in whatever thread or process runs it.
    """

    context_factory: Callable[[], zmq.Context] = zmq.Context.instance
    _context: Optional[zmq.Context] = None

    def __init__(self, device_type: int = QUEUE, in_type: Optional[int] = None, out_type: Optional[int] = None) -> None:
        self.device_type = device_type
        if in_type is None:
            raise TypeError("in_type must be specified")
        if out_type is None:
            raise TypeError("out_type must be specified")
        self.in_type = in_type
        self.out_type = out_type
        self._in_binds: List[str] = []
        self._in_connects: List[str] = []
        self._in_sockopts: List[Tuple[int, Any]] = []
        self._out_binds: List[str] = []
        self._out_connects: List[str] = []
        self._out_sockopts: List[Tuple[int, Any]] = []
        self._random_addrs: List[str] = []
        self.daemon = True
        self.done = False

    def bind_in(self, addr: str) -> None:
        """Bind the in socket to ``addr`` when the device starts."""
        self._in_binds.append(addr)

    def bind_in_to_random_port(self, addr: str, *args: Any, **kwargs: Any) -> int:
        """Reserve a random port on ``addr`` now; the in socket binds it when the device starts."""
        port = self._reserve_random_port(addr, *args, **kwargs)
        self.bind_in(f"{addr}:{port}")
        return port

    def connect_in(self, addr: str) -> None:
        """Connect the in socket to ``addr`` when the device starts."""
        self._in_connects.append(addr)

    def setsockopt_in(self, opt: int, value: Any) -> None:
        """Set an option on the in socket when the device starts."""
        self._in_sockopts.append((opt, value))

    def bind_out(self, addr: str) -> None:
        """Bind the out socket to ``addr`` when the device starts."""
        self._out_binds.append(addr)

    def bind_out_to_random_port(self, addr: str, *args: Any, **kwargs: Any) -> int:
        """Reserve a random port on ``addr`` now; the out socket binds it when the device starts."""
        port = self._reserve_random_port(addr, *args, **kwargs)
        self.bind_out(f"{addr}:{port}")
        return port

    def connect_out(self, addr: str) -> None:
        """Connect the out socket to ``addr`` when the device starts."""
        self._out_connects.append(addr)

    def setsockopt_out(self, opt: int, value: Any) -> None:
        """Set an option on the out socket when the device starts."""
        self._out_sockopts.append((opt, value))

    def _reserve_random_port(self, addr: str, *args: Any, **kwargs: Any) -> int:
        # bind a throwaway socket to learn a free port, then release it for the device
        with zmq.Context() as ctx:
            with ctx.socket(zmq.PUSH) as binder:
                for _ in range(5):
                    port = binder.bind_to_random_port(addr, *args, **kwargs)
                    new_addr = f"{addr}:{port}"
                    if new_addr in self._random_addrs:
                        continue
                    self._random_addrs.append(new_addr)
                    break
                else:
                    raise zmq.ZMQBindError("Could not reserve random port.")
        return port

    def _setup_sockets(self) -> Tuple[zmq.Socket, zmq.Socket]:
        ctx = self.context_factory()  # type: ignore[misc,call-arg]
        self._context = ctx
        ins = ctx.socket(self.in_type)
        self._sockets = [ins]
        if self.out_type < 0:
            outs = ins
        else:
            outs = ctx.socket(self.out_type)
            self._sockets.append(outs)
        for opt, value in self._in_sockopts:
            ins.setsockopt(opt, value)
        for opt, value in self._out_sockopts:
            outs.setsockopt(opt, value)
        for iface in self._in_binds:
            ins.bind(iface)
        for iface in self._out_binds:
            outs.bind(iface)
        for iface in self._in_connects:
            ins.connect(iface)
        for iface in self._out_connects:
            outs.connect(iface)
        return ins, outs

    def run_device(self) -> None:
        """Make the sockets and run the device in this thread (returns when the context ends)."""
        ins, outs = self._setup_sockets()
        zmq.device(self.device_type, ins, outs)

    def _close_sockets(self) -> None:
        for s in getattr(self, "_sockets", []):
            if not s.closed:
                s.close()

    def run(self) -> None:
        """Run the device; ``done`` is set when it returns."""
        try:
            self.run_device()
        except zmq.ContextTerminated:
            pass
        finally:
            self._close_sockets()
            self.done = True

    def start(self) -> None:
        """Run the device here (blocks); background devices override this."""
        return self.run()

    def join(self, timeout: Optional[float] = None) -> None:
        """Wait for the device to finish (up to ``timeout`` seconds)."""
        if timeout:
            tic = time.monotonic()
            toc = tic
            while not self.done and not (timeout is not None and toc - tic > timeout):
                time.sleep(0.001)
                toc = time.monotonic()
        else:
            while not self.done:
                time.sleep(0.001)


class BackgroundDevice(Device):
    """A device run by a launcher (thread or process) so ``start()`` returns at once."""

    launcher: Any = None
    _launch_class: Any = None

    def start(self) -> None:
        self.launcher = self._launch_class(target=self.run)
        self.launcher.daemon = self.daemon
        return self.launcher.start()

    def join(self, timeout: Optional[float] = None) -> None:
        return self.launcher.join(timeout=timeout)


class ThreadDevice(BackgroundDevice):
    """A device in a thread, with its own Context (``device.context_factory``)."""

    _launch_class = Thread
    context_factory = zmq.Context


class ProcessDevice(BackgroundDevice):
    """A device in a child process, with its own Context."""

    _launch_class = Process
    context_factory = zmq.Context
    _context_factory = zmq.Context


__all__ = ["Device", "ThreadDevice", "ProcessDevice"]
