"""pyzmq's draft names on oxmq: CLIENT/SERVER with Frame.routing_id and
send(routing_id=...), SCATTER/GATHER, PEER/CHANNEL, THREAD_SAFE, no FD, and
threads sharing one SERVER."""

import threading

import pytest

import oxmq as zmq


def test_draft_constants_have_libzmq_numbers():
    assert (zmq.SERVER, zmq.CLIENT, zmq.GATHER, zmq.SCATTER, zmq.PEER, zmq.CHANNEL) == (12, 13, 16, 17, 19, 20)
    assert zmq.THREAD_SAFE == 81


def test_client_server_routing_id(make):
    server = make(zmq.SERVER)
    port = server.bind_to_random_port("tcp://127.0.0.1")
    client = make(zmq.CLIENT)
    client.connect(f"tcp://127.0.0.1:{port}")
    client.send(b"hello")
    frame = server.recv(copy=False)
    assert frame.bytes == b"hello"
    rid = frame.routing_id
    assert isinstance(rid, int) and rid != 0
    # pyzmq style 1: a Frame carrying the routing id.
    reply = zmq.Frame(b"world")
    reply.routing_id = rid
    assert reply.routing_id == rid
    server.send(reply)
    assert client.recv() == b"world"
    # pyzmq style 2: send(..., routing_id=...).
    server.send(b"again", routing_id=rid)
    assert client.recv() == b"again"
    with pytest.raises(zmq.ZMQError) as e:
        server.send(b"x", routing_id=rid + 1)
    assert e.value.errno == zmq.EHOSTUNREACH
    with pytest.raises(zmq.ZMQError) as e:
        reply.routing_id = 0
    assert e.value.errno == zmq.EINVAL
    with pytest.raises(zmq.ZMQError) as e:
        client.send(b"part", zmq.SNDMORE)
    assert e.value.errno == zmq.EINVAL


def test_thread_safe_and_no_fd(make):
    for kind in (zmq.SERVER, zmq.CLIENT, zmq.SCATTER, zmq.GATHER, zmq.PEER, zmq.CHANNEL):
        s = make(kind)
        assert s.get(zmq.THREAD_SAFE) == 1
        with pytest.raises(zmq.ZMQError) as e:
            s.get(zmq.FD)
        assert e.value.errno == zmq.EINVAL
    assert make(zmq.DEALER).get(zmq.THREAD_SAFE) == 0


def test_scatter_gather_and_channel(make):
    gather = make(zmq.GATHER)
    gather.bind("inproc://draft-sg")
    scatter = make(zmq.SCATTER)
    scatter.connect("inproc://draft-sg")
    for i in range(5):
        scatter.send(b"%d" % i)
    assert [gather.recv() for _ in range(5)] == [b"0", b"1", b"2", b"3", b"4"]
    a, b = make(zmq.CHANNEL), make(zmq.CHANNEL)
    a.bind("inproc://draft-ch")
    b.connect("inproc://draft-ch")
    b.send(b"ping")
    assert a.recv() == b"ping"


def test_peer_connect_peer_and_poller(make):
    a, b = make(zmq.PEER), make(zmq.PEER)
    port = a.bind_to_random_port("tcp://127.0.0.1")
    # pyzmq has no zmq_connect_peer; oxmq's Socket adds it (libzmq semantics).
    rid = b.connect_peer(f"tcp://127.0.0.1:{port}")
    assert rid != 0
    poller = zmq.Poller()
    poller.register(a, zmq.POLLIN)
    assert poller.poll(50) == []
    b.send(b"hi a", routing_id=rid)
    assert dict(poller.poll(5000)) == {a: zmq.POLLIN}
    f = a.recv(copy=False)
    assert f.bytes == b"hi a"
    a.send(b"hi b", routing_id=f.routing_id)
    back = b.recv(copy=False)
    assert (back.bytes, back.routing_id) == (b"hi b", rid)
    with pytest.raises(zmq.ZMQError) as e:
        make(zmq.SERVER).connect_peer(f"tcp://127.0.0.1:{port}")
    assert e.value.errno == zmq.ENOTSUP


def test_threads_share_one_server(make):
    server = make(zmq.SERVER, rcvtimeo=-1)
    port = server.bind_to_random_port("tcp://127.0.0.1")
    n_threads, n_msgs = 4, 400
    seen = []
    lock = threading.Lock()

    def worker():
        while True:
            f = server.recv(copy=False)
            if f.bytes == b"stop":
                return
            with lock:
                seen.append(f.bytes)
            server.send(f.bytes, routing_id=f.routing_id)

    threads = [threading.Thread(target=worker) for _ in range(n_threads)]
    for t in threads:
        t.start()
    client = make(zmq.CLIENT)
    client.connect(f"tcp://127.0.0.1:{port}")
    for i in range(n_msgs):
        client.send(b"m%d" % i)
    echoed = sorted(client.recv() for _ in range(n_msgs))
    assert echoed == sorted(b"m%d" % i for i in range(n_msgs))
    for _ in threads:
        client.send(b"stop")
    for t in threads:
        t.join(10)
        assert not t.is_alive()
    assert sorted(seen) == echoed
