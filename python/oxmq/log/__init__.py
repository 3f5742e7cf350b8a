"""Logging over PUB sockets (pyzmq's ``zmq.log``)."""
