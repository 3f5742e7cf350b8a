"""Study 3, latency (alone: `bench/run.py --studies 3`); its heading in the report is TITLE."""

import os

from harness import runner
from harness.config import log
from harness.discover import Impl
from harness.fmt import size_label
from harness.measure import Side
from harness.runner import Proc
from harness.stats import ratios
from studies.common import THR_IMPLS, NEW_PEERS, peer_side

TITLE = "Latency: REQ/REP round trips vs message size"

# Untimed round trips every study-3 program makes before the timed ones
# (bench/c/lat.c, bench/py/study.py, the Rust examples and bench/c/physical.c).
WARM = 100
# The floor's four ways of running (bench/c/physical.c): how each side waits, and where it runs.
PING_VARIANTS = (("block", "pinned"), ("block", "unpinned"), ("poll", "pinned"), ("poll", "unpinned"))
LAT_METRICS = ["mean_us", "p50_us", "p99_us", "cpu_us_per_rt", "client_cpu_us_per_rt", "server_cpu_us_per_rt"] + [
    "%s_%s_%s" % (m, w, pin) for w, pin in PING_VARIANTS for m in ("p50_us", "cpu_us_per_rt")]


def with_cpu(res, procs):
    """A result line with CPU µs per round trip: the processes' user+system
    time (the harness's wait4, every thread, setup included) over every round
    trip they made, the warm-up's too. A side that spins while it waits uses
    about its whole round trip per side; one that sleeps, its work only."""
    out = dict(res)
    rts = float(res["count"]) + WARM
    cpu = {role: float(r["proc_cpu_s"]) for role, r in procs.items() if r.get("proc_cpu_s") is not None}
    if cpu:
        out["cpu_us_per_rt"] = sum(cpu.values()) / rts * 1e6
    for role in ("client", "server"):
        if role in cpu:
            out[role + "_cpu_us_per_rt"] = cpu[role] / rts * 1e6
    return out


def lat_sizes(quick):
    return [64] if quick else [64, 4096, 262144]


def measure(suite, impls):
    ipc_n = [0]
    for transport in ("tcp", "ipc", "inproc"):
        for size in lat_sizes(suite.quick):
            sides = []
            for k in THR_IMPLS + NEW_PEERS:
                impl = impls[k]

                def run(n, impl=impl, size=size, transport=transport):
                    if transport == "inproc":
                        r = runner.run_procs([Proc("main", impl, "lat", ["inproc", size, n])], suite.timeout)
                        return with_cpu(r["main"], r)
                    if transport == "tcp":
                        ep = "tcp://127.0.0.1:*"
                    else:
                        ipc_n[0] += 1
                        ep = "ipc:///tmp/oxmq-bench-lat-%d-%d" % (os.getpid(), ipc_n[0])
                    r = runner.run_procs([Proc("server", impl, "lat", ["server", ep, size, n], cpu=0, ready=True),
                                   Proc("client", impl, "lat", ["client", "{ep0}", size, n], cpu=1)],
                                  suite.timeout)
                    return with_cpu(r["client"], r)

                init = 200 if suite.quick else (2000 if size <= 4096 else 200)
                sides.append(peer_side(Side(impl, run, init, calibrate="seconds", cmin=200, cmax=300_000), k))
            if transport != "inproc":
                sides.append(_ping_side(suite, impls, transport, size))
            label = "%s %s" % (transport, size_label(size))
            log("[3 latency] %s" % label)
            cell = suite.compare(3, {"transport": transport, "size": size}, sides, LAT_METRICS, label)
            cell["floor_violations"] = floor_violations(cell)
            ratios(cell, "mean_us", True, impls)
            ratios(cell, "p99_us", True, impls)
            # Issue 21: no lead bought by a spinning core.
            ratios(cell, "cpu_us_per_rt", True, impls)


PING_KIND = {"tcp": "pingtcp", "ipc": "pingunix"}


def _ping_side(suite, impls, transport, size):
    """The latency goal's floor: a plain-socket ping-pong of the same size over
    the same kind of socket (loopback TCP or a Unix socketpair with oxmq's ipc
    buffer sizes), interleaved with the REQ/REP sides so that both see the same
    machine. Each repetition runs it four ways: each side blocking in read() or
    polling (non-blocking reads in a loop, then a sleep, as libraries that spin
    do), pinned to two cores or not; each figure is the best of the four (a
    floor any library beats is a measurement error to explain), and its CPU per
    round trip is that of the way that gave the best p50."""
    i = Impl("ping", "machine: plain socket ping-pong (best of blocking/polling, pinned/unpinned)", "machine")
    i._argv, i.reason = impls["phys"]._argv, impls["phys"].reason
    free = Impl("ping_unpinned", i.label, "machine")
    free._argv, free.reason, free.env = i._argv, i.reason, {"PHYS_NOPIN": "1"}
    kind = PING_KIND[transport]

    def run(n):
        runs = {}
        for wait, pin in PING_VARIANTS:
            impl = i if pin == "pinned" else free
            r = runner.run_procs([Proc("probe", impl, "physical", [kind, size, n, wait])], suite.timeout)
            ran = r["probe"]["wait"] if "wait" in r["probe"] else None
            if ran != wait:  # a physical built before the polling way ignores it
                raise runner.RunError("physical ran its ping-pong %r, not %r (rebuild bench/c/physical.c)"
                                      % (ran, wait))
            runs[wait, pin] = with_cpu(r["probe"], r)
        best = min(runs.values(), key=lambda r: r["p50_us"])
        out = {m: min(r[m] for r in runs.values()) for m in ("mean_us", "p50_us", "p99_us")}
        # The longest of the four sizes the next count, so that no way runs past the time target.
        out.update(seconds=max(r["seconds"] for r in runs.values()), cpu_us_per_rt=best["cpu_us_per_rt"])
        for (wait, pin), r in runs.items():
            out["p50_us_%s_%s" % (wait, pin)] = r["p50_us"]
            out["cpu_us_per_rt_%s_%s" % (wait, pin)] = r["cpu_us_per_rt"]
        return out

    init = 200 if suite.quick else (2000 if size <= 4096 else 200)
    return Side(i, run, init, calibrate="seconds", cmin=200, cmax=300_000)


def floor_violations(cell):
    """Sides whose p50 round trip beats the plain-socket floor of their cell."""
    ping = cell["sides"].get("ping", {}).get("metrics", {}).get("p50_us")
    if not ping:
        return []
    return [(k, e["metrics"]["p50_us"]["median"]) for k, e in cell["sides"].items()
            if k != "ping" and "p50_us" in e.get("metrics", {}) and e["metrics"]["p50_us"]["median"] < ping["median"]]
