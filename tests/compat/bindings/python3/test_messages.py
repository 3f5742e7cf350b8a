"""Message-level behaviour: multipart, json/string/pyobj, copy=False, Frames,
trackers, ROUTER identities, subscriptions, large and empty messages."""

import threading
import time

import pytest
import zmq

from conftest import wait_sub


@pytest.mark.parametrize("transport", ["tcp", "ipc", "inproc"])
def test_multipart(pair, endpoint, transport):
    pull, push = pair(zmq.PULL, zmq.PUSH, endpoint(transport))
    parts = [b"", b"a", b"\x00\x01\x02", b"x" * 100_000, b""]
    push.send_multipart(parts)
    assert pull.recv_multipart() == parts
    push.send(b"1", zmq.SNDMORE)
    push.send(b"2", zmq.SNDMORE)
    push.send(b"3")
    assert pull.recv() == b"1"
    assert pull.rcvmore == 1 and pull.getsockopt(zmq.RCVMORE) == 1
    assert pull.recv() == b"2"
    assert pull.recv() == b"3"
    assert pull.rcvmore == 0


def test_many_frames(pair, endpoint):
    pull, push = pair(zmq.PULL, zmq.PUSH, endpoint("tcp"))
    parts = [b"%d" % i for i in range(1000)]
    push.send_multipart(parts)
    assert pull.recv_multipart() == parts


def test_json_string_pyobj(pair, endpoint):
    a, b = pair(zmq.PAIR, zmq.PAIR, endpoint("ipc"))
    obj = {"a": [1, 2.5, None, True], "s": "h\u00e9llo \u2603", "n": {"x": -1}}
    a.send_json(obj)
    assert b.recv_json() == obj
    a.send_string("gr\u00fc\u00df dich \U0001f600")
    assert b.recv_string() == "gr\u00fc\u00df dich \U0001f600"
    a.send_string("latin", encoding="latin-1")
    assert b.recv() == b"latin"
    a.send_pyobj({"set": {1, 2, 3}, "t": (1, "x")})
    assert b.recv_pyobj() == {"set": {1, 2, 3}, "t": (1, "x")}
    a.send_serialized([1, 2, 3], lambda o: [repr(o).encode()])
    assert b.recv_serialized(lambda frames: eval(frames[0].decode())) == [1, 2, 3]


@pytest.mark.parametrize("transport", ["tcp", "inproc"])
@pytest.mark.parametrize("size", [0, 10, 1000, 100_000, 3_000_000])
def test_copy_false(pair, endpoint, transport, size):
    pull, push = pair(zmq.PULL, zmq.PUSH, endpoint(transport))
    data = bytes(range(256)) * (size // 256) + b"z" * (size % 256)
    push.send(data, copy=False)
    frame = pull.recv(copy=False)
    assert isinstance(frame, zmq.Frame)
    assert frame.bytes == data
    assert bytes(frame.buffer) == data
    assert len(frame) == size
    assert frame.more is False


def test_copy_false_memoryview_and_frames(pair, endpoint):
    pull, push = pair(zmq.PULL, zmq.PUSH, endpoint("ipc"))
    buf = bytearray(b"m" * 200_000)
    push.send(memoryview(buf), copy=False)
    push.send(zmq.Frame(b"frame-object"))
    push.send_multipart([b"a", zmq.Frame(b"b" * 70_000), memoryview(b"c")], copy=False)
    assert pull.recv() == bytes(buf)
    assert pull.recv() == b"frame-object"
    frames = pull.recv_multipart(copy=False)
    assert [f.bytes for f in frames] == [b"a", b"b" * 70_000, b"c"]
    assert [f.more for f in frames] == [True, True, False]


def test_tracker(pair, endpoint):
    """track=True: libzmq calls the zmq_msg_init_data free function (on its
    own thread) when done with the buffer; pyzmq's gc thread then marks the
    tracker done."""
    pull, push = pair(zmq.PULL, zmq.PUSH, endpoint("tcp"))
    data = b"t" * 200_000  # above pyzmq's copy threshold: really zero-copy
    tracker = push.send(data, copy=False, track=True)
    assert isinstance(tracker, zmq.MessageTracker)
    assert pull.recv() == data
    tracker.wait(10)
    assert tracker.done
    trackers = [push.send(b"u" * 100_000, copy=False, track=True) for _ in range(50)]
    for _ in range(50):
        pull.recv(copy=False)
    for t in trackers:
        t.wait(10)
    # a small message is copied: the tracker is finished at once
    t = push.send(b"small", copy=False, track=True)
    assert t.done
    assert pull.recv() == b"small"


def test_send_from_many_threads_zero_copy(ctx, endpoint):
    """Zero-copy sends from several threads, each with its own socket: the
    free callbacks arrive on libzmq's threads in any order."""
    addr = endpoint("inproc")
    pull = ctx.socket(zmq.PULL)
    pull.bind(addr)
    n_threads, n = 4, 200

    def worker(k):
        s = ctx.socket(zmq.PUSH)
        s.connect(addr)
        for i in range(n):
            s.send(b"%d:%d:" % (k, i) + b"p" * 70_000, copy=False)
        s.close(linger=-1)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(n_threads)]
    for t in threads:
        t.start()
    pull.rcvtimeo = 10_000
    seen = {k: 0 for k in range(n_threads)}
    for _ in range(n_threads * n):
        m = pull.recv()
        k, i, _ = m.split(b":", 2)
        assert int(i) == seen[int(k)]
        seen[int(k)] += 1
    for t in threads:
        t.join(10)
    pull.close()


def test_router_identities(ctx, endpoint):
    addr = endpoint("tcp")
    router = ctx.socket(zmq.ROUTER)
    router.linger = 0
    router.rcvtimeo = 5000
    router.bind(addr)
    ep = router.last_endpoint.decode()
    dealers = {}
    for name in (b"alice", b"bob", b"carol"):
        d = ctx.socket(zmq.DEALER)
        d.linger = 0
        d.rcvtimeo = 5000
        d.identity = name
        assert d.identity == name
        assert d.getsockopt(zmq.ROUTING_ID) == name
        d.connect(ep)
        d.send(b"hello from " + name)
        dealers[name] = d
    anon = ctx.socket(zmq.DEALER)
    anon.linger = 0
    anon.connect(ep)
    anon.send(b"anonymous")
    got = {}
    for _ in range(4):
        ident, body = router.recv_multipart()
        got[ident] = body
    named = {k: v for k, v in got.items() if k in dealers}
    assert named == {n: b"hello from " + n for n in dealers}
    (anon_id,) = [k for k in got if k not in dealers]
    assert len(anon_id) == 5 and anon_id[0] == 0  # libzmq's generated id: 0x00 + uint32
    for name, d in dealers.items():
        router.send_multipart([name, b"hi " + name])
    for name, d in dealers.items():
        assert d.recv() == b"hi " + name
    # unknown identity: dropped silently, or EHOSTUNREACH with ROUTER_MANDATORY
    router.send_multipart([b"nobody", b"lost"])
    router.router_mandatory = 1
    with pytest.raises(zmq.ZMQError) as e:
        router.send_multipart([b"nobody", b"lost"])
    assert e.value.errno == zmq.EHOSTUNREACH
    anon.close()
    for d in dealers.values():
        d.close()


def test_subscriptions(pair, endpoint):
    pub, sub = pair(zmq.PUB, zmq.SUB, endpoint("tcp"))
    sub.subscribe(b"a.")
    sub.subscribe("b.")  # str topics are utf-8 encoded
    sub.subscribe(b"a.")  # counted: needs two unsubscribes
    wait_sub(pub, sub, b"a.")
    wait_sub(pub, sub, b"b.")
    for t in (b"a.1", b"b.1", b"c.1", b"a", b""):
        pub.send(t)
    assert sub.recv() == b"a.1"
    assert sub.recv() == b"b.1"
    assert sub.poll(100) == 0
    sub.unsubscribe(b"b.")
    sub.unsubscribe(b"a.")
    time.sleep(0.2)
    pub.send(b"a.2")
    pub.send(b"b.2")
    assert sub.recv() == b"a.2"
    assert sub.poll(200) == 0
    sub.unsubscribe(b"a.")
    time.sleep(0.2)
    pub.send(b"a.3")
    assert sub.poll(200) == 0


def test_pub_fanout(ctx, endpoint):
    pub = ctx.socket(zmq.PUB)
    pub.linger = 0
    pub.bind(endpoint("ipc"))
    subs = []
    for _ in range(5):
        s = ctx.socket(zmq.SUB)
        s.linger = 0
        s.rcvtimeo = 5000
        s.subscribe(b"")
        s.connect(pub.last_endpoint.decode())
        subs.append(s)
    ready = set()
    deadline = time.monotonic() + 5
    while len(ready) < len(subs):
        assert time.monotonic() < deadline, "subscriptions never arrived"
        pub.send(b"__probe__")
        for i, s in enumerate(subs):
            if s.poll(10):
                ready.add(i)
    time.sleep(0.05)
    for s in subs:
        while s.poll(20):
            assert s.recv() == b"__probe__"
    pub.send(b"to all")
    for s in subs:
        assert s.recv() == b"to all"


def test_frame_properties(pair, endpoint):
    a, b = pair(zmq.PAIR, zmq.PAIR, endpoint("inproc"))
    f = zmq.Frame(b"abc")
    assert f.bytes == b"abc" and len(f) == 3
    a.send_multipart([b"x", b"y"])
    f1 = b.recv(copy=False)
    assert f1.more and f1.get(zmq.MORE) == 1
    f2 = b.recv(copy=False)
    assert not f2.more
    assert f2.bytes == b"y"


def test_large_message_tcp(pair, endpoint):
    pull, push = pair(zmq.PULL, zmq.PUSH, endpoint("tcp"))
    big = b"B" * (32 * 1024 * 1024)
    push.send(big, copy=False)
    assert pull.recv(copy=False).bytes == big

