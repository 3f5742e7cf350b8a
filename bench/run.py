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

Environment: QUICK=1 (same as --quick), BENCH_STUDIES=1,2 (same as
--studies), BENCH_TARGET_S (seconds per timed run, default 1.0), BENCH_REPS.
"""

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
TARGET = ROOT / "target"
C_LIBZMQ = TARGET / "bench" / "c-libzmq"
C_OXMQ = TARGET / "bench" / "c-oxmq"
RUST_BIN = TARGET / "release" / "examples" / "bench_oxmq"
CAPI_DIR = TARGET / "release" / "capi"
CAPI_SO = CAPI_DIR / "libzmq.so.5"
VENV_PY = ROOT / ".venv" / "bin" / "python"
# The Python studies run on Python 3.12 (pyomq >= 0.22 needs it) in a bench-only
# venv that mk/bench.mk makes with pyenv's or Debian's python3.12; without it
# they fall back to the project venv (Debian's 3.11), labelled as such.
VENV312_PY = ROOT / ".venv-bench312" / "bin" / "python"
PY312_STATUS = TARGET / "bench" / "py312-status.txt"
# Rust-level peers (bench/rust-peers, its own cargo workspace) and omq's C ABI.
RUST_PEERS_DIR = BENCH / "rust-peers" / "target" / "release"
RUST_PEERS_STATUS = TARGET / "bench" / "rust-peers-status.json"
OMQ_CAPI_DIR = TARGET / "bench" / "omq-capi"
# libzmq 4.3.5 + a current libsodium from pyzmq's wheel (mk/bench.mk, bench-c435): CURVE's second C peer.
ZMQ435_DIR = TARGET / "bench" / "libzmq435"
ZMQ435_STATUS = TARGET / "bench" / "libzmq435-status.txt"
SYS_PY = Path("/usr/bin/python3")
PY_STUDY = BENCH / "py" / "study.py"
NCPU = os.cpu_count() or 1
HAVE_TASKSET = shutil.which("taskset") is not None and NCPU >= 2


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------
# Implementations: who can run, and how a study program is started for each.
# ----------------------------------------------------------------------------


def probe(argv, env=None, timeout=30):
    """Run a probe command; return None if it worked, else a one-line reason."""
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
    except (OSError, subprocess.TimeoutExpired) as e:
        return str(e)
    if r.returncode == 0:
        return None
    lines = [l for l in (r.stderr or r.stdout).strip().splitlines() if l.strip()]
    return lines[-1][:200] if lines else "exit %d" % r.returncode


class Impl:
    """One side: a language binding on one library."""

    def __init__(self, key, label, group, oxmq=False, peers=(), expect_capi=False, expect_lib=None):
        self.key, self.label, self.group, self.oxmq = key, label, group, oxmq
        # Keys this side's ratio is taken against. A tuple, so that no study can
        # change another's peers; a study with extra peers passes them to ratios().
        self.peers = tuple(peers)
        self.expect_capi = expect_capi  # results must show oxmq's libzmq.so.5 mapped
        self.expect_lib = expect_lib  # results must show a library from this directory mapped
        self.reason = None  # why it can't run; None = available
        self.env = {}
        self._argv = None

    def argv(self, prog, *args):
        return self._argv(prog) + [str(a) for a in args]

    @property
    def available(self):
        return self.reason is None


# (library, label, binary) of bench/rust-peers; monocoque-rs is a binary of its
# own (built with the crate's `monocoque` feature) so that its failing to build
# here leaves the others.
RUST_PEERS = [("omq", "omq.rs (omq-tokio)", "bench_rust_peers"), ("zeromq", "zmq.rs (zeromq)", "bench_rust_peers"),
              ("rzmq", "rzmq (io_uring backend)", "bench_rust_peers"),
              ("monocoque", "monocoque (monocoque-rs, tokio backend)", "bench_monocoque")]


def _rust_peers_status():
    """Why a Rust peer or omq-libzmq is missing, as mk/bench.mk recorded it."""
    try:
        return json.loads(RUST_PEERS_STATUS.read_text())
    except (OSError, ValueError):
        return {}


def bench_python():
    return VENV312_PY if VENV312_PY.exists() else VENV_PY


def py312_reason():
    try:
        return PY312_STATUS.read_text().strip() or "no Python 3.12 venv"
    except OSError:
        return "no Python 3.12 venv (.venv-bench312; `make bench` makes it where python3.12 exists)"


def base_env():
    env = dict(os.environ)
    # RUST_BACKTRACE off: a failing Rust side's reason is then its panic message.
    for k in ("FFI_CHECKLIB_PATH", "LD_LIBRARY_PATH", "LD_PRELOAD", "RUST_BACKTRACE"):
        env.pop(k, None)
    return env


def discover():
    impls = {}

    def add(impl):
        impls[impl.key] = impl
        return impl

    capi_reason = None if CAPI_SO.exists() else (
        "oxmq's C ABI is not built yet (%s missing; issue 4, `make capi`)" % CAPI_SO.relative_to(ROOT))

    # C on Debian libzmq, and the same sources on oxmq's C ABI.
    c = add(Impl("c_libzmq", "C, libzmq", "C"))
    c._argv = lambda prog: [str(C_LIBZMQ / prog)]
    if not (C_LIBZMQ / "thr").exists():
        c.reason = "bench/c not built against Debian libzmq (run `make bench`)"
    co = add(Impl("c_oxmq", "C, oxmq C ABI", "C", oxmq=True, peers=["c_libzmq", "c_omq", "c_libzmq435"],
                  expect_capi=True))
    co._argv = lambda prog: [str(C_OXMQ / prog)]
    if capi_reason:
        co.reason = capi_reason
    elif not (C_OXMQ / "thr").exists():
        co.reason = "C ABI present but bench/c not built against it yet (run `make bench`)"
    # omq.rs's libzmq drop-in (crate omq-libzmq) under the same C programs.
    omq_status = _rust_peers_status()
    oc = add(Impl("c_omq", "C, omq-libzmq (omq.rs C ABI)", "C", expect_lib=OMQ_CAPI_DIR))
    oc._argv = c._argv
    oc.env = {"LD_LIBRARY_PATH": str(OMQ_CAPI_DIR)}
    if c.reason:
        oc.reason = c.reason
    elif not (OMQ_CAPI_DIR / "libzmq.so.5").exists():
        oc.reason = omq_status.get("omq-libzmq") or "omq-libzmq not built (run `make bench`)"
    # libzmq 4.3.5 on a current libsodium (pyzmq's wheel), CURVE's second C peer.
    z5 = add(Impl("c_libzmq435", "C, libzmq 4.3.5 (pyzmq wheel's, new libsodium)", "C",
                  expect_lib=ZMQ435_DIR / "lib"))
    z5._argv = lambda prog: [str(ZMQ435_DIR / "c" / prog)]
    if not (ZMQ435_DIR / "c" / "thr").exists():
        try:
            z5.reason = ZMQ435_STATUS.read_text().strip() or "not built"
        except OSError:
            z5.reason = "bench/c not built against libzmq 4.3.5 (mk/bench.mk bench-c435)"
    # Rust crates a user would pick instead of oxmq (bench/rust-peers).
    rust_peers = []
    for lib, label, binary in RUST_PEERS:
        rp = add(Impl("rust_" + lib, "Rust, " + label, "Rust"))
        rp._argv = lambda prog, lib=lib, binary=binary: [str(RUST_PEERS_DIR / binary), lib, prog]
        if not (RUST_PEERS_DIR / binary).exists():
            rp.reason = omq_status.get(lib) or "bench/rust-peers not built (run `make bench`)"
        rust_peers.append(rp.key)
    r = add(Impl("rust_oxmq", "Rust, oxmq", "Rust", oxmq=True, peers=["c_libzmq", "c_libzmq435"] + rust_peers))
    r._argv = lambda prog: [str(RUST_BIN), prog]
    if not RUST_BIN.exists():
        r.reason = "%s not built (cargo build --release --example bench_oxmq -p oxmq)" % RUST_BIN.relative_to(ROOT)
    mx = add(Impl("c_mutex", "C, mutex+condvar queue", "C"))
    mx._argv = lambda prog: [str(C_LIBZMQ / prog)]
    mx.reason = c.reason

    # Python: on 3.12 in the bench venv, else on the project venv (3.11).
    py_bin = bench_python()
    tag = "" if py_bin == VENV312_PY else " (Python 3.11: %s)" % py312_reason()

    def py(key, label, module, oxmq=False, peers=(), what=""):
        i = add(Impl(key, label + tag, "Python", oxmq=oxmq, peers=peers))
        i._argv = lambda prog, m=module: [str(py_bin), str(PY_STUDY), m, prog]
        if not py_bin.exists():
            i.reason = "no project venv (.venv; `make venv`)"
        elif module not in ("queue", "pipe"):
            why = probe([str(py_bin), "-c", "import %s" % module])
            if why:
                i.reason = why + what
        return i

    py("pyzmq", "Python, pyzmq", "zmq")
    py("pyomq", "Python, pyomq", "pyomq", what=" (bench/requirements312.txt; pyomq 0.27 needs Python 3.12)")
    py("oxmq_py", "Python, oxmq", "oxmq", oxmq=True, peers=["pyzmq", "pyomq", "py_queue", "py_pipe"],
       what=" (oxmq's Python package, issue 3, is not installed in .venv yet)")
    py("py_queue", "Python, queue.Queue", "queue")
    py("py_pipe", "Python, multiprocessing.Pipe", "pipe")

    # Debian's pyzmq (built against the system libzmq), on libzmq and on oxmq's ABI.
    d = add(Impl("pydeb_libzmq", "Python, Debian pyzmq on libzmq", "Python"))
    d._argv = lambda prog: [str(SYS_PY), str(PY_STUDY), "zmq", prog]
    d.reason = probe([str(SYS_PY), "-c", "import zmq"], env=base_env()) if SYS_PY.exists() else "no /usr/bin/python3"
    if d.reason:
        d.reason += " (Debian python3-zmq)"
    do = add(Impl("pydeb_oxmq", "Python, Debian pyzmq on oxmq ABI", "Python", oxmq=True, peers=["pydeb_libzmq"],
                  expect_capi=True))
    do._argv = d._argv
    do.env = {"LD_LIBRARY_PATH": str(CAPI_DIR)}
    do.reason = capi_reason or d.reason

    # Perl ZMQ::FFI: FFI::CheckLib searches FFI_CHECKLIB_PATH first.
    perl_why = probe(["perl", "-MZMQ::FFI", "-e", "1"], env=base_env()) if shutil.which("perl") else "no perl"
    if perl_why:
        perl_why += " (Debian libzmq-ffi-perl)"
    pl = add(Impl("perl_libzmq", "Perl ZMQ::FFI, libzmq", "Perl"))
    pl._argv = lambda prog: ["perl", str(BENCH / "perl" / (prog + ".pl"))]
    pl.reason = perl_why
    plo = add(Impl("perl_oxmq", "Perl ZMQ::FFI, oxmq C ABI", "Perl", oxmq=True, peers=["perl_libzmq"],
                   expect_capi=True))
    plo._argv = pl._argv
    plo.env = {"FFI_CHECKLIB_PATH": str(CAPI_DIR)}
    plo.reason = capi_reason or perl_why

    # Ruby ffi-rzmq: dlopen("libzmq.so.5"), so LD_LIBRARY_PATH selects the library.
    rb_why = probe(["ruby", "-rffi-rzmq", "-e", "1"], env=base_env()) if shutil.which("ruby") else "no ruby"
    if rb_why:
        rb_why += " (Debian ruby-ffi-rzmq)"
    rb = add(Impl("ruby_libzmq", "Ruby ffi-rzmq, libzmq", "Ruby"))
    rb._argv = lambda prog: ["ruby", str(BENCH / "ruby" / (prog + ".rb"))]
    rb.reason = rb_why
    rbo = add(Impl("ruby_oxmq", "Ruby ffi-rzmq, oxmq C ABI", "Ruby", oxmq=True, peers=["ruby_libzmq"],
                   expect_capi=True))
    rbo._argv = rb._argv
    rbo.env = {"LD_LIBRARY_PATH": str(CAPI_DIR)}
    rbo.reason = capi_reason or rb_why

    # The native oxmq gem (ruby/, `make ruby`): the same study on its rbczmq API.
    gem_why = probe(["ruby", "-roxmq", "-e", "1"], env=base_env()) if shutil.which("ruby") else "no ruby"
    if gem_why:
        gem_why += " (the oxmq gem: `make ruby`)"
    rbg = add(Impl("ruby_gem", "Ruby oxmq gem (native)", "Ruby", oxmq=True, peers=["ruby_libzmq", "ruby_oxmq"]))
    rbg._argv = lambda prog: ["ruby", str(BENCH / "ruby" / (prog + "_gem.rb"))]
    rbg.reason = gem_why

    phys = add(Impl("phys", "machine", "machine"))
    phys._argv = lambda prog: [str(C_LIBZMQ / "physical")]
    if not (C_LIBZMQ / "physical").exists():
        phys.reason = "bench/c/physical.c not built (run `make bench`)"
    return impls


# ----------------------------------------------------------------------------
# Running programs
# ----------------------------------------------------------------------------


class RunError(Exception):
    pass


class Proc:
    """One process of a run. ready=True: wait for its "READY ep..." line and make
    the tokens available to later processes as {ep0}, {ep1}. stop=True: the
    orchestrator ends it with SIGTERM once the others are done."""

    def __init__(self, role, impl, prog, args, cpu=None, ready=False, stop=False):
        self.role, self.impl, self.prog, self.args = role, impl, prog, list(args)
        self.cpu, self.ready, self.stop = cpu, ready, stop


class _Delay(Proc):
    """A pause between starting two processes (lets subscriptions settle)."""

    def __init__(self, secs):
        super().__init__("delay", None, None, [])
        self.secs = secs


def _drain(stream, lines, ready_evt):
    for raw in iter(stream.readline, b""):
        line = raw.decode(errors="replace").rstrip("\n")
        lines.append(line)
        if line.startswith("READY"):
            ready_evt.set()
    ready_evt.set()


def run_procs(procs, timeout):
    """Start procs in order, wait, and return {role: parsed JSON line}."""
    started = []
    tokens = {}
    deadline = time.monotonic() + timeout
    try:
        for p in procs:
            if isinstance(p, _Delay):
                time.sleep(p.secs)
                continue
            try:
                args = [a.format(**tokens) if isinstance(a, str) else a for a in p.args]
            except KeyError as e:
                raise RunError("%s: the peer's READY line lacks %s" % (p.role, e)) from None
            argv = p.impl.argv(p.prog, *args)
            if p.cpu is not None and HAVE_TASKSET:
                argv = ["taskset", "-c", str(p.cpu % NCPU)] + argv
            env = base_env()
            env.update(p.impl.env)
            err = tempfile.TemporaryFile()
            popen = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL, env=env)
            lines, evt = [], threading.Event()
            th = threading.Thread(target=_drain, args=(popen.stdout, lines, evt), daemon=True)
            th.start()
            started.append((p, popen, lines, th, err))
            if p.ready:
                if not evt.wait(max(0.1, deadline - time.monotonic())):
                    raise RunError("%s: no READY line within the time limit" % p.role)
                ready_lines = [l for l in lines if l.startswith("READY")]
                if not ready_lines:
                    raise RunError("%s exited before READY%s" % (p.role, _stderr_tail(err)))
                for i, tok in enumerate(ready_lines[0].split()[1:]):
                    tokens["ep%d" % i] = tok
        # Wait for the processes that end on their own, then stop the others.
        for p, popen, lines, th, err in started:
            if p.stop:
                continue
            try:
                popen.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                raise RunError("%s timed out after %.0f s" % (p.role, timeout)) from None
        for p, popen, lines, th, err in started:
            if p.stop and popen.poll() is None:
                popen.terminate()
                try:
                    popen.wait(10)
                except subprocess.TimeoutExpired:
                    raise RunError("%s did not stop on SIGTERM" % p.role) from None
        out = {}
        for p, popen, lines, th, err in started:
            th.join(5)
            if popen.returncode != 0:
                raise RunError("%s exited with %s%s" % (p.role, popen.returncode, _stderr_tail(err)))
            js = [l for l in lines if l.startswith("{")]
            if not js:
                raise RunError("%s printed no JSON result%s" % (p.role, _stderr_tail(err)))
            res = json.loads(js[-1])
            if p.impl.expect_capi and "lib" in res and str(CAPI_DIR) not in res["lib"]:
                raise RunError("%s ran on %s, not on oxmq's library" % (p.role, res["lib"]))
            if p.impl.expect_lib and "lib" in res and str(p.impl.expect_lib) not in res["lib"]:
                raise RunError("%s ran on %s, not on %s" % (p.role, res["lib"], p.impl.expect_lib))
            out[p.role] = res
        return out
    finally:
        for p, popen, lines, th, err in started:
            if popen.poll() is None:
                popen.kill()
                popen.wait()
            err.close()
        # Remove the ipc socket files a run bound (and the throughput ack's).
        for p in procs:
            for a in p.args:
                if isinstance(a, str) and a.startswith("ipc:///tmp/oxmq-bench-"):
                    for path in (a[6:], a[6:] + "-ack"):
                        try:
                            os.unlink(path)
                        except OSError:
                            pass


def _stderr_tail(err):
    try:
        err.seek(0)
        text = err.read().decode(errors="replace").strip()
    except (OSError, ValueError):
        return ""
    return (": " + " | ".join(text.splitlines()[-3:])[-300:]) if text else ""


# ----------------------------------------------------------------------------
# Measurement: interleaved sides, warm-up, calibration, statistics
# ----------------------------------------------------------------------------


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


def side_speed(entry, metric, lower_better):
    d = entry.get("metrics", {}).get(metric)
    if not d:
        return None
    v = d["median"]
    if v <= 0:
        return None
    return 1.0 / v if lower_better else v


def side_speed_range(entry, metric, lower_better):
    """(slowest, fastest) speed across the repetitions."""
    d = entry.get("metrics", {}).get(metric)
    if not d or d["min"] <= 0:
        return None
    return (1.0 / d["max"], 1.0 / d["min"]) if lower_better else (d["min"], d["max"])


# oxmq's Python package sends an exact `bytes` of at least this size by
# reference (python/src/frame.rs, LEND_BYTES_MIN) where pyzmq copies it.
PY_LEND_MIN = 4096


def lend_note(cell, key):
    """Why an oxmq side of this cell does other work than its copying peers, or None."""
    k = cell.get("key", {})
    if key.startswith("oxmq_py") and k.get("mode", "copy") == "copy" and int(k.get("size") or 0) >= PY_LEND_MIN:
        return "lend: oxmq lends the exact bytes by reference, the peer copies it"
    return None


def ratios(cell, metric, lower_better, impls, extra_peers=None):
    """Speed ratios oxmq/peer (>1 = oxmq faster) for one cell: each oxmq side
    against its declared peers, plus extra_peers[side] for this cell only.
    Each carries the ratio's range over the repetitions (slowest oxmq ÷ fastest
    peer .. fastest oxmq ÷ slowest peer), whether the two sides' ranges overlap,
    and "unlike" where the sides do different work (no headline from it)."""
    out = []
    for key, e in cell["sides"].items():
        if not e.get("oxmq"):
            continue
        mine = side_speed(e, metric, lower_better)
        unlike = lend_note(cell, key)
        if unlike:
            e["work"] = "lend"
        for peer in tuple(impls[key].peers) + tuple((extra_peers or {}).get(key, ())):
            pe = cell["sides"].get(peer)
            if pe is None:
                continue
            theirs = side_speed(pe, metric, lower_better)
            if mine is None or theirs is None:
                continue
            r = {"oxmq": key, "peer": peer, "ratio": mine / theirs}
            mr, tr = side_speed_range(e, metric, lower_better), side_speed_range(pe, metric, lower_better)
            if mr and tr:
                r.update(lo=mr[0] / tr[1], hi=mr[1] / tr[0])
                r["overlap"] = r["lo"] <= 1.0 <= r["hi"]
            if unlike and not pe.get("oxmq"):
                r["unlike"] = unlike
            out.append(r)
    cell.setdefault("ratios", {})[metric] = out
    return out


# ----------------------------------------------------------------------------
# Formatting
# ----------------------------------------------------------------------------

UNITS = {
    "ns_per_call": ("ns", 1), "msgs_per_s": ("msg/s", 1), "mb_per_s": ("MB/s", 1),
    "send_calls_per_s": ("calls/s", 1), "mean_us": ("µs", 1), "p50_us": ("µs", 1), "p99_us": ("µs", 1),
    "seconds": ("s", 1), "pub_rate": ("msg/s", 1), "client_seconds": ("s", 1), "lines_per_s": ("lines/s", 1),
    "cpu_s_per_mline": ("CPU s/M lines", 1), "us_per_call": ("µs", 1), "us_per_round_trip": ("µs", 1),
    "msgs_per_cpu_s": ("msg/CPU-s", 1),
    "recv_msgs_per_cpu_s": ("msg/CPU-s", 1), "send_msgs_per_cpu_s": ("msg/CPU-s", 1), "rss_mib": ("MiB", 1),
    "bytes_per_msg": ("B/msg", 1), "connect_seconds": ("s", 1), "router_kib_per_conn": ("KiB/conn", 1),
    "client_kib_per_conn": ("KiB/conn", 1), "delivered_per_s": ("msg/s", 1), "lag_ms": ("ms", 1),
    "publish_seconds": ("s", 1), "cpu_us_per_ping": ("CPU µs", 1),
}


def num(v):
    a = abs(v)
    if a >= 1e9:
        return "%.2fG" % (v / 1e9)
    if a >= 1e6:
        return "%.2fM" % (v / 1e6)
    if a >= 1e4:
        return "%.1fk" % (v / 1e3)
    if a >= 100:
        return "%.0f" % v
    if a >= 10:
        return "%.1f" % v
    if a >= 1:
        return "%.2f" % v
    return "%.3f" % v


def fmt_stat(d, metric=None):
    unit = UNITS.get(metric, ("", 1))[0]
    return "%s (%s–%s)%s" % (num(d["median"]), num(d["min"]), num(d["max"]), (" " + unit) if unit else "")


def size_label(n):
    n = int(n)
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return "%d MiB" % (n >> 20)
    if n >= 1024 and n % 1024 == 0:
        return "%d KiB" % (n >> 10)
    return "%d B" % n


# ----------------------------------------------------------------------------
# The studies
# ----------------------------------------------------------------------------

STUDIES = {}


def study(num_, name, title):
    def deco(fn):
        STUDIES[num_] = (name, title, fn)
        return fn

    return deco


@study(8, "physical", "The physical limit: loopback TCP, Unix socket and memcpy bandwidth")
def study_physical(suite, impls):
    total = 64 << 20 if suite.quick else 512 << 20
    kinds = [("tcp", 1 << 20), ("unix", 1 << 20), ("memcpy", 1 << 20), ("memcpy", 64 << 20)]
    phys = impls["phys"]
    sides = []
    for kind, chunk in kinds:
        # Each kind is a pseudo-implementation so that the kinds are interleaved.
        i = Impl("%s_%d" % (kind, chunk), "%s, %s writes" % (kind, size_label(chunk)), "machine")
        i._argv, i.reason = phys._argv, phys.reason

        def run(count, kind=kind, chunk=chunk, i=i):
            r = run_procs([Proc("probe", i, "physical", [kind, chunk, count])], suite.timeout)["probe"]
            return r

        sides.append(Side(i, run, total, calibrate="seconds", cmin=chunk, cmax=64 << 30))
    suite.compare(8, {}, sides, ["mb_per_s", "seconds"], "physical limit")


def _callcost_side(suite, impl, count):
    def run(n):
        return run_procs([Proc("main", impl, "callcost", [n])], suite.timeout)["main"]

    return Side(impl, run, count, calibrate="seconds", cmin=1000, cmax=100_000_000)


@study(1, "callcost", "Call cost: a non-blocking 5-byte send on a PUB bound to ipc, no subscriber")
def study_callcost(suite, impls):
    keys = ["c_libzmq", "c_oxmq", "rust_oxmq", "pyzmq", "pyomq", "oxmq_py", "pydeb_libzmq", "pydeb_oxmq",
            "perl_libzmq", "perl_oxmq", "ruby_libzmq", "ruby_oxmq", "ruby_gem"]
    count = 20_000 if suite.quick else 200_000
    sides = [_callcost_side(suite, impls[k], count) for k in keys]
    cell = suite.compare(1, {}, sides, ["ns_per_call"], "call cost")
    ratios(cell, "ns_per_call", True, impls)


THR_IMPLS = ["c_libzmq", "c_oxmq", "rust_oxmq", "pyzmq", "pyomq", "oxmq_py"]
PY_THR_IMPLS = ["pyzmq", "pyomq", "oxmq_py"]
# Peers added by issue 12 run shorter timed runs so that the suite stays near its old length.
NEW_PEERS = ["c_omq", "rust_omq", "rust_zeromq", "rust_rzmq", "rust_monocoque"]
NEW_PEER_TARGET = 0.5  # of the cell's seconds per timed run


def _peer_side(side, key):
    # As many repetitions as every other side (the report prints each range).
    if key in NEW_PEERS:
        side.target_scale = NEW_PEER_TARGET
    return side


def _cpu_metrics(out, recv, send=None):
    """Messages per CPU-second (user+system, getrusage) for each side: a design
    that spins a core can win on wall time and still cost its users more."""
    n = float(recv.get("count") or 0)
    rc = recv.get("cpu_s")
    if send is None:
        if rc:
            out["msgs_per_cpu_s"] = n / rc
        return out
    sc = send.get("cpu_s")
    if rc:
        out["recv_msgs_per_cpu_s"] = n / rc
    if sc:
        out["send_msgs_per_cpu_s"] = n / sc
    if rc and sc:
        out["msgs_per_cpu_s"] = n / (rc + sc)
    return out


def thr_sizes(quick, transport):
    if quick:
        return [16, 1 << 20] if transport != "tcp" else [16, 4096, 1 << 20]
    if transport == "tcp":
        return [16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1 << 20, 4 << 20]
    return [16, 256, 4096, 65536, 1 << 20, 4 << 20]


THR_METRICS = ["msgs_per_s", "mb_per_s", "send_calls_per_s", "msgs_per_cpu_s", "recv_msgs_per_cpu_s",
               "send_msgs_per_cpu_s"]


def _thr_cell(suite, impls, transport, size, mode, pinned, ipc_n, target):
    """One study-2 cell. Sender and receiver are separate, unpinned processes
    (what a user program does); pinned=True is the labelled variant with the
    receiver on core 0 and the sender on core 1."""
    cpus = (0, 1) if pinned else (None, None)
    sides = []
    # "bytearray": the forced-copy Python row (a bytearray is copied on send by
    # every Python library, oxmq included), so Python sides only.
    keys = PY_THR_IMPLS if mode == "bytearray" else THR_IMPLS + NEW_PEERS
    for k in keys:
        impl = impls[k]

        def run(n, impl=impl, size=size, mode=mode, transport=transport):
            if transport == "inproc":
                r = run_procs([Proc("main", impl, "thr", ["inproc", size, n, mode])], suite.timeout)["main"]
                return _cpu_metrics(dict(r), r)
            if transport == "tcp":
                ep = "tcp://127.0.0.1:*"
            else:
                ipc_n[0] += 1
                ep = "ipc:///tmp/oxmq-bench-thr-%d-%d" % (os.getpid(), ipc_n[0])
            r = run_procs([Proc("recv", impl, "thr", ["recv", ep, size, n, mode], cpu=cpus[0], ready=True),
                           Proc("send", impl, "thr", ["send", "{ep0}", size, n, mode, "{ep1}"], cpu=cpus[1])],
                          suite.timeout)
            out = dict(r["recv"])
            out["send_calls_per_s"] = r["send"]["send_calls_per_s"]
            return _cpu_metrics(out, r["recv"], r["send"])

        init = 20 if suite.quick else int(max(20, min(20000, (8 << 20) // size)))
        if suite.quick and size <= 4096:
            init = 2000
        sides.append(_peer_side(Side(impl, run, init, calibrate="seconds", cmin=20, cmax=50_000_000), k))
    if size >= 1 << 20 and mode == "copy":
        sides.append(_raw_side(suite, impls, transport, size))
    label = "%s %s %s%s" % (transport, size_label(size), mode, " (pinned)" if pinned else "")
    log("[2 throughput] %s" % label)
    key = {"transport": transport, "size": size, "mode": mode}
    if pinned:
        key["pinned"] = True
    cell = suite.compare(2, key, sides, THR_METRICS, label, target=target)
    ratios(cell, "msgs_per_s", False, impls)
    ratios(cell, "msgs_per_cpu_s", False, impls)


def pinned_cells(quick):
    """The pinned variant of study 2: a few tcp cells (small and large)."""
    return [("tcp", 16, "copy")] if quick else [("tcp", 16, "copy"), ("tcp", 1 << 20, "copy")]


# The one-process layout (issue 21 item 4): one context, PULL bound in the main
# thread, PUSH connected from a second thread over loopback tcp, so one I/O
# thread serves both ends of the connection. C programs only (bench/c/thr.c).
THREADS_IMPLS = ["c_libzmq", "c_oxmq", "c_omq"]


def threads_sizes(quick):
    return [64, 1 << 20] if quick else [64, 4096, 65536, 1 << 20]


def _thr_threads_cell(suite, impls, size, target):
    sides = []
    for k in THREADS_IMPLS:
        impl = impls[k]

        def run(n, impl=impl, size=size):
            r = run_procs([Proc("main", impl, "thr", ["tcpthreads", size, n, "copy"])], suite.timeout)["main"]
            return _cpu_metrics(dict(r), r)

        init = 20 if suite.quick else int(max(20, min(20000, (8 << 20) // size)))
        if suite.quick and size <= 4096:
            init = 2000
        sides.append(_peer_side(Side(impl, run, init, calibrate="seconds", cmin=20, cmax=50_000_000), k))
    label = "tcp %s copy (one process, two threads)" % size_label(size)
    log("[2 throughput] %s" % label)
    cell = suite.compare(2, {"transport": "tcp", "size": size, "mode": "copy", "layout": "threads"}, sides,
                         THR_METRICS, label, target=target)
    ratios(cell, "msgs_per_s", False, impls)
    ratios(cell, "msgs_per_cpu_s", False, impls)


@study(2, "throughput", "Throughput vs message size: PUSH/PULL, copy vs zero-copy")
def study_throughput(suite, impls):
    target = suite.target * 0.6
    ipc_n = [0]
    for transport in ("tcp", "ipc", "inproc"):
        for size in thr_sizes(suite.quick, transport):
            for mode in ("copy", "zc") + (("bytearray",) if size >= PY_LEND_MIN else ()):
                _thr_cell(suite, impls, transport, size, mode, False, ipc_n, target)
    if HAVE_TASKSET:
        for transport, size, mode in pinned_cells(suite.quick):
            _thr_cell(suite, impls, transport, size, mode, True, ipc_n, target)
    for size in threads_sizes(suite.quick):
        _thr_threads_cell(suite, impls, size, target)


RAW_KIND = {"tcp": "tcp", "ipc": "unix", "inproc": "memcpy"}


def _raw_side(suite, impls, transport, size):
    """The machine's own limit for this cell (study 8's probe with SIZE writes),
    interleaved with the messaging sides so that both see the same load."""
    i = Impl("raw", "machine: raw socket / memcpy", "machine")
    i._argv, i.reason = impls["phys"]._argv, impls["phys"].reason
    kind = RAW_KIND[transport]

    def run(n):
        r = run_procs([Proc("probe", i, "physical", [kind, size, n * size])], suite.timeout)["probe"]
        return {"msgs_per_s": r["mb_per_s"] * 1e6 / size, "mb_per_s": r["mb_per_s"], "seconds": r["seconds"]}

    return Side(i, run, 20 if suite.quick else 200, calibrate="seconds", cmin=4, cmax=100_000)


def lat_sizes(quick):
    return [64] if quick else [64, 4096, 262144]


@study(10, "pyrecv", "Event-loop receivers: zmq.asyncio and ZMQStream receive rate, 100 B over tcp, two processes")
def study_pyrecv(suite, impls):
    size = 100
    for kind in ("asyncio", "stream"):
        sides = []
        for k in ("pyzmq", "oxmq_py"):
            impl = impls[k]

            def run(n, impl=impl, kind=kind):
                r = run_procs([Proc("recv", impl, "pyrecv", ["recv", "tcp://127.0.0.1:*", size, n, kind], cpu=0,
                                    ready=True),
                               Proc("send", impl, "thr", ["send", "{ep0}", size, n, "copy", "{ep1}"], cpu=1)],
                              suite.timeout)
                return dict(r["recv"])

            sides.append(Side(impl, run, 2000, calibrate="seconds", cmin=200, cmax=5_000_000))
        label = "%s tcp %d B" % ("zmq.asyncio" if kind == "asyncio" else "ZMQStream", size)
        log("[10 pyrecv] %s" % label)
        cell = suite.compare(10, {"receiver": kind, "size": size}, sides, ["msgs_per_s"], label)
        ratios(cell, "msgs_per_s", False, impls)


@study(3, "latency", "Latency: REQ/REP round trips vs message size")
def study_latency(suite, impls):
    ipc_n = [0]
    for transport in ("tcp", "ipc", "inproc"):
        for size in lat_sizes(suite.quick):
            sides = []
            for k in THR_IMPLS + NEW_PEERS:
                impl = impls[k]

                def run(n, impl=impl, size=size, transport=transport):
                    if transport == "inproc":
                        return run_procs([Proc("main", impl, "lat", ["inproc", size, n])], suite.timeout)["main"]
                    if transport == "tcp":
                        ep = "tcp://127.0.0.1:*"
                    else:
                        ipc_n[0] += 1
                        ep = "ipc:///tmp/oxmq-bench-lat-%d-%d" % (os.getpid(), ipc_n[0])
                    r = run_procs([Proc("server", impl, "lat", ["server", ep, size, n], cpu=0, ready=True),
                                   Proc("client", impl, "lat", ["client", "{ep0}", size, n], cpu=1)],
                                  suite.timeout)
                    return r["client"]

                init = 200 if suite.quick else (2000 if size <= 4096 else 200)
                sides.append(_peer_side(Side(impl, run, init, calibrate="seconds", cmin=200, cmax=300_000), k))
            if transport != "inproc":
                sides.append(_ping_side(suite, impls, transport, size))
            label = "%s %s" % (transport, size_label(size))
            log("[3 latency] %s" % label)
            cell = suite.compare(3, {"transport": transport, "size": size}, sides,
                                 ["mean_us", "p50_us", "p99_us", "p50_us_pinned", "p50_us_unpinned"], label)
            cell["floor_violations"] = floor_violations(cell)
            ratios(cell, "mean_us", True, impls)
            ratios(cell, "p99_us", True, impls)


PING_KIND = {"tcp": "pingtcp", "ipc": "pingunix"}


def _ping_side(suite, impls, transport, size):
    """The latency goal's floor: a plain-socket ping-pong of the same size over
    the same kind of socket (loopback TCP or a Unix socketpair with oxmq's ipc
    buffer sizes), interleaved with the REQ/REP sides so that both see the same
    machine. Each repetition runs it pinned and unpinned and keeps the better of
    each figure: a floor any library beats is a measurement error to explain."""
    i = Impl("ping", "machine: plain socket ping-pong (best of pinned, unpinned)", "machine")
    i._argv, i.reason = impls["phys"]._argv, impls["phys"].reason
    free = Impl("ping_unpinned", i.label, "machine")
    free._argv, free.reason, free.env = i._argv, i.reason, {"PHYS_NOPIN": "1"}
    kind = PING_KIND[transport]

    def run(n):
        a = run_procs([Proc("probe", i, "physical", [kind, size, n])], suite.timeout)["probe"]
        b = run_procs([Proc("probe", free, "physical", [kind, size, n])], suite.timeout)["probe"]
        out = {m: min(a[m], b[m]) for m in ("mean_us", "p50_us", "p99_us")}
        out.update(seconds=a["seconds"], p50_us_pinned=a["p50_us"], p50_us_unpinned=b["p50_us"])
        return out

    init = 200 if suite.quick else (2000 if size <= 4096 else 200)
    return Side(i, run, init, calibrate="seconds", cmin=200, cmax=300_000)


def floor_violations(cell):
    """Sides whose p50 round trip beats the plain-socket floor of their cell."""
    ping = cell["sides"].get("ping", {}).get("metrics", {}).get("p50_us")
    if not ping:
        return []
    return [(k, e["metrics"]["p50_us"]["median"]) for k, e in cell["sides"].items()
            if k != "ping" and "p50_us" in e.get("metrics", {}) and e["metrics"]["p50_us"]["median"] < ping["median"]]


@study(4, "inproc", "inproc hand-off: 1,048,576 four-byte messages over PAIR between two threads")
def study_inproc(suite, impls):
    n = 1 << 16 if suite.quick else 1 << 20
    sides = []
    for k, mode in [("c_libzmq", "zmq"), ("c_oxmq", "zmq"), ("rust_oxmq", None), ("c_mutex", "mutex"),
                    ("pyzmq", None), ("pyomq", None), ("oxmq_py", None), ("py_queue", None)]:
        impl = impls[k]
        args = [mode, n] if mode else [n]

        def run(count, impl=impl, args=args):
            return run_procs([Proc("main", impl, "inproc_pair", args)], suite.timeout)["main"]

        sides.append(Side(impl, run, n))
    cell = suite.compare(4, {"count": n}, sides, ["seconds", "msgs_per_s"], "inproc PAIR x %d" % n)
    # The mutex+condvar queue is a peer of this study only.
    ratios(cell, "seconds", True, impls, extra_peers={"c_oxmq": ["c_mutex"], "rust_oxmq": ["c_mutex"]})


@study(5, "weather", "Weather station: PUB server and a SUB client filtering on \"10001 \"")
def study_weather(suite, impls):
    zip_range, n = (1000, 20) if suite.quick else (10000, 100)
    sides = []
    for k in ["c_libzmq", "c_oxmq", "rust_oxmq", "pyzmq", "pyomq", "oxmq_py", "perl_libzmq", "perl_oxmq", "ruby_gem"]:
        impl = impls[k]

        def run(count, impl=impl):
            r = run_procs([Proc("server", impl, "weather", ["server", "tcp://127.0.0.1:*", zip_range], cpu=0,
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


@study(6, "logpipe", "Log pipeline: 3 writers PUSH -> collector PULL/PUB -> 2 SUB readers")
def study_logpipe(suite, impls):
    per_writer = 5000 if suite.quick else 200_000
    sides = []
    for k in ["pyzmq", "pyomq", "oxmq_py"]:
        impl = impls[k]

        def run(count, impl=impl):
            procs = [Proc("collector", impl, "logpipe", ["collector", 3], ready=True),
                     Proc("reader_all", impl, "logpipe", ["reader", "{ep1}", ""], ready=True),
                     Proc("reader_err", impl, "logpipe", ["reader", "{ep1}", "ERROR"], ready=True)]
            writers = [Proc("w%d" % i, impl, "logpipe", ["writer", "{ep0}", count, i, "{ep1}"]) for i in range(3)]
            r = run_procs(procs + [_Delay(0.5)] + writers, suite.timeout)
            total = 3 * count
            if r["reader_all"]["lines"] != total:
                raise RunError("unfiltered reader got %d of %d lines" % (r["reader_all"]["lines"], total))
            t0 = min(r["w%d" % i]["start"] for i in range(3))
            t1 = max(r["reader_all"]["end"], r["reader_err"]["end"])
            cpu = sum(v["cpu"] for v in r.values())
            return {"lines_per_s": total / (t1 - t0), "cpu_s_per_mline": cpu / (total / 1e6),
                    "error_lines": r["reader_err"]["lines"], "module": r["collector"].get("module"),
                    "module_version": r["collector"].get("module_version")}

        sides.append(Side(impl, run, per_writer))
    cell = suite.compare(6, {"lines": 3 * per_writer}, sides, ["lines_per_s", "cpu_s_per_mline"], "log pipeline")
    ratios(cell, "lines_per_s", False, impls)
    ratios(cell, "cpu_s_per_mline", True, impls)


@study(11, "ruby", "Ruby: REQ/REP round trips and a logger pipeline, the oxmq gem vs ffi-rzmq")
def study_ruby(suite, impls):
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
                return run_procs([Proc("main", impl, prog, ["gem" if impl.key == "ruby_gem" else "ffi", n])],
                                 suite.timeout)["main"]

            n0 = count // 5 if suite.quick else count
            sides.append(Side(impl, run, n0, calibrate="seconds", cmin=n0, cmax=50 * count))
        log("[11 ruby] %s" % label)
        cell = suite.compare(11, {"shape": prog}, sides, [metric, "seconds"], label)
        cell["ratios"] = {metric: ratios(cell, metric, lower, impls)}
        cell["ratios"]["speed"] = cell["ratios"][metric]


@study(7, "rpc", "Cross-process calls over REQ/REP on ipc")
def study_rpc(suite, impls):
    ipc_n = [0]
    for shape in ("add", "sort", "callback"):
        sides = []
        for k in ["pyzmq", "pyomq", "oxmq_py", "py_pipe"]:
            impl = impls[k]

            def run(n, impl=impl, shape=shape):
                if impl.key == "py_pipe":
                    return run_procs([Proc("client", impl, "rpc", ["client", "-", shape, n])], suite.timeout)["client"]
                ipc_n[0] += 1
                ep = "ipc:///tmp/oxmq-bench-rpc-%d-%d" % (os.getpid(), ipc_n[0])
                r = run_procs([Proc("server", impl, "rpc", ["server", ep], cpu=0, ready=True),
                               Proc("client", impl, "rpc", ["client", "{ep0}", shape, n], cpu=1)], suite.timeout)
                return r["client"]

            init = (50 if shape == "callback" else 300) if suite.quick else (200 if shape == "callback" else 2000)
            sides.append(Side(impl, run, init, calibrate="seconds", cmin=50, cmax=1_000_000))
        log("[7 rpc] %s" % shape)
        cell = suite.compare(7, {"shape": shape}, sides, ["us_per_call"], "rpc %s" % shape)
        ratios(cell, "us_per_call", True, impls)


@study(12, "memory", "Memory: resident set with 1,000,000 queued 100-byte messages (HWM 0)")
def study_memory(suite, impls):
    count = 100_000 if suite.quick else 1_000_000
    sides = []
    for k in ("c_libzmq", "c_oxmq", "c_omq"):
        impl = impls[k]

        def run(n, impl=impl):
            return run_procs([Proc("main", impl, "memq", [n, 100])], suite.timeout)["main"]

        sides.append(Side(impl, run, count))
    saved = suite.reps
    suite.reps = min(saved, 3)  # memory does not vary run to run the way time does
    try:
        cell = suite.compare(12, {"count": count, "size": 100}, sides, ["rss_mib", "bytes_per_msg", "seconds"],
                             "%d queued 100 B messages" % count)
    finally:
        suite.reps = saved
    ratios(cell, "rss_mib", True, impls)


SCALE_IMPLS = ["c_libzmq", "c_libzmq435", "c_oxmq", "c_omq"]
# DEALERs per client process: each costs libzmq two descriptors (its tcp
# connection and its socket's mailbox), and RLIMIT_NOFILE's hard limit may be
# as low as 20,000 in a container.
SCALE_PER_PROC = 2500
SCALE_PINGS = 2000
SCALE_HOSTS = 4  # network namespaces ("hosts") for the clients of the veth cells
SCALE_NET = "10.201"  # 10.201.J.1 (server side) - 10.201.J.2 (client J) over veth pair J
SCALE_METRICS = ["connect_seconds", "router_kib_per_conn", "client_kib_per_conn", "p50_us", "p99_us", "mean_us",
                 "cpu_us_per_ping"]
SCALE_RATIOS = ["connect_seconds", "router_kib_per_conn", "client_kib_per_conn", "p50_us", "p99_us"]
FANOUT_METRICS = ["delivered_per_s", "lag_ms", "publish_seconds"]


def scale_counts(quick):
    """DEALER counts; 10 is the baseline of the p99 goal (p99 at the largest within 2× p99 at 10)."""
    return [10, 200] if quick else [10, 1000, 5000, 10000]


def fanout_shape(quick):
    """(SUBs, messages each, message size, SUB processes)."""
    return (100, 100, 64, 2) if quick else (1000, 1000, 64, 4)


def _split(n, parts):
    return [n // parts + (1 if j < n % parts else 0) for j in range(parts)]


def _in_netns(impl, ns):
    """impl's programs run inside network namespace ns (None: as they are)."""
    if ns is None:
        return impl
    i = Impl(impl.key, impl.label, impl.group, oxmq=impl.oxmq, peers=impl.peers, expect_capi=impl.expect_capi,
             expect_lib=impl.expect_lib)
    i._argv = lambda prog, base=impl: ["ip", "netns", "exec", ns] + base._argv(prog)
    i.env, i.reason = impl.env, impl.reason
    return i


class Hosts:
    """Where the server and each client process run. Loopback: one namespace,
    client j connecting to 127.0.0.(j+1) (several addresses, so that ephemeral
    ports never run short). Veth: the server in a namespace of its own, client
    j in namespace j, joined to the server's by veth pair j, so that the traffic
    crosses real (virtual) interfaces and each "host" has its own TCP stack."""

    def __init__(self):
        self.server_ns, self.client_ns, self.label = None, [], "loopback"

    def server(self, impl):
        return _in_netns(impl, self.server_ns)

    def client(self, impl, j):
        return _in_netns(impl, self.client_ns[j % len(self.client_ns)] if self.client_ns else None)

    def addr(self, j):
        if self.client_ns:
            return "%s.%d.1" % (SCALE_NET, j % len(self.client_ns))
        return "127.0.0.%d" % (j % 250 + 1)

    def up(self, k):
        """Make the namespaces; None when done, else why the machine does not allow it."""
        if os.geteuid() != 0:
            return "needs root (ip netns add)"
        if not shutil.which("ip"):
            return "no `ip` command (iproute2)"
        prefix = "oxmqscale%d" % os.getpid()
        self.server_ns = prefix + "s"
        self.client_ns = ["%sc%d" % (prefix, j) for j in range(k)]
        cmds = [["ip", "netns", "add", self.server_ns], ["ip", "-n", self.server_ns, "link", "set", "lo", "up"]]
        for j, ns in enumerate(self.client_ns):
            cmds += [["ip", "netns", "add", ns], ["ip", "-n", ns, "link", "set", "lo", "up"],
                     ["ip", "-n", self.server_ns, "link", "add", "vs%d" % j, "type", "veth", "peer", "name",
                      "vc%d" % j, "netns", ns],
                     ["ip", "-n", self.server_ns, "addr", "add", "%s.%d.1/24" % (SCALE_NET, j), "dev", "vs%d" % j],
                     ["ip", "-n", ns, "addr", "add", "%s.%d.2/24" % (SCALE_NET, j), "dev", "vc%d" % j],
                     ["ip", "-n", self.server_ns, "link", "set", "vs%d" % j, "up"],
                     ["ip", "-n", ns, "link", "set", "vc%d" % j, "up"]]
        for c in cmds:
            why = probe(c)
            if why:
                self.down()
                return "`%s` failed: %s" % (" ".join(c), why)
        # `ip netns exec` also needs to make a mount namespace, which a container may refuse.
        why = probe(["ip", "netns", "exec", self.client_ns[0], "true"])
        if why:
            self.down()
            return "`ip netns exec` failed: %s" % why
        why = probe(["ip", "netns", "exec", self.client_ns[0], "ping", "-c", "1", "-W", "2", self.addr(0)]) \
            if shutil.which("ping") else None
        if why:
            self.down()
            return "no route over the veth pair: %s" % why
        self.label = "%d veth hosts" % k
        return None

    def down(self):
        for ns in [self.server_ns] + self.client_ns:
            if ns:
                subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        self.server_ns, self.client_ns = None, []


def _scale_dealers(suite, impl, n, hosts, pings):
    procs_n = max(1, -(-n // SCALE_PER_PROC))
    if hosts.client_ns:
        procs_n = max(procs_n, len(hosts.client_ns))
    procs = [Proc("router", hosts.server(impl), "scale", ["router", "tcp://0.0.0.0:*", n, procs_n], ready=True)]
    for j, mine in enumerate(_split(n, procs_n)):
        procs.append(Proc("d%d" % j, hosts.client(impl, j), "scale",
                          ["dealer", hosts.addr(j), "{ep0}", n, mine, j, "{ep1}", pings]))
    r = run_procs(procs, suite.timeout)
    ds = [r["d%d" % j] for j in range(procs_n)]
    t0, t1 = min(d["t0"] for d in ds), max(d["t1"] for d in ds)
    out = {"connect_seconds": t1 - t0, "router_kib_per_conn": r["router"]["router_kib_per_conn"],
           "client_kib_per_conn": sum(d["client_kib_per_conn"] * d["dealers"] for d in ds) / n,
           "client_processes": procs_n}
    for m in ("p50_us", "p99_us", "mean_us"):
        out[m] = ds[0][m]
    # CPU per round trip on both ends (the ROUTER's includes its idle time with
    # N connections open): less at the mercy of a loaded machine than p99.
    rounds = ds[0]["pings"] + ds[0]["ping_sample"]
    out["cpu_us_per_ping"] = ds[0]["client_cpu_us_per_ping"] + r["router"]["router_cpu_s_after"] * 1e6 / rounds
    for k in ("lib", "zmq_version"):
        if k in r["router"]:
            out[k] = r["router"][k]
    return out


def _scale_fanout(suite, impl, hosts, shape):
    subs, msgs, size, procs_n = shape
    if hosts.client_ns:
        procs_n = max(procs_n, len(hosts.client_ns))
    procs = [Proc("pub", hosts.server(impl), "scale", ["pub", "tcp://0.0.0.0:*", procs_n, msgs, size], ready=True)]
    for j, mine in enumerate(_split(subs, procs_n)):
        procs.append(Proc("s%d" % j, hosts.client(impl, j), "scale",
                          ["sub", hosts.addr(j), "{ep0}", "{ep1}", mine, msgs]))
    r = run_procs(procs, suite.timeout)
    ss = [r["s%d" % j] for j in range(procs_n)]
    got = sum(s["subs"] * s["msgs"] for s in ss)
    if got != subs * msgs:
        raise RunError("SUBs report %d deliveries, not %d" % (got, subs * msgs))
    first, last = min(s["first_sent"] for s in ss), max(s["last_done"] for s in ss)
    out = {"delivered_per_s": got / (last - first) if last > first else None,
           "lag_ms": (last - max(s["last_sent"] for s in ss)) * 1e3,
           "publish_seconds": r["pub"]["publish_seconds"]}
    for k in ("lib", "zmq_version"):
        if k in r["pub"]:
            out[k] = r["pub"][k]
    return out


def _scale_cells(suite, impls, hosts, counts, shape, pings):
    for n in counts:
        sides = []
        for k in SCALE_IMPLS:
            def run(count, impl=impls[k], n=n):
                return _scale_dealers(suite, impl, n, hosts, pings)

            sides.append(Side(impls[k], run, n))
        label = "ROUTER + %d DEALERs (%s)" % (n, hosts.label)
        log("[13 scale] %s" % label)
        cell = suite.compare(13, {"shape": "dealers", "connections": n, "hosts": hosts.label}, sides,
                             SCALE_METRICS, label)
        for m in SCALE_RATIOS:
            ratios(cell, m, True, impls)
    sides = []
    for k in SCALE_IMPLS:
        def run(count, impl=impls[k]):
            return _scale_fanout(suite, impl, hosts, shape)

        sides.append(Side(impls[k], run, shape[1]))
    label = "PUB -> %d SUBs x %d msgs of %d B (%s)" % (shape[0], shape[1], shape[2], hosts.label)
    log("[13 scale] %s" % label)
    cell = suite.compare(13, {"shape": "fanout", "subs": shape[0], "msgs": shape[1], "size": shape[2],
                              "hosts": hosts.label}, sides, FANOUT_METRICS, label)
    ratios(cell, "delivered_per_s", False, impls)
    ratios(cell, "lag_ms", True, impls)


@study(13, "scale", "Scale: one ROUTER with 10 to 10,000 DEALERs, one PUB fanning out to 1,000 SUBs, over loopback "
                    "and over veth pairs between network namespaces")
def study_scale(suite, impls):
    counts, shape = scale_counts(suite.quick), fanout_shape(suite.quick)
    pings = 500 if suite.quick else SCALE_PINGS
    saved = suite.reps
    suite.reps = min(saved, 3)  # a 10,000-connection run takes seconds; three repetitions per side
    try:
        _scale_cells(suite, impls, Hosts(), counts, shape, pings)
        veth = Hosts()
        why = veth.up(SCALE_HOSTS)
        suite.results.setdefault(13, {"cells": []})["veth"] = why or veth.label
        if why:
            log("[13 scale] veth cells skipped: %s" % why)
            return
        try:
            _scale_cells(suite, impls, veth, counts[-1:], shape, pings)
        finally:
            veth.down()
    finally:
        suite.reps = saved


CURVE_IMPLS = ["c_libzmq", "c_libzmq435", "c_oxmq", "rust_oxmq", "pyzmq", "oxmq_py"]
MECHANISMS = (("null", "NULL", 0), ("curve", "CURVE", 2))


def curve_sizes(quick):
    return [1024] if quick else [64, 1024, 65536, 1 << 20]


def _mech_impls(impls):
    """Each side twice, as NULL and as CURVE: the same program, told by
    BENCH_CURVE to make its bound socket a CURVE server and its connecting one a
    client (fixed test keys). Peers pair up within a mechanism."""
    out = {}
    for k in CURVE_IMPLS:
        base = impls[k]
        for mk, mname, _ in MECHANISMS:
            i = Impl("%s_%s" % (k, mk), "%s, %s" % (base.label, mname), base.group, oxmq=base.oxmq,
                     peers=["%s_%s" % (p, mk) for p in base.peers if p in CURVE_IMPLS],
                     expect_capi=base.expect_capi, expect_lib=base.expect_lib)
            i._argv, i.reason = base._argv, base.reason
            i.env = dict(base.env, BENCH_CURVE="1" if mk == "curve" else "0")
            i.base, i.mech = k, mk
            out[i.key] = i
    return out


def _check_mech(res, impl):
    want = dict((mk, code) for mk, _, code in MECHANISMS)[impl.mech]
    if res.get("mechanism") != want:
        raise RunError("ran with mechanism %r, not %s (%d)" % (res.get("mechanism"), impl.mech.upper(), want))
    return res


def curve_costs(cell, metric, lower_better):
    """Per library: CURVE speed ÷ NULL speed in this cell (1.0 = CURVE is free)."""
    out = {}
    for k in CURVE_IMPLS:
        n = cell["sides"].get(k + "_null")
        c = cell["sides"].get(k + "_curve")
        sn = side_speed(n, metric, lower_better) if n else None
        sc = side_speed(c, metric, lower_better) if c else None
        if sn and sc:
            out[k] = sc / sn
    cell.setdefault("curve_cost", {})[metric] = out
    return out


@study(9, "curve", "CURVE security: PUSH/PULL throughput and REQ/REP latency over tcp, CURVE against NULL")
def study_curve(suite, impls):
    load0 = os.getloadavg()
    mi = _mech_impls(impls)
    for size in curve_sizes(suite.quick):
        sides = []
        for k in CURVE_IMPLS:
            for mk, _, _ in MECHANISMS:
                impl = mi["%s_%s" % (k, mk)]

                def run(n, impl=impl, size=size):
                    r = run_procs([Proc("recv", impl, "thr", ["recv", "tcp://127.0.0.1:*", size, n, "copy"], cpu=0,
                                        ready=True),
                                   Proc("send", impl, "thr", ["send", "{ep0}", size, n, "copy", "{ep1}"], cpu=1)],
                                  suite.timeout)
                    out = dict(_check_mech(r["recv"], impl))
                    out["send_calls_per_s"] = r["send"]["send_calls_per_s"]
                    return out

                init = int(max(20, min(20000, (8 << 20) // size)))
                if suite.quick:
                    init = 2000 if size <= 4096 else 20
                sides.append(Side(impl, run, init, calibrate="seconds", cmin=20, cmax=50_000_000))
        label = "tcp %s" % size_label(size)
        log("[9 curve] throughput %s" % label)
        cell = suite.compare(9, {"kind": "thr", "transport": "tcp", "size": size}, sides,
                             ["msgs_per_s", "mb_per_s"], "throughput " + label, target=suite.target * 0.6)
        ratios(cell, "msgs_per_s", False, mi)
        curve_costs(cell, "msgs_per_s", False)
    sides = []
    for k in CURVE_IMPLS:
        for mk, _, _ in MECHANISMS:
            impl = mi["%s_%s" % (k, mk)]

            def run(n, impl=impl):
                r = run_procs([Proc("server", impl, "lat", ["server", "tcp://127.0.0.1:*", 64, n], cpu=0, ready=True),
                               Proc("client", impl, "lat", ["client", "{ep0}", 64, n], cpu=1)], suite.timeout)
                return _check_mech(r["client"], impl)

            sides.append(Side(impl, run, 200 if suite.quick else 2000, calibrate="seconds", cmin=200,
                              cmax=300_000))
    log("[9 curve] latency tcp 64 B")
    cell = suite.compare(9, {"kind": "lat", "transport": "tcp", "size": 64}, sides, ["mean_us", "p50_us", "p99_us"],
                         "latency tcp 64 B", target=suite.target * 0.6)
    ratios(cell, "mean_us", True, mi)
    curve_costs(cell, "mean_us", True)
    suite.results[9]["loadavg"] = [list(load0), list(os.getloadavg()), NCPU]


# ----------------------------------------------------------------------------
# Machine and versions
# ----------------------------------------------------------------------------


def sh(argv, env=None):
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=30, env=env)
        return (r.stdout or r.stderr).strip() if r.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired):
        return None


def machine_info(impls):
    cpu = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "?"
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                mem = "%.1f GiB" % (int(line.split()[1]) / 1048576)
    except OSError:
        pass
    v = {}
    v["gcc"] = (sh(["gcc", "--version"]) or "?").splitlines()[0]
    v["Debian libzmq (pkg-config)"] = sh(["pkg-config", "--modversion", "libzmq"]) or "?"
    v["rustc"] = sh(["rustc", "--version"]) or "?"
    pyb = bench_python()
    v["python (studies)"] = "%s (%s)" % (sh([str(pyb), "-c", "import sys; print(sys.version.split()[0])"]) or "?",
                                         pyb.relative_to(ROOT))
    if pyb != VENV312_PY:
        v["python 3.12"] = "not run: " + py312_reason()
    for mod, name in (("zmq", "pyzmq"), ("pyomq", "pyomq"), ("oxmq", "oxmq (Python)")):
        out = sh([str(pyb), "-c", "import %s as z; print(z.__version__, 'libzmq', z.zmq_version())" % mod])
        v[name] = out or "not installed"
    v["matplotlib"] = sh([str(VENV_PY), "-c", "import matplotlib; print(matplotlib.__version__)"]) or "?"
    st = _rust_peers_status()
    for key, name in (("omq-libzmq", "omq-libzmq (C ABI)"), ("crates", "Rust peers")):
        v[name] = st.get(key + "-version") or st.get(key) or "not built"
    try:
        v["libzmq 4.3.5 (CURVE C peer)"] = ZMQ435_STATUS.read_text().strip()
    except OSError:
        v["libzmq 4.3.5 (CURVE C peer)"] = "not built"
    v["Debian python3-zmq"] = sh([str(SYS_PY), "-c", "import zmq; print(zmq.__version__, 'libzmq', zmq.zmq_version())"],
                                 env=base_env()) or "not installed"
    v["perl ZMQ::FFI"] = sh(["perl", "-MZMQ::FFI", "-e", "print $ZMQ::FFI::VERSION"], env=base_env()) or "not installed"
    v["ruby"] = sh(["ruby", "-e", "print RUBY_VERSION"]) or "?"
    v["ruby ffi-rzmq"] = sh(["ruby", "-rffi-rzmq", "-e", "print ZMQ::VERSION rescue print 'present'"],
                            env=base_env()) or "not installed"
    cargo = (ROOT / "Cargo.toml").read_text() if (ROOT / "Cargo.toml").exists() else ""
    ver = next((l.split("=", 1)[1].strip().strip('"') for l in cargo.splitlines() if l.startswith("version")), "?")
    v["oxmq (crate)"] = ver
    v["oxmq C ABI"] = str(CAPI_SO.relative_to(ROOT)) if CAPI_SO.exists() else "not built"
    v["git"] = sh(["git", "-C", str(ROOT), "describe", "--always", "--dirty"]) or "?"
    return {"cpu": cpu, "cores": NCPU, "memory": mem, "kernel": platform.release(), "os": platform.platform(),
            "taskset": HAVE_TASKSET, "versions": v,
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
            "implementations": {k: {"label": i.label, "available": i.available, "reason": i.reason,
                                    "oxmq": i.oxmq, "peers": list(i.peers)}
                                for k, i in impls.items()}}


# ----------------------------------------------------------------------------
# main
# ----------------------------------------------------------------------------


# Short studies first and the long throughput study last: results.json is
# written after each study, so a run cut short still renders (--report-only)
# with the most studies in it.
SUITE_ORDER = (8, 1, 11, 12, 13, 4, 7, 5, 6, 10, 3, 9, 2)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", default=os.environ.get("QUICK", "") not in ("", "0"))
    ap.add_argument("--studies", default=os.environ.get("BENCH_STUDIES", ""))
    ap.add_argument("--report-only", action="store_true", help="re-render REPORT.md and plots from results.json")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    out = Path(args.out) if args.out else (BENCH / "out" / "quick" if args.quick else BENCH)
    out.mkdir(parents=True, exist_ok=True)
    import report  # bench/report.py

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
    sys.path.insert(0, str(BENCH))
    sys.exit(main())
