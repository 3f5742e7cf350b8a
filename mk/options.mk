# Socket and context options against real libzmq (issue 13).
#
#   make options-test   read and write every option (0..130) on every socket
#                       type, and the context options, through oxmq's
#                       libzmq.so.5 and through real libzmq: pyzmq's bundled
#                       4.3.5 (the version oxmq claims) and Debian's 4.3.4;
#                       every probe must match (tests/options/compare.py lists
#                       the known differences with their reasons). Then the
#                       SUB/XSUB dangling-connect ctx_term regression test on both,
#                       and message corners (tests/options/msgprobe.c) vs pyzmq's,
#                       and what options do (tests/options/behave.c: XPUB_MANUAL,
#                       send-side CONFLATE, ...) as a transcript diffed with pyzmq's,
#                       and SOCKS_PROXY's bytes on the wire (tests/options/socks.py).

DEB_PKGS += libzmq5 gcc

OPTIONS_OUT := target/options
OPTIONS_CC ?= gcc
OPTIONS_CFLAGS ?= -O1 -g -Wall -Wextra -Werror -std=gnu11

.PHONY: options-test

$(OPTIONS_OUT)/%: tests/options/%.c
	@mkdir -p $(OPTIONS_OUT)
	$(OPTIONS_CC) $(OPTIONS_CFLAGS) -o $@ $< -ldl

options-test: capi venv $(OPTIONS_OUT)/optdump $(OPTIONS_OUT)/sub_term $(OPTIONS_OUT)/msgprobe $(OPTIONS_OUT)/behave
	@set -e; \
	sys_lib=$$(ldconfig -p | awk '$$1 == "libzmq.so.5" && !f {print $$NF; f = 1}'); \
	py_lib=$$($(VENV_PY) -c 'import glob, os, zmq; d = os.path.join(os.path.dirname(zmq.__file__), os.pardir, "pyzmq.libs"); print((glob.glob(os.path.join(d, "libzmq*.so*")) or [""])[0])'); \
	echo "==> options: oxmq $(CAPI_OUT)/libzmq.so.5 vs pyzmq's libzmq ($${py_lib:-none}) and Debian's ($${sys_lib:-none})"; \
	$(OPTIONS_OUT)/optdump $(CAPI_OUT)/libzmq.so.5 > $(OPTIONS_OUT)/oxmq.txt; \
	rc=0; \
	if [ -n "$$py_lib" ]; then \
	  $(OPTIONS_OUT)/optdump "$$py_lib" > $(OPTIONS_OUT)/pyzmq-libzmq.txt; \
	  $(PYTHON) tests/options/compare.py $(OPTIONS_OUT)/oxmq.txt $(OPTIONS_OUT)/pyzmq-libzmq.txt \
	    --name "libzmq $$($(VENV_PY) -c 'import zmq; print(zmq.zmq_version())') (pyzmq)" || rc=1; \
	else echo "options: pyzmq's bundled libzmq not found"; rc=1; fi; \
	$(OPTIONS_OUT)/optdump "$$sys_lib" > $(OPTIONS_OUT)/debian-libzmq.txt; \
	$(PYTHON) tests/options/compare.py $(OPTIONS_OUT)/oxmq.txt $(OPTIONS_OUT)/debian-libzmq.txt \
	  --name "libzmq $$(pkg-config --modversion libzmq) (Debian)" \
	  --build-differs 62,63,64,65,90,91,116 || rc=1; \
	echo "==> message corners (ZMQ_SHARED, zmq_recviov checks, z85 errno, zmq_has): oxmq vs pyzmq's libzmq"; \
	$(OPTIONS_OUT)/msgprobe $(CAPI_OUT)/libzmq.so.5 > $(OPTIONS_OUT)/msg-oxmq.txt; \
	if [ -n "$$py_lib" ]; then \
	  $(OPTIONS_OUT)/msgprobe "$$py_lib" > $(OPTIONS_OUT)/msg-libzmq.txt; \
	  echo "    (known: oxmq has no TIPC transport, so zmq_has(\"tipc\") is 0 where this libzmq says 1)"; \
	  echo "    (known: oxmq has pgm and norm, as Debian's libzmq5, so zmq_has says 1 where this libzmq says 0)"; \
	  echo "    (known: oxmq has ws/wss, so zmq_has(\"ws\"/\"wss\") is 1 where this libzmq, built without drafts, says 0)"; \
	  if diff <(grep -v '^has \(tipc\|wss\?\|pgm\|norm\) ' $(OPTIONS_OUT)/msg-oxmq.txt) <(grep -v '^has \(tipc\|wss\?\|pgm\|norm\) ' $(OPTIONS_OUT)/msg-libzmq.txt); then \
	    echo "    $$(wc -l < $(OPTIONS_OUT)/msg-oxmq.txt) probes: same answers"; else rc=1; fi; \
	fi; \
	echo "==> what options do (XPUB_MANUAL...; tests/options/behave.c): oxmq's transcript vs pyzmq's libzmq's"; \
	if [ -n "$$py_lib" ]; then \
	  $(OPTIONS_OUT)/behave $(CAPI_OUT)/libzmq.so.5 > $(OPTIONS_OUT)/behave-oxmq.txt || rc=1; \
	  $(OPTIONS_OUT)/behave "$$py_lib" > $(OPTIONS_OUT)/behave-libzmq.txt || rc=1; \
	  if diff $(OPTIONS_OUT)/behave-oxmq.txt $(OPTIONS_OUT)/behave-libzmq.txt; then \
	    echo "    $$(wc -l < $(OPTIONS_OUT)/behave-oxmq.txt) steps: same transcript"; else rc=1; fi; \
	fi; \
	echo "==> SOCKS_PROXY through a SOCKS5 proxy on loopback (tests/options/socks.py): oxmq vs pyzmq's libzmq"; \
	if [ -n "$$py_lib" ]; then \
	  timeout 120 $(VENV_PY) tests/options/socks.py $(CAPI_OUT)/libzmq.so.5 "$$py_lib" || rc=1; \
	fi; \
	echo "==> SUB/XSUB with a dangling tcp connect and a subscription: ctx_term returns (oxmq, then Debian libzmq)"; \
	$(OPTIONS_OUT)/sub_term $(CAPI_OUT)/libzmq.so.5 || rc=1; \
	$(OPTIONS_OUT)/sub_term "$$sys_lib" || rc=1; \
	exit $$rc

TEST_STEPS += options-test
