"""Draft DGRAM through oxmq's pyzmq API (zmq.DGRAM, send_multipart /
recv_multipart of [address, body]), against plain UDP sockets and against
pyzmq's own libzmq 4.3.5, which creates DGRAM sockets by number."""

import socket as pysocket

import pytest

import oxmq as zmq


def _free_port():
    u = pysocket.socket(pysocket.AF_INET, pysocket.SOCK_DGRAM)
    u.bind(("127.0.0.1", 0))
    port = u.getsockname()[1]
    u.close()
    return port


def _bound(make):
    # libzmq's LAST_ENDPOINT for udp is the address as given ("*" port
    # unresolved, no "udp://"), so the port is picked here.
    s = make(zmq.DGRAM)
    addr = "127.0.0.1:%d" % _free_port()
    s.bind("udp://" + addr)
    assert s.getsockopt(zmq.LAST_ENDPOINT).decode() == addr
    return s, addr


def _udp():
    u = pysocket.socket(pysocket.AF_INET, pysocket.SOCK_DGRAM)
    u.bind(("127.0.0.1", 0))
    u.settimeout(5)
    return u, "%s:%d" % u.getsockname()


def test_constant_and_socket_kind(make):
    assert zmq.DGRAM == 18 == zmq.SocketType.DGRAM
    s = make(zmq.DGRAM)
    assert s.type == zmq.DGRAM
    assert s.getsockopt(zmq.THREAD_SAFE) == 0
    assert s.getsockopt(zmq.FD) >= 0


def test_plain_udp_peer(make):
    d, d_addr = _bound(make)
    u, u_addr = _udp()
    try:
        u.sendto(b"hello", ("127.0.0.1", int(d_addr.rsplit(":", 1)[1])))
        # libzmq's address frame ends in a NUL byte.
        assert d.recv_multipart() == [u_addr.encode() + b"\0", b"hello"]
        d.send_multipart([u_addr.encode(), b"reply"])
        data, src = u.recvfrom(100)
        assert (data, "%s:%d" % src) == (b"reply", d_addr)
    finally:
        u.close()


def test_libzmq_errors(make):
    s = make(zmq.DGRAM)
    with pytest.raises(zmq.ZMQError) as e:
        s.connect("udp://127.0.0.1:5556")
    assert e.value.errno == zmq.ENOCOMPATPROTO
    with pytest.raises(zmq.Again):
        s.send(b"127.0.0.1:9", zmq.SNDMORE | zmq.NOBLOCK)
    d, _ = _bound(make)
    with pytest.raises(zmq.ZMQError) as e:
        d.send(b"one frame")
    assert e.value.errno == zmq.EINVAL
    with pytest.raises(zmq.ZMQError) as e:
        d.send_multipart([b"127.0.0.1:9", b"a", b"b"])
    assert e.value.errno == zmq.EINVAL


def test_round_trip_with_libzmq_dgram(make):
    """oxmq DGRAM <-> libzmq 4.3.5's dgram_t (pyzmq, created by number 18)."""
    pyzmq = pytest.importorskip("zmq")
    d, d_addr = _bound(make)
    # libzmq's LAST_ENDPOINT keeps a udp "*" port unresolved: pick one.
    u, lz_addr = _udp()
    u.close()
    c = pyzmq.Context()
    lz = None
    try:
        try:
            lz = c.socket(18)
        except pyzmq.ZMQError as e:
            pytest.skip("pyzmq's libzmq has no DGRAM: %s" % e)
        lz.linger = 0
        lz.rcvtimeo = 5000
        lz.bind("udp://" + lz_addr)
        lz.send_multipart([d_addr.encode(), b"from libzmq"])
        got = d.recv_multipart()
        assert got == [lz_addr.encode() + b"\0", b"from libzmq"]
        # Reply to the address frame as received, NUL and all.
        d.send_multipart([got[0], b"from oxmq"])
        assert lz.recv_multipart() == [d_addr.encode() + b"\0", b"from oxmq"]
    finally:
        if lz is not None:
            lz.close()
        c.term()


def test_tcp_is_a_raw_stream(make):
    """DGRAM over tcp as libzmq 4.3.5: an empty notice on connect and on
    disconnect, [a][b] written unframed, each read one frame (the same Rust
    code as udp; tests/interop/dgram/stream_transports.py covers the rest)."""
    d = make(zmq.DGRAM)
    d.rcvtimeo = 5000
    d.bind("tcp://127.0.0.1:*")
    port = int(d.getsockopt(zmq.LAST_ENDPOINT).decode().rsplit(":", 1)[1])
    r = pysocket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        assert d.recv_multipart() == [b""]
        r.sendall(b"raw in")
        assert d.recv_multipart() == [b"raw in"]
        d.send_multipart([b"raw", b" out"])
        got = b""
        while len(got) < 7:
            got += r.recv(100)
        assert got == b"raw out"
    finally:
        r.close()
    assert d.recv_multipart() == [b""]


def test_inproc_passes_frames(make):
    a, b = make(zmq.DGRAM), make(zmq.DGRAM)
    a.rcvtimeo = 5000
    a.bind("inproc://oxmq-dgram-py")
    b.connect("inproc://oxmq-dgram-py")
    b.send_multipart([b"addr", b"body"])
    assert a.recv_multipart() == [b"addr", b"body"]
