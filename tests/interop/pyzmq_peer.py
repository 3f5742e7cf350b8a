#!/usr/bin/env python3
"""Stand-in for the oxmq interop peer, built on pyzmq (i.e. libzmq itself).

Speaks the line protocol of peerproto.py on stdin/stdout. Run the suite with
OXPEER=python to put libzmq on both sides: a self-check of the harness and of
the test expectations, independent of oxmq.
"""

import os
import sys

import zmq

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peerproto import OPTIONS, SOCKET_TYPES, decode_frames, encode_frames  # noqa: E402


class CommandError(Exception):
    def __init__(self, errno, message):
        super().__init__(message)
        self.errno = errno


def parse_flags(field):
    flags = 0
    for word in filter(None, field.split(",")):
        if word == "dontwait":
            flags |= zmq.DONTWAIT
        elif word == "sndmore":
            flags |= zmq.SNDMORE
        else:
            raise CommandError(22, f"unknown flag {word}")
    return flags


def main():
    ctx = zmq.Context()
    socks = {}

    def sock(sid):
        try:
            return socks[sid]
        except KeyError:
            raise CommandError(88, f"no socket {sid}") from None

    def handle(fields):
        cmd = fields[0]
        args = fields[1:]
        if cmd == "ping":
            return "pong"
        if cmd == "socket":
            sid, kind = args[0], args[1]
            if kind not in SOCKET_TYPES:
                raise CommandError(22, f"unknown socket type {kind}")
            socks[sid] = ctx.socket(SOCKET_TYPES[kind])
            return None
        if cmd == "setopt":
            s = sock(args[0])
            name = args[1]
            value = args[2] if len(args) > 2 else ""
            if name not in OPTIONS:
                raise CommandError(22, f"unknown option {name}")
            num, kind = OPTIONS[name]
            s.setsockopt(num, bytes.fromhex(value) if kind == "bytes" else int(value))
            return None
        if cmd == "getopt":
            s = sock(args[0])
            num, kind = OPTIONS[args[1]]
            value = s.getsockopt(num)
            if kind == "bytes":
                return value.hex()
            if kind == "str":
                return value.decode() if isinstance(value, bytes) else value
            return str(value)
        if cmd == "bind":
            s = sock(args[0])
            s.bind(args[1])
            return s.getsockopt(zmq.LAST_ENDPOINT).decode()
        if cmd in ("connect", "unbind", "disconnect"):
            getattr(sock(args[0]), cmd)(args[1])
            return None
        if cmd == "send":
            s = sock(args[0])
            frames = decode_frames(args[1] if len(args) > 1 else "")
            flags = parse_flags(args[2] if len(args) > 2 else "")
            s.send_multipart(frames, flags=flags)
            return None
        if cmd == "recv":
            s = sock(args[0])
            flags = parse_flags(args[1] if len(args) > 1 else "")
            return encode_frames(s.recv_multipart(flags=flags))
        if cmd == "close":
            socks.pop(args[0]).close(linger=None)
            return None
        raise CommandError(22, f"unknown command {cmd}")

    out = sys.stdout
    for raw in sys.stdin:
        line = raw.rstrip("\n").rstrip("\r")
        fields = line.split(" ")
        if fields[0] == "quit":
            for s in socks.values():
                s.close(linger=0)
            ctx.term()
            out.write("ok\n")
            out.flush()
            return
        try:
            result = handle(fields)
            out.write("ok\n" if result is None else f"ok {result}\n")
        except zmq.ZMQError as e:
            out.write(f"err {e.errno} {e.strerror}\n")
        except CommandError as e:
            out.write(f"err {e.errno} {e}\n")
        except (IndexError, ValueError, KeyError) as e:
            out.write(f"err 22 bad command: {e!r}\n")
        out.flush()


if __name__ == "__main__":
    main()
