# libzmq's own test programs (issue 23), run on the real libzmq built from the
# same source and on oxmq's libzmq.so.5 in the same step.
# tests/compat/libzmq_suite/build.sh fetches libzmq 4.3.5's source from crates.io
# (the zeromq-src crate vendors libzmq's release tree with its tests/) and
# builds libzmq and its tests/ once into target/libzmq-suite (CURVE via
# libsodium, OpenPGM, NORM and GSSAPI as in Debian's build, no TIPC, drafts off, no RPATH); run.py runs every program on both
# libraries with a per-program timeout and prints
#   libzmq tests: oxmq N passed of M that pass on libzmq 4.3.5
# It fails on a case not in tests/compat/libzmq_suite/known-differences.txt (each
# entry with its reason) and on an entry there that no longer fails.
#
#   make libzmq-suite
#   make libzmq-suite LIBZMQ_SUITE_ARGS="--only test_stream --oxmq-only"

DEB_PKGS += cmake g++ make libsodium-dev pkg-config libpgm-dev libnorm-dev libkrb5-dev
LIBZMQ_SUITE_CACHE := target/libzmq-suite
LIBZMQ_SUITE_ARGS ?=

.PHONY: libzmq-suite libzmq-suite-build

libzmq-suite-build:
	@tests/compat/libzmq_suite/build.sh $(LIBZMQ_SUITE_CACHE)

libzmq-suite: capi libzmq-suite-build
	@echo "==> $(PYTHON) tests/compat/libzmq_suite/run.py --cache $(LIBZMQ_SUITE_CACHE) $(LIBZMQ_SUITE_ARGS)"
	@$(PYTHON) tests/compat/libzmq_suite/run.py --cache $(LIBZMQ_SUITE_CACHE) --oxmq-lib $(CAPI_OUT) $(LIBZMQ_SUITE_ARGS)

TEST_STEPS += libzmq-suite
