"""Study 2, throughput (alone: `bench/run.py --studies 2`); its heading in the report is TITLE."""

import os

from harness import runner
from harness.config import HAVE_TASKSET, log
from harness.discover import Impl
from harness.fmt import size_label
from harness.measure import Side
from harness.runner import Proc
from harness.stats import PY_LEND_MIN, ratios
from studies.common import THR_IMPLS, PY_THR_IMPLS, NEW_PEERS, peer_side

TITLE = "Throughput vs message size: PUSH/PULL, copy vs zero-copy"


def _cpu_metrics(out, recv, send=None):
    """Messages per CPU-second (user+system, getrusage) for each side: a design
    that spins a core can win on wall time and still cost its users more."""
    n = float(recv.get("count") or 0)
    rc = recv.get("cpu_s")
    if send is None:
        if rc:
            out["msgs_per_cpu_s"] = n / rc
        return out
    sc = send.get("cpu_s")
    if rc:
        out["recv_msgs_per_cpu_s"] = n / rc
    if sc:
        out["send_msgs_per_cpu_s"] = n / sc
    if rc and sc:
        out["msgs_per_cpu_s"] = n / (rc + sc)
    return out


def thr_sizes(quick, transport):
    if quick:
        return [16, 1 << 20] if transport != "tcp" else [16, 4096, 1 << 20]
    if transport == "tcp":
        return [16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1 << 20, 4 << 20]
    return [16, 256, 4096, 65536, 1 << 20, 4 << 20]


THR_METRICS = ["msgs_per_s", "mb_per_s", "send_calls_per_s", "msgs_per_cpu_s", "recv_msgs_per_cpu_s",
               "send_msgs_per_cpu_s"]


def _thr_cell(suite, impls, transport, size, mode, pinned, ipc_n, target):
    """One study-2 cell. Sender and receiver are separate, unpinned processes
    (what a user program does); pinned=True is the labelled variant with the
    receiver on core 0 and the sender on core 1."""
    cpus = (0, 1) if pinned else (None, None)
    sides = []
    # "bytearray": the forced-copy Python row (a bytearray is copied on send by
    # every Python library, oxmq included), so Python sides only.
    keys = PY_THR_IMPLS if mode == "bytearray" else THR_IMPLS + NEW_PEERS
    for k in keys:
        impl = impls[k]

        def run(n, impl=impl, size=size, mode=mode, transport=transport):
            if transport == "inproc":
                r = runner.run_procs([Proc("main", impl, "thr", ["inproc", size, n, mode])], suite.timeout)["main"]
                return _cpu_metrics(dict(r), r)
            if transport == "tcp":
                ep = "tcp://127.0.0.1:*"
            else:
                ipc_n[0] += 1
                ep = "ipc:///tmp/oxmq-bench-thr-%d-%d" % (os.getpid(), ipc_n[0])
            r = runner.run_procs([Proc("recv", impl, "thr", ["recv", ep, size, n, mode], cpu=cpus[0], ready=True),
                           Proc("send", impl, "thr", ["send", "{ep0}", size, n, mode, "{ep1}"], cpu=cpus[1])],
                          suite.timeout)
            out = dict(r["recv"])
            out["send_calls_per_s"] = r["send"]["send_calls_per_s"]
            return _cpu_metrics(out, r["recv"], r["send"])

        init = 20 if suite.quick else int(max(20, min(20000, (8 << 20) // size)))
        if suite.quick and size <= 4096:
            init = 2000
        sides.append(peer_side(Side(impl, run, init, calibrate="seconds", cmin=20, cmax=50_000_000), k))
    if size >= 1 << 20 and mode == "copy":
        sides.append(_raw_side(suite, impls, transport, size))
    label = "%s %s %s%s" % (transport, size_label(size), mode, " (pinned)" if pinned else "")
    log("[2 throughput] %s" % label)
    key = {"transport": transport, "size": size, "mode": mode}
    if pinned:
        key["pinned"] = True
    cell = suite.compare(2, key, sides, THR_METRICS, label, target=target)
    ratios(cell, "msgs_per_s", False, impls)
    ratios(cell, "msgs_per_cpu_s", False, impls)


def pinned_cells(quick):
    """The pinned variant of study 2: a few tcp cells (small and large). 16 B and 64 B are both named by
    issue 21's goal of 2.5x libzmq "pinned and unpinned"."""
    return [("tcp", 16, "copy")] if quick else [("tcp", 16, "copy"), ("tcp", 64, "copy"), ("tcp", 1 << 20, "copy")]


# The one-process layout (issue 21 item 4): one context, PULL bound in the main
# thread, PUSH connected from a second thread over loopback tcp, so one I/O
# thread serves both ends of the connection. C programs only (bench/c/thr.c).
THREADS_IMPLS = ["c_libzmq", "c_libzmq435", "c_oxmq", "c_omq"]


def threads_sizes(quick):
    return [64, 1 << 20] if quick else [64, 4096, 65536, 1 << 20]


def _thr_threads_cell(suite, impls, size, target):
    sides = []
    for k in THREADS_IMPLS:
        impl = impls[k]

        def run(n, impl=impl, size=size):
            r = runner.run_procs([Proc("main", impl, "thr", ["tcpthreads", size, n, "copy"])], suite.timeout)["main"]
            return _cpu_metrics(dict(r), r)

        init = 20 if suite.quick else int(max(20, min(20000, (8 << 20) // size)))
        if suite.quick and size <= 4096:
            init = 2000
        sides.append(peer_side(Side(impl, run, init, calibrate="seconds", cmin=20, cmax=50_000_000), k))
    label = "tcp %s copy (one process, two threads)" % size_label(size)
    log("[2 throughput] %s" % label)
    cell = suite.compare(2, {"transport": "tcp", "size": size, "mode": "copy", "layout": "threads"}, sides,
                         THR_METRICS, label, target=target)
    ratios(cell, "msgs_per_s", False, impls)
    ratios(cell, "msgs_per_cpu_s", False, impls)


# BENCH_STUDY2_PARTS=ipc,inproc,pinned,threads runs only those groups of cells
# (a rerun of part of the study, to merge into a report by cell key); unset: all.
PARTS = ("tcp", "ipc", "inproc", "pinned", "threads")


def parts():
    want = [p.strip() for p in os.environ.get("BENCH_STUDY2_PARTS", "").split(",") if p.strip()]
    unknown = [p for p in want if p not in PARTS]
    if unknown:
        raise SystemExit("BENCH_STUDY2_PARTS: unknown part(s) %s (known: %s)" % (unknown, ",".join(PARTS)))
    return set(want or PARTS)


def measure(suite, impls):
    target = suite.target * 0.6
    ipc_n = [0]
    run = parts()
    for transport in ("tcp", "ipc", "inproc"):
        if transport not in run:
            continue
        for size in thr_sizes(suite.quick, transport):
            for mode in ("copy", "zc") + (("bytearray",) if size >= PY_LEND_MIN else ()):
                _thr_cell(suite, impls, transport, size, mode, False, ipc_n, target)
    if HAVE_TASKSET and "pinned" in run:
        for transport, size, mode in pinned_cells(suite.quick):
            _thr_cell(suite, impls, transport, size, mode, True, ipc_n, target)
    if "threads" in run:
        for size in threads_sizes(suite.quick):
            _thr_threads_cell(suite, impls, size, target)


RAW_KIND = {"tcp": "tcp", "ipc": "unix", "inproc": "memcpy"}


def _raw_side(suite, impls, transport, size):
    """The machine's own limit for this cell (study 8's probe with SIZE writes),
    interleaved with the messaging sides so that both see the same load."""
    i = Impl("raw", "machine: raw socket / memcpy", "machine")
    i._argv, i.reason = impls["phys"]._argv, impls["phys"].reason
    kind = RAW_KIND[transport]

    def run(n):
        r = runner.run_procs([Proc("probe", i, "physical", [kind, size, n * size])], suite.timeout)["probe"]
        return {"msgs_per_s": r["mb_per_s"] * 1e6 / size, "mb_per_s": r["mb_per_s"], "seconds": r["seconds"]}

    return Side(i, run, 20 if suite.quick else 200, calibrate="seconds", cmin=4, cmax=100_000)
