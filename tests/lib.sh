# Shared by the interop runners (tests/dgram/run.sh, tests/radio_dish/run.sh),
# sourced from the repository root: where the C test programs and npm's
# zeromq live, a scratch directory, PASS/FAIL bookkeeping and the peers both
# look for. A peer that cannot be installed is a SKIP with the reason.
set -u
BIN=${CAPI_BIN:-target/capi-tests}
# npm's zeromq: one install under target/, shared by the RADIO/DISH and DGRAM steps.
NPM_DIR=${RADIO_NPM_DIR:-target/radio-dish-npm}
LIMIT=40
passes=0
failures=0

# A scratch $TMP, removed on exit along with a background peer left in $spid.
runner_start() { # tmp-name
    TMP=$(mktemp -d "/tmp/oxmq-$1.XXXXXX")
    trap 'rm -rf "$TMP"; [ -n "${spid:-}" ] && kill "$spid" 2>/dev/null' EXIT
}

report() { # name status log
    if [ "$2" -eq 0 ]; then
        passes=$((passes + 1))
        echo "PASS $1  -- $(tail -1 "$3")"
    else
        failures=$((failures + 1))
        echo "FAIL $1"
        tail -15 "$3" | sed 's/^/    /'
    fi
}

# A free UDP port on loopback (also free for tcp often enough for these cells).
port() {
    python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The system's libzmq.so.5 (Debian's), or nothing.
system_libzmq() {
    ldconfig -p | awk '$1 == "libzmq.so.5" && !f {print $NF; f = 1}'
}

# npm's zeromq 6 (libzmq 4.3.5 with drafts), installed into $NPM_DIR on first
# use. Succeeds when it loads with draft sockets; otherwise prints the SKIP.
npm_zeromq_drafts() {
    if ! command -v node > /dev/null || ! command -v npm > /dev/null; then
        echo "SKIP: node/npm not installed here"
    elif ! { [ -d "$NPM_DIR/node_modules/zeromq" ] ||
        timeout 300 npm install --silent --no-audit --no-fund --ignore-scripts --prefix "$NPM_DIR" zeromq@6 > "$TMP/npm.log" 2>&1; }; then
        echo "SKIP: npm install zeromq@6 failed here: $(tail -1 "$TMP/npm.log")"
    elif ! NODE_PATH="$NPM_DIR/node_modules" node -e 'process.exit(require("zeromq").capability.draft ? 0 : 1)' 2> /dev/null; then
        echo "SKIP: npm's zeromq does not load here, or was built without draft sockets"
    else
        return 0
    fi
    return 1
}

runner_finish() { # name
    echo "== $1: $passes passed, $failures failed"
    [ "$failures" -eq 0 ]
}
