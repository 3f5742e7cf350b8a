"""Blocking calls release the GIL and are interruptible by Ctrl-C (SIGINT)."""

import os
import signal
import sys
import threading
import time

import pytest

import oxmq


@pytest.fixture(autouse=True)
def _sigint_raises():
    """Python leaves SIGINT ignored if it was ignored at start-up (a job put
    in the background by a script); these tests need KeyboardInterrupt."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


def _sigint_later(delay):
    main = threading.main_thread().ident

    def fire():
        time.sleep(delay)
        signal.pthread_kill(main, signal.SIGINT)

    t = threading.Thread(target=fire, daemon=True)
    t.start()
    return t


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="needs the main thread")
@pytest.mark.parametrize(
    "what", ["recv", "recv_multipart", "recv_string", "send", "poller", "socket_poll", "tracker", "proxy", "proxy_steerable"]
)
def test_ctrl_c_interrupts_blocking_call(make, what):
    pull = make(oxmq.PULL, rcvtimeo=-1)
    pull.bind("inproc://sigint-%s" % what)
    push = make(oxmq.PUSH, sndtimeo=-1)
    push.bind("inproc://sigint-push-%s" % what)  # no peer: send blocks
    calls = {
        "recv": lambda: pull.recv(),
        "recv_multipart": lambda: pull.recv_multipart(),
        "recv_string": lambda: pull.recv_string(),
        "send": lambda: push.send(b"x"),
        "poller": lambda: oxmq.zmq_poll([(pull, oxmq.POLLIN)], -1),
        "socket_poll": lambda: pull.poll(),
        "tracker": None,
        # nothing arrives: the core proxy waits, running signal handlers
        "proxy": lambda: oxmq.proxy(pull, push),
        "proxy_steerable": lambda: oxmq.proxy_steerable(pull, push, None, make(oxmq.PAIR)),
    }
    if what == "tracker":
        peer = make(oxmq.PULL)
        peer.connect("inproc://sigint-push-tracker")
        tracker = push.send(b"t" * 100_000, copy=False, track=True)
        frame = peer.recv(copy=False)  # holds the buffer: never done
        calls["tracker"] = lambda: tracker.wait()
    _sigint_later(0.2)
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        calls[what]()
    elapsed = time.monotonic() - t0
    assert 0.15 < elapsed < 1.5, elapsed
    if what == "tracker":
        del frame


def test_blocking_recv_releases_the_gil(make):
    pull = make(oxmq.PULL, rcvtimeo=-1)
    pull.bind("inproc://gil")
    push = make(oxmq.PUSH)
    push.connect("inproc://gil")
    counter = [0]
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            counter[0] += 1

    def blocked_recv(out):
        out.append(pull.recv())

    out = []
    receiver = threading.Thread(target=blocked_recv, args=(out,))
    receiver.start()
    time.sleep(0.05)
    spinner = threading.Thread(target=spin)
    spinner.start()
    time.sleep(0.3)
    progress = counter[0]
    stop.set()
    spinner.join()
    # the spinner ran freely while the receiver was blocked
    assert progress > 10_000
    push.send(b"done")
    receiver.join(5)
    assert out == [b"done"]


def test_blocking_poll_releases_the_gil(make):
    pull = make(oxmq.PULL)
    pull.bind("inproc://gil-poll")
    counter = [0]
    done = threading.Event()

    def poll():
        oxmq.zmq_poll([(pull, oxmq.POLLIN)], 300)
        done.set()

    t = threading.Thread(target=poll)
    t.start()
    while not done.is_set():
        counter[0] += 1
    t.join()
    assert counter[0] > 10_000


class _GilWaiter:
    """A thread that wants the GIL once `go` is set and records that it got
    it. With the switch interval at 100 s the main thread never hands the
    GIL over by itself, so `ran` is set only if a call of the main thread
    releases the GIL."""

    def __init__(self):
        self.go = threading.Event()
        self.ran = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        self.go.wait()
        self.ran.set()

    def wait_during(self, call, timeout=10.0):
        """Call `call()` repeatedly, GIL held in between, until the waiter ran."""
        old = sys.getswitchinterval()
        sys.setswitchinterval(100.0)
        try:
            self.go.set()
            deadline = time.monotonic() + timeout
            while not self.ran.is_set() and time.monotonic() < deadline:
                call()
            return self.ran.is_set()
        finally:
            sys.setswitchinterval(old)
            self.thread.join(5)


def test_large_send_copy_releases_the_gil(make):
    """A copying send of a large mutable buffer copies with the GIL released
    (as pyzmq's does), so another thread, an inproc receiver above all, runs
    meanwhile. A PUB without subscribers drops each message after the copy:
    the send itself never blocks."""
    pub = make(oxmq.PUB)
    pub.bind("inproc://gil-send-copy")
    ba = bytearray(1 << 20)
    waiter = _GilWaiter()
    assert waiter.wait_during(lambda: pub.send(ba))


def test_large_recv_copy_releases_the_gil(make):
    """recv() fills the `bytes` it returns for a large body with the GIL
    released. The sender lends an exact bytes (no copy) and the receiver
    polls with DONTWAIT, so only the receive's copy can release the GIL."""
    pull = make(oxmq.PULL, rcvtimeo=5000)
    port = pull.bind_to_random_port("tcp://127.0.0.1")
    push = make(oxmq.PUSH)
    push.connect("tcp://127.0.0.1:%d" % port)
    big = bytes(range(256)) * 4096
    push.send(big)
    assert pull.recv() == big  # connected

    def one():
        push.send(big)
        while True:
            try:
                got = pull.recv(oxmq.DONTWAIT)
                break
            except oxmq.Again:
                pass
        assert got == big and got is not big

    waiter = _GilWaiter()
    assert waiter.wait_during(one)


@pytest.mark.parametrize("size", [65535, 65536, 65537, 1 << 20, (4 << 20) + 3])
def test_large_copies_keep_every_byte(pair, size):
    """Copies made without the GIL (from 64 KiB) carry every byte, both ways:
    a mutable buffer copied on send, and the `bytes` a receive fills."""
    a, b = pair
    pattern = bytes(range(251)) * (size // 251 + 1)
    ba = bytearray(pattern[:size])
    a.send(ba)
    ba[0] ^= 0xFF  # the copy was taken at send time
    got = b.recv()
    assert type(got) is bytes and len(got) == size and got == pattern[:size]
    a.send_multipart([bytearray(pattern[1 : size + 1]), b"tail", memoryview(pattern)[:size]])
    parts = b.recv_multipart()
    assert [len(p) for p in parts] == [size, 4, size]
    assert parts[0] == pattern[1 : size + 1] and parts[1] == b"tail" and parts[2] == pattern[:size]


def test_rcvtimeo_is_honoured_across_slices(make):
    pull = make(oxmq.PULL, rcvtimeo=350)
    pull.bind("inproc://slices")
    t0 = time.monotonic()
    with pytest.raises(oxmq.Again):
        pull.recv()
    assert 0.33 < time.monotonic() - t0 < 2


def test_two_threads_inproc_throughput_smoke(make):
    a = make(oxmq.PAIR)
    b = make(oxmq.PAIR)
    a.bind("inproc://tp")
    b.connect("inproc://tp")
    n = 100_000

    def sender():
        send = a.send
        for _ in range(n):
            send(b"abcd")

    t = threading.Thread(target=sender)
    t0 = time.monotonic()
    t.start()
    recv = b.recv
    for _ in range(n):
        recv()
    t.join()
    assert time.monotonic() - t0 < 30


_ = os
