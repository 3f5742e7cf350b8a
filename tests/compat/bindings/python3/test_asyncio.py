"""zmq.asyncio: Futures over loop.add_reader(socket.FD) + EVENTS re-checks,
i.e. libzmq's edge-triggered FD contract exercised the way pyzmq does."""

import asyncio

import pytest
import zmq
import zmq.asyncio


def run(coro, timeout=20):
    async def bounded():
        return await asyncio.wait_for(coro, timeout)

    return asyncio.run(bounded())


def test_asyncio_req_rep():
    async def main():
        ctx = zmq.asyncio.Context()
        rep = ctx.socket(zmq.REP)
        rep.bind("tcp://127.0.0.1:*")
        req = ctx.socket(zmq.REQ)
        req.connect(rep.last_endpoint.decode())

        async def server():
            for _ in range(200):
                m = await rep.recv()
                await rep.send(b"re:" + m)

        srv = asyncio.ensure_future(server())
        for i in range(200):
            await req.send(b"%d" % i)
            assert await req.recv() == b"re:%d" % i
        await srv
        ctx.destroy(linger=0)

    run(main())


def test_asyncio_push_pull_many_concurrent(tmp_path):
    async def main():
        ctx = zmq.asyncio.Context()
        pull = ctx.socket(zmq.PULL)
        pull.bind("ipc://%s/aio" % tmp_path)
        pushes = []
        for _ in range(4):
            p = ctx.socket(zmq.PUSH)
            p.connect(pull.last_endpoint.decode())
            pushes.append(p)

        async def producer(k, p):
            for i in range(250):
                await p.send_multipart([b"%d" % k, b"%d" % i])
                if i % 50 == 0:
                    await asyncio.sleep(0.001)

        prods = [asyncio.ensure_future(producer(k, p)) for k, p in enumerate(pushes)]
        last = {k: -1 for k in range(4)}
        for _ in range(1000):
            k, i = await pull.recv_multipart()
            k, i = int(k), int(i)
            assert i == last[k] + 1
            last[k] = i
        await asyncio.gather(*prods)
        ctx.destroy(linger=0)

    run(main())


def test_asyncio_poller_and_timeout():
    async def main():
        ctx = zmq.asyncio.Context()
        a = ctx.socket(zmq.PAIR)
        b = ctx.socket(zmq.PAIR)
        a.bind("inproc://aio-poll")
        b.connect("inproc://aio-poll")
        poller = zmq.asyncio.Poller()
        poller.register(b, zmq.POLLIN)
        assert await poller.poll(100) == []
        asyncio.get_event_loop().call_later(0.05, a.send, b"late")
        events = await poller.poll(5000)
        assert events == [(b, zmq.POLLIN)]
        assert await b.recv() == b"late"
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(b.recv(), 0.2)
        # a recv cancelled by wait_for must not eat the next message
        await a.send(b"after-cancel")
        assert await b.recv() == b"after-cancel"
        ctx.destroy(linger=0)

    run(main())
