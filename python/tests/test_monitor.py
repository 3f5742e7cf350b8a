"""Socket monitors: get_monitor_socket / disable_monitor and the event format."""

import oxmq as zmq
from oxmq.utils.monitor import parse_monitor_message, recv_monitor_message


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
