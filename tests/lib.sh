# Shared by the interop runners (tests/interop/dgram/run.sh, tests/interop/radio_dish/run.sh),
# sourced from the repository root: where the C test programs and npm's
# zeromq live, a scratch directory, PASS/FAIL bookkeeping and the peers both
# look for. A peer that cannot be installed (node, npm's zeromq) is a FAIL:
# `make test` installs node and npm, and npm's registry is reachable. What
# cannot run here is a SKIP with the reason, recorded in $OXMQ_SKIP_LOG for
# the summary at the end of `make test`.
set -u
BIN=${CAPI_BIN:-target/capi-tests}
# npm's zeromq: one install under target/, shared by the RADIO/DISH and DGRAM steps.
NPM_DIR=${RADIO_NPM_DIR:-target/radio-dish-npm}
LIMIT=40
passes=0
failures=0

# A scratch $TMP, removed on exit along with a background peer left in $spid.
runner_start() { # tmp-name
    STEP=$1
    TMP=$(mktemp -d "/tmp/oxmq-$1.XXXXXX")
    trap 'rm -rf "$TMP"; [ -n "${spid:-}" ] && kill "$spid" 2>/dev/null' EXIT
}

report() { # name status log
    # A program that exits 0 after printing SKIP did not pass: it is a skip.
    if [ "$2" -eq 0 ] && tail -1 "$3" | grep -q '^SKIP'; then
        skip "$1" "$(tail -1 "$3" | sed 's/^SKIP[^:]*: *//')"
        return
    fi
    if [ "$2" -eq 0 ]; then
        passes=$((passes + 1))
        echo "PASS $1  -- $(tail -1 "$3")"
    else
        failures=$((failures + 1))
        echo "FAIL $1"
        tail -15 "$3" | sed 's/^/    /'
    fi
}

skip() { # what reason
    echo "SKIP $1: $2"
    if [ -n "${OXMQ_SKIP_LOG:-}" ]; then echo "${STEP:-tests/lib.sh}: $1: $2" >> "$OXMQ_SKIP_LOG"; fi
}

# A port on loopback free for both tcp and udp at this moment. The kernel
# picks it for a tcp listener (bind(0) hands out ports that no tcp socket,
# listening or connected, holds), and it is kept only if udp has it free too:
# a udp-only pick once collided with a live tcp connection's port when a ws
# cell bound it (EADDRINUSE under CI's load).
port() {
    python3 -c '
import socket
for _ in range(100):
    t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    t.bind(("127.0.0.1", 0))
    p = t.getsockname()[1]
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        u.bind(("127.0.0.1", p))
    except OSError:
        continue
    finally:
        t.close()
        u.close()
    print(p)
    break
else:
    raise SystemExit("no port free for both tcp and udp")
'
}

# The system's libzmq.so.5 (Debian's), or nothing.
system_libzmq() {
    ldconfig -p | awk '$1 == "libzmq.so.5" && !f {print $NF; f = 1}'
}

# npm's zeromq 6 (libzmq 4.3.5 with drafts), installed into $NPM_DIR on first
# use. Succeeds when it loads with draft sockets; otherwise counts a FAIL
# (the cells that need it are then not run).
npm_zeromq_drafts() {
    local why=""
    if ! command -v node > /dev/null || ! command -v npm > /dev/null; then
        why="node/npm not installed here (make deb-deps installs them)"
    elif ! { [ -d "$NPM_DIR/node_modules/zeromq" ] ||
        timeout 300 npm install --silent --no-audit --no-fund --ignore-scripts --prefix "$NPM_DIR" zeromq@6 > "$TMP/npm.log" 2>&1; }; then
        rm -rf "$NPM_DIR/node_modules/zeromq"
        why="npm install zeromq@6 failed: $(tail -1 "$TMP/npm.log")"
    elif ! NODE_PATH="$NPM_DIR/node_modules" node -e 'process.exit(require("zeromq").capability.draft ? 0 : 1)' 2> /dev/null; then
        why="npm's zeromq does not load here, or was built without draft sockets"
    else
        return 0
    fi
    failures=$((failures + 1))
    echo "FAIL libzmq 4.3.5 with drafts (npm zeromq 6): $why"
    return 1
}

runner_finish() { # name
    echo "== $1: $passes passed, $failures failed"
    [ "$failures" -eq 0 ]
}
