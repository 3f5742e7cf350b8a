"""Devices around ``monitored_queue`` (pyzmq's ``zmq.devices.monitoredqueuedevice``)."""

from __future__ import annotations

from typing import Any, Tuple

import oxmq as zmq
from oxmq.devices.basedevice import Device, ProcessDevice, ThreadDevice
from oxmq.devices.monitoredqueue import monitored_queue
from oxmq.devices.proxydevice import ProxyBase


class MonitoredQueueBase(ProxyBase):
    """A queue that copies every message to a monitor socket, after a prefix frame."""

    _in_prefix = b""
    _out_prefix = b""

    def __init__(self, in_type: int, out_type: int, mon_type: int = zmq.PUB,
                 in_prefix: bytes = b"in", out_prefix: bytes = b"out") -> None:
        ProxyBase.__init__(self, in_type=in_type, out_type=out_type, mon_type=mon_type)
        self._in_prefix = in_prefix
        self._out_prefix = out_prefix

    def run_device(self) -> None:
        ins, outs, mons = self._setup_sockets()
        monitored_queue(ins, outs, mons, self._in_prefix, self._out_prefix)


class MonitoredQueue(MonitoredQueueBase, Device):
    """A monitored queue run in the foreground."""


class ThreadMonitoredQueue(MonitoredQueueBase, ThreadDevice):
    """A monitored queue in a thread."""


class ProcessMonitoredQueue(MonitoredQueueBase, ProcessDevice):
    """A monitored queue in a child process."""


__all__ = ["MonitoredQueue", "ThreadMonitoredQueue", "ProcessMonitoredQueue"]
