"""Both halves of each interop pattern, usable with either library.

Each pattern has two sides (side 0 and side 1) that run concurrently, in two
threads of one process or in two processes. `run_side(zmq_module, ...)` makes
the socket, binds or connects it, plays its part, and closes it.
Run as a script for the cross-process tests:
    python interop_sides.py LIB PATTERN SIDE ENDPOINT BIND FLAGFILE
"""

import os
import sys
import time

PATTERNS = {
    # name: (side-0 type, side-1 type)
    "pair": ("PAIR", "PAIR"),
    "pushpull": ("PUSH", "PULL"),
    "reqrep": ("REQ", "REP"),
    "dealerrouter": ("DEALER", "ROUTER"),
    "dealerrep": ("DEALER", "REP"),
    "reqrouter": ("REQ", "ROUTER"),
    "dealerdealer": ("DEALER", "DEALER"),
    "pubsub": ("PUB", "SUB"),
    "xpubxsub": ("XPUB", "XSUB"),
}

BIG = bytes(range(256)) * 1024  # 256 KiB frame


def _side0(zmq, pattern, s, stop):
    if pattern in ("pair", "dealerdealer"):
        s.send_multipart([b"p0", b"", BIG])
        assert s.recv_multipart() == [b"p1", b"y"]
    elif pattern == "pushpull":
        for i in range(20):
            s.send_multipart([b"m", str(i).encode()])
        s.send(BIG)
    elif pattern == "reqrep":
        for i in range(5):
            s.send_multipart([b"q", str(i).encode()])
            assert s.recv_multipart() == [b"a", str(i).encode()]
    elif pattern == "dealerrouter":
        s.send_multipart([b"hi", b"there"])
        assert s.recv_multipart() == [b"back", b"2"]
    elif pattern == "dealerrep":
        s.send_multipart([b"", b"q", b"more"])
        assert s.recv_multipart() == [b"", b"a"]
    elif pattern == "reqrouter":
        s.send(b"q")
        assert s.recv() == b"a"
    elif pattern == "pubsub":
        deadline = time.monotonic() + 10
        while not stop() and time.monotonic() < deadline:
            s.send_multipart([b"B", b"skip"])
            s.send_multipart([b"A", b"take"])
            time.sleep(0.01)
    elif pattern == "xpubxsub":
        assert s.recv() == b"\x01A"
        s.send_multipart([b"B", b"skip"])
        s.send_multipart([b"A", b"x"])
        assert s.recv() == b"\x00A"
    else:
        raise ValueError(pattern)


def _side1(zmq, pattern, s, stop):
    if pattern in ("pair", "dealerdealer"):
        assert s.recv_multipart() == [b"p0", b"", BIG]
        s.send_multipart([b"p1", b"y"])
    elif pattern == "pushpull":
        for i in range(20):
            assert s.recv_multipart() == [b"m", str(i).encode()]
        assert s.recv() == BIG
    elif pattern == "reqrep":
        for _ in range(5):
            q, i = s.recv_multipart()
            assert q == b"q"
            s.send_multipart([b"a", i])
    elif pattern == "dealerrouter":
        m = s.recv_multipart()
        assert m == [b"dealer-0", b"hi", b"there"], m
        s.send_multipart([m[0], b"back", b"2"])
    elif pattern == "dealerrep":
        assert s.recv_multipart() == [b"q", b"more"]
        s.send(b"a")
    elif pattern == "reqrouter":
        m = s.recv_multipart()
        assert m[1:] == [b"", b"q"], m
        s.send_multipart([m[0], b"", b"a"])
    elif pattern == "pubsub":
        s.setsockopt(zmq.SUBSCRIBE, b"A")
        for _ in range(3):
            assert s.recv_multipart() == [b"A", b"take"]
    elif pattern == "xpubxsub":
        s.send(b"\x01A")
        assert s.recv_multipart() == [b"A", b"x"]
        s.send(b"\x00A")
    else:
        raise ValueError(pattern)


def run_side(zmq, pattern, side, endpoint, bind, stop=lambda: False, ctx=None):
    own_ctx = ctx is None
    if own_ctx:
        ctx = zmq.Context()
    kind = getattr(zmq, PATTERNS[pattern][side])
    s = ctx.socket(kind)
    s.setsockopt(zmq.RCVTIMEO, 10000)
    s.setsockopt(zmq.SNDTIMEO, 10000)
    s.setsockopt(zmq.LINGER, 2000)
    if pattern == "dealerrouter" and side == 0:
        s.setsockopt(zmq.IDENTITY, b"dealer-0")
    try:
        if bind:
            s.bind(endpoint)
        else:
            s.connect(endpoint)
        (_side0 if side == 0 else _side1)(zmq, pattern, s, stop)
    finally:
        s.close()
        if own_ctx:
            ctx.term()


if __name__ == "__main__":
    lib, pattern, side, endpoint, bind, flag = sys.argv[1:7]
    zmq_mod = __import__(lib)
    run_side(zmq_mod, pattern, int(side), endpoint, bind == "1", stop=lambda: os.path.exists(flag))
    print("side-ok", flush=True)
