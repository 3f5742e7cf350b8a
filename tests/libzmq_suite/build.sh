#!/usr/bin/env bash
# Fetch libzmq's source (Debian's zeromq3 source package) and build the
# library and its tests/ once, into the cache directory given as $1 (under
# target/, never committed). Cheap when already built: the stamp records the
# configuration, and a changed configuration rebuilds.
#
#   CURVE through libsodium, drafts off, no RPATH (so LD_LIBRARY_PATH picks the
#   library a test runs against), test_security_curve built (libzmq's CMake
#   adds it whenever CURVE is on; only Debian's autotools patch drops it).
set -euo pipefail

CACHE=${1:?usage: build.sh CACHE_DIR}
JOBS=${LIBZMQ_SUITE_JOBS:-2}
SRC_PKG=zeromq3
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
STAMP_TEXT="$SRC_PKG ${CMAKE_FLAGS[*]//$CACHE/CACHE}"

src_dir() { find "$CACHE" -maxdepth 1 -type d -name "$SRC_PKG-*" | sort | tail -1; }

if [ -f "$CACHE/build/.built" ] && [ "$(cat "$CACHE/build/.built")" = "$STAMP_TEXT" ] \
   && [ -n "$(src_dir)" ]; then
    echo "==> libzmq suite: cached build in $CACHE/build ($(basename "$(src_dir)"))"
    exit 0
fi

SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo

# apt-get source needs a deb-src entry; a stock Debian image has none. Add one
# (once) for the running release, next to the deb entries it mirrors.
has_deb_src() {
    grep -rqsE '^[[:space:]]*(deb-src[[:space:]]|Types:.*deb-src)' \
        /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null
}
if ! has_deb_src; then
    . /etc/os-release
    codename=${VERSION_CODENAME:?no VERSION_CODENAME in /etc/os-release}
    echo "==> adding /etc/apt/sources.list.d/oxmq-deb-src.sources ($codename)"
    printf '%s\n' 'Types: deb-src' 'URIs: http://deb.debian.org/debian' \
        "Suites: $codename $codename-updates" 'Components: main' \
        'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' |
        $SUDO tee /etc/apt/sources.list.d/oxmq-deb-src.sources >/dev/null
    $SUDO apt-get update -qq
fi
if [ -z "$(apt-cache showsrc "$SRC_PKG" 2>/dev/null | grep '^Version:' || true)" ]; then
    echo "==> apt-get update (no source record for $SRC_PKG yet)"
    $SUDO apt-get update -qq
fi

if [ -z "$(src_dir)" ]; then
    echo "==> apt-get source $SRC_PKG (into $CACHE)"
    (cd "$CACHE" && apt-get source -qq "$SRC_PKG" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
fi
SRC=$(src_dir)
[ -n "$SRC" ] && [ -f "$SRC/CMakeLists.txt" ] || { echo "libzmq suite: apt-get source $SRC_PKG gave no source tree" >&2; exit 1; }

echo '{ local: *; };' >"$CACHE/programs-export-nothing.map"
echo "==> cmake $(basename "$SRC") -> $CACHE/build"
rm -rf "$CACHE/build"
mkdir -p "$CACHE/build"
cmake -S "$SRC" -B "$CACHE/build" "${CMAKE_FLAGS[@]}" >"$CACHE/cmake.log" 2>&1 ||
    { tail -30 "$CACHE/cmake.log" >&2; exit 1; }
# CURVE through libsodium, not tweetnacl, and no draft API: as Debian's libzmq5.
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
[ -x "$CACHE/build/bin/test_security_curve" ] ||
    { echo "libzmq suite: test_security_curve was not built" >&2; exit 1; }
echo "$STAMP_TEXT" >"$CACHE/build/.built"
echo "==> libzmq suite: built $(ls "$CACHE/build/bin" | grep -c '^test_') test programs"
