#!/usr/bin/env python3
"""SOCKS_PROXY against real libzmq: the same client program, through a SOCKS5
proxy written here (loopback only), on oxmq's libzmq.so.5 and on a real
libzmq (ctypes on each library file). Both must send the proxy the same bytes
(greeting, RFC 1929 credentials, CONNECT request) and get a message through;
with a wrong password oxmq must get nothing through (libzmq aborts there).

    socks.py OXMQ_LIB REFERENCE_LIB
"""
import ctypes
import socket
import sys
import threading
import time

import zmq  # the peer (pyzmq); the clients under test are the two library files

ZMQ_DEALER, ZMQ_PUSH = 5, 8
ZMQ_LINGER, ZMQ_SOCKS_PROXY, ZMQ_SOCKS_USERNAME, ZMQ_SOCKS_PASSWORD = 17, 68, 99, 100


def recv_exact(c, n):
    b = b""
    while len(b) < n:
        chunk = c.recv(n - len(b))
        if not chunk:
            raise EOFError
        b += chunk
    return b


def relay(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    finally:
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def proxy(creds, seen):
    """Serve one SOCKS5 client; record what it sent in `seen`."""
    lst = socket.socket()
    lst.bind(("127.0.0.1", 0))
    lst.listen(1)

    def run():
        c, _ = lst.accept()
        lst.close()
        try:
            head = recv_exact(c, 2)
            methods = recv_exact(c, head[1])
            seen.append(head + methods)
            want = 2 if creds else 0
            if want not in methods:
                c.sendall(b"\x05\xff")
                return
            c.sendall(bytes([5, want]))
            if creds:
                h = recv_exact(c, 2)
                user = recv_exact(c, h[1])
                pl = recv_exact(c, 1)
                pw = recv_exact(c, pl[0])
                seen.append(h + user + pl + pw)
                ok = (user, pw) == creds
                c.sendall(b"\x01" + (b"\x00" if ok else b"\x01"))
                if not ok:
                    return
            req = recv_exact(c, 4)
            if req[3] == 1:
                rest = recv_exact(c, 6)
                host, port = socket.inet_ntoa(rest[:4]), int.from_bytes(rest[4:], "big")
            elif req[3] == 3:
                n = recv_exact(c, 1)
                rest = n + recv_exact(c, n[0] + 2)
                host, port = rest[1:-2].decode(), int.from_bytes(rest[-2:], "big")
            else:
                seen.append(req)
                return
            seen.append(req + rest)
            up = socket.create_connection((host, port))
            c.sendall(b"\x05\x00\x00\x01\x7f\x00\x00\x01\x00\x00")
            threading.Thread(target=relay, args=(up, c), daemon=True).start()
            relay(c, up)
        except (EOFError, OSError):
            pass

    threading.Thread(target=run, daemon=True).start()
    return lst.getsockname()[1]


def client(lib, host, creds, password):
    """Connect a DEALER of `lib` through a fresh proxy to a pyzmq ROUTER; send one message."""
    z = ctypes.CDLL(lib, mode=ctypes.RTLD_LOCAL)
    z.zmq_ctx_new.restype = ctypes.c_void_p
    z.zmq_socket.restype = ctypes.c_void_p
    z.zmq_socket.argtypes = [ctypes.c_void_p, ctypes.c_int]
    z.zmq_setsockopt.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]
    z.zmq_connect.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    z.zmq_send.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    z.zmq_close.argtypes = [ctypes.c_void_p]
    z.zmq_ctx_term.argtypes = [ctypes.c_void_p]

    ctx = zmq.Context()
    router = ctx.socket(zmq.ROUTER)
    router.linger = 0
    port = router.bind_to_random_port("tcp://127.0.0.1")
    seen = []
    pport = proxy(creds, seen)

    zc = z.zmq_ctx_new()
    s = z.zmq_socket(zc, ZMQ_DEALER)
    zero = ctypes.c_int(0)
    z.zmq_setsockopt(s, ZMQ_LINGER, ctypes.byref(zero), 4)
    for opt, val in ((ZMQ_SOCKS_PROXY, b"127.0.0.1:%d" % pport),
                     (ZMQ_SOCKS_USERNAME, creds[0] if creds else None),
                     (ZMQ_SOCKS_PASSWORD, password)):
        if val is not None:
            assert z.zmq_setsockopt(s, opt, val, len(val)) == 0, opt
    assert z.zmq_connect(s, b"tcp://%s:%d" % (host.encode(), port)) == 0
    z.zmq_send(s, b"via socks", 9, 0)
    got = router.recv_multipart()[1] if router.poll(2000) else None
    time.sleep(0.1)
    z.zmq_close(s)
    z.zmq_ctx_term(zc)
    router.close()
    ctx.term()
    # The target port differs per run: show it as PORT.
    shown = [b.replace(port.to_bytes(2, "big"), b"PORT").hex() if i == len(seen) - 1 else b.hex()
             for i, b in enumerate(seen)]
    return shown, got


def main():
    libs = sys.argv[1:3]
    cases = [
        ("no authentication, IPv4 target", "127.0.0.1", None, None),
        ("user/password", "127.0.0.1", (b"joe", b"secret"), b"secret"),
        ("a name for the proxy to resolve", "localhost", None, None),
    ]
    rc = 0
    for name, host, creds, pw in cases:
        out = [client(lib, host, creds, pw) for lib in libs]
        same = out[0] == out[1]
        print("    %-32s %s: proxy saw %s, delivered %r%s" % (
            name, "same" if same else "DIFFERENT", " ".join(out[1][0]), out[1][1],
            "" if same else "; oxmq: %s, delivered %r" % (" ".join(out[0][0]), out[0][1])))
        rc |= not same
    # libzmq 4.3.5 aborts the process here (an assertion in epoll.cpp after the
    # proxy refuses the credentials), so oxmq alone: nothing gets through.
    seen, got = client(libs[0], "127.0.0.1", (b"joe", b"secret"), b"wrong")
    print("    %-32s oxmq: proxy saw %s, delivered %r (libzmq 4.3.5 aborts: not run)" % (
        "wrong password", " ".join(seen), got))
    rc |= got is not None
    return rc


if __name__ == "__main__":
    sys.exit(main())
