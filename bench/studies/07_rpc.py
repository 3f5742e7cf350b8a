"""Study 7, rpc (alone: `bench/run.py --studies 7`); its heading in the report is TITLE."""

import os

from harness import runner
from harness.config import log
from harness.measure import Side
from harness.runner import Proc
from harness.stats import ratios

TITLE = "Cross-process calls over REQ/REP on ipc"


def measure(suite, impls):
    ipc_n = [0]
    for shape in ("add", "sort", "callback"):
        sides = []
        for k in ["pyzmq", "pyomq", "oxmq_py", "py_pipe"]:
            impl = impls[k]

            def run(n, impl=impl, shape=shape):
                if impl.key == "py_pipe":
                    return runner.run_procs([Proc("client", impl, "rpc", ["client", "-", shape, n])], suite.timeout)["client"]
                ipc_n[0] += 1
                ep = "ipc:///tmp/oxmq-bench-rpc-%d-%d" % (os.getpid(), ipc_n[0])
                r = runner.run_procs([Proc("server", impl, "rpc", ["server", ep], cpu=0, ready=True),
                               Proc("client", impl, "rpc", ["client", "{ep0}", shape, n], cpu=1)], suite.timeout)
                return r["client"]

            init = (50 if shape == "callback" else 300) if suite.quick else (200 if shape == "callback" else 2000)
            sides.append(Side(impl, run, init, calibrate="seconds", cmin=50, cmax=1_000_000))
        log("[7 rpc] %s" % shape)
        cell = suite.compare(7, {"shape": shape}, sides, ["us_per_call"], "rpc %s" % shape)
        ratios(cell, "us_per_call", True, impls)
