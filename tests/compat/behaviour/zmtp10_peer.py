#!/usr/bin/env python3
"""A ZMTP/1.0 peer (RFC 13) as libzmq 2.x speaks it, on raw TCP, against a
libzmq.so.5 loaded with ctypes (issue 13: older peers).

    zmtp10_peer.py LIBRARY     one "name: answer" line per probe

mk/compat/behaviour.mk runs it on oxmq's libzmq.so.5 and on pyzmq's bundled libzmq
4.3.5 (and Debian's): the outputs must be equal. ZMTP/1.0 has no greeting:
each side opens with its identity as a frame, and a frame is
[size][flags][body], the size counting the flags octet, 0xFF introducing an
8-octet size. libzmq 4.3 has already sent its 10-octet signature when it
sees such a peer; that signature reads as the header of its identity frame
(long size = identity length + 1, flags 0x7F), and the identity follows.
"""
import socket
import struct

from libzmq_ctypes import (
    DEALER, EVENTS, PAIR, PUB, PULL, PUSH, RCVTIMEO, REQ, ROUTER, SNDMORE, SUB, SUBSCRIBE, XPUB,
    describe, getint, lib, lib_socket, monitor_events, read_exact, recv_msg, run, setbytes, setint,
)


def frame(body, more=False):
    """A ZMTP/1.0 frame as libzmq 2.x's encoder writes it."""
    size = len(body) + 1
    head = bytes([size]) if size < 255 else b"\xff" + struct.pack(">Q", size)
    return head + bytes([1 if more else 0]) + body


def read_frame(c):
    """One 1.0 frame: (header hex, flags, body), or None at EOF."""
    first = read_exact(c, 1)
    if not first:
        return None
    head = first
    if first[0] == 0xFF:
        raw = read_exact(c, 8)
        head += raw
        size = struct.unpack(">Q", raw)[0]
    else:
        size = first[0]
    flags = read_exact(c, 1)
    head += flags
    return head.hex(), flags[0], read_exact(c, size - 1)


def show(f):
    if f is None:
        return "<eof>"
    head, _, body = f
    return f"{head}|{describe(body)}"


def peer(port, identity=b""):
    """Connects as a libzmq 2.x peer: sends its identity frame at once and
    reads the library's (the signature is that frame's header)."""
    c = socket.create_connection(("127.0.0.1", port), timeout=3)
    c.sendall(frame(identity))
    return c, show(read_frame(c))


def dropped(c):
    c.settimeout(3)
    try:
        while True:
            data = c.recv(4096)
            if not data:
                return True
    except socket.timeout:
        return False
    except ConnectionResetError:
        return True


def probe_push_to_lib_pull():
    s, port = lib_socket(PULL)
    c, ident = peer(port)
    print("1.0 PUSH -> PULL: library's identity frame:", ident)
    # 100000 octets: past the size where an engine may read a body apart.
    c.sendall(frame(b"hello") + frame(b"a", more=True) + frame(b"b") + frame(b"L" * 300) + frame(b"B" * 100000))
    print("1.0 PUSH -> PULL:", recv_msg(s), recv_msg(s), recv_msg(s), recv_msg(s))
    c.close()


def probe_lib_push_to_pull():
    s, port = lib_socket(PUSH)
    c, ident = peer(port)
    print("PUSH -> 1.0 PULL: library's identity frame:", ident)
    lib.zmq_send(s, b"x", 1, SNDMORE)
    lib.zmq_send(s, b"world", 5, 0)
    for n in (253, 254, 300, 100000):
        lib.zmq_send(s, b"y" * n, n, 0)
    print("PUSH -> 1.0 PULL frames:", [show(read_frame(c)) for _ in range(6)])
    c.close()


def probe_lib_routing_id():
    s, port = lib_socket(DEALER, routing_id=b"lib-dealer")
    c, ident = peer(port, identity=b"old-router")
    print("DEALER(routing id) -> 1.0 ROUTER: library's identity frame:", ident)
    lib.zmq_send(s, b"ping", 4, 0)
    print("DEALER(routing id) -> 1.0 ROUTER frame:", show(read_frame(c)))
    c.close()


def probe_router_identity():
    s, port = lib_socket(ROUTER)
    c, ident = peer(port, identity=b"old-dealer")
    print("1.0 DEALER -> ROUTER: library's identity frame:", ident)
    c.sendall(frame(b"hi"))
    print("1.0 DEALER -> ROUTER:", recv_msg(s))
    lib.zmq_send(s, b"old-dealer", 10, SNDMORE)
    lib.zmq_send(s, b"back", 4, 0)
    print("ROUTER -> 1.0 DEALER by its identity:", show(read_frame(c)))
    c.close()


def probe_pub_to_old_sub():
    # A 2.x SUB never sends subscriptions: libzmq's PUB sends it everything.
    s, port = lib_socket(PUB)
    c, ident = peer(port)
    print("PUB -> 1.0 SUB: library's identity frame:", ident)
    c.settimeout(0.05)
    got = b""
    for _ in range(60):
        lib.zmq_send(s, b"abc", 3, 0)
        try:
            got += c.recv(100)
        except socket.timeout:
            pass
        if got:
            break
    print("PUB -> 1.0 SUB first frame:", got[:5].hex() or "<nothing>")
    c.close()


def probe_xpub_sees_subscription():
    s, port = lib_socket(XPUB)
    c, _ = peer(port)
    print("1.0 SUB -> XPUB: what XPUB reads:", recv_msg(s))
    c.close()


def probe_lib_sub_to_old_pub():
    s, port = lib_socket(SUB)
    setbytes(s, SUBSCRIBE, b"ab")
    c, ident = peer(port)
    print("1.0 PUB -> SUB: library's identity frame:", ident)
    # The SUB attaches the new pipe (and sends its subscriptions) only when
    # the application thread processes commands: ZMQ_EVENTS does that.
    c.settimeout(0.05)
    sub = b""
    for _ in range(40):
        getint(s, EVENTS)
        try:
            sub += c.recv(100)
        except socket.timeout:
            pass
        if len(sub) >= 5:
            break
    print("1.0 PUB -> SUB: what the SUB sends:", sub.hex() or "<nothing in 2 s>")
    c.sendall(frame(b"xyz") + frame(b"abc"))
    print("1.0 PUB -> SUB:", recv_msg(s))
    c.close()


def probe_lib_req_connects():
    # The library connects to a 2.x REP that listens.
    lsn = socket.create_server(("127.0.0.1", 0))
    lsn.settimeout(3)
    s, _ = lib_socket(REQ, bind=False)
    lib.zmq_connect(s, f"tcp://127.0.0.1:{lsn.getsockname()[1]}".encode())
    c, _ = lsn.accept()
    c.settimeout(3)
    c.sendall(frame(b""))
    print("REQ -> 1.0 REP: library's identity frame:", show(read_frame(c)))
    lib.zmq_send(s, b"ping", 4, 0)
    print("REQ -> 1.0 REP request:", [show(read_frame(c)) for _ in range(2)])
    c.sendall(frame(b"", more=True) + frame(b"pong"))
    print("REQ -> 1.0 REP reply:", recv_msg(s))
    c.close()
    lsn.close()


def probe_versioned_1_0():
    # Revision 0 after a signature: a 12-octet greeting, then 1.0 framing.
    s, port = lib_socket(PULL)
    c = socket.create_connection(("127.0.0.1", port), timeout=3)
    c.sendall(bytes([0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F]))
    sig = read_exact(c, 10)
    c.sendall(bytes([0x00, PUSH]))
    rest = read_exact(c, 2)
    shown = "sig-ok" if sig[0] == 0xFF and sig[9] == 0x7F else sig.hex()
    print("versioned 1.0 PUSH -> PULL greeting:", shown, rest.hex(), "identity frame:", show(read_frame(c)))
    c.sendall(frame(b"") + frame(b"v0"))
    print("versioned 1.0 PUSH -> PULL:", recv_msg(s))
    c.close()


def probe_zap_refuses():
    s, port = lib_socket(PULL, zap_domain=b"global")
    c = socket.create_connection(("127.0.0.1", port), timeout=3)
    c.sendall(frame(b"") + frame(b"sneaky"))
    print("ZAP domain set: 1.0 peer dropped:", dropped(c))
    print("ZAP domain set: nothing delivered:", recv_msg_quick(s))
    c.close()


def recv_msg_quick(s):
    setint(s, RCVTIMEO, 200)
    m = recv_msg(s)
    setint(s, RCVTIMEO, 3000)
    return m


def probe_garbage():
    s, port = lib_socket(PULL, maxmsgsize=100)
    cases = [
        ("size 0", bytes([0x00, 0x00])),
        ("over MAXMSGSIZE", frame(b"x" * 200)),
        ("long size 2^64-1", b"\xff" * 9),
        ("long size 2^63", b"\xff\x80" + bytes(7)),
    ]
    for name, bad in cases:
        c, _ = peer(port)
        c.sendall(frame(b"ok") + bad)
        first = recv_msg(s)
        print(f"garbage ({name}): message before it: {first}, peer dropped: {dropped(c)}")
        c.close()
        print(f"garbage ({name}): nothing else delivered:", recv_msg_quick(s))
    c2, _ = peer(port)
    c2.sendall(frame(b"after"))
    print("garbage: the socket still takes another 1.0 peer:", recv_msg(s))
    c2.close()


def probe_monitor_events():
    """Which monitor events a 1.0 peer's connection gives (libzmq 4.3 has no
    mechanism to complete for it, so no HANDSHAKE_SUCCEEDED)."""
    s, port = lib_socket(PULL)
    lib.zmq_socket_monitor(s, b"inproc://mon10", 0xFFFF)
    mon, _ = lib_socket(PAIR, bind=False)
    lib.zmq_connect(mon, b"inproc://mon10")
    c, _ = peer(port)
    c.sendall(frame(b"hello"))
    got = recv_msg(s)
    setint(mon, RCVTIMEO, 300)
    print("1.0 peer's monitor events:", got, monitor_events(mon))
    c.close()


PROBES = (
    probe_push_to_lib_pull,
    probe_lib_push_to_pull,
    probe_lib_routing_id,
    probe_router_identity,
    probe_pub_to_old_sub,
    probe_xpub_sees_subscription,
    probe_lib_sub_to_old_pub,
    probe_lib_req_connects,
    probe_versioned_1_0,
    probe_zap_refuses,
    probe_garbage,
    probe_monitor_events,
)
run(PROBES)
