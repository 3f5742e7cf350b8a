#!/usr/bin/env python3
"""STREAM interop: oxmq's STREAM against real libzmq's, over raw TCP.

    interop.py OXMQ_LIBDIR

Each side is a process running pyzmq: the libzmq side is this interpreter's
pyzmq (pyzmq's bundled libzmq 4.3.5, or whatever `import zmq` maps), the oxmq
side is Debian's python3-zmq on oxmq's libzmq.so.5 (LD_LIBRARY_PATH=OXMQ_LIBDIR).
Both directions: each library binds once while the other connects.

The binder expects the connect notice [id][""], then [id]["hello"] (bytes
may arrive in pieces), answers "world", then closes the connection with an
empty frame; the connector expects its connect notice, "world", and the
disconnect notice. Prints one PASS/FAIL line per direction; exit 1 on failure.
"""
import os
import subprocess
import sys

PEER = r'''
import os, sys, zmq
role, ep = sys.argv[1], sys.argv[2]
maps = sorted({l.split()[-1] for l in open("/proc/self/maps") if "libzmq" in l})
print("LIBZMQ_MAPPED=" + ",".join(maps), zmq.zmq_version(), flush=True)
ctx = zmq.Context()
s = ctx.socket(zmq.STREAM)
# Not LINGER 0: the binder exits right after its last send, and with 0 its
# context may drop "world" and the close before the I/O thread writes them.
s.setsockopt(zmq.LINGER, 5000)
s.setsockopt(zmq.RCVTIMEO, 10000)
def expect_notice():
    rid, data = s.recv_multipart()
    assert data == b"", ("expected a notice", data)
    return rid
def recv_text(rid, n):
    got = b""
    while len(got) < n:
        r, data = s.recv_multipart()
        assert r == rid and data, (r, data)
        got += data
    return got
if role == "bind":
    s.bind(ep)
    print("BOUND " + s.getsockopt(zmq.LAST_ENDPOINT).decode(), flush=True)
    rid = expect_notice()
    assert recv_text(rid, 5) == b"hello"
    s.send_multipart([rid, b"world"])
    s.send_multipart([rid, b""])  # close it
else:
    s.connect(ep)
    rid = expect_notice()
    s.send_multipart([rid, b"hello"])
    assert recv_text(rid, 5) == b"world"
    assert expect_notice() == rid, "disconnect notice"
print("OK " + role, flush=True)
'''


def run(binder_env, connector_env, binder_py, connector_py):
    b = subprocess.Popen([binder_py, "-c", PEER, "bind", "tcp://127.0.0.1:*"], env=binder_env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    ep = None
    for line in b.stdout:
        lines.append(line.rstrip())
        if line.startswith("BOUND "):
            ep = line.split()[1]
            break
    if ep is None:
        b.wait(10)
        return False, lines
    try:
        c = subprocess.run([connector_py, "-c", PEER, "connect", ep], env=connector_env,
                           capture_output=True, text=True, timeout=30)
        lines += [l for l in (c.stdout + c.stderr).splitlines()]
        rest, _ = b.communicate(timeout=30)
        lines += rest.splitlines()
    except subprocess.TimeoutExpired:
        b.kill()
        return False, lines + ["timeout"]
    ok = c.returncode == 0 and b.returncode == 0 and any(l == "OK bind" for l in lines) \
        and any(l == "OK connect" for l in lines)
    return ok, lines


def main():
    libdir = os.path.abspath(sys.argv[1])
    base = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH",)}
    ox_env = dict(base, LD_LIBRARY_PATH=libdir)
    real_env = dict(base)
    real_py, ox_py = sys.executable, "/usr/bin/python3"
    failures = 0
    for name, args in [
        ("oxmq STREAM binds, libzmq STREAM connects", (ox_env, real_env, ox_py, real_py)),
        ("libzmq STREAM binds, oxmq STREAM connects", (real_env, ox_env, real_py, ox_py)),
    ]:
        ok, lines = run(*args)
        mapped = [l for l in lines if l.startswith("LIBZMQ_MAPPED=")]
        ox_ok = any(libdir in l for l in mapped) and any(libdir not in l for l in mapped)
        if ok and ox_ok:
            print(f"PASS {name}")
        else:
            failures += 1
            print(f"FAIL {name}" + ("" if ox_ok else " (a side did not map the expected libzmq)"))
            for l in lines[-20:]:
                print("    " + l)
    print(f"stream interop: {2 - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
