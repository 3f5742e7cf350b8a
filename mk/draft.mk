# Draft thread-safe sockets (issue 13: CLIENT/SERVER, SCATTER/GATHER,
# PEER/CHANNEL, zmq_poller). The C API test (tests/capi/draft_api.c) runs in
# capi-test; this step runs oxmq against npm's zeromq v6, whose libzmq has
# the draft API (skipped with the reason when node/npm or the package cannot
# be had). Debian's libzmq cannot be a draft peer (see tests/draft/interop.sh).

.PHONY: draft-interop

draft-interop: capi-progs
	@echo "==> tests/draft/interop.sh $(CAPI_BIN)"
	@tests/draft/interop.sh $(CAPI_BIN)

TEST_STEPS += draft-interop
