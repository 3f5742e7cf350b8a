"""pyzmq's ``zmq.devices.proxysteerabledevice`` (the classes live in ``proxydevice``)."""

from oxmq.devices.proxydevice import (  # noqa: F401
    ProcessProxySteerable,
    ProxySteerable,
    ProxySteerableBase,
    ThreadProxySteerable,
)

__all__ = ["ProxySteerable", "ThreadProxySteerable", "ProcessProxySteerable"]
