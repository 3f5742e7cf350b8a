"""Socket.stats() (oxmq only): counters as a dict, each kind of drop forced."""

import threading
import time

import pytest

import oxmq as zmq

COUNTERS = {
    "msgs_in", "bytes_in", "msgs_out", "bytes_out", "queued_in", "queued_out",
    "drops_hwm", "drops_no_route", "drops_conflate", "drops_oversize",
}  # fmt: skip
SOCKET_ONLY = {
    "reconnects", "handshake_failed_protocol", "handshake_failed_auth",
    "handshake_failed_timeout", "handshake_failed_other",
}  # fmt: skip


def eventually(cond, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def drain(s):
    n = 0
    while True:
        try:
            s.recv(zmq.NOBLOCK)
        except zmq.Again:
            return n
        n += 1


def test_shape_and_traffic(make):
    pull, push = make(zmq.PULL), make(zmq.PUSH)
    port = pull.bind_to_random_port("tcp://127.0.0.1")
    push.connect(f"tcp://127.0.0.1:{port}")
    push.send(b"hello")
    push.send_multipart([b"ab", b"cde"])
    assert pull.recv() == b"hello"
    assert pull.recv_multipart() == [b"ab", b"cde"]
    st = pull.stats()
    assert set(st) == COUNTERS | SOCKET_ONLY | {"peers"}
    assert (st["msgs_in"], st["bytes_in"], st["msgs_out"]) == (2, 10, 0)
    [peer] = st["peers"]
    assert set(peer) == COUNTERS | {"routing_id", "endpoint", "remote_address"}
    assert peer["endpoint"] == f"tcp://127.0.0.1:{port}"
    assert peer["remote_address"] == "127.0.0.1"
    assert (peer["msgs_in"], peer["bytes_in"]) == (2, 10)
    out = push.stats()
    assert (out["msgs_out"], out["bytes_out"]) == (2, 10)
    assert pull.getsockopt(zmq.STATS_MSGS_IN) == 2
    assert pull.getsockopt(zmq.STATS_PEERS) == 1
    with pytest.raises(zmq.ZMQError):
        pull.setsockopt(zmq.STATS_MSGS_IN, 0)


def test_pub_at_hwm(make):
    pub, sub = make(zmq.PUB, sndhwm=4), make(zmq.SUB, rcvhwm=4)
    sub.setsockopt(zmq.SUBSCRIBE, b"")
    pub.bind("inproc://py-stats-pub")
    sub.connect("inproc://py-stats-pub")
    for _ in range(100):
        pub.send(b"m", zmq.NOBLOCK)
    got = drain(sub)
    assert 0 < got < 100
    st = pub.stats()
    assert st["drops_hwm"] == 100 - got
    assert st["peers"][0]["drops_hwm"] == 100 - got


def test_router_to_unknown_id(make):
    router = make(zmq.ROUTER)
    router.bind("inproc://py-stats-router")
    router.send_multipart([b"nobody", b"x"])
    assert router.stats()["drops_no_route"] == 1
    router.router_mandatory = 1
    with pytest.raises(zmq.ZMQError) as e:
        router.send_multipart([b"nobody", b"x"])
    assert e.value.errno == zmq.EHOSTUNREACH
    assert router.stats()["drops_no_route"] == 1


def test_router_peer_routing_id(make):
    router, dealer = make(zmq.ROUTER), make(zmq.DEALER, routing_id=b"carol")
    router.bind("inproc://py-stats-rid")
    dealer.connect("inproc://py-stats-rid")
    dealer.send(b"hi")
    assert router.recv_multipart() == [b"carol", b"hi"]
    assert router.stats()["peers"][0]["routing_id"] == b"carol"


def test_conflate(make):
    pull, push = make(zmq.PULL, conflate=1), make(zmq.PUSH)
    pull.bind("inproc://py-stats-conflate")
    push.connect("inproc://py-stats-conflate")
    for i in range(5):
        push.send(b"%d" % i)
    assert pull.recv() == b"4"
    assert pull.stats()["drops_conflate"] == 4


def test_conflate_sending(make):
    pull, push = make(zmq.PULL), make(zmq.PUSH, conflate=1)
    pull.bind("inproc://py-stats-conflate-out")
    push.connect("inproc://py-stats-conflate-out")
    for i in range(3):
        push.send(b"%d" % i)
    assert pull.recv() == b"2"
    st = push.stats()
    assert st["drops_conflate"] == 2
    assert (st["peers"][0]["drops_conflate"], st["peers"][0]["msgs_out"]) == (2, 3)


def test_oversize(make):
    pull, push = make(zmq.PULL, maxmsgsize=10), make(zmq.PUSH)
    port = pull.bind_to_random_port("tcp://127.0.0.1")
    push.connect(f"tcp://127.0.0.1:{port}")
    push.send(b"x" * 100)
    assert eventually(lambda: pull.stats()["drops_oversize"] >= 1), pull.stats()
    # Closed here: ctx.destroy(linger=0) then hangs on this PUSH (on main too,
    # without stats; reported to the lead, not fixed here).
    push.close(0)


def test_reconnects(make):
    probe = make(zmq.PULL)
    port = probe.bind_to_random_port("tcp://127.0.0.1")
    probe.close(0)
    dealer = make(zmq.DEALER, reconnect_ivl=10)
    dealer.connect(f"tcp://127.0.0.1:{port}")
    assert eventually(lambda: dealer.stats()["reconnects"] >= 3), dealer.stats()


def test_plain_refused_by_zap(ctx, make):
    zap = ctx.socket(zmq.REP)
    zap.rcvtimeo = 100
    zap.bind("inproc://zeromq.zap.01")
    stop = threading.Event()

    def handler():
        while not stop.is_set():
            try:
                req = zap.recv_multipart()
            except zmq.Again:
                continue
            zap.send_multipart([b"1.0", req[1], b"400", b"no", b"", b""])
        zap.close(0)

    t = threading.Thread(target=handler)
    t.start()
    try:
        server = make(zmq.PULL, plain_server=1)
        client = make(zmq.PUSH, plain_username=b"u", plain_password=b"wrong")
        port = server.bind_to_random_port("tcp://127.0.0.1")
        client.connect(f"tcp://127.0.0.1:{port}")
        assert eventually(lambda: server.stats()["handshake_failed_auth"] >= 1), server.stats()
        assert eventually(lambda: client.stats()["handshake_failed_auth"] >= 1), client.stats()
        assert server.stats()["peers"] == []
    finally:
        stop.set()
        t.join()
