"""pyzmq's API ("sugar") on top of the native module."""

from oxmq._oxmq import Frame, proxy, zmq_poll
from oxmq.sugar.context import Context
from oxmq.sugar.poll import Poller, select
from oxmq.sugar.socket import Socket
from oxmq.sugar.tracker import _FINISHED_TRACKER, MessageTracker

Message = Frame

__all__ = [
    "Context",
    "Socket",
    "Frame",
    "Message",
    "MessageTracker",
    "Poller",
    "select",
    "zmq_poll",
    "proxy",
    "_FINISHED_TRACKER",
]
