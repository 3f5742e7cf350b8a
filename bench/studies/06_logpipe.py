"""Study 6, logpipe (alone: `bench/run.py --studies 6`); its heading in the report is TITLE."""

from harness import runner
from harness.measure import Side
from harness.runner import Delay, Proc, RunError
from harness.stats import ratios

TITLE = "Log pipeline: 3 writers PUSH -> collector PULL/PUB -> 2 SUB readers"


def measure(suite, impls):
    per_writer = 5000 if suite.quick else 200_000
    sides = []
    for k in ["pyzmq", "pyomq", "oxmq_py"]:
        impl = impls[k]

        def run(count, impl=impl):
            procs = [Proc("collector", impl, "logpipe", ["collector", 3], ready=True),
                     Proc("reader_all", impl, "logpipe", ["reader", "{ep1}", ""], ready=True),
                     Proc("reader_err", impl, "logpipe", ["reader", "{ep1}", "ERROR"], ready=True)]
            writers = [Proc("w%d" % i, impl, "logpipe", ["writer", "{ep0}", count, i, "{ep1}"]) for i in range(3)]
            r = runner.run_procs(procs + [Delay(0.5)] + writers, suite.timeout)
            total = 3 * count
            if r["reader_all"]["lines"] != total:
                raise RunError("unfiltered reader got %d of %d lines" % (r["reader_all"]["lines"], total))
            t0 = min(r["w%d" % i]["start"] for i in range(3))
            t1 = max(r["reader_all"]["end"], r["reader_err"]["end"])
            cpu = sum(v["cpu"] for v in r.values())
            return {"lines_per_s": total / (t1 - t0), "cpu_s_per_mline": cpu / (total / 1e6),
                    "error_lines": r["reader_err"]["lines"], "module": r["collector"].get("module"),
                    "module_version": r["collector"].get("module_version")}

        sides.append(Side(impl, run, per_writer))
    cell = suite.compare(6, {"lines": 3 * per_writer}, sides, ["lines_per_s", "cpu_s_per_mline"], "log pipeline")
    ratios(cell, "lines_per_s", False, impls)
    ratios(cell, "cpu_s_per_mline", True, impls)
