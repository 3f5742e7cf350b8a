"""Large buffers sent with a copy (bytearray, memoryview) over tcp and ipc:
the core may write them to the connection from the buffer itself
(`Socket.try_send_direct`). What arrives must be what the buffer held when
`send` returned, in order with everything else sent on the socket."""

import array
import threading

import pytest

import oxmq as zmq

SIZE = 256 * 1024


def connected(make, endpoint):
    push, pull = make(zmq.PUSH), make(zmq.PULL)
    pull.bind(endpoint)
    push.connect(pull.getsockopt(zmq.LAST_ENDPOINT).decode())
    push.send(b"hello")
    assert pull.recv() == b"hello"
    return push, pull


@pytest.mark.parametrize("transport", ["tcp", "ipc"])
def test_buffers_arrive_whole_and_in_order(make, tmp_path, transport):
    ep = "tcp://127.0.0.1:*" if transport == "tcp" else "ipc://%s" % (tmp_path / "direct.sock")
    push, pull = connected(make, ep)
    n = 120
    got = []
    rx = threading.Thread(target=lambda: got.extend(pull.recv_multipart() for _ in range(n)))
    rx.start()
    buf = bytearray(SIZE)
    for i in range(n):
        tag = i % 251
        if i % 4 == 0:
            buf[:] = bytes([tag]) * SIZE
            push.send(buf)
        elif i % 4 == 1:
            push.send(memoryview(bytes([tag]) * (SIZE + i)))
        elif i % 4 == 2:
            push.send(bytes([tag]) * 10)
        else:
            push.send_multipart([bytearray([tag]) * SIZE, b"tail"])
    rx.join(30)
    assert len(got) == n
    for i, parts in enumerate(got):
        tag = i % 251
        body = parts[0]
        assert body[:1] == bytes([tag]) and body[-1:] == bytes([tag]), "message %d out of order" % i
        assert body == bytes([tag]) * len(body), "message %d corrupted" % i
        assert len(body) == {0: SIZE, 1: SIZE + i, 2: 10, 3: SIZE}[i % 4]
        assert parts[1:] == ([b"tail"] if i % 4 == 3 else [])


def test_a_buffer_changed_after_send_is_not_what_arrives(make):
    push, pull = connected(make, "tcp://127.0.0.1:*")
    push.sndbuf = 8192  # the kernel takes part of the message; the rest is copied
    buf = bytearray(b"a" * (4 << 20))
    push.send(buf)
    buf[:] = b"b" * len(buf)
    push.send(array.array("B", b"c" * (1 << 20)))
    assert pull.recv() == b"a" * (4 << 20)
    assert pull.recv() == b"c" * (1 << 20)


def test_noblock_sends_to_a_peer_that_does_not_read(make):
    push, pull = connected(make, "tcp://127.0.0.1:*")
    push.sndhwm = 2
    pull.rcvhwm = 2
    buf = bytearray(1 << 20)
    sent = 0
    with pytest.raises(zmq.Again):
        while True:
            push.send(buf, zmq.NOBLOCK)
            sent += 1
            assert sent < 1000
    assert sent >= 1
    for _ in range(sent):
        assert len(pull.recv()) == 1 << 20


@pytest.mark.parametrize("transport", ["tcp", "ipc"])
def test_req_rep_round_trips_of_every_size(make, tmp_path, transport):
    # REQ and REP write small sends themselves (bytes, with the GIL
    # released), large ones through the I/O thread: replies come back to
    # the request they answer, whole, with strict alternation kept.
    ep = "tcp://127.0.0.1:*" if transport == "tcp" else "ipc://%s" % (tmp_path / "rr.sock")
    rep, req = make(zmq.REP), make(zmq.REQ)
    rep.bind(ep)
    req.connect(rep.getsockopt(zmq.LAST_ENDPOINT).decode())
    n = 90

    def serve():
        for _ in range(n):
            rep.send(rep.recv() + b"!")

    server = threading.Thread(target=serve)
    server.start()
    for i in range(n):
        size = (10, 5000, 300 * 1024)[i % 3] + i
        ask = bytes([i % 251]) * size
        req.send(ask if i % 2 else bytearray(ask))
        with pytest.raises(zmq.ZMQError) as e:
            req.send(b"again")
        assert e.value.errno == zmq.EFSM
        assert req.recv() == ask + b"!", "round trip %d" % i
    server.join(30)
    assert not server.is_alive()
