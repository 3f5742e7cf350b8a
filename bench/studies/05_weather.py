"""Study 5, weather (alone: `bench/run.py --studies 5`); its heading in the report is TITLE."""

from harness import runner
from harness.measure import Side
from harness.runner import Proc
from harness.stats import ratios

TITLE = "Weather station: PUB server and a SUB client filtering on \"10001 \""


def measure(suite, impls):
    zip_range, n = (1000, 20) if suite.quick else (10000, 100)
    sides = []
    for k in ["c_libzmq", "c_oxmq", "rust_oxmq", "pyzmq", "pyomq", "oxmq_py", "perl_libzmq", "perl_oxmq", "ruby_gem"]:
        impl = impls[k]

        def run(count, impl=impl):
            r = runner.run_procs([Proc("server", impl, "weather", ["server", "tcp://127.0.0.1:*", zip_range], cpu=0,
                                ready=True, stop=True),
                           Proc("client", impl, "weather", ["client", "{ep0}", n], cpu=1)], suite.timeout)
            return {"client_seconds": r["client"]["seconds"], "pub_rate": r["server"]["pub_rate"],
                    "lib": r["client"].get("lib"), "module": r["client"].get("module"),
                    "module_version": r["client"].get("module_version")}

        sides.append(Side(impl, run, n))
    cell = suite.compare(5, {"zip_range": zip_range, "updates": n}, sides, ["client_seconds", "pub_rate"],
                         "weather station")
    ratios(cell, "client_seconds", True, impls)
    ratios(cell, "pub_rate", False, impls)
