"""Study 12, memory (alone: `bench/run.py --studies 12`); its heading in the report is TITLE."""

from harness import runner
from harness.measure import Side
from harness.runner import Proc
from harness.stats import ratios

TITLE = "Memory: resident set with 1,000,000 queued 100-byte messages (HWM 0)"


def measure(suite, impls):
    count = 100_000 if suite.quick else 1_000_000
    sides = []
    for k in ("c_libzmq", "c_oxmq", "c_omq"):
        impl = impls[k]

        def run(n, impl=impl):
            return runner.run_procs([Proc("main", impl, "memq", [n, 100])], suite.timeout)["main"]

        sides.append(Side(impl, run, count))
    saved = suite.reps
    suite.reps = min(saved, 3)  # memory does not vary run to run the way time does
    try:
        cell = suite.compare(12, {"count": count, "size": 100}, sides, ["rss_mib", "bytes_per_msg", "seconds"],
                             "%d queued 100 B messages" % count)
    finally:
        suite.reps = saved
    ratios(cell, "rss_mib", True, impls)
