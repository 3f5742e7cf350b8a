# Real bindings, unchanged, on oxmq's drop-in libzmq.so.5 (issue 4):
# Debian's python3-zmq (pyzmq on the system libzmq, run by /usr/bin/python3),
# Perl ZMQ::FFI and Ruby ffi-rzmq, plus a mixed Perl-on-oxmq <-> pyzmq-on-real-
# libzmq test. tests/compat/bindings/run.sh points each binding at target/release/capi
# (LD_LIBRARY_PATH for Python and Ruby, FFI_CHECKLIB_PATH for Perl) and checks
# inside every process that the libzmq it mapped is ours.
#
#   make bindings-test        run every script on oxmq's libzmq.so.5
#   make bindings-test-both   the same, each script first on the system libzmq

DEB_PKGS += python3-zmq libzmq-ffi-perl ruby-ffi-rzmq libanyevent-perl libev-perl \
            python3-pytest python3-pytest-timeout

BINDINGS_LIBDIR := target/release/capi
BINDINGS_ARGS ?=

.PHONY: bindings-test bindings-test-both

bindings-test: capi venv
	@echo "==> tests/compat/bindings/run.sh $(BINDINGS_ARGS) $(BINDINGS_LIBDIR)"
	@tests/compat/bindings/run.sh $(BINDINGS_ARGS) $(BINDINGS_LIBDIR)

bindings-test-both: BINDINGS_ARGS += --both
bindings-test-both: bindings-test

TEST_STEPS += bindings-test
