# Shared by udp_drafts.sh and monitor_drafts.sh, sourced from the repository
# root after tests/lib.sh: libzmq 4.3.5's own tests built with the draft API
# from the suite's cache, against libzmq's own zmq.h, and run on oxmq's
# libzmq.so.5 only (the release libzmq built beside them exports no draft
# symbols). A failing case fails the step; an IGNORE is recorded as a skip
# with libzmq's reason.

# Where the suite's cache has libzmq's source and build, and the oxmq
# library to link to: sets SRC, BUILD, OUT (where the draft builds go) and LIB.
drafts_init() { # cache oxmq-lib-dir usage
    local cache
    cache=$(cd "${1:?usage: $3 CACHE OXMQ_LIB_DIR}" && pwd)
    LIB=$(cd "${2:?usage: $3 CACHE OXMQ_LIB_DIR}" && pwd)
    SRC=$(ls -d "$cache"/libzmq-4.3.5)
    OUT=$cache/drafts
    BUILD=$cache/build
    mkdir -p "$OUT"
}

# Compiles the test sources given with libzmq's test support files into
# $OUT/NAME, only when it is missing or a source, or anything in libzmq's
# tests/ (a source may include another test file), is newer.
draft_build() { # name source...
    local bin=$OUT/$1 src stale=""
    shift
    [ -x "$bin" ] || stale=1
    for src in "$@"; do
        if [ "$src" -nt "$bin" ]; then stale=1; fi
    done
    if [ -z "$stale" ] && [ -n "$(find "$SRC/tests" -newer "$bin" -print -quit)" ]; then stale=1; fi
    if [ -z "$stale" ]; then return 0; fi
    echo "==> g++ $* (ZMQ_BUILD_DRAFT_API) -> $bin"
    # The defines libzmq's CMake gives its tests (build/tests/.../flags.make).
    g++ -O1 -std=gnu++11 -DZMQ_BUILD_DRAFT_API=1 -DZMQ_CUSTOM_PLATFORM_HPP -D_GNU_SOURCE -D_REENTRANT \
        -D_THREAD_SAFE -DUNITY_EXCLUDE_FLOAT -DUNITY_USE_COMMAND_LINE_ARGS \
        -I"$BUILD" -I"$SRC/tests" -I"$SRC/include" -I"$SRC/external/unity" \
        -o "$bin.tmp" "$@" "$SRC/tests/testutil.cpp" "$SRC/tests/testutil_unity.cpp" \
        "$SRC/external/unity/unity.c" -L"$LIB" -lzmq -lpthread
    mv "$bin.tmp" "$bin"
}

# Runs $OUT/NAME, libzmq's TEST, on oxmq and reports its cases: fails
# (returns 1) when it loads another libzmq, exits non-zero, has a failing
# case or passes none.
draft_run() { # name test [note]
    local bin=$OUT/$1 test=$2 note=${3:+ ($3)} loaded log rc=0 line passed failed
    loaded=$(LD_LIBRARY_PATH=$LIB ldd "$bin" | awk '/libzmq/ {print $3}' | xargs -r readlink -f)
    if [ "$(dirname "${loaded:-/none/x}")" != "$(readlink -f "$LIB")" ]; then
        echo "FAIL: $bin loads ${loaded:-no libzmq}, not $LIB/libzmq.so.5"
        return 1
    fi
    log=$(mktemp)
    LD_LIBRARY_PATH=$LIB timeout 120 "$bin" > "$log" 2>&1 || rc=$?
    sed 's/^/    /' "$log"
    # Unity's lines are FILE:LINE:CASE:IGNORE: REASON. No IGNORE at all is
    # fine: grep's exit 1 for it must not fail the step under pipefail.
    while IFS= read -r line; do
        skip "libzmq $test (drafts) $(echo "$line" | cut -d: -f3)" "$(echo "$line" | cut -d: -f5- | sed 's/^ *//')"
    done < <(grep -E ':IGNORE' "$log" || true)
    passed=$(grep -c ':PASS' "$log" || true)
    failed=$(grep -c ':FAIL' "$log" || true)
    rm -f "$log"
    echo "libzmq $test with drafts: oxmq $passed passed, $failed failed$note"
    if [ "$rc" -ne 0 ] || [ "$failed" -ne 0 ] || [ "$passed" -eq 0 ]; then
        echo "FAIL: libzmq $test with drafts (exit $rc)"
        return 1
    fi
}
