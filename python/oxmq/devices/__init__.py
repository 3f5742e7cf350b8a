"""Devices: proxies and queues run in the foreground, a thread or a process
(pyzmq's ``zmq.devices``)."""

from oxmq import device, proxy, proxy_steerable
from oxmq.devices import basedevice, monitoredqueue, monitoredqueuedevice, proxydevice, proxysteerabledevice
from oxmq.devices.basedevice import Device, ProcessDevice, ThreadDevice
from oxmq.devices.monitoredqueue import monitored_queue
from oxmq.devices.monitoredqueuedevice import MonitoredQueue, ProcessMonitoredQueue, ThreadMonitoredQueue
from oxmq.devices.proxydevice import (
    ProcessProxy,
    ProcessProxySteerable,
    Proxy,
    ProxySteerable,
    ThreadProxy,
    ThreadProxySteerable,
)

__all__ = [
    "device",
    "proxy",
    "proxy_steerable",
    "monitored_queue",
    "Device",
    "ThreadDevice",
    "ProcessDevice",
    "Proxy",
    "ThreadProxy",
    "ProcessProxy",
    "ProxySteerable",
    "ThreadProxySteerable",
    "ProcessProxySteerable",
    "MonitoredQueue",
    "ThreadMonitoredQueue",
    "ProcessMonitoredQueue",
    "basedevice",
    "monitoredqueue",
    "monitoredqueuedevice",
    "proxydevice",
    "proxysteerabledevice",
]
