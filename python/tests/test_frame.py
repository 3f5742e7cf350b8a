"""Frame, zero-copy send/recv, MessageTracker, buffer release."""

import gc
import os
import sys
import time

import pytest

import oxmq


def test_recv_copy_false_gives_frame(pair):
    a, b = pair
    a.send(b"frame data")
    f = b.recv(copy=False)
    assert isinstance(f, oxmq.Frame)
    assert f.bytes == b"frame data"
    assert bytes(f) == b"frame data"
    assert len(f) == 10
    assert not f.more
    assert f.get(oxmq.MORE) == 0
    mv = f.buffer
    # writable, as in pyzmq
    assert isinstance(mv, memoryview) and not mv.readonly
    assert mv.tobytes() == b"frame data"
    assert memoryview(f)[0:5] == b"frame"
    assert str(f) == repr(f) == "<zmq.Frame(b'frame data')>"  # pyzmq's form
    assert "frame data" in repr(f)
    import ctypes

    (ctypes.c_char * 10).from_buffer(f)[0:5] = b"FRAME"
    assert mv.tobytes() == b"FRAME data"
    # `.bytes` was read before the write and stays as it was (pyzmq caches it too)
    assert f.bytes == b"frame data"


def test_writing_a_received_frame_reaches_no_one_else(make):
    """A frame's buffer is its own: other receivers of the same payload and
    the sender's lent ``bytes`` are untouched by writes to it."""
    pub = make(oxmq.PUB)
    pub.bind("inproc://shared-payload")
    subs = [make(oxmq.SUB), make(oxmq.SUB)]
    for s in subs:
        s.connect("inproc://shared-payload")
        s.subscribe(b"")
    payload = b"p" * 8192  # lent by reference, shared by both receivers
    pub.send(payload)
    f1 = subs[0].recv(copy=False)
    f2 = subs[1].recv(copy=False)
    memoryview(f1)[0:4] = b"XXXX"
    assert bytes(f1)[:5] == b"XXXXp"
    assert f2.bytes == payload and bytes(memoryview(f2)) == payload
    assert payload == b"p" * 8192
    # a written frame sends what it now holds
    back = make(oxmq.PAIR), make(oxmq.PAIR)
    back[0].bind("inproc://written-frame")
    back[1].connect("inproc://written-frame")
    back[0].send(f1)
    assert back[1].recv()[:5] == b"XXXXp"


def test_frame_views_large_message_without_copy(pair):
    a, b = pair
    payload = bytearray(b"x" * (1 << 20))
    a.send(payload, copy=False)
    # inproc: no copy on either side, so a later change to the sender's buffer
    # shows through the receiver's frame
    payload[0:1] = b"y"
    f = b.recv(copy=False)
    assert memoryview(f)[0:2] == b"yx"
    assert len(f) == len(payload)


def test_frame_more(pair):
    a, b = pair
    a.send_multipart([b"1", b"2"])
    f1 = b.recv(copy=False)
    f2 = b.recv(copy=False)
    assert f1.more and f1.get(oxmq.MORE) == 1
    assert not f2.more


def test_frame_srcfd_is_the_connections_fd(make):
    """pyzmq's Frame.get(zmq.SRCFD) (deprecated): the fd of the tcp/ipc
    connection the frame came from, as libzmq's test_srcfd checks."""
    import socket as pysocket

    rep, req = make(oxmq.REP), make(oxmq.REQ)
    rep.bind("tcp://127.0.0.1:*")
    req.connect(rep.last_endpoint.decode())
    req.send(b"ping")
    f = rep.recv(copy=False)
    fd = f.get(oxmq.SRCFD)
    assert fd >= 0 and f.get("__fd") == str(fd)
    assert f.get("Peer-Address") == "127.0.0.1"
    peer = pysocket.socket(fileno=os.dup(fd))
    try:
        assert peer.getpeername()[0] == "127.0.0.1"
    finally:
        peer.close()
    with pytest.raises(oxmq.ZMQError) as e:
        oxmq.Frame(b"made here").get(oxmq.SRCFD)
    assert e.value.errno == oxmq.EINVAL


def test_frame_construct_and_send(pair):
    a, b = pair
    f = oxmq.Frame(b"made")
    assert f.bytes == b"made" and len(f) == 4
    a.send(f)
    assert b.recv() == b"made"
    a.send(f)  # a frame can be sent again
    assert b.recv() == b"made"
    assert oxmq.Frame().bytes == b""
    with pytest.raises(TypeError):
        oxmq.Frame("str")
    f2 = oxmq.Frame(bytearray(b"copied"), copy=True)
    assert f2.bytes == b"copied"
    assert oxmq.Message is oxmq.Frame
    a.send_multipart([oxmq.Frame(b"f1"), b"f2"])
    assert b.recv_multipart() == [b"f1", b"f2"]


def _wait_refcount(obj, expected, sock, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        oxmq._oxmq._drain_releases()
        if sys.getrefcount(obj) == expected:
            return True
        time.sleep(0.01)
    return False


@pytest.mark.parametrize("transport", ["inproc", "tcp"])
def test_zero_copy_buffer_is_released_after_delivery(make, transport):
    a = make(oxmq.PUSH)
    b = make(oxmq.PULL)
    if transport == "inproc":
        a.bind("inproc://zc")
        b.connect("inproc://zc")
    else:
        a.bind("tcp://127.0.0.1:*")
        b.connect(a.last_endpoint.decode())
    buf = bytearray(b"z" * 200_000)
    base = sys.getrefcount(buf)
    a.send(buf, copy=False)
    assert sys.getrefcount(buf) > base  # the core holds it
    got = b.recv()
    assert got == bytes(buf)
    # the release is queued by the core and drained on a later native call
    deadline = time.monotonic() + 5
    while sys.getrefcount(buf) != base and time.monotonic() < deadline:
        a.send(b"tick", oxmq.NOBLOCK) if False else b.poll(10)
    assert sys.getrefcount(buf) == base
    buf.extend(b"!")  # resizable again: the export was released


def test_zero_copy_numpy_like_buffers(pair):
    a, b = pair
    import array

    arr = array.array("d", range(20000))
    a.send(arr, copy=False)
    assert b.recv() == arr.tobytes()
    mv = memoryview(bytes(100000))
    a.send(mv, copy=False)
    assert b.recv() == bytes(100000)


def test_copy_false_small_is_copied_and_finished_tracker(pair):
    a, b = pair
    buf = bytearray(b"small")
    base = sys.getrefcount(buf)
    t = a.send(buf, copy=False, track=True)
    assert t is oxmq._FINISHED_TRACKER and t.done
    assert sys.getrefcount(buf) == base
    assert b.recv() == b"small"
    assert a.send(b"x", copy=True, track=True) is None


def test_message_tracker(make):
    a = make(oxmq.PUSH)
    b = make(oxmq.PULL)
    a.bind("inproc://tracker")
    b.connect("inproc://tracker")
    big = b"t" * 300_000
    tracker = a.send(big, copy=False, track=True)
    assert isinstance(tracker, oxmq.MessageTracker)
    assert not tracker.done  # queued in the pipe
    frame = b.recv(copy=False)  # inproc: the frame still uses the buffer
    with pytest.raises(oxmq.NotDone):
        tracker.wait(0.05)
    assert frame.bytes == big
    del frame
    tracker.wait(5)
    assert tracker.done


def test_tracker_multipart_and_frames(make):
    a = make(oxmq.PUSH)
    b = make(oxmq.PULL)
    a.bind("tcp://127.0.0.1:*")
    b.connect(a.last_endpoint.decode())
    parts = [b"a" * 100_000, b"b" * 100_000]
    t = a.send_multipart(parts, copy=False, track=True)
    assert isinstance(t, oxmq.MessageTracker)
    assert b.recv_multipart() == parts
    t.wait(5)
    assert t.done
    f = oxmq.Frame(b"c" * 100_000, track=True)
    assert isinstance(f.tracker, oxmq.MessageTracker)
    a.send(f, copy=False)
    assert b.recv() == f.bytes
    del f
    gc.collect()


def test_message_tracker_waits_for_every_native_tracker_and_peer(make):
    # One wait of the core for every native tracker, the peers' included.
    a = make(oxmq.PUSH)
    b = make(oxmq.PULL)
    a.bind("inproc://tracker-all")
    b.connect("inproc://tracker-all")
    t1 = a.send(b"1" * 300_000, copy=False, track=True)
    t2 = a.send(b"2" * 300_000, copy=False, track=True)
    both = oxmq.MessageTracker(t1, oxmq.MessageTracker(t2))
    f1, f2 = b.recv(copy=False), b.recv(copy=False)
    del f1
    t1.wait(5)
    with pytest.raises(oxmq.NotDone):
        both.wait(0.05)  # t2's buffer is still in f2
    assert not both.done
    del f2
    both.wait(float("inf"))  # no finite deadline: as forever
    assert both.done and t2.done


def test_message_tracker_python_api():
    import threading

    ev = threading.Event()
    mt = oxmq.MessageTracker(ev)
    assert not mt.done
    with pytest.raises(oxmq.NotDone):
        mt.wait(0.01)
    ev.set()
    assert mt.done
    mt.wait()
    outer = oxmq.MessageTracker(mt)
    assert outer.done
    with pytest.raises(TypeError):
        oxmq.MessageTracker(5)
    assert oxmq._FINISHED_TRACKER.done


def test_many_zero_copy_sends_release_everything(make):
    a = make(oxmq.PUSH)
    b = make(oxmq.PULL)
    a.bind("inproc://many")
    b.connect("inproc://many")
    bufs = [bytearray(70_000) for _ in range(200)]
    bases = [sys.getrefcount(x) for x in bufs]
    for x in bufs:
        a.send(x, copy=False)
    del x
    for _ in range(len(bufs)):
        b.recv()
    a.send(b"end")  # a later call drains
    b.recv()
    assert [sys.getrefcount(x) for x in bufs] == bases
