#!/usr/bin/env bash
# Builds oxmq's Debian packages from an already built C ABI (make capi):
#
#   liboxmq5     libzmq.so.5 (oxmq), Provides/Replaces/Conflicts libzmq5, so
#                every package that depends on libzmq5 stays installed
#   liboxmq-dev  zmq.h, zmq_utils.h, oxmq_stats.h, libzmq.so, libzmq.a, libzmq.pc;
#                Provides/Replaces/Conflicts libzmq3-dev
#
#   packaging/deb/build.sh LIBRARY HEADER OUTDIR [STATIC_LIBRARY]
#
# LIBRARY is the cdylib (soname libzmq.so.5), HEADER oxmq's zmq.h (zmq_utils.h
# is taken from beside it), STATIC_LIBRARY the staticlib (liboxmq.a), shipped
# as liboxmq-dev's libzmq.a. The packages are laid out with dpkg-deb from
# control files written here (no cargo-deb: two small packages whose every
# field we want to choose). Prints the paths of the two .deb files on its last
# two lines.
#
# Versions: the packages carry oxmq's own version (the workspace's, -1); the
# libzmq they stand in for is the one zmq_version() reports (LIBZMQ_VERSION,
# read from the header), and Provides carries it, so that dependencies such as
# `libzmq5 (>= 4.3.2)` are satisfied.
set -euo pipefail

[ $# -eq 3 ] || [ $# -eq 4 ] || { echo "usage: $0 LIBRARY HEADER OUTDIR [STATIC_LIBRARY]" >&2; exit 2; }
LIBRARY=$1 HEADER=$2 OUT=$3 STATIC=${4:-}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

: "${DEB_MAINTAINER:=$(git -C "$ROOT" log -1 --format="%an <%ae>" 2>/dev/null || echo "oxmq maintainers <oxmq@localhost>")}"

die() { echo "packaging/deb/build.sh: $*" >&2; exit 1; }
[ -f "$LIBRARY" ] || die "no library at $LIBRARY (make capi builds it)"
[ -f "$HEADER" ] || die "no header at $HEADER"
LIBRARY=$(realpath "$LIBRARY") HEADER=$(realpath "$HEADER")
if [ -n "$STATIC" ]; then
  [ -f "$STATIC" ] || die "no static library at $STATIC"
  STATIC=$(realpath "$STATIC")
fi
OUT=$(mkdir -p "$OUT" && cd "$OUT" && pwd)
soname=$(objdump -p "$LIBRARY" | awk '$1 == "SONAME" {print $2}')
[ "$soname" = libzmq.so.5 ] || die "$LIBRARY has soname '${soname}', not libzmq.so.5"

ARCH=$(dpkg --print-architecture)
MULTIARCH=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
OXMQ_VERSION=$(awk -F'"' '/^\[workspace.package\]/ {w = 1} w && /^version *=/ {print $2; exit}' "$ROOT/Cargo.toml")
[ -n "$OXMQ_VERSION" ] || die "no [workspace.package] version in Cargo.toml"
DEB_VERSION="$OXMQ_VERSION-1"
hv() { awk -v k="ZMQ_VERSION_$1" '$1 == "#define" && $2 == k {print $3}' "$HEADER"; }
LIBZMQ_VERSION="$(hv MAJOR).$(hv MINOR).$(hv PATCH)"
[[ "$LIBZMQ_VERSION" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "no ZMQ_VERSION_* in $HEADER"
# libtool's file name for that libzmq release (libzmq 4.3.x installs libzmq.so.5.2.x).
LIB_FILE="libzmq.so.5.2.$(hv PATCH)"
# The libzmq5 a program built against liboxmq-dev's stable API asks for:
# zmq.h without ZMQ_BUILD_DRAFT_API declares libzmq 4.3's API, and Debian 12's
# 4.3.4 is the libzmq the tests build the same programs against (tests/interop/capi),
# so a consumer gets `libzmq5 (>= 4.3.4)`, which either library satisfies.
ABI_MINVER=4.3.4

# Reproducible: every date and mtime is the commit's.
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$ROOT" log -1 --format=%ct 2>/dev/null || date +%s)}
export SOURCE_DATE_EPOCH
COMMIT=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)

rm -rf "$OUT/liboxmq5" "$OUT/liboxmq-dev" "$OUT/shlibdeps" "$OUT"/*.deb
mkdir -p "$OUT"
LIB5="$OUT/liboxmq5"
DEV="$OUT/liboxmq-dev"
LIBDIR="usr/lib/$MULTIARCH"

# ------------------------------------------------------------- liboxmq5
install -d "$LIB5/DEBIAN" "$LIB5/$LIBDIR" "$LIB5/usr/share/doc/liboxmq5"
# What dh_strip does for a shared library: the debug info stays in target/.
strip --remove-section=.comment --remove-section=.note --strip-unneeded \
  -o "$LIB5/$LIBDIR/$LIB_FILE" "$LIBRARY"
chmod 0644 "$LIB5/$LIBDIR/$LIB_FILE"
ln -s "$LIB_FILE" "$LIB5/$LIBDIR/libzmq.so.5"

docs() { # package-dir package
  local d="$1/usr/share/doc/$2"
  install -d "$d"
  install -m 0644 "$HERE/copyright" "$d/copyright"
  {
    echo "oxmq ($DEB_VERSION) unstable; urgency=medium"
    echo
    echo "  * oxmq $OXMQ_VERSION, commit $COMMIT, packaged by make deb: the libzmq $LIBZMQ_VERSION"
    echo "    C ABI (libzmq.so.5) of oxmq, ZeroMQ in Rust."
    echo
    echo " -- $DEB_MAINTAINER  $(date -u -R -d "@$SOURCE_DATE_EPOCH")"
  } | gzip -9n > "$d/changelog.Debian.gz"
  chmod 0644 "$d/changelog.Debian.gz"
}
docs "$LIB5" liboxmq5

# Exports declared by zmq.h without ZMQ_BUILD_DRAFT_API are libzmq's stable ABI
# (any libzmq5 >= ABI_MINVER has them); those declared only with it are
# libzmq's draft API, which Debian's libzmq5 does not export: a program using
# them needs liboxmq5 itself, as do oxmq's own extensions (oxmq_stats.h). An
# export neither header declares stops the build.
declared() { # extra cpp flags
  gcc -E -P "$@" -x c "$HEADER" | grep -oE '\bzmq_[a-z0-9_]+ *\(' | tr -d ' (' | sort -u
}
declared > "$OUT/api-stable.txt"
{
  declared -DZMQ_BUILD_DRAFT_API
  gcc -E -P -x c "$(dirname "$HEADER")/oxmq_stats.h" | grep -oE '\boxmq_[a-z0-9_]+ *\(' | tr -d ' ('
} | sort -u > "$OUT/api-draft.txt"
nm -D --defined-only "$LIBRARY" | awk '$2 ~ /^[TW]$/ {print $3}' | sort -u > "$OUT/exports.txt"
{
  echo "libzmq.so.5 libzmq5 #MINVER#"
  echo "| liboxmq5 #MINVER#"
  echo "* Build-Depends-Package: liboxmq-dev"
  while read -r sym; do
    if grep -qx "$sym" "$OUT/api-stable.txt"; then
      echo " $sym@Base $ABI_MINVER"
    elif grep -qx "$sym" "$OUT/api-draft.txt"; then
      echo " $sym@Base $OXMQ_VERSION 1"
    else
      die "$LIBRARY exports $sym, which zmq.h does not declare"
    fi
  done < "$OUT/exports.txt"
} > "$LIB5/DEBIAN/symbols"
echo "libzmq 5 libzmq5 (>= $ABI_MINVER)" > "$LIB5/DEBIAN/shlibs"
echo "activate-noawait ldconfig" > "$LIB5/DEBIAN/triggers"

# The library's own dependencies (libc6, libgcc-s1), as a source package's
# ${shlibs:Depends} would get them.
mkdir -p "$OUT/shlibdeps/debian"
printf 'Source: oxmq\n\nPackage: liboxmq5\nArchitecture: any\n' > "$OUT/shlibdeps/debian/control"
lib_depends=$(cd "$OUT/shlibdeps" && dpkg-shlibdeps -O -e"$LIB5/$LIBDIR/$LIB_FILE" |
  sed -n 's/^shlibs:Depends=//p')
[ -n "$lib_depends" ] || die "dpkg-shlibdeps found no dependency for $LIB_FILE"
# pgm://, epgm:// and norm:// load OpenPGM and NORM when first used
# (dlopen by soname), so dpkg-shlibdeps cannot see them: Debian 12's packages
# of those sonames (libpgm-5.3.so.0, libnorm.so.1) are recommended, as
# libzmq5 depends on them; without them those transports are
# EPROTONOSUPPORT and everything else works.
lib_recommends="libpgm-5.3-0, libnorm1"

installed_size() { du -k -s --apparent-size --exclude=DEBIAN "$1" | cut -f1; }

description_tail=" oxmq is ZeroMQ rebuilt in Rust: it speaks ZMTP 3.1 and 3.0, so it
 interoperates with libzmq and every binding built on it."

cat > "$LIB5/DEBIAN/control" <<EOF
Package: liboxmq5
Source: oxmq
Version: $DEB_VERSION
Architecture: $ARCH
Maintainer: $DEB_MAINTAINER
Installed-Size: $(installed_size "$LIB5")
Depends: $lib_depends
Recommends: $lib_recommends
Provides: libzmq5 (= $LIBZMQ_VERSION)
Replaces: libzmq5
Conflicts: libzmq5
Section: libs
Priority: optional
Multi-Arch: same
Description: ZeroMQ messaging library in Rust, a drop-in for libzmq5
 oxmq's libzmq.so.5: the C ABI of libzmq $LIBZMQ_VERSION, so programs and
 bindings linked against libzmq5 (pyzmq, CZMQ, ZMQ::FFI, ffi-rzmq, ...) use it
 unchanged. It replaces libzmq5; packages that depend on libzmq5 stay
 installed.
 .
$description_tail
EOF

# ----------------------------------------------------------- liboxmq-dev
install -d "$DEV/DEBIAN" "$DEV/usr/include" "$DEV/$LIBDIR/pkgconfig"
install -m 0644 "$HEADER" "$DEV/usr/include/zmq.h"
install -m 0644 "$(dirname "$HEADER")/zmq_utils.h" "$DEV/usr/include/zmq_utils.h"
install -m 0644 "$(dirname "$HEADER")/oxmq_stats.h" "$DEV/usr/include/oxmq_stats.h"
ln -s libzmq.so.5 "$DEV/$LIBDIR/libzmq.so"
# Rust's staticlib holds the standard library and libsodium; it needs what
# rustc's native-static-libs names for this target, except libc, and MIT
# krb5's GSSAPI library (the GSSAPI mechanism links it; libpgm and libnorm
# are loaded at run time).
static_libs=''
if [ -n "$STATIC" ]; then
  strip --strip-debug --remove-section=.comment -o "$DEV/$LIBDIR/libzmq.a" "$STATIC"
  chmod 0644 "$DEV/$LIBDIR/libzmq.a"
  static_libs="-lgssapi_krb5 -lgcc_s -lutil -lrt -lpthread -lm -ldl"
fi
cat > "$DEV/$LIBDIR/pkgconfig/libzmq.pc" <<EOF
prefix=/usr
exec_prefix=\${prefix}
libdir=\${prefix}/lib/$MULTIARCH
includedir=\${prefix}/include

Name: libzmq
Description: oxmq, ZeroMQ in Rust, with the libzmq $LIBZMQ_VERSION C ABI
Version: $LIBZMQ_VERSION
Libs: -L\${libdir} -lzmq
Libs.private: $static_libs
Cflags: -I\${includedir}
EOF
chmod 0644 "$DEV/$LIBDIR/pkgconfig/libzmq.pc"
docs "$DEV" liboxmq-dev

cat > "$DEV/DEBIAN/control" <<EOF
Package: liboxmq-dev
Source: oxmq
Version: $DEB_VERSION
Architecture: $ARCH
Maintainer: $DEB_MAINTAINER
Installed-Size: $(installed_size "$DEV")
Depends: liboxmq5 (= $DEB_VERSION), libkrb5-dev
Provides: libzmq3-dev (= $LIBZMQ_VERSION), libzmq-dev (= $LIBZMQ_VERSION)
Replaces: libzmq3-dev
Conflicts: libzmq3-dev
Section: libdevel
Priority: optional
Multi-Arch: same
Description: ZeroMQ messaging library in Rust, a drop-in for libzmq3-dev
 zmq.h, libzmq.so and libzmq.pc for oxmq's libzmq.so.5: programs built
 with "pkg-config --cflags --libs libzmq" link against oxmq. It replaces
 libzmq3-dev; packages that depend on libzmq3-dev stay installed.
 .
$description_tail
EOF

# ---------------------------------------------------------------- build
for p in "$LIB5" "$DEV"; do
  (cd "$p" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z |
    xargs -0 -r md5sum) > "$p/DEBIAN/md5sums"
  chmod 0644 "$p/DEBIAN/"*
  find "$p" -type d -exec chmod 0755 {} +
  find "$p" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
done
deb5="$OUT/liboxmq5_${DEB_VERSION}_$ARCH.deb"
debdev="$OUT/liboxmq-dev_${DEB_VERSION}_$ARCH.deb"
dpkg-deb --root-owner-group -Zxz --build "$LIB5" "$deb5" >/dev/null
dpkg-deb --root-owner-group -Zxz --build "$DEV" "$debdev" >/dev/null
echo "==> liboxmq5 $DEB_VERSION (libzmq.so.5 -> $LIB_FILE, Provides libzmq5 (= $LIBZMQ_VERSION)," \
  "Depends $lib_depends; Recommends $lib_recommends; symbols: $(grep -c '@Base [^ ]*$' "$LIB5/DEBIAN/symbols") stable," \
  "$(grep -c '@Base .* 1$' "$LIB5/DEBIAN/symbols") draft-only)"
echo "$deb5"
echo "$debdev"
