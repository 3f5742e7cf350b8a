"""os.fork() with an oxmq context open (libzmq's test_fork, from Python).

Python forks without telling any library (no pthread_atfork hook of ours
runs), so the child finds the parent's context and sockets as they were,
without the parent's I/O thread. Closing and terminating them there must
wait for nothing and disturb nothing in the parent, and a new context must
work; so must the child's interpreter exit, which finalizes them.
"""

import os
import subprocess
import sys
import textwrap
import threading
import time
import warnings

import pytest

import oxmq as zmq

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def wait_child(pid, timeout=20.0):
    """The child's exit code; kills it and fails if it hangs."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.01)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    pytest.fail("the fork child hung")


def test_child_closes_and_terms_the_parents_context(ctx, make):
    pull = make(zmq.PULL)
    pull.bind("tcp://127.0.0.1:*")
    ep = pull.last_endpoint.decode()
    push = make(zmq.PUSH)
    push.connect(ep)
    push.send(b"parent")
    assert pull.recv() == b"parent"

    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            started = time.monotonic()
            push.close()
            pull.close()
            ctx.term()
            assert ctx.closed
            assert time.monotonic() - started < 5
            child_ctx = zmq.Context()
            out = child_ctx.socket(zmq.PUSH)
            out.connect(ep)
            for _ in range(5):
                out.send(b"Hello")
            out.close()
            child_ctx.term()
            code = 0
        finally:
            os._exit(code)

    try:
        for _ in range(5):
            assert pull.recv() == b"Hello"
    finally:
        # a hung child is killed, whatever happened here
        code = wait_child(pid)
    assert code == 0
    # The child closed nothing of the parent's.
    push.send(b"still here")
    assert pull.recv() == b"still here"


def test_instance_is_new_in_the_child():
    parent = zmq.Context.instance()
    pid = os.fork()
    if pid == 0:
        ok = zmq.Context.instance() is not parent and not zmq.Context.instance().closed
        os._exit(0 if ok else 1)
    assert wait_child(pid) == 0
    assert zmq.Context.instance() is parent


CHILD_EXITS_NORMALLY = textwrap.dedent(
    """
    import os, sys
    import oxmq as zmq

    ctx = zmq.Context()
    pull = ctx.socket(zmq.PULL)
    pull.rcvtimeo = 5000
    pull.bind("ipc://" + sys.argv[1])
    push = ctx.socket(zmq.PUSH)
    push.connect("ipc://" + sys.argv[1])
    push.send(b"x")
    assert pull.recv() == b"x"
    pid = os.fork()
    if pid == 0:
        # A normal exit: the interpreter finalizes the parent's open
        # context and sockets (linger is infinite by default).
        sys.exit(0)
    _, status = os.waitpid(pid, 0)
    push.send(b"y")
    assert pull.recv() == b"y"
    push.close()
    pull.close()
    ctx.term()
    sys.exit(os.waitstatus_to_exitcode(status))
    """
)


def test_child_exit_finalizes_the_parents_open_context(tmp_path):
    path = str(tmp_path / "fork.ipc")
    result = subprocess.run(
        [sys.executable, "-c", CHILD_EXITS_NORMALLY, path], timeout=30, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


def wait_children(pids, timeout=30.0):
    """Each child's exit code, or "hung" for one killed at the deadline."""
    deadline = time.monotonic() + timeout
    codes = {}
    while len(codes) < len(pids) and time.monotonic() < deadline:
        for pid in pids:
            if pid not in codes:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done == pid:
                    codes[pid] = os.waitstatus_to_exitcode(status)
        time.sleep(0.01)
    for pid in pids:
        if pid not in codes:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            codes[pid] = "hung"
    return [codes[pid] for pid in pids]


def child_uses_a_new_context():
    """In a fork child: a zero-copy round trip on a context of its own."""
    own = zmq.Context()
    a = own.socket(zmq.PAIR)
    b = own.socket(zmq.PAIR)
    a.rcvtimeo = b.rcvtimeo = a.sndtimeo = 5000
    a.copy_threshold = 0
    a.bind("inproc://child")
    b.connect("inproc://child")
    a.send(bytearray(b"child"), copy=False)
    assert b.recv() == b"child"
    a.close(linger=0)
    b.close(linger=0)
    own.term()


def fork_beside_a_busy_sender(pull, send_one, in_child, forks=300):
    """Fork `forks` times while a thread sends with `send_one()` (to `pull`
    over tcp) and another drains `pull`; each child runs `in_child()` (given
    what `send_one` returned last) and exits 0 if it returns. Asserts that
    every child did so, none failing or hanging."""
    last = [send_one()]
    stop_sending = threading.Event()
    sender_done = threading.Event()

    def send():
        try:
            while not stop_sending.is_set():
                last[0] = send_one()
        finally:
            sender_done.set()

    def drain():
        while not sender_done.is_set():
            try:
                pull.recv(zmq.NOBLOCK)
            except zmq.Again:
                time.sleep(0.0005)

    threads = [threading.Thread(target=send), threading.Thread(target=drain)]
    for t in threads:
        t.start()
    pids = []
    try:
        for _ in range(forks):
            sent_last = last[0]
            with warnings.catch_warnings():
                # Python 3.12 warns of forking a threaded process: that is the point.
                warnings.simplefilter("ignore", DeprecationWarning)
                pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    in_child(sent_last)
                    code = 0
                finally:
                    os._exit(code)
            pids.append(pid)
    finally:
        stop_sending.set()
        for t in threads:
            t.join(10)
        codes = wait_children(pids)
    failed = [c for c in codes if c != 0]
    assert not failed, "%d of %d children failed or hung: %s" % (len(failed), len(pids), failed)


def test_child_of_a_busy_zero_copy_sender_uses_a_new_context(make):
    # The parent's I/O thread hands each zero-copy buffer it is done with
    # back to Python through a queue that Python threads empty in their
    # socket calls: a fork landing while the I/O thread held a lock on it
    # left that lock held for good in the child, whose socket calls (which
    # empty the queue) and I/O thread (which fills it) then hung. The I/O
    # thread held such a lock for a small part of its time: with the lock,
    # 32 and 10 of 300 children hung in two runs (load average 18 on 2 cores).
    pull = make(zmq.PULL)
    pull.bind("tcp://127.0.0.1:*")
    push = make(zmq.PUSH, copy_threshold=0)
    push.connect(pull.last_endpoint.decode())
    body = bytearray(b"z" * 64)
    fork_beside_a_busy_sender(pull, lambda: push.send(body, copy=False),
                              lambda _: child_uses_a_new_context())


def child_lends_and_tracks(parents_tracker):
    """In a fork child: an exact bytes lent by reference on a context of its
    own (inproc hands that very object back), a tracked zero-copy send, and
    a wait on the parent's last tracker, which may never be done here."""
    own = zmq.Context()
    a = own.socket(zmq.PAIR)
    b = own.socket(zmq.PAIR)
    a.rcvtimeo = b.rcvtimeo = a.sndtimeo = 5000
    a.bind("inproc://child-lends")
    b.connect("inproc://child-lends")
    body = b"c" * 8192
    a.send(body)
    assert b.recv() is body
    # copy=False lends from the socket's copy threshold (64 KiB) up.
    tracker = a.send(bytearray(b"t" * 65536), copy=False, track=True)
    assert b.recv() == b"t" * 65536
    tracker.wait(5)
    try:
        parents_tracker.wait(0.01)
    except zmq.NotDone:
        pass
    a.close(linger=0)
    b.close(linger=0)
    own.term()


def test_child_of_a_busy_lending_and_tracking_sender_lends_and_tracks(make):
    # The parent's I/O thread, done with a message, takes back what Python
    # lent: it dropped the lent bytes' entry from a map under a lock, and set
    # the send's tracker under another. A fork landing while it held either
    # left it held for good in the child, whose first lent send or receive
    # (the map) or wait on that tracker then hung.
    pull = make(zmq.PULL)
    pull.bind("tcp://127.0.0.1:*")
    push = make(zmq.PUSH, sndhwm=100)
    push.connect(pull.last_endpoint.decode())
    body = b"L" * 8192  # an exact bytes from 4 KiB: lent, not copied
    tracked = bytearray(b"T" * 65536)  # lent by copy=False: the copy threshold

    def send_one():
        push.send(body)
        return push.send(tracked, copy=False, track=True)

    fork_beside_a_busy_sender(pull, send_one, child_lends_and_tracks)
