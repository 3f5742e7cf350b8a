#!/usr/bin/env bash
# make wheel-test: the wheel installed as a user without a Rust toolchain
# installs it (run with a PATH that has no cargo/rustc; pip may use the wheel
# directory only, so it cannot build from source) into fresh venvs of pyenv's
# Pythons 3.9 and 3.10 (their own wheels) and 3.13 (the abi3 wheel), then,
# from a directory outside the source tree: `import oxmq` must come from the venv's site-packages, and a
# PUSH/PULL round trip over tcp and a CURVE-secured one (libsodium inside the
# wheel) must work. An interpreter that is not here is a recorded skip.
set -uo pipefail
DIST=$(realpath "$1")
cd "$(dirname "$0")/../../.."
. tests/lib.sh
runner_start wheel
command -v cargo >/dev/null || command -v rustc >/dev/null && { echo "FAIL wheel-test: cargo/rustc on PATH ($PATH)"; exit 1; }

probe='
import os, sys, sysconfig
import oxmq
site = os.path.realpath(sysconfig.get_paths()["purelib"])
where = os.path.realpath(os.path.dirname(oxmq.__file__))
assert os.path.dirname(where) == site, f"oxmq from {where}, not {site}"
ctx = oxmq.Context()
def round_trip(curve):
    pull, push = ctx.socket(oxmq.PULL), ctx.socket(oxmq.PUSH)
    for s in (pull, push):
        s.linger = 0
        s.rcvtimeo = 5000
    if curve:
        spub, ssec = oxmq.curve_keypair()
        cpub, csec = oxmq.curve_keypair()
        pull.curve_server = True
        pull.curve_secretkey = ssec
        push.curve_serverkey, push.curve_publickey, push.curve_secretkey = spub, cpub, csec
    port = pull.bind_to_random_port("tcp://127.0.0.1")
    push.connect(f"tcp://127.0.0.1:{port}")
    push.send_multipart([b"hello", b"%d" % sys.version_info[1]])
    assert pull.recv_multipart() == [b"hello", b"%d" % sys.version_info[1]]
    push.close(); pull.close()
round_trip(False)
round_trip(True)
ctx.term()
print(f"Python {sys.version.split()[0]}: oxmq from site-packages, PUSH/PULL and CURVE round trips ok")
'
for v in 3.9 3.10 3.13; do
    py=""
    for c in $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/$v.*/bin/python$v 2>/dev/null) $(command -v "python$v"); do
        if "$c" -c "import sys; assert sys.version_info[:2] == (${v/./, })" >/dev/null 2>&1; then py=$c; break; fi
    done
    if [ -z "$py" ]; then skip "wheel on Python $v" "no Python $v interpreter here (pyenv, PATH)"; continue; fi
    minor=${v#3.}
    if ! ls "$DIST"/oxmq-*-cp3${minor}-cp3${minor}-*.whl >/dev/null 2>&1 && [ "$minor" -lt 11 ]; then
        skip "wheel on Python $v" "no cp3$minor wheel built (WHEEL_PYTHONS='${WHEEL_PYTHONS-}')"; continue
    fi
    log=$TMP/py$v.log
    {
        "$py" -m venv "$TMP/venv$v" &&
        "$TMP/venv$v/bin/python" -m pip install -q --disable-pip-version-check --no-index --only-binary=:all: \
            --find-links "$DIST" oxmq &&
        (cd "$TMP" && timeout 60 "$TMP/venv$v/bin/python" -c "$probe")
    } >"$log" 2>&1
    st=$?
    tag=$(sed -n 's/^Tag: //p' "$TMP/venv$v"/lib/python$v/site-packages/oxmq-*.dist-info/WHEEL 2>/dev/null)
    report "wheel on Python $v (${tag:-not installed})" $st "$log"
done
runner_finish wheel-test
