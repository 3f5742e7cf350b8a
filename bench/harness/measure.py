"""Measurement: the sides of a cell interleaved (A B A B), an uncounted warm-up that sizes the count, statistics."""

import statistics

from harness.config import log
from harness.fmt import fmt_stat
from harness.runner import RunError


class Side:
    """A side of a comparison cell. run(count) -> flat dict of metrics; the
    calibration key names the metric holding the timed seconds."""

    def __init__(self, impl, run, count, calibrate=None, cmin=1, cmax=10**9):
        self.impl, self.run, self.count = impl, run, count
        self.calibrate, self.cmin, self.cmax = calibrate, cmin, cmax
        self.reps = None  # None: the suite's repetitions
        self.target_scale = 1.0


class Suite:
    def __init__(self, quick, target, reps, timeout):
        self.quick, self.target, self.reps, self.timeout = quick, target, reps, timeout
        self.results = {}
        self.on_cell = None  # called after each cell, so a run cut short keeps its cells

    def compare(self, study, cell_key, sides, metrics, label, target=None):
        """Measure the sides of one cell, interleaved; store and return the cell."""
        target = target or self.target
        cell = {"key": cell_key, "label": label, "sides": {}}
        live = []
        for s in sides:
            entry = {"label": s.impl.label, "group": s.impl.group, "oxmq": s.impl.oxmq, "metrics": {},
                     "errors": []}
            cell["sides"][s.impl.key] = entry
            if not s.impl.available:
                entry["unavailable"] = s.impl.reason
                continue
            # Warm-up (not counted), which also sizes the count for ~target seconds.
            try:
                res = s.run(s.count)
            except RunError as e:
                entry["unavailable"] = "failed: %s" % e
                log("  %-34s %s" % (s.impl.label, entry["unavailable"]))
                continue
            if s.calibrate and not self.quick:
                secs = max(float(res.get(s.calibrate) or 0), 1e-4)
                s.count = int(max(s.cmin, min(s.cmax, s.count * target * s.target_scale / secs)))
            entry["count"] = s.count
            for k in ("lib", "zmq_version", "module", "module_version", "recv_is_sent"):
                if k in res:
                    entry[k] = res[k]
            live.append((s, entry))
        for rep in range(self.reps):
            for s, entry in live:
                if any("timed out" in e for e in entry["errors"]):
                    continue  # one hang in a cell is enough: don't spend the time limit again
                if s.reps is not None and rep >= s.reps:
                    continue
                try:
                    res = s.run(s.count)
                except RunError as e:
                    entry["errors"].append(str(e))
                    log("  rep %d/%d %-30s FAILED %s" % (rep + 1, self.reps, s.impl.label, e))
                    continue
                for m in metrics:
                    if m in res and res[m] is not None:
                        entry["metrics"].setdefault(m, {"values": []})["values"].append(float(res[m]))
            log("  %s  rep %d/%d done" % (label, rep + 1, self.reps))
        for s, entry in live:
            for m, d in entry["metrics"].items():
                v = d["values"]
                d.update(median=statistics.median(v), min=min(v), max=max(v))
            if not entry["metrics"]:
                entry["unavailable"] = "every run failed: %s" % (entry["errors"][-1] if entry["errors"] else "?")
            first = metrics[0]
            if first in entry["metrics"]:
                log("  %-34s %s" % (s.impl.label, fmt_stat(entry["metrics"][first], first)))
        self.results.setdefault(study, {"cells": []})["cells"].append(cell)
        if self.on_cell:
            self.on_cell(study)
        return cell
