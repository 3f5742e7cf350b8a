"""Context lifetime (term with linger, ETERM in blocked threads, destroy,
instance, context manager, shadow), zmq.proxy / proxy_steerable in a thread,
devices, socket monitor events."""

import struct
import threading
import time

import pytest
import zmq
from zmq.utils.monitor import recv_monitor_message


def test_term_waits_for_linger_then_delivers(tmp_path):
    """A PUSH connects to an address nobody listens on yet, queues messages
    and is closed with LINGER=5s; term() blocks until the peer appears and
    everything is delivered."""
    addr = "ipc://%s/linger" % tmp_path
    c = zmq.Context()
    push = c.socket(zmq.PUSH)
    push.linger = 5000
    push.connect(addr)
    for i in range(10):
        push.send(b"%d" % i)  # connect() made the pipe: queued, no block
    push.close()
    t = threading.Thread(target=c.term)
    t.start()
    time.sleep(0.2)
    assert t.is_alive(), "term() returned although messages were lingering"
    c2 = zmq.Context()
    pull = c2.socket(zmq.PULL)
    pull.rcvtimeo = 5000
    pull.bind(addr)
    got = [pull.recv() for _ in range(10)]
    t.join(10)
    assert not t.is_alive()
    assert got == [b"%d" % i for i in range(10)]
    pull.close()
    c2.term()


def test_term_linger_zero_drops():
    c = zmq.Context()
    push = c.socket(zmq.PUSH)
    push.linger = 0
    push.connect("tcp://127.0.0.1:1")  # nobody there: messages queue
    for _ in range(5):
        push.send(b"x", zmq.NOBLOCK)
    push.close()
    t0 = time.monotonic()
    c.term()
    assert time.monotonic() - t0 < 2


def test_term_linger_timeout():
    c = zmq.Context()
    push = c.socket(zmq.PUSH)
    push.linger = 300
    push.connect("tcp://127.0.0.1:1")
    push.send(b"x", zmq.NOBLOCK)
    push.close()
    t0 = time.monotonic()
    c.term()
    dt = time.monotonic() - t0
    assert 0.2 < dt < 5, dt


def test_eterm_in_blocked_recv():
    c = zmq.Context()
    s = c.socket(zmq.PULL)
    s.bind("inproc://blocked")
    errors = []

    def blocked():
        try:
            s.recv()
        except zmq.ContextTerminated as e:
            errors.append(e.errno)
        finally:
            s.close()

    t = threading.Thread(target=blocked)
    t.start()
    time.sleep(0.2)
    c.term()
    t.join(5)
    assert errors == [zmq.ETERM]


def test_destroy_closes_sockets():
    c = zmq.Context()
    socks = [c.socket(zmq.PUSH) for _ in range(5)]
    for s in socks:
        s.connect("tcp://127.0.0.1:1")
        s.send(b"x", zmq.NOBLOCK)
    c.destroy(linger=0)
    assert c.closed and all(s.closed for s in socks)


def test_context_manager_and_instance():
    with zmq.Context() as c:
        with c.socket(zmq.PAIR) as a, c.socket(zmq.PAIR) as b:
            a.bind("inproc://cm")
            b.connect("inproc://cm")
            a.send(b"in a with")
            assert b.recv() == b"in a with"
    assert c.closed
    i1 = zmq.Context.instance()
    assert zmq.Context.instance() is i1


def test_shadow_context_and_socket(ctx):
    shadow = zmq.Context.shadow(ctx.underlying)
    a = shadow.socket(zmq.PAIR)
    a.bind("inproc://shadow")
    b = ctx.socket(zmq.PAIR)
    b.connect("inproc://shadow")  # same underlying context: inproc works
    sb = zmq.Socket.shadow(b.underlying)
    a.send(b"s")
    assert sb.recv() == b"s"
    a.close()
    b.close()


def _proxy_thread(ctx, frontend_addr, backend_addr, steerable=False):
    ready = threading.Event()
    control_addr = "inproc://control-%s" % frontend_addr.rsplit("/", 1)[-1]
    result = {}

    def run():
        front = ctx.socket(zmq.ROUTER)
        back = ctx.socket(zmq.DEALER)
        front.bind(frontend_addr)
        back.bind(backend_addr)
        result["front"] = front.last_endpoint.decode()
        result["back"] = back.last_endpoint.decode()
        ctl = None
        if steerable:
            ctl = ctx.socket(zmq.PAIR)
            ctl.bind(control_addr)
        ready.set()
        try:
            if steerable:
                zmq.proxy_steerable(front, back, None, ctl)
            else:
                zmq.proxy(front, back)
        except zmq.ContextTerminated:
            result["eterm"] = True
        finally:
            for s in (front, back, ctl):
                if s is not None:
                    s.close(linger=0)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    assert ready.wait(5)
    return t, result, control_addr


def test_proxy_in_thread():
    c = zmq.Context()
    t, res, _ = _proxy_thread(c, "tcp://127.0.0.1:*", "inproc://workers")
    worker = c.socket(zmq.REP)
    worker.connect(res["back"])
    clients = []
    for i in range(3):
        r = c.socket(zmq.REQ)
        r.rcvtimeo = 5000
        r.connect(res["front"])
        clients.append(r)

    def serve():
        for _ in range(30):
            m = worker.recv()
            worker.send(b"done:" + m)

    w = threading.Thread(target=serve, daemon=True)
    w.start()
    for round_ in range(10):
        for i, r in enumerate(clients):
            r.send(b"%d.%d" % (i, round_))
        for i, r in enumerate(clients):
            assert r.recv() == b"done:%d.%d" % (i, round_)
    w.join(5)
    for s in clients + [worker]:
        s.close(linger=0)
    c.term()  # proxy returns with ETERM, closes its sockets
    t.join(5)
    assert not t.is_alive() and res.get("eterm")


def test_proxy_steerable_terminate():
    c = zmq.Context()
    t, res, control_addr = _proxy_thread(c, "inproc://pf", "inproc://pb", steerable=True)
    req = c.socket(zmq.REQ)
    req.connect("inproc://pf")
    rep = c.socket(zmq.REP)
    rep.connect("inproc://pb")
    req.send(b"through")
    assert rep.recv() == b"through"
    rep.send(b"back")
    assert req.recv() == b"back"
    ctl = c.socket(zmq.PAIR)
    ctl.connect(control_addr)
    ctl.send(b"TERMINATE")
    t.join(5)
    assert not t.is_alive() and not res.get("eterm")
    for s in (req, rep, ctl):
        s.close(linger=0)
    c.term()


def test_thread_device():
    from zmq.devices import ThreadDevice

    dev = ThreadDevice(zmq.QUEUE, zmq.PULL, zmq.PUSH)
    dev.bind_in("inproc://dev-in")
    dev.bind_out("inproc://dev-out")
    # ThreadDevice uses its own context; connect through the same one
    dev.daemon = True
    dev.start()
    time.sleep(0.1)
    c = dev._context  # the device's own context: inproc peers must share it
    push = c.socket(zmq.PUSH)
    push.connect("inproc://dev-in")
    pull = c.socket(zmq.PULL)
    pull.rcvtimeo = 5000
    pull.connect("inproc://dev-out")
    for i in range(20):
        push.send(b"%d" % i)
    assert sorted(pull.recv() for _ in range(20)) == sorted(b"%d" % i for i in range(20))
    push.close(linger=0)
    pull.close(linger=0)


def test_monitor_events(ctx):
    srv = ctx.socket(zmq.REP)
    mon_srv = srv.get_monitor_socket()
    srv.bind("tcp://127.0.0.1:*")
    ep = srv.last_endpoint.decode()
    cli = ctx.socket(zmq.REQ)
    mon_cli = cli.get_monitor_socket()
    cli.connect(ep)
    cli.send(b"hi")
    assert srv.recv() == b"hi"

    def collect(mon, want, timeout=5):
        seen = []
        deadline = time.monotonic() + timeout
        while not want.issubset({e["event"] for e in seen}) and time.monotonic() < deadline:
            if mon.poll(100):
                seen.append(recv_monitor_message(mon))
        return seen

    srv_ev = collect(mon_srv, {zmq.EVENT_LISTENING, zmq.EVENT_ACCEPTED,
                               zmq.EVENT_HANDSHAKE_SUCCEEDED})
    names = {e["event"] for e in srv_ev}
    assert {zmq.EVENT_LISTENING, zmq.EVENT_ACCEPTED, zmq.EVENT_HANDSHAKE_SUCCEEDED} <= names, srv_ev
    listening = [e for e in srv_ev if e["event"] == zmq.EVENT_LISTENING][0]
    assert listening["endpoint"].decode() == ep
    cli_ev = collect(mon_cli, {zmq.EVENT_CONNECTED, zmq.EVENT_HANDSHAKE_SUCCEEDED})
    assert {zmq.EVENT_CONNECTED, zmq.EVENT_HANDSHAKE_SUCCEEDED} <= {e["event"] for e in cli_ev}, cli_ev
    # raw frame format: 6 bytes "=hi" + endpoint
    cli.disable_monitor()
    stopped = collect(mon_cli, {zmq.EVENT_MONITOR_STOPPED})
    assert zmq.EVENT_MONITOR_STOPPED in {e["event"] for e in stopped}
    for s in (srv, cli, mon_srv, mon_cli):
        s.close(linger=0)


def test_monitor_raw_frames(ctx):
    s = ctx.socket(zmq.PULL)
    s.monitor("inproc://mon-raw", zmq.EVENT_LISTENING)
    m = ctx.socket(zmq.PAIR)
    m.connect("inproc://mon-raw")
    s.bind("tcp://127.0.0.1:*")
    assert m.poll(5000)
    frames = m.recv_multipart()
    assert len(frames) == 2 and len(frames[0]) == 6
    event, value = struct.unpack("=hi", frames[0])
    assert event == zmq.EVENT_LISTENING
    assert frames[1] == s.last_endpoint
    s.close(linger=0)
    m.close(linger=0)
