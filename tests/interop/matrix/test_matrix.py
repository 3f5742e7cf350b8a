"""Every valid socket-type pairing between oxmq and libzmq, over tcp and ipc,
with either side binding. conftest.py prints the results as a table."""

import time

import pytest

from conftest import IO_TIMEOUT_MS, MATRIX_COLUMNS, MATRIX_PAIRS, PeerError
from peerproto import EAGAIN, EHOSTUNREACH

pytestmark = pytest.mark.interop_matrix

# A 300-byte frame (longer than 255: the long-frame encoding) and a 70 KB one.
LONG = bytes(range(256)) + b"L" * 44
HUGE = bytes((i * 7) & 0xFF for i in range(70_000))

PUBLISHERS = {"PUB", "XPUB"}
SUBSCRIBERS = {"SUB", "XSUB"}
REQUESTERS = {"REQ", "DEALER"}
REPLIERS = {"REP", "ROUTER"}


def messages(tag, n=3):
    """n three-frame messages (with an empty frame and a long one), then a 70 KB one."""
    out = [[b"%s-%d" % (tag, i), b"", LONG] for i in range(n)]
    out.append([b"%s-huge" % tag, HUGE])
    return out


def flow(src, dst, tag):
    """src sends a series of multipart messages; dst gets them intact and in order."""
    sent = messages(tag)
    for m in sent:
        src.send(m)
    for i, m in enumerate(sent):
        got = dst.recv()
        assert got == m, f"{src}->{dst}: message {i} differs: got {summarize(got)}, want {summarize(m)}"


def summarize(frames):
    return [f[:24] + (b"...(%d)" % len(f) if len(f) > 24 else b"") for f in frames]


def with_timeout(sock, ms):
    sock.setopt("rcvtimeo", ms)


def expect_nothing(sock, ms=300):
    with_timeout(sock, ms)
    try:
        got = sock.recv()
    except PeerError as e:
        assert e.errno == EAGAIN, f"{sock}: expected EAGAIN, got {e}"
    else:
        pytest.fail(f"{sock}: expected no message, got {summarize(got)}")
    finally:
        with_timeout(sock, IO_TIMEOUT_MS)


# --------------------------------------------------------------------------- scenarios


def pubsub(pub, sub, link):
    link()
    topic = b"topic"
    if sub.kind == "SUB":
        sub.setopt("subscribe", topic)
    else:
        sub.send([b"\x01" + topic])

    # Slow joiner: publish until the subscription has reached the publisher.
    # (Even when the publisher is an XPUB, a blocking recv for the subscription
    # is not reliable here: libzmq's connecting XPUB may only see it once it
    # has processed its commands, which sending does.)
    with_timeout(sub, 100)
    deadline = time.monotonic() + 5
    while True:
        pub.send([topic + b"-sync"])
        try:
            got = sub.recv()
        except PeerError as e:
            assert e.errno == EAGAIN, e
            assert time.monotonic() < deadline, f"{sub} never received from {pub}"
            continue
        assert got == [topic + b"-sync"], f"{sub} got {summarize(got)}"
        break
    with_timeout(sub, IO_TIMEOUT_MS)
    if pub.kind == "XPUB":
        got = pub.recv()
        assert got == [b"\x01" + topic], f"{pub} saw {got!r} instead of the subscription"

    # Filtering: non-matching messages, then matching ones, in order.
    pub.send([b"other-topic", b"", LONG])
    pub.send([b"toxic", b"x"])  # shares a first letter only
    want = [[topic + b".%d" % i, b"", LONG] for i in range(3)] + [[topic + b".huge", HUGE]]
    for m in want:
        pub.send(m)
    i = 0
    while i < len(want):
        got = sub.recv()
        if got == [topic + b"-sync"]:
            continue  # sync messages still in flight
        assert got == want[i], f"{sub}: message {i} is {summarize(got)}, want {summarize(want[i])}"
        i += 1

    # Unsubscribe; the publisher keeps publishing until the cancel has arrived
    # (seen as b"\x00topic" by an XPUB, as the subscriber going quiet otherwise).
    if sub.kind == "SUB":
        sub.setopt("unsubscribe", topic)
    else:
        sub.send([b"\x00" + topic])
    timeout_side = pub if pub.kind == "XPUB" else sub
    with_timeout(timeout_side, 100)
    deadline = time.monotonic() + 5
    while True:
        pub.send([topic + b".after"])
        try:
            got = timeout_side.recv()
        except PeerError as e:
            assert e.errno == EAGAIN, e
            if timeout_side is sub:
                break
        else:
            if timeout_side is pub:
                assert got == [b"\x00" + topic], f"{pub} saw {got!r} instead of the unsubscription"
                break
            assert got == [topic + b".after"], f"{sub} got {summarize(got)}"
        assert time.monotonic() < deadline, "the unsubscription never took effect"
    with_timeout(timeout_side, IO_TIMEOUT_MS)
    pub.send([topic + b".final"])
    with_timeout(sub, 200)
    try:
        while True:
            got = sub.recv()
            assert got == [topic + b".after"], f"{sub} got {summarize(got)} after unsubscribing"
    except PeerError as e:
        assert e.errno == EAGAIN, e
    with_timeout(sub, IO_TIMEOUT_MS)


def pushpull(push, pull, link):
    link()
    flow(push, pull, b"push")


def symmetric(binder, connector, link):
    """PAIR/PAIR, DEALER/DEALER: both directions (the connector speaks first: the
    binder has no peer to send to before a connection exists)."""
    link()
    flow(connector, binder, b"from-connector")
    flow(binder, connector, b"from-binder")


def reqrep(req, rep, link):
    rid = b"req\xfe\x01id"
    if rep.kind == "ROUTER":
        req.setopt("routing_id", rid)
    link()
    for i, body in enumerate(messages(b"request")):
        if req.kind == "REQ":
            req.send(body)
        else:
            req.send([b""] + body)

        got = rep.recv()
        if rep.kind == "REP":
            assert got == body, f"{rep} got {summarize(got)}"
        else:
            assert got == [rid, b""] + body, f"{rep} got {summarize(got)}, want routing id {rid!r} + envelope"

        reply = [b"reply-%d" % i, LONG]
        if rep.kind == "REP":
            rep.send(reply)
        else:
            rep.send([rid, b""] + reply)

        got = req.recv()
        if req.kind == "REQ":
            assert got == reply, f"{req} got {summarize(got)}"
        else:
            assert got == [b""] + reply, f"{req} got {summarize(got)}"


def dealer_router(dealer, router, link):
    rid = b"dealer\x00id"
    dealer.setopt("routing_id", rid)
    link()
    sent = messages(b"to-router")
    for m in sent:
        dealer.send(m)
    for m in sent:
        got = router.recv()
        assert got == [rid] + m, f"{router} got {summarize(got)}, want {rid!r} + {summarize(m)}"
    for m in messages(b"to-dealer"):
        router.send([rid] + m)
        got = dealer.recv()
        assert got == m, f"{dealer} got {summarize(got)}"


def router_router(binder, connector, link):
    bid, cid = b"router-binder", b"router-connector"
    binder.setopt("routing_id", bid)
    connector.setopt("routing_id", cid)
    connector.setopt("router_mandatory", 1)
    link()
    # The connector cannot route to the binder until the handshake has told it the id.
    deadline = time.monotonic() + 5
    first = [b"hello", b"", LONG]
    while True:
        try:
            connector.send([bid] + first)
            break
        except PeerError as e:
            assert e.errno == EHOSTUNREACH, f"{connector}: {e}"
            assert time.monotonic() < deadline, f"{connector} never learnt routing id {bid!r}"
            time.sleep(0.01)
    got = binder.recv()
    assert got == [cid] + first, f"{binder} got {summarize(got)}"
    for m in messages(b"to-connector"):
        binder.send([cid] + m)
        got = connector.recv()
        assert got == [bid] + m, f"{connector} got {summarize(got)}"
    for m in messages(b"to-binder"):
        connector.send([bid] + m)
        got = binder.recv()
        assert got == [cid] + m, f"{binder} got {summarize(got)}"


def scenario_for(ox_type, lz_type):
    """(function, role_a, role_b) where role_x is 'ox', 'lz', 'binder' or 'connector'."""
    types = {ox_type, lz_type}
    first_is_ox = None
    if types <= PUBLISHERS | SUBSCRIBERS and types & PUBLISHERS and types & SUBSCRIBERS:
        fn, first_is_ox = pubsub, ox_type in PUBLISHERS
    elif types == {"PUSH", "PULL"}:
        fn, first_is_ox = pushpull, ox_type == "PUSH"
    elif ox_type == lz_type and ox_type in ("PAIR", "DEALER"):
        return symmetric, None
    elif ox_type == lz_type == "ROUTER":
        return router_router, None
    elif types == {"DEALER", "ROUTER"}:
        fn, first_is_ox = dealer_router, ox_type == "DEALER"
    elif ox_type in REQUESTERS and lz_type in REPLIERS:
        fn, first_is_ox = reqrep, True
    elif lz_type in REQUESTERS and ox_type in REPLIERS:
        fn, first_is_ox = reqrep, False
    else:
        raise ValueError(f"no scenario for {ox_type}/{lz_type}")
    return fn, first_is_ox


# --------------------------------------------------------------------------- the test


@pytest.mark.parametrize("binder", [b for _, b in MATRIX_COLUMNS[:2]])
@pytest.mark.parametrize("transport", ["tcp", "ipc"])
@pytest.mark.parametrize("pair", MATRIX_PAIRS)
def test_cell(pair, transport, binder, ox, lz, endpoint):
    ox_type, lz_type = pair.split("/")
    a = ox.socket(ox_type)
    b = lz(lz_type)
    bind_side, connect_side = (a, b) if binder == "oxmq" else (b, a)

    def link():
        ep = bind_side.bind(endpoint(transport))
        if transport == "tcp":
            assert ep.startswith("tcp://127.0.0.1:") and not ep.endswith(":*"), ep
            assert int(ep.rsplit(":", 1)[1]) > 0, ep
        connect_side.connect(ep)

    fn, first_is_ox = scenario_for(ox_type, lz_type)
    if first_is_ox is None:
        fn(bind_side, connect_side, link)
    elif first_is_ox:
        fn(a, b, link)
    else:
        fn(b, a, link)
