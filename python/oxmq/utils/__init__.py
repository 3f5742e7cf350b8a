"""Utilities, as in pyzmq's ``zmq.utils``."""
