"""pyzmq's run-time settings, each tested on pyzmq and on oxmq alike.

Every test takes ``zmq``, once the real pyzmq from the venv and once oxmq, and
asserts what pyzmq does when a program sets: ``zmq.COPY_THRESHOLD``,
``Socket.copy_threshold``, the per-call ``copy``/``track`` arguments,
``Frame(copy=, copy_threshold=, track=)``, ``MessageTracker.wait`` timeouts,
``Context._socket_class``, ``Context.instance()`` after ``fork`` or after
``Context._instance`` is reset, and the classes' ``_repr_cls``.
Settings are made with ``monkeypatch`` so that each test undoes its own.
"""

import gc
import os
import time

import pytest

import oxmq
import zmq as pyzmq

SMALL = 100
LARGE = 100_000


@pytest.fixture(params=["pyzmq", "oxmq"])
def zmq(request):
    return pyzmq if request.param == "pyzmq" else oxmq


@pytest.fixture
def ctx(zmq):
    c = zmq.Context()
    yield c
    c.destroy(linger=0)


def inproc_pair(zmq, ctx, name):
    push = ctx.socket(zmq.PUSH)
    pull = ctx.socket(zmq.PULL)
    for s in (push, pull):
        s.linger = 0
        s.rcvtimeo = 5000
        s.sndtimeo = 5000
    push.bind("inproc://" + name)
    pull.connect("inproc://" + name)
    return push, pull


def wait_done(tracker, timeout=5.0):
    """The tracker finishes once the library has let go (pyzmq signals it from a thread)."""
    deadline = time.monotonic() + timeout
    while not tracker.done and time.monotonic() < deadline:
        gc.collect()
        time.sleep(0.01)
    return tracker.done


def test_default_copy_threshold(zmq, ctx):
    assert zmq.COPY_THRESHOLD == 65536
    s = ctx.socket(zmq.PUSH)
    assert s.copy_threshold == 65536
    s.close()


def test_module_copy_threshold_seeds_new_sockets(zmq, ctx, monkeypatch):
    before = ctx.socket(zmq.PUSH)
    monkeypatch.setattr(zmq, "COPY_THRESHOLD", 1)
    after = ctx.socket(zmq.PUSH)
    # read at creation only: an existing socket keeps its threshold
    assert after.copy_threshold == 1
    assert before.copy_threshold == 65536
    explicit = ctx.socket(zmq.PUSH, copy_threshold=10)
    assert explicit.copy_threshold == 10
    for s in (before, after, explicit):
        s.close()


def test_module_copy_threshold_governs_tracked_sends(zmq, ctx, monkeypatch):
    monkeypatch.setattr(zmq, "COPY_THRESHOLD", 1)
    push, pull = inproc_pair(zmq, ctx, "module-threshold")
    # 100 bytes is now at or above the threshold: lent, not done until received
    tracker = push.send(bytearray(SMALL), copy=False, track=True)
    assert tracker is not None and not tracker.done
    with pytest.raises(zmq.NotDone):
        tracker.wait(0.1)
    assert pull.recv() == bytes(SMALL)
    assert wait_done(tracker)


def test_socket_copy_threshold(zmq, ctx):
    push, pull = inproc_pair(zmq, ctx, "socket-threshold")
    push.copy_threshold = 1000
    assert push.copy_threshold == 1000
    below = push.send(bytearray(999), copy=False, track=True)
    # below: copied, and the tracker is done at once
    assert below.done
    above = push.send(bytearray(1000), copy=False, track=True)
    # at the threshold: lent until the receiver takes it
    assert not above.done
    assert pull.recv() == bytes(999)
    assert pull.recv() == bytes(1000)
    assert wait_done(above)


def test_copy_threshold_zero_lends_everything(zmq, ctx):
    push, pull = inproc_pair(zmq, ctx, "threshold-zero")
    push.copy_threshold = 0
    t = push.send(bytearray(10), copy=False, track=True)
    assert not t.done
    pull.recv()
    assert wait_done(t)


def test_per_call_copy_and_track(zmq, ctx):
    push, pull = inproc_pair(zmq, ctx, "per-call")
    # copy=True: nothing to track
    assert push.send(b"x" * LARGE) is None
    assert push.send(bytearray(LARGE), copy=True, track=True) is None
    # copy=False below the threshold: copied, the finished tracker, tracked or not
    small = push.send(bytearray(SMALL), copy=False)
    assert small is not None and small.done
    assert push.send(bytearray(SMALL), copy=False, track=True).done
    # copy=False at or above: no tracker unless asked; a tracked one waits for the receiver
    assert push.send(bytearray(LARGE), copy=False) is None
    big = push.send(bytearray(LARGE), copy=False, track=True)
    assert not big.done
    for n in (LARGE, LARGE, SMALL, SMALL, LARGE):
        assert len(pull.recv()) == n
    assert len(pull.recv()) == LARGE
    assert wait_done(big)


def test_send_frame_returns_its_tracker(zmq, ctx):
    push, pull = inproc_pair(zmq, ctx, "frame-tracker")
    f = zmq.Frame(bytearray(LARGE), track=True)
    # the frame's own tracker, even with copy=True
    t = push.send(f, copy=True)
    assert t is f.tracker
    with pytest.raises(ValueError):
        push.send(zmq.Frame(b"untracked"), copy=False, track=True)
    pull.recv()
    del f
    assert wait_done(t)


def test_frame_outside_socket_follows_module_threshold(zmq, monkeypatch):
    # default threshold: 100 bytes are copied, so a tracked Frame is done at once
    assert zmq.Frame(bytearray(SMALL), track=True).tracker.done
    big = zmq.Frame(bytearray(LARGE), track=True)
    assert not big.tracker.done
    assert zmq.Frame(bytearray(SMALL)).tracker is None
    monkeypatch.setattr(zmq, "COPY_THRESHOLD", 10)
    lent = zmq.Frame(bytearray(SMALL), track=True)
    assert not lent.tracker.done
    # per-call: copy_threshold= and copy= win over the module's threshold
    assert zmq.Frame(bytearray(SMALL), track=True, copy_threshold=1000).tracker.done
    assert zmq.Frame(bytearray(LARGE), track=True, copy=True).tracker.done
    assert not zmq.Frame(bytearray(5), track=True, copy=False).tracker.done
    # an unsent lent frame is done once it is gone
    tracker = lent.tracker
    del lent
    assert wait_done(tracker)


def test_frame_copy_shares_tracker(zmq):
    import copy

    f = zmq.Frame(bytearray(LARGE), track=True)
    assert copy.copy(f).tracker is f.tracker


def test_received_frame_tracker(zmq, ctx):
    push, pull = inproc_pair(zmq, ctx, "recv-track")
    push.send(b"a")
    push.send(b"b")
    assert pull.recv(copy=False).tracker is None
    assert pull.recv(copy=False, track=True).tracker.done


def test_tracker_wait_timing(zmq, ctx):
    push, pull = inproc_pair(zmq, ctx, "wait-timing")
    t = push.send(bytearray(LARGE), copy=False, track=True)
    start = time.monotonic()
    with pytest.raises(zmq.NotDone):
        t.wait(0.3)
    # waits the whole timeout, not less
    assert time.monotonic() - start >= 0.29
    with pytest.raises(zmq.NotDone):
        t.wait(0)
    pull.recv()
    gc.collect()
    # negative (and False): no timeout
    t.wait(-1)
    assert t.done
    t.wait(False)
    with pytest.raises(ValueError):
        zmq.MessageTracker(zmq.Frame(b"untracked"))


def test_context_socket_class(zmq, ctx, monkeypatch):
    class MySocket(zmq.Socket):
        pass

    class MyContext(zmq.Context):
        _socket_class = MySocket

    c = MyContext()
    s = c.socket(zmq.PUSH)
    assert type(s) is MySocket
    s.close()
    c.term()
    # assigned at run time on the class: read at each socket()
    monkeypatch.setattr(zmq.Context, "_socket_class", MySocket)
    s = ctx.socket(zmq.PUSH)
    assert type(s) is MySocket
    s.close()
    monkeypatch.undo()
    s = ctx.socket(zmq.PUSH)
    assert type(s) is zmq.Socket
    s.close()


def test_context_instance_reset(zmq, monkeypatch):
    monkeypatch.setattr(zmq.Context, "_instance", None)
    a = zmq.Context.instance()
    assert zmq.Context.instance() is a
    # a program may drop the shared context by resetting the class attribute
    zmq.Context._instance = None
    b = zmq.Context.instance()
    assert b is not a
    assert zmq.Context._instance is b
    a.term()
    b.term()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_context_instance_after_fork(zmq, monkeypatch):
    monkeypatch.setattr(zmq.Context, "_instance", None)
    parent = zmq.Context.instance()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            child = zmq.Context.instance()
            code = 0 if child is not parent and zmq.Context.instance() is child else 2
            child.term()
        finally:
            os._exit(code)
    os.close(w)
    os.close(r)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert zmq.Context.instance() is parent
    parent.term()


def test_repr_cls(zmq, ctx, monkeypatch):
    class Sub(zmq.Socket):
        _repr_cls = "my.Socket"

    s = ctx.socket(zmq.PUSH, socket_class=Sub)
    assert repr(s).startswith("<my.Socket(")
    s.close()
    # looked up on the exact class only, not inherited
    class SubSub(Sub):
        pass

    s = ctx.socket(zmq.PUSH, socket_class=SubSub)
    assert "SubSub" in repr(s)
    s.close()


def test_set_threshold_copies_copying_sends(zmq, ctx, monkeypatch):
    # oxmq's own policy (nothing set) lends an 8 KiB bytes even on a copying
    # send; setting a threshold, even pyzmq's default value, copies as pyzmq does
    payload = b"q" * 8192
    monkeypatch.setattr(zmq, "COPY_THRESHOLD", int("65536"))
    push, pull = inproc_pair(zmq, ctx, "module-set-copies")
    push.send(payload)
    got = pull.recv()
    assert got == payload and got is not payload
    monkeypatch.undo()
    push2, pull2 = inproc_pair(zmq, ctx, "socket-set-copies")
    push2.copy_threshold = 65536
    push2.send(payload)
    got = pull2.recv()
    assert got == payload and got is not payload
