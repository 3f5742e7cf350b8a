# Draft RADIO/DISH and udp:// (issue 13): the C API on oxmq, every option on
# RADIO/DISH against Debian's libzmq (which creates them by number), its RADIO
# over udp, and libzmq 4.3.5 built with drafts (npm's `zeromq` 6,
# installed under target/ at test time) both ways over tcp, ipc, udp and
# multicast on lo. A peer that cannot be installed is skipped with the reason.

DEB_PKGS += nodejs
# Debian's npm only where node has none: NodeSource's nodejs bundles npm and
# conflicts with Debian's package.
ifeq ($(shell command -v npm 2>/dev/null),)
DEB_PKGS += npm
endif

.PHONY: radio-dish-test

radio-dish-test: capi-progs $(OPTIONS_OUT)/optdump
	@echo "==> tests/interop/radio_dish/run.sh"
	@CAPI_BIN=$(CAPI_BIN) CAPI_LIB=$(CAPI_OUT)/libzmq.so.5 OPTDUMP=$(OPTIONS_OUT)/optdump tests/interop/radio_dish/run.sh

TEST_STEPS += radio-dish-test

# libzmq 4.3.5's own udp tests (test_radio_dish, test_dgram), built with the
# draft API from the suite's cache and run on oxmq (libzmq-suite builds
# libzmq without drafts, so they are not in it).
.PHONY: libzmq-udp-drafts

libzmq-udp-drafts: capi libzmq-suite-build
	@echo "==> tests/compat/libzmq_suite/udp_drafts.sh $(LIBZMQ_SUITE_CACHE) $(CAPI_OUT)"
	@tests/compat/libzmq_suite/udp_drafts.sh $(LIBZMQ_SUITE_CACHE) $(CAPI_OUT)

TEST_STEPS += libzmq-udp-drafts
