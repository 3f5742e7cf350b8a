#!/usr/bin/env python3
"""A ZMTP/2.0 peer (RFC 15) as libzmq 3.x speaks it, on raw TCP, against a
libzmq.so.5 loaded with ctypes (issue 13: older peers).

    zmtp20_peer.py LIBRARY     one "name: answer" line per probe

mk/compat/behaviour.mk runs it on oxmq's libzmq.so.5 and on pyzmq's bundled libzmq
4.3.5: the two outputs must be equal. Each probe drives one library socket
and plays the other side byte by byte: greeting (signature, revision 01,
socket type), identity frame, then 2.0 frames (flags: MORE 1, LONG 2).
"""
import socket

from libzmq_ctypes import (
    PAIR, PUB, PULL, PUSH, RCVTIMEO, ROUTER, SUB,
    lib, lib_socket, monitor_events, read_exact, recv_msg, run, setint,
)


def frame(body, more=False):
    return bytes([1 if more else 0, len(body)]) + body


def peer(port, socket_type, identity=b""):
    """Connects and does the 2.0 handshake; returns the socket and what the
    library sent before traffic (its greeting and identity frame)."""
    c = socket.create_connection(("127.0.0.1", port), timeout=3)
    # libzmq 3.x's signature: 0xFF, 8-octet (identity size + 1), 0x7F.
    c.sendall(bytes([0xFF, 0, 0, 0, 0, 0, 0, 0, len(identity) + 1, 0x7F]))
    sig = read_exact(c, 10)
    c.sendall(bytes([0x01, socket_type]))
    rest = read_exact(c, 2)
    # The library's identity frame: flags, length, body.
    head = read_exact(c, 2)
    body = read_exact(c, head[1]) if len(head) == 2 else b""
    c.sendall(frame(identity))
    greeting = sig + rest
    shown = "sig-ok" if greeting[0] == 0xFF and greeting[9] == 0x7F else greeting[:10].hex()
    return c, f"{shown} major {greeting[10]} type {greeting[11]} identity-frame {(head + body).hex()}"


def probe_push_to_lib_pull():
    s, port = lib_socket(PULL)
    c, greeting = peer(port, PUSH)
    print("2.0 PUSH -> PULL greeting:", greeting)
    c.sendall(frame(b"hello") + frame(b"a", more=True) + frame(b"b"))
    print("2.0 PUSH -> PULL:", recv_msg(s), recv_msg(s))
    c.close()


def probe_lib_push_to_pull():
    s, port = lib_socket(PUSH)
    c, greeting = peer(port, PULL)
    print("PUSH -> 2.0 PULL greeting:", greeting)
    lib.zmq_send(s, b"world", 5, 0)
    head = read_exact(c, 2)
    print("PUSH -> 2.0 PULL frame:", (head + read_exact(c, head[1] if len(head) == 2 else 0)).hex())
    c.close()


def probe_pull_routing_id():
    # The 2.0 identity frame carries ZMQ_ROUTING_ID whatever the socket type.
    s, port = lib_socket(PULL, routing_id=b"pull-id")
    c, greeting = peer(port, PUSH)
    print("PULL(routing id) -> 2.0 PUSH greeting:", greeting)
    c.close()


def probe_router_identity():
    s, port = lib_socket(ROUTER)
    c, greeting = peer(port, 5, identity=b"old-dealer")
    print("2.0 DEALER -> ROUTER greeting:", greeting)
    c.sendall(frame(b"hi"))
    print("2.0 DEALER -> ROUTER:", recv_msg(s))
    c.close()


def probe_pub_subscription():
    s, port = lib_socket(PUB)
    c, greeting = peer(port, SUB)
    print("PUB -> 2.0 SUB greeting:", greeting)
    # A 2.0 subscriber subscribes with a message: 0x01 then the topic.
    c.sendall(frame(b"\x01ab"))
    c.settimeout(0.05)
    got = b""
    for _ in range(60):
        lib.zmq_send(s, b"xyz", 3, 0)
        lib.zmq_send(s, b"abc", 3, 0)
        try:
            got += c.recv(100)
        except socket.timeout:
            pass
        if got:
            break
    print("PUB -> 2.0 SUB first frames:", got[:5].hex())
    c.close()


def probe_garbage():
    s, port = lib_socket(PULL, maxmsgsize=100)
    c, _ = peer(port, PUSH)
    c.sendall(frame(b"ok") + bytes([0x00, 200]) + b"x" * 200)
    print("garbage: message before it:", recv_msg(s))
    c.settimeout(3)
    try:
        dropped = c.recv(10) == b""
    except (socket.timeout, ConnectionResetError):
        dropped = False
    print("garbage: oversized 2.0 frame drops the peer:", dropped)
    c2, _ = peer(port, PUSH)
    c2.sendall(frame(b"after"))
    print("garbage: the socket still takes another 2.0 peer:", recv_msg(s))
    c.close()
    c2.close()


def probe_monitor_events():
    """Which monitor events a 2.0 peer's connection gives (libzmq 4.3 has no
    mechanism to complete for it, so no HANDSHAKE_SUCCEEDED)."""
    s, port = lib_socket(PULL)
    lib.zmq_socket_monitor(s, b"inproc://mon20", 0xFFFF)
    mon, _ = lib_socket(PAIR, bind=False)
    setint(mon, RCVTIMEO, 300)
    lib.zmq_connect(mon, b"inproc://mon20")
    c, _ = peer(port, PUSH)
    c.sendall(frame(b"hello"))
    got = recv_msg(s)
    print("2.0 peer's monitor events:", got, monitor_events(mon))
    c.close()


run(
    (
        probe_push_to_lib_pull,
        probe_lib_push_to_pull,
        probe_pull_routing_id,
        probe_router_identity,
        probe_pub_subscription,
        probe_garbage,
        probe_monitor_events,
    )
)
