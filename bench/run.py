#!/usr/bin/env python3
"""The oxmq benchmark suite: the classic ZeroMQ studies, side by side.

    python bench/run.py [--quick] [--studies 1,2,...] [--report-only]

Runs every study's sides interleaved (A B A B ..., warm-up not counted),
reports the median with min-max and the speed ratio oxmq/peer, shows progress
on stderr, prints a summary table, and writes REPORT.md, plots/*.png and
results.json into bench/ (or bench/out/quick/ in quick mode, so a quick run
never overwrites the committed full report).

Each side is a small program (bench/c, bench/py, bench/perl, bench/ruby,
crates/oxmq/examples/bench_oxmq.rs) printing one JSON line. A side whose
implementation is not there yet (oxmq's C ABI, its Python package, a binding)
is reported as "not available (why)" and lights up when it lands.

This file is the command line only: the harness (discovery, process runner,
measurement, ratios) is bench/harness/, each study is bench/studies/NN_name.py,
and the rendering is bench/report.py, which needs only results.json.

Environment: QUICK=1 (same as --quick), BENCH_STUDIES=1,2 (same as
--studies), BENCH_TARGET_S (seconds per timed run, default 1.0), BENCH_REPS.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import report  # noqa: E402 - bench/report.py
from harness.config import BENCH, ROOT, log  # noqa: E402
from harness.discover import discover  # noqa: E402
from harness.machine import machine_info  # noqa: E402
from harness.measure import Suite  # noqa: E402
from studies import STUDIES, SUITE_ORDER  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", default=os.environ.get("QUICK", "") not in ("", "0"))
    ap.add_argument("--studies", default=os.environ.get("BENCH_STUDIES", ""))
    ap.add_argument("--report-only", action="store_true", help="re-render REPORT.md and plots from results.json")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    out = Path(args.out) if args.out else (BENCH / "out" / "quick" if args.quick else BENCH)
    out.mkdir(parents=True, exist_ok=True)
    if args.report_only:
        data = json.loads((out / "results.json").read_text())
        if "9" in data["studies"]:
            report.write_curve(data, out)
        if out == BENCH and (out / "curve.json").is_file():
            report.update_readme(json.loads((out / "curve.json").read_text()), ROOT / "README.md")
        report.write_all(data, out)
        report.print_summary(data)
        return 0
    reps = int(os.environ.get("BENCH_REPS", "2" if args.quick else "5"))
    target = float(os.environ.get("BENCH_TARGET_S", "1.0"))
    # BENCH_TIMEOUT_S: how long one run may take before it counts as a hang.
    timeout = float(os.environ.get("BENCH_TIMEOUT_S", "20" if args.quick else "60"))
    suite = Suite(args.quick, target, reps, timeout=timeout)
    impls = discover()
    wanted = [int(s) for s in args.studies.split(",") if s.strip()] or sorted(STUDIES)
    order = [n for n in SUITE_ORDER if n in wanted]
    log("oxmq bench: %s mode, %d reps, ~%.1f s per run, studies %s" % (
        "QUICK" if args.quick else "full", reps, target, ",".join(map(str, order))))
    for k, i in impls.items():
        if not i.available:
            log("  not available: %-30s %s" % (i.label, i.reason))
    data = {"quick": args.quick, "reps": reps, "target_s": target, "machine": machine_info(impls), "studies": {}}
    t_start = time.monotonic()

    def save_partial(n):
        # The study so far, marked partial until it finishes.
        data["studies"][str(n)] = dict(suite.results.get(n, {"cells": []}), partial=True,
                                       name=STUDIES[n][0], title=STUDIES[n][1])
        (out / "results.json").write_text(json.dumps(data, indent=1))

    suite.on_cell = save_partial
    for n in order:
        name, title, fn = STUDIES[n]
        log("== study %d: %s" % (n, title))
        t0 = time.monotonic()
        try:
            fn(suite, impls)
            res = suite.results.get(n, {"cells": []})
        except Exception as e:  # noqa: BLE001 - a broken study must not sink the others
            log("  study %d crashed: %r" % (n, e))
            res = {"cells": [], "error": repr(e)}
        res.update(name=name, title=title, seconds=time.monotonic() - t0)
        data["studies"][str(n)] = res
        data["elapsed_s"] = time.monotonic() - t_start
        (out / "results.json").write_text(json.dumps(data, indent=1))
        log("  (study %d took %.0f s)" % (n, res["seconds"]))
    data["elapsed_s"] = time.monotonic() - t_start
    (out / "results.json").write_text(json.dumps(data, indent=1))
    if "9" in data["studies"]:  # the CURVE study also on its own (CURVE.md, curve.json)
        (out / "curve.json").write_text(json.dumps(dict(data, studies={"9": data["studies"]["9"]}), indent=1))
        report.write_curve(data, out)
        if out == BENCH:  # the README's CURVE figures come from the committed run
            report.update_readme(data, ROOT / "README.md")
    report.write_all(data, out)
    report.print_summary(data)
    log("wrote %s, %s, %s/ (%.0f s)" % (out / "REPORT.md", out / "results.json", out / "plots",
                                         data["elapsed_s"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
