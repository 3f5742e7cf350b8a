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
ZMQ_HEARTBEAT_IVL, ZMQ_HEARTBEAT_TTL = 75, 76
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
    def connect(cls, endpoint):
        host, port = endpoint.rsplit("/", 1)[1].rsplit(":", 1)
        return cls(socket.create_connection((host, int(port)), timeout=IO_TIMEOUT))

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
    args = ap.parse_args()
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
    print()
    print(matrix)
    print(f"==> matrix written to {os.path.join(args.out, 'matrix.md')}")
    for entry in stale:
        print(f"==> note: {entry} now passes: its entry in {args.known} can go")
    if failures:
        print(f"==> conformance: a column under test differs from the RFC without an entry in {args.known}:")
        for f in failures:
            print(f"    {f}")
        sys.exit(1)
    print(f"==> conformance: {', '.join(under_test)}: every difference from the RFC is listed with its reason")


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
