"""oxmq.asyncio: awaitable send/recv/poll woken by the socket's FD."""

import asyncio
import time

import pytest

import oxmq
import oxmq.asyncio as zaio


def run(coro, timeout=20):
    return asyncio.run(asyncio.wait_for(coro, timeout))


@pytest.fixture
def actx():
    c = zaio.Context()
    yield c
    c.destroy(linger=0)


def test_basic_send_recv(actx):
    async def main():
        a = actx.socket(oxmq.PAIR)
        b = actx.socket(oxmq.PAIR)
        assert isinstance(a, zaio.Socket) and isinstance(a, oxmq.Socket)
        a.bind("inproc://a1")
        b.connect("inproc://a1")
        await a.send(b"hello")
        assert await b.recv() == b"hello"
        await a.send_multipart([b"x", b"y"])
        assert await b.recv_multipart() == [b"x", b"y"]
        await a.send_string("s")
        assert await b.recv_string() == "s"
        await a.send_json({"k": [1]})
        assert await b.recv_json() == {"k": [1]}
        await a.send_pyobj((1, 2))
        assert await b.recv_pyobj() == (1, 2)
        await a.send(b"frame")
        f = await b.recv(copy=False)
        assert f.bytes == b"frame"

    run(main())


def test_recv_waits_for_later_message(actx):
    async def main():
        a = actx.socket(oxmq.PUSH)
        b = actx.socket(oxmq.PULL)
        a.bind("tcp://127.0.0.1:*")
        b.connect(a.last_endpoint.decode())
        fut = b.recv()
        assert not fut.done()

        async def later():
            await asyncio.sleep(0.1)
            await a.send(b"late")

        t0 = time.monotonic()
        asyncio.get_running_loop().create_task(later())
        assert await fut == b"late"
        assert time.monotonic() - t0 < 5

    run(main())


def test_queued_recv_survives_a_poll_that_reads_the_arrival(actx):
    """Reading EVENTS (here through poll) processes the socket's pending
    commands and clears its descriptor: a message that arrived after the
    queued recv last failed must still reach that recv. It used to hang
    (1 run in ~8 of the event-loop benchmark, at its first message)."""

    async def main():
        pull = actx.socket(oxmq.PULL)
        pull.bind("inproc://queued-recv")
        fut = pull.recv()  # nothing yet: queued, the descriptor watched
        assert not fut.done()
        push = oxmq.Socket(actx, oxmq.PUSH)  # a plain socket: send does not await
        try:
            push.connect("inproc://queued-recv")
            push.send(b"first")
            # The loop does not run meanwhile, so only the poll below sees the
            # arrival (and clears the descriptor that announced it).
            time.sleep(0.1)
            assert await pull.poll(timeout=0) == oxmq.POLLIN
            assert await asyncio.wait_for(fut, 5) == b"first"
        finally:
            push.close(linger=0)

    run(main())


def test_many_sockets_many_pending_awaits(actx):
    async def main():
        n = 50
        pulls, pushes = [], []
        for i in range(n):
            pull = actx.socket(oxmq.PULL)
            push = actx.socket(oxmq.PUSH)
            pull.bind(f"inproc://m{i}")
            push.connect(f"inproc://m{i}")
            pulls.append(pull)
            pushes.append(push)
        per = 20
        # many pending receives per socket, queued before anything is sent
        futs = [[p.recv() for _ in range(per)] for p in pulls]
        await asyncio.sleep(0.01)
        assert not any(f.done() for fs in futs for f in fs)

        async def sender(i):
            for j in range(per):
                await pushes[i].send(b"%d-%d" % (i, j))
                if j % 5 == 0:
                    await asyncio.sleep(0)

        await asyncio.gather(*(sender(i) for i in range(n)))
        for i, fs in enumerate(futs):
            got = await asyncio.gather(*fs)
            assert got == [b"%d-%d" % (i, j) for j in range(per)]

    run(main())


def test_cancellation(actx):
    async def main():
        a = actx.socket(oxmq.PUSH)
        b = actx.socket(oxmq.PULL)
        a.bind("inproc://cancel")
        b.connect("inproc://cancel")
        f1 = b.recv()
        f2 = b.recv()
        f1.cancel()
        await asyncio.sleep(0)
        await a.send(b"one")
        # the cancelled waiter does not consume the message
        assert await f2 == b"one"
        task = asyncio.ensure_future(b.recv())
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await a.send(b"two")
        assert await b.recv() == b"two"
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(b.recv(), 0.05)
        await a.send(b"three")
        assert await b.recv() == b"three"

    run(main())


def test_rcvtimeo_and_noblock(actx):
    async def main():
        b = actx.socket(oxmq.PULL)
        b.bind("inproc://to")
        b.rcvtimeo = 50
        with pytest.raises(oxmq.Again):
            await b.recv()
        b.rcvtimeo = -1
        with pytest.raises(oxmq.Again):
            await b.recv(oxmq.NOBLOCK)

    run(main())


def test_poll_and_poller(actx):
    async def main():
        a = actx.socket(oxmq.PAIR)
        b = actx.socket(oxmq.PAIR)
        a.bind("inproc://poll")
        b.connect("inproc://poll")
        assert await b.poll(10) == 0
        fut = b.poll(5000)
        await a.send(b"x")
        assert await fut == oxmq.POLLIN
        assert await b.recv() == b"x"
        p = zaio.Poller()
        p.register(b, oxmq.POLLIN)
        assert await p.poll(10) == []
        pf = p.poll(5000)
        await asyncio.sleep(0.01)
        assert not pf.done()
        await a.send(b"y")
        assert await pf == [(b, oxmq.POLLIN)]
        assert await b.recv() == b"y"

    run(main())


def test_close_cancels_pending(actx):
    async def main():
        b = actx.socket(oxmq.PULL)
        b.bind("inproc://closing")
        f = b.recv()
        b.close()
        assert f.cancelled()

    run(main())


def test_send_waits_for_room(actx):
    async def main():
        a = actx.socket(oxmq.PUSH)
        a.sndhwm = 1
        b = actx.socket(oxmq.PULL)
        b.rcvhwm = 1
        a.bind("inproc://room")
        b.connect("inproc://room")
        sends = [a.send(b"%d" % i) for i in range(50)]
        assert not all(f.done() for f in sends)
        got = [await b.recv() for _ in range(50)]
        assert got == [b"%d" % i for i in range(50)]
        await asyncio.gather(*sends)

    run(main())


def test_interop_with_pyzmq_asyncio(actx):
    zmq = pytest.importorskip("zmq")
    import zmq.asyncio as pyzaio

    async def main():
        pctx = pyzaio.Context()
        try:
            rep = pctx.socket(zmq.REP)
            port = rep.bind_to_random_port("tcp://127.0.0.1")
            req = actx.socket(oxmq.REQ)
            req.connect(f"tcp://127.0.0.1:{port}")
            for i in range(10):
                await req.send_multipart([b"q", b"%d" % i])
                m = await rep.recv_multipart()
                await rep.send_multipart([b"a"] + m[1:])
                assert await req.recv_multipart() == [b"a", b"%d" % i]
            rep.close(linger=0)
        finally:
            pctx.destroy(linger=0)

    run(main())
