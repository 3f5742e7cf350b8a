"""oxmq <-> pyzmq (libzmq 4.3.5): every socket-type pair, tcp and ipc, in one
process and across processes; and every pair over inproc within oxmq."""

import os
import socket as pysocket
import subprocess
import sys
import threading

import pytest

import oxmq
from interop_sides import PATTERNS, run_side

zmq = pytest.importorskip("zmq")

HERE = os.path.dirname(os.path.abspath(__file__))


def _free_tcp_endpoint():
    with pysocket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return "tcp://127.0.0.1:%d" % s.getsockname()[1]


def _endpoint(transport, tmp_path, name):
    if transport == "tcp":
        return _free_tcp_endpoint()
    return "ipc://" + str(tmp_path / name)


def _run_threads(libs, pattern, endpoint, binder, flag):
    errors = []

    def side(i):
        try:
            run_side(libs[i], pattern, i, endpoint, binder == i, stop=flag.is_set)
        except BaseException as e:  # noqa: BLE001
            errors.append((i, e))
        finally:
            if i == 1:
                flag.set()

    # the binder starts first so that connect-before-bind is not the only case
    order = [binder, 1 - binder]
    threads = [threading.Thread(target=side, args=(i,)) for i in order]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads), "interop side hung"
    assert not errors, errors


@pytest.mark.parametrize("binder", [0, 1], ids=["side0-binds", "side1-binds"])
@pytest.mark.parametrize("oxmq_side", [0, 1], ids=["oxmq-side0", "oxmq-side1"])
@pytest.mark.parametrize("transport", ["tcp", "ipc"])
@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_in_process(pattern, transport, oxmq_side, binder, tmp_path):
    libs = [zmq, zmq]
    libs[oxmq_side] = oxmq
    endpoint = _endpoint(transport, tmp_path, "s")
    _run_threads(libs, pattern, endpoint, binder, threading.Event())


@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_inproc_within_oxmq(pattern):
    ctx = oxmq.Context()
    flag = threading.Event()
    errors = []
    endpoint = "inproc://interop-" + pattern

    def side(i):
        try:
            run_side(oxmq, pattern, i, endpoint, i == 1, stop=flag.is_set, ctx=ctx)
        except BaseException as e:  # noqa: BLE001
            errors.append((i, e))
        finally:
            if i == 1:
                flag.set()

    threads = [threading.Thread(target=side, args=(i,)) for i in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    ctx.term()
    assert not errors, errors


@pytest.mark.parametrize("binder", [0, 1], ids=["side0-binds", "side1-binds"])
@pytest.mark.parametrize("oxmq_in", ["parent", "child"])
@pytest.mark.parametrize("transport", ["tcp", "ipc"])
@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_cross_process(pattern, transport, oxmq_in, binder, tmp_path):
    parent_lib, child_lib = (oxmq, "zmq") if oxmq_in == "parent" else (zmq, "oxmq")
    endpoint = _endpoint(transport, tmp_path, "x")
    flag = tmp_path / "stop"
    # the parent plays side 0, the child side 1
    child = subprocess.Popen(
        [sys.executable, os.path.join(HERE, "interop_sides.py"), child_lib, pattern, "1", endpoint, "1" if binder == 1 else "0", str(flag)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=HERE,
    )
    try:
        run_side(parent_lib, pattern, 0, endpoint, binder == 0, stop=lambda: child.poll() is not None)
        out, err = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 0 and b"side-ok" in out, err.decode(errors="replace")
