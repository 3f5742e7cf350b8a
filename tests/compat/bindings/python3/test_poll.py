"""Poller, zmq.select, socket.poll, and waiting on getsockopt(zmq.FD) with
ZMQ_EVENTS (the edge-triggered contract pyzmq's asyncio/gevent rely on)."""

import os
import selectors
import socket as pysocket
import threading
import time

import pytest
import zmq


def test_poller_sockets(pair, endpoint):
    pull, push = pair(zmq.PULL, zmq.PUSH, endpoint("tcp"))
    pull2, push2 = pair(zmq.PULL, zmq.PUSH, endpoint("ipc"))
    poller = zmq.Poller()
    poller.register(pull, zmq.POLLIN)
    poller.register(pull2, zmq.POLLIN)
    t0 = time.monotonic()
    assert poller.poll(100) == []
    assert 0.08 < time.monotonic() - t0 < 3
    push2.send(b"x")
    events = dict(poller.poll(5000))
    assert events == {pull2: zmq.POLLIN}
    pull2.recv()
    push.send(b"y")
    push2.send(b"z")
    deadline = time.monotonic() + 5
    seen = {}
    while len(seen) < 2 and time.monotonic() < deadline:
        seen.update(dict(poller.poll(1000)))
    assert seen == {pull: zmq.POLLIN, pull2: zmq.POLLIN}
    poller.unregister(pull)
    assert dict(poller.poll(100)) == {pull2: zmq.POLLIN}
    poller.modify(pull2, 0)
    assert poller.poll(50) == []


def test_poller_pollout(pair, endpoint):
    push, pull = pair(zmq.PUSH, zmq.PULL, endpoint("ipc"))
    poller = zmq.Poller()
    poller.register(push, zmq.POLLOUT)
    assert dict(poller.poll(5000)).get(push) == zmq.POLLOUT
    # a PUSH with no peer at all never reports POLLOUT
    lonely = push.context.socket(zmq.PUSH)
    lonely.linger = 0
    lonely.bind("inproc://nopeer-%d" % os.getpid())
    poller.register(lonely, zmq.POLLOUT)
    assert dict(poller.poll(100)).get(lonely) is None  # no peer: cannot send
    lonely.close()


def test_poller_raw_fds(pair, endpoint):
    pull, push = pair(zmq.PULL, zmq.PUSH, endpoint("inproc"))
    r, w = os.pipe()
    a, b = pysocket.socketpair()
    try:
        poller = zmq.Poller()
        poller.register(pull, zmq.POLLIN)
        poller.register(r, zmq.POLLIN)
        poller.register(a, zmq.POLLIN)  # an object with fileno()
        assert poller.poll(50) == []
        os.write(w, b"!")
        assert dict(poller.poll(1000)) == {r: zmq.POLLIN}
        os.read(r, 1)
        b.send(b"?")
        push.send(b"m")
        deadline = time.monotonic() + 5
        seen = {}
        while len(seen) < 2 and time.monotonic() < deadline:
            seen.update(dict(poller.poll(1000)))
        assert seen == {a.fileno(): zmq.POLLIN, pull: zmq.POLLIN}
    finally:
        os.close(r)
        os.close(w)
        a.close()
        b.close()


def test_zmq_select(pair, endpoint):
    pull, push = pair(zmq.PULL, zmq.PUSH, endpoint("tcp"))
    rl, wl, xl = zmq.select([pull], [push], [], timeout=5)
    assert push in wl and pull not in rl
    push.send(b"s")
    rl, wl, xl = zmq.select([pull], [], [], timeout=5)
    assert rl == [pull]
    assert pull.recv() == b"s"


def test_socket_poll(pair, endpoint):
    rep, req = pair(zmq.REP, zmq.REQ, endpoint("tcp"))
    assert req.poll(0, zmq.POLLOUT) == zmq.POLLOUT
    assert rep.poll(50) == 0
    req.send(b"q")
    assert rep.poll(5000) == zmq.POLLIN
    rep.recv()
    assert rep.poll(0, zmq.POLLOUT) == zmq.POLLOUT
    rep.send(b"a")
    assert req.poll(5000) == zmq.POLLIN
    assert req.recv() == b"a"


def test_fd_and_events(pair, endpoint):
    """Wait on zmq.FD with a selector; always re-check EVENTS (edge-triggered)."""
    pull, push = pair(zmq.PULL, zmq.PUSH, endpoint("tcp"))
    fd = pull.getsockopt(zmq.FD)
    assert isinstance(fd, int) and fd > 2
    assert pull.fileno() == fd
    assert pull.getsockopt(zmq.EVENTS) & zmq.POLLIN == 0
    sel = selectors.DefaultSelector()
    sel.register(fd, selectors.EVENT_READ)

    def sender():
        for i in range(5):
            time.sleep(0.05)
            push.send(b"%d" % i)

    th = threading.Thread(target=sender)
    th.start()
    got = []
    deadline = time.monotonic() + 10
    while len(got) < 5:
        assert time.monotonic() < deadline
        while pull.getsockopt(zmq.EVENTS) & zmq.POLLIN:
            got.append(pull.recv(zmq.NOBLOCK))
        if len(got) == 5:
            break
        if not sel.select(2):
            assert not (pull.getsockopt(zmq.EVENTS) & zmq.POLLIN), "missed edge"
            raise AssertionError("stalled: fd never readable")
    th.join()
    assert got == [b"%d" % i for i in range(5)]
    sel.close()


def test_fd_edge_after_partial_drain(pair, endpoint):
    """After EVENTS has been read and a message remains, the fd may stay quiet:
    the application must keep reading while EVENTS says POLLIN. Once EVENTS
    reports nothing, a new message must make the fd readable."""
    pull, push = pair(zmq.PULL, zmq.PUSH, endpoint("ipc"))
    for i in range(3):
        push.send(b"%d" % i)
    assert pull.poll(5000)
    time.sleep(0.1)
    n = 0
    while pull.getsockopt(zmq.EVENTS) & zmq.POLLIN:
        pull.recv()
        n += 1
    assert n == 3
    sel = selectors.DefaultSelector()
    sel.register(pull.getsockopt(zmq.FD), selectors.EVENT_READ)
    # Stale readiness is allowed (wake-ups may be spurious), but once EVENTS
    # has reported nothing the fd must go quiet: a permanently readable fd
    # would make every event loop spin.
    quiet = False
    for _ in range(20):
        assert not pull.getsockopt(zmq.EVENTS) & zmq.POLLIN
        if not sel.select(0.05):
            quiet = True
            break
    assert quiet, "fd stays readable although EVENTS reports nothing (busy loop)"
    push.send(b"late")
    assert sel.select(5), "fd did not signal a new message"
    assert pull.getsockopt(zmq.EVENTS) & zmq.POLLIN
    assert pull.recv() == b"late"
    sel.close()


def test_fd_pollout_req(pair, endpoint):
    rep, req = pair(zmq.REP, zmq.REQ, endpoint("inproc"))
    assert req.getsockopt(zmq.EVENTS) & zmq.POLLOUT
    req.send(b"x")
    assert not req.getsockopt(zmq.EVENTS) & zmq.POLLOUT  # REQ must recv first
    assert rep.recv() == b"x"
    assert not rep.getsockopt(zmq.EVENTS) & zmq.POLLIN
    assert rep.getsockopt(zmq.EVENTS) & zmq.POLLOUT
    rep.send(b"y")
    sel = selectors.DefaultSelector()
    sel.register(req.getsockopt(zmq.FD), selectors.EVENT_READ)
    deadline = time.monotonic() + 5
    while not req.getsockopt(zmq.EVENTS) & zmq.POLLIN:
        assert time.monotonic() < deadline
        sel.select(1)
    assert req.recv() == b"y"
    sel.close()


def test_poll_timeout_zero_and_infinite(pair, endpoint):
    pull, push = pair(zmq.PULL, zmq.PUSH, endpoint("tcp"))
    poller = zmq.Poller()
    poller.register(pull, zmq.POLLIN)
    assert poller.poll(0) == []
    threading.Timer(0.1, lambda: push.send(b"wake")).start()
    assert dict(poller.poll(None)) == {pull: zmq.POLLIN}  # None = wait forever
    assert pull.recv() == b"wake"
