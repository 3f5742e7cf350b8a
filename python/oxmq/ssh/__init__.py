"""SSH tunnels for connections (pyzmq's ``zmq.ssh``)."""
from oxmq.ssh.tunnel import *  # noqa: F401,F403
