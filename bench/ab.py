#!/usr/bin/env python3
"""Compare builds of oxmq cell by cell, in alternated rounds (an A/B).

A report run compares oxmq with its peers; a change to oxmq is judged by
running the old and the new build side by side, alternated, many times, since
on a shared 2-core machine one run of each says little. Each variant is a
directory holding the two artefacts the benchmarks use:

    VARIANT/bench_oxmq      crates/oxmq/examples/bench_oxmq.rs, built with
                            cargo build --release --example bench_oxmq
    VARIANT/libzmq.so.5     target/release/liboxmq.so (cargo build --release
                            -p oxmq-capi), for the C programs
    VARIANT/python          (py-* cells) a venv's interpreter with the variant's
                            wheel installed, for bench/py/study.py

and the C cells run `bench/c/thr.c` (THR, built once against any libzmq.so.5)
with LD_LIBRARY_PATH pointing at the variant. Example:

    bench/ab.py --rounds 12 --cells rust-tcp-64,capi-inproc-16 /tmp/ab/main /tmp/ab/branch

Prints, per cell and variant, the median with the range and the quartiles of
msg/s (or microseconds for latency cells) and, where the program reports it,
CPU seconds per second of the reporting process (the receiver in two-process
cells); --json keeps every run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
THR = Path(os.environ.get("AB_THR", HERE.parent / "target/bench/c-oxmq/thr"))


def last_json(text: str) -> dict:
    lines = [line for line in text.splitlines() if line.startswith("{")]
    if not lines:
        raise RuntimeError("no JSON line in output: %r" % text[-300:])
    return json.loads(lines[-1])


def run_one(argv, env=None) -> dict:
    out = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=300, env=env)
    return last_json(out.stdout)


def two_processes(server_argv, client_argv, env=None, report="server") -> dict:
    """The server prints "READY EP [ACK_EP]" first; the client gets those
    fields and runs to its end; `report` names whose JSON line counts."""
    r = subprocess.Popen([str(a) for a in server_argv], stdout=subprocess.PIPE, text=True, env=env)
    try:
        ready = r.stdout.readline().split()
        if len(ready) < 2:
            raise RuntimeError("server did not print READY")
        client = subprocess.run([str(a) for a in client_argv(*ready[1:])], capture_output=True, text=True,
                                timeout=300, env=env, check=True)
        out = r.stdout.read() if report == "server" else client.stdout
    finally:
        r.wait(timeout=300)
    return last_json(out)


def run_pair(recv_argv, send_argv, env=None) -> dict:
    """Throughput: the receiver prints "READY EP ACK_EP", the sender connects to both."""
    return two_processes(recv_argv, send_argv, env)


def c_env(variant: Path) -> dict:
    return dict(os.environ, LD_LIBRARY_PATH=str(variant))


def rust_pair(variant, ep, size, n, mode="copy"):
    b = variant / "bench_oxmq"
    return run_pair([b, "thr", "recv", ep, size, n], lambda e, a: [b, "thr", "send", e, size, n, mode, a])


def c_pair(variant, ep, size, n, mode="copy"):
    return run_pair([THR, "recv", ep, size, n], lambda e, a: [THR, "send", e, size, n, mode, a], c_env(variant))


def lat_pair(server_argv, client_argv, env=None) -> dict:
    """REQ/REP (study 3): the REP server prints "READY EP"; the REQ client reports."""
    return two_processes(server_argv, client_argv, env, report="client")


LAT = Path(os.environ.get("AB_LAT", HERE.parent / "target/bench/c-oxmq/lat"))


def rust_lat(variant, ep, size, n):
    b = variant / "bench_oxmq"
    return lat_pair([b, "lat", "server", ep, size, n], lambda e: [b, "lat", "client", e, size, n])


def c_lat(variant, ep, size, n):
    return lat_pair([LAT, "server", ep, size, n], lambda e: [LAT, "client", e, size, n], c_env(variant))


STUDY_PY = HERE / "py" / "study.py"


def py_pair(variant, ep, size, n, mode="bytearray"):
    """VARIANT/python is a venv's interpreter with the variant's wheel; the module is
    oxmq unless VARIANT/py_impl names another (zmq for pyzmq, pyomq)."""
    p = variant / "python"
    impl_file = variant / "py_impl"
    impl = impl_file.read_text().strip() if impl_file.exists() else "oxmq"
    return run_pair([p, STUDY_PY, impl, "thr", "recv", ep, size, n],
                    lambda e, a: [p, STUDY_PY, impl, "thr", "send", e, size, n, mode, a])


def py_lat(variant, ep, size, n):
    """REQ/REP (study 3's Python programs), with VARIANT/python as py_pair's."""
    p = variant / "python"
    impl_file = variant / "py_impl"
    impl = impl_file.read_text().strip() if impl_file.exists() else "oxmq"
    return lat_pair([p, STUDY_PY, impl, "lat", "server", ep, size, n],
                    lambda e: [p, STUDY_PY, impl, "lat", "client", e, size, n])


def ipc_ep(variant) -> str:
    return "ipc:///tmp/oxmq-ab-%d-%s" % (os.getpid(), variant.name)


PHYSICAL = Path(os.environ.get("AB_PHYSICAL", HERE.parent / "target/bench/c-libzmq/physical"))


# name -> (what it reports, function of the variant directory)
CELLS = {
    # The machine's own figure (study 8's program; the same for every variant).
    "raw-tcp-1m": ("mb_per_s", lambda v: run_one([PHYSICAL, "tcp", 1 << 20, 4 << 30])),
    "raw-unix-1m": ("mb_per_s", lambda v: run_one([PHYSICAL, "unix", 1 << 20, 4 << 30])),
    "rust-inproc-16": ("msgs_per_s", lambda v: run_one([v / "bench_oxmq", "thr", "inproc", 16, 10_000_000, "copy"])),
    "rust-inproc-64k-zc": ("msgs_per_s", lambda v: run_one([v / "bench_oxmq", "thr", "inproc", 65536, 3_000_000, "zc"])),
    "rust-ipc-64": ("msgs_per_s", lambda v: rust_pair(v, ipc_ep(v), 64, 5_000_000)),
    "rust-ipc-64k": ("msgs_per_s", lambda v: rust_pair(v, ipc_ep(v), 65536, 200_000)),
    "rust-tcp-64": ("msgs_per_s", lambda v: rust_pair(v, "tcp://127.0.0.1:*", 64, 5_000_000)),
    "rust-tcp-4k": ("msgs_per_s", lambda v: rust_pair(v, "tcp://127.0.0.1:*", 4096, 1_000_000)),
    "rust-tcp-1m": ("msgs_per_s", lambda v: rust_pair(v, "tcp://127.0.0.1:*", 1 << 20, 5000)),
    "rust-tcp-1m-zc": ("msgs_per_s", lambda v: rust_pair(v, "tcp://127.0.0.1:*", 1 << 20, 5000, "zc")),
    "rust-tcp-4m-zc": ("msgs_per_s", lambda v: rust_pair(v, "tcp://127.0.0.1:*", 4 << 20, 1500, "zc")),
    "rust-ipc-4m-zc": ("msgs_per_s", lambda v: rust_pair(v, ipc_ep(v), 4 << 20, 1500, "zc")),
    "rust-ipc-4m": ("msgs_per_s", lambda v: rust_pair(v, ipc_ep(v), 4 << 20, 1500)),
    "rust-tcp-4m": ("msgs_per_s", lambda v: rust_pair(v, "tcp://127.0.0.1:*", 4 << 20, 1500)),
    "rust-tcp-256k": ("msgs_per_s", lambda v: rust_pair(v, "tcp://127.0.0.1:*", 256 << 10, 20000)),
    "rust-ipc-1m": ("msgs_per_s", lambda v: rust_pair(v, ipc_ep(v), 1 << 20, 5000)),
    "rust-lat-inproc-64": ("p50_us", lambda v: run_one([v / "bench_oxmq", "lat", "inproc", 64, 20000])),
    "rust-lat-tcp-64": ("p50_us", lambda v: rust_lat(v, "tcp://127.0.0.1:*", 64, 20000)),
    "rust-lat-ipc-64": ("p50_us", lambda v: rust_lat(v, ipc_ep(v), 64, 20000)),
    "rust-lat-tcp-256k": ("p50_us", lambda v: rust_lat(v, "tcp://127.0.0.1:*", 256 << 10, 3000)),
    "capi-lat-tcp-64": ("p50_us", lambda v: c_lat(v, "tcp://127.0.0.1:*", 64, 20000)),
    "capi-lat-ipc-4k": ("p50_us", lambda v: c_lat(v, ipc_ep(v), 4096, 20000)),
    "capi-lat-tcp-256k": ("p50_us", lambda v: c_lat(v, "tcp://127.0.0.1:*", 256 << 10, 3000)),
    "capi-lat-ipc-256k": ("p50_us", lambda v: c_lat(v, ipc_ep(v), 256 << 10, 3000)),
    "capi-inproc-16": ("msgs_per_s", lambda v: run_one([THR, "inproc", 16, 10_000_000], c_env(v))),
    "capi-inproc-4k-zc": ("msgs_per_s", lambda v: run_one([THR, "inproc", 4096, 3_000_000, "zc"], c_env(v))),
    "capi-inproc-4m": ("msgs_per_s", lambda v: run_one([THR, "inproc", 4 << 20, 2000], c_env(v))),
    "capi-tcp-64": ("msgs_per_s", lambda v: c_pair(v, "tcp://127.0.0.1:*", 64, 5_000_000)),
    "capi-tcp-1m": ("msgs_per_s", lambda v: c_pair(v, "tcp://127.0.0.1:*", 1 << 20, 5000)),
    "capi-threads-1m": ("msgs_per_s", lambda v: run_one([THR, "tcpthreads", 1 << 20, 3000, "copy"], c_env(v))),
    "capi-threads-64k": ("msgs_per_s", lambda v: run_one([THR, "tcpthreads", 65536, 50000, "copy"], c_env(v))),
    "py-tcp-1m-bytearray": ("msgs_per_s", lambda v: py_pair(v, "tcp://127.0.0.1:*", 1 << 20, 3000)),
    "py-ipc-1m-bytearray": ("msgs_per_s", lambda v: py_pair(v, ipc_ep(v), 1 << 20, 3000)),
    "py-tcp-256k-bytearray": ("msgs_per_s", lambda v: py_pair(v, "tcp://127.0.0.1:*", 256 << 10, 10000)),
    "py-tcp-1m-zc": ("msgs_per_s", lambda v: py_pair(v, "tcp://127.0.0.1:*", 1 << 20, 3000, "zc")),
    "py-tcp-64k-zc": ("msgs_per_s", lambda v: py_pair(v, "tcp://127.0.0.1:*", 64 << 10, 30000, "zc")),
    "py-ipc-1m-zc": ("msgs_per_s", lambda v: py_pair(v, ipc_ep(v), 1 << 20, 3000, "zc")),
    "py-lat-tcp-64": ("p50_us", lambda v: py_lat(v, "tcp://127.0.0.1:*", 64, 20000)),
    "py-lat-ipc-64": ("p50_us", lambda v: py_lat(v, ipc_ep(v), 64, 20000)),
    "py-lat-tcp-4k": ("p50_us", lambda v: py_lat(v, "tcp://127.0.0.1:*", 4096, 20000)),
    "py-lat-ipc-4k": ("p50_us", lambda v: py_lat(v, ipc_ep(v), 4096, 20000)),
    "py-lat-tcp-256k": ("p50_us", lambda v: py_lat(v, "tcp://127.0.0.1:*", 256 << 10, 3000)),
    "py-lat-ipc-256k": ("p50_us", lambda v: py_lat(v, ipc_ep(v), 256 << 10, 3000)),
    "capi-tcp-4m": ("msgs_per_s", lambda v: c_pair(v, "tcp://127.0.0.1:*", 4 << 20, 1500)),
    "capi-ipc-1m": ("msgs_per_s", lambda v: c_pair(v, ipc_ep(v), 1 << 20, 5000)),
}


def fmt(x: float) -> str:
    return "%.2fM" % (x / 1e6) if x >= 1e6 else "%.1fk" % (x / 1e3) if x >= 1e4 else "%.2f" % x


def summary(xs) -> str:
    xs = sorted(xs)
    if not xs:
        return "no runs"
    q1, q3 = xs[len(xs) // 4], xs[(3 * len(xs)) // 4 if len(xs) > 1 else 0]
    return "median %s  range %s-%s  IQR %s-%s  n=%d" % (
        fmt(statistics.median(xs)), fmt(xs[0]), fmt(xs[-1]), fmt(q1), fmt(q3), len(xs))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("variants", nargs="+", type=Path, help="directories with bench_oxmq and libzmq.so.5")
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--cells", default=",".join(CELLS), help="comma-separated, of: " + ", ".join(CELLS))
    ap.add_argument("--json", type=Path, help="write every run here")
    a = ap.parse_args()
    cells = [c.strip() for c in a.cells.split(",") if c.strip()]
    unknown = [c for c in cells if c not in CELLS]
    if unknown:
        ap.error("unknown cells: %s" % ", ".join(unknown))
    runs = {c: {str(v): [] for v in a.variants} for c in cells}
    for r in range(a.rounds):
        # Alternate the order so neither variant always runs first (warm caches, a burst of load).
        order = a.variants if r % 2 == 0 else a.variants[::-1]
        for c in cells:
            metric, fn = CELLS[c]
            for v in order:
                try:
                    res = fn(v)
                except Exception as e:  # a failed run is reported, not counted
                    print("round %d %s %s: %s" % (r, c, v, e), file=sys.stderr)
                    continue
                # CPU of the process that reports (the receiver, for two-process cells).
                cpu = res["cpu_s"] / res["seconds"] if res.get("cpu_s") is not None and res.get("seconds") else None
                runs[c][str(v)].append({"value": res[metric], "cpu_per_s": cpu})
        print("round %d of %d done %s, load %.1f" % (r + 1, a.rounds, time.strftime("%H:%M:%S"), os.getloadavg()[0]),
              file=sys.stderr, flush=True)
    if a.json:
        a.json.write_text(json.dumps(runs, indent=1))
    for c in cells:
        print("%s (%s)" % (c, CELLS[c][0]))
        for v, xs in runs[c].items():
            cpus = [x["cpu_per_s"] for x in xs if x["cpu_per_s"] is not None]
            cpu = "  CPU %.2f s/s" % statistics.median(cpus) if cpus else ""
            print("  %-28s %s%s" % (Path(v).name, summary([x["value"] for x in xs]), cpu))
    return 0


if __name__ == "__main__":
    sys.exit(main())
