"""Study 13, scale (alone: `bench/run.py --studies 13`); its heading in the report is TITLE."""

import os
import shutil
import subprocess

from harness import runner
from harness.config import log
from harness.discover import Impl, probe
from harness.measure import Side
from harness.runner import Proc, RunError
from harness.stats import ratios

TITLE = ("Scale: one ROUTER with 10 to 10,000 DEALERs, one PUB fanning out to 1,000 SUBs, over loopback "
         "and over veth pairs between network namespaces")

SCALE_IMPLS = ["c_libzmq", "c_libzmq435", "c_oxmq", "c_omq"]
# DEALERs per client process: each costs libzmq two descriptors (its tcp
# connection and its socket's mailbox), and RLIMIT_NOFILE's hard limit may be
# as low as 20,000 in a container.
SCALE_PER_PROC = 2500
SCALE_PINGS = 10000  # p99 is then the 100th slowest trip: 2000 left it moving 2-2.5x between repetitions
SCALE_HOSTS = 4  # network namespaces ("hosts") for the clients of the veth cells
SCALE_NET = "10.201"  # 10.201.J.1 (server side) - 10.201.J.2 (client J) over veth pair J
SCALE_METRICS = ["connect_seconds", "router_kib_per_conn", "client_kib_per_conn", "p50_us", "p99_us", "mean_us",
                 "cpu_us_per_ping"]
SCALE_RATIOS = ["connect_seconds", "router_kib_per_conn", "client_kib_per_conn", "p50_us", "p99_us"]
FANOUT_METRICS = ["delivered_per_s", "lag_ms", "publish_seconds"]


def scale_counts(quick):
    """DEALER counts; 10 is the baseline of the p99 goal (p99 at the largest within 2× p99 at 10)."""
    return [10, 200] if quick else [10, 1000, 5000, 10000]


def fanout_shape(quick):
    """(SUBs, messages each, message size, SUB processes)."""
    return (100, 100, 64, 2) if quick else (1000, 1000, 64, 4)


def _split(n, parts):
    return [n // parts + (1 if j < n % parts else 0) for j in range(parts)]


def _in_netns(impl, ns):
    """impl's programs run inside network namespace ns (None: as they are)."""
    if ns is None:
        return impl
    i = Impl(impl.key, impl.label, impl.group, oxmq=impl.oxmq, peers=impl.peers, expect_capi=impl.expect_capi,
             expect_lib=impl.expect_lib)
    i._argv = lambda prog, base=impl: ["ip", "netns", "exec", ns] + base._argv(prog)
    i.env, i.reason = impl.env, impl.reason
    return i


class Hosts:
    """Where the server and each client process run. Loopback: one namespace,
    client j connecting to 127.0.0.(j+1) (several addresses, so that ephemeral
    ports never run short). Veth: the server in a namespace of its own, client
    j in namespace j, joined to the server's by veth pair j, so that the traffic
    crosses real (virtual) interfaces and each "host" has its own TCP stack."""

    def __init__(self):
        self.server_ns, self.client_ns, self.label = None, [], "loopback"

    def server(self, impl):
        return _in_netns(impl, self.server_ns)

    def client(self, impl, j):
        return _in_netns(impl, self.client_ns[j % len(self.client_ns)] if self.client_ns else None)

    def addr(self, j):
        if self.client_ns:
            return "%s.%d.1" % (SCALE_NET, j % len(self.client_ns))
        return "127.0.0.%d" % (j % 250 + 1)

    def up(self, k):
        """Make the namespaces; None when done, else why the machine does not allow it."""
        if os.geteuid() != 0:
            return "needs root (ip netns add)"
        if not shutil.which("ip"):
            return "no `ip` command (iproute2)"
        prefix = "oxmqscale%d" % os.getpid()
        self.server_ns = prefix + "s"
        self.client_ns = ["%sc%d" % (prefix, j) for j in range(k)]
        cmds = [["ip", "netns", "add", self.server_ns], ["ip", "-n", self.server_ns, "link", "set", "lo", "up"]]
        for j, ns in enumerate(self.client_ns):
            cmds += [["ip", "netns", "add", ns], ["ip", "-n", ns, "link", "set", "lo", "up"],
                     ["ip", "-n", self.server_ns, "link", "add", "vs%d" % j, "type", "veth", "peer", "name",
                      "vc%d" % j, "netns", ns],
                     ["ip", "-n", self.server_ns, "addr", "add", "%s.%d.1/24" % (SCALE_NET, j), "dev", "vs%d" % j],
                     ["ip", "-n", ns, "addr", "add", "%s.%d.2/24" % (SCALE_NET, j), "dev", "vc%d" % j],
                     ["ip", "-n", self.server_ns, "link", "set", "vs%d" % j, "up"],
                     ["ip", "-n", ns, "link", "set", "vc%d" % j, "up"]]
        for c in cmds:
            why = probe(c)
            if why:
                self.down()
                return "`%s` failed: %s" % (" ".join(c), why)
        # `ip netns exec` also needs to make a mount namespace, which a container may refuse.
        why = probe(["ip", "netns", "exec", self.client_ns[0], "true"])
        if why:
            self.down()
            return "`ip netns exec` failed: %s" % why
        why = probe(["ip", "netns", "exec", self.client_ns[0], "ping", "-c", "1", "-W", "2", self.addr(0)]) \
            if shutil.which("ping") else None
        if why:
            self.down()
            return "no route over the veth pair: %s" % why
        self.label = "%d veth hosts" % k
        return None

    def down(self):
        for ns in [self.server_ns] + self.client_ns:
            if ns:
                subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        self.server_ns, self.client_ns = None, []


def _scale_dealers(suite, impl, n, hosts, pings):
    procs_n = max(1, -(-n // SCALE_PER_PROC))
    if hosts.client_ns:
        procs_n = max(procs_n, len(hosts.client_ns))
    procs = [Proc("router", hosts.server(impl), "scale", ["router", "tcp://0.0.0.0:*", n, procs_n], ready=True)]
    for j, mine in enumerate(_split(n, procs_n)):
        procs.append(Proc("d%d" % j, hosts.client(impl, j), "scale",
                          ["dealer", hosts.addr(j), "{ep0}", n, mine, j, "{ep1}", pings]))
    r = runner.run_procs(procs, suite.timeout)
    ds = [r["d%d" % j] for j in range(procs_n)]
    t0, t1 = min(d["t0"] for d in ds), max(d["t1"] for d in ds)
    out = {"connect_seconds": t1 - t0, "router_kib_per_conn": r["router"]["router_kib_per_conn"],
           "client_kib_per_conn": sum(d["client_kib_per_conn"] * d["dealers"] for d in ds) / n,
           "client_processes": procs_n}
    for m in ("p50_us", "p99_us", "mean_us"):
        out[m] = ds[0][m]
    # CPU per round trip on both ends (the ROUTER's includes its idle time with
    # N connections open): less at the mercy of a loaded machine than p99.
    rounds = ds[0]["pings"] + ds[0]["ping_sample"]
    out["cpu_us_per_ping"] = ds[0]["client_cpu_us_per_ping"] + r["router"]["router_cpu_s_after"] * 1e6 / rounds
    for k in ("lib", "zmq_version"):
        if k in r["router"]:
            out[k] = r["router"][k]
    return out


def _scale_fanout(suite, impl, hosts, shape):
    subs, msgs, size, procs_n = shape
    if hosts.client_ns:
        procs_n = max(procs_n, len(hosts.client_ns))
    procs = [Proc("pub", hosts.server(impl), "scale", ["pub", "tcp://0.0.0.0:*", procs_n, msgs, size], ready=True)]
    for j, mine in enumerate(_split(subs, procs_n)):
        procs.append(Proc("s%d" % j, hosts.client(impl, j), "scale",
                          ["sub", hosts.addr(j), "{ep0}", "{ep1}", mine, msgs]))
    r = runner.run_procs(procs, suite.timeout)
    ss = [r["s%d" % j] for j in range(procs_n)]
    got = sum(s["subs"] * s["msgs"] for s in ss)
    if got != subs * msgs:
        raise RunError("SUBs report %d deliveries, not %d" % (got, subs * msgs))
    first, last = min(s["first_sent"] for s in ss), max(s["last_done"] for s in ss)
    out = {"delivered_per_s": got / (last - first) if last > first else None,
           "lag_ms": (last - max(s["last_sent"] for s in ss)) * 1e3,
           "publish_seconds": r["pub"]["publish_seconds"]}
    for k in ("lib", "zmq_version"):
        if k in r["pub"]:
            out[k] = r["pub"][k]
    return out


def _scale_cells(suite, impls, hosts, counts, shape, pings):
    for n in counts:
        sides = []
        for k in SCALE_IMPLS:
            def run(count, impl=impls[k], n=n):
                return _scale_dealers(suite, impl, n, hosts, pings)

            sides.append(Side(impls[k], run, n))
        label = "ROUTER + %d DEALERs (%s)" % (n, hosts.label)
        log("[13 scale] %s" % label)
        cell = suite.compare(13, {"shape": "dealers", "connections": n, "hosts": hosts.label}, sides,
                             SCALE_METRICS, label)
        for m in SCALE_RATIOS:
            ratios(cell, m, True, impls)
    sides = []
    for k in SCALE_IMPLS:
        def run(count, impl=impls[k]):
            return _scale_fanout(suite, impl, hosts, shape)

        sides.append(Side(impls[k], run, shape[1]))
    label = "PUB -> %d SUBs x %d msgs of %d B (%s)" % (shape[0], shape[1], shape[2], hosts.label)
    log("[13 scale] %s" % label)
    cell = suite.compare(13, {"shape": "fanout", "subs": shape[0], "msgs": shape[1], "size": shape[2],
                              "hosts": hosts.label}, sides, FANOUT_METRICS, label)
    ratios(cell, "delivered_per_s", False, impls)
    ratios(cell, "lag_ms", True, impls)


def measure(suite, impls):
    counts, shape = scale_counts(suite.quick), fanout_shape(suite.quick)
    pings = 500 if suite.quick else SCALE_PINGS
    saved = suite.reps
    suite.reps = min(saved, 3)  # a 10,000-connection run takes seconds; three repetitions per side
    try:
        _scale_cells(suite, impls, Hosts(), counts, shape, pings)
        veth = Hosts()
        why = veth.up(SCALE_HOSTS)
        suite.results.setdefault(13, {"cells": []})["veth"] = why or veth.label
        if why:
            log("[13 scale] veth cells skipped: %s" % why)
            return
        try:
            _scale_cells(suite, impls, veth, counts[-1:], shape, pings)
        finally:
            veth.down()
    finally:
        suite.reps = saved
