# Socket monitors, event version 2 (issue 25): libzmq 4.3.5's own
# test_monitor compiled with the draft API, run on oxmq (its versioned cases;
# `make libzmq-suite` builds libzmq without drafts, so they are not in it).
# The Rust, C, Python and Ruby tests of version 2 run in cargo-test,
# capi-test, python-test and ruby-test.

.PHONY: libzmq-monitor-drafts

libzmq-monitor-drafts: capi libzmq-suite-build
	@echo "==> tests/libzmq_suite/monitor_drafts.sh $(LIBZMQ_SUITE_CACHE) $(CAPI_OUT)"
	@tests/libzmq_suite/monitor_drafts.sh $(LIBZMQ_SUITE_CACHE) $(CAPI_OUT)

TEST_STEPS += libzmq-monitor-drafts
