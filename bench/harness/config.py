"""Where the benchmark's programs and libraries are, and what the machine offers."""

import os
import shutil
import sys
from pathlib import Path


BENCH = Path(__file__).resolve().parent.parent
ROOT = BENCH.parent
TARGET = ROOT / "target"
C_LIBZMQ = TARGET / "bench" / "c-libzmq"
C_OXMQ = TARGET / "bench" / "c-oxmq"
RUST_BIN = TARGET / "release" / "examples" / "bench_oxmq"
CAPI_DIR = TARGET / "release" / "capi"
CAPI_SO = CAPI_DIR / "libzmq.so.5"
# cargo's dep-info for the library CAPI_SO is a copy of (mk/capi.mk): what it is built from.
CAPI_DEP = TARGET / "release" / "liboxmq.d"
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
