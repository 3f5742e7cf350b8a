# The benchmark suite (bench/, issue 5): the classic ZeroMQ studies side by
# side, oxmq vs libzmq, pyzmq, pyomq, Perl ZMQ::FFI and Ruby ffi-rzmq.
#
#   make bench-suite   build what the studies need, run them all (full counts),
#                      write bench/REPORT.md, bench/plots/*.png, bench/results.json
#   make bench-quick   the same with tiny counts (< 3 min) into bench/out/quick/
#   make bench-check   bench/test_harness.py (the harness on fake figures), then
#                      bench-quick, then assert the report and JSON are produced
#                      and well-formed and every oxmq side has figures (never a
#                      speed); part of `make test`
#
# QUICK=1 with bench-suite is the same as bench-quick. BENCH_STUDY2_PARTS=ipc,threads
# runs only those groups of study 2 (merge a partial rerun with bench/merge_cells.py).
# BENCH_STUDIES=1,2,8
# selects studies; BENCH_REPS and BENCH_TARGET_S override repetitions and the
# seconds per timed run. Sides whose implementation is missing (oxmq's C ABI,
# its Python package, a binding) are reported "not available (why)"; they
# light up when mk/capi.mk / mk/python.mk build them.

DEB_PKGS += libzmq3-dev pkg-config gcc libzmq-ffi-perl ruby-ffi-rzmq python3-zmq util-linux iproute2 iputils-ping

BENCH_REQS := bench/requirements.txt
BENCH_STAMP := $(VENV)/.bench-requirements.stamp
BENCH_C_OUT := target/bench
BENCH_C_PROGS := callcost thr lat inproc_pair weather memq scale
BENCH_CC ?= gcc
BENCH_CFLAGS ?= -O2 -g -Wall -Wextra -std=gnu11 -pthread
BENCH_CAPI := target/release/capi
# Other components the studies light up with, when their make fragments exist.
BENCH_OPTIONAL := $(if $(wildcard mk/capi.mk),capi) $(if $(wildcard mk/python.mk),python-install)

.PHONY: bench-suite bench-quick bench-check bench-build bench-venv bench-c bench-c435 bench-rust

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

# CURVE's second C peer (issue 20): libzmq 4.3.5 on a current libsodium, the
# pair pyzmq's manylinux wheel bundles (pyzmq.libs/). bench/c links against
# that .so with Debian's zmq.h (the 4.3 ABI): copied from the venv's pyzmq
# when it is that wheel, else from a downloaded wheel (pip download, never
# installed), cached under target/bench. A failure is recorded and that side
# is reported not available.
ZMQ435_DIR := $(BENCH_C_OUT)/libzmq435
ZMQ435_STATUS := $(BENCH_C_OUT)/libzmq435-status.txt

bench-c435: bench-venv
	@mkdir -p $(ZMQ435_DIR)/c
	@if ! ls $(ZMQ435_DIR)/lib/libzmq-*.so.5* >/dev/null 2>&1; then \
	  echo "==> libzmq 4.3.5 + libsodium from pyzmq's manylinux wheel (the venv's, else pip download) -> $(ZMQ435_DIR)"; \
	  rm -rf $(ZMQ435_DIR)/wheel $(ZMQ435_DIR)/lib; \
	  if $(VENV_PY) -c 'import sys, shutil, pathlib, zmq; d = pathlib.Path(zmq.__file__).parent.parent / "pyzmq.libs"; \
	       assert zmq.zmq_version() == "4.3.5" and any(d.glob("libzmq-*.so.5*")); shutil.copytree(d, sys.argv[1]); \
	       print("pyzmq", zmq.__version__, "(the project venv)")' $(ZMQ435_DIR)/lib > $(ZMQ435_DIR)/wheel.txt 2>/dev/null; then :; \
	  elif $(VENV_PY) -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
	       -d $(ZMQ435_DIR)/wheel pyzmq >$(ZMQ435_DIR)/download.log 2>&1 && \
	     $(VENV_PY) -c 'import sys, zipfile, pathlib; w = next(pathlib.Path(sys.argv[1]).glob("pyzmq-*.whl")); \
	       z = zipfile.ZipFile(w); d = pathlib.Path(sys.argv[2]); d.mkdir(exist_ok=True); \
	       [(d / pathlib.Path(n).name).write_bytes(z.read(n)) for n in z.namelist() if ".libs/" in n]; \
	       print(w.name)' $(ZMQ435_DIR)/wheel $(ZMQ435_DIR)/lib > $(ZMQ435_DIR)/wheel.txt && \
	     ls $(ZMQ435_DIR)/lib/libzmq-*.so.5* >/dev/null 2>&1; then :; \
	  else echo "no libzmq 4.3.5: pip download pyzmq failed ($$(tail -n1 $(ZMQ435_DIR)/download.log | cut -c1-160))" \
	    > $(ZMQ435_STATUS); echo "    $$(cat $(ZMQ435_STATUS))"; exit 0; fi; \
	fi; \
	so=$$(ls $(ZMQ435_DIR)/lib/libzmq-*.so.5* | head -1); ln -sf $$(basename $$so) $(ZMQ435_DIR)/lib/libzmq.so; \
	sodium=$$(ls $(ZMQ435_DIR)/lib/ | grep -m1 libsodium); \
	echo "==> bench/c against libzmq 4.3.5 from $$(cat $(ZMQ435_DIR)/wheel.txt) ($$(basename $$so), $$sodium) -> $(ZMQ435_DIR)/c"; \
	for p in thr lat scale; do \
	  [ $(ZMQ435_DIR)/c/$$p -nt bench/c/$$p.c ] && [ $(ZMQ435_DIR)/c/$$p -nt bench/c/common.h ] || \
	  $(BENCH_CC) $(BENCH_CFLAGS) -o $(ZMQ435_DIR)/c/$$p bench/c/$$p.c $$(pkg-config --cflags libzmq) \
	    -L$(ZMQ435_DIR)/lib -Wl,-rpath,$(abspath $(ZMQ435_DIR)/lib) -lzmq || exit 1; \
	done; \
	sv=$$($(VENV_PY) -c 'import ctypes, sys; l = ctypes.CDLL(sys.argv[1]); f = l.sodium_version_string; \
	  f.restype = ctypes.c_char_p; print(f().decode())' $(ZMQ435_DIR)/lib/$$sodium 2>/dev/null || echo "?"); \
	echo "ok: libzmq 4.3.5, libsodium $$sv (from $$(cat $(ZMQ435_DIR)/wheel.txt))" > $(ZMQ435_STATUS)

bench-rust:
	@echo "==> cargo build --release --example bench_oxmq -p oxmq"
	@$(CARGO) build --release --example bench_oxmq -p oxmq

# Issue 12's peers, built for the full suite only (minutes of compiling, so not
# in bench-check): the Rust crates users would pick instead of oxmq and omq.rs's
# C ABI (bench/rust-peers, its own cargo workspace), and the Python studies on
# Python 3.12. Whatever fails to build is recorded with its reason and
# reported as not available; it never stops the suite.
PEERS_DIR := bench/rust-peers
PEERS_STATUS := $(BENCH_C_OUT)/rust-peers-status.json
OMQ_CAPI := $(BENCH_C_OUT)/omq-capi
VENV312 := .venv-bench312
VENV312_PY := $(VENV312)/bin/python
PY312_STATUS := $(BENCH_C_OUT)/py312-status.txt
BENCH_REQS312 := bench/requirements312.txt

.PHONY: bench-peers bench-rust-peers bench-py312

bench-rust-peers:
	@mkdir -p $(BENCH_C_OUT)
	@log=$(BENCH_C_OUT)/rust-peers-build.log; : > $$log; \
	why() { tail -n 40 $$log | grep -m1 -E '^error' | cut -c1-200 || echo "build failed (see $$log)"; }; \
	st_main=""; st_mono=""; st_omq=""; \
	echo "==> cargo build --release (bench/rust-peers: omq.rs, zmq.rs, rzmq)"; \
	if ! (cd $(PEERS_DIR) && $(CARGO) build --release --bin bench_rust_peers) >>$$log 2>&1; then \
	  st_main="failed to build: $$(why)"; echo "    $$st_main"; fi; \
	echo "==> cargo build --release --features monocoque --bin bench_monocoque (bench/rust-peers)"; \
	if ! (cd $(PEERS_DIR) && $(CARGO) build --release --features monocoque --bin bench_monocoque) >>$$log 2>&1; then \
	  st_mono="failed to build: $$(why)"; echo "    $$st_mono"; fi; \
	echo "==> cargo build --release -p omq-libzmq (omq.rs's C ABI) -> $(OMQ_CAPI)/libzmq.so.5"; \
	if (cd $(PEERS_DIR) && $(CARGO) build --release -p omq-libzmq) >>$$log 2>&1 && \
	   [ -e $(PEERS_DIR)/target/release/libomq_zmq.so ]; then \
	  mkdir -p $(OMQ_CAPI) && cp -f $(PEERS_DIR)/target/release/libomq_zmq.so $(OMQ_CAPI)/libzmq.so.5; \
	else st_omq="failed to build: $$(why)"; echo "    $$st_omq"; rm -f $(OMQ_CAPI)/libzmq.so.5; fi; \
	ver() { (cd $(PEERS_DIR) && $(CARGO) tree -e normal --depth 1 --features monocoque 2>/dev/null) | \
	  grep -oE "$$1 v[0-9.]+" | head -1; }; \
	$(VENV_PY) -c 'import json,sys; a=sys.argv[1:]; print(json.dumps(dict(zip(a[0::2],a[1::2])), indent=1))' \
	  omq "$$st_main" zeromq "$$st_main" rzmq "$$st_main" monocoque "$$st_mono" omq-libzmq "$$st_omq" \
	  omq-libzmq-version "$$(ver omq-libzmq)" \
	  crates-version "$$(ver omq-tokio), $$(ver zeromq), $$(ver rzmq), $$(ver monocoque-rs)" > $(PEERS_STATUS)

bench-py312: venv wheel
	@mkdir -p $(BENCH_C_OUT)
	@py=""; for c in $$(command -v python3.12) $$(ls -d $${PYENV_ROOT:-$$HOME/.pyenv}/versions/3.12*/bin/python3.12 2>/dev/null); do \
	  if $$c -c 'import sys; assert sys.version_info[:2] == (3, 12)' >/dev/null 2>&1; then py=$$c; break; fi; done; \
	: "a pyenv shim exists even where pyenv has 3.12 but does not select it: each candidate is run first"; \
	if [ -z "$$py" ]; then \
	  echo "no python3.12 here (no pyenv; Debian bookworm has 3.11): the Python studies run on the project venv" \
	    > $(PY312_STATUS); echo "==> $$(cat $(PY312_STATUS))"; rm -rf $(VENV312); exit 0; fi; \
	if ! $(VENV312_PY) -c 'import sys; assert sys.version_info[:2] == (3, 12)' >/dev/null 2>&1; then \
	  echo "==> $$py -m venv $(VENV312)"; rm -rf $(VENV312); $$py -m venv $(VENV312); fi; \
	if ! cmp -s $(BENCH_REQS312) $(VENV312)/.requirements.stamp; then \
	  echo "==> $(VENV312_PY) -m pip install -r $(BENCH_REQS312)"; \
	  $(VENV312_PY) -m pip install -q --disable-pip-version-check -U -r $(BENCH_REQS312) && \
	  cp $(BENCH_REQS312) $(VENV312)/.requirements.stamp; fi; \
	if [ $(VENV312)/.oxmq.stamp -nt $(WHEEL_STAMP) ]; then \
	  echo "==> oxmq (Python) in $(VENV312) up to date"; \
	else echo "==> $(VENV312_PY) -m pip install oxmq (the abi3 wheel from $(WHEEL_DIR))"; \
	  if PATH="$(NOCARGO_PATH)" $(VENV312_PY) $(WHEEL_PIP_INSTALL) --no-deps --force-reinstall oxmq; then touch $(VENV312)/.oxmq.stamp; \
	  else echo "oxmq's wheel failed to install on Python 3.12" > $(PY312_STATUS); rm -rf $(VENV312); exit 0; fi; fi; \
	echo "ok" > $(PY312_STATUS); \
	echo "==> Python studies on $$($(VENV312_PY) -c 'import sys, zmq, pyomq; print("Python", sys.version.split()[0], "pyzmq", zmq.__version__, "pyomq", pyomq.__version__)')"

bench-peers: bench-rust-peers bench-py312

# Where the Python 3.12 venv exists the Python studies run on it (quick runs
# too), so its oxmq is brought up to the tree's wheel here: bench/run.py
# reports an oxmq artefact older than its sources as stale, not measured.
bench-build: deb-deps bench-venv $(BENCH_OPTIONAL) bench-c bench-c435 bench-rust $(if $(wildcard $(VENV312_PY)),bench-py312)

bench-suite: bench-build $(if $(filter-out 0,$(QUICK)),,bench-peers)
	@echo "==> $(VENV_PY) bench/run.py $(if $(filter-out 0,$(QUICK)),--quick)"
	@$(VENV_PY) bench/run.py $(if $(filter-out 0,$(QUICK)),--quick)

bench-quick: bench-build
	@echo "==> $(VENV_PY) bench/run.py --quick"
	@$(VENV_PY) bench/run.py --quick

# test_harness.py first: the harness's bookkeeping (every peer compared, every
# trailing comparison listed) on fake figures, in a second.
bench-check: bench-venv
	@mkdir -p $(BENCH_C_OUT)
	@echo "==> $(VENV_PY) bench/test_harness.py"
	@$(VENV_PY) bench/test_harness.py > $(BENCH_C_OUT)/test_harness.log 2>&1 || \
	  { grep -E '^(ok|not ok|test_harness)|Error' $(BENCH_C_OUT)/test_harness.log; exit 1; }
	@grep -E '^(not ok|test_harness)' $(BENCH_C_OUT)/test_harness.log
	@$(MAKE) --no-print-directory bench-quick
	@echo "==> $(VENV_PY) bench/check.py bench/out/quick"
	@$(VENV_PY) bench/check.py bench/out/quick

TEST_STEPS += bench-check
