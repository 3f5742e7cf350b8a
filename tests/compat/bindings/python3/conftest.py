"""Shared fixtures; prints the libzmq this process mapped (run.sh checks it)."""

import os
import sys
import threading

import pytest
import zmq


def mapped_libzmq():
    paths = set()
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) == 6:
                p = parts[5].strip()
                base = os.path.basename(p)
                if base.startswith(("libzmq", "liboxmq")):
                    paths.add(p)
    return sorted(paths)


def pytest_report_header(config):
    lines = ["LIBZMQ_MAPPED=%s" % p for p in mapped_libzmq()]
    lines.append(
        "ZMQ_VERSION=%s (pyzmq %s, python %s, pid %d)"
        % (zmq.zmq_version(), zmq.__version__, sys.version.split()[0], os.getpid())
    )
    return lines


@pytest.fixture
def ctx():
    c = zmq.Context()
    yield c
    c.destroy(linger=0)


_counter = [0]


@pytest.fixture
def endpoint(tmp_path):
    """endpoint(transport) -> an address to bind to (tcp uses port 0 → LAST_ENDPOINT)."""

    def make(transport):
        _counter[0] += 1
        if transport == "tcp":
            return "tcp://127.0.0.1:*"
        if transport == "ipc":
            return "ipc://%s/s%d" % (tmp_path, _counter[0])
        if transport == "inproc":
            return "inproc://t%d-%d" % (os.getpid(), _counter[0])
        raise ValueError(transport)

    return make


def bind_connect(ctx, t1, t2, addr, **opts):
    """Bind a socket of type t1 on addr, connect one of type t2 to it."""
    a = ctx.socket(t1)
    b = ctx.socket(t2)
    for s in (a, b):
        s.linger = 0
        s.rcvtimeo = 5000
        s.sndtimeo = 5000
        for k, v in opts.items():
            s.set(k, v)
    a.bind(addr)
    ep = a.last_endpoint.decode()
    b.connect(ep)
    return a, b


@pytest.fixture
def pair(ctx):
    return lambda t1, t2, addr, **kw: bind_connect(ctx, t1, t2, addr, **kw)


def wait_sub(pub, sub, topic=b"", timeout=5.0):
    """Publish probes until the subscription has reached the publisher; drain them."""
    import time

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        pub.send_multipart([topic + b"__probe__", b""])
        if sub.poll(20):
            while sub.poll(50):
                sub.recv_multipart()
            return
    raise AssertionError("subscription never arrived")
