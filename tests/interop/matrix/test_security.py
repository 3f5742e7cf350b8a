"""PLAIN and CURVE between oxmq and real libzmq (pyzmq's bundled 4.3.5), each
side serving in turn, with a ZAP handler on the serving side: real pyzmq's
zmq.auth ThreadAuthenticator for libzmq, the interop peer's handler for
oxmq. conftest.py prints the cells as the security interop matrix.

Then the refusals: ZAP denials on either side, a wrong CURVE server key, a
wrong PLAIN password, and CURVE with no handler at all (libzmq admits).
"""

import pytest
import zmq
import zmq.auth
from zmq.auth.thread import ThreadAuthenticator
from zmq.utils import z85
from zmq.utils.monitor import recv_monitor_message

from conftest import IO_TIMEOUT_MS, SECURITY_COLUMNS, SECURITY_MECHS, SECURITY_PAIRS

HANDSHAKE_FAILED_PROTOCOL = 0x2000
HANDSHAKE_FAILED_AUTH = 0x4000
ZMTP_CRYPTOGRAPHIC = 0x11000001

LONG = bytes(range(256)) * 2
HUGE = bytes((i * 13) & 0xFF for i in range(70_000))


@pytest.fixture
def lz_auth(zctx):
    """Start real pyzmq's ThreadAuthenticator in the libzmq context."""
    started = []

    def start():
        auth = ThreadAuthenticator(zctx)
        auth.start()
        started.append(auth)
        return auth

    yield start
    for auth in started:
        auth.stop()


class Keys:
    def __init__(self):
        self.public, self.secret = zmq.curve_keypair()  # Z85, from libzmq itself
        self.raw_public = z85.decode(self.public)


def flow(pair, client, server):
    """Traffic both ways where the pattern allows; returns the server's first message."""
    if pair == "REQ/REP":
        client.send([b"request", LONG])
        got = server.recv()
        assert got == [b"request", LONG]
        server.send([b"reply"])
        assert client.recv() == [b"reply"]
    elif pair == "PUSH/PULL":
        sent = [[b"one"], [b"two", b"", LONG], [b"three", HUGE]]
        for m in sent:
            client.send(m)
        for m in sent:
            assert server.recv() == m
    else:
        client.send([b"hello", HUGE])
        got = server.recv()
        assert got[1:] == [b"hello", HUGE]
        server.send([got[0], b"back"])
        assert client.recv() == [b"back"]


@pytest.mark.security_matrix
@pytest.mark.parametrize("server", [s for s in ("oxmq", "libzmq")])
@pytest.mark.parametrize("transport", ["tcp", "ipc"])
@pytest.mark.parametrize("pair", SECURITY_PAIRS)
@pytest.mark.parametrize("mech", SECURITY_MECHS)
def test_security_cell(mech, pair, transport, server, ox, lz, lz_auth, endpoint):
    assert (transport, server) in SECURITY_COLUMNS
    client_kind, server_kind = pair.split("/")
    if server == "oxmq":
        srv, cli = ox.socket(server_kind), lz(client_kind)
    else:
        srv, cli = lz(server_kind), ox.socket(client_kind)
    keys_s, keys_c = Keys(), Keys()
    if mech == "PLAIN":
        srv.setopt("plain_server", 1)
        cli.setopt("plain_username", b"admin")
        cli.setopt("plain_password", b"s3cret")
        expected_user = b"admin"
        if server == "oxmq":
            ox.zap("plain", b"admin", b"s3cret", expected_user)
        else:
            lz_auth().configure_plain(domain="*", passwords={"admin": "s3cret"})
    else:
        srv.setopt("curve_server", 1)
        srv.setopt("curve_secretkey", keys_s.secret)
        cli.setopt("curve_serverkey", keys_s.public)
        cli.setopt("curve_publickey", keys_c.raw_public)  # binary form
        cli.setopt("curve_secretkey", keys_c.secret)  # Z85 form
        expected_user = b"curve-client"
        if server == "oxmq":
            ox.zap("curve", keys_c.raw_public, expected_user)
        else:
            lz_auth().configure_curve(domain="*", location=zmq.auth.CURVE_ALLOW_ANY)
    assert srv.getopt("mechanism") == (1 if mech == "PLAIN" else 2)
    ep = srv.bind(endpoint(transport))
    cli.connect(ep)
    flow(pair, cli, srv)
    if server == "oxmq":
        assert srv.prop("User-Id") == expected_user


def lz_monitor(sock):
    return sock.sock.get_monitor_socket()


def lz_wait_event(mon, want, timeout_ms=IO_TIMEOUT_MS):
    mon.rcvtimeo = timeout_ms
    seen = []
    while True:
        try:
            ev = recv_monitor_message(mon)
        except zmq.Again:
            pytest.fail(f"libzmq never reported event {want:#x}; saw {seen}")
        if ev["event"] == want:
            return ev["value"]
        seen.append((hex(ev["event"]), ev["value"]))


def ox_wait_event(sock, want):
    seen = []
    while True:
        ev, value = sock.event()
        if ev == want:
            return value
        seen.append((hex(ev), value))
        assert len(seen) < 50, f"oxmq never reported event {want:#x}; saw {seen}"


@pytest.mark.parametrize("status", [400, 500])
def test_oxmq_zap_denial_reaches_libzmq_client(status, ox, lz, endpoint):
    keys_s = Keys()
    srv = ox.socket("PULL")
    srv.setopt("curve_server", 1)
    srv.setopt("curve_secretkey", keys_s.secret)
    srv.monitor()
    ox.zap("deny", str(status).encode())
    cli = lz("PUSH")
    keys_c = Keys()
    cli.setopt("curve_serverkey", keys_s.public)
    cli.setopt("curve_publickey", keys_c.public)
    cli.setopt("curve_secretkey", keys_c.secret)
    mon = lz_monitor(cli)
    cli.connect(srv.bind(endpoint("tcp")))
    assert lz_wait_event(mon, HANDSHAKE_FAILED_AUTH) == status
    assert ox_wait_event(srv, HANDSHAKE_FAILED_AUTH) == status


def test_libzmq_zap_wrong_password_reaches_oxmq_client(ox, lz, lz_auth, endpoint):
    srv = lz("REP")
    srv.setopt("plain_server", 1)
    lz_auth().configure_plain(domain="*", passwords={"admin": "right"})
    mon = lz_monitor(srv)
    cli = ox.socket("REQ")
    cli.setopt("plain_username", b"admin")
    cli.setopt("plain_password", b"wrong")
    cli.monitor()
    cli.connect(srv.bind(endpoint("tcp")))
    assert ox_wait_event(cli, HANDSHAKE_FAILED_AUTH) == 400
    assert lz_wait_event(mon, HANDSHAKE_FAILED_AUTH) == 400


def test_libzmq_ip_deny_refuses_oxmq_client(ox, lz, lz_auth, endpoint):
    auth = lz_auth()
    auth.deny("127.0.0.1")
    srv = lz("PULL")
    srv.setopt("zap_domain", b"global")  # NULL asks ZAP only with a domain
    mon = lz_monitor(srv)
    cli = ox.socket("PUSH")
    cli.monitor()
    cli.connect(srv.bind(endpoint("tcp")))
    assert lz_wait_event(mon, HANDSHAKE_FAILED_AUTH) == 400
    assert ox_wait_event(cli, HANDSHAKE_FAILED_AUTH) == 400


def test_wrong_server_key_oxmq_client(ox, lz, endpoint):
    keys_s, keys_c, other = Keys(), Keys(), Keys()
    srv = lz("PULL")
    srv.setopt("curve_server", 1)
    srv.setopt("curve_secretkey", keys_s.secret)
    mon = lz_monitor(srv)
    cli = ox.socket("PUSH")
    cli.setopt("curve_serverkey", other.public)
    cli.setopt("curve_publickey", keys_c.public)
    cli.setopt("curve_secretkey", keys_c.secret)
    cli.connect(srv.bind(endpoint("tcp")))
    assert lz_wait_event(mon, HANDSHAKE_FAILED_PROTOCOL) == ZMTP_CRYPTOGRAPHIC


def test_wrong_server_key_libzmq_client(ox, lz, endpoint):
    keys_s, keys_c, other = Keys(), Keys(), Keys()
    srv = ox.socket("PULL")
    srv.setopt("curve_server", 1)
    srv.setopt("curve_secretkey", keys_s.secret)
    srv.monitor()
    cli = lz("PUSH")
    cli.setopt("curve_serverkey", other.public)
    cli.setopt("curve_publickey", keys_c.public)
    cli.setopt("curve_secretkey", keys_c.secret)
    cli.connect(srv.bind(endpoint("ipc")))
    assert ox_wait_event(srv, HANDSHAKE_FAILED_PROTOCOL) == ZMTP_CRYPTOGRAPHIC


@pytest.mark.parametrize("server", ["oxmq", "libzmq"])
def test_curve_without_zap_handler_admits(server, ox, lz, endpoint):
    keys_s, keys_c = Keys(), Keys()
    srv, cli = (ox.socket("PULL"), lz("PUSH")) if server == "oxmq" else (lz("PULL"), ox.socket("PUSH"))
    srv.setopt("curve_server", 1)
    srv.setopt("curve_secretkey", keys_s.secret)
    cli.setopt("curve_serverkey", keys_s.public)
    cli.setopt("curve_publickey", keys_c.public)
    cli.setopt("curve_secretkey", keys_c.secret)
    cli.connect(srv.bind(endpoint("tcp")))
    cli.send([b"stonehouse"])
    assert srv.recv() == [b"stonehouse"]


def test_curve_pub_sub_and_heartbeats(ox, lz, endpoint):
    """Subscriptions and PING/PONG travel inside MESSAGE boxes (libzmq's COMMAND flag)."""
    keys_s, keys_c = Keys(), Keys()
    pub = lz("PUB")
    pub.setopt("curve_server", 1)
    pub.setopt("curve_secretkey", keys_s.secret)
    pub.setopt("heartbeat_ivl", 50)
    sub = ox.socket("SUB")
    sub.setopt("curve_serverkey", keys_s.public)
    sub.setopt("curve_publickey", keys_c.public)
    sub.setopt("curve_secretkey", keys_c.secret)
    sub.setopt("heartbeat_ivl", 50)
    sub.setopt("subscribe", b"A")
    sub.connect(pub.bind(endpoint("tcp")))
    import time

    deadline = time.monotonic() + 5
    while True:
        pub.send([b"A-probe"])
        try:
            if sub.recv(dontwait=True) == [b"A-probe"]:
                break
        except Exception:
            pass
        assert time.monotonic() < deadline, "subscription never reached libzmq"
        time.sleep(0.05)
    time.sleep(0.3)  # several heartbeat periods
    pub.send([b"B-filtered"])
    pub.send([b"A-after"])
    while True:
        got = sub.recv()
        if got != [b"A-probe"]:
            break
    assert got == [b"A-after"]
