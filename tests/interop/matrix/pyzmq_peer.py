#!/usr/bin/env python3
"""Stand-in for the oxmq interop peer, built on pyzmq (i.e. libzmq itself).

Speaks the line protocol of peerproto.py on stdin/stdout. Run the suite with
OXPEER=python to put libzmq on both sides: a self-check of the harness and of
the test expectations, independent of oxmq.
"""

import os
import sys
import threading

import zmq
from zmq.utils.monitor import recv_monitor_message

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


def zap_decide(policy, req):
    """Mirror of the oxmq peer's ZapPolicy: (status, user id) for a request."""
    kind, *fields = policy
    creds = req[6:]
    if kind == "allow":
        return b"200", fields[0]
    if kind == "deny":
        return fields[0], b""
    if kind == "plain" and creds == fields[:2]:
        return b"200", fields[2]
    if kind == "curve" and creds == fields[:1]:
        return b"200", fields[1]
    return b"400", b""


def start_zap(ctx, policy, stop):
    rep = ctx.socket(zmq.REP)
    rep.linger = 0
    rep.rcvtimeo = 50
    rep.bind("inproc://zeromq.zap.01")

    def serve():
        while not stop.is_set():
            try:
                req = rep.recv_multipart()
            except zmq.Again:
                continue
            status, user = zap_decide(policy, req)
            rep.send_multipart([b"1.0", req[1], status, b"OK", user, b""])
        rep.close()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return t


def main():
    ctx = zmq.Context()
    socks = {}
    last = {}
    monitors = {}
    zap = {"thread": None, "stop": threading.Event()}

    def stop_zap():
        if zap["thread"] is not None:
            zap["stop"].set()
            zap["thread"].join()
            zap["thread"] = None

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
            frames = s.recv_multipart(flags=flags, copy=False)
            last[args[0]] = frames[-1]
            return encode_frames([f.bytes for f in frames])
        if cmd == "zap":
            stop_zap()
            if args[0] != "off":
                kind, *fields = args[0].split(":")
                zap["stop"] = threading.Event()
                zap["thread"] = start_zap(ctx, [kind] + [bytes.fromhex(f) for f in fields], zap["stop"])
            return None
        if cmd == "prop":
            value = last[args[0]].get(args[1])
            return (value.encode() if isinstance(value, str) else bytes(value)).hex()
        if cmd == "monitor":
            monitors[args[0]] = sock(args[0]).get_monitor_socket()
            return None
        if cmd == "event":
            mon = monitors[args[0]]
            mon.rcvtimeo = int(args[1])
            ev = recv_monitor_message(mon)
            return f"{int(ev['event'])} {int(ev['value'])}"
        if cmd == "close":
            if args[0] in monitors:
                socks[args[0]].disable_monitor()
                monitors.pop(args[0]).close(linger=0)
            socks.pop(args[0]).close(linger=None)
            return None
        raise CommandError(22, f"unknown command {cmd}")

    out = sys.stdout
    for raw in sys.stdin:
        line = raw.rstrip("\n").rstrip("\r")
        fields = line.split(" ")
        if fields[0] == "quit":
            stop_zap()
            for m in monitors.values():
                m.close(linger=0)
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
