#!/usr/bin/env bash
# Installs oxmq's .deb packages as a user would (apt install ./...deb), without
# changing this machine, and runs Debian's own consumers of libzmq5, unchanged,
# on the system path with no LD_LIBRARY_PATH.
#
#   tests/packaging/deb/run.sh LIBOXMQ5_DEB LIBOXMQ_DEV_DEB STAGED_LIBRARY
#
# How the machine stays unchanged: the install and every consumer run inside a
# private mount namespace (and a network namespace: only its own loopback, so no
# fixed port of another test collides and nothing leaves the machine), where
# /usr, /etc and /var are overlays whose upper layers live on a tmpfs of that
# namespace. When the namespace's last process exits its mounts, and all that
# was written to them, are gone, whatever happened inside. If an overlay cannot be
# mounted the step fails: it never falls back to installing on the host, where
# other programs use the real libzmq5 meanwhile. Before and after, the host's
# libzmq.so.5.* checksums, `dpkg -s libzmq5` and the whole `dpkg -l` are
# compared.
#
# Inside, after the install: every package that was installed is still
# installed except libzmq5 and libzmq3-dev, which liboxmq5/liboxmq-dev replace;
# `apt-get check` passes; ldconfig resolves libzmq.so.5 to the staged library.
# Then each consumer (python3-zmq, ZMQ::FFI, ffi-rzmq, CZMQ's own selftests
# from Debian's libczmq4, a C program built with pkg-config against
# liboxmq-dev) must exit 0, print at least one LIBZMQ_MAPPED= line, every one
# the installed oxmq library, and report oxmq's libzmq version; dpkg-shlibdeps
# on the C program must give a dependency the installed system satisfies.
set -u -o pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
OUT=${DEB_TEST_DIR:-$ROOT/target/deb-test}
MULTIARCH=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
SYSLIB=/usr/lib/$MULTIARCH
OVERLAID=(/usr /etc /var)
# Debian packages that use libzmq5/libzmq3-dev: each must stay installed.
CONSUMERS=(python3-zmq libzmq-ffi-perl ruby-ffi-rzmq ruby-ffi-rzmq-core libczmq4 libczmq-dev)
TIMEOUT=120

die() { echo "deb-test: $*" >&2; exit 1; }

# ------------------------------------------------------------ inside
if [ "${1:-}" = --inside ]; then
  shift
  DEB5=$1 DEBDEV=$2 STAGED=$3
  passes=0 failures=0
  pass() { passes=$((passes + 1)); printf 'PASS %s\n' "$*"; }
  fail() { failures=$((failures + 1)); printf 'FAIL %s\n' "$*"; }
  logtail() { tail -n 25 "$1" | sed 's/^/    /'; }

  # The overlays' upper layers, the scratch directory and a view of $OUT live on
  # a tmpfs mounted (in this namespace only) on a directory that holds neither
  # the overlaid trees nor this checkout, wherever the checkout is: an upper
  # layer may not sit inside its lower tree, and $OUT may itself be under /var.
  BASE=''
  for b in /srv /media /opt /mnt; do
    case "$ROOT/" in "$b"/*) continue ;; esac
    [ -d "$b" ] && BASE=$b && break
  done
  [ -n "$BASE" ] || die "no directory to mount the namespace's tmpfs on"
  mount -t tmpfs oxmq-deb-test "$BASE" || die "cannot mount a tmpfs in the namespace (needs root)"
  mkdir -p "$BASE/out" "$BASE/scratch"
  mount --bind "$OUT" "$BASE/out" || die "cannot bind $OUT"
  OUT=$BASE/out
  DEB5=$OUT/input/$DEB5 DEBDEV=$OUT/input/$DEBDEV STAGED=$OUT/input/$STAGED
  for d in "${OVERLAID[@]}"; do
    o="$BASE/overlay/${d#/}"
    mkdir -p "$o/upper" "$o/work"
    mount -t overlay "oxmq-deb-test${d//\//-}" -o "lowerdir=$d,upperdir=$o/upper,workdir=$o/work" "$d" ||
      die "cannot mount an overlay over $d: the step needs a private mount namespace with overlayfs (root)"
  done
  ip link set lo up || die "cannot bring up lo in the network namespace"
  touch /usr/.oxmq-deb-test-marker
  SCRATCH=$BASE/scratch
  export TMPDIR=$SCRATCH

  dpkg-query -W -f '${Package}:${Architecture} ${db:Status-Abbrev}\n' | sort > "$OUT/packages-before.txt"
  echo "==> apt-get install ./$(basename "$DEB5") ./$(basename "$DEBDEV") (inside the namespace)"
  cp "$DEB5" "$DEBDEV" "$SCRATCH/"
  if (cd "$SCRATCH" && DEBIAN_FRONTEND=noninteractive timeout -k 5 300 apt-get install -y \
        --no-install-recommends -o Dpkg::Use-Pty=0 "./$(basename "$DEB5")" "./$(basename "$DEBDEV")") \
        > "$OUT/apt-install.log" 2>&1; then
    pass "apt-get install: $(grep -E '^[0-9]+ upgraded' "$OUT/apt-install.log")"
  else
    fail "apt-get install"; logtail "$OUT/apt-install.log"
    echo "deb-test: $passes passed, $failures failed"; exit 1
  fi
  dpkg-query -W -f '${Package}:${Architecture} ${db:Status-Abbrev}\n' | sort > "$OUT/packages-after.txt"
  gone=$(comm -23 <(grep '^[^ ]* ii' "$OUT/packages-before.txt" | cut -d' ' -f1) \
                  <(grep '^[^ ]* ii' "$OUT/packages-after.txt" | cut -d' ' -f1) | sort | tr '\n' ' ')
  new=$(comm -13 <(grep '^[^ ]* ii' "$OUT/packages-before.txt" | cut -d' ' -f1) \
                 <(grep '^[^ ]* ii' "$OUT/packages-after.txt" | cut -d' ' -f1) | sort | tr '\n' ' ')
  arch=$(dpkg --print-architecture)
  [ "$gone" = "libzmq3-dev:$arch libzmq5:$arch " ] && [ "$new" = "liboxmq-dev:$arch liboxmq5:$arch " ] &&
    pass "apt replaced exactly libzmq5 and libzmq3-dev (removed: $gone; installed: $new)" ||
    fail "apt removed [$gone] and installed [$new]; expected libzmq5, libzmq3-dev out and liboxmq5, liboxmq-dev in"
  kept='' lost=''
  for p in "${CONSUMERS[@]}"; do
    st=$(dpkg-query -W -f '${db:Status-Abbrev}' "$p" 2>/dev/null)
    [ "${st:0:2}" = ii ] && kept="$kept $p" || lost="$lost $p (status '$st')"
  done
  [ -z "$lost" ] && pass "consumers still installed:$kept" || fail "consumers no longer installed:$lost"
  if apt-get check > "$OUT/apt-check.log" 2>&1; then pass "apt-get check: no broken dependency"
  else fail "apt-get check"; logtail "$OUT/apt-check.log"; fi

  # Every dependency on libzmq5 / libzmq3-dev that Debian's packages declare
  # (from the apt lists; libzmq3-dev's own `libzmq5 (= 4.3.4-6)` left out, as
  # liboxmq-dev replaces it) must be satisfied as installed, by apt's resolver.
  rdeps=$( (apt-cache rdepends libzmq5; apt-cache rdepends libzmq3-dev) 2>/dev/null | grep '^ ' | tr -d ' |' | sort -u)
  constraints=$( [ -z "$rdeps" ] || apt-cache show $rdeps 2>/dev/null |
    awk '/^Package: / {p = $2} /^(Pre-)?Depends: / && p != "libzmq3-dev" {sub(/^[^:]*: /, ""); print}' |
    tr ',' '\n' | sed 's/^ *//; s/ *$//' | grep -E '^(libzmq5|libzmq3-dev)( |$)' | sort -u)
  if [ -z "$constraints" ]; then
    fail "no package in the apt lists depends on libzmq5 (no lists? make deb-deps runs apt-get update)"
  elif apt-get satisfy -s "$(echo "$constraints" | paste -sd, | sed 's/,/, /g')" 2>&1 |
         grep -qE '^0 upgraded, 0 newly installed, 0 to remove'; then
    pass "$(echo "$rdeps" | wc -l) Debian packages' dependencies on libzmq5/libzmq3-dev satisfied as installed: $(echo "$constraints" | paste -sd, | sed 's/,/, /g')"
  else
    fail "some Debian package's dependency on libzmq5/libzmq3-dev is not satisfied: $(echo "$constraints" | paste -sd,)"
  fi

  resolved=$(ldconfig -p | awk -v a="$MULTIARCH" '$1 == "libzmq.so.5" {print $NF; exit}')
  real=$(realpath "$resolved" 2>/dev/null)
  owner=$(dpkg -S "$real" 2>/dev/null | cut -d: -f1)
  if [ -n "$real" ] && cmp -s "$real" "$STAGED" && [ "$owner" = liboxmq5 ]; then
    pass "ldconfig: libzmq.so.5 -> $real (liboxmq5's, same bytes as $(basename "$STAGED"))"
  else
    fail "ldconfig resolves libzmq.so.5 to '$resolved' ($real, owned by '$owner'), not the staged library"
  fi
  OURLIB=$real
  WANT_VERSION=$(pkg-config --modversion libzmq)
  [ "$WANT_VERSION" = "$(dpkg-deb -f "$DEB5" Provides | sed -n 's/.*libzmq5 (= \([^)]*\)).*/\1/p')" ] &&
    pass "pkg-config --modversion libzmq: $WANT_VERSION ($(pkg-config --variable=pcfiledir libzmq))" ||
    fail "pkg-config --modversion libzmq gives '$WANT_VERSION'"

  # consumer NAME LOG CMD...: exit 0, >= 1 LIBZMQ_MAPPED line, all of them oxmq's
  # installed library, every ZMQ_VERSION line oxmq's.
  consumer() {
    local name=$1 log=$2; shift 2
    local t0=$SECONDS rc
    (cd "$SCRATCH" && env -u LD_LIBRARY_PATH -u LD_PRELOAD -u FFI_CHECKLIB_PATH -u PYTHONPATH \
        -u PERL5LIB -u RUBYLIB -u RUBYOPT PYTHONDONTWRITEBYTECODE=1 timeout -k 5 "$TIMEOUT" "$@") \
        > "$log" 2>&1 < /dev/null
    rc=$?
    local mapped bad='' n=0 p versions
    mapped=$(sed -n 's/^LIBZMQ_MAPPED=//p' "$log" | sort -u)
    while IFS= read -r p; do
      [ -n "$p" ] || continue
      n=$((n + 1))
      [ "$(realpath -m "$p")" = "$OURLIB" ] || bad="$bad $p"
    done <<< "$mapped"
    versions=$(sed -n 's/^ZMQ_VERSION=\([^ ]*\).*/\1/p' "$log" | sort -u | tr '\n' ' ')
    if [ $rc -ne 0 ]; then fail "$name: exit $rc ($((SECONDS - t0))s)"; logtail "$log"
    elif [ $n -eq 0 ]; then fail "$name: no LIBZMQ_MAPPED line"; logtail "$log"
    elif [ -n "$bad" ]; then fail "$name: mapped another libzmq:$bad"
    elif [ "$versions" != "$WANT_VERSION " ]; then fail "$name: libzmq version(s) $versions, want $WANT_VERSION"
    else
      local n_ok summary
      n_ok=$(grep -c '^ok' "$log")
      summary=$(grep -E '^=+ .*passed.* =+$' "$log" | tail -1 | sed -E 's/^=+ //; s/ in [0-9.]+s.*//')
      pass "$name ($((SECONDS - t0))s): ${summary:-$n_ok checks}, mapped $(echo $mapped), libzmq $versions"
    fi
  }
  L=$OUT/logs
  mkdir -p "$L"
  consumer "python3-zmq (/usr/bin/python3)" "$L/python3.log" /usr/bin/python3 "$HERE/consumer.py" "$SCRATCH"
  # The scripts of make bindings-test, which there reach oxmq through
  # LD_LIBRARY_PATH/FFI_CHECKLIB_PATH; here through the system path alone.
  B=$ROOT/tests/compat/bindings
  consumer "python3-zmq tests/compat/bindings/python3 (pytest)" "$L/python3-pytest.log" /usr/bin/python3 -m pytest \
    -p no:cacheprovider --basetemp "$SCRATCH/pytest" -c "$B/python3/pytest.ini" --rootdir "$B/python3" "$B/python3"
  for s in reqrep pushpull multipart weather fdpoll fd_anyevent; do
    consumer "libzmq-ffi-perl $s.pl" "$L/perl-$s.log" /usr/bin/perl "$B/perl/$s.pl"
  done
  for s in reqrep pushpull poll; do
    consumer "ruby-ffi-rzmq $s.rb" "$L/ruby-$s.log" /usr/bin/ruby "$B/ruby/$s.rb"
  done

  # A C program, built as a user builds one.
  cflags=$(pkg-config --cflags --libs libzmq)
  for v in plain draft; do
    bin=$SCRATCH/consumer-$v
    extra=(); [ $v = draft ] && extra=(-DUSE_DRAFT)
    if gcc -O1 -Wall -Wextra -Werror "${extra[@]}" -o "$bin" "$HERE/consumer.c" $cflags > "$L/cc-$v.log" 2>&1; then
      if readelf -d "$bin" | grep -E 'RPATH|RUNPATH' >/dev/null; then fail "C consumer ($v) has an RPATH/RUNPATH"; fi
      consumer "C program ($v), gcc \$(pkg-config --cflags --libs libzmq) = '$cflags'" "$L/c-$v.log" "$bin" "$SCRATCH"
    else
      fail "C consumer ($v) does not build against liboxmq-dev"; logtail "$L/cc-$v.log"; continue
    fi
    # dpkg-shlibdeps, as a consumer's package build runs it.
    sd=$SCRATCH/shlibdeps-$v
    mkdir -p "$sd/debian"
    printf 'Source: consumer\n\nPackage: consumer\nArchitecture: any\n' > "$sd/debian/control"
    deps=$(cd "$sd" && dpkg-shlibdeps -O "-e$bin" 2> "$L/shlibdeps-$v.log" | sed -n 's/^shlibs:Depends=//p')
    zdeps=$(echo "$deps" | tr ',' '\n' | sed 's/^ *//' | grep -E '^(libzmq5|liboxmq5)' | tr '\n' ',' | sed 's/,$//; s/,/, /g')
    # libzmq's stable ABI: libzmq5, which either library satisfies; a draft
    # function: liboxmq5 as well (dpkg-shlibdeps sorts them by name).
    if [ $v = plain ]; then want_re='^libzmq5 \(>= [0-9.]+\)$'; else want_re='^liboxmq5 \(>= [^)]+\), libzmq5 \(>= [0-9.]+\)$'; fi
    if ! [[ "$zdeps" =~ $want_re ]]; then
      fail "dpkg-shlibdeps ($v): libzmq part of '$deps' is '$zdeps'"; logtail "$L/shlibdeps-$v.log"
    elif apt-get satisfy -s "$deps" 2>&1 | grep -E '^0 upgraded, 0 newly installed, 0 to remove' >/dev/null; then
      pass "dpkg-shlibdeps ($v): Depends: $deps (satisfied as installed)"
    else
      fail "dpkg-shlibdeps ($v): '$deps' is not satisfied by the installed system"
    fi
  done

  # Linked statically against liboxmq-dev's libzmq.a, with the libraries
  # `pkg-config --static` names: no libzmq.so.5 is needed or mapped.
  bin=$SCRATCH/consumer-static
  private=$(pkg-config --static --libs libzmq | tr ' ' '\n' | grep -vx -- -lzmq | tr '\n' ' ')
  if gcc -O1 -Wall -Wextra -Werror -o "$bin" "$HERE/consumer.c" $(pkg-config --cflags libzmq) \
       -Wl,-Bstatic -lzmq -Wl,-Bdynamic $private > "$L/cc-static.log" 2>&1; then
    (cd "$SCRATCH" && env -u LD_LIBRARY_PATH timeout -k 5 "$TIMEOUT" "$bin" "$SCRATCH") > "$L/c-static.log" 2>&1
    rc=$?
    if [ $rc -eq 0 ] && ! readelf -d "$bin" | grep 'NEEDED.*libzmq' >/dev/null && ! grep -q '^LIBZMQ_MAPPED=' "$L/c-static.log" &&
       grep -q "^ZMQ_VERSION=$WANT_VERSION " "$L/c-static.log"; then
      pass "C program (static), -Wl,-Bstatic -lzmq -Wl,-Bdynamic $private: $(grep -c '^ok' "$L/c-static.log") checks, no libzmq.so.5 needed"
    else
      fail "C program (static): exit $rc, or it needs/maps a libzmq.so.5"; logtail "$L/c-static.log"
    fi
  else
    fail "C program (static) does not link against libzmq.a"; logtail "$L/cc-static.log"
  fi

  # CZMQ's own selftests, from Debian's libczmq4, on the installed library.
  if gcc -O1 -Wall -Wextra -o "$SCRATCH/czmq_selftest" "$HERE/czmq_selftest.c" \
       $(pkg-config --cflags --libs libczmq) -lzmq > "$L/cc-czmq.log" 2>&1; then
    mkdir -p "$SCRATCH/czmq"
    (cd "$SCRATCH/czmq" && env -u LD_LIBRARY_PATH timeout -k 5 400 "$SCRATCH/czmq_selftest") > "$L/czmq.log" 2>&1
    rc=$?
    ldd_lib=$(ldd "$SCRATCH/czmq_selftest" | awk '$1 == "libzmq.so.5" {print $3}')
    if [ $rc -eq 0 ] && [ "$(realpath "$ldd_lib")" = "$OURLIB" ] && grep -q "on libzmq $WANT_VERSION\$" "$L/czmq.log"; then
      pass "libczmq4 $(sed -n 's/^czmq \([^ ]*\) on .*/\1/p' "$L/czmq.log"): $(tail -1 "$L/czmq.log") on $ldd_lib -> $(realpath "$ldd_lib") ($(grep '^PASS' "$L/czmq.log" | awk '{print $3}' | tr '\n' ' '))"
    else
      fail "libczmq4 selftests (exit $rc, libzmq.so.5 => $ldd_lib)"; grep -E '^(FAIL|czmq)' "$L/czmq.log" | sed 's/^/    /'; logtail "$L/czmq.log"
    fi
  else
    fail "CZMQ selftest driver does not build"; logtail "$L/cc-czmq.log"
  fi

  echo "deb-test: $passes passed, $failures failed"
  [ $failures -eq 0 ]
  exit
fi

# -------------------------------------------------------------- host
[ $# -eq 3 ] || { echo "usage: $0 LIBOXMQ5_DEB LIBOXMQ_DEV_DEB STAGED_LIBRARY" >&2; exit 2; }
DEB5=$(realpath "$1") DEBDEV=$(realpath "$2") STAGED=$(realpath "$3")
[ "$(id -u)" -eq 0 ] || die "needs root (a mount namespace with overlays)"
host_state() {
  sha256sum "$SYSLIB"/libzmq.so.5.* 2>&1
  readlink "$SYSLIB/libzmq.so.5"
  dpkg -s libzmq5 2>&1 | grep -E '^(Status|Version):'
  # Only the packages this step touches: other programs may install packages
  # on the host meanwhile (a shared machine).
  dpkg-query -W -f '${Package}:${Architecture} ${Version} ${db:Status-Abbrev}\n' \
    libzmq5 libzmq3-dev liboxmq5 liboxmq-dev "${CONSUMERS[@]}" 2>&1 | sort
  ls -a /usr/.oxmq-deb-test-marker 2>&1
}
st=$(dpkg-query -W -f '${db:Status-Abbrev}' libzmq5 2>/dev/null)
[ "${st:0:2}" = ii ] || die "the host's libzmq5 is not installed (status '$st'): the step tests replacing it (make deb-deps installs it)"
rm -rf "$OUT"
mkdir -p "$OUT/input"
# The namespace reads its inputs from $OUT/input (by name).
cp "$DEB5" "$DEBDEV" "$OUT/input/"
cp "$STAGED" "$OUT/input/staged-$(basename "$STAGED")"
host_state > "$OUT/host-before.txt"
echo "==> host: $(head -1 "$OUT/host-before.txt"); libzmq5 $(dpkg -s libzmq5 | sed -n 's/^Version: //p')"
t0=$SECONDS
unshare --mount --net --propagation private -- "$0" --inside \
  "$(basename "$DEB5")" "$(basename "$DEBDEV")" "staged-$(basename "$STAGED")"
rc=$?
host_state > "$OUT/host-after.txt"
if diff "$OUT/host-before.txt" "$OUT/host-after.txt" > "$OUT/host-diff.txt"; then
  echo "PASS host unchanged: $(head -1 "$OUT/host-after.txt"); libzmq5 $(dpkg -s libzmq5 | sed -n 's/^Status: //p'), $(wc -l < "$OUT/host-after.txt") lines of dpkg state equal"
else
  echo "FAIL the host changed:"; sed 's/^/    /' "$OUT/host-diff.txt" | head -20; rc=1
fi
echo "==> deb-test: $((SECONDS - t0))s in the namespace and after"
exit $rc
