#!/usr/bin/env python3
"""Merge the cells of a partial rerun into a results file, cell by cell.

    bench/merge_cells.py RERUN.json [INTO.json] --note "what ran, when, on which commit"

Every cell of RERUN (matched by study and cell key) replaces the same cell of
INTO (default bench/results.json); cells INTO lacks are appended; the note is
added to INTO's notes, which the report prints at its top, so a reader knows
which cells come from which run. Then `bench/run.py --report-only` rewrites
the report from the merged file.
"""
import argparse
import json
import pathlib
import sys


def key_of(cell):
    return json.dumps(cell["key"], sort_keys=True)


def merge(rerun, into):
    counts = {}
    for n, study in rerun["studies"].items():
        if study.get("partial"):
            sys.exit("study %s of the rerun is partial: finish it or drop it first" % n)
        target = into["studies"].setdefault(n, {k: v for k, v in study.items() if k != "cells"} | {"cells": []})
        index = {key_of(c): i for i, c in enumerate(target["cells"])}
        replaced = added = 0
        for cell in study["cells"]:
            i = index.get(key_of(cell))
            if i is None:
                target["cells"].append(cell)
                added += 1
            else:
                target["cells"][i] = cell
                replaced += 1
        counts[n] = (replaced, added)
    return counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rerun")
    ap.add_argument("into", nargs="?", default=str(pathlib.Path(__file__).parent / "results.json"))
    ap.add_argument("--note", required=True, help="which cells, which run, when, which commit")
    args = ap.parse_args()
    rerun = json.loads(pathlib.Path(args.rerun).read_text())
    into_path = pathlib.Path(args.into)
    into = json.loads(into_path.read_text())
    for n, (replaced, added) in merge(rerun, into).items():
        print("study %s: %d cells replaced, %d added" % (n, replaced, added))
    into.setdefault("notes", []).append(args.note)
    into_path.write_text(json.dumps(into, indent=1))


if __name__ == "__main__":
    main()
