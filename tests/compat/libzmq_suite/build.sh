#!/usr/bin/env bash
# Fetch libzmq 4.3.5's source and build the library and its tests/ once, into
# the cache directory given as $1 (under target/, never committed). Cheap when
# already built: the stamp records the configuration, and a changed
# configuration rebuilds.
#
# The source comes from crates.io: the `zeromq-src` crate vendors libzmq's
# release tree, tests/ included (0.3.6+4.3.5 is libzmq 4.3.5, the version
# pyzmq's wheels and oxmq's zmq_version() carry). `cargo fetch` downloads it
# into cargo's registry cache; it is copied from there into $CACHE.
#
#   CURVE through libsodium, drafts off, no RPATH (so LD_LIBRARY_PATH picks the
#   library a test runs against), test_security_curve built (libzmq's CMake
#   adds it whenever CURVE is on).
set -euo pipefail

CACHE=${1:?usage: build.sh CACHE_DIR}
JOBS=${LIBZMQ_SUITE_JOBS:-2}
LIBZMQ_CRATE=zeromq-src
LIBZMQ_CRATE_VERSION=0.3.6+4.3.5
LIBZMQ_VERSION=${LIBZMQ_CRATE_VERSION#*+}
SRC_NAME=libzmq-$LIBZMQ_VERSION
mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd)

CMAKE_FLAGS=(
    -DCMAKE_BUILD_TYPE=Release
    -DENABLE_DRAFTS=OFF
    -DENABLE_CURVE=ON -DWITH_LIBSODIUM=ON
    -DCMAKE_SKIP_RPATH=ON
    -DBUILD_TESTS=ON -DBUILD_STATIC=OFF
    -DWITH_PERF_TOOL=OFF -DWITH_DOCS=OFF -DENABLE_CPACK=OFF
    # OpenPGM and NORM as Debian's libzmq5 has them (and oxmq: zmq_has and
    # test_capabilities); Debian ships OpenPGM 5.3, CMake looks for 5.2.
    -DWITH_OPENPGM=ON -DOPENPGM_PKGCONFIG_NAME=openpgm-5.3 -DWITH_NORM=ON
    -DWITH_VMCI=OFF
    # GSSAPI (MIT krb5) as Debian's libzmq5 has it: libzmq's CMake has no
    # option for it (autotools only), so the copy's CMakeLists.txt is patched
    # below to compile and link it, and the define reaches the library and
    # the tests (test_capabilities asks for it).
    -DCMAKE_CXX_FLAGS=-DHAVE_LIBGSSAPI_KRB5=1
    # No TIPC either (CMake turns it on whenever linux/tipc.h compiles): the
    # build oxmq answers zmq_has() as, and most machines lack the module.
    -DZMQ_HAVE_TIPC=OFF
    # test_security_curve links tweetnacl.c (for the test's own crypto), which
    # defines sodium_init; CMake links test programs with -rdynamic, so that
    # copy would override libsodium's for libzmq too, and libzmq's CURVE would
    # abort in sodium_malloc. The programs export no symbols at all instead.
    "-DCMAKE_EXE_LINKER_FLAGS=-Wl,--version-script=$CACHE/programs-export-nothing.map"
)
# (The cache's own path is left out, so a moved cache stays valid.)
STAMP_TEXT="$LIBZMQ_CRATE $LIBZMQ_CRATE_VERSION ${CMAKE_FLAGS[*]//$CACHE/CACHE}"

src_dir() { [ -f "$CACHE/$SRC_NAME/CMakeLists.txt" ] && echo "$CACHE/$SRC_NAME"; return 0; }

if [ -f "$CACHE/build/.built" ] && [ "$(cat "$CACHE/build/.built")" = "$STAMP_TEXT" ] \
   && [ -n "$(src_dir)" ]; then
    echo "==> libzmq suite: cached build in $CACHE/build ($(basename "$(src_dir)"))"
    exit 0
fi

if [ -z "$(src_dir)" ]; then
    # A throwaway package whose only dependency is the crate; `cargo metadata`
    # then names where cargo unpacked it.
    fetch="$CACHE/fetch"
    mkdir -p "$fetch/src"
    printf '%s\n' '[package]' 'name = "oxmq-libzmq-source"' 'version = "0.0.0"' 'edition = "2021"' \
        '[workspace]' '[dependencies]' "$LIBZMQ_CRATE = \"=$LIBZMQ_CRATE_VERSION\"" >"$fetch/Cargo.toml"
    : >"$fetch/src/lib.rs"
    echo "==> cargo fetch $LIBZMQ_CRATE $LIBZMQ_CRATE_VERSION (libzmq $LIBZMQ_VERSION source, into $CACHE)"
    cargo fetch -q --manifest-path "$fetch/Cargo.toml"
    crate_dir=$(cargo metadata -q --format-version 1 --manifest-path "$fetch/Cargo.toml" |
        python3 -c 'import json,sys,os; m=json.load(sys.stdin); print(next(os.path.dirname(p["manifest_path"]) for p in m["packages"] if p["name"]==sys.argv[1]))' "$LIBZMQ_CRATE")
    [ -f "$crate_dir/vendor/CMakeLists.txt" ] || { echo "libzmq suite: $crate_dir has no vendor/ tree" >&2; exit 1; }
    rm -rf "$CACHE/$SRC_NAME.tmp"
    cp -a "$crate_dir/vendor" "$CACHE/$SRC_NAME.tmp"
    mv "$CACHE/$SRC_NAME.tmp" "$CACHE/$SRC_NAME"
fi
SRC=$(src_dir)
[ -n "$SRC" ] && [ -f "$SRC/CMakeLists.txt" ] || { echo "libzmq suite: no source tree in $CACHE/$SRC_NAME" >&2; exit 1; }

# Two build-file changes in the copy (idempotent: each edit is looked for
# first, so a cached tree is patched once):
# - libzmq 4.3.5's tests/CMakeLists.txt leaves test_security_curve out on
#   Linux (a TODO about GitHub Actions); the suite needs it, so the guard goes.
# - GSSAPI: its three sources are added to the library and gssapi_krb5 linked.
python3 - "$SRC" <<'PY'
import re, sys
src = sys.argv[1]
tests = src + "/tests/CMakeLists.txt"
text = open(tests).read()
guarded = re.compile(r'if\(NOT CMAKE_SYSTEM_NAME MATCHES "Linux"\)\s*\n(\s*list\(APPEND tests test_security_curve\)\s*\n)\s*endif\(\)\s*\n')
text, n = guarded.subn(lambda m: m.group(1), text, count=1)
if n == 0 and not re.search(r'^\s*list\(APPEND tests test_security_curve\)', text, re.M):
    sys.exit("libzmq suite: tests/CMakeLists.txt names no test_security_curve")
open(tests, "w").write(text)
top = src + "/CMakeLists.txt"
text = open(top).read()
marker = "# oxmq libzmq-suite: GSSAPI as Debian's build"
if marker not in text:
    anchor = "target_link_libraries(libzmq ${CMAKE_THREAD_LIBS_INIT})"
    if anchor not in text or "mechanism_base.cpp" not in text:
        sys.exit("libzmq suite: CMakeLists.txt has no place for the GSSAPI sources")
    text = text.replace("    mechanism_base.cpp\n", "    mechanism_base.cpp\n    gssapi_client.cpp\n    gssapi_mechanism_base.cpp\n    gssapi_server.cpp\n", 1)
    text = text.replace(anchor, anchor + "\n  " + marker + "\n  target_link_libraries(libzmq gssapi_krb5)", 1)
    open(top, "w").write(text)
PY
echo '{ local: *; };' >"$CACHE/programs-export-nothing.map"
echo "==> cmake $(basename "$SRC") -> $CACHE/build"
rm -rf "$CACHE/build"
mkdir -p "$CACHE/build"
cmake -S "$SRC" -B "$CACHE/build" "${CMAKE_FLAGS[@]}" >"$CACHE/cmake.log" 2>&1 ||
    { tail -30 "$CACHE/cmake.log" >&2; exit 1; }
# CURVE through libsodium, not tweetnacl, and no draft API, as pyzmq's and Debian's builds.
if grep -q '^#define ZMQ_HAVE_TIPC' "$CACHE/build/platform.hpp"; then
    echo "libzmq suite: TIPC is on" >&2; exit 1
fi
grep -q '^#define ZMQ_HAVE_NORM' "$CACHE/build/platform.hpp" ||
    { echo "libzmq suite: cmake did not turn NORM on" >&2; exit 1; }
grep -q '^#define ZMQ_USE_LIBSODIUM' "$CACHE/build/platform.hpp" ||
    { echo "libzmq suite: cmake did not find libsodium" >&2; exit 1; }
if grep -q '^#define ZMQ_BUILD_DRAFT_API' "$CACHE/build/platform.hpp"; then
    echo "libzmq suite: draft API is on" >&2; exit 1
fi
echo "==> make -j$JOBS (libzmq and tests/; log: $CACHE/make.log)"
# Only the tests/ directory (and the library it links): not the unit tests or tools.
make -C "$CACHE/build/tests" -j"$JOBS" >"$CACHE/make.log" 2>&1 ||
    { tail -30 "$CACHE/make.log" >&2; exit 1; }
ldd "$CACHE/build/lib/libzmq.so.5" | grep libgssapi_krb5 >/dev/null ||
    { echo "libzmq suite: the built libzmq does not link GSSAPI" >&2; exit 1; }
[ -x "$CACHE/build/bin/test_security_curve" ] ||
    { echo "libzmq suite: test_security_curve was not built" >&2; exit 1; }
echo "$STAMP_TEXT" >"$CACHE/build/.built"
echo "==> libzmq suite: built $(ls "$CACHE/build/bin" | grep -c '^test_') test programs"
