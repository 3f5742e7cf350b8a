#!/usr/bin/env python3
"""Run libzmq's own test programs on real libzmq and on oxmq, and compare.

The programs come from libzmq 4.3.5's source (crates.io's zeromq-src crate),
fetched and built by build.sh into the cache directory with no RPATH, so the
library each run uses is the first one on LD_LIBRARY_PATH: the libzmq.so.5
built from that same source, then oxmq's target/release/capi/libzmq.so.5.
Each program runs in its own scratch directory with a timeout (a hang is a
failure named after the program). Unity prints one line per case
(FILE:LINE:NAME:PASS|FAIL|IGNORE); a program that dies or hangs fails the
cases it never reported and the pseudo-case "(exit)".

The summary line is

    libzmq tests: oxmq N passed of M that pass on libzmq X.Y.Z

followed by every case that passes on libzmq and not on oxmq. The exit status
is non-zero when such a case is not in known-differences.txt (each entry has
its reason), or when an entry there no longer fails (the list must stay true).
An entry whose reason starts with "timing:" is a case whose outcome on oxmq
depends on thread timing (the reason says why): it may pass or fail, either
is reported by name, and a failure still counts against the total.
A program with a failure that would fail the step is re-run once on that side
before it counts (the machine may be loaded); known failures are not re-run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict, List, Optional, Tuple

HERE = Path(__file__).resolve().parent
EXIT_CASE = "(exit)"
SKIP_EXIT = 77
# libzmq's tests/CMakeLists.txt gives every program 10 s and these more; on a
# loaded machine every limit is scaled by --timeout-scale.
CTEST_TIMEOUT_S = 10
CTEST_TIMEOUTS_S = {
    "test_security_curve": 60,
    "test_heartbeats": 60,
    "test_security_zap": 60,
    "test_reconnect_ivl": 15,
}
UNITY_LINE = re.compile(r":(\d+):(\w+):(PASS|FAIL|IGNORE)(?::\s?(.*))?\s*$")

Result = Dict[str, Tuple[str, str]]  # case -> (PASS|FAIL|IGNORE, message)


def log(msg: str) -> None:
    print(msg, flush=True)


def read_known(path: Path) -> Dict[str, str]:
    """`program:case  # reason` per line."""
    out: Dict[str, str] = {}
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, reason = line.partition("#")
        if not sep or not reason.strip():
            sys.exit(f"{path}: entry without a reason: {raw!r}")
        out[key.strip()] = reason.strip()
    return out


def libzmq_version(src: Path) -> str:
    text = (src / "include" / "zmq.h").read_text()
    parts = [re.search(rf"#define ZMQ_VERSION_{p}\s+(\d+)", text) for p in ("MAJOR", "MINOR", "PATCH")]
    if not all(parts):
        return "?"
    return ".".join(m.group(1) for m in parts if m)


def parse_unity(output: str) -> Result:
    cases: Result = {}
    for line in output.splitlines():
        m = UNITY_LINE.search(line)
        if not m:
            continue
        name, status, msg = m.group(2), m.group(3), (m.group(4) or "").strip()
        key, n = name, 2
        while key in cases:  # a case run twice keeps both results
            key, n = f"{name}#{n}", n + 1
        cases[key] = (status, msg)
    return cases


def failing_cases(real: Optional[Result], ox: Result) -> List[str]:
    """Cases that pass on libzmq and not on oxmq; when libzmq was not run
    (--oxmq-only), oxmq's cases that failed (one it ignored, as a skip or a
    build without drafts, is not a failure there). The program's exit is one
    of them only when no case says why (a crash or hang after the last case,
    or a program without cases)."""
    base = real if real is not None else ox
    counts = (lambda s: s == "PASS") if real is not None else (lambda s: s != "IGNORE")
    out = [c for c, (s, _) in base.items() if counts(s) and ox.get(c, ("FAIL",))[0] != "PASS"]
    if len(out) > 1 and EXIT_CASE in out:
        out.remove(EXIT_CASE)
    return out


def keep_first_log(path: Path) -> None:
    """A re-run keeps the first run's output beside it (PROGRAM.first.log)."""
    if path.exists():
        path.replace(path.with_suffix(".first.log"))


def run_program(exe: Path, libdir: Path, timeout_s: float, log_path: Path) -> Tuple[Result, str]:
    """Run one program; returns its cases and how it ended (for the log)."""
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = str(libdir) + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    scratch = Path(tempfile.mkdtemp(prefix=f"oxmq-libzmq-{exe.name}-"))
    started = time.monotonic()
    try:
        # Line-buffered stdout (Unity prints with putchar): what a program
        # printed before it hung or crashed is kept.
        proc = subprocess.Popen(
            ["stdbuf", "-oL", "-eL", str(exe)], cwd=scratch, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True,
        )
        try:
            out, _ = proc.communicate(timeout=timeout_s)
            ended = f"exit {proc.returncode}" if proc.returncode >= 0 else f"killed by signal {-proc.returncode}"
            ok = proc.returncode == 0
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            out, _ = proc.communicate()
            ended = f"hang: no exit within {timeout_s:.0f} s"
            ok = False
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    text = out.decode(errors="replace")
    log_path.write_text(text + f"\n[{ended} after {time.monotonic() - started:.1f} s]\n")
    cases = parse_unity(text)
    if ended == f"exit {SKIP_EXIT}" and not cases:
        # libzmq's tests exit 77 (Automake's "skipped") when the build or the
        # machine lacks what they need (TIPC, a fuzzing engine).
        cases[EXIT_CASE] = ("IGNORE", f"skipped (exit {SKIP_EXIT})")
    else:
        cases[EXIT_CASE] = ("PASS", "") if ok else ("FAIL", ended)
    return cases, ended


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache", default="target/libzmq-suite", help="where build.sh built libzmq")
    ap.add_argument("--oxmq-lib", default="target/release/capi", help="directory holding oxmq's libzmq.so.5")
    ap.add_argument("--known", default=str(HERE / "known-differences.txt"))
    ap.add_argument("--only", action="append", default=[], help="run only this program (repeatable)")
    ap.add_argument("--oxmq-only", action="store_true", help="skip the real libzmq side (development loop)")
    ap.add_argument("--timeout-scale", type=float, default=float(os.environ.get("LIBZMQ_SUITE_TIMEOUT_SCALE", "3")))
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("LIBZMQ_SUITE_JOBS", "3")),
                    help="programs run at a time (each program's two sides still run one after the other)")
    args = ap.parse_args()

    cache = Path(args.cache).resolve()
    build = cache / "build"
    srcs = sorted(p for p in cache.glob("libzmq-*") if p.is_dir())
    if not (build / ".built").exists() or not srcs:
        sys.exit(f"libzmq suite: no build in {cache} (run tests/compat/libzmq_suite/build.sh first)")
    version = libzmq_version(srcs[-1])
    real_lib = build / "lib"
    oxmq_lib = Path(args.oxmq_lib).resolve()
    if not (oxmq_lib / "libzmq.so.5").exists():
        sys.exit(f"libzmq suite: {oxmq_lib}/libzmq.so.5 missing (make capi)")
    known = read_known(Path(args.known))

    programs = sorted(p for p in (build / "bin").glob("test_*") if p.is_file() and os.access(p, os.X_OK))
    if args.only:
        programs = [p for p in programs if p.name in args.only]
        missing = set(args.only) - {p.name for p in programs}
        if missing:
            sys.exit(f"libzmq suite: no such program: {', '.join(sorted(missing))}")
    logs = cache / "logs"
    for side in ("libzmq", "oxmq"):
        (logs / side).mkdir(parents=True, exist_ok=True)

    def would_fail(prog: str, real: Optional[Result], ox: Result) -> bool:
        """A case passing on libzmq (or the program's exit) fails on oxmq and is not listed."""
        return any(f"{prog}:{case}" not in known for case in failing_cases(real, ox))

    log(f"==> libzmq {version} test programs: {len(programs)}, on {real_lib} and on {oxmq_lib}")
    results: Dict[str, Dict[str, Result]] = {}
    reran: List[str] = []
    started = time.monotonic()

    def run_both(exe: Path) -> Tuple[str, Optional[Result], Result, str, List[str]]:
        """One program on libzmq, then on oxmq (never both at once: some
        programs bind fixed endpoints), each re-run once if it fails."""
        prog = exe.name
        again: List[str] = []
        limit = CTEST_TIMEOUTS_S.get(prog, CTEST_TIMEOUT_S) * args.timeout_scale
        real: Optional[Result] = None
        if not args.oxmq_only:
            real, _ = run_program(exe, real_lib, limit, logs / "libzmq" / f"{prog}.log")
            if any(s != "PASS" and s != "IGNORE" for s, _ in real.values()):
                first = [c for c, (s, _) in real.items() if s == "FAIL"]
                again.append(f"{prog} (libzmq; first run failed {', '.join(first)})")
                keep_first_log(logs / "libzmq" / f"{prog}.log")
                real, _ = run_program(exe, real_lib, limit, logs / "libzmq" / f"{prog}.log")
        ox, ox_end = run_program(exe, oxmq_lib, limit, logs / "oxmq" / f"{prog}.log")
        if would_fail(prog, real, ox):
            again.append(f"{prog} (oxmq; first run failed {', '.join(failing_cases(real, ox))})")
            keep_first_log(logs / "oxmq" / f"{prog}.log")
            ox, ox_end = run_program(exe, oxmq_lib, limit, logs / "oxmq" / f"{prog}.log")
        return prog, real, ox, ox_end, again

    # Most programs spend their time in libzmq's settle sleeps, so a few run
    # side by side (in their own scratch directories); the step's wall time
    # on a loaded 2-core machine was 6.5 min one at a time.
    log(f"    ({args.jobs} programs at a time)")
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for prog, real, ox, ox_end, again in pool.map(run_both, programs):
            reran.extend(again)
            results[prog] = {"oxmq": ox, **({"libzmq": real} if real is not None else {})}
            base = real if real is not None else ox
            counted = {c for c, (s, _) in base.items() if s == "PASS" and (c != EXIT_CASE or len(base) == 1)}
            n_real = len(counted)
            n_ox = sum(1 for c in counted if ox.get(c, ("",))[0] == "PASS")
            log(f"    {prog:36s} oxmq {n_ox:3d}/{n_real:<3d} ({ox_end})")

    # Tally over the cases that pass on libzmq (the programs' exits are not cases).
    passed = total = 0
    failing: List[Tuple[str, str]] = []  # (program:case, why)
    not_on_libzmq: List[str] = []
    for prog, sides in results.items():
        real = sides.get("libzmq")
        ox = sides["oxmq"]
        base = real if real is not None else ox
        failed_here = failing_cases(real, ox)
        for case, (status, msg) in base.items():
            key = f"{prog}:{case}"
            if real is not None and status != "PASS":
                if status == "FAIL":
                    not_on_libzmq.append(f"{key} ({msg})")
                continue
            if real is None and status == "IGNORE":
                continue  # --oxmq-only: a skip is not counted either way
            ox_status, ox_msg = ox.get(case, ("FAIL", f"never reported ({ox[EXIT_CASE][1] or 'program ended'})"))
            # A program's exit counts as a case only when it has no Unity cases.
            if case != EXIT_CASE or len(base) == 1:
                total += 1
                passed += ox_status == "PASS"
            if case in failed_here:
                failing.append((key, f"{ox_status}: {ox_msg}" if ox_msg else ox_status))

    log("")
    log(f"libzmq tests: oxmq {passed} passed of {total} that pass on libzmq {version}"
        f" ({len(results)} programs, {time.monotonic() - started:.0f} s)")
    new = [(k, why) for k, why in failing if k not in known]
    failing_keys = {k for k, _ in failing}
    for key, why in failing:
        mark = f"known: {known[key]}" if key in known else "NOT IN known-differences.txt"
        log(f"  FAIL {key}  -- {why}  [{mark}]")
    ran = set(results)
    timing = {k for k, why in known.items() if why.startswith("timing:")}
    for key in sorted(timing):
        if key.partition(":")[0] in ran:
            outcome = "failed" if key in failing_keys else "passed"
            log(f"  TIMING {key} {outcome} this run (listed as timing-dependent, see known-differences.txt)")
    stale = [k for k in known if k.partition(":")[0] in ran and k not in failing_keys and k not in timing]
    for key in stale:
        log(f"  PASSES but listed in known-differences.txt: {key}  -- remove the entry")
    for line in not_on_libzmq:
        log(f"  (fails on libzmq {version} too, not counted: {line})")
    if reran:
        log(f"  re-run once: {', '.join(reran)}")
    (cache / "results.json").write_text(json.dumps(results, indent=1, sort_keys=True))
    log(f"  logs: {logs}/{{libzmq,oxmq}}/PROGRAM.log, results: {cache}/results.json")
    if args.oxmq_only:
        log("  (--oxmq-only: libzmq side not run; totals count oxmq's own cases)")
    if new or stale:
        log(f"libzmq suite: FAILED ({len(new)} new failures, {len(stale)} stale known-differences entries)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
