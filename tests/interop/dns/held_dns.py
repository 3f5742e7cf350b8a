#!/usr/bin/env python3
"""A DNS server whose answers wait until the test releases them.

Usage: held_dns.py PORT RELEASE_FILE READY_FILE ZONE_FILE (READY_FILE is
created once listening). ZONE_FILE, re-read at every query (the tests
rewrite it), has lines `NAME TYPE now|held [ADDRESS...]` (TYPE A or AAAA;
no address: an answer with no records). A held answer goes out only once
RELEASE_FILE exists (or after 20 s), so the test decides when a lookup
completes instead of guessing at timings. A query the zone does not list is
held, and answered with 127.0.0.1 for A and no records otherwise. TTL 0.
dnsmasq forwards one zone here (tests/interop/dns/run.sh).
"""
import os
import socket
import struct
import sys
import threading
import time

TYPES = {"A": 1, "AAAA": 28}


def zone(path: str) -> dict:
    out = {}
    try:
        with open(path) as f:
            for line in f:
                words = line.split()
                if len(words) >= 3 and words[1] in TYPES:
                    out[(words[0].lower(), TYPES[words[1]])] = (words[2] == "held", words[3:])
    except FileNotFoundError:
        pass
    return out


def parse(query: bytes):
    """The question's name, its bytes (labels, QTYPE, QCLASS) and QTYPE."""
    labels, i = [], 12
    while query[i]:
        labels.append(query[i + 1:i + 1 + query[i]].decode("ascii", "replace"))
        i += 1 + query[i]
    end = i + 5
    qtype = struct.unpack("!H", query[end - 4:end - 2])[0]
    return ".".join(labels).lower(), query[12:end], qtype


def answer(query: bytes, addrs) -> bytes:
    qid, flags = struct.unpack("!HH", query[:4])
    _, question, qtype = parse(query)
    records = b""
    for a in addrs:
        if qtype == 1:
            data = socket.inet_pton(socket.AF_INET, a)
        else:
            data = socket.inet_pton(socket.AF_INET6, a)
        records += b"\xc0\x0c" + struct.pack("!HHIH", qtype, 1, 0, len(data)) + data
    header = struct.pack("!HHHHHH", qid, 0x8400 | (flags & 0x0100), 1, len(addrs), 0, 0)
    return header + question + records


def serve(sock: socket.socket, query: bytes, peer, release: str, zone_file: str) -> None:
    try:
        name, _, qtype = parse(query)
        held, addrs = zone(zone_file).get((name, qtype), (True, ["127.0.0.1"] if qtype == 1 else []))
        deadline = time.monotonic() + 20
        while held and not os.path.exists(release) and time.monotonic() < deadline:
            time.sleep(0.02)
        sock.sendto(answer(query, addrs), peer)
    except (OSError, ValueError, IndexError, struct.error):
        pass


def main() -> None:
    port, release, ready, zone_file = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", port))
    open(ready, "w").close()
    while True:
        query, peer = sock.recvfrom(4096)
        threading.Thread(target=serve, args=(sock, query, peer, release, zone_file), daemon=True).start()


if __name__ == "__main__":
    main()
