"""The machine and the versions of every side, recorded with each run."""

import platform
import subprocess
import time

from harness.config import CAPI_SO, HAVE_TASKSET, NCPU, ROOT, SYS_PY, VENV312_PY, VENV_PY, ZMQ435_STATUS
from harness.discover import rust_peers_status, base_env, bench_python, py312_reason


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
    st = rust_peers_status()
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
