"""Study 4, inproc (alone: `bench/run.py --studies 4`); its heading in the report is TITLE."""

from harness import runner
from harness.measure import Side
from harness.runner import Proc
from harness.stats import ratios

TITLE = "inproc hand-off: 1,048,576 four-byte messages over PAIR between two threads"


def measure(suite, impls):
    n = 1 << 16 if suite.quick else 1 << 20
    sides = []
    for k, mode in [("c_libzmq", "zmq"), ("c_oxmq", "zmq"), ("rust_oxmq", None), ("c_mutex", "mutex"),
                    ("pyzmq", None), ("pyomq", None), ("oxmq_py", None), ("py_queue", None)]:
        impl = impls[k]
        args = [mode, n] if mode else [n]

        def run(count, impl=impl, args=args):
            return runner.run_procs([Proc("main", impl, "inproc_pair", args)], suite.timeout)["main"]

        sides.append(Side(impl, run, n))
    cell = suite.compare(4, {"count": n}, sides, ["seconds", "msgs_per_s"], "inproc PAIR x %d" % n)
    # The mutex+condvar queue is a peer of this study only.
    ratios(cell, "seconds", True, impls, extra_peers={"c_oxmq": ["c_mutex"], "rust_oxmq": ["c_mutex"]})
