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
# Its pipes-stats cases count on libzmq's acknowledgements, sent at
# multiples of the LWM only: oxmq's pipes to the I/O thread's engines
# acknowledge that way (PipeReader::set_acks_at_lwm), so each of the four
# connections takes exactly 1000 of the 4000 messages and the counts are
# libzmq's 0 and 500.
draft_run test_monitor_drafts test_monitor
