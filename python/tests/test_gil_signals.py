"""Blocking calls release the GIL and are interruptible by Ctrl-C (SIGINT)."""

import os
import signal
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
