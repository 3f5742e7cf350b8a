"""Socket options get/set (attribute and set/get forms), context options,
and errors: ZMQError errno values, zmq.Again, strerror, closed sockets."""

import errno
import time

import pytest
import zmq

INT_OPTIONS = [
    # (option, value to set)
    (zmq.SNDHWM, 123),
    (zmq.RCVHWM, 456),
    (zmq.LINGER, 250),
    (zmq.RCVTIMEO, 1500),
    (zmq.SNDTIMEO, 2500),
    (zmq.RECONNECT_IVL, 50),
    (zmq.RECONNECT_IVL_MAX, 1000),
    (zmq.BACKLOG, 42),
    (zmq.SNDBUF, 65536),
    (zmq.RCVBUF, 65536),
    (zmq.IMMEDIATE, 1),
    (zmq.IPV6, 1),
    (zmq.TCP_KEEPALIVE, 1),
    (zmq.TCP_KEEPALIVE_IDLE, 30),
    (zmq.TCP_KEEPALIVE_CNT, 5),
    (zmq.TCP_KEEPALIVE_INTVL, 10),
    (zmq.HANDSHAKE_IVL, 5000),
    (zmq.HEARTBEAT_IVL, 100),
    (zmq.HEARTBEAT_TIMEOUT, 300),
    (zmq.TOS, 8),
    (zmq.MAXMSGSIZE, 1 << 20),
]


@pytest.mark.parametrize("opt,value", INT_OPTIONS, ids=lambda x: str(x))
def test_int_option_roundtrip(ctx, opt, value):
    s = ctx.socket(zmq.DEALER)
    s.setsockopt(opt, value)
    assert s.getsockopt(opt) == value
    s.close()


def test_option_defaults(ctx):
    s = ctx.socket(zmq.DEALER)
    assert s.sndhwm == 1000 and s.rcvhwm == 1000
    assert s.linger == -1
    assert s.rcvtimeo == -1 and s.sndtimeo == -1
    assert s.getsockopt(zmq.TYPE) == zmq.DEALER
    assert s.getsockopt(zmq.RCVMORE) == 0
    assert s.getsockopt(zmq.EVENTS) == 0  # nothing to read, no peer to send to
    assert s.getsockopt(zmq.IMMEDIATE) == 0
    assert s.getsockopt(zmq.LAST_ENDPOINT) == b""
    s.close()


def test_attribute_access(ctx):
    s = ctx.socket(zmq.SUB)
    s.rcvhwm = 77
    assert s.rcvhwm == 77
    s.RCVHWM = 78
    assert s.getsockopt(zmq.RCVHWM) == 78
    s.hwm = 10  # pyzmq's hwm property sets both
    assert s.sndhwm == 10 and s.rcvhwm == 10
    s.set(zmq.SUBSCRIBE, b"x")
    s.setsockopt_string(zmq.SUBSCRIBE, "y")
    with pytest.raises(AttributeError):
        s.subscribe_is_not_an_option_name  # noqa: B018
    s.close()


def test_routing_id_bytes(ctx):
    s = ctx.socket(zmq.DEALER)
    s.setsockopt(zmq.ROUTING_ID, b"\x01\x02id")
    assert s.getsockopt(zmq.ROUTING_ID) == b"\x01\x02id"
    s.setsockopt_string(zmq.ROUTING_ID, "name")
    assert s.getsockopt_string(zmq.ROUTING_ID) == "name"
    s.close()


def test_context_default_sockopts(ctx):
    ctx.linger = 0
    ctx.sndhwm = 5
    s = ctx.socket(zmq.PUSH)
    assert s.linger == 0 and s.sndhwm == 5
    s.close()


def test_context_options(ctx):
    assert ctx.get(zmq.IO_THREADS) >= 1
    assert ctx.get(zmq.MAX_SOCKETS) > 0
    ctx.set(zmq.MAX_SOCKETS, 512)
    assert ctx.get(zmq.MAX_SOCKETS) == 512
    c2 = zmq.Context(io_threads=2)
    assert c2.get(zmq.IO_THREADS) == 2
    c2.term()


def test_last_endpoint_and_wildcard(ctx):
    s = ctx.socket(zmq.PULL)
    s.bind("tcp://127.0.0.1:*")
    ep = s.last_endpoint.decode()
    assert ep.startswith("tcp://127.0.0.1:") and int(ep.rsplit(":", 1)[1]) > 0
    port = s.bind_to_random_port("tcp://127.0.0.1")
    assert s.last_endpoint.decode() == "tcp://127.0.0.1:%d" % port
    s.unbind(ep)
    s.close()


def test_again_on_dontwait(ctx):
    s = ctx.socket(zmq.PULL)
    s.bind("inproc://again")
    with pytest.raises(zmq.Again) as e:
        s.recv(zmq.NOBLOCK)
    assert e.value.errno == zmq.EAGAIN == errno.EAGAIN
    assert isinstance(e.value, zmq.ZMQError)
    s.close()


def test_rcvtimeo_raises_again(ctx):
    s = ctx.socket(zmq.PULL)
    s.rcvtimeo = 100
    s.bind("inproc://timeout")
    t0 = time.monotonic()
    with pytest.raises(zmq.Again):
        s.recv()
    assert 0.08 < time.monotonic() - t0 < 3
    s.close()


def test_sndtimeo_raises_again(ctx):
    s = ctx.socket(zmq.PUSH)  # no peer: send blocks
    s.sndtimeo = 100
    s.bind("inproc://sndtimeo")
    with pytest.raises(zmq.Again):
        s.send(b"x")
    s.close(linger=0)


def test_errno_values(ctx):
    s = ctx.socket(zmq.REQ)
    with pytest.raises(zmq.ZMQError) as e:
        s.bind("nope://x")
    assert e.value.errno == zmq.EPROTONOSUPPORT
    with pytest.raises(zmq.ZMQError) as e:
        s.connect("tcp://")
    assert e.value.errno == zmq.EINVAL
    with pytest.raises(zmq.ZMQError) as e:
        s.recv()  # REQ must send first
    assert e.value.errno == zmq.EFSM
    with pytest.raises(zmq.ZMQError) as e:
        s.setsockopt(9999, 1)
    assert e.value.errno == zmq.EINVAL
    s.close()

    a = ctx.socket(zmq.PULL)
    a.bind("tcp://127.0.0.1:*")
    b = ctx.socket(zmq.PULL)
    with pytest.raises(zmq.ZMQError) as e:
        b.bind(a.last_endpoint.decode())
    assert e.value.errno == zmq.EADDRINUSE
    with pytest.raises(zmq.ZMQError) as e:
        b.unbind("tcp://127.0.0.1:1")
    assert e.value.errno == errno.ENOENT
    a.close()
    b.close()

    p = ctx.socket(zmq.PUB)
    with pytest.raises(zmq.ZMQError) as e:
        p.recv()
    assert e.value.errno == zmq.ENOTSUP
    p.close()

    with pytest.raises(zmq.ZMQError) as e:
        ctx.socket(12345)
    assert e.value.errno == zmq.EINVAL

    x = ctx.socket(zmq.PAIR)
    x.bind("inproc://dup")
    y = ctx.socket(zmq.PAIR)
    with pytest.raises(zmq.ZMQError) as e:
        y.bind("inproc://dup")
    assert e.value.errno == zmq.EADDRINUSE
    x.close()
    y.close()


def test_strerror():
    assert zmq.strerror(zmq.EFSM) == "Operation cannot be accomplished in current state"
    assert zmq.strerror(zmq.ETERM) == "Context was terminated"
    assert zmq.strerror(errno.EINVAL) == "Invalid argument"
    assert zmq.ZMQError(zmq.EAGAIN).strerror == "Resource temporarily unavailable"


def test_closed_socket(ctx):
    s = ctx.socket(zmq.PUSH)
    s.close()
    assert s.closed
    with pytest.raises(zmq.ZMQError) as e:
        s.send(b"x")
    assert e.value.errno == zmq.ENOTSOCK


def test_version_and_has():
    major, minor, patch = zmq.zmq_version_info()
    assert major == 4 and minor >= 1
    assert zmq.has("ipc") is True
    assert zmq.has("no-such-capability") is False


def test_z85_and_curve_keypair():
    from zmq.utils import z85

    data = bytes(range(32))
    enc = z85.encode(data)
    assert z85.decode(enc) == data
    if zmq.has("curve"):
        public, secret = zmq.curve_keypair()
        assert len(public) == 40 and len(secret) == 40
        assert zmq.curve_public(secret) == public
