#!/usr/bin/env bash
# Draft DGRAM through the C API, and against real libzmq:
#  - tests/interop/capi/dgram self on oxmq and on Debian's libzmq (which creates
#    DGRAM by number): round trip, address frames, libzmq's errors;
#  - oxmq <-> Debian libzmq across processes, both ways, over udp;
#  - oxmq <-> libzmq 4.3.5 built with drafts (npm's `zeromq` 6, installed
#    here at test time under target/, as the RADIO/DISH step does), both ways,
#    over udp and over ws:// (where [a][b] travel as ZMTP frames);
#  - every option on DGRAM (type 18), oxmq vs pyzmq's libzmq 4.3.5 and
#    vs Debian's.
#  - DGRAM over tcp, ipc and inproc: what libzmq 4.3.5 (pyzmq's) and Debian's
#    do with them (stream_transports.py), and that oxmq does the same (except
#    that an empty frame, which aborts libzmq, adds no bytes).
# Python's interop with pyzmq's libzmq 4.3.5 DGRAM is python/tests/test_dgram.py.
# npm's zeromq that cannot be installed is a failure (tests/lib.sh); what
# cannot run here is a SKIP with the reason, in make test's summary.
cd "$(dirname "$0")/../../.."
. tests/lib.sh
runner_start dgram

# pyzmq's bundled libzmq 4.3.5, or nothing.
pyzmq_libzmq() {
    ${VENV_PY:-.venv/bin/python} -c 'import glob, os, zmq; d = os.path.join(os.path.dirname(zmq.__file__), os.pardir, "pyzmq.libs"); print((glob.glob(os.path.join(d, "libzmq*.so*")) or [""])[0])' 2> /dev/null
}

# An echoing DGRAM in the background, an asking one in the foreground.
# udp: each binds its own port and the asker sends to the echoer's. ws://
# (frames, not raw): the asker connects to the echoer's port.
run_pair() { # name echo-binary ask-binary udp|ws
    local p q rc erc
    p=$(port)
    if [ "$4" = ws ]; then
        timeout -k 5 "$LIMIT" "$2" ws-echo "$p" > "$TMP/echo.log" 2>&1 &
        spid=$!
        timeout -k 5 "$LIMIT" "$3" ws-ask "$p" > "$TMP/ask.log" 2>&1
    else
        q=$(port)
        timeout -k 5 "$LIMIT" "$2" echo "$p" > "$TMP/echo.log" 2>&1 &
        spid=$!
        timeout -k 5 "$LIMIT" "$3" ask "$q" "127.0.0.1:$p" > "$TMP/ask.log" 2>&1
    fi
    rc=$?
    wait "$spid" 2>/dev/null
    erc=$?
    [ $rc -eq 0 ] && rc=$erc
    spid=
    cat "$TMP/echo.log" "$TMP/ask.log" > "$TMP/log"
    report "$1" $rc "$TMP/log"
}
pair() { run_pair "$1" "$2" "$3" udp; }
ws_pair() { run_pair "$1" "$2" "$3" ws; }

echo "== draft DGRAM: C API"
timeout -k 5 "$LIMIT" "$BIN/dgram" self > "$TMP/log" 2>&1
report "dgram self on oxmq" $? "$TMP/log"
timeout -k 5 "$LIMIT" "$BIN/dgram.libzmq" self > "$TMP/log" 2>&1
report "dgram self on Debian libzmq" $? "$TMP/log"

echo "== draft DGRAM: oxmq <-> Debian libzmq $(pkg-config --modversion libzmq 2>/dev/null) over udp"
pair "libzmq echoes, oxmq asks" "$BIN/dgram.libzmq" "$BIN/dgram"
pair "oxmq echoes, libzmq asks" "$BIN/dgram" "$BIN/dgram.libzmq"

echo "== draft DGRAM: libzmq 4.3.5 with drafts (npm zeromq 6) <-> oxmq"
if npm_zeromq_drafts; then
    printf '#!/bin/sh\nNODE_PATH="%s/node_modules" exec node tests/interop/dgram/peer.js "$@"\n' "$(cd "$NPM_DIR" && pwd)" > "$TMP/node-peer"
    chmod +x "$TMP/node-peer"
    pair "libzmq 4.3.5 echoes, oxmq asks" "$TMP/node-peer" "$BIN/dgram"
    pair "oxmq echoes, libzmq 4.3.5 asks" "$BIN/dgram" "$TMP/node-peer"
    ws_pair "ws: libzmq 4.3.5 echoes, oxmq asks" "$TMP/node-peer" "$BIN/dgram"
    ws_pair "ws: oxmq echoes, libzmq 4.3.5 asks" "$BIN/dgram" "$TMP/node-peer"
fi

echo "== draft DGRAM: every option on DGRAM (type 18)"
if [ -z "${OPTDUMP:-}" ]; then
    skip "options on DGRAM" "no optdump (OPTDUMP unset)"
else
    "$OPTDUMP" "${CAPI_LIB:-target/release/capi/libzmq.so.5}" > "$TMP/ox.txt" 2> /dev/null
    py_lib=$(pyzmq_libzmq)
    if [ -z "$py_lib" ]; then
        skip "options on DGRAM vs libzmq 4.3.5" "pyzmq's bundled libzmq not found"
    else
        "$OPTDUMP" "$py_lib" > "$TMP/py.txt" 2> /dev/null
        # pyzmq's libzmq has no GSSAPI (62-65, 90-91); oxmq has it, as Debian's.
        python3 tests/options/compare.py "$TMP/ox.txt" "$TMP/py.txt" --types 18 --build-differs 62,63,64,65,90,91 \
            --name "libzmq 4.3.5 (pyzmq), type 18" > "$TMP/log" 2>&1
        report "options on DGRAM vs libzmq 4.3.5" $? "$TMP/log"
    fi
    sys_lib=$(system_libzmq)
    if [ -z "$sys_lib" ]; then
        skip "options on DGRAM vs Debian libzmq" "no system libzmq.so.5"
    else
        "$OPTDUMP" "$sys_lib" > "$TMP/deb.txt" 2> /dev/null
        # Debian's build has VMCI (116); oxmq answers as a build without it.
        python3 tests/options/compare.py "$TMP/ox.txt" "$TMP/deb.txt" --types 18 --build-differs 116 \
            --name "Debian libzmq $(pkg-config --modversion libzmq 2>/dev/null), type 18" > "$TMP/log" 2>&1
        report "options on DGRAM vs Debian libzmq" $? "$TMP/log"
    fi
fi

echo "== draft DGRAM over tcp, ipc and inproc"
# The same assertions as on libzmq, but for an empty frame to send over
# tcp/ipc, which aborts libzmq and which oxmq skips (no bytes to write).
timeout -k 5 "$LIMIT" python3 tests/interop/dgram/stream_transports.py "${CAPI_LIB:-target/release/capi/libzmq.so.5}" libzmq skips > "$TMP/log" 2>&1
report "oxmq runs them raw as libzmq does" $? "$TMP/log"
if [ -z "${py_lib:-}" ]; then
    py_lib=$(pyzmq_libzmq)
fi
if [ -z "$py_lib" ]; then
    skip "libzmq 4.3.5 (pyzmq) runs them raw" "pyzmq's bundled libzmq not found"
else
    timeout -k 5 "$LIMIT" python3 tests/interop/dgram/stream_transports.py "$py_lib" libzmq > "$TMP/log" 2>&1
    report "libzmq 4.3.5 (pyzmq) runs them raw" $? "$TMP/log"
fi
sys_lib=$(system_libzmq)
if [ -z "$sys_lib" ]; then
    skip "Debian libzmq runs them raw" "no system libzmq.so.5"
else
    timeout -k 5 "$LIMIT" python3 tests/interop/dgram/stream_transports.py "$sys_lib" libzmq > "$TMP/log" 2>&1
    report "Debian libzmq $(pkg-config --modversion libzmq 2>/dev/null) runs them raw" $? "$TMP/log"
fi

runner_finish dgram
