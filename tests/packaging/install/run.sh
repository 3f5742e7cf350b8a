#!/usr/bin/env bash
# make install-test: `make install PREFIX=<temp>`, then a C program built the
# way users build against libzmq (gcc + pkg-config, PKG_CONFIG_PATH only) must
# compile against the installed zmq.h, link the installed libzmq.so and run on
# it; static linking against liboxmq.a must work too; `make uninstall` must
# leave the PREFIX empty. The machine's own libzmq (Debian's libzmq3-dev,
# installed for the interop tests) is on the default paths, so every check
# also proves the program did not silently pick that one up.
set -euo pipefail
cd "$(dirname "$0")/../../.."
TMP=$(mktemp -d /tmp/oxmq-install.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
PREFIX=$TMP/prefix
fail() { echo "FAIL install-test: $*" >&2; exit 1; }

make -s --no-print-directory install PREFIX="$PREFIX" >"$TMP/install.log" || { cat "$TMP/install.log"; fail "make install"; }
for f in lib/libzmq.so.5 lib/libzmq.so lib/liboxmq.a include/zmq.h include/zmq_utils.h include/oxmq_stats.h lib/pkgconfig/libzmq.pc; do
    [ -e "$PREFIX/$f" ] || fail "make install did not create $PREFIX/$f"
done
[ "$(readlink "$PREFIX/lib/libzmq.so")" = libzmq.so.5 ] || fail "libzmq.so is not a symlink to libzmq.so.5"
soname=$(objdump -p "$PREFIX/lib/libzmq.so.5" | awk '/SONAME/ {print $2}')
[ "$soname" = libzmq.so.5 ] || fail "installed library's soname is '$soname', not libzmq.so.5"

export PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig
flags=$(pkg-config --cflags --libs libzmq)
echo "    pkg-config --cflags --libs libzmq: $flags"
case "$flags" in *"-I$PREFIX/include"*"-L$PREFIX/lib"*) ;; *) fail "pkg-config does not point at $PREFIX: $flags";; esac
[ "$(pkg-config --modversion libzmq)" = 4.3.5 ] || fail "pkg-config --modversion libzmq: $(pkg-config --modversion libzmq)"

# The installed header, not /usr/include/zmq.h: gcc -H lists what it read.
# shellcheck disable=SC2086
gcc -Wall -Wextra -Werror -H -o "$TMP/hello" tests/packaging/install/hello.c $flags 2>"$TMP/headers"
grep -q "^\. $PREFIX/include/zmq.h" "$TMP/headers" || { cat "$TMP/headers"; fail "hello.c did not read $PREFIX/include/zmq.h"; }
! grep -q '/usr/include/zmq' "$TMP/headers" || fail "hello.c read /usr/include's zmq headers"

# A prefix outside the loader's paths is found as users find it: LD_LIBRARY_PATH.
LD_LIBRARY_PATH=$PREFIX/lib ldd "$TMP/hello" | grep "libzmq.so.5 => $PREFIX/lib/libzmq.so.5" >/dev/null || \
    fail "the program does not load $PREFIX/lib/libzmq.so.5: $(LD_LIBRARY_PATH=$PREFIX/lib ldd "$TMP/hello" | grep zmq)"
out=$(LD_LIBRARY_PATH=$PREFIX/lib "$TMP/hello") || fail "hello (shared): $out"
echo "    shared: $out"
[ "$out" = "zmq_version 4.3.5, PUSH/PULL over tcp and inproc: ok" ] || fail "unexpected output: $out"

# Static: liboxmq.a with pkg-config's private libs, no libzmq.so needed at run time.
# shellcheck disable=SC2086
gcc -o "$TMP/hello-static" tests/packaging/install/hello.c $(pkg-config --cflags libzmq) \
    "$PREFIX/lib/liboxmq.a" $(pkg-config --libs --static libzmq | tr ' ' '\n' | grep -vx -e -lzmq -e '-L.*' | tr '\n' ' ')
! ldd "$TMP/hello-static" | grep libzmq >/dev/null || fail "the static program still needs a libzmq.so"
out=$("$TMP/hello-static") || fail "hello (static): $out"
echo "    static: $out"
[ "$out" = "zmq_version 4.3.5, PUSH/PULL over tcp and inproc: ok" ] || fail "unexpected output: $out"

# DESTDIR stages the same tree under another root while the .pc names PREFIX.
make -s --no-print-directory install PREFIX=/opt/oxmq DESTDIR="$TMP/stage" >/dev/null
grep -qx 'prefix=/opt/oxmq' "$TMP/stage/opt/oxmq/lib/pkgconfig/libzmq.pc" || fail "DESTDIR install: .pc does not name PREFIX"
make -s --no-print-directory uninstall PREFIX=/opt/oxmq DESTDIR="$TMP/stage" >/dev/null
[ -z "$(find "$TMP/stage" -type f -o -type l)" ] || fail "DESTDIR uninstall left: $(find "$TMP/stage" -type f -o -type l)"

# Something of the user's in the prefix survives uninstall.
touch "$PREFIX/lib/keep.me"
make -s --no-print-directory uninstall PREFIX="$PREFIX" >/dev/null
left=$(cd "$PREFIX" && find . -type f -o -type l | sort)
[ "$left" = "./lib/keep.me" ] || fail "make uninstall left or removed the wrong files: ${left:-nothing}"
echo "PASS install-test: make install/uninstall PREFIX=$PREFIX; gcc \$(pkg-config --cflags --libs libzmq) built and ran on oxmq (shared and static)"
