"""Local port forwarding over a paramiko transport (used by ``paramiko_tunnel``)."""

from __future__ import annotations

import select
import socketserver
from typing import Any


class _Handler(socketserver.BaseRequestHandler):
    chain_host: str
    chain_port: int
    ssh_transport: Any

    def handle(self) -> None:
        try:
            chan = self.ssh_transport.open_channel(
                "direct-tcpip", (self.chain_host, self.chain_port), self.request.getpeername()
            )
        except Exception as e:
            print(f"Incoming request to {self.chain_host}:{self.chain_port} failed: {e!r}")
            return
        if chan is None:
            print(f"Incoming request to {self.chain_host}:{self.chain_port} was rejected by the SSH server.")
            return
        try:
            while True:
                r, _w, _x = select.select([self.request, chan], [], [])
                if self.request in r:
                    data = self.request.recv(16384)
                    if not data:
                        break
                    chan.sendall(data)
                if chan in r:
                    data = chan.recv(16384)
                    if not data:
                        break
                    self.request.sendall(data)
        finally:
            chan.close()
            self.request.close()


class _ForwardServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def forward_tunnel(local_port: int, remote_host: str, remote_port: int, transport: Any) -> None:
    """Serve ``127.0.0.1:local_port`` forever, each connection forwarded to
    ``remote_host:remote_port`` through ``transport``."""

    class Handler(_Handler):
        chain_host = remote_host
        chain_port = remote_port
        ssh_transport = transport

    _ForwardServer(("127.0.0.1", local_port), Handler).serve_forever()


__all__ = ["forward_tunnel"]
