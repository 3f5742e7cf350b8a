"""The libzmq.so.5 that tests/compat/behaviour's byte-level peers (zmtp10_peer.py,
zmtp20_peer.py) drive, loaded with ctypes from the path in sys.argv[1], and
the helpers both use. Every function gets its argtypes here, once: a pointer
passed without them is truncated to an int (that made the 2.0 peer crash).
"""
import ctypes
import struct
import sys

PAIR, PUB, SUB, REQ, DEALER, ROUTER, PULL, PUSH, XPUB = 0, 1, 2, 3, 5, 6, 7, 8, 9
RCVTIMEO, SNDTIMEO, LINGER, LAST_ENDPOINT, RCVMORE, MAXMSGSIZE = 27, 28, 17, 32, 13, 22
ROUTING_ID, SUBSCRIBE, ZAP_DOMAIN, EVENTS = 5, 6, 55, 15
SNDMORE = 2

MONITOR_EVENTS = {
    1: "CONNECTED",
    8: "LISTENING",
    32: "ACCEPTED",
    512: "DISCONNECTED",
    0x1000: "HANDSHAKE_SUCCEEDED",
    0x0800: "HANDSHAKE_FAILED_NO_DETAIL",
    0x2000: "HANDSHAKE_FAILED_PROTOCOL",
}

_p, _int, _size, _str = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_char_p

lib = ctypes.CDLL(sys.argv[1])
lib.zmq_ctx_new.restype = _p
lib.zmq_ctx_new.argtypes = []
lib.zmq_ctx_term.argtypes = [_p]
lib.zmq_socket.restype = _p
lib.zmq_socket.argtypes = [_p, _int]
lib.zmq_close.argtypes = [_p]
lib.zmq_bind.argtypes = [_p, _str]
lib.zmq_connect.argtypes = [_p, _str]
lib.zmq_send.argtypes = [_p, _str, _size, _int]
lib.zmq_recv.argtypes = [_p, _str, _size, _int]
lib.zmq_setsockopt.argtypes = [_p, _int, _p, _size]
lib.zmq_getsockopt.argtypes = [_p, _int, _p, ctypes.POINTER(_size)]
lib.zmq_socket_monitor.argtypes = [_p, _str, _int]

ctx = lib.zmq_ctx_new()

# Every library socket a probe opened, closed after it even if it failed
# (a socket left open would hang zmq_ctx_term).
OPEN = []


def setint(s, opt, v):
    x = ctypes.c_int(v)
    lib.zmq_setsockopt(s, opt, ctypes.byref(x), 4)


def setbytes(s, opt, v):
    lib.zmq_setsockopt(s, opt, v, len(v))


def getint(s, opt):
    x, n = ctypes.c_int(0), ctypes.c_size_t(4)
    lib.zmq_getsockopt(s, opt, ctypes.byref(x), ctypes.byref(n))
    return x.value


def lib_socket(kind, bind=True, maxmsgsize=None, routing_id=None, zap_domain=None):
    """A library socket with 3 s timeouts and no linger, bound to an
    ephemeral tcp port on 127.0.0.1 unless bind is false: (socket, port)."""
    s = lib.zmq_socket(ctx, kind)
    OPEN.append(s)
    # Before bind: a listener's connections take the options of then.
    if maxmsgsize is not None:
        x = ctypes.c_int64(maxmsgsize)
        lib.zmq_setsockopt(s, MAXMSGSIZE, ctypes.byref(x), 8)
    if routing_id is not None:
        setbytes(s, ROUTING_ID, routing_id)
    if zap_domain is not None:
        setbytes(s, ZAP_DOMAIN, zap_domain)
    setint(s, RCVTIMEO, 3000)
    setint(s, SNDTIMEO, 3000)
    setint(s, LINGER, 0)
    if not bind:
        return s, None
    lib.zmq_bind(s, b"tcp://127.0.0.1:*")
    buf, n = ctypes.create_string_buffer(256), ctypes.c_size_t(256)
    lib.zmq_getsockopt(s, LAST_ENDPOINT, buf, ctypes.byref(n))
    return s, int(buf.value.decode().rsplit(":", 1)[1])


RECV_MAX = 1 << 17


def describe(body):
    """Short bodies as text; long ones by length and content, so a body
    shifted or cut by a framing error shows."""
    if len(body) < 40:
        return body.decode("latin-1")
    uniform = body.count(body[:1]) == len(body)
    return f"<{len(body)} octets of {body[:1].decode('latin-1')}>" if uniform else f"<{len(body)} octets, mixed>"


def recv_msg(s):
    """Every frame of the next message, described; "<none>" after the frames
    when a receive fails (timeout)."""
    parts = []
    while True:
        buf = ctypes.create_string_buffer(RECV_MAX)
        n = lib.zmq_recv(s, buf, RECV_MAX, 0)
        if n < 0:
            return parts + ["<none>"]
        parts.append(describe(buf.raw[: min(n, RECV_MAX)]) if n <= RECV_MAX else f"<{n} octets, truncated>")
        if not getint(s, RCVMORE):
            return parts


def read_exact(c, n):
    """n octets from a plain socket, or fewer at EOF."""
    data = b""
    while len(data) < n:
        chunk = c.recv(n - len(data))
        if not chunk:
            break
        data += chunk
    return data


def monitor_events(mon):
    """The names of the events a monitor PAIR receives until it times out."""
    seen = []
    while True:
        buf = ctypes.create_string_buffer(64)
        n = lib.zmq_recv(mon, buf, 64, 0)
        if n < 0:
            return seen
        event = struct.unpack("<H", buf.raw[:2])[0]
        seen.append(MONITOR_EVENTS.get(event, hex(event)))
        lib.zmq_recv(mon, buf, 64, 0)  # the endpoint frame


def run(probes):
    """Each probe in turn (a failing one prints, the others still run), its
    sockets closed after it; then the context is terminated. Exits 1 when no
    probe ran to its end: a script that answers nothing on every library
    would otherwise read as "same answers" (mk/compat/behaviour.mk checks the status)."""
    raised = 0
    for p in probes:
        try:
            p()
        except Exception as e:
            raised += 1
            print(f"{p.__name__}: {type(e).__name__} {e}")
        sys.stdout.flush()
        while OPEN:
            lib.zmq_close(OPEN.pop())
    lib.zmq_ctx_term(ctx)
    print(f"{len(probes)} probes, {raised} raised", file=sys.stderr)
    if raised == len(probes):
        sys.exit(1)
