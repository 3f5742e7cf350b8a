"""Every socket-type pair over tcp, ipc and inproc."""

import time

import pytest
import zmq

from conftest import wait_sub

TRANSPORTS = ["tcp", "ipc", "inproc"]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_pair(pair, endpoint, transport):
    a, b = pair(zmq.PAIR, zmq.PAIR, endpoint(transport))
    a.send(b"ping")
    assert b.recv() == b"ping"
    b.send(b"pong")
    assert a.recv() == b"pong"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_push_pull(pair, endpoint, transport):
    pull, push = pair(zmq.PULL, zmq.PUSH, endpoint(transport))
    for i in range(500):
        push.send(b"%d" % i)
    assert [pull.recv() for _ in range(500)] == [b"%d" % i for i in range(500)]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_push_binds(pair, endpoint, transport):
    push, pull = pair(zmq.PUSH, zmq.PULL, endpoint(transport))
    push.send(b"x")
    assert pull.recv() == b"x"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_req_rep(pair, endpoint, transport):
    rep, req = pair(zmq.REP, zmq.REQ, endpoint(transport))
    for i in range(100):
        req.send(b"q%d" % i)
        assert rep.recv() == b"q%d" % i
        rep.send(b"a%d" % i)
        assert req.recv() == b"a%d" % i


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_pub_sub(pair, endpoint, transport):
    pub, sub = pair(zmq.PUB, zmq.SUB, endpoint(transport))
    sub.subscribe(b"A")
    wait_sub(pub, sub, b"A")
    pub.send(b"B nope")
    pub.send(b"A yes")
    pub.send(b"AB yes too")
    assert sub.recv() == b"A yes"
    assert sub.recv() == b"AB yes too"
    assert sub.poll(100) == 0


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_sub_binds(pair, endpoint, transport):
    sub, pub = pair(zmq.SUB, zmq.PUB, endpoint(transport))
    sub.subscribe(b"")
    wait_sub(pub, sub)
    pub.send(b"hello")
    assert sub.recv() == b"hello"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_xpub_xsub(pair, endpoint, transport):
    xpub, xsub = pair(zmq.XPUB, zmq.XSUB, endpoint(transport))
    xsub.send(b"\x01topic")
    assert xpub.recv() == b"\x01topic"
    xpub.send(b"topic data")
    xpub.send(b"other data")
    assert xsub.recv() == b"topic data"
    assert xsub.poll(100) == 0
    xsub.send(b"\x00topic")
    assert xpub.recv() == b"\x00topic"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_xpub_sub(pair, endpoint, transport):
    xpub, sub = pair(zmq.XPUB, zmq.SUB, endpoint(transport))
    sub.subscribe(b"news")
    assert xpub.recv() == b"\x01news"
    xpub.send(b"news!")
    assert sub.recv() == b"news!"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_pub_xsub(pair, endpoint, transport):
    pub, xsub = pair(zmq.PUB, zmq.XSUB, endpoint(transport))
    xsub.send(b"\x01")
    deadline = time.monotonic() + 5
    while not xsub.poll(20):
        assert time.monotonic() < deadline
        pub.send(b"probe")
    assert xsub.recv() == b"probe"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_dealer_router(pair, endpoint, transport):
    router, dealer = pair(zmq.ROUTER, zmq.DEALER, endpoint(transport))
    dealer.send_multipart([b"", b"hello"])
    ident, empty, body = router.recv_multipart()
    assert (empty, body) == (b"", b"hello")
    router.send_multipart([ident, b"", b"world"])
    assert dealer.recv_multipart() == [b"", b"world"]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_req_router(pair, endpoint, transport):
    router, req = pair(zmq.ROUTER, zmq.REQ, endpoint(transport))
    req.send(b"hi")
    ident, empty, body = router.recv_multipart()
    assert empty == b"" and body == b"hi"
    router.send_multipart([ident, b"", b"there"])
    assert req.recv() == b"there"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_dealer_rep(pair, endpoint, transport):
    rep, dealer = pair(zmq.REP, zmq.DEALER, endpoint(transport))
    dealer.send_multipart([b"", b"q"])
    assert rep.recv() == b"q"
    rep.send(b"a")
    assert dealer.recv_multipart() == [b"", b"a"]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_dealer_dealer(pair, endpoint, transport):
    a, b = pair(zmq.DEALER, zmq.DEALER, endpoint(transport))
    b.send(b"1")
    assert a.recv() == b"1"
    a.send(b"2")
    assert b.recv() == b"2"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_router_router(ctx, endpoint, transport):
    a = ctx.socket(zmq.ROUTER)
    b = ctx.socket(zmq.ROUTER)
    for s, name in ((a, b"A"), (b, b"B")):
        s.linger = 0
        s.rcvtimeo = 5000
        s.setsockopt(zmq.ROUTING_ID, name)
    b.router_mandatory = 1
    a.bind(endpoint(transport))
    b.connect(a.last_endpoint.decode())
    # The connecting ROUTER learns the peer's id from the handshake; until
    # then ROUTER_MANDATORY makes the send fail with EHOSTUNREACH.
    deadline = time.monotonic() + 5
    while True:
        try:
            b.send_multipart([b"A", b"x"])
            break
        except zmq.ZMQError as e:
            assert e.errno == zmq.EHOSTUNREACH
            assert time.monotonic() < deadline
            time.sleep(0.01)
    assert a.recv_multipart() == [b"B", b"x"]
    a.send_multipart([b"B", b"y"])
    assert b.recv_multipart() == [b"A", b"y"]


def test_incompatible_types_do_not_talk(ctx, endpoint):
    a = ctx.socket(zmq.PUSH)
    b = ctx.socket(zmq.PUB)
    for s in (a, b):
        s.linger = 0
    a.bind(endpoint("tcp"))
    b.connect(a.last_endpoint.decode())
    # PUB has no way to receive; PUSH with only an incompatible peer never gets POLLOUT.
    assert a.poll(300, zmq.POLLOUT) == 0


def test_socket_type_option(ctx):
    for t in (zmq.PAIR, zmq.PUB, zmq.SUB, zmq.REQ, zmq.REP, zmq.DEALER, zmq.ROUTER,
              zmq.PULL, zmq.PUSH, zmq.XPUB, zmq.XSUB):
        s = ctx.socket(t)
        assert s.type == t
        assert s.getsockopt(zmq.TYPE) == t
        s.close()
