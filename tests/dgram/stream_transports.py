"""What a DGRAM (type 18) does over tcp://, ipc:// and inproc://, on any
libzmq.so.5 loaded through ctypes (no pyzmq: Debian's libzmq has no Python
binding here, and oxmq's C library is checked the same way).

    stream_transports.py LIB libzmq   -> libzmq 4.3.x's behaviour, asserted
    stream_transports.py LIB refuses  -> every such bind/connect fails with
                                         ENOCOMPATPROTO (oxmq's choice)
    stream_transports.py LIB abort    -> (child) an empty frame over tcp

libzmq accepts these endpoints and runs tcp/ipc through its raw (STREAM)
engine without STREAM's routing ids: each side first receives one empty
frame (the raw "connected" notice), a send must be [a][b] and both frames'
bytes go onto the wire back to back with no framing, every read from the
wire arrives as one single-frame message (no address frame, so a reply
cannot be addressed), a second connection is closed at once, and an empty
frame to send aborts the whole process (stream_engine_base.cpp:338,
`n > 0`). Over inproc the two frames travel as they are."""

import ctypes
import os
import socket
import subprocess
import sys
import tempfile
import time

DGRAM = 18
SNDMORE, DONTWAIT = 2, 1
RCVMORE, LINGER, RCVTIMEO, SNDTIMEO = 13, 17, 27, 28
EINVAL, EAGAIN = 22, 11
ENOCOMPATPROTO = 156384712 + 52

LIB = ctypes.CDLL(sys.argv[1], use_errno=True)
LIB.zmq_ctx_new.restype = ctypes.c_void_p
LIB.zmq_socket.restype = ctypes.c_void_p
LIB.zmq_socket.argtypes = [ctypes.c_void_p, ctypes.c_int]
for f in ("zmq_bind", "zmq_connect"):
    getattr(LIB, f).argtypes = [ctypes.c_void_p, ctypes.c_char_p]
LIB.zmq_send.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int]
LIB.zmq_recv.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int]
LIB.zmq_setsockopt.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]
LIB.zmq_getsockopt.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
LIB.zmq_close.argtypes = [ctypes.c_void_p]
LIB.zmq_ctx_term.argtypes = [ctypes.c_void_p]
LIB.zmq_errno.restype = ctypes.c_int

CTX = LIB.zmq_ctx_new()


def sock():
    s = LIB.zmq_socket(CTX, DGRAM)
    assert s, "DGRAM by number: errno %d" % LIB.zmq_errno()
    # Generous waits for what must come (the machine may be loaded).
    for opt, val in ((LINGER, 0), (RCVTIMEO, 3000), (SNDTIMEO, 3000)):
        setopt(s, opt, val)
    return s


def setopt(s, opt, val):
    v = ctypes.c_int(val)
    assert LIB.zmq_setsockopt(s, opt, ctypes.byref(v), 4) == 0


def nothing(s):
    """True when no message comes within half a second."""
    setopt(s, RCVTIMEO, 500)
    got = recv(s)
    setopt(s, RCVTIMEO, 3000)
    return got is None


def call(f, s, ep):
    return 0 if f(s, ep.encode()) == 0 else LIB.zmq_errno()


def send(s, frames):
    """0, or the errno of the first refused frame."""
    for i, f in enumerate(frames):
        flags = SNDMORE if i < len(frames) - 1 else 0
        if LIB.zmq_send(s, f, len(f), flags) < 0:
            return LIB.zmq_errno()
    return 0


def recv(s):
    """The frames of one message, or None on EAGAIN (RCVTIMEO)."""
    out = []
    while True:
        buf = ctypes.create_string_buffer(4096)
        n = LIB.zmq_recv(s, buf, 4096, 0)
        if n < 0:
            assert LIB.zmq_errno() == EAGAIN and not out, LIB.zmq_errno()
            return None
        out.append(buf.raw[:n])
        more, size = ctypes.c_int(0), ctypes.c_size_t(4)
        LIB.zmq_getsockopt(s, RCVMORE, ctypes.byref(more), ctypes.byref(size))
        if not more.value:
            return out


def free_port():
    with socket.socket() as t:
        t.bind(("127.0.0.1", 0))
        return t.getsockname()[1]


def endpoints(tmp):
    return ["tcp://127.0.0.1:%d" % free_port(), "ipc://%s/d.ipc" % tmp, "inproc://dgram-raw"]


def check(what, got, want):
    if got != want:
        print("FAIL %s: got %r, want %r" % (what, got, want))
        sys.exit(1)


def libzmq_pair(ep):
    """Two DGRAMs over one endpoint, as pyzmq's libzmq 4.3.5 and Debian's do."""
    a, b = sock(), sock()
    check(ep + " bind", call(LIB.zmq_bind, a, ep), 0)
    check(ep + " connect", call(LIB.zmq_connect, b, ep), 0)
    raw = not ep.startswith("inproc")
    time.sleep(0.2)
    if raw:
        check(ep + " bind side's connect notice", recv(a), [b""])
        check(ep + " connect side's connect notice", recv(b), [b""])
    check(ep + " one frame", send(b, [b"lonely"]), EINVAL)
    check(ep + " [addr][body]", send(b, [b"addr", b"body"]), 0)
    time.sleep(0.2)
    # tcp/ipc: the bytes of both frames, unframed, as one message.
    check(ep + " received", recv(a), [b"addrbody"] if raw else [b"addr", b"body"])
    check(ep + " nothing more", nothing(a), True)
    LIB.zmq_close(b)
    if raw:
        check(ep + " disconnect notice", recv(a), [b""])
    LIB.zmq_close(a)


def libzmq_raw_peer(ep):
    """A plain TCP peer: what libzmq writes and hands over."""
    port = int(ep.rsplit(":", 1)[1])
    a = sock()
    check("bind", call(LIB.zmq_bind, a, ep), 0)
    r = socket.create_connection(("127.0.0.1", port), timeout=2)
    check("notice", recv(a), [b""])
    r.sendall(b"\x01\x00\x00\x00raw, no ZMTP")
    check("raw bytes in", recv(a), [b"\x01\x00\x00\x00raw, no ZMTP"])
    check("send", send(a, [b"127.0.0.1:9", b"|x"]), 0)
    got = b""
    while len(got) < 13:
        got += r.recv(100)
    check("bytes out", got, b"127.0.0.1:9|x")
    r2 = socket.create_connection(("127.0.0.1", port), timeout=2)
    # The socket takes the new pipe (and closes it) when it next runs its
    # commands, here in zmq_recv: it announces nothing.
    check("a second connection announces nothing", nothing(a), True)
    check("and is closed", r2.recv(100), b"")
    r2.close()
    r.close()
    check("disconnect notice", recv(a), [b""])
    LIB.zmq_close(a)


def main():
    mode = sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        if mode == "abort":
            ep = endpoints(tmp)[0]
            a = sock()
            LIB.zmq_bind(a, ep.encode())
            r = socket.create_connection(("127.0.0.1", int(ep.rsplit(":", 1)[1])))
            recv(a)
            send(a, [b"to", b""])
            time.sleep(2)
            print("no abort")
            r.close()
            return
        if mode == "refuses":
            for ep in endpoints(tmp):
                for f in (LIB.zmq_bind, LIB.zmq_connect):
                    s = sock()
                    check("%s %s" % (f.__name__, ep), call(f, s, ep), ENOCOMPATPROTO)
                    LIB.zmq_close(s)
            print("ok: DGRAM refuses tcp, ipc and inproc with ENOCOMPATPROTO (bind and connect)")
            return
        for ep in endpoints(tmp):
            libzmq_pair(ep)
        libzmq_raw_peer(endpoints(tmp)[0])
        child = subprocess.run([sys.executable, __file__, sys.argv[1], "abort"],
                               capture_output=True, text=True, timeout=20)
        check("empty frame over tcp (child's exit, stderr)", (child.returncode, child.stderr.strip().rsplit(":", 1)[0] + ":"),
              (-6, "Assertion failed: n > 0 (src/stream_engine_base.cpp:"))
    LIB.zmq_ctx_term(CTX)
    print("ok: tcp/ipc are raw byte streams (empty connect/disconnect notices, "
          "[a][b] sent unframed, reads arrive as single frames, one peer), "
          "inproc passes [a][b], an empty frame aborts the process")


main()
