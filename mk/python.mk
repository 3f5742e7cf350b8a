# Python package `oxmq` (python/): a PyO3 extension built by maturin, with
# pyzmq's API. `make python-test` builds and installs it into the project venv
# and runs its pytest suite (API, GIL/signals, zero-copy, asyncio, and interop
# with pyzmq/libzmq in one process and across processes).

PY_PKG_STAMP := $(VENV)/.oxmq-python.stamp
PY_PKG_SRCS := $(shell find python/src python/oxmq -type f \( -name '*.rs' -o -name '*.py' -o -name '*.pyi' -o -name 'py.typed' \) 2>/dev/null) \
               python/Cargo.toml python/pyproject.toml $(shell find crates/oxmq/src crates/oxmq-proto/src -name "*.rs")

.PHONY: python-install python-test

$(PY_PKG_STAMP): $(PY_PKG_SRCS) | venv
	@echo "==> $(VENV_PY) -m pip install ./python (maturin, release build)"
	@$(VENV_PY) -m pip install -q --disable-pip-version-check ./python
	@touch $@

python-install: venv $(PY_PKG_STAMP)

python-test: python-install
	@echo "==> $(VENV_PY) -m pytest python/tests -v $(PYTEST_ARGS)"
	@cd python/tests && ../../$(VENV_PY) -m pytest . -v $(PYTEST_ARGS)

TEST_STEPS += python-test
