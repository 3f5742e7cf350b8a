"""Context API: instance, term/destroy, default options, ETERM."""

import threading
import time

import pytest

import oxmq


def test_instance_is_shared():
    a = oxmq.Context.instance()
    b = oxmq.Context.instance()
    assert a is b
    a.term()
    c = oxmq.Context.instance()
    assert c is not a and not c.closed


def test_term_and_closed():
    ctx = oxmq.Context()
    assert not ctx.closed
    s = ctx.socket(oxmq.PUSH)
    s.close()
    ctx.term()
    assert ctx.closed
    with pytest.raises(oxmq.ZMQError):
        ctx.socket(oxmq.PUSH)


def test_context_manager():
    with oxmq.Context() as ctx:
        s = ctx.socket(oxmq.PAIR)
        s.close()
    assert ctx.closed


def test_destroy_closes_sockets():
    ctx = oxmq.Context()
    socks = [ctx.socket(oxmq.PUSH) for _ in range(3)]
    socks[0].connect("tcp://127.0.0.1:1")
    socks[0].send(b"lingering", oxmq.NOBLOCK) if False else None
    ctx.destroy(linger=0)
    assert all(s.closed for s in socks)
    assert ctx.closed


def test_default_socket_options():
    ctx = oxmq.Context()
    ctx.linger = 0
    ctx.rcvhwm = 17
    ctx.subscribe = b""  # not applicable to most types: silently skipped
    assert ctx.linger == 0
    assert ctx.sockopts[oxmq.LINGER] == 0
    s = ctx.socket(oxmq.PULL)
    assert s.linger == 0 and s.rcvhwm == 17
    sub = ctx.socket(oxmq.SUB)
    assert sub.linger == 0
    del ctx.rcvhwm
    assert oxmq.RCVHWM not in ctx.sockopts
    ctx.setsockopt(oxmq.SNDHWM, 3)
    assert ctx.getsockopt(oxmq.SNDHWM) == 3
    assert ctx.socket(oxmq.PUSH).sndhwm == 3
    with pytest.raises(AttributeError):
        ctx.rcvtimeo
    ctx.destroy(linger=0)


def test_context_options():
    ctx = oxmq.Context()
    assert ctx.get(oxmq.IO_THREADS) == 1
    assert ctx.io_threads == 1
    ctx.max_sockets = 100
    assert ctx.get(oxmq.MAX_SOCKETS) == 100
    ctx.set(oxmq.IPV6, 1)
    assert ctx.get(oxmq.IPV6) == 1
    with pytest.raises(oxmq.ZMQError) as ei:
        ctx.set(12345, 1)
    assert ei.value.errno == oxmq.EINVAL
    ctx.term()
    ctx2 = oxmq.Context(io_threads=2)
    assert ctx2.io_threads == 2
    ctx2.term()


def test_term_interrupts_blocking_recv_with_eterm():
    ctx = oxmq.Context()
    s = ctx.socket(oxmq.PULL)
    s.bind("inproc://eterm")
    errors = []

    def worker():
        try:
            s.recv()
        except oxmq.ContextTerminated as e:
            errors.append(e)
        finally:
            s.close()

    t = threading.Thread(target=worker)
    t.start()
    time.sleep(0.2)
    t0 = time.monotonic()
    ctx.term()  # returns once the worker has closed its socket
    t.join(5)
    assert not t.is_alive()
    assert len(errors) == 1 and errors[0].errno == oxmq.ETERM
    assert time.monotonic() - t0 < 3


def test_calls_after_term_raise_eterm():
    ctx = oxmq.Context()
    s = ctx.socket(oxmq.PULL)
    s.bind("inproc://after")
    threading.Thread(target=ctx.term).start()
    time.sleep(0.1)
    with pytest.raises(oxmq.ContextTerminated):
        s.recv()
    with pytest.raises(oxmq.ContextTerminated):
        oxmq.Poller().register(s) or oxmq.zmq_poll([(s, oxmq.POLLIN)], 100)
    s.close()
