#!/usr/bin/env python3
"""A DNS server whose answers wait until the test releases them.

Usage: held_dns.py PORT RELEASE_FILE READY_FILE (created once listening). Answers every A query with 127.0.0.1
(TTL 0) and every other query with no records, but only once RELEASE_FILE
exists (or after 20 s), so the test decides when a lookup completes instead
of guessing at timings. dnsmasq forwards one zone here (mk/interop/dns.mk).
"""
import os
import socket
import struct
import sys
import threading
import time


def answer(query: bytes) -> bytes:
    qid, flags = struct.unpack("!HH", query[:4])
    # The question: labels up to the zero byte, then QTYPE and QCLASS.
    end = query.index(b"\0", 12) + 5
    question = query[12:end]
    qtype = struct.unpack("!H", query[end - 4:end - 2])[0]
    rd = flags & 0x0100
    records = b""
    count = 0
    if qtype == 1:
        records = b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 0, 4) + socket.inet_aton("127.0.0.1")
        count = 1
    header = struct.pack("!HHHHHH", qid, 0x8400 | rd, 1, count, 0, 0)
    return header + question + records


def serve(sock: socket.socket, query: bytes, peer, release: str) -> None:
    deadline = time.monotonic() + 20
    while not os.path.exists(release) and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        sock.sendto(answer(query), peer)
    except (OSError, ValueError, struct.error):
        pass


def main() -> None:
    port, release, ready = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", port))
    open(ready, "w").close()
    while True:
        query, peer = sock.recvfrom(4096)
        threading.Thread(target=serve, args=(sock, query, peer, release), daemon=True).start()


if __name__ == "__main__":
    main()
