"""oxmq.green: blocking calls, polls and the device wait in gevent's hub
(the core's cooperative wait), so other greenlets run meanwhile."""

import pytest

gevent = pytest.importorskip("gevent")

import oxmq.green as zmq  # noqa: E402


@pytest.fixture
def green_pair():
    ctx = zmq.Context()
    pull = ctx.socket(zmq.PULL)
    pull.bind("inproc://green-pair")
    push = ctx.socket(zmq.PUSH)
    push.connect("inproc://green-pair")
    yield push, pull
    push.close(linger=0)
    pull.close(linger=0)
    ctx.term()


def test_a_blocked_recv_lets_other_greenlets_run(green_pair):
    push, pull = green_pair
    with pytest.warns(UserWarning):
        pull.setsockopt(zmq.RCVTIMEO, 5000)  # a recv that blocked the thread would fail, not hang
    gevent.spawn_later(0.05, push.send, b"hi")
    assert pull.recv() == b"hi"  # the sender ran while this waited


def test_a_green_recv_times_out_with_again(green_pair):
    _, pull = green_pair
    with pytest.warns(UserWarning):
        pull.setsockopt(zmq.RCVTIMEO, 30)
    with pytest.raises(zmq.Again):
        pull.recv()


def test_a_green_poller_waits_in_the_hub(green_pair):
    push, pull = green_pair
    poller = zmq.Poller()
    poller.register(pull, zmq.POLLIN)
    assert poller.poll(30) == []
    gevent.spawn_later(0.05, push.send, b"x")
    assert poller.poll(5000) == [(pull, zmq.POLLIN)]
    assert pull.recv() == b"x"
