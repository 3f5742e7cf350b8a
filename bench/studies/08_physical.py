"""Study 8, physical (alone: `bench/run.py --studies 8`); its heading in the report is TITLE."""

from harness import runner
from harness.discover import Impl
from harness.fmt import size_label
from harness.measure import Side
from harness.runner import Proc

TITLE = "The physical limit: loopback TCP, Unix socket and memcpy bandwidth"


def measure(suite, impls):
    total = 64 << 20 if suite.quick else 512 << 20
    kinds = [("tcp", 1 << 20), ("unix", 1 << 20), ("memcpy", 1 << 20), ("memcpy", 64 << 20)]
    phys = impls["phys"]
    sides = []
    for kind, chunk in kinds:
        # Each kind is a pseudo-implementation so that the kinds are interleaved.
        i = Impl("%s_%d" % (kind, chunk), "%s, %s writes" % (kind, size_label(chunk)), "machine")
        i._argv, i.reason = phys._argv, phys.reason

        def run(count, kind=kind, chunk=chunk, i=i):
            r = runner.run_procs([Proc("probe", i, "physical", [kind, chunk, count])], suite.timeout)["probe"]
            return r

        sides.append(Side(i, run, total, calibrate="seconds", cmin=chunk, cmax=64 << 30))
    suite.compare(8, {}, sides, ["mb_per_s", "seconds"], "physical limit")
