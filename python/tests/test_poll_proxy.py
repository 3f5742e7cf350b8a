"""Poller, select, zmq_poll, proxy, device."""

import os
import socket as pysocket
import threading
import time

import pytest

import oxmq


def test_poller_register_modify_unregister(pair):
    a, b = pair
    p = oxmq.Poller()
    p.register(b, oxmq.POLLIN)
    assert b in p
    assert p.poll(0) == []
    assert p.poll(20) == []
    a.send(b"x")
    assert p.poll(1000) == [(b, oxmq.POLLIN)]
    assert dict(p.poll(None))[b] == oxmq.POLLIN
    p.modify(b, oxmq.POLLIN | oxmq.POLLOUT)
    assert dict(p.poll(0))[b] == oxmq.POLLIN | oxmq.POLLOUT
    p.register(a)  # default POLLIN | POLLOUT
    assert dict(p.poll(0))[a] == oxmq.POLLOUT
    p.unregister(b)
    assert b not in p
    assert p.poll(0) == [(a, oxmq.POLLOUT)]
    p.register(a, 0)  # flags 0 unregisters
    assert a not in p
    with pytest.raises(KeyError):
        p.unregister(a)
    assert b.recv() == b"x"


def test_poller_timeout_is_honoured(pair):
    _, b = pair
    p = oxmq.Poller()
    p.register(b, oxmq.POLLIN)
    t0 = time.monotonic()
    assert p.poll(150) == []
    assert 0.13 < time.monotonic() - t0 < 2


def test_poller_wakes_on_message_from_thread(pair):
    a, b = pair
    p = oxmq.Poller()
    p.register(b, oxmq.POLLIN)
    threading.Timer(0.1, lambda: a.send(b"wake")).start()
    t0 = time.monotonic()
    assert p.poll(5000) == [(b, oxmq.POLLIN)]
    assert time.monotonic() - t0 < 3
    assert b.recv() == b"wake"


def test_poller_with_raw_fds(pair):
    _, b = pair
    r, w = os.pipe()
    try:
        p = oxmq.Poller()
        p.register(r, oxmq.POLLIN)
        p.register(b, oxmq.POLLIN)
        assert p.poll(10) == []
        os.write(w, b"!")
        assert p.poll(1000) == [(r, oxmq.POLLIN)]
        s1, s2 = pysocket.socketpair()
        p.register(s1, oxmq.POLLIN)  # objects with fileno()
        s2.send(b"x")
        assert (s1.fileno(), oxmq.POLLIN) in p.poll(1000)  # reported by fd, as pyzmq does
        s1.close()
        s2.close()
    finally:
        os.close(r)
        os.close(w)


def test_poll_many_sockets(make):
    pulls = []
    p = oxmq.Poller()
    pushes = []
    for i in range(20):
        pull = make(oxmq.PULL)
        push = make(oxmq.PUSH)
        pull.bind(f"inproc://many-{i}")
        push.connect(f"inproc://many-{i}")
        p.register(pull, oxmq.POLLIN)
        pulls.append(pull)
        pushes.append(push)
    for i in (3, 7, 19):
        pushes[i].send(b"x")
    ready = dict(p.poll(1000))
    assert set(ready) == {pulls[3], pulls[7], pulls[19]}


def test_zmq_poll_and_errors(pair):
    a, b = pair
    a.send(b"x")
    assert oxmq.zmq_poll([(b, oxmq.POLLIN)], 1000) == [(b, oxmq.POLLIN)]
    with pytest.raises(TypeError):
        oxmq.zmq_poll([("nope", oxmq.POLLIN)], 0)
    b.close()
    with pytest.raises(oxmq.ZMQError) as ei:
        oxmq.zmq_poll([(b, oxmq.POLLIN)], 0)
    assert ei.value.errno == oxmq.ENOTSOCK


def test_select(pair):
    a, b = pair
    r, w, x = oxmq.select([b], [a], [], 0)
    assert r == [] and w == [a] and x == []
    a.send(b"x")
    r, w, x = oxmq.select([b], [], [], 1.0)
    assert r == [b]
    r, w, x = oxmq.select([a], [], [], 0.05)
    assert r == []


def _run_proxy(ctx, kind_front, kind_back, front_ep, back_ep, capture_ep=None):
    front = ctx.socket(kind_front)
    back = ctx.socket(kind_back)
    front.bind(front_ep)
    back.bind(back_ep)
    capture = None
    if capture_ep:
        capture = ctx.socket(oxmq.PUSH)
        capture.bind(capture_ep)
    errors = []

    def run():
        try:
            oxmq.proxy(front, back, capture)
        except oxmq.ContextTerminated:
            pass
        except Exception as e:  # pragma: no cover
            errors.append(e)
        finally:
            front.close(linger=0)
            back.close(linger=0)
            if capture is not None:
                capture.close(linger=0)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, errors


def test_proxy_queue_with_capture():
    ctx = oxmq.Context()
    t, errors = _run_proxy(ctx, oxmq.ROUTER, oxmq.DEALER, "inproc://front", "inproc://back", "inproc://cap")
    client = ctx.socket(oxmq.REQ)
    worker = ctx.socket(oxmq.REP)
    cap = ctx.socket(oxmq.PULL)
    for s in (client, worker, cap):
        s.rcvtimeo = 5000
        s.linger = 0
    client.connect("inproc://front")
    worker.connect("inproc://back")
    cap.connect("inproc://cap")
    for i in range(50):
        client.send_multipart([b"req", str(i).encode()])
        assert worker.recv_multipart() == [b"req", str(i).encode()]
        worker.send(b"rep-%d" % i)
        assert client.recv() == b"rep-%d" % i
    captured = cap.recv_multipart()
    assert captured[-2:] == [b"req", b"0"]
    for s in (client, worker, cap):
        s.close()
    ctx.term()  # proxy ends with ETERM and closes its sockets
    t.join(5)
    assert not t.is_alive() and not errors


def test_device_streamer():
    ctx = oxmq.Context()
    front = ctx.socket(oxmq.PULL)
    back = ctx.socket(oxmq.PUSH)
    front.bind("inproc://dfront")
    back.bind("inproc://dback")

    def run():
        try:
            oxmq.device(oxmq.STREAMER, front, back)
        except oxmq.ContextTerminated:
            pass
        front.close(linger=0)
        back.close(linger=0)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    src = ctx.socket(oxmq.PUSH)
    dst = ctx.socket(oxmq.PULL)
    dst.rcvtimeo = 5000
    src.connect("inproc://dfront")
    dst.connect("inproc://dback")
    for i in range(1000):
        src.send(b"%d" % i)
    assert [dst.recv() for _ in range(1000)] == [b"%d" % i for i in range(1000)]
    src.close(linger=0)
    dst.close(linger=0)
    ctx.term()
    t.join(5)
    assert not t.is_alive()


def _stats(ctl):
    ctl.send(b"STATISTICS")
    parts = ctl.recv_multipart()
    assert len(parts) == 8
    return [int.from_bytes(p, "little") for p in parts]


def test_proxy_steerable_pause_resume_statistics_terminate():
    ctx = oxmq.Context()
    front, back, mon, ctl = (ctx.socket(k) for k in (oxmq.PULL, oxmq.PUSH, oxmq.PUSH, oxmq.PAIR))
    for s, ep in ((front, "front"), (back, "back"), (mon, "mon"), (ctl, "ctl")):
        s.bind("inproc://steer-" + ep)
    done = []

    def run():
        oxmq.proxy_steerable(front, back, mon, ctl)
        done.append(True)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    push, pull, cap, c = (ctx.socket(k) for k in (oxmq.PUSH, oxmq.PULL, oxmq.PULL, oxmq.PAIR))
    for s, ep in ((push, "front"), (pull, "back"), (cap, "mon"), (c, "ctl")):
        s.rcvtimeo = 5000
        s.linger = 0
        s.connect("inproc://steer-" + ep)
    push.send_multipart([b"ab", b"cd"])
    assert pull.recv_multipart() == [b"ab", b"cd"]
    assert cap.recv_multipart() == [b"ab", b"cd"]
    # a multipart message counts once; frontend in, backend out
    assert _stats(c) == [1, 4, 0, 0, 0, 0, 1, 4]
    assert cap.recv() == b"STATISTICS"  # control commands are captured too
    c.send(b"PAUSE")
    assert c.recv() == b""  # libzmq 4.3.5 answers every other command with an empty frame
    push.send(b"held")
    assert pull.poll(200) == 0
    c.send(b"RESUME")
    assert c.recv() == b""
    assert pull.recv() == b"held"
    c.send(b"TERMINATE")
    t.join(5)
    assert done == [True]
    for s in (front, back, mon, ctl, push, pull, cap, c):
        s.close(linger=0)
    ctx.term()


def test_monitored_queue_prefixes_each_side():
    from oxmq.devices import monitored_queue

    ctx = oxmq.Context()
    a, b, mon = ctx.socket(oxmq.PAIR), ctx.socket(oxmq.PAIR), ctx.socket(oxmq.PUSH)
    a.bind("inproc://mq-a")
    b.bind("inproc://mq-b")
    mon.bind("inproc://mq-mon")

    def run():
        try:
            monitored_queue(a, b, mon, b"IN", b"OUT")
        except oxmq.ContextTerminated:
            pass
        for s in (a, b, mon):
            s.close(linger=0)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    alice, bob, watch = ctx.socket(oxmq.PAIR), ctx.socket(oxmq.PAIR), ctx.socket(oxmq.PULL)
    for s, ep in ((alice, "a"), (bob, "b"), (watch, "mon")):
        s.rcvtimeo = 5000
        s.linger = 0
        s.connect("inproc://mq-" + ep)
    alice.send_multipart([b"hello", b"bob"])
    assert bob.recv_multipart() == [b"hello", b"bob"]
    bob.send(b"hi")
    assert alice.recv() == b"hi"
    assert watch.recv_multipart() == [b"IN", b"hello", b"bob"]
    assert watch.recv_multipart() == [b"OUT", b"hi"]
    with pytest.raises(TypeError):
        monitored_queue(a, b, mon, "in", b"out")
    for s in (alice, bob, watch):
        s.close()
    ctx.term()
    t.join(5)
    assert not t.is_alive()


def test_context_destroy_ends_a_running_proxy():
    # The proxy runs inside its sockets' slots: destroy() from another
    # thread neither waits on them nor leaves term() waiting.
    ctx = oxmq.Context()
    front, back = ctx.socket(oxmq.PULL), ctx.socket(oxmq.PUSH)
    front.bind("inproc://destroy-front")
    back.bind("inproc://destroy-back")
    raised = []

    def run():
        try:
            oxmq.proxy(front, back)
        except oxmq.ContextTerminated as e:
            raised.append(e)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    time.sleep(0.1)
    done = threading.Event()
    threading.Thread(target=lambda: (ctx.destroy(linger=0), done.set()), daemon=True).start()
    assert done.wait(5), "destroy() hung on a running proxy"
    t.join(5)
    assert not t.is_alive() and len(raised) == 1
    assert front.closed and back.closed
