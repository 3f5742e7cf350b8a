"""Study 10, pyrecv (alone: `bench/run.py --studies 10`); its heading in the report is TITLE."""

from harness import runner
from harness.config import log
from harness.measure import Side
from harness.runner import Proc
from harness.stats import ratios

TITLE = "Event-loop receivers: zmq.asyncio and ZMQStream receive rate, 100 B over tcp, two processes"


def measure(suite, impls):
    size = 100
    for kind in ("asyncio", "stream"):
        sides = []
        for k in ("pyzmq", "oxmq_py"):
            impl = impls[k]

            def run(n, impl=impl, kind=kind):
                r = runner.run_procs([Proc("recv", impl, "pyrecv", ["recv", "tcp://127.0.0.1:*", size, n, kind], cpu=0,
                                    ready=True),
                               Proc("send", impl, "thr", ["send", "{ep0}", size, n, "copy", "{ep1}"], cpu=1)],
                              suite.timeout)
                return dict(r["recv"])

            sides.append(Side(impl, run, 2000, calibrate="seconds", cmin=200, cmax=5_000_000))
        label = "%s tcp %d B" % ("zmq.asyncio" if kind == "asyncio" else "ZMQStream", size)
        log("[10 pyrecv] %s" % label)
        cell = suite.compare(10, {"receiver": kind, "size": size}, sides, ["msgs_per_s"], label)
        ratios(cell, "msgs_per_s", False, impls)
