"""ws:// between oxmq and real libzmq 4.3.5 built with ws support.

The libzmq side is npm's `zeromq` (v6), whose bundled libzmq 4.3.5 is built
with the draft API and ws (not wss), driven by libzmq_peer.js, one scenario
per process. mk/interop/ws.mk installs it under target/ws-npm; without node or that
module every test here skips with the reason.
"""

import json
import os
import shutil
import subprocess
import threading

import pytest

zmq = pytest.importorskip("oxmq", reason="the oxmq Python package is not installed")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
PEER = os.path.join(HERE, "libzmq_peer.js")
ZEROMQ_JS = os.environ.get("ZEROMQ_JS") or os.path.join(ROOT, "target", "ws-npm", "node_modules", "zeromq")
NODE = shutil.which("node")


def _libzmq_js_problem():
    if NODE is None:
        return "node is not installed"
    if not os.path.isdir(ZEROMQ_JS):
        return f"npm's zeromq is not installed at {ZEROMQ_JS}"
    probe = subprocess.run(
        [NODE, "-e", "const z = require(process.argv[1]); if (!z.capability.draft) process.exit(3)", ZEROMQ_JS],
        capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        return f"npm's zeromq does not load or has no draft API: {probe.stderr.strip()[-200:]}"
    return None


_problem = _libzmq_js_problem()
pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(_problem is not None, reason=f"no libzmq with ws: {_problem}"),
]


class Peer:
    """One libzmq_peer.js scenario in a child process."""

    def __init__(self, scenario, endpoint, arg=""):
        env = dict(os.environ, ZEROMQ_JS=ZEROMQ_JS)
        self.p = subprocess.Popen([NODE, PEER, scenario, endpoint, arg], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        line = self.p.stdout.readline()
        if not line.startswith("READY "):
            self.p.kill()
            raise AssertionError(f"peer {scenario}: {line!r} {self.p.stderr.read()}")
        self.endpoint = line.split(" ", 1)[1].strip()

    def message(self):
        line = self.p.stdout.readline()
        assert line.startswith("["), f"{line!r} {self.p.stderr.read() if not line else ''}"
        return [f.encode("latin1") for f in json.loads(line)]

    def finish(self):
        self.p.stdin.close()
        assert self.p.wait(timeout=20) == 0, self.p.stderr.read()


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


def test_oxmq_push_connects_to_libzmq_pull(ctx):
    peer = Peer("pull-bind", "ws://127.0.0.1:*/zeromq", "3")
    assert peer.endpoint.startswith("ws://127.0.0.1:")
    push = sock(ctx, zmq.PUSH)
    push.connect(peer.endpoint + "/zeromq")
    push.send_multipart([b"a", b"b"])
    push.send(b"")
    push.send(b"y" * 200000)
    assert [peer.message() for _ in range(3)] == [[b"a", b"b"], [b""], [b"y" * 200000]]
    peer.finish()


def test_libzmq_dealer_connects_to_oxmq_router(ctx):
    router = sock(ctx, zmq.ROUTER)
    router.bind("ws://127.0.0.1:*/zeromq")
    endpoint = router.getsockopt_string(zmq.LAST_ENDPOINT)
    peer = Peer("dealer-connect", endpoint + "/zeromq")
    assert router.recv_multipart() == [b"js-dealer", b"hello", b"x" * 70000]
    router.send_multipart([b"js-dealer", b"world"])
    assert peer.message() == [b"world"]
    peer.finish()


def test_oxmq_sub_on_libzmq_pub(ctx):
    peer = Peer("pub-bind", "ws://127.0.0.1:*/feed")
    sub = sock(ctx, zmq.SUB)
    sub.setsockopt(zmq.SUBSCRIBE, b"weather")
    sub.connect(peer.endpoint + "/feed")
    for _ in range(3):
        assert sub.recv().startswith(b"weather:")
    peer.finish()


def test_libzmq_sub_on_oxmq_pub(ctx):
    pub = sock(ctx, zmq.PUB)
    pub.bind("ws://127.0.0.1:*/feed")
    peer = Peer("sub-connect", pub.getsockopt_string(zmq.LAST_ENDPOINT) + "/feed", "news")
    got = []
    reader = threading.Thread(target=lambda: got.append(peer.message()))
    reader.start()
    for i in range(500):
        if got:
            break
        pub.send(b"sport:%d" % i)
        pub.send(b"news:%d" % i)
        reader.join(0.02)
    reader.join(10)
    assert got and got[0][0].startswith(b"news:"), got
    peer.finish()


def test_curve_over_ws_with_a_libzmq_server(ctx):
    server_public, server_secret = zmq.curve_keypair()
    client_public, client_secret = zmq.curve_keypair()
    peer = Peer("curve-rep-bind", "ws://127.0.0.1:*/", server_secret.decode())
    req = sock(ctx, zmq.REQ)
    req.curve_serverkey = server_public
    req.curve_publickey = client_public
    req.curve_secretkey = client_secret
    req.connect(peer.endpoint + "/")
    req.send(b"boxed")
    assert req.recv_multipart() == [b"echo", b"boxed"]
    assert peer.message() == [b"boxed"]
    peer.finish()


def test_plain_over_ws_with_a_libzmq_client(ctx):
    zap = sock(ctx, zmq.REP)
    zap.bind("inproc://zeromq.zap.01")
    seen = []

    def handler():
        req = zap.recv_multipart()
        seen.append(req)
        ok = req[5] == b"PLAIN" and req[6:] == [b"admin", b"secret"]
        zap.send_multipart([b"1.0", req[1], b"200" if ok else b"400", b"", b"admin", b""])

    t = threading.Thread(target=handler)
    t.start()
    rep = sock(ctx, zmq.REP)
    rep.plain_server = True
    rep.bind("ws://127.0.0.1:*/")
    peer = Peer("plain-req-connect", rep.getsockopt_string(zmq.LAST_ENDPOINT) + "/", "secret")
    assert rep.recv() == b"over plain"
    rep.send(b"ok")
    assert peer.message() == [b"ok"]
    t.join(10)
    assert seen and seen[0][5] == b"PLAIN"
    peer.finish()
