# Python package `oxmq` (python/): a PyO3 extension built by maturin, with
# pyzmq's API. `make python-test` builds and installs it into the project venv
# and runs its pytest suite (API, GIL/signals, zero-copy, asyncio, and interop
# with pyzmq/libzmq in one process and across processes).

PY_PKG_STAMP := $(VENV)/.oxmq-python.stamp
PY_PKG_SRCS := $(shell find python/src python/oxmq -type f \( -name '*.rs' -o -name '*.py' -o -name '*.pyi' -o -name 'py.typed' \) 2>/dev/null) \
               python/Cargo.toml python/pyproject.toml $(shell find crates/oxmq/src crates/oxmq-proto/src -name "*.rs")

# The wheel ships oxmq's C ABI as pyzmq ships libzmq, for C code built against
# the Python package (zmq.get_includes(), zmq.get_library_dirs()): zmq.h in
# oxmq/include, libzmq.so(.5) in oxmq/_capi/zmq. Copied from `make capi`'s
# output at build time (gitignored), listed in python/pyproject.toml.
PY_PKG_CAPI := python/oxmq/include/zmq.h python/oxmq/_capi/zmq/libzmq.so.5

.PHONY: python-install python-test python-capi

python-capi: capi
	@mkdir -p python/oxmq/include python/oxmq/_capi/zmq
	@cmp -s $(CAPI_OUT)/include/zmq.h python/oxmq/include/zmq.h || cp -f $(CAPI_OUT)/include/zmq.h python/oxmq/include/zmq.h
	@cmp -s $(CAPI_OUT)/libzmq.so.5 python/oxmq/_capi/zmq/libzmq.so.5 || cp -f $(CAPI_OUT)/libzmq.so.5 python/oxmq/_capi/zmq/libzmq.so.5
	@ln -sf libzmq.so.5 python/oxmq/_capi/zmq/libzmq.so

$(PY_PKG_STAMP): $(PY_PKG_SRCS) $(PY_PKG_CAPI) | venv
	@echo "==> $(VENV_PY) -m pip install ./python (maturin, release build)"
	@$(VENV_PY) -m pip install -q --disable-pip-version-check ./python
	@touch $@

python-install: venv python-capi $(PY_PKG_STAMP)

python-test: python-install
	@echo "==> $(VENV_PY) -m pytest python/tests -v $(PYTEST_ARGS)"
	@cd python/tests && ../../$(VENV_PY) -m pytest . -v $(PYTEST_ARGS)

TEST_STEPS += python-test
