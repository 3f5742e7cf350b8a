#!/usr/bin/env python3
"""ZMTP conformance suite: scripted byte-level peers against implementations
reached only through the wire (see conformance/README.md).

Each clause names the RFC text it checks.  An implementation is an adapter
command (conformance/adapters/) that the suite starts and instructs over
stdin/stdout.  A clause's outcome is "pass", "differs" (with the bytes seen)
or "n/a".  The run fails only where oxmq differs from the RFC without an entry
in conformance/known_differences.json.
"""
import argparse
import select
import json
import os
import socket
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
IO_TIMEOUT = 5.0

# libzmq option numbers the clauses set through the adapter.
ZMQ_ROUTING_ID, ZMQ_SUBSCRIBE, ZMQ_UNSUBSCRIBE = 5, 6, 7
ZMQ_HEARTBEAT_IVL, ZMQ_HEARTBEAT_TTL, ZMQ_HEARTBEAT_TIMEOUT = 75, 76, 77
ZMQ_SNDBUF = 11
ZMQ_PLAIN_SERVER, ZMQ_PLAIN_USERNAME, ZMQ_PLAIN_PASSWORD = 44, 45, 46


class Differs(Exception):
    """The implementation did something other than the clause says."""


class NotApplicable(Exception):
    pass


# ---------------------------------------------------------------- the adapter

class Adapter:
    def __init__(self, argv, env):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env, text=True, bufsize=1)

    def cmd(self, line, timeout=IO_TIMEOUT + 2):
        if self.proc.poll() is not None:
            raise Differs(f"the implementation's process exited (status {self.proc.returncode})")
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        r, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not r:
            raise Differs(f"the implementation's process did not answer {line.split()[0]} within {timeout}s")
        out = self.proc.stdout.readline().strip()
        if not out:
            raise Differs(f"the implementation's process died during {line.split()[0]} "
                          f"(status {self.proc.wait()})")
        return out

    def ok(self, line):
        out = self.cmd(line)
        if out.startswith("ERR unsupported-option"):
            # An adapter for a native API (not libzmq's) that has, or maps, no
            # counterpart for what the clause needs: not a difference.
            what = " ".join(line.split()[:2])
            raise NotApplicable(f"its adapter does not map {what} onto this implementation's API: {out[4:]}")
        if not out.startswith("OK"):
            raise Differs(f"the implementation refused {line!r}: {out}")
        return out[3:]

    def socket(self, kind, opts=()):
        self.ok(f"SOCKET {kind}")
        for opt, val in opts:
            if isinstance(val, int):
                self.ok(f"OPTI {opt} {val}")
            else:
                self.ok(f"OPTB {opt} {val.hex() or '-'}")

    def bind(self):
        return self.ok("BIND tcp://127.0.0.1:*")

    def connect(self, port):
        self.ok(f"CONNECT tcp://127.0.0.1:{port}")

    def send(self, *frames):
        self.ok("SEND " + " ".join(f.hex() or "-" for f in frames))

    def recv(self, timeout_ms=int(IO_TIMEOUT * 1000)):
        out = self.cmd(f"RECV {timeout_ms}", timeout=timeout_ms / 1000 + 3)
        if out == "TIMEOUT":
            return None
        if out.startswith("ERR"):
            raise Differs(f"the implementation's receive failed: {out}")
        if not out.startswith("MSG "):
            raise RuntimeError(f"adapter: RECV -> {out!r}")
        return [b"" if f == "-" else bytes.fromhex(f) for f in out.split()[1:]]

    def alive(self):
        return self.cmd("ALIVE").startswith("ALIVE")

    def close(self):
        try:
            if self.proc.poll() is None:
                self.proc.stdin.write("QUIT\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=5)
        except Exception:
            pass
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


# ------------------------------------------------------------ the wire peer

def greeting(minor=1, mechanism=b"NULL", as_server=0):
    return (b"\xff" + b"\x00" * 8 + b"\x7f" + bytes([3, minor]) + mechanism.ljust(20, b"\x00")
            + bytes([as_server]) + b"\x00" * 31)


def frame(body, flags=0):
    if len(body) > 255:
        return bytes([flags | 0x02]) + struct.pack(">Q", len(body)) + body
    return bytes([flags, len(body)]) + body


def command(name, data=b""):
    return frame(bytes([len(name)]) + name + data, 0x04)


def ready_body(socket_type, identity=None):
    props = [(b"Socket-Type", socket_type.encode())]
    if identity is not None:
        props.append((b"Identity", identity))
    return b"".join(bytes([len(k)]) + k + struct.pack(">I", len(v)) + v for k, v in props)


def parse_props(data):
    props, i = {}, 0
    while i < len(data):
        n = data[i]
        name = data[i + 1:i + 1 + n].decode("ascii", "replace").lower()
        i += 1 + n
        (vlen,) = struct.unpack(">I", data[i:i + 4])
        props[name] = data[i + 4:i + 4 + vlen]
        i += 4 + vlen
    return props


class Peer:
    """One TCP connection, scripted byte by byte."""

    def __init__(self, sock):
        self.sock = sock
        self.sock.settimeout(IO_TIMEOUT)
        self.seen = bytearray()  # every byte received, for the report

    @classmethod
    def connect(cls, endpoint, rcvbuf=None):
        """rcvbuf: a small receive buffer (set before connecting, so the
        window it offers is small from the start) to hold the sender back."""
        host, port = endpoint.rsplit("/", 1)[1].rsplit(":", 1)
        if rcvbuf is None:
            return cls(socket.create_connection((host, int(port)), timeout=IO_TIMEOUT))
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        sock.settimeout(IO_TIMEOUT)
        sock.connect((host, int(port)))
        return cls(sock)

    def read(self, n):
        buf = bytearray()
        while len(buf) < n:
            try:
                chunk = self.sock.recv(n - len(buf))
            except socket.timeout:
                raise Differs(f"wanted {n} octets, got {len(buf)} within {IO_TIMEOUT}s: {bytes(buf).hex()}")
            except ConnectionError as e:
                raise Differs(f"connection lost ({e.__class__.__name__}) after {bytes(buf).hex()!r}")
            if not chunk:
                raise Differs(f"connection closed after {len(buf)} of {n} octets: {bytes(buf).hex()}")
            buf += chunk
            self.seen += chunk
        return bytes(buf)

    def write(self, data):
        self.sock.sendall(data)

    def read_frame(self):
        """-> (flags, body, raw header)"""
        head = self.read(2)
        flags = head[0]
        if flags & 0x02:
            rest = self.read(7)
            head += rest
            (size,) = struct.unpack(">Q", head[1:9])
        else:
            size = head[1]
        return flags, self.read(size), head

    def read_command(self, skip=()):
        """Next command frame whose name is not in skip -> (name, data, flags)."""
        while True:
            flags, body, _ = self.read_frame()
            if not flags & 0x04:
                raise Differs(f"expected a command, got a message frame flags {flags:#04x} body {body.hex()}")
            n = body[0]
            name, data = body[1:1 + n], body[1 + n:]
            if name not in skip:
                return name, data, flags

    def read_message(self):
        """Next message (frames up to one without MORE), skipping commands."""
        frames = []
        while True:
            flags, body, _ = self.read_frame()
            if flags & 0x04:
                continue
            frames.append(body)
            if not flags & 0x01:
                return frames

    def handshake(self, socket_type, identity=None, minor=1):
        """Greeting + NULL READY both ways -> (their greeting, their READY properties)."""
        self.write(greeting(minor))
        theirs = self.read(64)
        self.write(command(b"READY", ready_body(socket_type, identity)))
        name, data, _ = self.read_command()
        if name != b"READY":
            raise Differs(f"expected READY, got command {name!r}: {data.hex()}")
        return theirs, parse_props(data)

    def closed_within(self, seconds):
        """True when the implementation closes the connection within seconds."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                return False
            except ConnectionError:
                return True
            if not chunk:
                return True
            self.seen += chunk
        return False

    def close(self):
        self.sock.close()


class Listener:
    """A listening peer for clauses where the implementation connects."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.sock.settimeout(IO_TIMEOUT)
        self.port = self.sock.getsockname()[1]

    def accept(self):
        try:
            conn, _ = self.sock.accept()
        except socket.timeout:
            raise Differs(f"the implementation did not connect within {IO_TIMEOUT}s")
        return Peer(conn)

    def close(self):
        self.sock.close()


# ---------------------------------------------------------------- the clauses

CLAUSES = []


def clause(cid, text):
    def register(fn):
        CLAUSES.append((cid, text, fn))
        return fn
    return register


def bound(run, kind, opts=()):
    a = run.adapter()
    a.socket(kind, opts)
    return a, Peer.connect(a.bind())


def connecting(run, kind, opts=()):
    a = run.adapter()
    a.socket(kind, opts)
    lst = Listener()
    run.cleanup.append(lst.close)
    a.connect(lst.port)
    return a, lst.accept()


def expect(cond, what):
    if not cond:
        raise Differs(what)


def their_greeting(run):
    a, p = bound(run, "DEALER")
    p.write(greeting())
    return p.read(64)


@clause("greeting.signature", "RFC 23/37 §greeting: signature is %xFF, 8 padding octets, %x7F")
def _(run):
    g = their_greeting(run)
    expect(g[0] == 0xFF and g[9] == 0x7F, f"signature {g[:10].hex()}")
    return f"signature {g[:10].hex()}"


@clause("greeting.signature-first", "RFC 23 §greeting: a peer sends its signature without waiting for "
        "the other's greeting")
def _(run):
    a, p = bound(run, "DEALER")
    g = p.read(10)
    expect(g[0] == 0xFF and g[9] & 0x01, f"first octets {g.hex()}")


@clause("greeting.version", "RFC 37 §greeting: version-major %x03, version-minor %x01")
def _(run):
    g = their_greeting(run)
    expect(g[10:12] == b"\x03\x01", f"version octets {g[10:12].hex()}")


@clause("greeting.mechanism", "RFC 23 §greeting: mechanism is 20 octets, \"NULL\" padded with zero octets")
def _(run):
    g = their_greeting(run)
    expect(g[12:32] == b"NULL".ljust(20, b"\x00"), f"mechanism {g[12:32].hex()}")


@clause("greeting.as-server", "RFC 23 §NULL: as-server is 0, then 31 zero filler octets")
def _(run):
    g = their_greeting(run)
    expect(g[32] == 0 and g[33:64] == b"\x00" * 31, f"as-server {g[32]:#04x} filler {g[33:64].hex()}")


@clause("greeting.higher-version", "RFC 23 §version negotiation: a peer greeting with a higher version "
        "(3.9) is accepted and spoken to in 3.x")
def _(run):
    a, p = bound(run, "DEALER")
    p.write(greeting(minor=9))
    g = p.read(64)
    expect(g[10] == 3, f"their version octets {g[10:12].hex()}")
    p.write(command(b"READY", ready_body("DEALER")))
    name, data, _ = p.read_command()
    expect(name == b"READY", f"expected READY, got {name!r}")
    p.write(frame(b"hi"))
    got = a.recv()
    expect(got == [b"hi"], f"received {got}")


@clause("greeting.mechanism-mismatch", "RFC 23 §mechanism: a peer greeting with another mechanism (PLAIN to a "
        "NULL socket) has its connection closed; the process lives")
def _(run):
    a, p = bound(run, "DEALER")
    p.write(greeting(mechanism=b"PLAIN"))
    closed = p.closed_within(IO_TIMEOUT)
    expect(a.alive(), "the implementation's process died")
    expect(closed, f"connection still open after {IO_TIMEOUT}s; bytes seen: {bytes(p.seen).hex() or 'none'}")


@clause("null.ready-command", "RFC 23 §framing: READY is a command frame (flags %x04) named \"READY\"")
def _(run):
    a, p = bound(run, "DEALER")
    p.write(greeting())
    p.read(64)
    flags, body, head = p.read_frame()
    expect(flags == 0x04 and body[:6] == b"\x05READY", f"first frame {head.hex()} {body.hex()}")


@clause("null.ready-socket-type", "RFC 23 §NULL: READY carries the Socket-Type property (\"DEALER\")")
def _(run):
    a, p = bound(run, "DEALER")
    _, props = p.handshake("DEALER")
    expect(props.get("socket-type") == b"DEALER", f"READY properties {props}")


@clause("null.ready-identity", "RFC 23 §NULL: a DEALER's READY carries its Identity (ROUTING_ID \"abc\")")
def _(run):
    a, p = bound(run, "DEALER", [(ZMQ_ROUTING_ID, b"abc")])
    _, props = p.handshake("ROUTER")
    expect(props.get("identity") == b"abc", f"READY properties {props}")


@clause("null.invalid-socket-type",
        "RFC 23 §socket types: a DEALER refuses a peer announcing PUB and closes the connection; "
        "the process lives")
def _(run):
    a, p = bound(run, "DEALER")
    p.write(greeting())
    p.read(64)
    p.write(command(b"READY", ready_body("PUB")))
    closed = p.closed_within(IO_TIMEOUT)
    expect(a.alive(), "the implementation's process died")
    expect(closed, f"connection still open after {IO_TIMEOUT}s; bytes seen {bytes(p.seen).hex()}")


def plain_client(run):
    """An implementation PLAIN client (user "admin", password "secret")
    connected to a scripted PLAIN server; -> (adapter, peer, their greeting, HELLO)."""
    a, p = connecting(run, "DEALER", [(ZMQ_PLAIN_USERNAME, b"admin"), (ZMQ_PLAIN_PASSWORD, b"secret")])
    p.write(greeting(mechanism=b"PLAIN", as_server=1))
    g = p.read(64)
    return a, p, g, p.read_command()


@clause("plain.greeting", "RFC 24 §PLAIN: a client greets with mechanism \"PLAIN\" and as-server 0")
def _(run):
    a, p, g, _ = plain_client(run)
    expect(g[12:32] == b"PLAIN".ljust(20, b"\x00") and g[32] == 0, f"mechanism {g[12:32].hex()} as-server {g[32]}")


@clause("plain.hello", "RFC 24 §PLAIN: the client's first command is HELLO with its username and password")
def _(run):
    a, p, g, (name, data, _) = plain_client(run)
    expect(name == b"HELLO" and data == b"\x05admin\x06secret", f"command {name!r} {data.hex()}")


@clause("plain.initiate", "RFC 24 §PLAIN: after WELCOME the client sends INITIATE with its metadata; after "
        "READY messages flow")
def _(run):
    a, p, g, _ = plain_client(run)
    p.write(command(b"WELCOME"))
    name, data, _ = p.read_command()
    expect(name == b"INITIATE", f"after WELCOME: command {name!r} {data.hex()}")
    props = parse_props(data)
    expect(props.get("socket-type") == b"DEALER", f"INITIATE properties {props}")
    p.write(command(b"READY", ready_body("DEALER")))
    a.send(b"plain")
    got = p.read_message()
    expect(got == [b"plain"], f"peer received {got}")


@clause("plain.server-greeting", "RFC 24 §PLAIN / RFC 23 §as-server: a PLAIN server greets with mechanism "
        "\"PLAIN\" and as-server 1")
def _(run):
    a, p = bound(run, "DEALER", [(ZMQ_PLAIN_SERVER, 1)])
    p.write(greeting(mechanism=b"PLAIN"))
    g = p.read(64)
    expect(g[12:32] == b"PLAIN".ljust(20, b"\x00") and g[32] == 1, f"mechanism {g[12:32].hex()} as-server {g[32]}")


@clause("framing.more", "RFC 23 §framing: every frame but the last of a message has MORE (%x01)")
def _(run):
    a, p = bound(run, "DEALER")
    p.handshake("DEALER")
    a.send(b"a", b"b", b"c")
    heads = [p.read_frame()[2].hex() for _ in range(3)]
    expect([h[:2] for h in heads] == ["01", "01", "00"], f"frame headers {heads}")


@clause("framing.long", "RFC 23 §framing: a frame over 255 octets has LONG (%x02) and an 8-octet size; "
        "255 octets and less use a 1-octet size")
def _(run):
    a, p = bound(run, "DEALER")
    p.handshake("DEALER")
    a.send(b"x" * 255, b"y" * 256)
    f1, b1, h1 = p.read_frame()
    f2, b2, h2 = p.read_frame()
    expect(h1 == b"\x01\xff" and h2 == b"\x02" + struct.pack(">Q", 256) and b2 == b"y" * 256,
           f"frame headers {h1.hex()} {h2.hex()}")


@clause("framing.long-recv", "RFC 23 §framing: long frames (300 and 70000 octets) from the peer arrive intact")
def _(run):
    a, p = bound(run, "DEALER")
    p.handshake("DEALER")
    big = bytes(range(256)) * 273 + b"end!"
    p.write(frame(b"z" * 300, 0x01) + frame(big))
    got = a.recv()
    expect(got == [b"z" * 300, big], f"received {[len(f) for f in got] if got else got}")


@clause("ping.pong-context", "RFC 37 §PING: a PING with context gets a PONG echoing that context")
def _(run):
    a, p = bound(run, "DEALER")
    p.handshake("DEALER")
    p.write(command(b"PING", struct.pack(">H", 50) + b"ctx42"))
    name, data, _ = p.read_command()
    expect(name == b"PONG" and data == b"ctx42", f"answer {name!r} {data.hex()}")


@clause("ping.sent-ttl", "RFC 37 §PING: a PING carries the TTL in deciseconds (HEARTBEAT_TTL 2000 ms -> 20)")
def _(run):
    a, p = bound(run, "DEALER", [(ZMQ_HEARTBEAT_IVL, 100), (ZMQ_HEARTBEAT_TTL, 2000)])
    p.handshake("DEALER")
    name, data, _ = p.read_command()
    expect(name == b"PING" and data[:2] == struct.pack(">H", 20), f"command {name!r} {data.hex()}")


@clause("ping.ttl-expiry", "RFC 37 §PING: a PING's TTL (5 ds) passes without traffic: the peer closes (MAY)")
def _(run):
    a, p = bound(run, "DEALER")
    p.handshake("DEALER")
    p.write(command(b"PING", struct.pack(">H", 5)))
    name, data, _ = p.read_command()
    if not p.closed_within(IO_TIMEOUT):
        raise NotApplicable("did not close (the clause is a MAY)")


SPLIT_MESSAGES, SPLIT_FRAMES, SPLIT_FRAME = 6, 40, 4096


def split_body(m, f):
    """Frame f of message m in ping.between-messages: its own octet, repeated."""
    return bytes([(m * SPLIT_FRAMES + f) & 0xFF]) * SPLIT_FRAME


@clause("ping.between-messages", "RFC 37 §traffic: commands come only between messages (traffic = *(command / "
        "message)): no PING or PONG between two frames of one multipart message (HEARTBEAT_IVL 1 ms; the peer "
        "reads 6 messages of 40 x 4 KiB slowly, sending a PING every 5 frames)")
def _(run):
    a = run.adapter()
    a.socket("DEALER", [(ZMQ_HEARTBEAT_IVL, 1), (ZMQ_HEARTBEAT_TIMEOUT, 30000)])
    try:
        # Frames then wait in the implementation, not in its kernel buffer,
        # while PINGs and PONGs fall due (where the adapter maps SNDBUF).
        a.ok(f"OPTI {ZMQ_SNDBUF} 4096")
    except NotApplicable:
        pass
    p = Peer.connect(a.bind(), rcvbuf=4096)
    p.handshake("DEALER")
    for m in range(SPLIT_MESSAGES):
        a.send(*(split_body(m, f) for f in range(SPLIT_FRAMES)))
    m = f = pings = pongs = 0
    while m < SPLIT_MESSAGES:
        flags, data, head = p.read_frame()
        if flags & 0x04:
            name = data[1:1 + data[0]]
            if f > 0:
                raise Differs(f"{name.decode('ascii', 'replace')} inside message {m}, after frame {f - 1} of "
                              f"{SPLIT_FRAMES}: {(head + data).hex()}")
            pongs += name == b"PONG"
            if name == b"PING":
                p.write(command(b"PONG", data[1 + data[0] + 2:]))
            continue
        expect(data == split_body(m, f), f"message {m} frame {f}: {len(data)} octets {data[:8].hex()}...")
        expect(bool(flags & 0x01) == (f + 1 < SPLIT_FRAMES), f"MORE {flags & 1} on message {m} frame {f}")
        f += 1
        if f % 5 == 0 and f < SPLIT_FRAMES:
            pings += 1
            p.write(command(b"PING", struct.pack(">H", 0) + b"split%d" % pings))
        if f == SPLIT_FRAMES:
            m, f = m + 1, 0
    # The PINGs came mid-message: their answer is due there, so it must come
    # after (or the clause saw no command fall due inside a message).
    while not pongs:
        name, data, _ = p.read_command(skip=(b"PING",))
        pongs += name == b"PONG"


def sub_wire(run, minor):
    """An implementation SUB connected to a scripted PUB speaking 3.minor."""
    a, p = connecting(run, "SUB")
    p.handshake("PUB", minor=minor)
    a.ok(f"OPTB {ZMQ_SUBSCRIBE} {b'ab'.hex()}")
    sub = p.read_frame()
    a.ok(f"OPTB {ZMQ_UNSUBSCRIBE} {b'ab'.hex()}")
    cancel = p.read_frame()
    return sub, cancel


def show(f):
    return f"flags {f[0]:#04x} body {f[1].hex()}"


@clause("sub.subscribe-command", "RFC 37 §SUBSCRIBE: a SUB sends a SUBSCRIBE command to a ZMTP 3.1 peer")
def _(run):
    sub, _ = sub_wire(run, 1)
    expect(sub[0] == 0x04 and sub[1] == b"\x09SUBSCRIBEab", show(sub))


@clause("sub.cancel-command", "RFC 37 §CANCEL: a SUB sends a CANCEL command to a ZMTP 3.1 peer")
def _(run):
    _, cancel = sub_wire(run, 1)
    expect(cancel[0] == 0x04 and cancel[1] == b"\x06CANCELab", show(cancel))


@clause("sub.legacy-messages", "RFC 23 §PUB/SUB: to a ZMTP 3.0 peer a SUB sends %x01+topic to subscribe, "
        "%x00+topic to cancel, as messages")
def _(run):
    sub, cancel = sub_wire(run, 0)
    expect(sub == (0, b"\x01ab", sub[2]) and cancel == (0, b"\x00ab", cancel[2]),
           f"{show(sub)}; {show(cancel)}")


@clause("sub.subscribe-on-connect", "RFC 29 §SUB: subscriptions made before a connection exists are sent "
        "when it is established")
def _(run):
    a = run.adapter()
    a.socket("SUB", [(ZMQ_SUBSCRIBE, b"ab"), (ZMQ_SUBSCRIBE, b"cd")])
    lst = Listener()
    run.cleanup.append(lst.close)
    a.connect(lst.port)
    p = lst.accept()
    p.handshake("PUB")
    got = sorted([p.read_frame()[:2], p.read_frame()[:2]])
    want = sorted([(0x04, b"\x09SUBSCRIBEab"), (0x04, b"\x09SUBSCRIBEcd")])
    legacy = sorted([(0, b"\x01ab"), (0, b"\x01cd")])
    expect(got in (want, legacy), "; ".join(show(f) for f in got))


def pub_filters(run, minor, subscribe, cancel):
    a, p = bound(run, "PUB")
    p.handshake("SUB", minor=minor)
    p.write(subscribe(b"ab"))
    first = pub_until(a, p, [b"cd-1", b"ab-1"], b"ab-1")
    expect(first == [b"ab-1"], f"first message {first}")
    p.write(cancel(b"ab") + subscribe(b"zz"))
    first = pub_until(a, p, [b"ab-2", b"zz-2"], b"zz-2", drop=[b"ab-2"])
    a.send(b"ab-3")
    a.send(b"zz-3")
    nxt = p.read_message()
    # pub_until publishes in rounds: copies of zz-2 from its last round may
    # still be on the way (seen under load); they precede ab-3/zz-3.
    while nxt == [b"zz-2"]:
        nxt = p.read_message()
    expect(nxt == [b"zz-3"], f"after CANCEL ab: {nxt}")


def pub_until(a, p, msgs, want, drop=()):
    """Publish msgs in turn until the peer receives want (subscriptions travel
    asynchronously); anything else received, outside drop, is returned."""
    deadline = time.monotonic() + IO_TIMEOUT
    p.sock.settimeout(0.05)
    try:
        while time.monotonic() < deadline:
            for m in msgs:
                a.send(m)
            try:
                while True:
                    got = p.read_message()
                    if got[0] not in drop:
                        return got
            except Differs:
                pass
    finally:
        p.sock.settimeout(IO_TIMEOUT)
    raise Differs(f"no message reached the subscriber within {IO_TIMEOUT}s")


@clause("pub.subscribe-cancel-commands", "RFC 37 §SUBSCRIBE/CANCEL: a PUB filters by SUBSCRIBE and CANCEL "
        "commands from a ZMTP 3.1 peer")
def _(run):
    pub_filters(run, 1, lambda t: command(b"SUBSCRIBE", t), lambda t: command(b"CANCEL", t))


@clause("pub.legacy-messages", "RFC 23 §PUB/SUB: a PUB filters by %x01/%x00 subscription messages from a "
        "ZMTP 3.0 peer")
def _(run):
    pub_filters(run, 0, lambda t: frame(b"\x01" + t), lambda t: frame(b"\x00" + t))


@clause("push.round-robin", "RFC 30 §PUSH: messages go to the connected peers in round-robin order")
def _(run):
    a = run.adapter()
    a.socket("PUSH")
    ep = a.bind()
    peers = [Peer.connect(ep), Peer.connect(ep)]
    for p in peers:
        p.handshake("PULL")
    # Until the implementation has attached both peers, every message may go to
    # the first; from then on the order is the clause's.
    got = [[], []]
    deadline = time.monotonic() + IO_TIMEOUT
    n = 0
    while not all(got) and time.monotonic() < deadline:
        a.send(b"w%d" % n)
        n += 1
        for i, p in enumerate(peers):
            p.sock.settimeout(0.05)
            try:
                got[i] += p.read_message()
            except Differs:
                pass
            p.sock.settimeout(IO_TIMEOUT)
    expect(all(got), f"one peer got nothing: {got}")
    for k in range(4):
        a.send(b"r%d" % k)
    after = [[], []]
    deadline = time.monotonic() + IO_TIMEOUT
    while sum(map(len, after)) < 4 and time.monotonic() < deadline:
        for i, p in enumerate(peers):
            p.sock.settimeout(0.05)
            try:
                after[i] += [m for m in p.read_message() if m.startswith(b"r")]
            except Differs:
                pass
            p.sock.settimeout(IO_TIMEOUT)
    parities = [{m[1] % 2 for m in msgs} for msgs in after]
    expect(sorted(map(len, after)) == [2, 2] and sorted(map(len, parities)) == [1, 1]
           and parities[0] != parities[1],
           f"after both peers were served: peer 1 got {after[0]}, peer 2 got {after[1]}")


@clause("xpub.subscription-messages", "RFC 29 §XPUB: SUBSCRIBE/CANCEL from a 3.1 peer reach the application "
        "as %x01+topic / %x00+topic messages")
def _(run):
    a, p = bound(run, "XPUB")
    p.handshake("SUB")
    p.write(command(b"SUBSCRIBE", b"ab"))
    sub = a.recv()
    p.write(command(b"CANCEL", b"ab"))
    cancel = a.recv()
    expect(sub == [b"\x01ab"] and cancel == [b"\x00ab"], f"application received {sub}, then {cancel}")


@clause("xsub.subscription-messages", "RFC 29 §XSUB / RFC 37: %x01+topic / %x00+topic sent by the application "
        "reach a 3.1 peer as SUBSCRIBE / CANCEL commands")
def _(run):
    a, p = connecting(run, "XSUB")
    p.handshake("XPUB")
    a.send(b"\x01ab")
    sub = p.read_frame()
    a.send(b"\x00ab")
    cancel = p.read_frame()
    expect(sub[:2] == (0x04, b"\x09SUBSCRIBEab") and cancel[:2] == (0x04, b"\x06CANCELab"),
           f"{show(sub)}; {show(cancel)}")


@clause("req.delimiter", "RFC 28 §REQ: a REQ sends an empty delimiter frame before the request")
def _(run):
    a, p = connecting(run, "REQ")
    p.handshake("REP")
    a.send(b"hello")
    f1, f2 = p.read_frame(), p.read_frame()
    expect(f1[:2] == (0x01, b"") and f2[:2] == (0x00, b"hello"), f"{show(f1)}; {show(f2)}")


@clause("req.reply", "RFC 28 §REQ: a reply that starts with the delimiter is delivered without it")
def _(run):
    a, p = connecting(run, "REQ")
    p.handshake("REP")
    a.send(b"hello")
    p.read_message()
    p.write(frame(b"", 0x01) + frame(b"world"))
    got = a.recv()
    expect(got == [b"world"], f"received {got}")


@clause("rep.envelope", "RFC 28 §REP: a REP delivers the request without its envelope and sends the reply "
        "behind the same envelope (delimiter)")
def _(run):
    a, p = connecting(run, "REP")
    p.handshake("REQ")
    p.write(frame(b"", 0x01) + frame(b"q"))
    got = a.recv()
    expect(got == [b"q"], f"REP received {got}")
    a.send(b"a")
    f1, f2 = p.read_frame(), p.read_frame()
    expect(f1[:2] == (0x01, b"") and f2[:2] == (0x00, b"a"), f"{show(f1)}; {show(f2)}")


@clause("router.identity-frame", "RFC 28 §ROUTER: a message is delivered prefixed with the peer's Identity")
def _(run):
    a, p = bound(run, "ROUTER")
    p.handshake("DEALER", identity=b"peer1")
    p.write(frame(b"hi"))
    got = a.recv()
    expect(got == [b"peer1", b"hi"], f"received {got}")


@clause("router.route-by-identity", "RFC 28 §ROUTER: a message sent with an Identity frame reaches that peer, "
        "without the frame")
def _(run):
    a, p = bound(run, "ROUTER")
    p.handshake("DEALER", identity=b"peer1")
    p.write(frame(b"hi"))
    a.recv()
    a.send(b"peer1", b"back")
    got = p.read_message()
    expect(got == [b"back"], f"peer received {got}")


@clause("router.unknown-identity", "RFC 28 §ROUTER: a message for an unknown identity is dropped "
        "silently; the next one for a known peer arrives")
def _(run):
    a, p = bound(run, "ROUTER")
    p.handshake("DEALER", identity=b"peer1")
    p.write(frame(b"hi"))
    a.recv()
    a.send(b"nobody", b"lost")
    a.send(b"peer1", b"kept")
    got = p.read_message()
    expect(got == [b"kept"], f"peer received {got}")


@clause("malformed.closes", "RFC 23 §framing: a malformed command (name size past the frame's end) closes "
        "the connection; the process lives and serves a new peer")
def _(run):
    a, p = bound(run, "DEALER")
    p.handshake("DEALER")
    after_ready = len(p.seen)
    p.write(b"\x04\x02\x09P")
    closed = p.closed_within(IO_TIMEOUT)
    expect(a.alive(), "the implementation's process died")
    if not closed:
        # Whether the connection still carries messages tells a stalled reader
        # from one that skipped the bad command.
        p.write(frame(b"after"))
        got = a.recv(1000)
        raise Differs(f"sent 04 02 09 50; connection still open after {IO_TIMEOUT}s, bytes it sent after its "
                      f"READY: {bytes(p.seen[after_ready:]).hex() or 'none'}; a message sent next was "
                      + ("delivered" if got == [b"after"] else f"not delivered ({got})"))
    port = p.sock.getpeername()[1]
    p2 = Peer.connect(f"tcp://127.0.0.1:{port}")
    p2.handshake("DEALER")
    p2.write(frame(b"again"))
    expect(a.recv() == [b"again"], "a new peer was not served")


# ------------------------------------------------------------- CURVE (RFC 26)

ZMQ_CURVE_SERVER, ZMQ_CURVE_PUBLICKEY, ZMQ_CURVE_SECRETKEY, ZMQ_CURVE_SERVERKEY = 47, 48, 49, 50
ZMQ_ZAP_DOMAIN = 55


class CurveBox:
    """The NaCl box (crypto_box) for the scripted CURVE peer, from RustCrypto's
    crypto_box crate through crates/oxmq-proto/examples/conformance_curve_box.rs;
    CURVE's commands themselves are written byte by byte here."""

    path = None
    proc = None

    @classmethod
    def _call(cls, *words):
        if cls.proc is None:
            if not cls.path or not os.path.exists(cls.path):
                raise RuntimeError(f"the CURVE box helper is missing ({cls.path}): "
                                   "cargo build --release --example conformance_curve_box -p oxmq-proto")
            cls.proc = subprocess.Popen([cls.path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        cls.proc.stdin.write(" ".join([words[0]] + [w.hex() or "-" for w in words[1:]]) + "\n")
        cls.proc.stdin.flush()
        out = cls.proc.stdout.readline().strip()
        if out.startswith("OK "):
            return b"" if out[3:] == "-" else bytes.fromhex(out[3:])
        return None

    @classmethod
    def keypair(cls):
        secret = os.urandom(32)
        return cls._call("PUBLIC", secret), secret

    @classmethod
    def seal(cls, their_public, our_secret, nonce, plain):
        return cls._call("BOX", their_public, our_secret, nonce, plain)

    @classmethod
    def open(cls, their_public, our_secret, nonce, sealed):
        """-> the plaintext, or None when the box does not open."""
        return cls._call("OPEN", their_public, our_secret, nonce, sealed)


def short_nonce(n):
    return struct.pack(">Q", n)


class CurveServerPeer:
    """A scripted CURVE server facing an implementation client: -> its HELLO,
    then WELCOME, INITIATE, READY on request."""

    def __init__(self, run, kind="DEALER"):
        self.s_pub, self.s_sec = CurveBox.keypair()
        self.c_pub, self.c_sec = CurveBox.keypair()
        self.a, self.p = connecting(run, kind, [(ZMQ_CURVE_PUBLICKEY, self.c_pub), (ZMQ_CURVE_SECRETKEY, self.c_sec),
                                                (ZMQ_CURVE_SERVERKEY, self.s_pub)])
        self.p.write(greeting(mechanism=b"CURVE", as_server=1))
        self.greeting = self.p.read(64)
        self.hello = self.p.read_command()
        self.nonces, self.message_flags = [], []

    def hello_fields(self):
        name, data, _ = self.hello
        expect(name == b"HELLO" and len(data) == 194, f"command {name!r}, {len(data) + 6} octets: {data.hex()}")
        version, pad, cn_pub, nonce, box = data[:2], data[2:74], data[74:106], data[106:114], data[114:]
        return version, pad, cn_pub, nonce, box

    def welcome(self):
        _, _, self.cn_pub, nonce, _ = self.hello_fields()
        self.nonces.append(nonce)
        self.sn_pub, self.sn_sec = CurveBox.keypair()
        self.cookie = os.urandom(96)  # opaque to the client, which must echo it
        long_nonce = os.urandom(16)
        box = CurveBox.seal(self.cn_pub, self.s_sec, b"WELCOME-" + long_nonce, self.sn_pub + self.cookie)
        self.p.write(command(b"WELCOME", long_nonce + box))
        name, data, _ = self.p.read_command()
        expect(name == b"INITIATE", f"after WELCOME: command {name!r} {data.hex()}")
        expect(len(data) >= 96 + 8 + 16 + 128, f"INITIATE of {len(data) + 9} octets: {data.hex()}")
        cookie, nonce, box = data[:96], data[96:104], data[104:]
        self.nonces.append(nonce)
        plain = CurveBox.open(self.cn_pub, self.sn_sec, b"CurveZMQINITIATE" + nonce, box)
        return cookie, nonce, plain

    def ready(self, socket_type="DEALER"):
        box = CurveBox.seal(self.cn_pub, self.sn_sec, b"CurveZMQREADY---" + short_nonce(1), ready_body(socket_type))
        self.p.write(command(b"READY", short_nonce(1) + box))

    def message_from_impl(self):
        """The next MESSAGE's (short nonce, opened flags+payload or None).
        libzmq writes MESSAGE in a frame without the COMMAND flag (its frame
        flags carry MORE); the flags seen go to self.message_flags."""
        flags, body, _ = self.p.read_frame()
        expect(body[:8] == b"\x07MESSAGE", f"frame flags {flags:#04x} body {body.hex()}")
        self.message_flags.append(flags)
        data = body[8:]
        nonce = data[:8]
        self.nonces.append(nonce)
        return nonce, CurveBox.open(self.cn_pub, self.sn_sec, b"CurveZMQMESSAGEC" + nonce, data[8:])

    def message_to_impl(self, n, body, corrupt=False):
        box = bytearray(CurveBox.seal(self.cn_pub, self.sn_sec, b"CurveZMQMESSAGES" + short_nonce(n), b"\x00" + body))
        if corrupt:
            box[-1] ^= 0x01
        # As libzmq frames it (no COMMAND flag), which every implementation
        # that speaks CURVE to libzmq reads.
        self.p.write(frame(b"\x07MESSAGE" + short_nonce(n) + bytes(box)))


@clause("curve.client-greeting", "RFC 26 / RFC 23 §greeting: a CURVE client greets with mechanism \"CURVE\" "
        "and as-server 0")
def _(run):
    g = CurveServerPeer(run).greeting
    expect(g[12:32] == b"CURVE".ljust(20, b"\x00") and g[32] == 0, f"mechanism {g[12:32].hex()} as-server {g[32]}")


@clause("curve.hello", "RFC 26 §HELLO: 200 octets: version 1.0, 72 zero octets, C', short nonce, and a box "
        "of 64 zero octets from C' to S (nonce \"CurveZMQHELLO---\")")
def _(run):
    peer = CurveServerPeer(run)
    version, pad, cn_pub, nonce, box = peer.hello_fields()
    expect(version == b"\x01\x00" and pad == bytes(72), f"version {version.hex()} padding {pad.hex()}")
    plain = CurveBox.open(cn_pub, peer.s_sec, b"CurveZMQHELLO---" + nonce, box)
    expect(plain == bytes(64), f"hello box {box.hex()} opens to {plain.hex() if plain is not None else 'nothing'}")


@clause("curve.initiate", "RFC 26 §INITIATE: the client echoes the cookie; its box (C' to S') holds C, a vouch "
        "(C' and S, boxed from C to S' with nonce \"VOUCH---\") and its metadata")
def _(run):
    peer = CurveServerPeer(run)
    cookie, nonce, plain = peer.welcome()
    expect(cookie == peer.cookie, f"cookie sent {peer.cookie.hex()}, echoed {cookie.hex()}")
    expect(plain is not None, "the INITIATE box does not open with C' and S'")
    c_pub, vouch_nonce, vouch, meta = plain[:32], plain[32:48], plain[48:128], plain[128:]
    expect(c_pub == peer.c_pub, f"long-term key {c_pub.hex()}, want {peer.c_pub.hex()}")
    opened = CurveBox.open(c_pub, peer.sn_sec, b"VOUCH---" + vouch_nonce, vouch)
    expect(opened == peer.cn_pub + peer.s_pub, f"vouch opens to {opened.hex() if opened else 'nothing'}")
    props = parse_props(meta)
    expect(props.get("socket-type") == b"DEALER", f"INITIATE metadata {props}")


@clause("curve.message", "RFC 26 §MESSAGE: after READY a message travels as MESSAGE, boxed from C' to S' "
        "(nonce \"CurveZMQMESSAGEC\") around a flags octet and the payload; MESSAGEs from the server arrive")
def _(run):
    peer = CurveServerPeer(run)
    peer.welcome()
    peer.ready()
    peer.a.send(b"curve")
    nonce, plain = peer.message_from_impl()
    expect(plain == b"\x00curve", f"MESSAGE box opens to {plain.hex() if plain is not None else 'nothing'}")
    peer.message_to_impl(2, b"back")
    got = peer.a.recv()
    expect(got == [b"back"], f"received {got}")
    return f"MESSAGE frame flags {peer.message_flags[0]:#04x}"


@clause("curve.nonce-increase", "RFC 26 §nonces: the client's short nonces (HELLO, INITIATE, MESSAGE ...) "
        "strictly increase")
def _(run):
    peer = CurveServerPeer(run)
    peer.welcome()
    peer.ready()
    for i in range(3):
        peer.a.send(b"m%d" % i)
        peer.message_from_impl()
    values = [struct.unpack(">Q", n)[0] for n in peer.nonces]
    expect(all(x < y for x, y in zip(values, values[1:])), f"short nonces {values}")
    return f"short nonces {values}"


@clause("curve.bad-message-box", "RFC 26 §MESSAGE: a MESSAGE whose box does not open closes the connection; "
        "the process lives")
def _(run):
    peer = CurveServerPeer(run)
    peer.welcome()
    peer.ready()
    peer.message_to_impl(2, b"bad", corrupt=True)
    closed = peer.p.closed_within(IO_TIMEOUT)
    expect(peer.a.alive(), "the implementation's process died")
    got = peer.a.recv(200)
    expect(closed and got is None, f"after a corrupted box: connection {'closed' if closed else 'open'}, "
           f"delivered {got}; bytes seen {bytes(peer.p.seen[-64:]).hex()}")


@clause("curve.nonce-replay", "RFC 26 §nonces: a MESSAGE repeating an earlier short nonce closes the "
        "connection")
def _(run):
    peer = CurveServerPeer(run)
    peer.welcome()
    peer.ready()
    peer.message_to_impl(5, b"first")
    expect(peer.a.recv() == [b"first"], "the first MESSAGE was not delivered")
    peer.message_to_impl(5, b"again")
    closed = peer.p.closed_within(IO_TIMEOUT)
    got = peer.a.recv(200)
    expect(closed and got is None, f"after a repeated nonce: connection {'closed' if closed else 'open'}, "
           f"delivered {got}")


class CurveClientPeer:
    """A scripted CURVE client facing an implementation server."""

    def __init__(self, run, zap=None, domain=None):
        self.s_pub, self.s_sec = CurveBox.keypair()
        self.c_pub, self.c_sec = CurveBox.keypair()
        self.cn_pub, self.cn_sec = CurveBox.keypair()
        self.a = run.adapter()
        if zap:
            self.a.ok(f"ZAP {zap}")
        opts = [(ZMQ_CURVE_SERVER, 1), (ZMQ_CURVE_SECRETKEY, self.s_sec)]
        if domain:
            opts.append((ZMQ_ZAP_DOMAIN, domain))
        self.a.socket("DEALER", opts)
        self.p = Peer.connect(self.a.bind())
        self.p.write(greeting(mechanism=b"CURVE"))
        self.greeting = self.p.read(64)

    def hello(self, corrupt=False):
        box = bytearray(CurveBox.seal(self.s_pub, self.cn_sec, b"CurveZMQHELLO---" + short_nonce(1), bytes(64)))
        if corrupt:
            box[0] ^= 0x01
        self.p.write(command(b"HELLO", b"\x01\x00" + bytes(72) + self.cn_pub + short_nonce(1) + bytes(box)))

    def welcome(self):
        name, data, _ = self.p.read_command()
        expect(name == b"WELCOME" and len(data) == 160, f"command {name!r}, {len(data) + 8} octets: {data.hex()}")
        plain = CurveBox.open(self.s_pub, self.cn_sec, b"WELCOME-" + data[:16], data[16:])
        expect(plain is not None and len(plain) == 128, f"the WELCOME box does not open: {data.hex()}")
        self.sn_pub, self.cookie = plain[:32], plain[32:]

    def initiate(self):
        vouch_nonce = os.urandom(16)
        vouch = vouch_nonce + CurveBox.seal(self.sn_pub, self.c_sec, b"VOUCH---" + vouch_nonce, self.cn_pub + self.s_pub)
        box = CurveBox.seal(self.sn_pub, self.cn_sec, b"CurveZMQINITIATE" + short_nonce(2),
                            self.c_pub + vouch + ready_body("DEALER"))
        self.p.write(command(b"INITIATE", self.cookie + short_nonce(2) + box))

    def ready(self):
        name, data, _ = self.p.read_command()
        expect(name == b"READY", f"after INITIATE: command {name!r} {data.hex()}")
        return CurveBox.open(self.sn_pub, self.cn_sec, b"CurveZMQREADY---" + data[:8], data[8:])


@clause("curve.server-greeting", "RFC 26 / RFC 23 §greeting: a CURVE server greets with mechanism \"CURVE\" "
        "and as-server 1")
def _(run):
    g = CurveClientPeer(run).greeting
    expect(g[12:32] == b"CURVE".ljust(20, b"\x00") and g[32] == 1, f"mechanism {g[12:32].hex()} as-server {g[32]}")


@clause("curve.welcome", "RFC 26 §WELCOME: 168 octets: a long nonce and a box (S to C', nonce \"WELCOME-\") "
        "holding S' and a 96-octet cookie")
def _(run):
    peer = CurveClientPeer(run)
    peer.hello()
    peer.welcome()


@clause("curve.server-ready", "RFC 26 §READY: after a valid INITIATE the server sends READY, boxed from S' to C' "
        "(nonce \"CurveZMQREADY---\"), with its metadata")
def _(run):
    peer = CurveClientPeer(run)
    peer.hello()
    peer.welcome()
    peer.initiate()
    meta = peer.ready()
    expect(meta is not None, "the READY box does not open with S' and C'")
    props = parse_props(meta)
    expect(props.get("socket-type") == b"DEALER", f"READY metadata {props}")


@clause("curve.bad-hello-box", "RFC 26 §HELLO: a HELLO whose box does not open closes the connection "
        "without WELCOME; the process lives")
def _(run):
    peer = CurveClientPeer(run)
    peer.hello(corrupt=True)
    closed = peer.p.closed_within(IO_TIMEOUT)
    expect(peer.a.alive(), "the implementation's process died")
    seen = bytes(peer.p.seen[64:])
    expect(closed and b"WELCOME" not in seen, f"connection {'closed' if closed else 'open'}; bytes seen after the "
           f"greeting: {seen.hex() or 'none'}")


# --------------------------------------------------------------- ZAP (RFC 27)

def zap_plain(run, status):
    """An implementation PLAIN server (ZAP domain "conf") whose ZAP handler
    answers status, and a scripted client that sent HELLO admin/secret ->
    (adapter, peer, the server's answer (name, data))."""
    a = run.adapter()
    a.ok(f"ZAP {status}")
    a.socket("DEALER", [(ZMQ_PLAIN_SERVER, 1), (ZMQ_ZAP_DOMAIN, b"conf")])
    p = Peer.connect(a.bind())
    p.write(greeting(mechanism=b"PLAIN"))
    p.read(64)
    p.write(command(b"HELLO", b"\x05admin\x06secret"))
    try:
        flags, body, head = p.read_frame()
    except Differs as e:
        return a, p, (None, str(e))
    p.answer = (head + body).hex()
    if flags != 0x04 or not body or body[0] + 1 > len(body):
        raise Differs(f"answer to HELLO is no well-formed command: {p.answer}")
    return a, p, (body[1:1 + body[0]], body[1 + body[0]:])


def zap_request(a):
    out = a.cmd("ZAPLOG")
    expect(out.startswith("MSG "), f"the ZAP handler got no request ({out})")
    return [b"" if f == "-" else bytes.fromhex(f) for f in out.split()[1:]]


@clause("zap.request", "RFC 27 §request: the server asks ZAP with version \"1.0\", a request id, the domain, the "
        "peer's address, its identity, the mechanism and the credentials (PLAIN: username, password)")
def _(run):
    a, p, _ = zap_plain(run, "200")
    req = zap_request(a)
    expect(len(req) == 8 and req[0] == b"1.0" and req[2] == b"conf" and req[3] == b"127.0.0.1"
           and req[5] == b"PLAIN" and req[6:] == [b"admin", b"secret"], f"request frames {req}")
    return f"request id {req[1].hex()}, identity {req[4].hex() or 'empty'}"


@clause("zap.200", "RFC 27 §reply: status 200 admits the client: WELCOME, then READY after INITIATE, and "
        "messages flow")
def _(run):
    a, p, (name, data) = zap_plain(run, "200")
    expect(name == b"WELCOME", f"answer to HELLO: {name!r} {data if name is None else data.hex()}")
    p.write(command(b"INITIATE", ready_body("DEALER")))
    name, data, _ = p.read_command()
    expect(name == b"READY", f"answer to INITIATE: {name!r} {data.hex()}")
    p.write(frame(b"in"))
    expect(a.recv() == [b"in"], "a message after READY was not delivered")


def zap_refused(run, status):
    a, p, (name, data) = zap_plain(run, status)
    expect(name != b"WELCOME", f"status {status} answered with WELCOME")
    closed = p.closed_within(IO_TIMEOUT) if name is not None else True
    expect(a.alive(), "the implementation's process died")
    seen = bytes(p.seen[64:]).hex() or "none"
    return p, (name, data, closed, seen)


@clause("zap.300", "RFC 27 §reply: status 300 (temporary failure) refuses the client: no WELCOME")
def _(run):
    p, (name, data, closed, seen) = zap_refused(run, "300")
    return f"answer {name!r} {data if name is None else data.hex()}; connection {'closed' if closed else 'open'}"


@clause("zap.400", "RFC 27 §reply / RFC 24 §ERROR: status 400 refuses the client with an ERROR command "
        "and the connection closes")
def _(run):
    p, (name, data, closed, seen) = zap_refused(run, "400")
    expect(name == b"ERROR" and closed, f"answer {name!r} {data if name is None else data.hex()}; connection "
           f"{'closed' if closed else 'open'}; bytes seen {seen}")
    return f"ERROR frame {p.answer}"


@clause("zap.500", "RFC 27 §reply / RFC 24 §ERROR: status 500 (internal error) refuses the client with an "
        "ERROR command and the connection closes")
def _(run):
    p, (name, data, closed, seen) = zap_refused(run, "500")
    expect(name == b"ERROR" and closed, f"answer {name!r} {data if name is None else data.hex()}; connection "
           f"{'closed' if closed else 'open'}; bytes seen {seen}")
    return f"ERROR frame {p.answer}"


@clause("zap.absent-curve", "RFC 27 §ZAP (handler absent; libzmq's test_security_no_zap_handler): a CURVE server "
        "with a ZAP domain and no handler admits a client with a valid vouch")
def _(run):
    peer = CurveClientPeer(run, domain=b"conf")
    peer.hello()
    peer.welcome()
    peer.initiate()
    expect(peer.ready() is not None, "the READY box does not open")


@clause("zap.absent-null", "RFC 27 §ZAP (handler absent; libzmq's test_security_no_zap_handler): a NULL server "
        "with a ZAP domain and no handler admits the client")
def _(run):
    a, p = bound(run, "DEALER", [(ZMQ_ZAP_DOMAIN, b"conf")])
    p.handshake("DEALER")
    p.write(frame(b"hi"))
    expect(a.recv() == [b"hi"], "a message after READY was not delivered")


# ------------------------------------------------------------ ZWS 2.0 (RFC 45)

WS_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def ws_accept(key):
    import base64
    import hashlib
    return base64.b64encode(hashlib.sha1(key.encode() + WS_GUID).digest()).decode()


def ws_frame(payload, opcode=0x2, masked=True):
    """One RFC 6455 frame with FIN; a client's frames are masked."""
    n = len(payload)
    head = bytes([0x80 | opcode])
    size = bytes([n]) if n < 126 else (b"\x7e" + struct.pack(">H", n) if n < 65536 else b"\x7f" + struct.pack(">Q", n))
    if not masked:
        return head + size + payload
    key = os.urandom(4)
    return head + bytes([size[0] | 0x80]) + size[1:] + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


class WsPeer:
    """A scripted WebSocket peer over a Peer's socket."""

    def __init__(self, peer, mask):
        self.p, self.mask = peer, mask

    def write(self, flags, body):
        self.p.write(ws_frame(bytes([flags]) + body, masked=self.mask))

    def read(self):
        """-> (first octet, masked?, payload)"""
        b0, b1 = self.p.read(2)
        n = b1 & 0x7F
        if n == 126:
            (n,) = struct.unpack(">H", self.p.read(2))
        elif n == 127:
            (n,) = struct.unpack(">Q", self.p.read(8))
        key = self.p.read(4) if b1 & 0x80 else None
        data = self.p.read(n)
        if key:
            data = bytes(b ^ key[i % 4] for i, b in enumerate(data))
        return b0, key is not None, data


def read_http(p):
    buf = b""
    while b"\r\n\r\n" not in buf:
        buf += p.read(1)
        expect(len(buf) < 8192, f"no end of HTTP header in {buf[:200]!r}")
    lines = buf.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    return lines[0], headers


def ws_bound(run, kind="DEALER"):
    """An implementation bound on ws://, a scripted client that upgraded ->
    (adapter, WsPeer, status line, headers, key)."""
    a = run.adapter()
    a.socket(kind)
    out = a.cmd("BIND ws://127.0.0.1:*/conformance")
    if out.startswith("ERR"):
        raise NotApplicable(f"no ws:// transport (bind: {out})")
    ep = out[3:]
    hostport = ep.split("//", 1)[1].split("/", 1)[0]
    host, port = hostport.rsplit(":", 1)
    p = Peer(socket.create_connection((host, int(port)), timeout=IO_TIMEOUT))
    key = "dGhlIHNhbXBsZSBub25jZQ=="
    p.write((f"GET /conformance HTTP/1.1\r\nHost: {hostport}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
             f"Sec-WebSocket-Protocol: ZWS2.0/NULL,ZWS2.0\r\n\r\n").encode())
    status, headers = read_http(p)
    return a, WsPeer(p, mask=True), status, headers, key


@clause("zws.upgrade", "RFC 45 §handshake / RFC 6455: a ws:// server answers the upgrade with 101, the right "
        "Sec-WebSocket-Accept and one offered ZWS2.0 subprotocol")
def _(run):
    a, w, status, headers, key = ws_bound(run)
    expect(status.startswith("HTTP/1.1 101") and headers.get("sec-websocket-accept") == ws_accept(key)
           and headers.get("sec-websocket-protocol") in ("ZWS2.0/NULL", "ZWS2.0"),
           f"status {status!r}, headers {headers}")
    return f"subprotocol {headers.get('sec-websocket-protocol')}"


@clause("zws.ready", "RFC 45 §framing: with ZWS2.0/NULL the server's first WebSocket message is binary, "
        "unmasked, a command (flags %x02) READY with Socket-Type")
def _(run):
    a, w, status, headers, key = ws_bound(run)
    if headers.get("sec-websocket-protocol") != "ZWS2.0/NULL":
        raise Differs(f"subprotocol {headers.get('sec-websocket-protocol')}, not ZWS2.0/NULL")
    b0, masked, data = w.read()
    expect(b0 == 0x82 and not masked and data[:7] == b"\x02\x05READY"
           and parse_props(data[7:]).get("socket-type") == b"DEALER",
           f"first frame octet {b0:#04x}, masked {masked}, payload {data.hex()}")


@clause("zws.message-flags", "RFC 45 §framing: each frame of a message is one binary WebSocket message "
        "starting with its flags (%x01 MORE, %x00 last), both ways")
def _(run):
    a, w, status, headers, key = ws_bound(run)
    if headers.get("sec-websocket-protocol") != "ZWS2.0/NULL":
        raise Differs(f"subprotocol {headers.get('sec-websocket-protocol')}, not ZWS2.0/NULL")
    w.read()
    w.write(0x02, b"\x05READY" + ready_body("DEALER"))
    w.write(0x01, b"x")
    w.write(0x00, b"yz")
    got = a.recv()
    expect(got == [b"x", b"yz"], f"received {got}")
    a.send(b"a", b"bc")
    frames = [w.read() for _ in range(2)]
    expect([f[2] for f in frames] == [b"\x01a", b"\x00bc"] and all(f[0] == 0x82 for f in frames),
           f"frames {[(hex(f[0]), f[2].hex()) for f in frames]}")


@clause("zws.unmasked-closes", "RFC 6455 §5.1 (under RFC 45): a server closes the connection on an unmasked "
        "frame from the client; the process lives")
def _(run):
    a, w, status, headers, key = ws_bound(run)
    w.read()
    w.p.write(ws_frame(b"\x02\x05READY" + ready_body("DEALER"), masked=False))
    closed = w.p.closed_within(IO_TIMEOUT)
    expect(a.alive(), "the implementation's process died")
    expect(closed, f"connection still open after {IO_TIMEOUT}s")


@clause("zws.client-upgrade", "RFC 45 §handshake: a ws:// client asks GET with Upgrade: websocket, "
        "Sec-WebSocket-Version 13, a key and a ZWS2.0 subprotocol; its frames are masked")
def _(run):
    a = run.adapter()
    a.socket("DEALER")
    lst = Listener()
    run.cleanup.append(lst.close)
    out = a.cmd(f"CONNECT ws://127.0.0.1:{lst.port}/conformance")
    if out.startswith("ERR"):
        raise NotApplicable(f"no ws:// transport (connect: {out})")
    p = lst.accept()
    request, headers = read_http(p)
    offered = [s.strip() for s in headers.get("sec-websocket-protocol", "").split(",")]
    expect(request.startswith("GET /conformance HTTP/1.1") and headers.get("upgrade", "").lower() == "websocket"
           and headers.get("sec-websocket-version") == "13" and "sec-websocket-key" in headers
           and any(s in ("ZWS2.0/NULL", "ZWS2.0") for s in offered), f"request {request!r}, headers {headers}")
    p.write((f"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             f"Sec-WebSocket-Accept: {ws_accept(headers['sec-websocket-key'])}\r\n"
             f"Sec-WebSocket-Protocol: ZWS2.0/NULL\r\n\r\n").encode())
    w = WsPeer(p, mask=False)
    b0, masked, data = w.read()
    expect(b0 == 0x82 and masked and data[:7] == b"\x02\x05READY", f"first frame octet {b0:#04x}, masked {masked}, "
           f"payload {data.hex()}")
    return f"offered {', '.join(offered)}"


# ------------------------------------------------------------------ the run

class Run:
    def __init__(self, argv, env):
        self.argv, self.env, self.cleanup = argv, env, []

    def adapter(self):
        a = Adapter(self.argv, self.env)
        self.cleanup.append(a.close)
        return a

    def finish(self):
        for fn in reversed(self.cleanup):
            fn()
        self.cleanup = []


def run_clause(impl, fn):
    run = Run(impl["argv"], impl["env"])
    try:
        detail = fn(run)
        return "pass", detail or ""
    except Differs as e:
        return "differs", str(e)
    except NotApplicable as e:
        return "n/a", str(e)
    except Exception as e:  # the suite's own failure: reported, never a pass
        return "error", f"{e.__class__.__name__}: {e}"
    finally:
        run.finish()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--impl", action="append", default=[],
                    help="NAME=ADAPTER[:LD_LIBRARY_PATH] (repeatable); NAME=-:REASON marks it unavailable")
    ap.add_argument("--under-test", action="append",
                    help="a column whose differences must be listed (repeatable; default: oxmq's three)")
    ap.add_argument("--known", default=os.path.join(HERE, "known_differences.json"))
    ap.add_argument("--out", default="target/conformance")
    ap.add_argument("--only", help="run clauses whose id starts with this")
    ap.add_argument("--curve-box", default="target/release/examples/conformance_curve_box",
                    help="the NaCl box helper the scripted CURVE peer uses")
    args = ap.parse_args()
    CurveBox.path = args.curve_box
    started = time.time()
    under_test = args.under_test or ["oxmq C ABI", "oxmq Python", "oxmq Rust"]

    impls = []
    for spec in args.impl:
        name, rest = spec.split("=", 1)
        if rest.startswith("-:"):
            impls.append({"name": name, "missing": rest[2:]})
            continue
        argv, _, libdir = rest.partition(":")
        env = dict(os.environ)
        if libdir:
            env["LD_LIBRARY_PATH"] = libdir
        impls.append({"name": name, "argv": argv.split(), "env": env})

    with open(args.known) as f:
        known = json.load(f)
    clauses = [c for c in CLAUSES if not args.only or c[0].startswith(args.only)]
    results = {}
    for impl in impls:
        if "missing" in impl:
            print(f"==> {impl['name']}: not available ({impl['missing']})", flush=True)
            continue
        a = Adapter(impl["argv"], impl["env"])
        impl["version"] = a.cmd("ALIVE").split(" ", 1)[1]
        a.close()
        print(f"==> {impl['name']} (reports libzmq {impl['version']})", flush=True)
        for cid, text, fn in clauses:
            status, detail = run_clause(impl, fn)
            results[(impl["name"], cid)] = (status, detail)
            print(f"    {status:8} {cid}" + (f": {detail}" if status != "pass" and detail else ""), flush=True)

    failures, stale = [], []
    for name in under_test:
        listed = known.get(name, {})
        for cid, text, _ in clauses:
            r = results.get((name, cid))
            if r and r[0] in ("differs", "error") and cid not in listed:
                failures.append(f"{name}: {cid}: {r[0]}: {r[1]}")
            if r and r[0] == "pass" and cid in listed:
                stale.append(f"{name}: {cid}")
    skip_log = os.environ.get("OXMQ_SKIP_LOG")
    if skip_log:
        with open(skip_log, "a") as f:
            for (name, cid), (status, detail) in sorted(results.items()):
                if status == "n/a":
                    f.write(f"conformance: {name}: {cid}: n/a: {detail}\n")

    matrix = render(impls, clauses, results, known)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "matrix.md"), "w") as f:
        f.write(matrix)
    with open(os.path.join(args.out, "matrix.json"), "w") as f:
        json.dump(as_json(impls, clauses, results, known, under_test, failures, started, args.only), f, indent=1)
        f.write("\n")
    print()
    print(matrix)
    print(f"==> matrix written to {os.path.join(args.out, 'matrix.md')} and matrix.json "
          f"({time.time() - started:.0f} s)")
    for entry in stale:
        print(f"==> note: {entry} now passes: its entry in {args.known} can go")
    if failures:
        print(f"==> conformance: a column under test differs from the RFC without an entry in {args.known}:")
        for f in failures:
            print(f"    {f}")
        sys.exit(1)
    print(f"==> conformance: {', '.join(under_test)}: every difference from the RFC is listed with its reason")


def as_json(impls, clauses, results, known, under_test, failures, started, only):
    """The matrix for machines (bench/conformance_report.py reads it)."""
    columns = []
    for i in impls:
        col = {"name": i["name"]}
        if "missing" in i:
            col["missing"] = i["missing"]
        else:
            col["version"] = i.get("version")
            col["results"] = {}
            for cid, _, _ in clauses:
                status, detail = results[(i["name"], cid)]
                cell = {"status": status}
                if detail:
                    cell["detail"] = detail
                reason = known.get(i["name"], {}).get(cid)
                if reason and status != "pass":
                    cell["listed"] = reason
                col["results"][cid] = cell
        columns.append(col)
    return {
        "generated_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "seconds": round(time.time() - started, 1),
        "only": only,
        "clauses": [{"id": cid, "text": text} for cid, text, _ in clauses],
        "implementations": columns,
        "under_test": under_test,
        "unlisted_differences": failures,
    }


def render(impls, clauses, results, known):
    cols = [i for i in impls]
    head = ["clause"] + [i["name"] + (f" (zmq_version {i['version']})" if "version" in i else "") for i in cols]
    lines = ["# ZMTP conformance matrix", "",
             "Generated by `make conformance` (conformance/run.py). pass / differs / n/a per clause; "
             "the bytes seen for each difference are listed below the table.", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    notes = []
    for cid, text, _ in clauses:
        row = [f"`{cid}` {text}"]
        for i in cols:
            if "missing" in i:
                row.append("not available")
                continue
            status, detail = results[(i["name"], cid)]
            cell = status
            if status != "pass" and detail:
                n = len(notes) + 1
                reason = known.get(i["name"], {}).get(cid)
                notes.append(f"{n}. {i['name']}, `{cid}`: {detail}" + (f" (listed: {reason})" if reason else ""))
                cell += f" [{n}]"
            row.append(cell)
        lines.append("| " + " | ".join(row).replace("\n", " ") + " |")
    for i in cols:
        if "missing" in i:
            notes.append(f"- {i['name']}: not available: {i['missing']}")
    return "\n".join(lines + [""] + notes) + "\n"


if __name__ == "__main__":
    main()
