"""What a DGRAM (type 18) does over tcp://, ipc:// and inproc://, on any
libzmq.so.5 loaded through ctypes (no pyzmq: Debian's libzmq has no Python
binding here, and oxmq's C library is checked the same way).

    stream_transports.py LIB libzmq [aborts|skips]
        libzmq 4.3.x's behaviour, asserted; then what an empty frame to send
        over tcp does: `aborts` (the default: libzmq's assertion kills the
        process before any byte of that message is written) or `skips`
        (oxmq's choice: an empty frame adds no bytes, the other frame's bytes
        go out, the connection and the process live on)
    stream_transports.py LIB empty-child PORT A B   (internal: one such send)

libzmq accepts these endpoints and runs tcp/ipc through its raw (STREAM)
engine without STREAM's routing ids: each side first receives one empty
frame (the raw "connected" notice), a send must be [a][b] and both frames'
bytes go onto the wire back to back with no framing, every read from the
wire arrives as one single-frame message (no address frame, so a reply
cannot be addressed), a second connection is closed at once, and an empty
frame to send aborts the whole process (stream_engine_base.cpp, `n > 0`),
whichever of the two frames is empty. Over inproc the two frames travel as
they are, empty ones included. A connecting DGRAM has its pipe from
zmq_connect on: a message sent before the connection exists goes out once
it does, and a dropped connection is announced and reconnected."""

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
    check(ep + " three frames", send(b, [b"addr", b"body", b"more"]), EINVAL)
    # The refused frame changed nothing: a last frame completes the message.
    check(ep + " [addr][body]", send(b, [b"body"]), 0)
    time.sleep(0.2)
    # tcp/ipc: the bytes of both frames, unframed, as one message.
    check(ep + " received", recv(a), [b"addrbody"] if raw else [b"addr", b"body"])
    check(ep + " nothing more", nothing(a), True)
    check(ep + " the other way", send(a, [b"x", b"y"]), 0)
    check(ep + " received back", recv(b), [b"xy"] if raw else [b"x", b"y"])
    if not raw:
        check(ep + " empty frames", send(b, [b"", b""]), 0)
        check(ep + " pass as they are", recv(a), [b"", b""])
    LIB.zmq_close(b)
    if raw:
        check(ep + " disconnect notice", recv(a), [b""])
    check(ep + " then nothing", nothing(a), True)
    LIB.zmq_close(a)


def raw_connect(ep):
    """A plain (non-ZMQ) client of a tcp:// or ipc:// endpoint."""
    if ep.startswith("tcp://"):
        return socket.create_connection(("127.0.0.1", int(ep.rsplit(":", 1)[1])), timeout=2)
    r = socket.socket(socket.AF_UNIX)
    r.settimeout(2)
    r.connect(ep[len("ipc://"):])
    return r


def libzmq_raw_peer(ep):
    """A plain stream peer: what libzmq writes and hands over."""
    a = sock()
    check(ep + " bind", call(LIB.zmq_bind, a, ep), 0)
    r = raw_connect(ep)
    check(ep + " notice", recv(a), [b""])
    r.sendall(b"\x01\x00\x00\x00raw, no ZMTP")
    check(ep + " raw bytes in", recv(a), [b"\x01\x00\x00\x00raw, no ZMTP"])
    check(ep + " send", send(a, [b"127.0.0.1:9", b"|x"]), 0)
    got = b""
    while len(got) < 13:
        got += r.recv(100)
    check(ep + " bytes out", got, b"127.0.0.1:9|x")
    r2 = raw_connect(ep)
    # The socket takes the new pipe (and closes it) when it next runs its
    # commands, here in zmq_recv: it announces nothing.
    check(ep + " a second connection announces nothing", nothing(a), True)
    check(ep + " and is closed", r2.recv(100), b"")
    r2.close()
    r.close()
    check(ep + " disconnect notice", recv(a), [b""])
    check(ep + " and nothing from the second", nothing(a), True)
    LIB.zmq_close(a)


def libzmq_connects_to_raw_server(ep):
    """A connecting DGRAM and a plain listener: queued before the
    connection, announced, and reconnected after the server hangs up."""
    port = int(ep.rsplit(":", 1)[1])
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", port))
    srv.listen(4)
    srv.settimeout(3)
    b = sock()
    check("connect", call(LIB.zmq_connect, b, ep), 0)
    check("send before the connection", send(b, [b"early", b"!"]), 0)
    c, _ = srv.accept()
    c.settimeout(3)
    got = b""
    while len(got) < 6:
        got += c.recv(100)
    check("queued bytes out", got, b"early!")
    check("connect notice", recv(b), [b""])
    c.sendall(b"hello")
    check("bytes in", recv(b), [b"hello"])
    c.close()
    check("disconnect notice", recv(b), [b""])
    c, _ = srv.accept()
    check("reconnect notice", recv(b), [b""])
    check("send after the reconnect", send(b, [b"again", b"."]), 0)
    c.settimeout(3)
    got = b""
    while len(got) < 6:
        got += c.recv(100)
    check("bytes out after the reconnect", got, b"again.")
    c.close()
    srv.close()
    LIB.zmq_close(b)


def empty_child(port, frames):
    """(Child) a bound DGRAM whose peer is the parent: send one message."""
    a = sock()
    assert LIB.zmq_bind(a, ("tcp://127.0.0.1:%d" % port).encode()) == 0
    print("notice %r" % recv(a), flush=True)
    print("send %r: %d" % (frames, send(a, frames)), flush=True)
    time.sleep(1)
    print("alive", flush=True)


def empty_frame_aborts(tmp, frames):
    """libzmq: the child aborts and not a byte of the message reaches the peer."""
    port = int(endpoints(tmp)[0].rsplit(":", 1)[1])
    child = subprocess.Popen([sys.executable, __file__, sys.argv[1], "empty-child", str(port)] + [f.decode() for f in frames],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    r = None
    for _ in range(100):
        try:
            r = socket.create_connection(("127.0.0.1", port), timeout=5)
            break
        except OSError:
            time.sleep(0.05)
    assert r is not None, "the child never bound"
    got = b""
    while True:
        chunk = r.recv(100)
        if not chunk:
            break
        got += chunk
    out, err = child.communicate(timeout=20)
    what = "empty frame in %r over tcp" % frames
    check(what + ": bytes the peer got", got, b"")
    check(what + ": child's exit, stderr", (child.returncode, err.strip().rsplit(":", 1)[0] + ":"),
          (-6, "Assertion failed: n > 0 (src/stream_engine_base.cpp:"))


def empty_frame_skipped(ep):
    """oxmq: an empty frame adds no bytes; the rest goes out, all lives on."""
    a = sock()
    check(ep + " bind", call(LIB.zmq_bind, a, ep), 0)
    r = raw_connect(ep)
    check(ep + " notice", recv(a), [b""])
    for frames in ([b"to", b""], [b"", b"x"], [b"", b""], [b"end", b"!"]):
        check("%s send %r" % (ep, frames), send(a, frames), 0)
    got = b""
    while len(got) < 7:
        got += r.recv(100)
    check(ep + " bytes out", got, b"toxend!")
    r.sendall(b"still here")
    check(ep + " the connection lives on", recv(a), [b"still here"])
    r.close()
    check(ep + " disconnect notice", recv(a), [b""])
    LIB.zmq_close(a)


def main():
    mode = sys.argv[2]
    if mode == "empty-child":
        empty_child(int(sys.argv[3]), [f.encode() for f in sys.argv[4:6]])
        return
    assert mode == "libzmq", "unknown mode " + mode
    empty = sys.argv[3] if len(sys.argv) > 3 else "aborts"
    with tempfile.TemporaryDirectory() as tmp:
        for ep in endpoints(tmp):
            libzmq_pair(ep)
        for ep in endpoints(tmp)[:2]:
            libzmq_raw_peer(ep)
        libzmq_connects_to_raw_server(endpoints(tmp)[0])
        if empty == "aborts":
            for frames in ([b"to", b""], [b"", b"x"]):
                empty_frame_aborts(tmp, frames)
        elif empty == "skips":
            for ep in endpoints(tmp)[:2]:
                empty_frame_skipped(ep)
        else:
            raise SystemExit("unknown empty-frame mode " + empty)
    LIB.zmq_ctx_term(CTX)
    print("ok: tcp/ipc are raw byte streams (empty connect/disconnect notices, "
          "[a][b] sent unframed, reads arrive as single frames, one peer, "
          "queued before connect and reconnected), inproc passes [a][b]; an empty "
          "frame over tcp %s" % ("aborts the process" if empty == "aborts" else
                                 "adds no bytes (the rest is written, nothing aborts)"))


main()
