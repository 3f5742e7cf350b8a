#!/usr/bin/env bash
# Draft sockets against a real libzmq with the draft API (issue 13): oxmq's
# CLIENT/SERVER, SCATTER/GATHER and CHANNEL against npm's zeromq v6 (its
# prebuilt libzmq 4.3.x is built with drafts), each side binding once, over
# tcp and ipc; plus oxmq PEER <-> oxmq PEER with zmq_connect_peer.
#
# Debian's libzmq 4.3.4 cannot be the peer: it creates these sockets by
# number, but its non-draft build has no ZMTP names for them and aborts in
# the handshake (mechanism.cpp assertion). zeromq.js has no PEER class and
# its generic socket cannot send with a routing id, so PEER is oxmq-only.
#
# Node/npm or the package missing is a failure (make test installs node and
# npm, and npm's registry is reachable); the cells that need them are then
# not run. usage: tests/interop/draft/interop.sh CAPI_BIN_DIR
set -u
cd "$(dirname "$0")/../../.."
BIN=${1:-target/capi-tests}
NODE_DIR=target/draft-node
LIMIT=30
TMP=$(mktemp -d /tmp/oxmq-draft.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
passes=0
failures=0

skip_all() {
    echo "FAIL draft interop with npm zeromq: $1"
    failures=$((failures + 1))
}

node_ok=1
if ! command -v node > /dev/null || ! command -v npm > /dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
        echo "==> apt-get install nodejs npm (for the zeromq.js draft peer)"
        DEBIAN_FRONTEND=noninteractive timeout 300 apt-get install -y -qq --no-install-recommends nodejs npm \
            > "$TMP/apt.log" 2>&1 || true
    fi
    if ! command -v node > /dev/null || ! command -v npm > /dev/null; then
        skip_all "node/npm not available ($(tail -1 "$TMP/apt.log" 2> /dev/null))"
        node_ok=0
    fi
fi
if [ "$node_ok" = 1 ] && [ ! -d "$NODE_DIR/node_modules/zeromq" ]; then
    mkdir -p "$NODE_DIR"
    echo "==> npm install zeromq@6.8.0 into $NODE_DIR"
    if ! (cd "$NODE_DIR" && echo '{"private":true}' > package.json \
        && timeout 300 npm install --no-audit --no-fund --loglevel=error zeromq@6.8.0) > "$TMP/npm.log" 2>&1; then
        skip_all "npm install zeromq@6.8.0 failed: $(grep -v '^[[:space:]]*$' "$TMP/npm.log" | head -2 | tr '\n' ' ')"
        rm -rf "$NODE_DIR/node_modules"
        node_ok=0
    fi
fi
if [ "$node_ok" = 1 ]; then
    cp tests/interop/draft/node_peer.js "$NODE_DIR/node_peer.js"
    if ! caps=$(cd "$NODE_DIR" && timeout 30 node -e 'const z=require("zeromq"); console.log(z.version, z.capability.draft)' 2>&1); then
        skip_all "zeromq.js does not load here: $(echo "$caps" | tail -1)"
        node_ok=0
    elif [ "${caps##* }" != true ]; then
        skip_all "zeromq.js's libzmq ($caps) has no draft API"
        node_ok=0
    else
        echo "== draft peer: npm zeromq 6.8.0, libzmq ${caps% *} with drafts"
    fi
fi

report() { # name status
    if [ "$2" -eq 0 ]; then
        passes=$((passes + 1))
        echo "PASS $1"
    else
        failures=$((failures + 1))
        echo "FAIL $1"
        sed 's/^/    /' "$TMP/log" | tail -20
    fi
}

# server command in the background, client in the foreground; both must pass.
pair() { # name server... -- client...
    local name=$1 server=() client=()
    shift
    while [ "$1" != "--" ]; do server+=("$1"); shift; done
    shift
    client=("$@")
    timeout -k 5 "$LIMIT" "${server[@]}" > "$TMP/s.log" 2>&1 &
    local spid=$!
    timeout -k 5 "$LIMIT" "${client[@]}" > "$TMP/c.log" 2>&1
    local crc=$?
    wait "$spid"
    local src=$?
    cat "$TMP/s.log" "$TMP/c.log" > "$TMP/log"
    report "$name" $((crc != 0 || src != 0))
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

OX="$BIN/draft_peer"
NODE=(node "$NODE_DIR/node_peer.js")
for transport in tcp ipc; do
    for roles in server-bind:client-connect gather-bind:scatter-connect channel-bind:channel-connect; do
        server=${roles%%:*}
        client=${roles##*:}
        for who in "oxmq:node" "node:oxmq"; do
            s_lib=${who%%:*}
            c_lib=${who##*:}
            if [ "$node_ok" = 0 ]; then
                echo "NOT RUN draft $transport: $s_lib $server <- $c_lib $client (no draft libzmq peer: the FAIL above)"
                continue
            fi
            if [ "$transport" = tcp ]; then ep="tcp://127.0.0.1:$(free_port)"; else ep="ipc://$TMP/$server-$s_lib.ipc"; fi
            if [ "$s_lib" = oxmq ]; then s_cmd=("$OX" "$server" "$ep"); else s_cmd=("${NODE[@]}" "$server" "$ep" 300); fi
            if [ "$c_lib" = oxmq ]; then c_cmd=("$OX" "$client" "$ep"); else c_cmd=("${NODE[@]}" "$client" "$ep" 300); fi
            pair "draft $transport: $s_lib $server <- $c_lib $client" "${s_cmd[@]}" -- "${c_cmd[@]}"
        done
    done
    if [ "$transport" = tcp ]; then ep="tcp://127.0.0.1:$(free_port)"; else ep="ipc://$TMP/peer.ipc"; fi
    pair "draft $transport: oxmq peer-bind <- oxmq peer-connect (zmq_connect_peer)" \
        "$OX" peer-bind "$ep" -- "$OX" peer-connect "$ep"
done
echo "== draft interop: $passes passed, $failures failed"
[ "$failures" -eq 0 ]
