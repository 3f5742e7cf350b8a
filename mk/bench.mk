# The benchmark suite (bench/, issue 5): the classic ZeroMQ studies side by
# side, oxmq vs libzmq, pyzmq, pyomq, Perl ZMQ::FFI and Ruby ffi-rzmq.
#
#   make bench-suite   build what the studies need, run them all (full counts),
#                      write bench/REPORT.md, bench/plots/*.png, bench/results.json
#   make bench-quick   the same with tiny counts (< 3 min) into bench/out/quick/
#   make bench-check   bench-quick, then assert the report and JSON are produced
#                      and well-formed (never a speed); part of `make test`
#
# QUICK=1 with bench-suite is the same as bench-quick. BENCH_STUDIES=1,2,8
# selects studies; BENCH_REPS and BENCH_TARGET_S override repetitions and the
# seconds per timed run. Sides whose implementation is missing (oxmq's C ABI,
# its Python package, a binding) are reported "not available (why)"; they
# light up when mk/capi.mk / mk/python.mk build them.

DEB_PKGS += libzmq3-dev pkg-config gcc libzmq-ffi-perl ruby-ffi-rzmq python3-zmq util-linux

BENCH_REQS := bench/requirements.txt
BENCH_STAMP := $(VENV)/.bench-requirements.stamp
BENCH_C_OUT := target/bench
BENCH_C_PROGS := callcost thr lat inproc_pair weather
BENCH_CC ?= gcc
BENCH_CFLAGS ?= -O2 -g -Wall -Wextra -std=gnu11 -pthread
BENCH_CAPI := target/release/capi
# Other components the studies light up with, when their make fragments exist.
BENCH_OPTIONAL := $(if $(wildcard mk/capi.mk),capi) $(if $(wildcard mk/python.mk),python-install)

.PHONY: bench-suite bench-quick bench-check bench-build bench-venv bench-c bench-rust

bench-venv: venv
	@if cmp -s $(BENCH_REQS) $(BENCH_STAMP); then \
	  echo "==> bench requirements up to date ($(BENCH_REQS) unchanged)"; \
	else \
	  echo "==> pip install -r $(BENCH_REQS)"; \
	  $(VENV_PY) -m pip install -q --disable-pip-version-check -r $(BENCH_REQS); \
	  cp $(BENCH_REQS) $(BENCH_STAMP); \
	fi

# The same C sources, built against Debian libzmq and (when it exists) against
# oxmq's zmq.h + libzmq.so.5 (rpath, so no LD_LIBRARY_PATH is needed).
bench-c:
	@mkdir -p $(BENCH_C_OUT)/c-libzmq $(BENCH_C_OUT)/c-oxmq
	@echo "==> bench/c against Debian libzmq $$(pkg-config --modversion libzmq) -> $(BENCH_C_OUT)/c-libzmq"
	@for p in $(BENCH_C_PROGS); do \
	  [ $(BENCH_C_OUT)/c-libzmq/$$p -nt bench/c/$$p.c ] && [ $(BENCH_C_OUT)/c-libzmq/$$p -nt bench/c/common.h ] || \
	  $(BENCH_CC) $(BENCH_CFLAGS) -o $(BENCH_C_OUT)/c-libzmq/$$p bench/c/$$p.c $$(pkg-config --cflags --libs libzmq); \
	done
	@[ $(BENCH_C_OUT)/c-libzmq/physical -nt bench/c/physical.c ] || \
	  $(BENCH_CC) $(BENCH_CFLAGS) -o $(BENCH_C_OUT)/c-libzmq/physical bench/c/physical.c
	@if [ -e $(BENCH_CAPI)/libzmq.so.5 ] && [ -e $(BENCH_CAPI)/include/zmq.h ]; then \
	  echo "==> bench/c against oxmq's C ABI ($(BENCH_CAPI)) -> $(BENCH_C_OUT)/c-oxmq"; \
	  for p in $(BENCH_C_PROGS); do \
	    [ $(BENCH_C_OUT)/c-oxmq/$$p -nt bench/c/$$p.c ] && [ $(BENCH_C_OUT)/c-oxmq/$$p -nt bench/c/common.h ] && \
	    [ $(BENCH_C_OUT)/c-oxmq/$$p -nt $(BENCH_CAPI)/include/zmq.h ] || \
	    $(BENCH_CC) $(BENCH_CFLAGS) -o $(BENCH_C_OUT)/c-oxmq/$$p bench/c/$$p.c \
	      -I$(BENCH_CAPI)/include -L$(BENCH_CAPI) -Wl,-rpath,$(abspath $(BENCH_CAPI)) -lzmq; \
	  done; \
	else \
	  echo "==> oxmq's C ABI not built ($(BENCH_CAPI)/libzmq.so.5): its C sides will be reported not available"; \
	  rm -f $(addprefix $(BENCH_C_OUT)/c-oxmq/,$(BENCH_C_PROGS)); \
	fi

bench-rust:
	@echo "==> cargo build --release --example bench_oxmq -p oxmq"
	@$(CARGO) build --release --example bench_oxmq -p oxmq

bench-build: deb-deps bench-venv $(BENCH_OPTIONAL) bench-c bench-rust

bench-suite: bench-build
	@echo "==> $(VENV_PY) bench/run.py $(if $(filter-out 0,$(QUICK)),--quick)"
	@$(VENV_PY) bench/run.py $(if $(filter-out 0,$(QUICK)),--quick)

bench-quick: bench-build
	@echo "==> $(VENV_PY) bench/run.py --quick"
	@$(VENV_PY) bench/run.py --quick

bench-check: bench-quick
	@echo "==> $(VENV_PY) bench/check.py bench/out/quick"
	@$(VENV_PY) bench/check.py bench/out/quick

TEST_STEPS += bench-check
