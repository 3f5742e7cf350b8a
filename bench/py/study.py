#!/usr/bin/env python3
"""Python side of the benchmark suite (bench/run.py): one program per study,
selected on argv, run with any pyzmq-shaped module.

    study.py IMPL STUDY ARGS...

IMPL is the module: ``zmq`` (pyzmq), ``oxmq`` (oxmq's Python package),
``pyomq``; some studies also take a non-ZeroMQ peer: ``queue`` (queue.Queue,
inproc hand-off) and ``pipe`` (multiprocessing.Pipe, cross-process calls).
Each run prints one JSON line of results on stdout; programs that bind first
print ``READY <endpoint> ...`` so the orchestrator can start their peers.
"""

import importlib
import json
import os
import resource
import signal
import struct
import sys
import threading
import time

now = time.perf_counter
WARM = 100


def load(impl):
    return importlib.import_module(impl)


def lib_fields(z):
    info = {"module": z.__name__}
    try:
        info["module_version"] = getattr(z, "__version__", "?")
        info["zmq_version"] = z.zmq_version()
    except Exception:  # noqa: BLE001 - version probing is best-effort
        pass
    return info


def emit(z, **fields):
    if z is not None:
        fields.update(lib_fields(z))
    print(json.dumps(fields), flush=True)


def socket(ctx, kind):
    """A socket with libzmq's default LINGER (-1: close and term deliver what
    is queued). The studies rely on it: a process's last message (thr's ack,
    the last reply of lat and the rpc studies) is sent just before it closes
    and exits. pyomq 0.27 defaults to 0, which dropped that message and left
    the peer waiting until its timeout in 30 of study 2's 60 pyomq cells of
    the 2026-11-26 report; set for every module, so each side runs the same
    program (a no-op where -1 is already the default)."""
    s = ctx.socket(kind)
    s.setsockopt(z_mod.LINGER, -1)
    return s


def ready(sock, *extra):
    ep = sock.getsockopt(z_mod.LAST_ENDPOINT)
    if isinstance(ep, bytes):
        ep = ep.decode()
    print("READY", ep.rstrip("\0"), *extra, flush=True)


# The CURVE study (bench/run.py study 9): BENCH_CURVE=1 makes the bound socket
# of thr/lat a CURVE server and the connecting one a client, with the fixed
# test keys of bench/c/common.h. The public keys are written out (derived once
# with pyzmq's zmq.curve_public, and checked against it at run time when the
# module has curve_public) so the study does not depend on a binding having
# curve_public; ack sockets stay NULL.
SERVER_SECRET = b"JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6"
CLIENT_SECRET = b"D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs"
SERVER_PUBLIC = b"rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"
CLIENT_PUBLIC = b"Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID"


def bench_curve():
    return os.environ.get("BENCH_CURVE", "") not in ("", "0")


def _check_publics(z):
    try:
        derived = (z.curve_public(SERVER_SECRET), z.curve_public(CLIENT_SECRET))
    except Exception:  # noqa: BLE001 - a module without curve_public uses the written-out keys
        return
    if derived != (SERVER_PUBLIC, CLIENT_PUBLIC):
        raise SystemExit("curve_public disagrees with the test keys: %r" % (derived,))


def curve_server(z, sock):
    if bench_curve():
        sock.setsockopt(z.CURVE_SERVER, 1)
        sock.setsockopt(z.CURVE_SECRETKEY, SERVER_SECRET)


def curve_client(z, sock):
    if bench_curve():
        _check_publics(z)
        sock.setsockopt(z.CURVE_SERVERKEY, SERVER_PUBLIC)
        sock.setsockopt(z.CURVE_PUBLICKEY, CLIENT_PUBLIC)
        sock.setsockopt(z.CURVE_SECRETKEY, CLIENT_SECRET)


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


# --- study 1: call cost ------------------------------------------------------


def callcost(z, n):
    n = int(n)
    ctx = z.Context()
    pub = socket(ctx, z.PUB)
    pub.setsockopt(z.LINGER, 0)
    path = "/tmp/oxmq-bench-cc-py-%d" % os.getpid()
    pub.bind("ipc://" + path)
    send, flag, msg = pub.send, z.DONTWAIT, b"hello"
    t0 = now()
    for _ in range(n):
        send(msg, flag)
    secs = now() - t0
    pub.close()
    ctx.term()
    try:
        os.unlink(path)
    except OSError:
        pass
    emit(z, count=n, seconds=secs, ns_per_call=secs * 1e9 / n)


# --- study 2: throughput -------------------------------------------------------


def _recv_loop(pull, size, count, copy, out=None):
    recv = pull.recv
    first = recv(copy=copy)
    if len(first if copy else first.buffer) != size:
        raise SystemExit("size mismatch")
    if out is not None:
        out["first"] = first
    t0 = now()
    for _ in range(count - 1):
        recv(copy=copy)
    return now() - t0


def _payload(size, mode):
    # "bytearray": a mutable buffer, which no library can lend (oxmq lends an
    # exact bytes >= 4 KiB by reference, python/src/frame.rs), so every side copies.
    return bytearray(b"x" * size) if mode == "bytearray" else b"x" * size


def _send_loop(push, size, count, copy, mode="copy", out=None):
    buf = _payload(size, mode)
    if out is not None:
        out["sent"] = buf
    send = push.send
    t0 = now()
    for _ in range(count):
        send(buf, copy=copy)
    return now() - t0


def thr(z, mode, *args):
    ctx = z.Context()
    if mode == "recv":
        ep, size, count = args[0], int(args[1]), int(args[2])
        copy = not (len(args) > 3 and args[3] == "zc")
        pull = socket(ctx, z.PULL)
        curve_server(z, pull)
        pull.bind(ep)
        # An ack PUSH: the sender waits for it before closing (see bench/c/thr.c).
        ack = socket(ctx, z.PUSH)
        ack.bind("tcp://127.0.0.1:*" if ep.startswith("tcp://") else ep + "-ack")
        ack_ep = ack.getsockopt(z.LAST_ENDPOINT)
        ready(pull, (ack_ep.decode() if isinstance(ack_ep, bytes) else ack_ep).rstrip("\0"))
        secs = _recv_loop(pull, size, count, copy)
        ack.send(b"done")
        ack.close()
        rate = (count - 1) / secs
        emit(z, count=count, seconds=secs, msgs_per_s=rate, mb_per_s=rate * size / 1e6, cpu_s=cpu_seconds(),
             mechanism=pull.getsockopt(z.MECHANISM))
        pull.close()
    elif mode == "send":
        ep, size, count = args[0], int(args[1]), int(args[2])
        copy = not (len(args) > 3 and args[3] == "zc")
        push = socket(ctx, z.PUSH)
        curve_client(z, push)
        push.connect(ep)
        ack = socket(ctx, z.PULL)
        if len(args) > 4:
            ack.connect(args[4])
        secs = _send_loop(push, size, count, copy, args[3] if len(args) > 3 else "copy")
        if len(args) > 4:
            ack.recv()
        ack.close()
        emit(z, count=count, send_seconds=secs, send_calls_per_s=count / secs, cpu_s=cpu_seconds())
        push.close()  # default linger: term() waits until everything is delivered
    elif mode == "inproc":
        size, count = int(args[0]), int(args[1])
        copy = not (len(args) > 2 and args[2] == "zc")
        pull = socket(ctx, z.PULL)
        pull.bind("inproc://thr")
        push = socket(ctx, z.PUSH)
        push.connect("inproc://thr")
        out = {}
        th = threading.Thread(target=lambda: out.update(secs=_recv_loop(pull, size, count, copy, out)))
        th.start()
        ssecs = _send_loop(push, size, count, copy, args[2] if len(args) > 2 else "copy", out)
        th.join()
        rate = (count - 1) / out["secs"]
        # Whether the receiver got the sender's own object (a lent bytes), not a copy.
        emit(z, count=count, seconds=out["secs"], msgs_per_s=rate, mb_per_s=rate * size / 1e6,
             send_seconds=ssecs, send_calls_per_s=count / ssecs, cpu_s=cpu_seconds(),
             recv_is_sent=out["first"] is out["sent"])
        push.close()
        pull.close()
    ctx.term()


# --- study 3: latency ------------------------------------------------------------


def _serve(rep, count):
    recv, send = rep.recv, rep.send
    for _ in range(count + WARM):
        send(recv(copy=False), copy=False)


def _client(z, req, size, count):
    buf = b"x" * size
    send, recv = req.send, req.recv
    rt = []
    for i in range(count + WARM):
        t0 = now()
        send(buf)
        m = recv()
        dt = now() - t0
        if len(m) != size:
            raise SystemExit("size mismatch")
        if i >= WARM:
            rt.append(dt)
    total = sum(rt)
    rt.sort()
    emit(z, count=count, seconds=total, mean_us=total / count * 1e6, p50_us=rt[count // 2] * 1e6,
         p99_us=rt[int(count * 0.99)] * 1e6, mechanism=req.getsockopt(z.MECHANISM))


def lat(z, mode, *args):
    ctx = z.Context()
    if mode == "server":
        rep = socket(ctx, z.REP)
        curve_server(z, rep)
        rep.bind(args[0])
        ready(rep)
        _serve(rep, int(args[2]))
        emit(None, served=True)
        rep.close()
    elif mode == "client":
        req = socket(ctx, z.REQ)
        curve_client(z, req)
        req.connect(args[0])
        _client(z, req, int(args[1]), int(args[2]))
        req.close()
    elif mode == "inproc":
        size, count = int(args[0]), int(args[1])
        rep = socket(ctx, z.REP)
        rep.bind("inproc://lat")
        req = socket(ctx, z.REQ)
        req.connect("inproc://lat")
        th = threading.Thread(target=_serve, args=(rep, count))
        th.start()
        _client(z, req, size, count)
        th.join()
        req.close()
        rep.close()
    ctx.term()


# --- study 4: inproc hand-off ------------------------------------------------------


def inproc_pair(z, n):
    n = int(n)
    pack = struct.Struct("<I").pack
    if z is None:  # queue.Queue, bounded like the HWM
        import queue

        q = queue.Queue(maxsize=1000)

        def receiver():
            get = q.get
            for i in range(n):
                if get() != i:
                    raise SystemExit("out of order")

        t0 = now()
        th = threading.Thread(target=receiver)
        th.start()
        put = q.put
        for i in range(n):
            put(i)
        th.join()
        secs = now() - t0
        print(json.dumps({"count": n, "seconds": secs, "msgs_per_s": n / secs, "module": "queue"}), flush=True)
        return
    ctx = z.Context()
    tx = socket(ctx, z.PAIR)
    tx.bind("inproc://pair")
    # The receiving socket is connected before the sender starts (pyomq hangs
    # when the peer connects after the sender has started; see baselines.md).
    rx = socket(ctx, z.PAIR)
    rx.connect("inproc://pair")

    def receiver():
        recv = rx.recv
        for i in range(n):
            if recv() != pack(i):
                raise SystemExit("out of order")

    t0 = now()
    th = threading.Thread(target=receiver)
    th.start()
    send = tx.send
    for i in range(n):
        send(pack(i))
    th.join()
    secs = now() - t0
    tx.close()
    rx.close()
    ctx.term()
    emit(z, count=n, seconds=secs, msgs_per_s=n / secs)


# --- study 5: weather station ---------------------------------------------------------


class Stop(Exception):
    pass


def _raise_stop(*_):
    raise Stop()


def weather(z, mode, ep, arg):
    import random

    ctx = z.Context()
    if mode == "server":
        rng = int(arg)
        base = max(0, 10001 - rng // 2)
        pub = socket(ctx, z.PUB)
        pub.setsockopt(z.LINGER, 0)
        pub.bind(ep)
        signal.signal(signal.SIGTERM, _raise_stop)
        ready(pub)
        random.seed(42)
        randrange, send = random.randrange, pub.send
        sent = 0
        t0 = now()
        try:
            while True:
                zipcode = base + randrange(rng)
                temperature = randrange(-80, 135)
                relhumidity = randrange(10, 60)
                send(b"%05d %d %d" % (zipcode, temperature, relhumidity))
                sent += 1
        except Stop:
            pass
        secs = now() - t0
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        emit(z, published=sent, seconds=secs, pub_rate=sent / secs)
        pub.close()
    else:
        n = int(arg)
        t0 = now()
        sub = socket(ctx, z.SUB)
        sub.connect(ep)
        sub.setsockopt(z.SUBSCRIBE, b"10001 ")
        total = 0
        for _ in range(n):
            zipcode, temperature, _rel = sub.recv().split()
            if zipcode != b"10001":
                raise SystemExit("unfiltered update")
            total += int(temperature)
        secs = now() - t0
        emit(z, updates=n, seconds=secs, avg_temp=total / n)
        sub.close()
    ctx.term()


# --- study 6: log pipeline -----------------------------------------------------------------

LEVELS = [b"INFO", b"DEBUG", b"INFO", b"WARN", b"INFO", b"INFO", b"DEBUG", b"INFO", b"INFO", b"ERROR"]


def logpipe(z, role, *args):
    mono = time.monotonic
    ctx = z.Context()
    if role == "collector":
        writers = int(args[0])
        pull = socket(ctx, z.PULL)
        pull.bind("tcp://127.0.0.1:*")
        pub = socket(ctx, z.PUB)
        pub.setsockopt(z.SNDHWM, 0)  # readers must see every line
        pub.bind("tcp://127.0.0.1:*")
        ep_pub = pub.getsockopt(z.LAST_ENDPOINT)
        ep_pub = (ep_pub.decode() if isinstance(ep_pub, bytes) else ep_pub).rstrip("\0")
        ready(pull, ep_pub)
        recv, send = pull.recv, pub.send
        ends = lines = 0
        while True:
            m = recv()
            if m == b"END":
                ends += 1
                if ends == writers:
                    send(b"END")
                    break
                continue
            send(m)
            lines += 1
        pull.close()
        pub.close()
        ctx.term()
        emit(z, lines=lines, cpu=cpu_seconds())
    elif role == "writer":
        ep, n, wid, ep_pub = args[0], int(args[1]), int(args[2]), args[3]
        push = socket(ctx, z.PUSH)
        curve_client(z, push)
        push.connect(ep)
        # Closing right after the last send can lose the tail (and the END) on the
        # bound side: wait for the collector's final END on its PUB first.
        done = socket(ctx, z.SUB)
        done.connect(ep_pub)
        done.setsockopt(z.SUBSCRIBE, b"END")
        send = push.send
        t0 = mono()
        for i in range(n):
            level = LEVELS[i % 10]
            send(b"%s 2026-11-21T10:00:00.%06d host%d app[%d]: request %d handled in %d us"
                 % (level, i % 1000000, wid, 1000 + wid, i, i % 977))
        send(b"END")
        t1 = mono()
        done.recv()
        push.close()
        done.close()
        ctx.term()
        emit(z, start=t0, end=t1, lines=n, cpu=cpu_seconds())
    elif role == "reader":
        ep, prefix = args[0], args[1].encode()
        sub = socket(ctx, z.SUB)
        sub.setsockopt(z.RCVHWM, 0)
        sub.connect(ep)
        sub.setsockopt(z.SUBSCRIBE, prefix)
        if prefix:
            sub.setsockopt(z.SUBSCRIBE, b"END")
        print("READY", flush=True)
        recv = sub.recv
        n = 0
        while recv() != b"END":
            n += 1
        t1 = mono()
        sub.close()
        ctx.term()
        emit(z, lines=n, end=t1, cpu=cpu_seconds())


# --- study 7: cross-process calls -------------------------------------------------------------

P_Q = struct.Struct("<q")
P_QQ = struct.Struct("<qq")
P_10D = struct.Struct("<10d")


def _rpc_serve(recv, send):
    k = acc = 0
    while True:
        m = recv()
        op = m[:1]
        if op == b"A":
            a, b = P_QQ.unpack_from(m, 1)
            send(P_Q.pack(a + b))
        elif op == b"S":
            send(P_10D.pack(*sorted(P_10D.unpack_from(m, 1))))
        elif op == b"C":
            k = acc = 0
            send(b"c" + P_Q.pack(k))
        elif op == b"R":
            acc += P_Q.unpack_from(m, 1)[0]
            k += 1
            send(b"c" + P_Q.pack(k) if k < 9 else b"D" + P_Q.pack(acc))
        elif op == b"Q":
            send(b"q")
            return
        else:
            raise SystemExit("bad op %r" % op)


def _rpc_client(recv, send, shape, count):
    import random

    random.seed(1)
    arr = [random.random() for _ in range(10)]

    def call_add(a, b):
        send(b"A" + P_QQ.pack(a, b))
        return P_Q.unpack(recv())[0]

    def call_sort(xs):
        send(b"S" + P_10D.pack(*xs))
        xs[:] = P_10D.unpack(recv())

    def call_cb(x):
        send(b"C" + P_Q.pack(x))
        while True:
            m = recv()
            if m[:1] == b"D":
                return P_Q.unpack_from(m, 1)[0]
            i = P_Q.unpack_from(m, 1)[0]
            send(b"R" + P_Q.pack(i * i + x))  # the callback runs here, in the caller

    def one(i):
        if shape == "add":
            if call_add(i, 7) != i + 7:
                raise SystemExit("wrong sum")
        elif shape == "sort":
            random.shuffle(arr)
            call_sort(arr)
            if arr != sorted(arr):
                raise SystemExit("not sorted")
        else:
            if call_cb(i) != sum(k * k + i for k in range(9)):
                raise SystemExit("wrong callback sum")

    for i in range(WARM):
        one(i)
    t0 = now()
    for i in range(count):
        one(i)
    secs = now() - t0
    send(b"Q")
    recv()
    return secs


def _pipe_server(conn):
    _rpc_serve(conn.recv_bytes, conn.send_bytes)


def rpc(z, role, *args):
    if z is None:  # multiprocessing.Pipe: the client forks its own server
        import multiprocessing as mp

        shape, count = args[1], int(args[2])
        ours, theirs = mp.Pipe()
        proc = mp.get_context("fork").Process(target=_pipe_server, args=(theirs,))
        proc.start()
        secs = _rpc_client(ours.recv_bytes, ours.send_bytes, shape, count)
        proc.join()
        print(json.dumps({"shape": shape, "count": count, "seconds": secs, "us_per_call": secs / count * 1e6,
                          "module": "multiprocessing.Pipe"}), flush=True)
        return
    ctx = z.Context()
    if role == "server":
        rep = socket(ctx, z.REP)
        rep.bind(args[0])
        ready(rep)
        _rpc_serve(rep.recv, rep.send)
        rep.close()
        emit(None, served=True)
    else:
        ep, shape, count = args[0], args[1], int(args[2])
        req = socket(ctx, z.REQ)
        req.connect(ep)
        secs = _rpc_client(req.recv, req.send, shape, count)
        req.close()
        emit(z, shape=shape, count=count, seconds=secs, us_per_call=secs / count * 1e6)
    ctx.term()


# --- study 9: event-loop receivers (zmq.asyncio, ZMQStream on tornado) ----------
def pyrecv(z, mode, ep, size, count, kind):
    """Receive COUNT messages of SIZE bytes on a PULL bound at EP through an
    event loop: ``asyncio`` (awaiting zmq.asyncio recv) or ``stream`` (a
    ZMQStream on_recv callback on tornado's IOLoop). The sender is ``thr send``."""
    import asyncio

    size, count = int(size), int(count)
    ctx = z.Context()
    ack = socket(ctx, z.PUSH)
    ack.bind("tcp://127.0.0.1:*")
    ack_ep = ack.getsockopt(z.LAST_ENDPOINT)
    ack_ep = (ack_ep.decode() if isinstance(ack_ep, bytes) else ack_ep).rstrip("\0")
    out = {}
    if kind == "asyncio":
        za = importlib.import_module(z.__name__ + ".asyncio")
        pull = za.Socket(socket(ctx, z.PULL))
        pull.bind(ep)
        ready(pull, ack_ep)

        async def main():
            first = await pull.recv()
            if len(first) != size:
                raise SystemExit("size mismatch")
            t0 = now()
            for _ in range(count - 1):
                await pull.recv()
            out["secs"] = now() - t0

        asyncio.run(main())
    else:
        zmqstream = importlib.import_module(z.__name__ + ".eventloop.zmqstream")
        from tornado.ioloop import IOLoop

        pull = socket(ctx, z.PULL)
        pull.bind(ep)
        ready(pull, ack_ep)

        async def main():
            done = asyncio.Event()
            stream = zmqstream.ZMQStream(pull, IOLoop.current())
            seen = [0, 0.0]

            def on_recv(msg):
                if seen[0] == 0:
                    seen[1] = now()
                seen[0] += 1
                if seen[0] == count:
                    out["secs"] = now() - seen[1]
                    stream.stop_on_recv()
                    done.set()

            stream.on_recv(on_recv)
            await done.wait()

        asyncio.run(main())
    ack.send(b"done")
    ack.close()
    rate = (count - 1) / out["secs"]
    emit(z, count=count, seconds=out["secs"], msgs_per_s=rate, mb_per_s=rate * size / 1e6, receiver=kind)
    pull.close()
    ctx.term()


STUDIES = {"pyrecv": pyrecv, "callcost": callcost, "thr": thr, "lat": lat, "inproc_pair": inproc_pair, "weather": weather,
           "logpipe": logpipe, "rpc": rpc}

if __name__ == "__main__":
    impl, study = sys.argv[1], sys.argv[2]
    z_mod = None if impl in ("queue", "pipe") else load(impl)
    STUDIES[study](z_mod, *sys.argv[3:])
