"""The conformance suite's adapter for a Python module with pyzmq's API
(pyzmq itself, oxmq's Python package): the same line protocol as
libzmq_abi.c, so the same clauses run on it.

    python python_module.py MODULE
"""
import importlib
import sys
import threading

zmq = importlib.import_module(sys.argv[1])


def unhex(s):
    return b"" if s == "-" else bytes.fromhex(s)


CURVE_KEY_OPTIONS = (48, 49, 50)  # CURVE_PUBLICKEY, CURVE_SECRETKEY, CURVE_SERVERKEY
Z85 = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"


def z85(key):
    """A 32-octet CURVE key as its 40 Z85 characters (ZeroMQ RFC 32): the
    form every pyzmq-like module takes (pyomq takes no other)."""
    out = bytearray()
    for i in range(0, len(key), 4):
        n = int.from_bytes(key[i:i + 4], "big")
        out += bytes(Z85[n // 85 ** k % 85] for k in (4, 3, 2, 1, 0))
    return bytes(out)


class ZapHandler(threading.Thread):
    """RFC 27's handler on inproc://zeromq.zap.01 in the adapter's context,
    answering every request with the status code the suite chose and keeping
    the first request for ZAPLOG."""

    def __init__(self, ctx, status):
        super().__init__(daemon=True)
        self.sock = ctx.socket(zmq.REP)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.bind("inproc://zeromq.zap.01")
        self.status, self.first, self.stop = status.encode(), None, False

    def run(self):
        while not self.stop:
            if not self.sock.poll(100, zmq.POLLIN):
                continue
            req = self.sock.recv_multipart()
            if self.first is None:
                self.first = req
            reqid = req[1] if len(req) > 1 else b""
            self.sock.send_multipart([b"1.0", reqid, self.status, b"conformance", b"user", b""])
        self.sock.close(0)


def main():
    ctx = zmq.Context()
    sock = None
    zap = None
    out = sys.stdout
    for line in sys.stdin:
        cmd, _, arg = line.strip().partition(" ")
        try:
            if cmd == "QUIT":
                break
            if cmd == "ALIVE":
                reply = f"ALIVE {zmq.zmq_version()}"
            elif cmd == "ZAP":
                zap = ZapHandler(ctx, arg)
                zap.start()
                reply = "OK"
            elif cmd == "ZAPLOG":
                first = zap.first if zap else None
                reply = "NONE" if first is None else "MSG " + " ".join(f.hex() or "-" for f in first)
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
                val = unhex(val)
                if int(opt) in CURVE_KEY_OPTIONS and len(val) == 32:
                    val = z85(val)
                sock.setsockopt(int(opt), val)
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
        except Exception as e:  # the module's own refusal, reported to the suite, not a crash
            reply = f"ERR {type(e).__name__}: {e}".replace("\n", " ")
        out.write(reply + "\n")
        out.flush()
    if sock is not None:
        sock.close(0)
    if zap is not None:
        zap.stop = True
        zap.join()
    ctx.term()


if __name__ == "__main__":
    main()
