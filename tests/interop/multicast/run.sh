#!/usr/bin/env bash
# The multicast interop tests (mk/interop/multicast.mk): pgm://, epgm:// and norm://
# between oxmq's libzmq.so.5 and Debian's libzmq5 (linked with libpgm-5.3
# and libnorm), both ways, and oxmq with itself, over the loopback interface
# of a network namespace made here (multicast on, a route for 224.0.0.0/4;
# the machine's own interfaces are never used) and removed on exit.
#
#   run.sh MCPEER OXMQ_LIB_DIR
#
# MCPEER is tests/interop/multicast/mcpeer.c built against Debian's libzmq; it runs on
# Debian's library as it is, and on oxmq's with LD_LIBRARY_PATH=OXMQ_LIB_DIR.
set -euo pipefail

PEER=$(realpath "${1:?usage: run.sh MCPEER OXMQ_LIB_DIR}")
OXMQ=$(realpath "${2:?usage: run.sh MCPEER OXMQ_LIB_DIR}")
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
NS=oxmq-mc-$$
TMP=$(mktemp -d)
cleanup() {
    for pid in $($SUDO ip netns pids "$NS" 2>/dev/null); do $SUDO kill "$pid" 2>/dev/null || true; done
    $SUDO ip netns del "$NS" 2>/dev/null || true
    rm -rf "$TMP"
}
trap cleanup EXIT

$SUDO ip netns add "$NS"
$SUDO ip netns exec "$NS" ip link set lo up
$SUDO ip netns exec "$NS" ip link set lo multicast on
$SUDO ip netns exec "$NS" ip route add 224.0.0.0/4 dev lo
echo "==> network namespace $NS: lo up, multicast on, 224.0.0.0/4 via lo"

# OpenPGM warns that lo is a loopback device (expected here), on stdout or
# stderr and not always at a line start: the warning is cut out, and the
# lines it leaves empty dropped.
quiet() { sed 's/Warn: Interface lo reports as a loopback device\.//g' | grep -v '^$' || true; }
# in_ns LIB CMD...: run in the namespace on Debian's libzmq ("debian") or oxmq's ("oxmq").
in_ns() {
    local lib=$1; shift
    local ld=""; [ "$lib" = oxmq ] && ld=$OXMQ
    $SUDO ip netns exec "$NS" env LD_LIBRARY_PATH="$ld" "$@"
}

fails=0
passed=0
lines=()

# Which library each side runs: oxmq's zmq_version is 4.3.5, Debian's 4.3.4.
v_debian=$(in_ns debian "$PEER" version)
v_oxmq=$(in_ns oxmq "$PEER" version)
echo "==> peers: Debian's libzmq $v_debian, oxmq's libzmq.so.5 (zmq_version $v_oxmq)"
[ "$v_debian" != "$v_oxmq" ] || { echo "FAIL: both sides run the same library ($v_debian)"; exit 1; }

echo "==> errors: zmq_has, socket types, bad endpoints, LAST_ENDPOINT (oxmq's transcript vs Debian libzmq's)"
in_ns debian "$PEER" errors 127.0.0.1 2>"$TMP/errors.debian.err" | quiet >"$TMP/errors.debian"
in_ns oxmq "$PEER" errors 127.0.0.1 2>"$TMP/errors.oxmq.err" | quiet >"$TMP/errors.oxmq"
if diff "$TMP/errors.debian" "$TMP/errors.oxmq"; then
    echo "    $(wc -l <"$TMP/errors.oxmq") lines: same answers"; passed=$((passed + 1))
else
    echo "    FAIL: the transcripts differ (< Debian libzmq, > oxmq)"; fails=$((fails + 1))
fi
echo "==> errors only oxmq answers (libzmq: a stale errno, an assertion, or TIPC, which this kernel lacks)"
in_ns oxmq "$PEER" errors-extra 127.0.0.1 2>"$TMP/extra.oxmq.err" | quiet >"$TMP/extra.oxmq"
sed 's/^/    /' "$TMP/extra.oxmq"
want_tipc=$(grep -c '^\(SUB\|PUB\) *tipc:.*connect -1 Protocol not supported *bind -1 Protocol not supported$' "$TMP/extra.oxmq" || true)
want_einval=$(grep -c '^\(SUB\|PUB\) *\(e\?pgm\|norm\):.*connect -1 Invalid argument *bind -1 Invalid argument$' "$TMP/extra.oxmq" || true)
if grep -qx 'zmq_has(tipc) = 0' "$TMP/extra.oxmq" && [ "$want_tipc" = 2 ] && [ "$want_einval" = 10 ]; then
    echo "    tipc: EPROTONOSUPPORT and zmq_has 0; 5 bad multicast addresses on SUB and PUB: EINVAL"; passed=$((passed + 1))
else
    echo "    FAIL: expected zmq_has(tipc) 0, 2 tipc lines with EPROTONOSUPPORT, 10 with EINVAL"; fails=$((fails + 1))
fi

echo "==> without libpgm and libnorm (a mount namespace puts /dev/null over both): oxmq starts, zmq_has 0, EPROTONOSUPPORT"
# The files the dynamic loader finds for the two sonames; bind-mounting an
# empty file over them makes dlopen fail as on a machine without them
# (Debian's libzmq5, linked with them, would not even start there).
pgm_so=$(realpath "$(ldconfig -p | awk '$1 == "libpgm-5.3.so.0" {print $NF; exit}')")
norm_so=$(realpath "$(ldconfig -p | awk '$1 == "libnorm.so.1" {print $NF; exit}')")
nolib_rc=0
$SUDO unshare --mount --propagation private -- bash -c \
    'mount --bind /dev/null "$1" && mount --bind /dev/null "$2" && LD_LIBRARY_PATH="$3" exec "$4" no-libraries 127.0.0.1' \
    _ "$pgm_so" "$norm_so" "$OXMQ" "$PEER" >"$TMP/nolib.out" 2>"$TMP/nolib.err" || nolib_rc=$?
sed 's/^/    /' "$TMP/nolib.out"
want_nolib=$(grep -c '^\(SUB\|PUB\|REQ\) *\(e\?pgm\|norm\):.*connect -1 Protocol not supported *bind -1 Protocol not supported$' "$TMP/nolib.out" || true)
if [ "$nolib_rc" = 0 ] && [ ! -s "$TMP/nolib.err" ] && grep -qx 'zmq_has(pgm) = 0' "$TMP/nolib.out" \
    && grep -qx 'zmq_has(norm) = 0' "$TMP/nolib.out" && [ "$want_nolib" = 9 ] \
    && grep -qx 'PUB bind tcp://127.0.0.1:\* 0' "$TMP/nolib.out"; then
    echo "    zmq_has 0 for both; 9 endpoints (SUB, PUB, REQ): EPROTONOSUPPORT; tcp binds"; passed=$((passed + 1))
else
    echo "    FAIL: exit $nolib_rc, $want_nolib of 9 EPROTONOSUPPORT lines; stderr: $(head -3 "$TMP/nolib.err" | tr '\n' ' ')"
    fails=$((fails + 1))
fi

echo "==> pgm:// without CAP_NET_RAW (setpriv drops it): oxmq's bind fails with EPERM (libzmq aborts in its I/O thread)"
in_ns oxmq setpriv --bounding-set=-net_raw --inh-caps=-net_raw timeout 10 "$PEER" sub "pgm://127.0.0.1;239.192.9.9:5599" 1 100 \
    >"$TMP/noraw.out" 2>"$TMP/noraw.err" || true
if grep -q 'sub bind pgm://127.0.0.1;239.192.9.9:5599: Operation not permitted' "$TMP/noraw.err"; then
    echo "    EPERM"; passed=$((passed + 1))
else
    echo "    FAIL: $(quiet <"$TMP/noraw.err" | tail -2 | tr '\n' ' ')"; fails=$((fails + 1))
fi

# case PROTO N PUB_LIB PUB_KIND SUB_LIB SUB_KIND: a subscriber binds, a
# publisher sends for 4 s; the subscriber must take 15 whole messages.
# (A multicast subscriber joins mid-stream, so the publisher keeps sending
# while the subscriber starts; 15 at 50/s leaves room for a loaded machine.)
run_case() {
    local proto=$1 n=$2 publib=$3 pubkind=$4 sublib=$5 subkind=$6
    local ep="$proto://127.0.0.1;239.192.77.$n:$((5700 + n))"
    [ "$proto" = norm ] && ep="norm://lo;239.192.77.$n:$((5700 + n))"
    local name
    name=$(printf '%-5s %-4s %-6s -> %-4s %-6s' "$proto" "$pubkind" "$publib" "$subkind" "$sublib")
    in_ns "$sublib" timeout 30 "$PEER" "$subkind" "$ep" 15 20000 >"$TMP/sub.out" 2>"$TMP/sub.err" &
    local sub=$!
    sleep 0.5
    in_ns "$publib" timeout 30 "$PEER" "$pubkind" "$ep" 4000 2>&1 | quiet >"$TMP/pub.err" || true
    if wait "$sub"; then
        lines+=("    ok    $name: $(quiet <"$TMP/sub.out")"); passed=$((passed + 1))
    else
        lines+=("    FAIL  $name: $(quiet <"$TMP/sub.out") $(quiet <"$TMP/sub.err" | head -3 | tr '\n' ' ') $(head -3 "$TMP/pub.err" | tr '\n' ' ')")
        fails=$((fails + 1))
    fi
    echo "${lines[-1]}"
}

echo "==> PUB -> SUB (and XPUB -> XSUB) across processes; Debian libzmq with itself as the control"
n=0
for proto in epgm pgm norm; do
    for pair in "debian debian" "oxmq debian" "debian oxmq" "oxmq oxmq"; do
        set -- $pair
        n=$((n + 1)); run_case "$proto" "$n" "$1" pub "$2" sub
    done
    n=$((n + 1)); run_case "$proto" "$n" oxmq xpub debian xsub
    n=$((n + 1)); run_case "$proto" "$n" debian xpub oxmq xsub
done

echo "==> multicast: $passed passed, $fails failed"
[ "$fails" -eq 0 ]
