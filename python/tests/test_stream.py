"""STREAM through the Python package: a plain TCP client (no ZMTP) talks to a
STREAM socket as an HTTP client would, with libzmq's connect/disconnect
notifications (an empty frame under the routing id) and close-by-empty-frame."""

import socket

import oxmq as zmq


def test_stream_serves_a_raw_tcp_client(make):
    server = make(zmq.STREAM)
    assert server.type == zmq.STREAM
    port = server.bind_to_random_port("tcp://127.0.0.1")
    server.rcvtimeo = 5000
    client = socket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        rid, notify = server.recv_multipart()
        assert notify == b""  # STREAM_NOTIFY defaults to on
        client.sendall(b"GET / HTTP/1.0\r\n\r\n")
        got = b""
        while not got.endswith(b"\r\n\r\n"):
            who, data = server.recv_multipart()
            assert who == rid
            got += data
        assert got == b"GET / HTTP/1.0\r\n\r\n"
        server.send_multipart([rid, b"HTTP/1.0 200 OK\r\n\r\nhi"])
        server.send_multipart([rid, b""])  # an empty frame closes the connection
        reply = b""
        while True:
            chunk = client.recv(4096)
            if not chunk:
                break
            reply += chunk
        assert reply == b"HTTP/1.0 200 OK\r\n\r\nhi"
    finally:
        client.close()


def test_stream_reports_a_client_disconnect(make):
    server = make(zmq.STREAM)
    port = server.bind_to_random_port("tcp://127.0.0.1")
    server.rcvtimeo = 5000
    client = socket.create_connection(("127.0.0.1", port), timeout=5)
    rid, notify = server.recv_multipart()
    assert notify == b""
    client.close()
    assert server.recv_multipart() == [rid, b""]
