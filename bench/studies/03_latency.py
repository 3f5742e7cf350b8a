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
                        return runner.run_procs([Proc("main", impl, "lat", ["inproc", size, n])], suite.timeout)["main"]
                    if transport == "tcp":
                        ep = "tcp://127.0.0.1:*"
                    else:
                        ipc_n[0] += 1
                        ep = "ipc:///tmp/oxmq-bench-lat-%d-%d" % (os.getpid(), ipc_n[0])
                    r = runner.run_procs([Proc("server", impl, "lat", ["server", ep, size, n], cpu=0, ready=True),
                                   Proc("client", impl, "lat", ["client", "{ep0}", size, n], cpu=1)],
                                  suite.timeout)
                    return r["client"]

                init = 200 if suite.quick else (2000 if size <= 4096 else 200)
                sides.append(peer_side(Side(impl, run, init, calibrate="seconds", cmin=200, cmax=300_000), k))
            if transport != "inproc":
                sides.append(_ping_side(suite, impls, transport, size))
            label = "%s %s" % (transport, size_label(size))
            log("[3 latency] %s" % label)
            cell = suite.compare(3, {"transport": transport, "size": size}, sides,
                                 ["mean_us", "p50_us", "p99_us", "p50_us_pinned", "p50_us_unpinned"], label)
            cell["floor_violations"] = floor_violations(cell)
            ratios(cell, "mean_us", True, impls)
            ratios(cell, "p99_us", True, impls)


PING_KIND = {"tcp": "pingtcp", "ipc": "pingunix"}


def _ping_side(suite, impls, transport, size):
    """The latency goal's floor: a plain-socket ping-pong of the same size over
    the same kind of socket (loopback TCP or a Unix socketpair with oxmq's ipc
    buffer sizes), interleaved with the REQ/REP sides so that both see the same
    machine. Each repetition runs it pinned and unpinned and keeps the better of
    each figure: a floor any library beats is a measurement error to explain."""
    i = Impl("ping", "machine: plain socket ping-pong (best of pinned, unpinned)", "machine")
    i._argv, i.reason = impls["phys"]._argv, impls["phys"].reason
    free = Impl("ping_unpinned", i.label, "machine")
    free._argv, free.reason, free.env = i._argv, i.reason, {"PHYS_NOPIN": "1"}
    kind = PING_KIND[transport]

    def run(n):
        a = runner.run_procs([Proc("probe", i, "physical", [kind, size, n])], suite.timeout)["probe"]
        b = runner.run_procs([Proc("probe", free, "physical", [kind, size, n])], suite.timeout)["probe"]
        out = {m: min(a[m], b[m]) for m in ("mean_us", "p50_us", "p99_us")}
        out.update(seconds=a["seconds"], p50_us_pinned=a["p50_us"], p50_us_unpinned=b["p50_us"])
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
