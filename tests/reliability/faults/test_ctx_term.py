"""Context.term() of the Python package `oxmq` with sockets in every state:
bound idle (tcp, ipc, inproc), connecting to nothing with a queued message,
mid-multipart send, unread inproc messages, and threads blocked in recv, in
send at the HWM and in poll. Blocked calls raise ContextTerminated (the
threads then close their sockets); term() returns within the linger time.
Run by `make faults-python` with the project venv, where `oxmq` is installed."""
import os
import threading
import time

import pytest

zmq = pytest.importorskip("oxmq")

LINGER_MS = 300


def test_term_with_sockets_in_every_state_returns_within_linger(tmp_path):
    ctx = zmq.Context()

    def mk(kind):
        s = ctx.socket(kind)
        s.linger = LINGER_MS
        return s

    mine = []
    rep = mk(zmq.REP)
    rep.bind("tcp://127.0.0.1:*")
    router = mk(zmq.ROUTER)
    router.bind("ipc://" + str(tmp_path / "term.ipc"))
    pull = mk(zmq.PULL)
    pull.bind("inproc://py-term-idle")
    nowhere = mk(zmq.DEALER)
    nowhere.connect("tcp://127.0.0.1:1")
    nowhere.send(b"queued", zmq.DONTWAIT)
    sink = mk(zmq.PULL)
    sink.bind("inproc://py-term-sink")
    partial = mk(zmq.PUSH)
    partial.connect("inproc://py-term-sink")
    partial.send(b"first", zmq.SNDMORE)
    a, b = mk(zmq.PAIR), mk(zmq.PAIR)
    a.bind("inproc://py-term-pair")
    b.connect("inproc://py-term-pair")
    for _ in range(5):
        b.send(b"unread")
    mine += [rep, router, pull, nowhere, sink, partial, a, b]

    errors = []

    def blocked(sock, action):
        try:
            action(sock)
            errors.append(f"{action.__name__} returned")
        except zmq.ContextTerminated:
            pass
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(f"{action.__name__}: {e!r}")
        finally:
            sock.close()

    r = mk(zmq.PULL)
    r.bind("inproc://py-term-recv")
    full = mk(zmq.PULL)
    full.rcvhwm = 1
    full.bind("inproc://py-term-full")
    mine.append(full)
    w = mk(zmq.PUSH)
    w.sndhwm = 1
    w.connect("inproc://py-term-full")
    p = mk(zmq.SUB)
    p.connect("tcp://127.0.0.1:1")

    def recv(s):
        s.recv()

    def send_forever(s):
        while True:
            s.send(b"x")

    def poll(s):
        poller = zmq.Poller()
        poller.register(s, zmq.POLLIN)
        poller.poll()

    threads = [threading.Thread(target=blocked, args=(s, f)) for s, f in ((r, recv), (w, send_forever), (p, poll))]
    for t in threads:
        t.start()
    time.sleep(0.2)

    start = time.monotonic()
    for s in mine:
        s.close()
    ctx.term()
    took = time.monotonic() - start
    for t in threads:
        t.join(5)
        assert not t.is_alive(), "a blocked thread never woke up"
    assert not errors, errors
    assert took < (LINGER_MS + 1500) / 1000, f"term() took {took:.3f} s with LINGER {LINGER_MS} ms"
