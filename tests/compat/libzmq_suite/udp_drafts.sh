#!/usr/bin/env bash
# libzmq 4.3.5's own udp tests, test_radio_dish and test_dgram, on oxmq's
# libzmq.so.5. They need the draft API (RADIO, DISH, DGRAM, zmq_join), so
# `make libzmq-suite`, which builds libzmq without drafts, has neither: this
# builds their unmodified sources from the suite's cache with
# ZMQ_BUILD_DRAFT_API, against libzmq's own zmq.h, and links them to oxmq
# only (the release libzmq built beside them exports no draft symbols).
# Fails on any failing case; an IGNORE (no IPv6, no multicast here) is
# recorded as a skip with libzmq's reason.
#
#   usage: tests/compat/libzmq_suite/udp_drafts.sh CACHE OXMQ_LIB_DIR
set -euo pipefail
cd "$(dirname "$0")/../../.."
. tests/lib.sh
STEP=libzmq-udp-drafts
CACHE=$(cd "${1:?usage: udp_drafts.sh CACHE OXMQ_LIB_DIR}" && pwd)
LIB=$(cd "${2:?usage: udp_drafts.sh CACHE OXMQ_LIB_DIR}" && pwd)
SRC=$(ls -d "$CACHE"/libzmq-4.3.5)
OUT=$CACHE/drafts
mkdir -p "$OUT"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
for t in test_radio_dish test_dgram; do
    bin=$OUT/$t
    # Rebuilt only when libzmq's source is newer than the binary.
    if [ ! -x "$bin" ] || [ "$SRC/tests/$t.cpp" -nt "$bin" ]; then
        echo "==> g++ $SRC/tests/$t.cpp (ZMQ_BUILD_DRAFT_API) -> $bin"
        # The defines libzmq's CMake gives its tests (build/tests/.../flags.make).
        g++ -O1 -std=gnu++11 -DZMQ_BUILD_DRAFT_API=1 -DZMQ_CUSTOM_PLATFORM_HPP -D_GNU_SOURCE -D_REENTRANT \
            -D_THREAD_SAFE -DUNITY_EXCLUDE_FLOAT -DUNITY_USE_COMMAND_LINE_ARGS \
            -I"$CACHE/build" -I"$SRC/tests" -I"$SRC/include" -I"$SRC/external/unity" \
            -o "$bin.tmp" "$SRC/tests/$t.cpp" "$SRC/tests/testutil.cpp" \
            "$SRC/tests/testutil_unity.cpp" "$SRC/external/unity/unity.c" -L"$LIB" -lzmq -lpthread
        mv "$bin.tmp" "$bin"
    fi
    # The library it runs on must be oxmq's, not a libzmq found elsewhere.
    loaded=$(LD_LIBRARY_PATH=$LIB ldd "$bin" | awk '/libzmq/ {print $3}' | xargs -r readlink -f)
    if [ "$(dirname "$loaded")" != "$(readlink -f "$LIB")" ]; then
        echo "FAIL: $bin loads $loaded, not $LIB/libzmq.so.5"
        status=1
        continue
    fi
    rc=0
    LD_LIBRARY_PATH=$LIB timeout 120 "$bin" > "$log" 2>&1 || rc=$?
    sed 's/^/    /' "$log"
    { grep -E ':IGNORE' "$log" || true; } | while IFS= read -r line; do
        case=$(echo "$line" | cut -d: -f3)
        skip "libzmq $t (drafts) $case" "$(echo "$line" | cut -d: -f5- | sed 's/^ *//')"
    done
    passed=$(grep -c ':PASS' "$log" || true)
    failed=$(grep -c ':FAIL' "$log" || true)
    echo "libzmq $t with drafts: oxmq $passed passed, $failed failed"
    if [ "$rc" -ne 0 ] || [ "$failed" -ne 0 ] || [ "$passed" -eq 0 ]; then
        echo "FAIL: libzmq $t with drafts (exit $rc)"
        status=1
    fi
done
exit $status
