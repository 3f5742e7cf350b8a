# Draft thread-safe sockets (issue 13: CLIENT/SERVER, SCATTER/GATHER,
# PEER/CHANNEL, zmq_poller). The C API test (tests/interop/capi/draft_api.c) runs in
# capi-test; this step runs oxmq against npm's zeromq v6, whose libzmq has
# the draft API (a failure when node/npm or the package cannot be had: make
# test installs node and npm). Debian's libzmq cannot be a draft peer (see tests/interop/draft/interop.sh).

.PHONY: draft-interop draft-options

draft-interop: capi-progs
	@echo "==> tests/interop/draft/interop.sh $(CAPI_BIN)"
	@tests/interop/draft/interop.sh $(CAPI_BIN)

# Every option read and written on each draft type oxmq has, through oxmq and
# through pyzmq's libzmq 4.3.5 (which creates these sockets by number even
# without the draft API): THREAD_SAFE 1, no FD, the rest as on other types.
# GSSAPI's options (62-65, 90-91) are left out: oxmq has GSSAPI as Debian's
# libzmq5 does, pyzmq's build has not (make options-test does the same).
draft-options: capi venv target/options/optdump
	@set -e; \
	py_lib=$$($(VENV_PY) -c 'import glob, os, zmq; d = os.path.join(os.path.dirname(zmq.__file__), os.pardir, "pyzmq.libs"); print((glob.glob(os.path.join(d, "libzmq*.so*")) or [""])[0])'); \
	if [ -z "$$py_lib" ]; then echo "draft options: pyzmq's bundled libzmq not found in the venv"; exit 1; fi; \
	$(OPTIONS_OUT)/optdump $(CAPI_OUT)/libzmq.so.5 > $(OPTIONS_OUT)/draft-oxmq.txt; \
	$(OPTIONS_OUT)/optdump "$$py_lib" > $(OPTIONS_OUT)/draft-libzmq.txt; \
	for t in 12 13 16 17 19 20; do \
	  echo "==> draft options, socket type $$t:"; \
	  $(PYTHON) tests/options/compare.py $(OPTIONS_OUT)/draft-oxmq.txt $(OPTIONS_OUT)/draft-libzmq.txt \
	    --name "libzmq 4.3.5 (pyzmq)" --types $$t --build-differs 62,63,64,65,90,91; \
	done

TEST_STEPS += draft-interop draft-options
