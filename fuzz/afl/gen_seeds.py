#!/usr/bin/env python3
"""Seeds for the AFL++ targets that fuzz/gen_seeds.py does not cover
(greeting, mechanism, capi_msg). Run from fuzz/. afl-cmin later replaces
each corpus with the minimised set the campaign found."""
import os, struct

def frame(body, more=False, command=False):
    flags = (1 if more else 0) | (4 if command else 0)
    if len(body) <= 255:
        return bytes([flags, len(body)]) + body
    return bytes([flags | 2]) + struct.pack(">Q", len(body)) + body

def cmd(name, data=b""):
    return frame(bytes([len(name)]) + name + data, command=True)

def ready(sock):
    k, v = b"Socket-Type", sock
    return cmd(b"READY", bytes([len(k)]) + k + struct.pack(">I", len(v)) + v)

def greeting(major=3, minor=1, mech=b"NULL", server=0):
    return b"\xff" + struct.pack(">Q", 1) + b"\x7f" + bytes([major, minor]) + mech.ljust(20, b"\0") + bytes([server]) + b"\0" * 31

def write(kind, name, data):
    os.makedirs(os.path.join("corpus", kind), exist_ok=True)
    with open(os.path.join("corpus", kind, "seed-" + name), "wb") as f:
        f.write(data)

# greeting: octet 0 = our socket type index, then the peer's bytes.
DEALER, ROUTER = 9, 10  # indices into SocketType::ALL are only a hint; any byte works
write("greeting", "zmtp31-null-ready", b"\x00" + greeting() + ready(b"PAIR"))
write("greeting", "zmtp30-null-ready", b"\x00" + greeting(3, 0) + ready(b"PAIR"))
write("greeting", "zmtp20", b"\x00" + b"\xff" + b"\0" * 8 + b"\x7f\x01\x05\x00\x00")
write("greeting", "zmtp10", b"\x00" + b"\x05\x00hello")
write("greeting", "major4", b"\x00" + greeting(4, 0))
write("greeting", "plain-server", b"\x00" + greeting(3, 1, b"PLAIN", 1))
write("greeting", "truncated", b"\x00" + greeting()[:33])

# mechanism: octet 0 = mode (bits 0-1 mech, bit 2 we serve, bits 3-4 ZAP,
# bit 5 honest peer), octet 1 = our socket type; then raw bytes or patches.
for mech in range(3):
    for serve in (0, 4):
        for zap in (0, 8, 16):
            write("mechanism", f"honest-m{mech}-s{serve}-z{zap}", bytes([mech | serve | zap | 0x20, 3]))
        write("mechanism", f"honest-m{mech}-s{serve}-flip", bytes([mech | serve | 0x20, 3, 0, 70, 1, 0, 120, 0x80]))
        write("mechanism", f"honest-m{mech}-s{serve}-cut", bytes([mech | serve | 0x20, 3, 0, 90, 0]))
write("mechanism", "raw-null-ready", bytes([0, 3]) + greeting() + ready(b"PAIR"))
write("mechanism", "raw-plain-hello", bytes([5, 3]) + greeting(3, 1, b"PLAIN") + cmd(b"HELLO", b"\x05admin\x06secret"))
write("mechanism", "raw-curve-hello", bytes([6, 3]) + greeting(3, 1, b"CURVE") + cmd(b"HELLO", b"\x01\x00" + b"\0" * 72 + b"\1" * 32 + b"\2" * 8 + b"\3" * 80))

# capi_msg: op = low nibble op, bits 4-5 slot a, bits 6-7 slot b.
write("capi_msg", "init-close", bytes([0x00, 0x0F, 0x03, 0x0F]))
write("capi_msg", "size-write-copy-move", bytes([0x01, 2, 10, 0x06, 0xAB, 0x44, 0x5F | 0x80, 0x0F, 0x1F, 0x2F]))
write("capi_msg", "lent-copy-close", bytes([0x02, 5, 1, 2, 3, 4, 5, 0x44, 0x03, 0x1F, 0x13]))
write("capi_msg", "double-close", bytes([0x00, 0x03, 0x03, 0x09]))
write("capi_msg", "props", bytes([0x00, 0x07, 9, 0x07, 10, 0x08, 4, ord('U'), ord('s'), ord('e'), ord('r')]))
