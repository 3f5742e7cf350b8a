#!/usr/bin/env python3
"""Unit test of the benchmark harness (run by make bench-check, so by make test).

Every study runs against a fake run_procs in which every side is available and
oxmq is behind every peer on every measure. Then:

- no study changed any side's peers (studies run in the suite's order, so a
  study that rewrites a peer list would starve the ones after it);
- in every cell, every oxmq side has a ratio against every declared peer that
  has figures for the ratio's measure (omq-libzmq, omq.rs, zmq.rs, rzmq and
  monocoque included);
- every one of those ratios, all below 1 here, is listed in "Where oxmq trails".

It asserts the harness's bookkeeping, never a speed.

    python bench/test_harness.py
"""

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import report  # noqa: E402
import studies  # noqa: E402
from harness import discover, fmt, measure, runner, stats  # noqa: E402

SCALE = studies.module(13)
CURVE = studies.module(9)
LATENCY = studies.module(3)

# Measures where less is better: oxmq's fake figure is doubled; for the others it is halved.
LOWER = ("_us", "_per_rt", "seconds", "ns_per_call", "rss_mib", "bytes_per_msg", "cpu_s_per_mline", "_per_conn", "_ms")
# Study 13's clock readings: a start (0 for every side) and an end (later for oxmq),
# so that its connect time, delivery rate and lag come out behind too.
STARTS = ("t0", "first_sent", "last_sent")
ENDS = ("t1", "last_done")


class Figures(dict):
    """A fake result line: any measure a study reads exists."""

    def __init__(self, impl, neutral=None):
        super().__init__()
        self.impl = impl
        self.neutral = neutral or {}  # counts a program echoes from its arguments
        for k in list(fmt.UNITS) + ["count", "cpu_s", "start", "end", "cpu", "lines"]:
            self[k] = self._value(k)
        self["mechanism"] = self.get("mechanism")

    def __missing__(self, key):
        return self._value(key)

    def get(self, key, default=None):
        if key in ("lib", "module", "module_version", "zmq_version"):
            return None
        if key == "mechanism":
            return 2 if self.impl.env.get("BENCH_CURVE") == "1" else 0
        return self._value(key)

    def _value(self, key):
        if key in STARTS:
            return 0.0
        if key in self.neutral:
            return self.neutral[key]
        v = 100.0
        if self.impl is not None and self.impl.oxmq:
            v = v * 2 if key.endswith(LOWER) or key in ENDS else v / 2
        return v


def echoed(p):
    """What study 13's scale program reports of its own arguments."""
    if p.prog != "scale":
        return {}
    if p.args[0] == "dealer":
        return {"dealers": float(p.args[4])}
    if p.args[0] == "sub":
        return {"subs": float(p.args[4]), "msgs": float(p.args[5])}
    return {}


def fake_run_procs(procs, timeout):
    out = {p.role: Figures(p.impl, echoed(p)) for p in procs if not isinstance(p, runner.Delay)}
    for p in procs:
        if p.prog == "physical" and len(p.args) > 3:
            out[p.role]["wait"] = p.args[3]  # physical.c echoes how its ping-pong waited
    return out


def fake_hosts_up(self, k):
    """Study 13's veth cells without making namespaces: the bookkeeping only."""
    self.server_ns, self.client_ns = "fake-s", ["fake-c%d" % j for j in range(k)]
    self.label = "%d veth hosts" % k
    return None


def main():
    failed = []

    def check(cond, what):
        print("%s - %s" % ("ok" if cond else "not ok", what))
        if not cond:
            failed.append(what)

    runner.run_procs = fake_run_procs
    SCALE.Hosts.up = fake_hosts_up
    SCALE.Hosts.down = lambda self: None
    impls = discover.discover()
    for i in impls.values():
        i.reason = None
    declared = {k: tuple(i.peers) for k, i in impls.items()}
    check(set(declared["c_oxmq"]) >= {"c_libzmq", "c_omq"}, "the C ABI side is compared with libzmq and omq-libzmq")
    check(set(declared["rust_oxmq"]) >= {"c_libzmq", "rust_omq", "rust_zeromq", "rust_rzmq", "rust_monocoque"},
          "the Rust side is compared with libzmq and the four Rust crates")
    suite = measure.Suite(True, 0.01, 2, timeout=1)
    order = [n for n in studies.SUITE_ORDER if n in studies.STUDIES]
    data = {"studies": {}}
    for n in order:
        studies.STUDIES[n][2](suite, impls)
        data["studies"][str(n)] = dict(suite.results.get(n, {"cells": []}), name=studies.STUDIES[n][0])
    check(all(tuple(i.peers) == declared[k] for k, i in impls.items()), "no study changed any side's peers")
    mech = CURVE.mech_impls(impls)
    missing, ratios = [], []
    for n, st in data["studies"].items():
        for c in st["cells"]:
            for metric, rs in c.get("ratios", {}).items():
                have = {(r["oxmq"], r["peer"]) for r in rs}
                ratios.extend((n, c["label"], metric, r["oxmq"], r["peer"]) for r in rs if r["ratio"] < 1)
                for key, e in c["sides"].items():
                    if not e.get("oxmq") or metric not in e.get("metrics", {}):
                        continue
                    for peer in declared[key] if key in declared else mech[key].peers:
                        if metric in c["sides"].get(peer, {}).get("metrics", {}) and (key, peer) not in have:
                            missing.append("study %s %s %s: %s vs %s" % (n, c["label"], metric, key, peer))
    check(not missing, "every measured peer of every oxmq side has a ratio%s" % (
        "" if not missing else " (missing %d, e.g. %s)" % (len(missing), "; ".join(missing[:4]))))
    for n, peer in (("2", "rust_monocoque"), ("2", "c_omq"), ("3", "rust_omq"), ("4", "c_mutex"), ("13", "c_libzmq"),
                    ("13", "c_omq"), ("13", "c_libzmq435")):
        check(any(r[0] == n and r[4] == peer for r in ratios), "study %s has ratios against %s" % (n, peer))
    c3 = data["studies"]["3"]["cells"]
    check(all("cpu_us_per_rt" in c.get("ratios", {}) for c in c3),
          "study 3 compares CPU per round trip in every cell (no lead bought by a spinning core)")
    check(all("cpu_us_per_rt" in e["metrics"] for c in c3 for e in c["sides"].values() if "p50_us" in e["metrics"]),
          "study 3: every side with round trips has its CPU per round trip, the floor's included")
    floors = [c["sides"]["ping"]["metrics"] for c in c3 if c["key"]["transport"] in ("tcp", "ipc")]
    check(bool(floors) and all("%s_%s_%s" % (m, w, pin) in f for f in floors for w, pin in LATENCY.PING_VARIANTS
                               for m in ("p50_us", "cpu_us_per_rt")),
          "study 3: the floor runs four ways (blocking and polling, pinned and unpinned), each with its CPU")
    c2 = data["studies"]["2"]["cells"]
    lend = [r for c in c2 if c["key"]["mode"] == "copy" and c["key"]["size"] >= stats.PY_LEND_MIN
            for r in c["ratios"]["msgs_per_s"] if r["oxmq"] == "oxmq_py"]
    check(bool(lend) and all(r.get("unlike") for r in lend), "Python copy cells from 4 KiB are marked lend≠copy")
    check(not any(r.get("unlike") for _, _, r in report.behind(data["studies"]["2"], "msgs_per_s")),
          "no headline ratio comes from a lend≠copy cell")
    forced = [r for c in c2 if c["key"]["mode"] == "bytearray" for r in c["ratios"]["msgs_per_s"]]
    check(bool(forced) and {r["peer"] for r in forced} == {"pyzmq", "pyomq"} and not any(r.get("unlike") for r in forced),
          "the forced-copy (bytearray) Python rows compare oxmq with pyzmq and pyomq like for like")
    scale = {(c["key"]["shape"], c["key"]["hosts"]): set(c["ratios"]) for c in data["studies"]["13"]["cells"]}
    check(scale.get(("dealers", "4 veth hosts")) == set(SCALE.SCALE_RATIOS)
          and scale.get(("fanout", "loopback")) == {"delivered_per_s", "lag_ms"}
          and ("fanout", "4 veth hosts") in scale,
          "study 13 has ratios for connect time, memory and round trips, and for fan-out, on loopback and veth")
    rows = {(r[1], r[2], r[3], r[4]) for r in report.trailing(data)}
    label = {k: i.label for k, i in list(impls.items()) + list(mech.items())}
    label["raw"], label["ping"] = "raw socket", "plain socket ping-pong"
    absent = [r for r in ratios if (r[1], r[2], label[r[3]], label[r[4]]) not in rows]
    check(bool(ratios) and not absent, "every ratio where oxmq is behind (%d) is in \"Where oxmq trails\"%s" % (
        len(ratios), "" if not absent else " (absent %d, e.g. %s)" % (len(absent), absent[:3])))
    for ok, what in trailing_links():
        check(ok, what)
    goals = [r for rows in report.goal_cells(data) for r in rows]
    check(bool(goals) and not any(r["verdict"] == report.MET for r in goals),
          "on a run where oxmq trails every peer, no goal cell of issue 21 is met (%d cells)" % len(goals))
    check(not report.lead_by_spinning(data), "on that run no lead is listed as bought by spinning")
    for ok, what in goal_checks():
        check(ok, what)
    check(conformance_section_ok(), "the conformance section shows each column, each difference's bytes and "
          "a column not available")
    check(stale_check_ok(), "an oxmq artefact older than a source it is built from is not measured (reason: stale)")
    print("test_harness: %s" % ("%d failed" % len(failed) if failed else "all passed"))
    return 1 if failed else 0


def anchors(md):
    """The anchors a Markdown page offers: GitHub's slug of each heading, and explicit <a id/name="...">."""
    import re

    out = set(re.findall(r'<a (?:id|name)="([^"]+)"', md))
    for line in md.splitlines():
        m = re.match(r"#{1,6} (.*)", line)
        if m:
            out.add(re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-"))
    return out


def section_text(md, anchor):
    """The text of the section whose heading has this anchor, up to the next heading of its level."""
    out, level = [], None
    for line in md.splitlines():
        head = line.split(" ", 1)[0]
        if level is None:
            if set(head) == {"#"} and anchor in anchors(line):
                level = len(head)
        elif set(head) == {"#"} and len(head) <= level:
            break
        else:
            out.append(line)
    return "\n".join(out)


def trailing_links():
    """The "why" column on the committed run: WHY_RULES name known sections, every row of the committed
    results.json gets its link (or is counted as having none), every linked anchor exists in TRAILING.md
    (sections still being written on a named branch excepted), and the committed REPORT.md carries the table
    as report.py renders it now."""
    import json

    data = json.loads((BENCH / "results.json").read_text())
    trailing_md = (BENCH / "TRAILING.md").read_text()
    have = anchors(trailing_md)
    rows = report.trailing(data)
    picked = [report.why_section(r[7]) for r in rows]
    unknown = sorted({s for s, _, _ in report.WHY_RULES if s not in report.TRAILING_SECTIONS})
    yield (not unknown, "every WHY_RULES section is one of TRAILING_SECTIONS%s" % (
        " (unknown: %s)" % ", ".join(unknown) if unknown else ""))
    if unknown:
        return  # the checks below would only fail on the same unknown key
    yield (all(s is not None for s, r in zip(picked, rows) if r[7]["overlap"]),
           "committed run: every trailing row whose ranges overlap has a section (%d rows)" % len(rows))
    used = {s for s in picked if s}
    dangling = ["%s -> #%s" % (s, report.TRAILING_SECTIONS[s][1]) for s in sorted(used)
                if report.TRAILING_SECTIONS[s][1] not in have and not report.TRAILING_SECTIONS[s][2]]
    pending = sorted(s for s in used if report.TRAILING_SECTIONS[s][2] and report.TRAILING_SECTIONS[s][1] not in have)
    yield (bool(used) and not dangling, "committed run: every section the rows link (%d) has its anchor in "
           "TRAILING.md%s%s" % (len(used), " (missing: %s)" % "; ".join(dangling) if dangling else "",
                                " (pending on their branches: %s)" % ", ".join(pending) if pending else ""))
    unused = sorted(k for k, v in report.TRAILING_SECTIONS.items() if not v[2] and v[1] not in have)
    yield (not unused, "every section TRAILING_SECTIONS names exists in TRAILING.md%s" % (
        " (missing: %s)" % ", ".join(unused) if unused else ""))
    bare = sum(s is None for s in picked)
    unprofiled = sum(s is not None and (s in report.UNPROFILED or report.TRAILING_SECTIONS[s][2] is not None)
                     for s in picked)
    md = "\n".join(report.sec_trailing(data))
    n = bare + unprofiled
    yield ("%d %s no profile in TRAILING.md yet (%d with no section" % (
        n, "comparison has" if n == 1 else "comparisons have", bare) in md,
           "the table counts the committed rows with no profile: %d no rule maps, %d linked to a section that "
           "says not profiled yet or is being written on a branch" % (bare, unprofiled))
    said = [k for k in sorted(report.UNPROFILED) if "not profiled yet" not in section_text(
        trailing_md, report.TRAILING_SECTIONS[k][1]).lower()]
    yield (not said, "every section marked UNPROFILED says \"not profiled yet\"%s" % (
        " (does not: %s)" % ", ".join(said) if said else ""))
    committed = (BENCH / "REPORT.md").read_text()
    yield (md.strip() in committed, "the committed REPORT.md's \"Where oxmq trails\" is what report.py renders "
           "from the committed results.json (re-render with run.py --report-only)")


def stale_check_ok():
    """discover.stale_reason on a tree outside git: a source changed after the
    artefact was built makes it stale, a cache under __pycache__ does not."""
    import os
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        (root / "src" / "__pycache__").mkdir(parents=True)
        src, cache, art = root / "src" / "lib.rs", root / "src" / "__pycache__" / "x.pyc", root / "artefact.so"
        for f in (src, cache, art):
            f.write_text("x")
        os.utime(src, (1000, 1000))
        os.utime(art, (2000, 2000))
        os.utime(cache, (3000, 3000))
        fresh = discover.stale_reason(art, ["src"], "make it", root=root)
        missing = discover.stale_reason(root / "none.so", ["src"], "make it", root=root)
        os.utime(src, (3000, 3000))
        stale = discover.stale_reason(art, ["src"], "make it", root=root)
        # cargo's dep-info: only the files it lists count (a test-only module does not).
        dep = root / "artefact.d"
        dep.write_text("%s: %s /elsewhere/registry/x.rs\n\n%s:\n" % (art, root / "src" / "main.rs", src))
        (root / "src" / "main.rs").write_text("x")
        os.utime(root / "src" / "main.rs", (1500, 1500))
        by_dep = discover.stale_reason(art, (), "make it", root=root, dep_file=dep)
        os.utime(root / "src" / "main.rs", (2500, 2500))
        by_dep_stale = discover.stale_reason(art, (), "make it", root=root, dep_file=dep)
        no_dep = discover.stale_reason(art, (), "make it", root=root, dep_file=root / "none.d")
    return (fresh is None and missing is None and stale == "stale: artefact.so predates src/lib.rs (run `make it`)"
            and by_dep is None and no_dep is None
            and by_dep_stale == "stale: artefact.so predates src/main.rs (run `make it`)")


# Issue 21's "Goals" list (`issues show 21`), each bullet as the issue words it: report.GOALS must quote each one,
# and no other, so that a goal left out of the report, or reworded into an easier one, fails here.
ISSUE_21_GOALS = [
    "Every study 2 and study 3 cell at least 1.0× the best peer of its language: libzmq 4.3.5 and omq's C ABI in "
    "C; omq.rs, zmq.rs, rzmq and monocoque (newest, tuned as its author recommends) in Rust; pyzmq and pyomq in "
    "Python (1.2× there).",
    "tcp 16 B and 64 B between two processes at least 2.5× libzmq, pinned and unpinned, and ahead of monocoque and "
    "omq.rs in the same run.",
    "REQ/REP p50 over tcp and ipc at every size no more than 1.3× a plain-socket ping-pong of the same size (with a "
    "floor that really is a floor), and ahead of omq's C ABI.",
    "tcp and ipc 1 MiB and 4 MiB, copy and zero-copy, at least 0.9× the raw socket measured like for like.",
    "C ABI inproc zero-copy at every size at least 1.0× libzmq.",
    "The one-context, two-thread tcp layout of item 4, as a study 2 cell, at every size at least 1.0× libzmq (1 MiB "
    "is 0.30× today).",
    "CURVE throughput at every size at least 1.0× libzmq 4.3.5 on a current libsodium (1 MiB is 0.91–0.95× today).",
    "Python: tcp and ipc 16–256 B at least 3× pyzmq and 2× pyomq; large messages with a real copy at least 1.2× "
    "pyzmq and pyomq.",
    "CPU per message reported for each side, and no lead bought by a spinning core: messages per CPU-second at least "
    "the peer's in every cell that oxmq claims.",
    "No regression elsewhere: soak, interop matrix, security matrix, pyzmq suite and libzmq's own behaviour stay as "
    "they are.",
]


def goal_checks():
    """Issue 21's goals on the committed run: every goal has its rule, every rule that results.json can judge
    covers cells, the verdicts follow the rules (no claimed lead met on a range that reaches below its target),
    unmet cells link known sections, leads bought by spinning are found, and the committed REPORT.md carries the
    section as report.py renders it now."""
    import json

    quotes = [g["quote"] for g in report.GOALS]
    missing = [q[:40] for q in ISSUE_21_GOALS if q not in quotes]
    extra = [q[:40] for q in quotes if q not in ISSUE_21_GOALS]
    yield (not missing and not extra and len(quotes) == len(set(quotes)),
           "every goal of issue 21 (%d) has one rule in GOALS, quoted exactly, and GOALS has no other%s%s" % (
               len(ISSUE_21_GOALS), " (missing: %s)" % "; ".join(missing) if missing else "",
               " (not in the issue: %s)" % "; ".join(extra) if extra else ""))
    yield (all(g["parts"] or g.get("outside") for g in report.GOALS),
           "a goal results.json cannot judge says what judges it")
    v = report.goal_verdict
    yield (v((1.1, 0.95, 1.2), 1.0) == report.UNSHOWN and v((1.3, 1.05, 1.5), 1.0) == report.MET
           and v((0.8, 0.7, 0.9), 1.0) == report.MISSED and v((2.0, 1.5, 2.6), 2.5) == report.UNSHOWN
           and v((0.95, 0.8, 1.0), 0.9, lead=False) == report.MET and v(None, 1.0) == report.UNMEASURED
           and v((1.3, 1.2, 1.4), 1.0, doubt="floor beaten") == report.UNSHOWN,
           "goal verdicts: a claimed lead whose range straddles its target is not shown, a bound is decided by "
           "the median, a missing figure is not measured, a doubted figure is not shown")
    fake = {"studies": {"2": {"cells": [{"label": "x", "key": {"transport": "tcp", "size": 16, "mode": "copy"},
                                         "sides": {"a": {"label": "A"}, "b": {"label": "B"}},
                                         "ratios": {"msgs_per_s": [{"oxmq": "a", "peer": "b", "ratio": 1.2}],
                                                    "msgs_per_cpu_s": [{"oxmq": "a", "peer": "b", "ratio": 0.8}]}}]}}}
    yield (len(report.lead_by_spinning(fake)) == 1, "a lead with fewer messages per CPU-second than the peer's is "
           "listed as bought by spinning")
    data = json.loads((BENCH / "results.json").read_text())
    cells = report.goal_cells(data)
    empty = [g["quote"][:40] for g, rows in zip(report.GOALS, cells) if g["parts"] and not rows]
    yield (not empty, "committed run: every goal results.json can judge covers cells%s" % (
        " (none for: %s)" % "; ".join(empty) if empty else ""))
    rows = [r for rs in cells for r in rs]
    yield (all(r["verdict"] in report.VERDICTS for r in rows), "committed run: every goal cell has a verdict")
    loose = ["%s %s vs %s" % (r["cell"], r["side"], r["against"]) for r in rows
             if r["lead"] and r["verdict"] == report.MET and r["span"][1] < r["target"]]
    yield (not loose, "committed run: no claimed lead is counted as met on a range that reaches below its "
           "target%s" % (" (%s)" % "; ".join(loose[:3]) if loose else ""))
    unknown = sorted({r["why"] for r in rows if r["why"] and r["why"] not in report.TRAILING_SECTIONS})
    yield (not unknown and all(r["why"] is None for r in rows if r["verdict"] == report.MET),
           "committed run: goal cells not met link only known TRAILING.md sections, met cells none")
    md = "\n".join(report.sec_goals(data))
    committed = (BENCH / "REPORT.md").read_text()
    yield (report.goals_summary(cells) in md and md.strip() in committed,
           "the committed REPORT.md's \"Issue 21's goals, cell by cell\" is what report.py renders from the "
           "committed results.json (%s)" % report.goals_summary(cells))


def conformance_section_ok():
    """bench/conformance_report.py on a matrix.json as conformance/run.py writes it."""
    import json
    import tempfile
    from pathlib import Path

    import conformance_report

    matrix = {"generated_utc": "2026-11-26T06:00:00Z", "seconds": 60.0, "only": None, "under_test": ["oxmq C ABI"],
              "unlisted_differences": [],
              "clauses": [{"id": "zap.400", "text": "RFC 27 §reply: 400 | ERROR"}],
              "implementations": [
                  {"name": "libzmq 4.3.5", "version": "4.3.5",
                   "results": {"zap.400": {"status": "differs", "detail": "answer 04095e52524f5203343030"}}},
                  {"name": "oxmq C ABI", "version": "4.3.5", "results": {"zap.400": {"status": "pass"}}},
                  {"name": "omq C ABI", "missing": "not built"}]}
    with tempfile.TemporaryDirectory() as d:
        run, kept = Path(d) / "matrix.json", Path(d) / "kept.json"
        run.write_text(json.dumps(matrix))
        md = "\n".join(conformance_report.section(run, kept))
        # The complete run is kept, and shown once the suite's output is gone.
        run.unlink()
        md_kept = "\n".join(conformance_report.section(run, kept))
        # A partial run is shown but does not replace the kept one.
        run.write_text(json.dumps(dict(matrix, only="zap", generated_utc="2026-11-27T06:00:00Z")))
        md_partial = "\n".join(conformance_report.section(run, kept))
        kept_after = json.loads(kept.read_text())["generated_utc"]
        nothing = "\n".join(conformance_report.section(Path(d) / "none.json", Path(d) / "none-kept.json"))
    return ("04095e52524f5203343030" in md and "| oxmq C ABI (zmq_version 4.3.5) | 1 | 0 |" in md
            and "not available: not built" in md and "400 \\| ERROR" in md
            and md_kept == md and "clauses starting `zap` only" in md_partial
            and kept_after == "2026-11-26T06:00:00Z" and "Not available" in nothing)


def test_harness():
    """pytest's entry: the whole script above, every check passing."""
    assert main() == 0


def test_goals():
    """pytest's entry for issue 21's goals alone, with each failing check named."""
    failed = [what for ok, what in goal_checks() if not ok]
    assert not failed, failed


def test_trailing_links():
    """pytest's entry for the "why" column alone, with each failing check named."""
    failed = [what for ok, what in trailing_links() if not ok]
    assert not failed, failed


if __name__ == "__main__":
    sys.exit(main())
