#!/usr/bin/env bash
# Draft RADIO/DISH through the C API, and interop with real libzmq:
#  - tests/interop/capi/radio_dish (oxmq): groups, libzmq's errors, tcp/ipc/inproc/udp;
#  - Debian's libzmq 4.3.4 RADIO (created by number; it exports no draft
#    functions, so its messages have no group) -> oxmq DISH over udp. Over
#    tcp/ipc that build aborts in its own handshake (its socket-type name
#    table stops at STREAM), so udp is the only transport it can serve;
#  - libzmq 4.3.5 built with drafts (npm `zeromq` 6, installed here at test
#    time under target/) both ways over tcp, ipc, udp and udp multicast on lo.
# npm's zeromq that cannot be installed is a failure (tests/lib.sh); what
# cannot run here is a SKIP with the reason, in make test's summary.
cd "$(dirname "$0")/../../.."
. tests/lib.sh
runner_start radio

# A streaming RADIO in the background, a DISH in the foreground that must
# receive; the RADIO is stopped when the DISH is done.
pair() { # name radio-command... -- dish-command...
    local name=$1 radio=() dish=()
    shift
    while [ "$1" != "--" ]; do radio+=("$1"); shift; done
    shift
    dish=("$@")
    timeout -k 5 "$LIMIT" "${radio[@]}" > "$TMP/radio.log" 2>&1 &
    spid=$!
    timeout -k 5 "$LIMIT" "${dish[@]}" > "$TMP/dish.log" 2>&1
    local rc=$?
    kill "$spid" 2>/dev/null
    wait "$spid" 2>/dev/null
    spid=
    cat "$TMP/radio.log" "$TMP/dish.log" > "$TMP/log"
    report "$name" $rc "$TMP/log"
}

echo "== draft RADIO/DISH: C API on oxmq"
timeout -k 5 "$LIMIT" "$BIN/radio_dish" self > "$TMP/log" 2>&1
report "radio_dish self (groups, errors, tcp/ipc/inproc/udp)" $? "$TMP/log"
timeout -k 5 "$LIMIT" "$BIN/radio_dish.libzmq" self > "$TMP/log" 2>&1
report "radio_dish self on Debian libzmq" $? "$TMP/log"

echo "== draft RADIO/DISH: every option on RADIO/DISH, oxmq vs Debian libzmq"
sys_lib=$(system_libzmq)
if [ -z "${OPTDUMP:-}" ] || [ -z "$sys_lib" ]; then
    skip "options on RADIO/DISH" "no optdump or no system libzmq.so.5"
else
    "$OPTDUMP" "${CAPI_LIB:-target/release/capi/libzmq.so.5}" > "$TMP/ox.txt" 2> /dev/null
    "$OPTDUMP" "$sys_lib" > "$TMP/deb.txt" 2> /dev/null
    # Debian's build has GSSAPI (62-65, 90-91) and VMCI (116); oxmq answers as a build without them.
    python3 tests/options/compare.py "$TMP/ox.txt" "$TMP/deb.txt" --types 14-15 --build-differs 62,63,64,65,90,91,116 \
        --name "Debian libzmq $(pkg-config --modversion libzmq 2>/dev/null), types 14-15" > "$TMP/log" 2>&1
    report "options on RADIO/DISH" $? "$TMP/log"
fi

echo "== draft RADIO/DISH: Debian libzmq $(pkg-config --modversion libzmq 2>/dev/null) RADIO (by number, no groups) -> oxmq DISH"
ep="udp://127.0.0.1:$(port)"
pair "udp: Debian libzmq RADIO -> oxmq DISH" "$BIN/radio_dish.libzmq" radio "$ep" -- "$BIN/radio_dish" dish "$ep" ""

echo "== draft RADIO/DISH: libzmq 4.3.5 with drafts (npm zeromq 6) <-> oxmq"
if npm_zeromq_drafts; then
    # exec: the runner stops a peer by signalling it, not a shell around it.
    node_peer() { NODE_PATH="$NPM_DIR/node_modules" exec node tests/interop/radio_dish/peer.js "$@"; }
    export -f node_peer
    export NPM_DIR
    # A fresh endpoint per cell: the previous cell's peer may still hold its
    # port for a moment after it is stopped (node behind bash -c).
    endpoint() {
        case $1 in
            tcp) echo "tcp://127.0.0.1:$(port)" ;;
            ipc) rm -f "$TMP/radio-dish.ipc"; echo "ipc://$TMP/radio-dish.ipc" ;;
            udp) echo "udp://127.0.0.1:$(port)" ;;
            mcast) echo "udp://127.0.0.1;239.193.9.$((RANDOM % 200 + 1)):$(port)" ;;
        esac
    }
    for t in tcp ipc udp mcast; do
        ep=$(endpoint $t)
        pair "$t: libzmq RADIO -> oxmq DISH" bash -c 'node_peer radio "$0" G' "$ep" -- "$BIN/radio_dish" dish "$ep" G
        ep=$(endpoint $t)
        pair "$t: oxmq RADIO -> libzmq DISH" "$BIN/radio_dish" radio "$ep" -- bash -c 'node_peer dish "$0" G' "$ep"
    done
    rm -f "$TMP/radio-dish.ipc"
fi

runner_finish radio-dish
