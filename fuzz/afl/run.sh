#!/usr/bin/env bash
# make fuzz SECONDS=N: one AFL++ campaign per target, one after another, each
# for N seconds at nice 19; then the queue is minimised (afl-cmin) into
# fuzz/corpus/<target>/afl-* (the seed-* files stay), crashes are copied to
# fuzz/regressions/<target>/ and make the run fail. A summary line per target
# is printed and appended to fuzz/afl/campaigns.log.
#
#   fuzz/afl/run.sh SECONDS [target...]
#
# With FUZZ_EXECS=N set, each campaign runs until about N executions instead
# (afl-fuzz -E), with SECONDS as an upper bound on its time.
set -euo pipefail
cd "$(dirname "$0")"
SECONDS_PER=${1:?seconds per target}
shift
TARGETS=${*:-decoder handshake greeting mechanism capi_msg plain curve}
OUT=out
# cargo-afl's own AFL++ tools first: its afl-cmin needs the afl-showmap of the
# same release, not an older one from the system (Debian's afl++ 4.04c).
AFL_BIN=$(ls -d "$HOME"/.local/share/afl.rs/rustc-"$(rustc -V | awk '{print $2}')"-*/afl.rs-*/afl/bin 2>/dev/null | head -1)
[ -n "$AFL_BIN" ] && export PATH="$AFL_BIN:$PATH"
export AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1 AFL_QUIET=1

echo "==> cargo afl build --release --features afl-bins"
nice -n 10 cargo afl build --release --features afl-bins

failed=0
for t in $TARGETS; do
  if [ "${FUZZ_SKIP_RUN:-0}" = 1 ] && [ -d "$OUT/$t/default/queue" ]; then
    echo "==> $t: minimising the existing campaign in $OUT/$t"
  else
  rm -rf "$OUT/$t"
  mkdir -p "$OUT/$t"
  echo "==> fuzz $t for ${SECONDS_PER}s (nice 19)"
  limit=(-V "$SECONDS_PER")
  [ -n "${FUZZ_EXECS:-}" ] && limit+=(-E "$FUZZ_EXECS")
  nice -n 19 cargo afl fuzz "${limit[@]}" -i "../corpus/$t" -o "$OUT/$t" "target/release/$t" \
    > "$OUT/$t/afl.log" 2>&1 || { echo "afl-fuzz failed for $t:"; tail -20 "$OUT/$t/afl.log"; exit 1; }
  fi
  stats="$OUT/$t/default/fuzzer_stats"
  ran=$(awk -F: '/^run_time/{gsub(/ /,"",$2); print $2}' "$stats")
  execs=$(awk -F: '/^execs_done/{gsub(/ /,"",$2); print $2}' "$stats")
  speed=$(awk -F: '/^execs_per_sec/{gsub(/ /,"",$2); print $2}' "$stats")
  cvg=$(awk -F: '/^bitmap_cvg/{gsub(/ /,"",$2); print $2}' "$stats")
  crashes=$(find "$OUT/$t/default/crashes" -name 'id:*' | wc -l)
  hangs=$(find "$OUT/$t/default/hangs" -name 'id:*' | wc -l)
  queue=$(find "$OUT/$t/default/queue" -maxdepth 1 -name 'id:*' | wc -l)
  # Minimise the queue into the committed corpus.
  rm -rf "$OUT/$t/cmin"
  # The bash afl-cmin: cargo-afl's afl-cmin.py found no tuples in persistent-mode traces here.
  CMIN="cargo afl cmin"
  [ -n "$AFL_BIN" ] && [ -x "$AFL_BIN/afl-cmin.bash" ] && CMIN="$AFL_BIN/afl-cmin.bash"
  nice -n 19 $CMIN -i "$OUT/$t/default/queue" -o "$OUT/$t/cmin" -- "target/release/$t" \
    > "$OUT/$t/cmin.log" 2>&1 || { echo "afl-cmin failed for $t:"; tail -20 "$OUT/$t/cmin.log"; exit 1; }
  rm -f ../corpus/"$t"/afl-*
  for f in "$OUT/$t/cmin"/*; do
    [ -f "$f" ] || continue
    h=$(sha1sum "$f" | cut -c1-12)
    cp "$f" "../corpus/$t/afl-$h"
  done
  kept=$(find "../corpus/$t" -name 'afl-*' | wc -l)
  for f in "$OUT/$t/default/crashes"/id:* "$OUT/$t/default/hangs"/id:*; do
    [ -f "$f" ] || continue
    mkdir -p "../regressions/$t"
    cp "$f" "../regressions/$t/crash-$(sha1sum "$f" | cut -c1-12)"
    failed=1
  done
  line="fuzz: $t: $execs execs in ${ran}s ($speed/s under load, nice 19), coverage $cvg, $crashes crashes, $hangs hangs, queue $queue -> $kept minimised"
  echo "$line"
  echo "$(date -u +%FT%TZ) $line" >> campaigns.log
done
if [ "$failed" -ne 0 ]; then
  echo "fuzz: crashes or hangs saved under fuzz/regressions/: make each a named test" >&2
  exit 1
fi
