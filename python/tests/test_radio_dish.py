"""Draft RADIO/DISH through oxmq's pyzmq API: zmq.RADIO/zmq.DISH,
Socket.join/leave, send(..., group=...), Frame.group (pyzmq's draft names)."""

import socket
import time

import pytest

import oxmq as zmq


def _free_udp_port():
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind(("127.0.0.1", 0))
    port = u.getsockname()[1]
    u.close()
    return port


def _recv_frame(sock, timeout_s=5.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            return sock.recv(zmq.NOBLOCK, copy=False)
        except zmq.Again:
            time.sleep(0.01)
    raise AssertionError("nothing received")


def _sync(radio, dish, group):
    """Probe until the DISH's join has reached the RADIO (or a datagram gets through)."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        radio.send(b"probe", group=group)
        try:
            dish.recv(zmq.NOBLOCK)
            break
        except zmq.Again:
            time.sleep(0.02)
    else:
        raise AssertionError("join never took effect")
    time.sleep(0.05)
    while True:
        try:
            dish.recv(zmq.NOBLOCK)
        except zmq.Again:
            return


@pytest.mark.parametrize("transport", ["tcp", "ipc", "inproc", "udp"])
def test_groups(transport, tmp_path):
    ctx = zmq.Context()
    radio = ctx.socket(zmq.RADIO)
    dish = ctx.socket(zmq.DISH)
    try:
        bind = {
            "tcp": "tcp://127.0.0.1:*",
            "ipc": f"ipc://{tmp_path}/rd.ipc",
            "inproc": "inproc://py-radio-dish",
            "udp": "udp://127.0.0.1:%d" % _free_udp_port(),
        }[transport]
        dish.bind(bind)
        dish.join("Movies")
        last = dish.getsockopt(zmq.LAST_ENDPOINT).decode()
        if transport == "udp":
            # libzmq's udp LAST_ENDPOINT: the address as given, no "udp://".
            assert last == bind[len("udp://") :]
            last = bind
        radio.connect(last)
        _sync(radio, dish, "Movies")
        radio.send(b"Friends", group="TV")
        radio.send(b"Godfather", group=b"Movies")
        f = _recv_frame(dish)
        assert (f.group, f.bytes) == ("Movies", b"Godfather")
        assert f.get("group") == "Movies"
        # A Frame carrying its group.
        frame = zmq.Frame(b"Casablanca")
        frame.group = "Movies"
        radio.send(frame)
        f = _recv_frame(dish)
        assert (f.group, f.bytes) == ("Movies", b"Casablanca")
    finally:
        radio.close(0)
        dish.close(0)
        ctx.term()


def test_errors_are_libzmqs():
    ctx = zmq.Context()
    radio = ctx.socket(zmq.RADIO)
    dish = ctx.socket(zmq.DISH)
    pub = ctx.socket(zmq.PUB)
    try:
        assert dish.getsockopt(zmq.THREAD_SAFE) == 1
        assert pub.getsockopt(zmq.THREAD_SAFE) == 0
        with pytest.raises(zmq.ZMQError) as e:
            dish.getsockopt(zmq.FD)
        assert e.value.errno == zmq.EINVAL
        dish.join("g")
        with pytest.raises(zmq.ZMQError) as e:
            dish.join("g")
        assert e.value.errno == zmq.EINVAL
        with pytest.raises(zmq.ZMQError) as e:
            dish.leave("other")
        assert e.value.errno == zmq.EINVAL
        with pytest.raises(zmq.ZMQError) as e:
            dish.join("x" * 256)
        assert e.value.errno == zmq.EINVAL
        dish.join("x" * 255)
        with pytest.raises(zmq.ZMQError) as e:
            pub.join("g")
        assert e.value.errno == zmq.ENOTSUP
        with pytest.raises(zmq.ZMQError) as e:
            radio.send(b"x", group="x" * 256)
        assert e.value.errno == zmq.EINVAL
        with pytest.raises(zmq.ZMQError) as e:
            radio.bind("udp://*:5556")
        assert e.value.errno == zmq.ENOCOMPATPROTO
        f = zmq.Frame(b"x")
        assert f.group == ""
        f.set("group", b"abc")
        assert f.group == "abc"
    finally:
        for s in (radio, dish, pub):
            s.close(0)
        ctx.term()
