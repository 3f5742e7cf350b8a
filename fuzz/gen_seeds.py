#!/usr/bin/env python3
"""Regenerates the seed corpus (seed-* files). Run from fuzz/."""
import os, struct

def frame(body, more=False, command=False):
    flags = (1 if more else 0) | (4 if command else 0)
    if len(body) <= 255:
        return bytes([flags, len(body)]) + body
    return bytes([flags | 2]) + struct.pack(">Q", len(body)) + body

def cmd(name, data=b""):
    return frame(bytes([len(name)]) + name + data, command=True)

def props(*kv):
    return b"".join(bytes([len(k)]) + k + struct.pack(">I", len(v)) + v for k, v in kv)

def ready(*kv):
    return cmd(b"READY", props(*kv))

def greeting(major=3, minor=1, mech=b"NULL"):
    return b"\xff" + struct.pack(">Q", 1) + b"\x7f" + bytes([major, minor]) + mech.ljust(20, b"\0") + b"\0" * 32

def write(kind, name, data):
    with open(os.path.join("corpus", kind, "seed-" + name), "wb") as f:
        f.write(data)

# decoder: octet 0 sets max size (x16; 0xFF = 4080), the rest is a frame stream.
M = b"\xff"
write("decoder", "short-message", M + frame(b"hello"))
write("decoder", "multipart-with-empty", M + frame(b"id", True) + frame(b"", True) + frame(b"body"))
write("decoder", "long-256", M + frame(bytes(range(256))))
write("decoder", "ready-dealer", M + ready((b"Socket-Type", b"DEALER"), (b"Identity", b"")))
write("decoder", "subscribe-cancel", M + cmd(b"SUBSCRIBE", b"topic") + cmd(b"CANCEL", b"topic"))
write("decoder", "ping-pong", M + cmd(b"PING", b"\x00\x64ctx") + cmd(b"PONG", b"ctx"))
write("decoder", "error", M + cmd(b"ERROR", b"\x03400"))
write("decoder", "unknown-join", M + cmd(b"JOIN", b"group"))
write("decoder", "reserved-flags", M + b"\x08\x00")
write("decoder", "command-with-more", M + b"\x05\x00")
write("decoder", "long-top-bit", M + b"\x02\x80\x00\x00\x00\x00\x00\x00\x00")
write("decoder", "truncated-ready-metadata", M + cmd(b"READY", b"\x0bSocket-Type\x00\x00"))
write("decoder", "over-max-size", b"\x01" + frame(b"x" * 17))
write("decoder", "ping-short", M + cmd(b"PING", b"\x01"))

# handshake: octet 0 = our socket type (ZMQ_* number), octet 1 = chunk size
# (0 = all at once), the rest is what the peer sends.
PAIR, PUB, SUB, REQ, REP, DEALER, ROUTER, PULL, PUSH, XPUB, XSUB = range(11)
def hs(name, ours, chunk, data):
    write("handshake", name, bytes([ours, chunk]) + data)

st = lambda t: (b"Socket-Type", t)
hs("dealer-router", DEALER, 0, greeting() + ready(st(b"ROUTER"), (b"Identity", b"")))
hs("router-dealer-identity-bytewise", ROUTER, 1, greeting() + ready(st(b"DEALER"), (b"Identity", b"peer-1")))
hs("req-rep-chunk3", REQ, 3, greeting() + ready(st(b"REP")))
hs("sub-pub-zmtp30", SUB, 0, greeting(3, 0) + ready(st(b"PUB")))
hs("xsub-xpub-then-traffic", XSUB, 7, greeting() + ready(st(b"XPUB")) + cmd(b"SUBSCRIBE", b"a") + frame(b"msg"))
hs("push-pull", PUSH, 0, greeting() + ready(st(b"PULL"), (b"X-App", b"v")))
hs("pair-pair-major4", PAIR, 0, greeting(4, 0) + ready(st(b"PAIR")))
hs("pub-push-incompatible", PUB, 0, greeting() + ready(st(b"PUSH")))
hs("mechanism-plain", DEALER, 0, greeting(mech=b"PLAIN"))
hs("zmtp20-peer", DEALER, 0, b"\xff" + bytes(8) + b"\x7f\x01\x05\x00\x00")
hs("zmtp10-peer", DEALER, 0, b"\x01\x00\x06\x00hello")
hs("peer-error", DEALER, 0, greeting() + cmd(b"ERROR", b"\x03400"))
hs("message-before-ready", DEALER, 0, greeting() + frame(b"early"))
hs("truncated-greeting", DEALER, 0, greeting()[:40])
hs("unknown-socket-type", DEALER, 0, greeting() + ready(st(b"CLIENT")))
hs("missing-socket-type", DEALER, 0, greeting() + ready((b"Identity", b"")))
