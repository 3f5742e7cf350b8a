#!/usr/bin/env bash
# libzmq 4.3.5's own udp tests, test_radio_dish and test_dgram, on oxmq's
# libzmq.so.5. They need the draft API (RADIO, DISH, DGRAM, zmq_join), so
# `make libzmq-suite`, which builds libzmq without drafts, has neither: this
# builds their unmodified sources from the suite's cache with
# ZMQ_BUILD_DRAFT_API (drafts.sh) and links them to oxmq only.
# Fails on any failing case; an IGNORE (no IPv6, no multicast here) is
# recorded as a skip with libzmq's reason.
#
#   usage: tests/compat/libzmq_suite/udp_drafts.sh CACHE OXMQ_LIB_DIR
set -euo pipefail
cd "$(dirname "$0")/../../.."
. tests/lib.sh
. tests/compat/libzmq_suite/drafts.sh
STEP=libzmq-udp-drafts
drafts_init "${1:-}" "${2:-}" udp_drafts.sh
status=0
for t in test_radio_dish test_dgram; do
    draft_build "$t" "$SRC/tests/$t.cpp"
    draft_run "$t" "$t" || status=1
done
exit $status
