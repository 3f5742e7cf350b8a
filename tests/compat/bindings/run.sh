#!/usr/bin/env bash
# Real bindings, unchanged, on a libzmq.so.5 drop-in.
#
#   tests/compat/bindings/run.sh [--both] [--only REGEX] [--timeout SECS] LIBDIR
#
# LIBDIR holds the libzmq.so.5 under test (oxmq: target/release/capi).
# Every script runs against it; with --both each one first runs against the
# system libzmq (Debian's libzmq5), a sanity check of the scripts themselves.
#
# How each binding is pointed at LIBDIR (no binding is modified):
#   python3 (Debian python3-zmq, /usr/bin/python3): its Cython extensions have
#       NEEDED libzmq.so.5 and no RPATH  -> LD_LIBRARY_PATH=LIBDIR
#   ruby (Debian ffi-rzmq-core): ffi_lib 'libzmq.so.5', a dlopen by soname
#                                        -> LD_LIBRARY_PATH=LIBDIR
#   perl (ZMQ::FFI via FFI::CheckLib::find_lib): searches FFI_CHECKLIB_PATH
#       first, then the system dirs, and only *then* LD_LIBRARY_PATH (so
#       LD_LIBRARY_PATH alone would still load /usr/lib/.../libzmq.so.5)
#                                        -> FFI_CHECKLIB_PATH=LIBDIR
#   mixed: the Perl peer gets FFI_CHECKLIB_PATH=LIBDIR; the Python side
#       (.venv pyzmq with its bundled libzmq 4.3.5, else Debian's python3-zmq
#       on the system libzmq) runs with LD_LIBRARY_PATH unset.
#
# Every script prints LIBZMQ_MAPPED=<path> for each libzmq it has mapped (read
# from /proc/self/maps inside the process, after loading the binding). A run
# passes only if the script exits 0 AND every such path is the expected
# library (inside LIBDIR for the library under test, the system libzmq for the
# sanity run) AND there was at least one.
#
# Logs: target/bindings/<system|oxmq>/<script>.log. Exit status: non-zero if
# any run fails (under test, or in the sanity run).

set -u -o pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)

BOTH=0
ONLY=''
TIMEOUT=180
while [ $# -gt 0 ]; do
  case "$1" in
    --both) BOTH=1; shift ;;
    --only) ONLY=$2; shift 2 ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    --) shift; break ;;
    -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
if [ $# -ne 1 ]; then
  echo "usage: $0 [--both] [--only REGEX] [--timeout SECS] LIBDIR" >&2
  exit 2
fi
LIBDIR=$(cd "$1" 2>/dev/null && pwd) || { echo "run.sh: no such directory: $1" >&2; exit 2; }
if [ ! -e "$LIBDIR/libzmq.so.5" ]; then
  echo "run.sh: $LIBDIR/libzmq.so.5 does not exist (build it first: make capi)" >&2
  exit 2
fi
LIBDIR_REAL=$(realpath "$LIBDIR")

SYS_PY=/usr/bin/python3
VENV_PY="$ROOT/.venv/bin/python"
if [ -x "$VENV_PY" ] && "$VENV_PY" -c 'import zmq' >/dev/null 2>&1; then
  MIXED_PY=$VENV_PY
else
  MIXED_PY=$SYS_PY
fi
SYS_LIB=$(ldconfig -p | awk '$1 == "libzmq.so.5" && /x86-64|x86_64|64bit/ {print $NF; exit}')
[ -n "$SYS_LIB" ] || SYS_LIB=$(ldconfig -p | awk '$1 == "libzmq.so.5" {print $NF; exit}')
SYS_LIB_REAL=$( [ -n "$SYS_LIB" ] && realpath "$SYS_LIB" || echo /nonexistent)

# name | command (run from $ROOT)
SCRIPTS=(
  "perl/weather.pl|perl $HERE/perl/weather.pl"
  "perl/pushpull.pl|perl $HERE/perl/pushpull.pl"
  "perl/reqrep.pl|perl $HERE/perl/reqrep.pl"
  "perl/multipart.pl|perl $HERE/perl/multipart.pl"
  "perl/fdpoll.pl|perl $HERE/perl/fdpoll.pl"
  "perl/fd_anyevent.pl|perl $HERE/perl/fd_anyevent.pl"
  "ruby/reqrep.rb|ruby $HERE/ruby/reqrep.rb"
  "ruby/pushpull.rb|ruby $HERE/ruby/pushpull.rb"
  "ruby/poll.rb|ruby $HERE/ruby/poll.rb"
)
for f in "$HERE"/python3/test_*.py; do
  n=$(basename "$f")
  SCRIPTS+=("python3/$n|$SYS_PY -m pytest -c $HERE/python3/pytest.ini --rootdir $HERE/python3 $f")
done
SCRIPTS+=("mixed/mixed.py|$MIXED_PY $HERE/mixed/mixed.py")

LIBS=()
[ "$BOTH" = 1 ] && LIBS+=(system)
LIBS+=(oxmq)

LOGROOT="$ROOT/target/bindings"
declare -A RESULT DETAIL VERSION

# run_one LIB NAME CMD
run_one() {
  local lib=$1 name=$2 cmd=$3
  local log="$LOGROOT/$lib/${name//\//_}.log"
  mkdir -p "$LOGROOT/$lib"
  local -a envs=(env -u LD_LIBRARY_PATH -u FFI_CHECKLIB_PATH PYTHONDONTWRITEBYTECODE=1)
  if [ "$lib" = oxmq ]; then
    if [[ "$name" == mixed/* ]]; then
      envs+=(FFI_CHECKLIB_PATH="$LIBDIR")
    else
      envs+=(LD_LIBRARY_PATH="$LIBDIR" FFI_CHECKLIB_PATH="$LIBDIR")
    fi
  fi
  local t0=$SECONDS rc
  (cd "$ROOT" && "${envs[@]}" timeout -k 5 "$TIMEOUT" $cmd) >"$log" 2>&1 </dev/null
  rc=$?
  local secs=$((SECONDS - t0))

  # Which libzmq did the process(es) under test map?
  local mapped bad='' n=0 p rp
  mapped=$(sed -n 's/^LIBZMQ_MAPPED=//p' "$log" | sort -u)
  while IFS= read -r p; do
    [ -n "$p" ] || continue
    n=$((n + 1))
    rp=$(realpath -m "$p")
    if [ "$lib" = oxmq ]; then
      case "$rp" in "$LIBDIR_REAL"/*) ;; *) bad="$bad $p" ;; esac
    else
      [ "$rp" = "$SYS_LIB_REAL" ] || bad="$bad $p"
    fi
  done <<<"$mapped"
  VERSION[$lib]=${VERSION[$lib]:-$(sed -n 's/^ZMQ_VERSION=\([^ ]*\).*/\1/p' "$log" | head -1)}

  local summary
  summary=$(grep -E '^=+ .*(passed|failed|error).* =+$' "$log" | tail -1 | sed -E 's/^=+ //; s/ =+$//; s/ in [0-9.]+s.*//')
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    RESULT[$lib,$name]=FAIL; DETAIL[$lib,$name]="timeout ${TIMEOUT}s"
  elif [ $rc -ne 0 ]; then
    RESULT[$lib,$name]=FAIL; DETAIL[$lib,$name]="exit $rc${summary:+; $summary}"
  elif [ $n -eq 0 ]; then
    RESULT[$lib,$name]=FAIL; DETAIL[$lib,$name]="no LIBZMQ_MAPPED line"
  elif [ -n "$bad" ]; then
    RESULT[$lib,$name]=FAIL; DETAIL[$lib,$name]="wrong lib:$bad"
  else
    RESULT[$lib,$name]=PASS; DETAIL[$lib,$name]="${summary:-ok} (${secs}s)"
  fi
  printf '%-4s %-6s %-32s %s\n' "${RESULT[$lib,$name]}" "$lib" "$name" "${DETAIL[$lib,$name]}"
  if [ "${RESULT[$lib,$name]}" = FAIL ]; then
    echo "----- last lines of $log -----"
    tail -n 40 "$log" | sed 's/^/    /'
    echo "-----"
  fi
}

echo "==> bindings on $LIBDIR/libzmq.so.5 ($(basename "$(realpath "$LIBDIR/libzmq.so.5")"))"
echo "    system libzmq: ${SYS_LIB:-none}; mixed-test Python: $MIXED_PY"
for lib in "${LIBS[@]}"; do
  echo "==> library: $lib"
  for entry in "${SCRIPTS[@]}"; do
    name=${entry%%|*}
    cmd=${entry#*|}
    if [ -n "$ONLY" ] && ! [[ "$name" =~ $ONLY ]]; then continue; fi
    run_one "$lib" "$name" "$cmd"
  done
done

# Table.
echo
hdr=$(printf '%-32s' script)
for lib in "${LIBS[@]}"; do hdr+=$(printf ' | %-40s' "$lib ${VERSION[$lib]:-}"); done
echo "$hdr"
echo "$hdr" | sed 's/[^|]/-/g'
pass=0 fail=0 oxfail=0
for entry in "${SCRIPTS[@]}"; do
  name=${entry%%|*}
  if [ -n "$ONLY" ] && ! [[ "$name" =~ $ONLY ]]; then continue; fi
  row=$(printf '%-32s' "$name")
  for lib in "${LIBS[@]}"; do
    r=${RESULT[$lib,$name]}
    d=${DETAIL[$lib,$name]}
    row+=$(printf ' | %-40s' "$r ${d:0:35}")
    if [ "$r" = PASS ]; then pass=$((pass + 1)); else
      fail=$((fail + 1)); [ "$lib" = oxmq ] && oxfail=$((oxfail + 1)); fi
  done
  echo "$row"
done
echo
echo "logs: $LOGROOT/<library>/"
echo "bindings: $pass passed, $fail failed"
if [ $fail -ne 0 ]; then
  [ $oxfail -ne 0 ] && echo "==> FAIL: $oxfail binding script(s) failed on $LIBDIR/libzmq.so.5"
  exit 1
fi
exit 0
