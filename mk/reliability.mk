# Reliability at scale (issue 10; see RELIABILITY.md).
#
#   make soak SECONDS=N    the churn soak for N s (default 60): peer processes and
#                          inproc threads connect, send, get SIGKILLed; exit 0 only
#                          if nothing promised was lost and no fd/rss leak
#   make fuzz SECONDS=N    AFL++ (cargo-afl) campaigns, N s per target (default 60),
#                          one after another at nice 19; minimised corpus into
#                          fuzz/corpus/<target>, crashes into fuzz/regressions/
#   make fuzz-replay       replay every target's corpus and regressions (cargo test)
#   make faults-c          zmq_ctx_term with sockets in every state (C ABI)
#   make faults-python     Context.term() with sockets in every state (Python)
#   make loom              loom models of the pipe's wake-up/HWM protocols and the
#                          mailbox (a `--cfg loom` build in target/loom)
#   make miri              the pipe and socket-cell unit tests under Miri (needs a
#                          nightly with miri)
#
# The Rust fault tests (crates/oxmq/tests/faults_*.rs) run in the core's
# `cargo test --workspace`. make test adds the 60 s soak, the corpus replay and
# the C and Python termination tests.

DEB_PKGS += iproute2 gcc

.PHONY: soak soak-build fuzz fuzz-tools fuzz-replay faults-c faults-python loom miri

SOAK_BIN := target/release/examples/soak
FAULTS_C_BIN := target/release/faults/ctx_term

soak-build:
	@echo "==> cargo build --release --example soak -p oxmq"
	@$(CARGO) build --release --example soak -p oxmq

soak: soak-build
	@echo "==> $(SOAK_BIN) --seconds $(or $(SECONDS),60)"
	@$(SOAK_BIN) --seconds $(or $(SECONDS),60)

# cargo-afl from crates.io; it builds its AFL++ from the source it ships (offline).
fuzz-tools:
	@if ! $(CARGO) afl --version >/dev/null 2>&1; then \
	  echo "==> cargo install cargo-afl --locked"; \
	  $(CARGO) install cargo-afl --locked; \
	fi; \
	if ! $(CARGO) afl config --build >/dev/null 2>&1; then \
	  echo "==> AFL++ runtime already built for this toolchain"; \
	fi

fuzz: fuzz-tools
	@fuzz/afl/run.sh $(or $(SECONDS),60)

fuzz-replay:
	@echo "==> cargo test --release --manifest-path fuzz/afl/Cargo.toml (corpus replay)"
	@$(CARGO) test --release --manifest-path fuzz/afl/Cargo.toml --target-dir fuzz/afl/target/replay -- --nocapture 2>&1 | grep -v '^replay ' 

$(FAULTS_C_BIN): tests/reliability/faults/ctx_term.c $(CAPI_INC)/zmq.h | capi
	@mkdir -p $(dir $@)
	$(CAPI_CC) -O1 -g -Wall -Wextra -pthread -o $@ $< -I$(CAPI_OUT)/include -L$(CAPI_OUT) \
	  -Wl,-rpath,$(abspath $(CAPI_OUT)) -lzmq

faults-c: capi $(FAULTS_C_BIN)
	@echo "==> $(FAULTS_C_BIN)"
	@timeout 60 $(FAULTS_C_BIN)

faults-python: python-install
	@echo "==> $(VENV_PY) -m pytest tests/reliability/faults -v $(PYTEST_ARGS)"
	@$(VENV_PY) -m pytest tests/reliability/faults -v $(PYTEST_ARGS)

# Preemption bound 2: every interleaving with up to two forced switches (the
# unbounded search of the HWM model runs for many minutes); see RELIABILITY.md.
loom:
	@echo "==> RUSTFLAGS='--cfg loom' cargo test --release -p oxmq --lib loom_tests (LOOM_MAX_PREEMPTIONS=$(or $(LOOM_MAX_PREEMPTIONS),2))"
	@LOOM_MAX_PREEMPTIONS=$(or $(LOOM_MAX_PREEMPTIONS),2) RUSTFLAGS="--cfg loom" \
	  $(CARGO) test --release -p oxmq --lib --target-dir target/loom loom_tests

# Miri interprets the pipe's unit tests (lock-free SPSC queue, wake protocol)
# and the socket cell's (the one-flag lock around a socket's state).
# Not in make test: it needs a nightly toolchain with the miri component,
# which a fresh machine does not have (rustup cannot fetch it offline).
miri:
	@if ! $(CARGO) +nightly miri --version >/dev/null 2>&1; then \
	  echo "SKIP miri: no nightly toolchain with the miri component"; \
	else \
	  echo "==> cargo +nightly miri test -p oxmq --lib -- pipe:: socket::cell"; \
	  MIRIFLAGS="-Zmiri-disable-isolation" $(CARGO) +nightly miri test -p oxmq --lib -- pipe:: socket::cell; \
	fi

TEST_STEPS += soak faults-c faults-python fuzz-replay loom
