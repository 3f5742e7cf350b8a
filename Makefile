# oxmq developer and CI entry points.
#
#   make test    set up what is missing (Debian packages, Rust components, Python
#                venv), then fmt check, clippy, cargo tests, and the interop suite
#                against real libzmq (pyzmq); prints the interop matrix, and at the
#                very end every test that skipped, with its reason (mk/skips.mk).
#   make bench   the benchmark studies and bench/REPORT.md (QUICK=1: small counts).
#   make fmt | lint | interop | setup | clean
#
# Every set-up step is idempotent and cheap when already done.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := test

# Debian packages the build/tests need (checked with dpkg -s, installed only if missing).
DEB_PKGS := libzmq3-dev pkg-config

CARGO ?= cargo
PYTHON ?= python3
VENV := .venv
VENV_PY := $(VENV)/bin/python
REQUIREMENTS := tests/requirements.txt
# Copy of the requirements the venv was last populated from.
PIP_STAMP := $(VENV)/.requirements.stamp

# PATH without any directory that holds cargo or rustc: how users without a
# Rust toolchain install the wheel and the gem (mk/python.mk, mk/ruby.mk).
NOCARGO_PATH := $(shell IFS=:; for d in $$PATH; do [ -x "$$d/cargo" ] || [ -x "$$d/rustc" ] || printf '%s:' "$$d"; done | sed 's/:$$//')

INTEROP_PEER := target/release/examples/interop_peer
PYTEST_ARGS ?= -p no:cacheprovider --timeout 60 -p oxmq_skiplog

# Every skip of the run is recorded here and printed at the end (mk/skips.mk).
export OXMQ_SKIP_LOG := $(CURDIR)/target/skips.txt
# tests/pytest_plugins: the skip recorder pytest loads with -p oxmq_skiplog.
export PYTHONPATH := $(CURDIR)/tests/pytest_plugins$(if $(PYTHONPATH),:$(PYTHONPATH))

export CARGO_TERM_COLOR ?= never

.PHONY: test setup deb-deps rust-tools venv fmt fmt-check lint cargo-test \
        interop-peer interop bench clean

# Components add their own steps in mk/<component>.mk (capi, python, ruby,
# bench, options, conformance, reliability...), and tests of one kind have a
# folder each, as under tests/: mk/interop, mk/compat (other projects' suites
# and programs on oxmq), mk/packaging. Each file adds Debian packages to
# DEB_PKGS and test targets to TEST_STEPS (run after the core's, in the order
# read). mk/*.mk are read first: the kind folders use what they define
# (CAPI_OUT, OPTIONS_OUT, the wheel's venv).
TEST_STEPS :=
-include $(sort $(wildcard mk/*.mk)) $(sort $(wildcard mk/*/*.mk))

test: skips-reset setup fmt-check lint cargo-test interop $(TEST_STEPS)
	@$(MAKE) --no-print-directory skips-summary
	@echo "==> make test: all steps passed"

setup: deb-deps rust-tools venv

deb-deps:
	@missing=""; \
	for p in $(DEB_PKGS); do \
	  dpkg -s "$$p" >/dev/null 2>&1 || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then \
	  echo "==> Debian packages present: $(DEB_PKGS)"; \
	else \
	  SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	  echo "==> apt-get update"; \
	  $$SUDO apt-get update -qq; \
	  echo "==> apt-get install -y$$missing"; \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing; \
	fi

rust-tools:
	@if ! $(CARGO) fmt --version >/dev/null 2>&1; then \
	  echo "==> rustup component add rustfmt"; rustup component add rustfmt; \
	fi; \
	if ! $(CARGO) clippy --version >/dev/null 2>&1; then \
	  echo "==> rustup component add clippy"; rustup component add clippy; \
	fi; \
	echo "==> Rust tools: $$($(CARGO) --version), $$($(CARGO) fmt --version), $$($(CARGO) clippy --version)"

venv:
	@if ! $(VENV_PY) -c 'import sys' >/dev/null 2>&1; then \
	  echo "==> creating Python venv at $(VENV)"; \
	  rm -rf $(VENV); \
	  $(PYTHON) -m venv $(VENV); \
	fi; \
	if cmp -s $(REQUIREMENTS) $(PIP_STAMP); then \
	  echo "==> Python venv up to date ($(REQUIREMENTS) unchanged)"; \
	else \
	  echo "==> pip install -r $(REQUIREMENTS)"; \
	  $(VENV_PY) -m pip install -q --disable-pip-version-check -r $(REQUIREMENTS); \
	  cp $(REQUIREMENTS) $(PIP_STAMP); \
	fi; \
	echo "==> $$($(VENV_PY) -c 'import zmq, pytest; print("pyzmq", zmq.__version__, "libzmq", zmq.zmq_version(), "pytest", pytest.__version__)')"

fmt:
	@echo "==> cargo fmt --all"
	@$(CARGO) fmt --all

fmt-check:
	@echo "==> cargo fmt --all -- --check"
	@$(CARGO) fmt --all -- --check

lint:
	@echo "==> cargo clippy --workspace --all-targets -- -D warnings"
	@$(CARGO) clippy --workspace --all-targets -- -D warnings

cargo-test:
	@echo "==> cargo test --workspace --release"
	@$(CARGO) test --workspace --release

interop-peer:
	@echo "==> cargo build --release --example interop_peer -p oxmq"
	@$(CARGO) build --release --example interop_peer -p oxmq

# The matrix table is printed by tests/interop/matrix/conftest.py at the end of the run
# (and saved to target/interop-matrix.txt).
interop: venv interop-peer
	@echo "==> $(VENV_PY) -m pytest tests/interop/matrix -v $(PYTEST_ARGS)"
	@$(VENV_PY) -m pytest tests/interop/matrix -v $(PYTEST_ARGS)

# The main job: every benchmark study side by side (mk/bench.mk); QUICK=1 for tiny counts.
bench: bench-suite

clean:
	@echo "==> cargo clean"
	@$(CARGO) clean
	@echo "==> rm -rf $(VENV) tests/interop/matrix/__pycache__"
	@rm -rf $(VENV) tests/interop/matrix/__pycache__
