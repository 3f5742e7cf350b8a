"""Socket API: send/recv variants, options, errors, endpoints, lifecycle."""

import json
import pickle
import threading
import time

import pytest

import oxmq
from conftest import ipc_endpoint


def test_send_recv_bytes(pair):
    a, b = pair
    assert a.send(b"hello") is None
    assert b.recv() == b"hello"
    a.send(b"")
    assert b.recv() == b""
    big = bytes(range(256)) * 4096
    a.send(big)
    assert b.recv() == big


def test_send_buffer_objects(pair):
    a, b = pair
    a.send(bytearray(b"ba"))
    assert b.recv() == b"ba"
    a.send(memoryview(b"mv"))
    assert b.recv() == b"mv"
    import array

    arr = array.array("i", [1, 2, 3])
    a.send(arr)
    assert b.recv() == arr.tobytes()


def test_send_wrong_types(pair):
    a, _ = pair
    with pytest.raises(TypeError, match="send_string"):
        a.send("text")
    with pytest.raises(TypeError, match="buffer"):
        a.send(12)
    with pytest.raises(TypeError):
        a.send(None)
    with pytest.raises(TypeError):
        a.send_string(b"bytes")
    with pytest.raises(TypeError):
        a.send_multipart([b"ok", 5])
    with pytest.raises(TypeError):
        a.send_multipart(["str"])
    with pytest.raises(TypeError):
        a.set(oxmq.LINGER, b"x")
    with pytest.raises(TypeError):
        a.set(oxmq.ROUTING_ID, "str")
    with pytest.raises(TypeError):
        a.set(oxmq.ROUTING_ID, 5)
    with pytest.raises(TypeError):
        a.bind(5)


def test_flags_and_nonblocking(pair):
    a, b = pair
    with pytest.raises(oxmq.Again) as ei:
        b.recv(oxmq.NOBLOCK)
    assert ei.value.errno == oxmq.EAGAIN
    with pytest.raises(oxmq.Again):
        b.recv(flags=oxmq.DONTWAIT)
    a.send(b"x", oxmq.NOBLOCK)
    assert b.recv(oxmq.NOBLOCK) == b"x"


def test_sndmore_and_rcvmore(pair):
    a, b = pair
    a.send(b"1", oxmq.SNDMORE)
    a.send(b"2", flags=oxmq.SNDMORE)
    a.send(b"3")
    assert b.recv() == b"1"
    assert b.rcvmore == 1 and b.getsockopt(oxmq.RCVMORE) == 1
    assert b.recv() == b"2"
    assert b.recv() == b"3"
    assert b.rcvmore == 0


def test_multipart(pair):
    a, b = pair
    a.send_multipart([b"a", bytearray(b"b"), memoryview(b"c"), b""])
    assert b.recv_multipart() == [b"a", b"b", b"c", b""]
    a.send_multipart((b"t",))
    assert b.recv_multipart() == [b"t"]
    a.send_multipart(iter([b"g1", b"g2"]))
    assert b.recv_multipart() == [b"g1", b"g2"]
    a.send_multipart([b"x", b"y"])
    frames = b.recv_multipart(copy=False)
    assert [f.bytes for f in frames] == [b"x", b"y"]
    assert frames[0].more and not frames[1].more
    with pytest.raises(oxmq.Again):
        b.recv_multipart(oxmq.NOBLOCK)


def test_multipart_send_more_continues(pair):
    a, b = pair
    a.send_multipart([b"a", b"b"], oxmq.SNDMORE)
    a.send(b"c")
    assert b.recv_multipart() == [b"a", b"b", b"c"]


def test_strings(pair):
    a, b = pair
    a.send_string("héllo wörld")
    assert b.recv_string() == "héllo wörld"
    a.send_string("latin", encoding="latin-1")
    assert b.recv_string(encoding="latin-1") == "latin"
    a.send_string("ü", encoding="latin-1")
    assert b.recv() == "ü".encode("latin-1")
    a.send(b"\xff\xfe")
    with pytest.raises(UnicodeDecodeError):
        b.recv_string()
    a.send_unicode("u")
    assert b.recv_unicode() == "u"


def test_json_pyobj_serialized(pair):
    a, b = pair
    obj = {"a": [1, 2, {"b": None}], "s": "ü"}
    a.send_json(obj)
    assert b.recv_json() == obj
    a.send_pyobj({"set": {1, 2}})
    assert b.recv_pyobj() == {"set": {1, 2}}

    def ser(o):
        return [b"hdr", json.dumps(o).encode()]

    def deser(frames):
        assert frames[0] in (b"hdr",) or frames[0].bytes == b"hdr"
        last = frames[1]
        return json.loads(last if isinstance(last, bytes) else last.bytes)

    a.send_serialized([1, 2], ser)
    assert b.recv_serialized(deser) == [1, 2]
    a.send_serialized({"k": 1}, ser, copy=False)
    assert b.recv_serialized(deser, copy=False) == {"k": 1}
    a.send(pickle.dumps(5))
    assert b.recv_pyobj() == 5


def test_recv_into(pair):
    a, b = pair
    buf = bytearray(10)
    a.send(b"hello")
    assert b.recv_into(buf) == 5
    assert buf[:5] == b"hello"
    a.send(b"0123456789abcdef")
    n = b.recv_into(buf)
    assert n == 16 and buf == b"0123456789"
    a.send(b"xyz")
    assert b.recv_into(buf, nbytes=2) == 3 and buf[:3] == b"xy2"
    with pytest.raises(BufferError):
        b.recv_into(b"readonly")
    with pytest.raises(oxmq.Again):
        b.recv_into(buf, flags=oxmq.NOBLOCK)


def test_option_attributes(make):
    s = make(oxmq.DEALER)
    assert s.linger == -1
    s.linger = 0
    assert s.linger == 0 and s.getsockopt(oxmq.LINGER) == 0 and s.get(oxmq.LINGER) == 0
    s.rcvhwm = 5
    assert s.rcvhwm == 5 and s.RCVHWM == 5
    s.SNDHWM = 7
    assert s.sndhwm == 7
    s.identity = b"me"
    assert s.identity == b"me" and s.routing_id == b"me"
    s.setsockopt_string(oxmq.ROUTING_ID, "you")
    assert s.getsockopt_string(oxmq.ROUTING_ID) == "you"
    s.set_string(oxmq.ROUTING_ID, "them")
    assert s.get_string(oxmq.ROUTING_ID) == "them"
    s.hwm = 11
    assert s.hwm == 11 and s.rcvhwm == 11
    s.setsockopt(oxmq.RCVTIMEO, 123)
    assert s.rcvtimeo == 123
    assert s.type == oxmq.DEALER and s.socket_type == oxmq.SocketType.DEALER
    assert s.TYPE == oxmq.DEALER
    assert isinstance(s.FD, int) and s.FD == s.fileno() and s.fd == s.FD
    assert s.EVENTS & oxmq.POLLOUT == 0  # nothing connected
    assert s.events == s.EVENTS
    with pytest.raises(AttributeError):
        s.no_such_option
    with pytest.raises(AttributeError, match="write-only"):
        s.tcp_accept_filter
    with pytest.raises(AttributeError, match="no such option"):
        s.custom_attr = 5  # pyzmq: only options, class attributes and annotated names

    class Annotated(oxmq.Socket):
        custom_attr: int

    a = Annotated(s.context, oxmq.PUSH)
    a.custom_attr = 5
    assert a.custom_attr == 5
    a.close()
    with pytest.raises(oxmq.ZMQError) as ei:
        s.set(9999, 1)
    assert ei.value.errno == oxmq.EINVAL
    with pytest.raises(oxmq.ZMQError):
        s.linger = -5
    assert "linger" in dir(s)


def test_gssapi_options_as_debian_libzmq(make):
    # The values Debian's libzmq5 (built with GSSAPI) gives; the handshake
    # itself is tested against it with a real KDC by `make gssapi-test`.
    assert oxmq.has("gssapi")
    s = make(oxmq.REQ)
    assert s.gssapi_server == 0 and s.gssapi_plaintext == 0
    assert s.getsockopt(oxmq.GSSAPI_PRINCIPAL_NAMETYPE) == 0  # ZMQ_GSSAPI_NT_HOSTBASED
    s.gssapi_service_principal = b"zmqtest/localhost@OXMQ.TEST"
    assert s.mechanism == oxmq.SecurityMechanism.GSSAPI == 3
    assert s.getsockopt_string(oxmq.GSSAPI_SERVICE_PRINCIPAL) == "zmqtest/localhost@OXMQ.TEST"
    s.setsockopt(oxmq.GSSAPI_SERVICE_PRINCIPAL_NAMETYPE, 2)  # ZMQ_GSSAPI_NT_KRB5_PRINCIPAL
    assert s.getsockopt(oxmq.GSSAPI_SERVICE_PRINCIPAL_NAMETYPE) == 2
    s.gssapi_plaintext = 1
    assert s.gssapi_plaintext == 1
    for option, value in [
        (oxmq.GSSAPI_PRINCIPAL_NAMETYPE, 3),
        (oxmq.GSSAPI_PLAINTEXT, 2),
        (oxmq.GSSAPI_SERVER, 2),
        (oxmq.GSSAPI_PRINCIPAL, b""),
        (oxmq.GSSAPI_PRINCIPAL, b"x" * 256),
    ]:
        with pytest.raises(oxmq.ZMQError) as ei:
            s.setsockopt(option, value)
        assert ei.value.errno == oxmq.EINVAL
    server = make(oxmq.REP)
    server.gssapi_server = 1
    assert server.gssapi_server == 1 and server.mechanism == oxmq.GSSAPI
    server.plain_server = 1  # another mechanism takes over, as in libzmq
    assert server.gssapi_server == 0


def test_last_endpoint_and_random_port(make):
    s = make(oxmq.PULL)
    port = s.bind_to_random_port("tcp://127.0.0.1")
    assert 1024 <= port <= 65535
    assert s.last_endpoint == f"tcp://127.0.0.1:{port}".encode()
    p2 = s.bind_to_random_port("tcp://127.0.0.1", min_port=40000, max_port=50000, max_tries=50)
    assert 40000 <= p2 < 50000
    other = make(oxmq.PULL)
    with pytest.raises(oxmq.ZMQBindError):
        other.bind_to_random_port("tcp://127.0.0.1", min_port=p2, max_port=p2 + 1, max_tries=3)


def test_bind_errors(make):
    s = make(oxmq.PULL)
    port = s.bind_to_random_port("tcp://127.0.0.1")
    t = make(oxmq.PULL)
    with pytest.raises(oxmq.ZMQError) as ei:
        t.bind(f"tcp://127.0.0.1:{port}")
    assert ei.value.errno == oxmq.EADDRINUSE
    assert "Address already in use" in str(ei.value)
    with pytest.raises(oxmq.ZMQError) as ei:
        t.bind("nonsense://x")
    assert ei.value.errno == oxmq.EPROTONOSUPPORT
    with pytest.raises(oxmq.ZMQError) as ei:
        t.connect("tcp://")
    assert ei.value.errno == oxmq.EINVAL
    with pytest.raises(oxmq.ZMQError) as ei:
        t.unbind("tcp://127.0.0.1:1")
    assert ei.value.errno == oxmq.ENOENT


def test_bind_connect_context_managers(make):
    a = make(oxmq.PUSH)
    b = make(oxmq.PULL)
    with a.bind("tcp://127.0.0.1:*"):
        ep = a.last_endpoint.decode()
        with b.connect(ep) as sock:
            assert sock is b
            a.send(b"x")
            assert b.recv() == b"x"
    with pytest.raises(oxmq.ZMQError):
        a.unbind(ep)  # already unbound by the context manager


def test_unbind_disconnect(make, ipc_dir):
    a = make(oxmq.PUSH)
    b = make(oxmq.PULL)
    ep = ipc_endpoint(ipc_dir, "ud")
    a.bind(ep)
    b.connect(ep)
    a.send(b"1")
    assert b.recv() == b"1"
    b.disconnect(ep)
    a.unbind(ep)


def test_reqrep_efsm(make):
    req = make(oxmq.REQ)
    rep = make(oxmq.REP)
    rep.bind("inproc://efsm")
    req.connect("inproc://efsm")
    with pytest.raises(oxmq.ZMQError) as ei:
        req.recv()
    assert ei.value.errno == oxmq.EFSM
    req.send(b"q")
    with pytest.raises(oxmq.ZMQError) as ei:
        req.send(b"q2")
    assert ei.value.errno == oxmq.EFSM
    assert rep.recv() == b"q"
    rep.send(b"a")
    assert req.recv() == b"a"


def test_pubsub_subscribe(make):
    pub = make(oxmq.PUB)
    sub = make(oxmq.SUB)
    pub.bind("inproc://ps")
    sub.connect("inproc://ps")
    sub.subscribe("a")
    sub.subscribe(b"b")
    sub.setsockopt(oxmq.SUBSCRIBE, b"c")
    sub.unsubscribe("c")
    time.sleep(0.05)
    for t in (b"a1", b"b1", b"c1", b"d1", b"a2"):
        pub.send(t)
    assert sub.recv() == b"a1"
    assert sub.recv() == b"b1"
    assert sub.recv() == b"a2"
    with pytest.raises(oxmq.Again):
        sub.recv(oxmq.NOBLOCK)


def test_closed_socket_raises_enotsock(make):
    s = make(oxmq.PUSH)
    assert not s.closed
    s.close()
    assert s.closed
    s.close()  # idempotent
    for call in (
        lambda: s.send(b"x"),
        lambda: s.recv(),
        lambda: s.send_multipart([b"x"]),
        lambda: s.recv_multipart(),
        lambda: s.send_string("x"),
        lambda: s.recv_string(),
        lambda: s.bind("inproc://closed"),
        lambda: s.connect("inproc://closed"),
        lambda: s.get(oxmq.LINGER),
        lambda: s.set(oxmq.LINGER, 0),
        lambda: s.linger,
        lambda: s.poll(0),
        lambda: s.fileno(),
        lambda: s.recv_into(bytearray(1)),
    ):
        with pytest.raises(oxmq.ZMQError) as ei:
            call()
        assert ei.value.errno == oxmq.ENOTSOCK


def _pull_on_inproc(ctx, make):
    s = ctx.socket(oxmq.PULL)
    s.bind("inproc://close-wakes")
    return s


def _req_waiting_for_its_reply(ctx, make):
    # A REQ over tcp reads its connection itself while it waits for the reply.
    req, rep = _req_rep_over_tcp(make)
    req.rcvtimeo = -1
    req.send(b"never answered")
    assert rep.recv() == b"never answered"
    return req


@pytest.mark.parametrize("setup", [_pull_on_inproc, _req_waiting_for_its_reply])
def test_close_from_another_thread_wakes_a_blocked_recv(ctx, make, setup):
    # The socket's slot: close() from another thread ends the blocked call
    # with ENOTSOCK, and the socket is freed when that call leaves it.
    s = setup(ctx, make)
    got = []

    def blocked():
        try:
            s.recv()
        except oxmq.ZMQError as e:
            got.append(e.errno)

    t = threading.Thread(target=blocked)
    t.start()
    time.sleep(0.2)  # let it block; the outcome is the same if it has not yet
    s.close()
    t.join(10)
    assert not t.is_alive()
    assert got == [oxmq.ENOTSOCK]
    assert s.closed


def test_socket_context_manager(ctx):
    with ctx.socket(oxmq.PUSH) as s:
        assert not s.closed
    assert s.closed


def test_close_with_linger(ctx):
    s = ctx.socket(oxmq.PUSH)
    s.connect("tcp://127.0.0.1:1")
    s.send(b"queued")
    s.close(linger=0)
    assert s.closed


def test_socket_poll(pair):
    a, b = pair
    assert b.poll(0) == 0
    assert b.poll(10) == 0
    a.send(b"x")
    assert b.poll(1000) == oxmq.POLLIN
    assert b.poll(None) == oxmq.POLLIN
    assert a.poll(0, oxmq.POLLOUT) == oxmq.POLLOUT
    assert b.recv() == b"x"


def test_sndtimeo_on_full_queue(make):
    a = make(oxmq.PUSH, sndhwm=1, sndtimeo=100)
    a.bind("inproc://hwm")
    # no peer: a PUSH with no peers blocks; with SNDTIMEO it raises Again
    t0 = time.monotonic()
    with pytest.raises(oxmq.Again):
        a.send(b"x")
    assert 0.08 < time.monotonic() - t0 < 2
    with pytest.raises(oxmq.Again):
        a.send(b"x", oxmq.NOBLOCK)
    with pytest.raises(oxmq.Again):
        a.send_multipart([b"x", b"y"], oxmq.NOBLOCK)


def test_blocking_recv_wakes_on_message(pair):
    a, b = pair

    def later():
        time.sleep(0.2)
        a.send(b"late")

    t = threading.Thread(target=later)
    t.start()
    t0 = time.monotonic()
    assert b.recv() == b"late"
    assert time.monotonic() - t0 < 2
    t.join()


def test_blocking_send_waits_for_room(make):
    a = make(oxmq.PUSH, sndhwm=1)
    b = make(oxmq.PULL, rcvhwm=1)
    a.bind("inproc://room")
    b.connect("inproc://room")
    sent = 0
    while True:
        try:
            a.send(b"m", oxmq.NOBLOCK)
            sent += 1
        except oxmq.Again:
            break

    def drain():
        time.sleep(0.2)
        for _ in range(sent + 1):
            b.recv()

    t = threading.Thread(target=drain)
    t.start()
    a.send(b"m")  # blocks until the drainer makes room
    t.join()


def test_router_dealer_identities(make):
    router = make(oxmq.ROUTER)
    dealer = make(oxmq.DEALER)
    dealer.identity = b"dealer-1"
    router.bind("inproc://rd")
    dealer.connect("inproc://rd")
    dealer.send(b"hi")
    ident, msg = router.recv_multipart()
    assert ident == b"dealer-1" and msg == b"hi"
    router.send_multipart([ident, b"back"])
    assert dealer.recv() == b"back"


def test_router_mandatory_unroutable(make):
    router = make(oxmq.ROUTER, router_mandatory=1)
    with pytest.raises(oxmq.ZMQError) as ei:
        router.send_multipart([b"nobody", b"x"])
    assert ei.value.errno == oxmq.EHOSTUNREACH


def test_copy_threshold_attribute(make):
    s = make(oxmq.PUSH)
    assert s.copy_threshold == oxmq.COPY_THRESHOLD
    s.copy_threshold = 10
    assert s.copy_threshold == 10


def test_repr_and_socket_class(ctx):
    class MySocket(oxmq.Socket):
        pass

    s = ctx.socket(oxmq.PUSH, socket_class=MySocket)
    assert isinstance(s, MySocket)
    assert "PUSH" in repr(s)
    s.close()
    assert "closed" in repr(s)
    s2 = oxmq.Socket(ctx, oxmq.PULL)
    assert s2.type == oxmq.PULL and s2.context is ctx
    s2.close()
    with pytest.raises(oxmq.ZMQError):
        ctx.socket(999)
    with pytest.raises(TypeError):
        oxmq.Socket(object(), oxmq.PULL)


def test_large_bytes_copy_send_lends_the_object(ctx):
    """A copying send of a large exact `bytes` keeps a reference instead of a
    copy (bytes are immutable); an inproc receiver in the same process gets
    that very object back. Mutable buffers and subclasses are still copied."""
    pull = ctx.socket(oxmq.PULL)
    pull.bind("inproc://lend")
    push = ctx.socket(oxmq.PUSH)
    push.connect("inproc://lend")
    big = b"y" * (push.copy_threshold + 1)
    push.send(big)
    assert pull.recv() is big
    push.send_multipart([big, b"small"])
    parts = pull.recv_multipart()
    assert parts[0] is big and parts[1] == b"small"
    ba = bytearray(big)
    push.send(ba)
    ba[0] = 0
    got = pull.recv()
    assert type(got) is bytes and got == big

    class Sub(bytes):
        pass

    sub = Sub(big)
    push.send(sub)
    got = pull.recv()
    assert type(got) is bytes and got == big
    small = b"s" * 100
    push.send(small)
    assert pull.recv() == small
    # recv(copy=False) of a lent body still gives a Frame with the same bytes
    push.send(big)
    assert pull.recv(copy=False).bytes == big
    push.close()
    pull.close()


def test_bytes_from_4_kib_are_lent_below_the_copy_threshold(ctx):
    """Lending beats copying from 4 KiB, so an exact bytes travels by
    reference from there even below COPY_THRESHOLD; smaller ones and other
    buffers keep pyzmq's copy semantics, and a tracked copy=False send of
    one is reported done at once, as pyzmq reports its copies."""
    pull = ctx.socket(oxmq.PULL)
    pull.bind("inproc://lend4k")
    push = ctx.socket(oxmq.PUSH)
    push.connect("inproc://lend4k")
    assert push.copy_threshold > 4096
    mid = b"m" * 4096
    push.send(mid)
    assert pull.recv() is mid
    tracker = push.send(mid, copy=False, track=True)
    assert tracker.done
    assert pull.recv() is mid
    below = b"b" * 4095
    push.send(below)
    got = pull.recv()
    assert got == below and got is not below
    ba = bytearray(mid)
    push.send(ba)
    ba[0] = 0
    assert pull.recv() == mid
    push.close()
    pull.close()


def _req_rep_over_tcp(make):
    rep = make(oxmq.REP)
    port = rep.bind_to_random_port("tcp://127.0.0.1")
    req = make(oxmq.REQ)
    req.connect("tcp://127.0.0.1:%d" % port)
    return req, rep


def test_a_blocked_req_recv_leaves_the_socket_to_other_threads(make):
    # A blocking REQ receive may read its connection itself while it waits;
    # the socket stays free meanwhile: another thread's calls on it go
    # through (they would fail with EINVAL "in use" if the wait held it).
    req, rep = _req_rep_over_tcp(make)
    stop = threading.Event()
    errors, calls = [], [0]

    def other():
        while not stop.is_set():
            try:
                req.getsockopt(oxmq.RCVTIMEO)
                calls[0] += 1
            except oxmq.ZMQError as e:
                errors.append(e)
            time.sleep(0.001)

    def server():
        for i in range(20):
            m = rep.recv()
            if i % 2 == 0:
                time.sleep(0.02)
            rep.send(m + b"!")

    threads = [threading.Thread(target=other), threading.Thread(target=server)]
    for t in threads:
        t.start()
    try:
        for i in range(20):
            req.send(b"q%d" % i)
            assert req.recv() == b"q%d!" % i
    finally:
        stop.set()
        for t in threads:
            t.join(10)
    assert errors == []
    assert calls[0] > 50
