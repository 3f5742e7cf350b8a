"""The ZMTP conformance matrix in the benchmark report (issue 25): read
target/conformance/matrix.json, written by `make conformance`
(conformance/run.py), and render it as a REPORT.md section. `make bench` runs
the suite first unless the json is newer than everything it was made from
(mk/bench.mk, bench-conformance).

A complete run (every clause) is also kept as bench/conformance.json, which
is committed with the report: a report rebuilt where no suite has run (a
fresh checkout, `bench/run.py --report-only` after merging cells) shows that
last matrix instead of losing the section.

    section(json_path) -> list of markdown lines
"""

import json
import shutil
from pathlib import Path

MATRIX_JSON = Path(__file__).resolve().parent.parent / "target" / "conformance" / "matrix.json"
KEPT_JSON = Path(__file__).resolve().parent / "conformance.json"

MARK = {"pass": "pass", "differs": "**differs**", "n/a": "n/a", "error": "suite error"}


def load(path=MATRIX_JSON):
    path = Path(path)
    if not path.is_file():
        return None
    with open(path) as f:
        return json.load(f)


def totals(col):
    counts = {}
    for cell in col.get("results", {}).values():
        counts[cell["status"]] = counts.get(cell["status"], 0) + 1
    return counts


def current(path=MATRIX_JSON, kept=KEPT_JSON):
    """The matrix to show: the suite's latest complete run, which replaces
    the kept copy, or else the kept copy. A partial run (`--only`) is shown
    but never kept."""
    data = load(path)
    if data is not None:
        if not data.get("only"):
            shutil.copyfile(path, kept)
        return data
    return load(kept)


def section(path=MATRIX_JSON, kept=KEPT_JSON):
    data = current(path, kept)
    md = ["## ZMTP conformance\n"]
    if data is None:
        md.append("Not available: `%s` is missing (`make conformance` writes it; `make bench` runs it), "
                  "and no earlier run is kept in `%s`." % (path, kept.name))
        md.append("")
        return md
    cols = data["implementations"]
    md.append("Each RFC clause (ZMTP 3.0/3.1, NULL, PLAIN, CURVE, ZAP, ZWS 2.0, the socket-type RFCs) is checked "
              "against each implementation through the wire only: a scripted byte-level peer faces one socket of the "
              "implementation, reached by a small adapter (`conformance/`, `make conformance`). **differs** means the "
              "implementation did something other than the clause says; the bytes seen are in the notes below the "
              "table. n/a: a MAY the implementation does not take up, or a transport it lacks. Run %s UTC, %s s%s; "
              "columns under test (a difference there must be listed with its reason in "
              "`conformance/known_differences.json`): %s." % (
                  data["generated_utc"].replace("T", " ").rstrip("Z"), data["seconds"],
                  " (clauses starting `%s` only)" % data["only"] if data.get("only") else "",
                  ", ".join(data["under_test"])))
    md.append("")
    md.append("| implementation | pass | differs | n/a | suite error |")
    md.append("|---|---|---|---|---|")
    for c in cols:
        if "missing" in c:
            md.append("| %s | not available: %s | | | |" % (c["name"], c["missing"]))
            continue
        t = totals(c)
        md.append("| %s (zmq_version %s) | %d | %d | %d | %d |" % (
            c["name"], c.get("version"), t.get("pass", 0), t.get("differs", 0), t.get("n/a", 0), t.get("error", 0)))
    md.append("")
    present = [c for c in cols if "missing" not in c]
    md.append("| clause | " + " | ".join(c["name"] for c in present) + " |")
    md.append("|---|" + "---|" * len(present))
    notes = []
    for cl in data["clauses"]:
        row = ["`%s` %s" % (cl["id"], cl["text"].replace("|", "\\|"))]
        for c in present:
            cell = c["results"].get(cl["id"])
            if cell is None:
                row.append("")
                continue
            text = MARK.get(cell["status"], cell["status"])
            if cell["status"] != "pass" and cell.get("detail"):
                notes.append("%d. %s, `%s`: %s%s" % (len(notes) + 1, c["name"], cl["id"], cell["detail"],
                                                    " (listed: %s)" % cell["listed"] if cell.get("listed") else ""))
                text += " [%d]" % len(notes)
            row.append(text)
        md.append("| " + " | ".join(row) + " |")
    md.append("")
    if notes:
        md.append("What each implementation did where it differs (bytes as hex):\n")
        md.extend(n.replace("\n", " ") for n in notes)
        md.append("")
    if data.get("unlisted_differences"):
        md.append("**Unlisted differences of a column under test (make conformance failed):**\n")
        md.extend("- %s" % f for f in data["unlisted_differences"])
        md.append("")
    return md

