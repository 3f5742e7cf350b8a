"""Implementations: who can run, and how a study program is started for each."""

import json
import os
import shutil
import subprocess
from pathlib import Path

from harness.config import (
    BENCH, C_LIBZMQ, C_OXMQ, CAPI_DEP, CAPI_DIR, CAPI_SO, OMQ_CAPI_DIR, PY_STUDY, ROOT, RUST_BIN, RUST_PEERS_DIR,
    RUST_PEERS_STATUS, PY312_STATUS, SYS_PY, VENV312_PY, VENV_PY, ZMQ435_DIR, ZMQ435_STATUS)


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


# What each oxmq artefact the suite runs is built from: a study must measure
# the tree it reports, and `bench/run.py` run alone rebuilds nothing. The
# 19:25 rerun of study 3 (2026-11-26) measured a Python module installed at
# 16:00, before a fix to the core's busy-poll. The Python wheel's sources as
# mk/python.mk lists them (make rebuilds and reinstalls it when any is newer);
# cargo's artefacts by the dep-info file cargo writes beside them (the files
# it would rebuild them for: a test-only module is not one of them).
STALE_SRCS = {
    "python": ("crates/oxmq/src", "crates/oxmq-proto/src", "crates/oxmq-sodium/src", "Cargo.lock",
               "python/src", "python/oxmq", "python/Cargo.toml"),
}


# The kinds of file mk/python.mk rebuilds the wheel for (PY_PKG_SRCS).
SOURCE_SUFFIXES = (".rs", ".py", ".pyi", "py.typed", "Cargo.toml", "Cargo.lock")


def source_files(paths, root=ROOT):
    """The source files git tracks under `paths` (so that caches such as a
    test's `__pycache__` never count), or every one there outside git."""
    try:
        r = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--", *paths], capture_output=True, timeout=30)
        if r.returncode == 0:
            return [root / f for f in r.stdout.decode().split("\0") if f.endswith(SOURCE_SUFFIXES)]
    except (OSError, subprocess.TimeoutExpired):
        pass
    out = []
    for p in (root / q for q in paths):
        out.extend([p] if p.is_file() else (f for f in p.rglob("*") if f.is_file() and "__pycache__" not in f.parts))
    return [f for f in out if f.name.endswith(SOURCE_SUFFIXES)]


def dep_info_sources(dep_file, root=ROOT):
    """The files of this tree that a cargo dep-info file (`target: dep dep ...`,
    spaces in names escaped) lists, or None when there is none."""
    try:
        text = dep_file.read_text()
    except OSError:
        return None
    first = text.split("\n", 1)[0]
    _, _, deps = first.partition(": ")
    names = [n.replace("\0", " ") for n in deps.replace("\\ ", "\0").split()]
    base = root.resolve()
    out = []
    for n in names:
        p = Path(n)
        p = p if p.is_absolute() else root / p
        try:
            p.resolve().relative_to(base)
        except ValueError:
            continue  # the registry's crates: they change only with Cargo.lock, which cargo tracks
        out.append(p)
    return out


def stale_reason(artefact, paths, rebuild, root=ROOT, dep_file=None):
    """Why `artefact` does not hold the tree's code: a source changed after
    it was built (make's rule), or None. The sources are those `dep_file`
    (cargo's dep-info) lists where there is one, else the files git tracks
    under `paths`. A missing artefact is None here: its own reason says so."""
    try:
        built = artefact.stat().st_mtime
    except OSError:
        return None
    if dep_file is not None:
        sources = dep_info_sources(dep_file, root)
        if sources is None:
            return None  # built some other way: nothing to compare with
    else:
        sources = source_files(paths, root)
    newest = None
    for f in sources:
        try:
            m = f.stat().st_mtime
        except OSError:
            continue
        if m > built and (newest is None or m > newest[0]):
            newest = (m, f)
    if newest is None:
        return None
    return "stale: %s predates %s (run `%s`)" % (_rel(artefact, root), _rel(newest[1], root), rebuild)


def _rel(p, root):
    try:
        return str(p.relative_to(root))
    except ValueError:
        return str(p)


def installed_extension(py_bin):
    """oxmq's extension module in `py_bin`'s venv (pip wrote it when it
    installed the wheel), or None."""
    found = sorted(py_bin.parent.parent.glob("lib/python3*/site-packages/oxmq/_oxmq*.so"))
    return found[0] if found else None


def rust_peers_status():
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
    capi_reason = capi_reason or stale_reason(CAPI_SO, (), "make capi", dep_file=CAPI_DEP)
    if capi_reason:
        co.reason = capi_reason
    elif not (C_OXMQ / "thr").exists():
        co.reason = "C ABI present but bench/c not built against it yet (run `make bench`)"
    # omq.rs's libzmq drop-in (crate omq-libzmq) under the same C programs.
    omq_status = rust_peers_status()
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
    else:
        r.reason = stale_reason(RUST_BIN, (), "make bench-rust", dep_file=RUST_BIN.with_suffix(".d"))
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
            elif module == "oxmq":
                ext = installed_extension(py_bin)
                i.reason = ext and stale_reason(ext, STALE_SRCS["python"],
                                                "make bench-py312" if py_bin == VENV312_PY else "make python-install")
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
