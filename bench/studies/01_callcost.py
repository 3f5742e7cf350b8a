"""Study 1, callcost (alone: `bench/run.py --studies 1`); its heading in the report is TITLE."""

from harness import runner
from harness.measure import Side
from harness.runner import Proc
from harness.stats import ratios

TITLE = "Call cost: a non-blocking 5-byte send on a PUB bound to ipc, no subscriber"


def _callcost_side(suite, impl, count):
    def run(n):
        return runner.run_procs([Proc("main", impl, "callcost", [n])], suite.timeout)["main"]

    return Side(impl, run, count, calibrate="seconds", cmin=1000, cmax=100_000_000)


def measure(suite, impls):
    keys = ["c_libzmq", "c_oxmq", "rust_oxmq", "pyzmq", "pyomq", "oxmq_py", "pydeb_libzmq", "pydeb_oxmq",
            "perl_libzmq", "perl_oxmq", "ruby_libzmq", "ruby_oxmq", "ruby_gem"]
    count = 20_000 if suite.quick else 200_000
    sides = [_callcost_side(suite, impls[k], count) for k in keys]
    cell = suite.compare(1, {}, sides, ["ns_per_call"], "call cost")
    ratios(cell, "ns_per_call", True, impls)
