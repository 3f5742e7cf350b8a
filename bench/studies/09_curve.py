"""Study 9, curve (alone: `bench/run.py --studies 9`); its heading in the report is TITLE."""

import os

from harness import runner
from harness.config import NCPU, log
from harness.discover import Impl
from harness.fmt import size_label
from harness.measure import Side
from harness.runner import Proc, RunError
from harness.stats import ratios, side_speed

TITLE = "CURVE security: PUSH/PULL throughput and REQ/REP latency over tcp, CURVE against NULL"

CURVE_IMPLS = ["c_libzmq", "c_libzmq435", "c_oxmq", "rust_oxmq", "pyzmq", "oxmq_py"]
MECHANISMS = (("null", "NULL", 0), ("curve", "CURVE", 2))


def curve_sizes(quick):
    return [1024] if quick else [64, 1024, 65536, 1 << 20]


def mech_impls(impls):
    """Each side twice, as NULL and as CURVE: the same program, told by
    BENCH_CURVE to make its bound socket a CURVE server and its connecting one a
    client (fixed test keys). Peers pair up within a mechanism."""
    out = {}
    for k in CURVE_IMPLS:
        base = impls[k]
        for mk, mname, _ in MECHANISMS:
            i = Impl("%s_%s" % (k, mk), "%s, %s" % (base.label, mname), base.group, oxmq=base.oxmq,
                     peers=["%s_%s" % (p, mk) for p in base.peers if p in CURVE_IMPLS],
                     expect_capi=base.expect_capi, expect_lib=base.expect_lib)
            i._argv, i.reason = base._argv, base.reason
            i.env = dict(base.env, BENCH_CURVE="1" if mk == "curve" else "0")
            i.base, i.mech = k, mk
            out[i.key] = i
    return out


def _check_mech(res, impl):
    want = dict((mk, code) for mk, _, code in MECHANISMS)[impl.mech]
    if res.get("mechanism") != want:
        raise RunError("ran with mechanism %r, not %s (%d)" % (res.get("mechanism"), impl.mech.upper(), want))
    return res


def curve_costs(cell, metric, lower_better):
    """Per library: CURVE speed ÷ NULL speed in this cell (1.0 = CURVE is free)."""
    out = {}
    for k in CURVE_IMPLS:
        n = cell["sides"].get(k + "_null")
        c = cell["sides"].get(k + "_curve")
        sn = side_speed(n, metric, lower_better) if n else None
        sc = side_speed(c, metric, lower_better) if c else None
        if sn and sc:
            out[k] = sc / sn
    cell.setdefault("curve_cost", {})[metric] = out
    return out


def measure(suite, impls):
    load0 = os.getloadavg()
    mi = mech_impls(impls)
    for size in curve_sizes(suite.quick):
        sides = []
        for k in CURVE_IMPLS:
            for mk, _, _ in MECHANISMS:
                impl = mi["%s_%s" % (k, mk)]

                def run(n, impl=impl, size=size):
                    r = runner.run_procs([Proc("recv", impl, "thr", ["recv", "tcp://127.0.0.1:*", size, n, "copy"], cpu=0,
                                        ready=True),
                                   Proc("send", impl, "thr", ["send", "{ep0}", size, n, "copy", "{ep1}"], cpu=1)],
                                  suite.timeout)
                    out = dict(_check_mech(r["recv"], impl))
                    out["send_calls_per_s"] = r["send"]["send_calls_per_s"]
                    return out

                init = int(max(20, min(20000, (8 << 20) // size)))
                if suite.quick:
                    init = 2000 if size <= 4096 else 20
                sides.append(Side(impl, run, init, calibrate="seconds", cmin=20, cmax=50_000_000))
        label = "tcp %s" % size_label(size)
        log("[9 curve] throughput %s" % label)
        cell = suite.compare(9, {"kind": "thr", "transport": "tcp", "size": size}, sides,
                             ["msgs_per_s", "mb_per_s"], "throughput " + label, target=suite.target * 0.6)
        ratios(cell, "msgs_per_s", False, mi)
        curve_costs(cell, "msgs_per_s", False)
    sides = []
    for k in CURVE_IMPLS:
        for mk, _, _ in MECHANISMS:
            impl = mi["%s_%s" % (k, mk)]

            def run(n, impl=impl):
                r = runner.run_procs([Proc("server", impl, "lat", ["server", "tcp://127.0.0.1:*", 64, n], cpu=0, ready=True),
                               Proc("client", impl, "lat", ["client", "{ep0}", 64, n], cpu=1)], suite.timeout)
                return _check_mech(r["client"], impl)

            sides.append(Side(impl, run, 200 if suite.quick else 2000, calibrate="seconds", cmin=200,
                              cmax=300_000))
    log("[9 curve] latency tcp 64 B")
    cell = suite.compare(9, {"kind": "lat", "transport": "tcp", "size": 64}, sides, ["mean_us", "p50_us", "p99_us"],
                         "latency tcp 64 B", target=suite.target * 0.6)
    ratios(cell, "mean_us", True, mi)
    curve_costs(cell, "mean_us", True)
    suite.results[9]["loadavg"] = [list(load0), list(os.getloadavg()), NCPU]
