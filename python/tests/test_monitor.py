"""Socket monitors: get_monitor_socket / disable_monitor and the event format."""

import sys

import oxmq as zmq
from oxmq.utils.monitor import parse_monitor_message, parse_monitor_message_v2, recv_monitor_message


def test_monitor_reports_listening_accepted_and_handshake(ctx, make):
    server = make(zmq.PULL)
    mon = server.get_monitor_socket()
    mon.rcvtimeo = 5000
    port = server.bind_to_random_port("tcp://127.0.0.1")
    ev = recv_monitor_message(mon)
    assert ev["event"] == zmq.EVENT_LISTENING
    assert ev["endpoint"] == f"tcp://127.0.0.1:{port}".encode()
    client = make(zmq.PUSH)
    client.connect(f"tcp://127.0.0.1:{port}")
    seen = set()
    while zmq.EVENT_HANDSHAKE_SUCCEEDED not in seen:
        seen.add(recv_monitor_message(mon)["event"])
    assert zmq.EVENT_ACCEPTED in seen
    assert server.get_monitor_socket() is mon, "the same monitor socket is returned while open"
    server.disable_monitor()
    assert recv_monitor_message(mon)["event"] == zmq.EVENT_MONITOR_STOPPED
    mon.close(0)


def test_monitor_event_mask_filters(ctx, make):
    s = make(zmq.PAIR)
    mon = s.get_monitor_socket(zmq.EVENT_MONITOR_STOPPED)
    mon.rcvtimeo = 5000
    s.bind("tcp://127.0.0.1:*")
    s.disable_monitor()
    assert recv_monitor_message(mon)["event"] == zmq.EVENT_MONITOR_STOPPED, "LISTENING was filtered out"
    mon.close(0)


def test_monitor_rejects_non_inproc_endpoint(make):
    s = make(zmq.PAIR)
    try:
        s.monitor("tcp://127.0.0.1:5555", zmq.EVENT_ALL)
    except zmq.ZMQError as e:
        assert e.errno == zmq.EPROTONOSUPPORT
    else:
        raise AssertionError("monitor on tcp must fail")


def test_parse_monitor_message_layout():
    frame = (0x20).to_bytes(2, "little") + (7).to_bytes(4, "little", signed=True)
    ev = parse_monitor_message([frame, b"tcp://1.2.3.4:5"])
    assert ev == {"event": 0x20, "value": 7, "endpoint": b"tcp://1.2.3.4:5"}


# -- event version 2 (oxmq only: socket.monitor(..., event_version=2)) -------

def _v2_monitor(s, events, sink_type=zmq.PAIR, reader_type=zmq.PAIR):
    addr = f"inproc://monitor-v2-{s.fileno()}-{sink_type}"
    s.monitor(addr, events, event_version=2, sink_type=sink_type)
    mon = s.context.socket(reader_type)
    mon.rcvtimeo = 5000
    if reader_type == zmq.SUB:
        mon.setsockopt(zmq.SUBSCRIBE, b"")
    mon.connect(addr)
    return mon


def _wait_v2(mon, event):
    for _ in range(50):
        ev = parse_monitor_message_v2(mon.recv_multipart())
        if ev["event"] == event:
            return ev
    raise AssertionError(f"event {event:#x} never came")


def test_v2_connection_events_carry_both_ends_and_routing_ids(ctx, make):
    server = make(zmq.ROUTER)
    client = make(zmq.DEALER)
    server.setsockopt(zmq.ROUTING_ID, b"srv")
    client.setsockopt(zmq.ROUTING_ID, b"python-client-id")
    smon = _v2_monitor(server, zmq.EVENT_ALL_V2)
    cmon = _v2_monitor(client, zmq.EVENT_ALL_V2, zmq.PUSH, zmq.PULL)
    port = server.bind_to_random_port("tcp://127.0.0.1")
    ep = f"tcp://127.0.0.1:{port}".encode()
    client.connect(ep.decode())
    client.send(b"hi")
    assert server.recv_multipart() == [b"python-client-id", b"hi"]

    listening = _wait_v2(smon, zmq.EVENT_LISTENING)
    assert (listening["local_endpoint"], listening["remote_endpoint"]) == (ep, b"")
    assert listening["routing_id"] is None
    connected = _wait_v2(cmon, zmq.EVENT_CONNECTED)
    assert connected["remote_endpoint"] == ep
    assert connected["local_endpoint"].startswith(b"tcp://127.0.0.1:")
    assert connected["routing_id"] is None, "no id before the handshake"
    accepted = _wait_v2(smon, zmq.EVENT_ACCEPTED)
    assert accepted["remote_endpoint"] == connected["local_endpoint"]
    assert _wait_v2(cmon, zmq.EVENT_HANDSHAKE_SUCCEEDED)["routing_id"] == b"srv"
    hs = _wait_v2(smon, zmq.EVENT_HANDSHAKE_SUCCEEDED)
    assert hs["routing_id"] == b"python-client-id"
    assert hs["values"][0] == 0
    client.close(0)
    gone = _wait_v2(smon, zmq.EVENT_DISCONNECTED)
    assert gone["routing_id"] == b"python-client-id"
    assert gone["value"] == accepted["value"], "the fd ACCEPTED named"
    smon.close(0)
    cmon.close(0)


def test_v2_drops_and_hwm_reached(ctx, make):
    router = make(zmq.ROUTER)
    dealer = make(zmq.DEALER)
    router.sndhwm = 1
    dealer.rcvhwm = 1
    dealer.setsockopt(zmq.ROUTING_ID, b"D")
    mon = _v2_monitor(router, zmq.EVENT_MSG_DROPPED | zmq.EVENT_HWM_REACHED)
    router.bind("inproc://py-v2-drops")
    dealer.connect("inproc://py-v2-drops")
    dealer.send(b"x")
    assert router.recv_multipart() == [b"D", b"x"]

    router.send_multipart([b"nobody", b"m"])
    ev = parse_monitor_message_v2(mon.recv_multipart())
    assert (ev["event"], ev["value"], ev["routing_id"]) == (zmq.EVENT_MSG_DROPPED, zmq.DROP_NO_ROUTE, b"nobody")

    # inproc: SNDHWM + the peer's RCVHWM = 2 fit; the third is dropped.
    for _ in range(3):
        router.send_multipart([b"D", b"m"])
    full = parse_monitor_message_v2(mon.recv_multipart())
    assert (full["event"], full["value"], full["routing_id"]) == (zmq.EVENT_HWM_REACHED, 2, b"D")
    dropped = parse_monitor_message_v2(mon.recv_multipart())
    assert (dropped["event"], dropped["value"], dropped["routing_id"]) == (zmq.EVENT_MSG_DROPPED, zmq.DROP_HWM, b"D")
    mon.close(0)


def test_v2_bad_sink_type_and_v1_default(make):
    s = make(zmq.DEALER)
    try:
        s.monitor("inproc://py-v2-bad", zmq.EVENT_ALL_V2, event_version=2, sink_type=zmq.DEALER)
    except zmq.ZMQError as e:
        assert e.errno == zmq.EINVAL
    else:
        raise AssertionError("a DEALER cannot carry monitor events")
    # Version 1 takes 16 event bits only.
    try:
        s.monitor("inproc://py-v2-bad", zmq.EVENT_ALL_V2)
    except zmq.ZMQError as e:
        assert e.errno == zmq.EINVAL
    else:
        raise AssertionError("EVENT_ALL_V2 needs event_version=2")


def test_parse_monitor_message_v2_layout():
    u64 = lambda v: v.to_bytes(8, sys.byteorder)  # noqa: E731
    msg = [u64(0x1000), u64(3), u64(0), u64(9), (b"routing-" + b"i").ljust(16, b"\0")[:8], b"a", b"b"]
    try:
        parse_monitor_message_v2(msg)
    except RuntimeError:
        pass
    else:
        raise AssertionError("9 id bytes need two values")
    msg = [u64(0x1000), u64(4), u64(0), u64(9), b"routing-", b"i" + b"\0" * 7, b"tcp://l", b"tcp://r"]
    ev = parse_monitor_message_v2(msg)
    assert ev["routing_id"] == b"routing-i"
    assert (ev["local_endpoint"], ev["remote_endpoint"]) == (b"tcp://l", b"tcp://r")
