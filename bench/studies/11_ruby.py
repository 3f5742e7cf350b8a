"""Study 11, ruby (alone: `bench/run.py --studies 11`); its heading in the report is TITLE."""

from harness import runner
from harness.config import log
from harness.measure import Side
from harness.runner import Proc
from harness.stats import ratios

TITLE = "Ruby: REQ/REP round trips and a logger pipeline, the oxmq gem vs ffi-rzmq"


def measure(suite, impls):
    """The rbczmq study's two shapes (ruby/study): 5-byte REQ/REP round trips over tcp between two processes,
    and a ::Logger writing lines into a PUSH, relayed PULL -> PUB -> SUB in one process. Both ratios are kept
    under the cell's "speed" key too, so the report has one metric to judge the study by."""
    shapes = [("rtt", "REQ/REP tcp 5 B round trips", "us_per_round_trip", True, 5000),
              ("logger", "logger: PUSH -> PULL/PUB -> SUB", "lines_per_s", False, 10_000)]
    for prog, label, metric, lower, count in shapes:
        sides = []
        for k in ["ruby_libzmq", "ruby_oxmq", "ruby_gem"]:
            impl = impls[k]

            def run(n, impl=impl, prog=prog):
                return runner.run_procs([Proc("main", impl, prog, ["gem" if impl.key == "ruby_gem" else "ffi", n])],
                                 suite.timeout)["main"]

            n0 = count // 5 if suite.quick else count
            sides.append(Side(impl, run, n0, calibrate="seconds", cmin=n0, cmax=50 * count))
        log("[11 ruby] %s" % label)
        cell = suite.compare(11, {"shape": prog}, sides, [metric, "seconds"], label)
        cell["ratios"] = {metric: ratios(cell, metric, lower, impls)}
        cell["ratios"]["speed"] = cell["ratios"][metric]
