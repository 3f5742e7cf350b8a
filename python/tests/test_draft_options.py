"""libzmq's draft socket options under pyzmq's names (s3-draftopts).

pyzmq's wheel has no draft API, so these check oxmq alone, against libzmq's
documented behaviour (the core's tests hold the details).
"""

import pytest

import oxmq as zmq


def test_router_notify(make):
    router = make(zmq.ROUTER)
    assert router.getsockopt(zmq.ROUTER_NOTIFY) == 0
    router.setsockopt(zmq.ROUTER_NOTIFY, zmq.NOTIFY_CONNECT | zmq.NOTIFY_DISCONNECT)
    assert router.getsockopt(zmq.ROUTER_NOTIFY) == 3
    with pytest.raises(zmq.ZMQError) as e:
        make(zmq.DEALER).setsockopt(zmq.ROUTER_NOTIFY, 1)
    assert e.value.errno == zmq.EINVAL
    port = router.bind_to_random_port("tcp://127.0.0.1")
    dealer = make(zmq.DEALER, routing_id=b"d")
    dealer.connect("tcp://127.0.0.1:%d" % port)
    assert router.recv_multipart() == [b"d", b""]
    dealer.close(linger=0)
    assert router.recv_multipart() == [b"d", b""]


def test_hello_disconnect_and_metadata(make):
    router = make(zmq.ROUTER)
    router.setsockopt(zmq.HELLO_MSG, b"hello")
    router.setsockopt(zmq.DISCONNECT_MSG, b"bye")
    port = router.bind_to_random_port("tcp://127.0.0.1")
    dealer = make(zmq.DEALER, routing_id=b"d")
    dealer.setsockopt(zmq.METADATA, b"X-app:py")
    with pytest.raises(zmq.ZMQError):
        dealer.setsockopt(zmq.METADATA, b"no-colon")
    dealer.connect("tcp://127.0.0.1:%d" % port)
    assert dealer.recv() == b"hello"
    dealer.send(b"x")
    frames = router.recv_multipart(copy=False)
    assert [f.bytes for f in frames] == [b"d", b"x"]
    assert frames[1].get("X-app") == "py"
    dealer.close(linger=0)
    assert router.recv_multipart() == [b"d", b"bye"]


def test_hiccup_msg(make):
    router = make(zmq.ROUTER)
    port = router.bind_to_random_port("tcp://127.0.0.1")
    dealer = make(zmq.DEALER)
    dealer.setsockopt(zmq.HICCUP_MSG, b"hiccup")
    dealer.connect("tcp://127.0.0.1:%d" % port)
    dealer.send(b"up")
    assert router.recv_multipart()[1] == b"up"
    router.close(linger=0)
    assert dealer.recv() == b"hiccup"
