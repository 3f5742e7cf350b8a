#!/usr/bin/env bash
# ZMQ_GSSAPI between oxmq and Debian's libzmq5 (linked with MIT krb5), with a
# real MIT Kerberos KDC started here on a throwaway realm under $GSS_DIR.
# Nothing under /etc is read or written: KRB5_CONFIG and KRB5_KDC_PROFILE
# point at files made here, keytabs and the database live in $GSS_DIR, and
# the KDC (on a free loopback port) is killed on exit.
#
#   GSS_PEER=target/gssapi/gss_peer OXMQ_LIB_DIR=target/release/capi tests/interop/gssapi/run.sh
set -euo pipefail

GSS_PEER=${GSS_PEER:?path to the gss_peer program}
OXMQ_LIB_DIR=${OXMQ_LIB_DIR:?directory holding oxmq libzmq.so.5}
GSS_DIR=${GSS_DIR:-target/gssapi}
REALM=OXMQ.TEST
SERVICE=zmqtest/localhost@$REALM
CLIENT=client@$REALM

GSS_DIR=$(mkdir -p "$GSS_DIR" && cd "$GSS_DIR" && pwd)
REALM_DIR=$GSS_DIR/realm
rm -rf "$REALM_DIR" "$GSS_DIR"/[0-9]*-*
mkdir -p "$REALM_DIR/rcache"

# A free loopback port for the KDC (UDP and TCP on the same number).
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

cat > "$REALM_DIR/krb5.conf" <<EOF
[libdefaults]
    default_realm = $REALM
    dns_lookup_kdc = false
    dns_lookup_realm = false
    dns_canonicalize_hostname = false
    rdns = false
    udp_preference_limit = 1
[realms]
    $REALM = {
        kdc = 127.0.0.1:$PORT
    }
EOF
cat > "$REALM_DIR/kdc.conf" <<EOF
[kdcdefaults]
    kdc_ports = $PORT
    kdc_tcp_ports = $PORT
[realms]
    $REALM = {
        database_name = $REALM_DIR/principal
        key_stash_file = $REALM_DIR/stash
        acl_file = $REALM_DIR/kadm5.acl
        kdc_listen = 127.0.0.1:$PORT
        kdc_tcp_listen = 127.0.0.1:$PORT
    }
[logging]
    kdc = FILE:$REALM_DIR/kdc.log
    admin_server = FILE:$REALM_DIR/kadmin.log
    default = FILE:$REALM_DIR/krb5.log
EOF
: > "$REALM_DIR/kadm5.acl"

export KRB5_CONFIG=$REALM_DIR/krb5.conf
export KRB5_KDC_PROFILE=$REALM_DIR/kdc.conf
export KRB5RCACHEDIR=$REALM_DIR/rcache
export KRB5_TRACE=$REALM_DIR/trace.log

echo "== realm $REALM under $REALM_DIR, KDC on 127.0.0.1:$PORT"
kdb5_util create -s -r "$REALM" -P "throwaway-$$-$RANDOM" > "$REALM_DIR/kdb5_util.log" 2>&1
kadmin() { kadmin.local -r "$REALM" -q "$1" >> "$REALM_DIR/kadmin-cmds.log" 2>&1; }
kadmin "addprinc -randkey $CLIENT"
kadmin "addprinc -randkey $SERVICE"
kadmin "ktadd -k $REALM_DIR/client.keytab $CLIENT"
# The first service keytab goes stale when the second ktadd draws new keys:
# a server on it holds the wrong key (kvno 2, the KDC issues 3).
kadmin "ktadd -k $REALM_DIR/stale-service.keytab $SERVICE"
kadmin "ktadd -k $REALM_DIR/service.keytab $SERVICE"

krb5kdc -n -r "$REALM" -P "$REALM_DIR/kdc.pid" > "$REALM_DIR/kdc.out" 2>&1 &
KDC_PID=$!
cleanup() {
    kill "$KDC_PID" 2> /dev/null || true
    wait "$KDC_PID" 2> /dev/null || true
}
trap cleanup EXIT
for _ in $(seq 50); do
    if python3 -c "import socket; socket.create_connection(('127.0.0.1', $PORT), 0.2)" 2> /dev/null; then break; fi
    kill -0 "$KDC_PID" 2> /dev/null || { cat "$REALM_DIR/kdc.out" "$REALM_DIR/kdc.log" >&2; exit 1; }
    sleep 0.1
done

DEB_LIB_DIR=$(dirname "$(ldconfig -p | awk '$1 == "libzmq.so.5" && !f {print $NF; f = 1}')")
lib_dir() { if [ "$1" = oxmq ]; then echo "$OXMQ_LIB_DIR"; else echo "$DEB_LIB_DIR"; fi; }

PASSED=0
FAILED=0
RUN=0
# run NAME SERVER_LIB CLIENT_LIB SERVER_ARGS CLIENT_ARGS [SERVICE_KEYTAB] [SERVICE_NAME]
run() {
    local name=$1 slib=$2 clib=$3 sargs=$4 cargs=$5 keytab=${6:-$REALM_DIR/service.keytab} service=${7:-$SERVICE}
    local log=$GSS_DIR/$RUN-${name// /_}
    RUN=$((RUN + 1))
    rm -f "$log.port"
    # shellcheck disable=SC2086
    # libzmq acquires credentials for both initiating and accepting
    # (GSS_C_BOTH), so each side's keytab serves as both of its keytabs.
    env LD_LIBRARY_PATH="$(lib_dir "$slib")" KRB5_KTNAME="FILE:$keytab" KRB5_CLIENT_KTNAME="FILE:$keytab" \
        KRB5CCNAME="MEMORY:server" \
        GSS_SERVICE_PRINCIPAL="$SERVICE" "$GSS_PEER" server "$log.port" $sargs > "$log.server" 2>&1 &
    local spid=$!
    for _ in $(seq 100); do [ -s "$log.port" ] && break; sleep 0.05; done
    local crc=0 src=0
    # shellcheck disable=SC2086
    env LD_LIBRARY_PATH="$(lib_dir "$clib")" KRB5_CLIENT_KTNAME="FILE:$REALM_DIR/client.keytab" \
        KRB5_KTNAME="FILE:$REALM_DIR/client.keytab" \
        KRB5CCNAME="MEMORY:client" GSS_CLIENT_PRINCIPAL="$CLIENT" \
        timeout 60 "$GSS_PEER" client "$(cat "$log.port" 2> /dev/null || echo 1)" "$service" $cargs > "$log.client" 2>&1 || crc=$?
    wait "$spid" || src=$?
    if [ "$crc" = 0 ] && [ "$src" = 0 ] && check_libs "$log" "$slib" "$clib"; then
        PASSED=$((PASSED + 1))
        printf '  PASS  %-58s %s\n' "$name" "$(summary "$log")"
    else
        FAILED=$((FAILED + 1))
        printf '  FAIL  %-58s (client rc %s, server rc %s)\n' "$name" "$crc" "$src"
        sed 's/^/        server| /' "$log.server"
        sed 's/^/        client| /' "$log.client"
    fi
}

# Each side really ran on the library it was meant to: oxmq says 4.3.5, Debian's 4.3.4.
check_libs() {
    local want_s want_c
    want_s=$([ "$2" = oxmq ] && echo "4.3.5" || echo "4.3.4")
    want_c=$([ "$3" = oxmq ] && echo "4.3.5" || echo "4.3.4")
    grep -q "^server: libzmq $want_s, has gssapi 1" "$1.server" && grep -q "^client: libzmq $want_c, has gssapi 1" "$1.client"
}

# What the run showed: the reply, the ZAP credential, the failure events.
summary() {
    local got zap events
    got=$(grep -ho 'client: got .*\|client: no reply.*' "$1.client" | head -1)
    zap=$(grep -ho 'credential=.*' "$1.server" | head -1)
    events=$(grep -h '^event HANDSHAKE_FAILED' "$1.server" "$1.client" | sed 's/^event //' | sort -u | tr '\n' ' ')
    echo "$got${zap:+, zap $zap}${events:+, events: $events}"
}

echo "== GSSAPI: oxmq and Debian's libzmq $(pkg-config --modversion libzmq 2>/dev/null), client/server"
for pair in "oxmq libzmq" "libzmq oxmq" "oxmq oxmq" "libzmq libzmq"; do
    set -- $pair
    s=$1 c=$2
    run "encrypted: server $s, client $c" "$s" "$c" "" ""
    run "GSSAPI_PLAINTEXT: server $s, client $c" "$s" "$c" "plaintext" "plaintext"
    run "ZAP sees the principal: server $s, client $c" "$s" "$c" "zap" ""
    run "host-based service name: server $s, client $c" "$s" "$c" "" "hostbased" \
        "$REALM_DIR/service.keytab" "zmqtest@localhost"
done

echo "== failures: the handshake fails, both processes live, nothing passes; each side's"
echo "   handshake-failure event types are those of the same side in the libzmq-libzmq run"
# Which HANDSHAKE_FAILED_* event types a side's monitor saw (values vary: see below).
event_types() { grep -ho '^event HANDSHAKE_FAILED_[A-Z_]*' "$1" | sort -u | tr '\n' ' '; }
fail_case() {
    local what=$1 keytab=$2 service=$3 ref
    for pair in "libzmq libzmq" "oxmq libzmq" "libzmq oxmq" "oxmq oxmq"; do
        set -- $pair
        run "$what: server $1, client $2" "$1" "$2" "expect-fail" "expect-fail" "$keytab" "$service"
        local log=$GSS_DIR/$((RUN - 1))-${what// /_}:_server_$1,_client_$2
        if [ "$pair" = "libzmq libzmq" ]; then
            ref="server: $(event_types "$log.server")client: $(event_types "$log.client")"
            continue
        fi
        local got="server: $(event_types "$log.server")client: $(event_types "$log.client")"
        if [ -z "$(event_types "$log.server")" ] || [ -z "$(event_types "$log.client")" ] || [ "$got" != "$ref" ]; then
            FAILED=$((FAILED + 1))
            PASSED=$((PASSED - 1))
            echo "  FAIL  events differ from libzmq's: $got (libzmq: $ref)"
        fi
    done
}
fail_case "unknown service principal" "$REALM_DIR/service.keytab" "nosuch/localhost@$REALM"
fail_case "stale service keytab" "$REALM_DIR/stale-service.keytab" "$SERVICE"
# Deliberately unlike libzmq 4.3, whose GSSAPI server reports a ZAP refusal
# and admits the client all the same (measured here): oxmq's refuses it.
run "libzmq admits what its ZAP refused: server libzmq, client libzmq" libzmq libzmq "zap-deny" ""
for c in libzmq oxmq; do
    run "ZAP refuses (400): server oxmq, client $c" oxmq "$c" "zap-deny expect-fail" "expect-fail"
    log="$GSS_DIR/$((RUN - 1))-ZAP_refuses_(400):_server_oxmq,_client_$c"
    if ! grep -q '^event HANDSHAKE_FAILED_AUTH 400$' "$log.server"; then
        FAILED=$((FAILED + 1))
        PASSED=$((PASSED - 1))
        echo "  FAIL  the oxmq server did not report HANDSHAKE_FAILED_AUTH 400"
    fi
done
# The events' values are the errno each library's I/O thread holds when its
# handshake timer fires (libzmq: 0 or 11 here, EAGAIN for oxmq's failing
# side; ETIMEDOUT for an oxmq side left waiting) or EPIPE for the side whose
# peer gave up: printed above, not compared.

# libzmq's own tests/test_security_gssapi (built by `make libzmq-suite`, whose
# CMake libzmq has no GSSAPI, so it runs on Debian's libzmq5 as the reference):
# it wants a host-based service zmqtest2@<this host> and one keytab for both roles.
if [ -n "${LIBZMQ_GSSAPI_TEST:-}" ] && [ -x "$LIBZMQ_GSSAPI_TEST" ]; then
    echo "== libzmq's own $(basename "$LIBZMQ_GSSAPI_TEST") (zmqtest2/$(hostname)@$REALM)"
    kadmin "addprinc -randkey zmqtest2/$(hostname)@$REALM"
    kadmin "ktadd -k $REALM_DIR/zmqtest2.keytab zmqtest2/$(hostname)@$REALM"
    for lib in libzmq oxmq; do
        log=$GSS_DIR/libzmq-test-$lib.log
        rc=0
        # The program sets KRB5CCNAME=MEMORY, which MIT reads as a file named
        # MEMORY in the working directory: give each run a fresh one.
        mkdir -p "$REALM_DIR/cwd-$lib"
        (cd "$REALM_DIR/cwd-$lib" && env LD_LIBRARY_PATH="$(lib_dir "$lib")" \
            KRB5_KTNAME="FILE:$REALM_DIR/zmqtest2.keytab" KRB5_CLIENT_KTNAME="FILE:$REALM_DIR/zmqtest2.keytab" \
            timeout 120 "$LIBZMQ_GSSAPI_TEST") > "$log" 2>&1 || rc=$?
        verdict=$(grep -E '^[0-9]+ Tests [0-9]+ Failures [0-9]+ Ignored' "$log" || echo "no verdict (rc $rc)")
        failing=$( (grep -o ':[a-z_]*:FAIL' "$log" || true) | tr -d ':' | sed 's/FAIL$//' | sort -u | tr '\n' ' ')
        if [ "$lib" = libzmq ]; then
            # The reference is not held to it: Debian's libzmq fails
            # test_unauth_creds (its GSSAPI server admits a client its ZAP
            # handler refused, as the ZAP refusal runs above show), and then
            # sometimes stalls until the program's alarm.
            echo "  INFO  on Debian's libzmq (reference): $verdict${failing:+, failing: $failing}"
            continue
        fi
        RUN=$((RUN + 1))
        if [ "$rc" = 0 ] && grep -q '^[0-9]* Tests 0 Failures 0 Ignored' "$log"; then
            PASSED=$((PASSED + 1))
            printf '  PASS  %-58s %s\n' "on oxmq: every case" "$verdict"
        else
            FAILED=$((FAILED + 1))
            printf '  FAIL  %-58s %s\n' "on oxmq" "$verdict"
            grep -E ':(FAIL|IGNORE)' "$log" | sed 's/^/        /'
        fi
    done
else
    skip_msg="libzmq's own test_security_gssapi: not built (make libzmq-suite builds it)"
    echo "SKIP $skip_msg"
    if [ -n "${OXMQ_SKIP_LOG:-}" ]; then echo "gssapi-test: $skip_msg" >> "$OXMQ_SKIP_LOG"; fi
fi

echo "gssapi: $PASSED of $RUN passed"
[ "$FAILED" = 0 ]
