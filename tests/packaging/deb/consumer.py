#!/usr/bin/python3
"""Debian's python3-zmq, unchanged, on whatever libzmq.so.5 the system has:
PUSH/PULL and REQ/REP over tcp and ipc. Prints the libzmq files this process
mapped (LIBZMQ_MAPPED=...) and the version the library reports
(ZMQ_VERSION=...); tests/packaging/deb/run.sh checks both.

    /usr/bin/python3 tests/packaging/deb/consumer.py SCRATCH_DIR
"""

import os
import sys

import zmq


def mapped_libzmq():
    paths = set()
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) == 6 and os.path.basename(parts[5].strip()).startswith(("libzmq", "liboxmq")):
                paths.add(parts[5].strip())
    return sorted(paths)


def check(cond, what):
    if not cond:
        print("not ok - " + what)
        sys.exit(1)
    print("ok - " + what)


def endpoints(scratch):
    return ["tcp://127.0.0.1:*", "ipc://%s/py-%d" % (scratch, os.getpid())]


def push_pull(ctx, addr):
    pull = ctx.socket(zmq.PULL)
    pull.bind(addr)
    ep = pull.getsockopt(zmq.LAST_ENDPOINT).decode()
    push = ctx.socket(zmq.PUSH)
    push.connect(ep)
    sizes = [0, 1, 29, 255, 256, 70000]
    sent = [bytes([i % 251]) * sizes[i % len(sizes)] for i in range(600)]
    for m in sent:
        push.send(m)
    got = [pull.recv() for _ in sent]
    check(got == sent, "%s: PUSH/PULL, %d messages of 0-70000 bytes in order" % (ep, len(sent)))
    push.send_multipart([b"a", b"", b"c"])
    check(pull.recv_multipart() == [b"a", b"", b"c"], "%s: multipart" % ep)
    push.close(linger=0)
    pull.close(linger=0)


def req_rep(ctx, addr):
    rep = ctx.socket(zmq.REP)
    rep.bind(addr)
    ep = rep.getsockopt(zmq.LAST_ENDPOINT).decode()
    req = ctx.socket(zmq.REQ)
    req.connect(ep)
    for i in range(300):
        req.send_string("q%d" % i)
        rep.send_string(rep.recv_string().upper())
        if req.recv_string() != "Q%d" % i:
            check(False, "%s: round trip %d" % (ep, i))
    check(True, "%s: REQ/REP, 300 round trips" % ep)
    req.send(b"once")
    try:
        req.send(b"twice")
        check(False, "%s: a second send on REQ fails" % ep)
    except zmq.ZMQError as e:
        check(e.errno == zmq.EFSM, "%s: a second send on REQ fails with EFSM" % ep)
    req.close(linger=0)
    rep.close(linger=0)


def main():
    scratch = sys.argv[1]
    ctx = zmq.Context()
    for p in mapped_libzmq():
        print("LIBZMQ_MAPPED=" + p)
    print("ZMQ_VERSION=%s (pyzmq %s, %s)" % (zmq.zmq_version(), zmq.__version__, zmq.__file__))
    check(zmq.has("curve"), "zmq.has('curve')")
    for addr in endpoints(scratch):
        push_pull(ctx, addr)
        req_rep(ctx, addr)
    ctx.term()
    print("python3-zmq: all ok")


if __name__ == "__main__":
    main()
