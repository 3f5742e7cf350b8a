#!/usr/bin/env python3
"""Structure check of a benchmark run (make bench-check): the report, the JSON
and the plots are produced and well-formed. It never asserts a speed.

    python bench/check.py [OUT_DIR]      (default bench/out/quick)
"""

import json
import re
import sys
from pathlib import Path

STUDIES = [str(n) for n in range(1, 14)]
# Sides issue 12 added: each must be in study 2 and 3, with figures or a reason.
NEW_SIDES = ["c_omq", "rust_omq", "rust_zeromq", "rust_rzmq", "rust_monocoque"]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def main():
    out = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent / "out" / "quick")
    passed, failed = [], []

    def check(cond, what):
        (passed if cond else failed).append(what)
        print("%s - %s" % ("ok" if cond else "not ok", what))
        return cond

    res = out / "results.json"
    if not check(res.is_file(), "results.json exists"):
        return finish(passed, failed)
    try:
        data = json.loads(res.read_text())
        check(True, "results.json parses")
    except ValueError as e:
        check(False, "results.json parses (%s)" % e)
        return finish(passed, failed)
    m = data.get("machine", {})
    check(all(m.get(k) for k in ("cpu", "cores", "kernel", "versions")), "machine: CPU, cores, kernel, versions")
    check(all(k in m.get("versions", {}) for k in ("pyzmq", "pyomq", "Debian libzmq (pkg-config)", "rustc",
                                                     "Rust peers", "omq-libzmq (C ABI)", "libzmq 4.3.5 (CURVE C peer)")),
          "machine: versions of the peers (or why they are not built)")
    for n in STUDIES:
        st = data.get("studies", {}).get(n)
        if not check(isinstance(st, dict) and not st.get("error"), "study %s present and did not crash" % n):
            continue
        cells = st.get("cells", [])
        check(bool(cells), "study %s has cells" % n)
        ran = 0
        ok = True
        dark = []
        for c in cells:
            for key, side in c.get("sides", {}).items():
                if side.get("oxmq") and not side.get("metrics"):
                    dark.append("%s / %s: %s" % (c.get("label"), side.get("label"), side.get("unavailable", "?")))
                if "unavailable" in side:
                    ok &= isinstance(side["unavailable"], str) and bool(side["unavailable"])
                    continue
                for metric, d in side.get("metrics", {}).items():
                    vals = d.get("values", [])
                    ok &= bool(vals) and all(isinstance(v, (int, float)) for v in vals)
                    ok &= d.get("min", 0) <= d.get("median", -1) <= d.get("max", -2)
                ran += bool(side.get("metrics"))
        check(ok, "study %s: every side has figures (median within min–max) or a reason it could not run" % n)
        check(ran > 0, "study %s: at least one side ran" % n)
        # A peer may be missing here (its reason is printed); oxmq's own sides may not.
        check(not dark, "study %s: every oxmq side has figures%s" % (
            n, "" if not dark else " (none for %d: %s)" % (len(dark), "; ".join(dark[:3])[:400])))
    st2 = data.get("studies", {}).get("2", {})
    for n in ("2", "3"):
        cells = data.get("studies", {}).get(n, {}).get("cells", [])
        # Python-only rows (bytearray) and the C-only one-process layout
        cells = [c for c in cells if c.get("key", {}).get("mode") != "bytearray" and not c.get("key", {}).get("layout")]
        check(bool(cells) and all(k in c.get("sides", {}) for c in cells for k in NEW_SIDES),
              "study %s: every cell lists omq's C ABI and the Rust peers (figures or a reason)" % n)
    lat = [c for c in data.get("studies", {}).get("3", {}).get("cells", [])
           if c.get("key", {}).get("transport") in ("tcp", "ipc")]
    check(bool(lat) and all("p50_us" in c["sides"].get("ping", {}).get("metrics", {}) for c in lat),
          "study 3: every tcp/ipc cell has the plain-socket ping-pong measured beside REQ/REP")
    cpu = [c for c in st2.get("cells", [])
           if any("msgs_per_cpu_s" in sd.get("metrics", {}) for sd in c.get("sides", {}).values())]
    check(bool(cpu), "study 2: messages per CPU-second are measured")
    check(any(c.get("key", {}).get("pinned") for c in st2.get("cells", [])) or not m.get("taskset"),
          "study 2: the pinned variant is a separate, labelled cell")
    # Python copy vs lend (issue 20): over inproc the receiver of a lent bytes gets
    # the sender's own object; of a bytearray, a copy. Checked on what ran.
    inproc = [c for c in st2.get("cells", []) if c.get("key", {}).get("transport") == "inproc"
              and c["key"].get("size", 0) >= 4096 and "recv_is_sent" in c["sides"].get("oxmq_py", {})]
    forced = [c for c in inproc if c["key"]["mode"] == "bytearray"]
    lent = [c for c in inproc if c["key"]["mode"] == "copy"]
    check(bool(forced) and not any(c["sides"]["oxmq_py"]["recv_is_sent"] for c in forced),
          "study 2: oxmq (Python) copies a bytearray (the receiver gets a new object): the forced-copy row copies")
    check(bool(lent) and all(c["sides"]["oxmq_py"]["recv_is_sent"] for c in lent),
          "study 2: oxmq (Python) lends an exact bytes >= 4 KiB (the receiver gets the sent object): labelled lend")
    # Study 13 (scale): the veth cells ran or say why the machine did not allow them.
    st13 = data.get("studies", {}).get("13", {})
    veth = st13.get("veth")
    check(isinstance(veth, str) and bool(veth) and (veth.endswith("veth hosts") == any(
        c.get("key", {}).get("hosts", "").endswith("veth hosts") for c in st13.get("cells", []))),
          "study 13: veth cells ran, or the reason they were skipped is recorded (%s)" % veth)
    # The README's CURVE figures are generated from the committed CURVE run, never typed.
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import report  # noqa: E402 - bench/report.py

    readme = Path(__file__).resolve().parent.parent / "README.md"
    committed = Path(__file__).resolve().parent / "curve.json"
    text = readme.read_text() if readme.is_file() else ""
    i, j = text.find(report.README_CURVE_BEGIN), text.find(report.README_CURVE_END)
    check(committed.is_file() and 0 <= i < j and text[i:j + len(report.README_CURVE_END)]
          == report.readme_curve_block(json.loads(committed.read_text())),
          "README's CURVE figures are the block generated from bench/curve.json")
    rep = out / "REPORT.md"
    if check(rep.is_file(), "REPORT.md exists"):
        text = rep.read_text()
        for n in STUDIES:
            check(re.search(r"^## %s\. " % n, text, re.M) is not None, "REPORT.md has a section for study %s" % n)
        check("## Machine" in text, "REPORT.md records the machine")
        check("## Where oxmq trails" in text, "REPORT.md lists where oxmq trails a peer")
        if "9" in data.get("studies", {}):
            cm = out / "CURVE.md"
            check(cm.is_file() and "## CURVE security" in cm.read_text(), "CURVE.md has the CURVE study")
        imgs = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
        check(len(imgs) >= 6, "REPORT.md links plots (%d)" % len(imgs))
        bad = [i for i in imgs if not (out / i).is_file() or (out / i).read_bytes()[:8] != PNG_MAGIC]
        check(not bad, "every linked plot is a PNG file%s" % (" (bad: %s)" % bad if bad else ""))
    return finish(passed, failed)


def finish(passed, failed):
    print("bench-check: %d passed, %d failed" % (len(passed), len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
