# STREAM sockets against real libzmq (issue 13): oxmq's STREAM and libzmq's
# STREAM over raw TCP, each binding once while the other connects (connect and
# disconnect notices, data both ways, closing by an empty frame). The libzmq
# side is the venv's pyzmq; the oxmq side is Debian's python3-zmq on oxmq's
# libzmq.so.5.

DEB_PKGS += python3-zmq

.PHONY: stream-interop

stream-interop: capi venv
	@echo "==> $(VENV_PY) tests/interop/stream/interop.py $(CAPI_OUT)"
	@$(VENV_PY) tests/interop/stream/interop.py $(CAPI_OUT)

TEST_STEPS += stream-interop
