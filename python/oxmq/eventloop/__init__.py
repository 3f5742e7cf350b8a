"""tornado integration (pyzmq's ``zmq.eventloop``): ``ioloop``, ``zmqstream``, ``future``."""
