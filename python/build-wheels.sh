#!/usr/bin/env bash
# make wheel: oxmq's Python wheels into $OUT (replaced as a whole only when
# every build succeeded, so a failed build never leaves a mixed set).
#   cp311-abi3: one wheel for CPython 3.11 and every later 3.x (the stable ABI;
#               PyO3 offers the buffer protocol oxmq's zero-copy paths use only
#               from 3.11's limited API)
#   cp39, cp310: one wheel each, built with that interpreter (found on PATH or
#               under pyenv); a missing interpreter is a recorded skip.
#               WHEEL_PYTHONS (default "3.9 3.10") chooses them; WHEEL_PYTHONS=
#               builds the abi3 wheel only (the one make test's venvs use),
#               about 2 of the 4-7 minutes, and wheel-test skips 3.9/3.10
# Every wheel is manylinux ($MANYLINUX: the newest glibc symbol version the
# module needs, checked by maturin's own auditwheel), stripped, with libsodium
# linked in statically (crates/oxmq-sodium) and the C ABI files of python-capi.
set -euo pipefail
MATURIN=$1 OUT=$2 MANYLINUX=$3 PY3=$4
cd "$(dirname "$0")"
out_abs=$(realpath -m "../$OUT")
tmp=$out_abs.tmp
rm -rf "$tmp" && mkdir -p "$tmp"
build() { # what maturin-args...
    local what=$1; shift
    echo "==> maturin build ($what)"
    # maturin's repair rewrites the cdylib's DT_NEEDED in place (to the
    # copies of MIT krb5's libraries it bundles), and its copy is a hard link
    # of cargo's output: a later build that cargo does not relink would find a
    # library naming those copies and fail. Removing both makes cargo relink.
    rm -f ../target/maturin/lib_oxmq.so ../target/release/deps/lib_oxmq.so ../target/release/lib_oxmq.so
    "$MATURIN" build --release --strip --compatibility "$MANYLINUX" --out "$tmp" "$@" 2>&1 |
        grep -vE '^\s+(Compiling|Fresh) ' || { echo "maturin build ($what) failed" >&2; exit 1; }
}
build "abi3, CPython 3.11+" --features pyo3/abi3-py311 -i "$PY3"
for v in ${WHEEL_PYTHONS-3.9 3.10}; do
    py=""
    for c in $(command -v "python$v") $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/$v.*/bin/python$v 2>/dev/null); do
        if "$c" -c "import sys; assert sys.version_info[:2] == (${v/./, })" >/dev/null 2>&1; then py=$c; break; fi
    done
    if [ -z "$py" ]; then
        echo "SKIP make wheel: no Python $v interpreter here (PATH, pyenv): no cp${v/./} wheel"
        [ -n "${OXMQ_SKIP_LOG:-}" ] && echo "make wheel: cp${v/./} wheel: no Python $v interpreter here (PATH, pyenv)" >> "$OXMQ_SKIP_LOG"
        continue
    fi
    build "CPython $v, $py" -i "$py"
done
rm -rf "$out_abs" && mv "$tmp" "$out_abs"
