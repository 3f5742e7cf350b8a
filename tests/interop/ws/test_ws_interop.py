"""ws:// (ZWS 2.0, RFC 45) between oxmq and an independent WebSocket peer.

The peer is written here on the `websockets` library (RFC 6455 framing,
masking, the upgrade and its Sec-WebSocket-Accept check are that library's),
speaking ZWS 2.0 by hand: each ZMTP frame is one binary message whose first
octet is the flags (0x01 MORE, 0x02 COMMAND); the NULL mechanism's READY is a
command; subscriptions are messages prefixed 0x01/0x00, as libzmq 4.3.5's ws
engine writes them. oxmq is driven through its Python package, with the code
a pyzmq user would write (`import oxmq as zmq`).

No libzmq with ws support is available offline here (pyzmq's and Debian's are
built without the draft API, which ws needs), hence this peer.
"""

import os
import re
import socket
import struct
import threading

import pytest

websockets = pytest.importorskip("websockets", reason="the websockets package is not installed")
zmq = pytest.importorskip("oxmq", reason="the oxmq Python package is not installed")
import websockets.headers  # noqa: E402
from websockets.sync.client import connect  # noqa: E402
from websockets.sync.server import serve  # noqa: E402

# ZWS names its subprotocols "ZWS2.0/NULL" etc.; "/" is not an HTTP token
# character, so `websockets` would refuse them. libzmq sends them all the same:
# let this peer's header grammar allow "/" in subprotocol names (names only;
# header field names keep their own grammar in websockets.http11).
websockets.headers._token_re = re.compile(r"[-!#$%&'*+.^_`|~0-9a-zA-Z/]+")

pytestmark = pytest.mark.timeout(60)

HERE = os.path.dirname(os.path.abspath(__file__))
CERTS = os.path.join(HERE, "..", "..", "..", "crates", "oxmq", "tests", "wss")
MORE, COMMAND = 0x01, 0x02


def prop(name, value):
    return bytes([len(name)]) + name + struct.pack(">I", len(value)) + value


def ready(socket_type, identity=None):
    body = b"\x05READY" + prop(b"Socket-Type", socket_type)
    if identity is not None:
        body += prop(b"Identity", identity)
    return bytes([COMMAND]) + body


def parse_ready(msg):
    assert msg[0] == COMMAND, msg
    body = msg[1:]
    assert body.startswith(b"\x05READY"), body
    props, i = {}, 6
    while i < len(body):
        n = body[i]
        name = body[i + 1:i + 1 + n]
        (vlen,) = struct.unpack(">I", body[i + 1 + n:i + 5 + n])
        props[name] = body[i + 5 + n:i + 5 + n + vlen]
        i += 5 + n + vlen
    return props


def recv_message(ws):
    """One ZMQ message: its frames, up to the one without MORE."""
    frames = []
    while True:
        m = ws.recv(timeout=10)
        assert isinstance(m, bytes), "ZWS messages are binary"
        assert not m[0] & COMMAND, m
        frames.append(m[1:])
        if not m[0] & MORE:
            return frames


@pytest.fixture
def ctx():
    c = zmq.Context()
    yield c
    c.destroy(linger=0)


def sock(ctx, kind):
    s = ctx.socket(kind)
    s.linger = 0
    s.rcvtimeo = 10000
    s.sndtimeo = 10000
    return s


def test_has_ws_and_wss():
    assert zmq.has("ws") is True
    assert zmq.has("wss") is True


def test_websocket_client_talks_to_an_oxmq_router(ctx):
    router = sock(ctx, zmq.ROUTER)
    router.bind("ws://127.0.0.1:*/zeromq")
    endpoint = router.getsockopt_string(zmq.LAST_ENDPOINT)
    assert endpoint.startswith("ws://127.0.0.1:")
    with connect(endpoint + "/zeromq", subprotocols=["ZWS2.0/NULL", "ZWS2.0"]) as ws:
        assert ws.subprotocol == "ZWS2.0/NULL"
        ws.send(ready(b"DEALER", b"py-peer"))
        props = parse_ready(ws.recv(timeout=10))
        assert props[b"Socket-Type"] == b"ROUTER"
        ws.send(bytes([MORE]) + b"part-1")
        ws.send(b"\x00" + b"x" * 70000)
        assert router.recv_multipart() == [b"py-peer", b"part-1", b"x" * 70000]
        router.send_multipart([b"py-peer", b"back", b""])
        assert recv_message(ws) == [b"back", b""]


def test_oxmq_connects_to_a_websocket_server(ctx):
    seen = {}
    done = threading.Event()

    def handler(ws):
        seen["path"] = ws.request.path
        seen["protocol"] = ws.subprotocol
        seen["ready"] = parse_ready(ws.recv(timeout=10))
        ws.send(ready(b"PULL"))
        seen["messages"] = [recv_message(ws) for _ in range(3)]
        done.wait(10)

    with serve(handler, "127.0.0.1", 0, subprotocols=["ZWS2.0/NULL"]) as server:
        port = server.socket.getsockname()[1]
        t = threading.Thread(target=server.serve_forever, daemon=True)
        t.start()
        push = sock(ctx, zmq.PUSH)
        push.connect(f"ws://127.0.0.1:{port}/zeromq")
        push.send_multipart([b"a", b"b"])
        push.send(b"")
        push.send(b"y" * 200000)
        for _ in range(200):
            if "messages" in seen:
                break
            done.wait(0.05)
        done.set()
        server.shutdown()
        t.join(10)
    assert seen["path"] == "/zeromq"
    assert seen["protocol"] == "ZWS2.0/NULL"
    assert seen["ready"][b"Socket-Type"] == b"PUSH"
    assert seen["messages"] == [[b"a", b"b"], [b""], [b"y" * 200000]]


def test_subscriptions_travel_as_libzmq_ws_writes_them(ctx):
    # A websocket SUB peer subscribing on an oxmq PUB.
    pub = sock(ctx, zmq.PUB)
    pub.bind("ws://127.0.0.1:*/")
    endpoint = pub.getsockopt_string(zmq.LAST_ENDPOINT)
    with connect(endpoint + "/", subprotocols=["ZWS2.0/NULL"]) as ws:
        ws.send(ready(b"SUB"))
        assert parse_ready(ws.recv(timeout=10))[b"Socket-Type"] == b"PUB"
        ws.send(b"\x00\x01news")
        got = None
        for _ in range(200):
            pub.send(b"sport:0")
            pub.send(b"news:1")
            try:
                got = ws.recv(timeout=0.05)
                break
            except TimeoutError:
                pass
        assert got == b"\x00news:1"

    # An oxmq SUB connecting to a websocket PUB peer: its subscription arrives
    # as the 0x01-prefixed message.
    subs = []
    got_sub = threading.Event()

    def handler(ws):
        parse_ready(ws.recv(timeout=10))
        ws.send(ready(b"PUB"))
        subs.append(recv_message(ws))
        got_sub.set()
        ws.send(b"\x00weather:1")
        got_sub.wait(10)

    with serve(handler, "127.0.0.1", 0, subprotocols=["ZWS2.0/NULL"]) as server:
        port = server.socket.getsockname()[1]
        t = threading.Thread(target=server.serve_forever, daemon=True)
        t.start()
        sub = sock(ctx, zmq.SUB)
        sub.setsockopt(zmq.SUBSCRIBE, b"weather")
        sub.connect(f"ws://127.0.0.1:{port}")
        assert got_sub.wait(10)
        assert sub.recv() == b"weather:1"
        server.shutdown()
        t.join(10)
    assert subs == [[b"\x01weather"]]


def test_websocket_client_with_a_broken_frame_is_dropped_alone(ctx):
    pull = sock(ctx, zmq.PULL)
    pull.bind("ws://127.0.0.1:*/")
    endpoint = pull.getsockopt_string(zmq.LAST_ENDPOINT)
    port = int(endpoint.rsplit(":", 1)[1])
    # A text message is not ZWS: the connection is closed.
    with connect(endpoint + "/", subprotocols=["ZWS2.0/NULL"]) as bad:
        bad.send(ready(b"PUSH"))
        parse_ready(bad.recv(timeout=10))
        bad.send("text is not allowed")
        with pytest.raises(websockets.exceptions.ConnectionClosed):
            bad.recv(timeout=10)
    # Plain HTTP garbage: a 400 and a close.
    raw = socket.create_connection(("127.0.0.1", port), timeout=5)
    raw.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert raw.recv(100).startswith(b"HTTP/1.1 400")
    raw.close()
    # Others are unaffected.
    with connect(endpoint + "/", subprotocols=["ZWS2.0/NULL"]) as good:
        good.send(ready(b"PUSH"))
        parse_ready(good.recv(timeout=10))
        good.send(b"\x00still here")
        assert pull.recv() == b"still here"


def test_pyzmq_style_code_over_ws_and_wss(ctx):
    a, b = sock(ctx, zmq.PAIR), sock(ctx, zmq.PAIR)
    a.bind("ws://127.0.0.1:*/pair")
    b.connect(a.getsockopt_string(zmq.LAST_ENDPOINT) + "/pair")
    b.send_string("hello")
    assert a.recv_string() == "hello"

    with open(os.path.join(CERTS, "server.pem"), "rb") as f:
        cert = f.read()
    with open(os.path.join(CERTS, "server.key"), "rb") as f:
        key = f.read()
    with open(os.path.join(CERTS, "ca.pem"), "rb") as f:
        ca = f.read()
    rep, req = sock(ctx, zmq.REP), sock(ctx, zmq.REQ)
    rep.setsockopt(zmq.WSS_CERT_PEM, cert)
    rep.setsockopt(zmq.WSS_KEY_PEM, key)
    rep.bind("wss://127.0.0.1:*/secure")
    port = rep.getsockopt_string(zmq.LAST_ENDPOINT).rsplit(":", 1)[1]
    req.setsockopt(zmq.WSS_TRUST_PEM, ca)
    req.connect(f"wss://localhost:{port}/secure")
    req.send(b"over tls")
    assert rep.recv() == b"over tls"
    rep.send(b"ok")
    assert req.recv() == b"ok"


def test_bare_zws2_routing_ids_both_ways(ctx):
    # A client offering only the bare protocol: its first message is its
    # routing id, and so is ours (empty for a ROUTER).
    router = sock(ctx, zmq.ROUTER)
    router.bind("ws://127.0.0.1:*/")
    endpoint = router.getsockopt_string(zmq.LAST_ENDPOINT)
    with connect(endpoint + "/", subprotocols=["ZWS2.0"]) as ws:
        assert ws.subprotocol == "ZWS2.0"
        ws.send(b"\x00bare-peer")
        assert ws.recv(timeout=10) == b"\x00"
        ws.send(b"\x00hello")
        assert router.recv_multipart() == [b"bare-peer", b"hello"]
        router.send_multipart([b"bare-peer", b"world"])
        assert ws.recv(timeout=10) == b"\x00world"

    # oxmq offers ZWS2.0/NULL then ZWS2.0; a server taking the bare one gets
    # our ROUTING_ID as the first message.
    seen = []
    done = threading.Event()

    def handler(ws):
        seen.append(ws.subprotocol)
        seen.append(ws.recv(timeout=10))
        ws.send(b"\x00server-id")
        seen.append(ws.recv(timeout=10))
        ws.send(b"\x00pong")
        done.wait(10)

    with serve(handler, "127.0.0.1", 0, subprotocols=["ZWS2.0"]) as server:
        port = server.socket.getsockname()[1]
        t = threading.Thread(target=server.serve_forever, daemon=True)
        t.start()
        dealer = sock(ctx, zmq.DEALER)
        dealer.setsockopt(zmq.ROUTING_ID, b"dlr")
        dealer.connect(f"ws://127.0.0.1:{port}/")
        dealer.send(b"ping")
        assert dealer.recv() == b"pong"
        done.set()
        server.shutdown()
        t.join(10)
    assert seen == ["ZWS2.0", b"\x00dlr", b"\x00ping"]
