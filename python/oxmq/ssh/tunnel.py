"""Connecting a socket through an SSH tunnel (pyzmq's ``zmq.ssh.tunnel``).

Two ways to make the tunnel, as in pyzmq: the ``ssh`` command driven by
pexpect (Unix), or paramiko (pure Python). Both are optional: they are
imported only when a tunnel is opened, and the error says which to install.
"""

from __future__ import annotations

import atexit
import os
import re
import signal
import socket
import sys
import warnings
from getpass import getpass, getuser
from multiprocessing import Process
from typing import Any, List, Optional, Tuple

try:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import paramiko  # type: ignore[import-not-found]

        SSHException = paramiko.ssh_exception.SSHException
except ImportError:
    paramiko = None  # type: ignore[assignment]

    class SSHException(Exception):  # type: ignore[no-redef]
        """An SSH failure (paramiko's SSHException when paramiko is installed)."""


try:
    import pexpect  # type: ignore[import-not-found]
except ImportError:
    pexpect = None  # type: ignore[assignment]

def select_random_ports(n: int) -> List[int]:
    """``n`` distinct free TCP ports (all held open together while chosen)."""
    ports: List[int] = []
    sockets = []
    for _ in range(n):
        sock = socket.socket()
        sock.bind(("", 0))
        ports.append(sock.getsockname()[1])
        sockets.append(sock)
    for sock in sockets:
        sock.close()
    return ports


_password_pat = re.compile(rb"pass(word|phrase):", re.IGNORECASE)


def try_passwordless_ssh(server: str, keyfile: Optional[str], paramiko: Optional[bool] = None) -> bool:
    """Whether ``server`` accepts us without a password."""
    if paramiko is None:
        paramiko = sys.platform == "win32"
    if not paramiko:
        return _try_passwordless_openssh(server, keyfile)
    return _try_passwordless_paramiko(server, keyfile)


def _need(module: Any, name: str) -> None:
    if module is None:
        raise ImportError(f"an SSH tunnel needs {name}: pip install {name}")


def _try_passwordless_openssh(server: str, keyfile: Optional[str]) -> bool:
    _need(pexpect, "pexpect")
    cmd = "ssh -f " + server
    if keyfile:
        cmd += " -i " + keyfile
    cmd += " exit"
    env = os.environ.copy()
    env.pop("SSH_ASKPASS", None)
    ssh_newkey = "Are you sure you want to continue connecting"
    p = pexpect.spawn(cmd, env=env)
    while True:
        try:
            i = p.expect([ssh_newkey, _password_pat], timeout=0.1)
            if i == 0:
                raise SSHException("The authenticity of the host can't be established.")
        except pexpect.TIMEOUT:
            continue
        except pexpect.EOF:
            return True
        else:
            return False


def _try_passwordless_paramiko(server: str, keyfile: Optional[str]) -> bool:
    _need(paramiko, "paramiko")
    username, server, port = _split_server(server)
    client = paramiko.SSHClient()
    client.load_system_host_keys()
    client.set_missing_host_key_policy(paramiko.WarningPolicy())
    try:
        client.connect(server, port, username=username, key_filename=keyfile, look_for_keys=True)
    except paramiko.AuthenticationException:
        return False
    else:
        client.close()
        return True


def tunnel_connection(socket: Any, addr: str, server: str, keyfile: Optional[str] = None,
                      password: Optional[str] = None, paramiko: Optional[bool] = None,
                      timeout: int = 60) -> Any:
    """Connect ``socket`` to ``addr`` (tcp) through an SSH tunnel via ``server``;
    returns the tunnel (a pexpect child or a Process)."""
    new_url, tunnel = open_tunnel(addr, server, keyfile=keyfile, password=password,
                                  paramiko=paramiko, timeout=timeout)
    socket.connect(new_url)
    return tunnel


def open_tunnel(addr: str, server: str, keyfile: Optional[str] = None, password: Optional[str] = None,
                paramiko: Optional[bool] = None, timeout: int = 60) -> Tuple[str, Any]:
    """Open a tunnel to ``addr`` (``tcp://host:port``) via ``server``; returns
    ``(local_url, tunnel)``."""
    lport = select_random_ports(1)[0]
    _transport, addr = addr.split("://")
    ip, rport_s = addr.split(":")
    rport = int(rport_s)
    if paramiko is None:
        paramiko = sys.platform == "win32"
    tunnelf = paramiko_tunnel if paramiko else openssh_tunnel
    tunnel = tunnelf(lport, rport, server, remoteip=ip, keyfile=keyfile, password=password, timeout=timeout)
    return f"tcp://127.0.0.1:{lport}", tunnel


def openssh_tunnel(lport: int, rport: int, server: str, remoteip: str = "127.0.0.1",
                   keyfile: Optional[str] = None, password: Any = None, timeout: int = 60) -> int:
    """Forward local ``lport`` to ``remoteip:rport`` on ``server`` with the ssh command."""
    _need(pexpect, "pexpect")
    ssh = "ssh "
    if keyfile:
        ssh += "-i " + keyfile
    if ":" in server:
        server, port = server.split(":")
        ssh += f" -p {port}"
    cmd = f"{ssh} -O check {server}"
    (output, exitstatus) = pexpect.run(cmd, withexitstatus=True)
    if not exitstatus:
        pid = int(output[output.find(b"(pid=") + 5 : output.find(b")")])
        cmd = f"{ssh} -O forward -L 127.0.0.1:{lport}:{remoteip}:{rport} {server}"
        (output, exitstatus) = pexpect.run(cmd, withexitstatus=True)
        if not exitstatus:
            atexit.register(_stop_tunnel, cmd.replace("-O forward", "-O cancel", 1))
            return pid
    cmd = f"{ssh} -f -S none -L 127.0.0.1:{lport}:{remoteip}:{rport} {server} sleep {timeout}"
    env = os.environ.copy()
    env.pop("SSH_ASKPASS", None)
    ssh_newkey = "Are you sure you want to continue connecting"
    tunnel = pexpect.spawn(cmd, env=env)
    failed = False
    while True:
        try:
            i = tunnel.expect([ssh_newkey, _password_pat], timeout=0.1)
            if i == 0:
                raise SSHException("The authenticity of the host can't be established.")
        except pexpect.TIMEOUT:
            continue
        except pexpect.EOF as e:
            if tunnel.exitstatus:
                raise RuntimeError(f"tunnel '{cmd}' failed to start") from e
            return tunnel.pid
        else:
            if failed:
                print("Password rejected, try again")
                password = None
            if password is None:
                password = getpass(f"{server}'s password: ")
            tunnel.sendline(password)
            failed = True


def _stop_tunnel(cmd: str) -> None:
    pexpect.run(cmd)


def _split_server(server: str) -> Tuple[str, str, int]:
    if "@" in server:
        username, server = server.split("@", 1)
    else:
        username = getuser()
    if ":" in server:
        server, port_s = server.split(":")
        port = int(port_s)
    else:
        port = 22
    return username, server, port


def paramiko_tunnel(lport: int, rport: int, server: str, remoteip: str = "127.0.0.1",
                    keyfile: Optional[str] = None, password: Optional[str] = None, timeout: float = 60) -> Process:
    """Forward local ``lport`` to ``remoteip:rport`` on ``server`` with paramiko, in a child process."""
    _need(paramiko, "paramiko")
    if password is None and not _try_passwordless_paramiko(server, keyfile):
        password = getpass(f"{server}'s password: ")
    p = Process(target=_paramiko_tunnel, args=(lport, rport, server, remoteip),
                kwargs=dict(keyfile=keyfile, password=password))
    p.daemon = True
    p.start()
    return p


def _paramiko_tunnel(lport: int, rport: int, server: str, remoteip: str,
                     keyfile: Optional[str] = None, password: Optional[str] = None) -> None:
    # runs in the child process started by paramiko_tunnel
    from oxmq.ssh.forward import forward_tunnel

    username, server, port = _split_server(server)
    client = paramiko.SSHClient()
    client.load_system_host_keys()
    client.set_missing_host_key_policy(paramiko.WarningPolicy())
    try:
        client.connect(server, port, username=username, key_filename=keyfile, look_for_keys=True, password=password)
    except Exception as e:
        print(f"*** Failed to connect to {server}:{port}: {e!r}")
        sys.exit(1)
    # don't let SIGINT kill the tunnel subprocess
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        forward_tunnel(lport, remoteip, rport, client.get_transport())
    except KeyboardInterrupt:
        sys.exit(0)
    except Exception as e:
        print(f"Forwarding ended unexpectedly: {e!r}")
        sys.exit(255)


ssh_tunnel = openssh_tunnel if sys.platform != "win32" else paramiko_tunnel

__all__ = [
    "tunnel_connection",
    "ssh_tunnel",
    "openssh_tunnel",
    "paramiko_tunnel",
    "try_passwordless_ssh",
    "select_random_ports",
    "open_tunnel",
]
