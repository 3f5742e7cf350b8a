# Draft DGRAM over udp:// (issue 13): the C API on oxmq and on Debian's
# libzmq (DGRAM by number); oxmq with Debian's libzmq and with npm zeromq 6's
# libzmq 4.3.5 (drafts) across processes both ways; every option on DGRAM
# against pyzmq's libzmq 4.3.5 and Debian's; DGRAM over tcp/ipc/inproc on
# oxmq, pyzmq's libzmq and Debian's (tests/interop/dgram/stream_transports.py). Rust tests are
# crates/oxmq/tests/dgram.rs; Python's (with pyzmq's libzmq 4.3.5 as the
# peer) python/tests/test_dgram.py.

.PHONY: dgram-test

# (target/options is mk/options.mk's OPTIONS_OUT, spelled out so that this file
# does not depend on the order make reads mk/ in.)
dgram-test: capi-progs venv target/options/optdump
	@echo "==> tests/interop/dgram/run.sh"
	@CAPI_BIN=$(CAPI_BIN) CAPI_LIB=$(CAPI_OUT)/libzmq.so.5 OPTDUMP=target/options/optdump VENV_PY=$(VENV_PY) tests/interop/dgram/run.sh

TEST_STEPS += dgram-test
