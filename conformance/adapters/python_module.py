"""The conformance suite's adapter for a Python module with pyzmq's API
(pyzmq itself, oxmq's Python package): the same line protocol as
libzmq_abi.c, so the same clauses run on it.

    python python_module.py MODULE
"""
import importlib
import sys

zmq = importlib.import_module(sys.argv[1])


def unhex(s):
    return b"" if s == "-" else bytes.fromhex(s)


def main():
    ctx = zmq.Context()
    sock = None
    out = sys.stdout
    for line in sys.stdin:
        cmd, _, arg = line.strip().partition(" ")
        try:
            if cmd == "QUIT":
                break
            if cmd == "ALIVE":
                reply = f"ALIVE {zmq.zmq_version()}"
            elif cmd == "SOCKET":
                sock = ctx.socket(getattr(zmq, arg))
                sock.setsockopt(zmq.LINGER, 0)
                reply = "OK"
            elif cmd == "OPTI":
                opt, val = arg.split()
                sock.setsockopt(int(opt), int(val))
                reply = "OK"
            elif cmd == "OPTB":
                opt, val = arg.split()
                sock.setsockopt(int(opt), unhex(val))
                reply = "OK"
            elif cmd == "BIND":
                sock.bind(arg)
                reply = "OK " + sock.getsockopt_string(zmq.LAST_ENDPOINT)
            elif cmd == "CONNECT":
                sock.connect(arg)
                reply = "OK"
            elif cmd == "SEND":
                sock.send_multipart([unhex(f) for f in arg.split()])
                reply = "OK"
            elif cmd == "RECV":
                if sock.poll(int(arg), zmq.POLLIN):
                    reply = "MSG " + " ".join(f.hex() or "-" for f in sock.recv_multipart())
                else:
                    reply = "TIMEOUT"
            else:
                reply = "ERR unknown-command"
        except zmq.ZMQError as e:
            reply = f"ERR {e.errno}"
        out.write(reply + "\n")
        out.flush()
    if sock is not None:
        sock.close(0)
    ctx.term()


if __name__ == "__main__":
    main()
