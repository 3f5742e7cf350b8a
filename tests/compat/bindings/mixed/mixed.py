"""Mixed test: a Perl ZMQ::FFI process (on the libzmq under test, chosen by
FFI_CHECKLIB_PATH) talks to this pyzmq process, which runs on REAL libzmq
(the project venv's PyPI pyzmq, bundling libzmq 4.3.5; or Debian's
python3-zmq on the system libzmq).

    python mixed.py            # spawns perl peer.pl; exits 0 on success

Perl PUSH -> Python PULL, Python REQ -> Perl REP, Python PUB -> Perl SUB.
"""

import os
import subprocess
import sys
import tempfile
import time

import zmq

HERE = os.path.dirname(os.path.abspath(__file__))


def mapped_libzmq():
    out = set()
    with open("/proc/self/maps") as f:
        for line in f:
            p = line.split(None, 5)
            if len(p) == 6 and os.path.basename(p[5].strip()).startswith(("libzmq", "liboxmq")):
                out.add(p[5].strip())
    return sorted(out)


def check(cond, what):
    if not cond:
        print("not ok - " + what, flush=True)
        print("FAIL: " + what, file=sys.stderr, flush=True)
        sys.exit(1)
    print("ok - " + what, flush=True)


def main():
    ctx = zmq.Context()
    for p in mapped_libzmq():
        # "PEER_": this process is the reference side, not the library under test.
        print("PEER_LIBZMQ_MAPPED=%s" % p)
    print("PEER_ZMQ_VERSION=%s (pyzmq %s, %s)" % (zmq.zmq_version(), zmq.__version__, sys.executable))
    under_test = os.environ.get("FFI_CHECKLIB_PATH")
    if under_test:
        real = os.path.realpath(under_test)
        check(all(not os.path.realpath(p).startswith(real + "/") for p in mapped_libzmq()),
              "python side is on real libzmq, not on the library under test")

    tmp = tempfile.mkdtemp(prefix="oxmq-bind-mixed-")
    pull = ctx.socket(zmq.PULL)
    pull.bind("tcp://127.0.0.1:*")
    pub = ctx.socket(zmq.PUB)
    pub.bind("tcp://127.0.0.1:*")
    rep_ep = "ipc://%s/rep" % tmp
    for s in (pull, pub):
        s.linger = 0
    pull.rcvtimeo = 20000

    perl = subprocess.Popen(
        ["perl", os.path.join(HERE, "peer.pl"), pull.last_endpoint.decode(), rep_ep,
         pub.last_endpoint.decode()],
        stdout=sys.stdout, stderr=sys.stderr)
    try:
        got = [pull.recv() for _ in range(1000)]
        check(got == [b"perl %d" % i for i in range(1, 1001)], "Perl PUSH -> Python PULL: 1000 messages in order")
        ok = all(pull.recv_multipart() == [b"mp %d" % i, b"", b"\0bin\0", b"x" * 5000] for i in range(1, 101))
        check(ok, "Perl PUSH -> Python PULL: 100 four-frame messages")

        req = ctx.socket(zmq.REQ)
        req.linger = 0
        req.rcvtimeo = 20000
        req.connect(rep_ep)  # Perl binds it (perhaps later: REQ reconnects)
        for i in range(200):
            req.send_multipart([b"q%d" % i, b"second"])
            r = req.recv_multipart()
            if r != [b"perl:q%d" % i, b"perl:second"]:
                check(False, "Python REQ -> Perl REP: round trip %d got %r" % (i, r))
        check(True, "Python REQ -> Perl REP: 200 multipart round trips")
        req.send(b"quit")
        check(req.recv() == b"bye", "Perl REP said bye")

        deadline = time.monotonic() + 30
        done = None
        i = 0
        while done is None:
            if time.monotonic() > deadline:
                rc = perl.poll()
                check(False, "Perl SUB did not report within 30 s (%d publishes); perl peer %s"
                      % (i, "still running" if rc is None else "exited with %s" % rc))
            pub.send(b"B %d" % i)
            pub.send(b"A %d" % i)
            i += 1
            if pull.poll(5):
                done = pull.recv()
        check(done == b"SUBDONE 20", "Python PUB -> Perl SUB: %r after %d publishes" % (done, i))
        rc = perl.wait(30)
        check(rc == 0, "perl peer exited 0")
    finally:
        if perl.poll() is None:
            perl.kill()
        ctx.destroy(linger=0)
        try:
            os.unlink(os.path.join(tmp, "rep"))
        except OSError:
            pass
        os.rmdir(tmp)


if __name__ == "__main__":
    main()
