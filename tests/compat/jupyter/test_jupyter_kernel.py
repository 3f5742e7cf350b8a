"""Jupyter, unmodified, on oxmq: jupyter_client starts an ipykernel with
``import zmq`` resolving to oxmq in both processes (OXMQ_AS_ZMQ=1, inherited
by the kernel), then runs a cell with output, an error, kernel_info, an
interrupt, a restart and a shutdown.

Run with OXMQ_AS_ZMQ=1 (mk/compat/jupyter.mk does); the first test refuses to run
otherwise, so this can never silently test real pyzmq.
"""

from __future__ import annotations

import os
import queue
import time

import pytest

import zmq

TIMEOUT = 60


@pytest.fixture(scope="module")
def kernel():
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3", startup_timeout=TIMEOUT)
    yield km, kc
    kc.stop_channels()
    if km.is_alive():
        km.shutdown_kernel(now=True)


def run_cell(kc, code, timeout=TIMEOUT):
    """Execute ``code``; return (reply content, stdout text, error outputs)."""
    stdout = []
    errors = []

    def hook(msg):
        kind = msg["msg_type"]
        if kind == "stream" and msg["content"]["name"] == "stdout":
            stdout.append(msg["content"]["text"])
        elif kind == "error":
            errors.append(msg["content"])

    reply = kc.execute_interactive(code, timeout=timeout, output_hook=hook)
    return reply["content"], "".join(stdout), errors


def test_this_process_uses_oxmq():
    assert os.environ.get("OXMQ_AS_ZMQ") == "1", "run with OXMQ_AS_ZMQ=1 (make jupyter-test)"
    assert zmq.__name__ == "oxmq"
    import jupyter_client.session

    assert jupyter_client.session.zmq is zmq


def test_kernel_info(kernel):
    km, kc = kernel
    reply = kc.kernel_info(reply=True, timeout=TIMEOUT)
    assert reply["content"]["status"] == "ok"
    assert reply["content"]["language_info"]["name"] == "python"
    assert reply["content"]["implementation"] == "ipython"


def test_kernel_process_uses_oxmq(kernel):
    km, kc = kernel
    content, out, errors = run_cell(kc, "import zmq, sys; print(zmq.__name__, 'zmq' in sys.modules)")
    assert content["status"] == "ok", errors
    assert out.strip() == "oxmq True"


def test_cell_with_output(kernel):
    km, kc = kernel
    content, out, errors = run_cell(kc, "x = 6 * 7\nfor i in range(3):\n    print('line', i)\nprint(x)")
    assert content["status"] == "ok"
    assert out == "line 0\nline 1\nline 2\n42\n"
    assert not errors


def test_cell_with_error(kernel):
    km, kc = kernel
    content, out, errors = run_cell(kc, "print('before')\n1 / 0")
    assert content["status"] == "error"
    assert content["ename"] == "ZeroDivisionError"
    assert out == "before\n"
    assert errors and errors[0]["ename"] == "ZeroDivisionError"


def test_interrupt(kernel):
    km, kc = kernel
    msg_id = kc.execute("import time\nprint('sleeping', flush=True)\ntime.sleep(60)")
    # wait until the cell is running, then interrupt it
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        try:
            msg = kc.get_iopub_msg(timeout=1)
        except queue.Empty:
            continue
        if msg["msg_type"] == "stream" and "sleeping" in msg["content"]["text"]:
            break
    else:
        pytest.fail("the cell never started")
    t0 = time.monotonic()
    km.interrupt_kernel()
    while True:
        reply = kc.get_shell_msg(timeout=TIMEOUT)
        if reply["parent_header"].get("msg_id") == msg_id:
            break
    assert reply["content"]["status"] == "error"
    assert reply["content"]["ename"] == "KeyboardInterrupt"
    assert time.monotonic() - t0 < 30
    # the kernel still works after the interrupt
    content, out, _ = run_cell(kc, "print('after interrupt')")
    assert content["status"] == "ok" and out == "after interrupt\n"


def test_restart(kernel):
    km, kc = kernel
    content, _, _ = run_cell(kc, "survivor = 1")
    assert content["status"] == "ok"
    old_pid = km.provisioner.process.pid if km.provisioner else None
    km.restart_kernel(now=True)
    kc.wait_for_ready(timeout=TIMEOUT)
    if old_pid is not None:
        assert km.provisioner.process.pid != old_pid
    content, out, errors = run_cell(kc, "print('survivor' in dir())")
    assert content["status"] == "ok", errors
    assert out.strip() == "False"


def test_shutdown(kernel):
    km, kc = kernel
    assert km.is_alive()
    km.shutdown_kernel(now=False)
    assert not km.is_alive()
