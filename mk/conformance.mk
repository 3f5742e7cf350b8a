# The ZMTP conformance suite (conformance/, issue 25 item 1): scripted
# byte-level peers check RFC clauses against each implementation, reached only
# through the wire via an adapter process (conformance/adapters/).
#
#   make conformance   build the adapters, run every clause on every
#                      implementation available, print the matrix and write it
#                      to target/conformance/matrix.md (part of `make test`)
#
#   make bench-conformance
#                      the same unless target/conformance/matrix.json is newer
#                      than everything it is made from (make bench runs it, and
#                      the report shows the matrix: bench/conformance_report.py)
#
# Columns: Debian's libzmq 4.3.4, libzmq 4.3.5 (pyzmq's wheel, as bench-c435
# lays it out), omq.rs's C ABI (only when `make bench-rust-peers` has built it:
# minutes of compiling, so not done here; otherwise reported not available and
# logged as a skip), pyzmq, pyomq (omq.rs's Python module, in the bench's
# Python 3.12 venv when `make bench-py312` has made it; otherwise not
# available, logged), oxmq's Python package, oxmq's Rust crate
# (crates/oxmq/examples/conformance_adapter.rs), oxmq's C ABI. The step fails
# only where an oxmq column differs from an RFC without a reasoned entry in
# conformance/known_differences.json. The scripted CURVE peer takes its NaCl
# box from crates/oxmq-proto/examples/conformance_curve_box.rs (RustCrypto's
# crypto_box).

DEB_PKGS += libzmq3-dev pkg-config gcc

CONF_OUT := target/conformance
CONF_ADAPTER := $(CONF_OUT)/adapters/libzmq_abi
CONF_ADAPTER435 := $(CONF_OUT)/adapters/libzmq_abi-4.3.5
CONF_SRC := conformance/adapters/libzmq_abi.c
CONF_CC ?= gcc
CONF_CFLAGS := -O2 -g -Wall -Wextra -Werror -std=gnu11

.PHONY: conformance bench-conformance

CONF_JSON := $(CONF_OUT)/matrix.json

# Built against Debian's zmq.h and libzmq.so.5; LD_LIBRARY_PATH swaps in any
# other library with that soname (oxmq's, omq's).
$(CONF_ADAPTER): $(CONF_SRC)
	@mkdir -p $(dir $@)
	$(CONF_CC) $(CONF_CFLAGS) -pthread -o $@ $< $$(pkg-config --cflags --libs libzmq)

conformance: deb-deps capi bench-c435 python-install $(CONF_ADAPTER)
	@echo "==> cargo build --release --example conformance_adapter -p oxmq --example conformance_curve_box -p oxmq-proto"
	@$(CARGO) build --release --example conformance_adapter -p oxmq --example conformance_curve_box -p oxmq-proto
	@mkdir -p $(CONF_OUT)
	@l435=$(abspath $(ZMQ435_DIR)/lib); \
	if ls $$l435/libzmq-*.so.5* >/dev/null 2>&1; then \
	  if [ ! $(CONF_ADAPTER435) -nt $(CONF_SRC) ]; then \
	    echo "==> $(CONF_ADAPTER435) (linked against $$l435)"; \
	    $(CONF_CC) $(CONF_CFLAGS) -o $(CONF_ADAPTER435) $(CONF_SRC) $$(pkg-config --cflags libzmq) \
	      -L$$l435 -Wl,-rpath,$$l435 -lzmq -pthread; \
	  fi; \
	  i435="libzmq 4.3.5=$(CONF_ADAPTER435)"; \
	else \
	  why="$$(cat $(ZMQ435_STATUS) 2>/dev/null || echo 'bench-c435 did not provide it')"; \
	  i435="libzmq 4.3.5=-:$$why"; echo "conformance: libzmq 4.3.5 column: $$why" >> $(OXMQ_SKIP_LOG); \
	fi; \
	if [ -e $(OMQ_CAPI)/libzmq.so.5 ]; then \
	  iomq="omq C ABI=$(CONF_ADAPTER):$(abspath $(OMQ_CAPI))"; \
	else \
	  why="not built: \`make bench-rust-peers\` builds it ($(OMQ_CAPI)/libzmq.so.5; minutes of compiling)"; \
	  iomq="omq C ABI=-:$$why"; echo "conformance: omq C ABI column: $$why" >> $(OXMQ_SKIP_LOG); \
	fi; \
	if [ -e $(PEERS_DIR)/target/release/bench_rust_peers ]; then \
	  echo "==> cargo build --release --bin conformance_omq --bin conformance_zmqrs (bench/rust-peers)"; \
	  (cd $(PEERS_DIR) && $(CARGO) build --release --bin conformance_omq --bin conformance_zmqrs) \
	    > $(CONF_OUT)/rust-peers-build.log 2>&1 || echo "    failed: see $(CONF_OUT)/rust-peers-build.log"; \
	fi; \
	irust=""; for c in "omq.rs (Rust)=conformance_omq" "zmq.rs (Rust)=conformance_zmqrs"; do \
	  bin=$(PEERS_DIR)/target/release/$${c#*=}; \
	  if [ -x $$bin ]; then irust="$$irust|$${c%%=*}=$$bin"; else \
	    why="not built: \`make bench-rust-peers\` builds bench/rust-peers' dependencies (minutes of compiling)"; \
	    irust="$$irust|$${c%%=*}=-:$$why"; echo "conformance: $${c%%=*} column: $$why" >> $(OXMQ_SKIP_LOG); fi; \
	done; \
	if [ -x $(VENV312_PY) ] && $(VENV312_PY) -c 'import pyomq' 2>/dev/null; then \
	  ipyomq="pyomq=$(VENV312_PY) conformance/adapters/python_module.py pyomq"; \
	else \
	  why="not installed: \`make bench-py312\` makes $(VENV312) with pyomq"; \
	  ipyomq="pyomq=-:$$why"; echo "conformance: pyomq column: $$why" >> $(OXMQ_SKIP_LOG); \
	fi; \
	echo "==> python3 conformance/run.py (matrix -> $(CONF_OUT)/matrix.md, matrix.json)"; \
	$(VENV_PY) conformance/run.py --out $(CONF_OUT) \
	  --impl "libzmq 4.3.4 (Debian)=$(CONF_ADAPTER)" \
	  --impl "$$i435" \
	  --impl "$$iomq" \
	  --impl "pyzmq=$(VENV_PY) conformance/adapters/python_module.py zmq" \
	  --impl "$$ipyomq" \
	  --impl "$$(echo "$$irust" | cut -d'|' -f2)" --impl "$$(echo "$$irust" | cut -d'|' -f3)" \
	  --impl "oxmq Python=$(VENV_PY) conformance/adapters/python_module.py oxmq" \
	  --impl "oxmq Rust=target/release/examples/conformance_adapter" \
	  --impl "oxmq C ABI=$(CONF_ADAPTER):$(CAPI_ABS)"

TEST_STEPS += conformance

# For make bench: the suite again only when its matrix is older than what it
# was made from (the suite, the adapters, oxmq's sources, the libraries under
# test) or came from a partial run (--only). A failing run does not stop the
# benchmarks: the report shows its matrix and the unlisted differences.
CONF_INPUTS = conformance crates python/src mk/conformance.mk $(CAPI_ABS)/libzmq.so.5 \
	$(wildcard $(OMQ_CAPI)/libzmq.so.5) $(wildcard $(VENV312)/.oxmq.stamp)
bench-conformance:
	@if [ -f $(CONF_JSON) ] && grep -q '"only": null' $(CONF_JSON) \
	   && [ -z "$$(find $(CONF_INPUTS) -type f -newer $(CONF_JSON) 2>/dev/null | head -1)" ]; then \
	  echo "==> conformance matrix $(CONF_JSON) is newer than its inputs: reused for the report"; \
	else $(MAKE) --no-print-directory conformance || echo "==> make conformance failed: the report shows its matrix"; fi

# Not bench-quick: make test's bench-check runs that before its own conformance
# step, which would run the suite twice.
bench-suite: bench-conformance
