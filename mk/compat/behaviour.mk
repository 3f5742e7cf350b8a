# libzmq behaviours programs rely on (issue 13, section 7): fork, ipc rebind,
# endpoint forms (IPv6 literals, src;dst, wildcard unbind, long ipc paths),
# HWMs changed after connect, RCVMORE sizing, ZMQ_FD readiness in poll(2) and
# zmq_poll, udp's LAST_ENDPOINT and unbind/disconnect. tests/compat/behaviour/compatprobe.c prints one line per probe; oxmq's
# libzmq.so.5 must print exactly what pyzmq's bundled libzmq 4.3.5 prints
# (and Debian's 4.3.4, when installed). Then tests/compat/behaviour/zmtp20_peer.py, a
# ZMTP/2.0 peer on raw TCP (libzmq 3.x's greeting and framing), against each
# library: same answers required, and a script that crashes, times out or
# answers no probe fails on any library. Then tests/compat/behaviour/zmtp10_peer.py, a ZMTP/1.0
# peer (libzmq 2.x's unversioned identity frame and RFC 13 framing), the same
# way; its answers are printed.
#
#   make compat-test

DEB_PKGS += libzmq5 gcc

COMPAT_OUT := target/compat

.PHONY: compat-test

$(COMPAT_OUT)/compatprobe: tests/compat/behaviour/compatprobe.c
	@mkdir -p $(COMPAT_OUT)
	gcc -O1 -g -Wall -Wextra -Werror -std=gnu11 -o $@ $< -ldl

compat-test: capi venv $(COMPAT_OUT)/compatprobe
	@set -e; \
	py_lib=$$($(VENV_PY) -c 'import glob, os, zmq; d = os.path.join(os.path.dirname(zmq.__file__), os.pardir, "pyzmq.libs"); print((glob.glob(os.path.join(d, "libzmq*.so*")) or [""])[0])'); \
	sys_lib=$$(ldconfig -p | awk '$$1 == "libzmq.so.5" && !f {print $$NF; f = 1}'); \
	echo "==> compat: oxmq's libzmq.so.5 vs pyzmq's libzmq ($${py_lib:-none}) and Debian's ($${sys_lib:-none})"; \
	$(COMPAT_OUT)/compatprobe $(CAPI_OUT)/libzmq.so.5 > $(COMPAT_OUT)/oxmq.txt; \
	rc=0; \
	for ref in "$$py_lib" "$$sys_lib"; do \
	  [ -n "$$ref" ] || continue; \
	  $(COMPAT_OUT)/compatprobe "$$ref" > $(COMPAT_OUT)/ref.txt; \
	  if diff $(COMPAT_OUT)/ref.txt $(COMPAT_OUT)/oxmq.txt; then \
	    echo "    $$(wc -l < $(COMPAT_OUT)/oxmq.txt) probes: same answers as $$ref"; \
	  else echo "    compat: oxmq differs from $$ref (< libzmq, > oxmq)"; rc=1; fi; \
	done; \
	for v in 20 10; do \
	echo "==> ZMTP/$${v%0}.0 byte peer (tests/compat/behaviour/zmtp$${v}_peer.py) against oxmq and the same libraries"; \
	for lib in oxmq "$$py_lib" "$$sys_lib"; do \
	  [ -n "$$lib" ] || continue; \
	  out=$(COMPAT_OUT)/zmtp$$v-ref.txt; path=$$lib; \
	  if [ "$$lib" = oxmq ]; then out=$(COMPAT_OUT)/zmtp$$v-oxmq.txt; path=$(CAPI_OUT)/libzmq.so.5; fi; \
	  st=0; timeout 120 $(VENV_PY) tests/compat/behaviour/zmtp$${v}_peer.py "$$path" > $$out 2> $(COMPAT_OUT)/zmtp$$v-stderr.txt || st=$$?; \
	  n=$$(wc -l < $$out); \
	  if [ $$st -ne 0 ] || [ $$n -eq 0 ]; then \
	    echo "    zmtp$$v on $$lib: exit status $$st, $$n probe lines (a crash, a timeout or no probe answered):"; \
	    tail -n 5 $$out $(COMPAT_OUT)/zmtp$$v-stderr.txt | sed 's/^/      /'; rc=1; continue; \
	  fi; \
	  [ $$v = 20 ] || [ "$$lib" != oxmq ] || sed 's/^/    oxmq: /' $$out; \
	  [ "$$lib" = oxmq ] && continue; \
	  if diff $(COMPAT_OUT)/zmtp$$v-ref.txt $(COMPAT_OUT)/zmtp$$v-oxmq.txt; then \
	    echo "    $$n probes: same answers as $$lib"; \
	  else echo "    zmtp$$v: oxmq differs from $$lib (< libzmq, > oxmq)"; rc=1; fi; \
	done; \
	done; \
	[ -n "$$py_lib" ] || { echo "compat: pyzmq's bundled libzmq not found"; rc=1; }; \
	exit $$rc

TEST_STEPS += compat-test
