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
import time

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
