# Python package `oxmq` (python/): a PyO3 extension built by maturin, with
# pyzmq's API, shipped as people install pyzmq: binary wheels.
#
#   make wheel         the wheels in target/wheels/dist (python/build-wheels.sh):
#                      cp311-abi3 (CPython 3.11 and later), cp39, cp310; manylinux,
#                      libsodium linked in, the C ABI files inside; prints each
#                      wheel's size and the Pythons it covers. Built once per change.
#                      Quick: WHEEL_PYTHONS= (the abi3 wheel only).
#   make python-test   the package's pytest suite against the wheel installed in a
#                      fresh venv (target/wheel-venv, below)
#   make wheel-test    the wheel installed into pyenv's Python 3.9, 3.10 and 3.13 venvs:
#                      import, PUSH/PULL and CURVE round trips (part of make test)
#
# Every Python step of `make test` uses the installed wheel; nothing builds the
# package a second time. The project venv (.venv: faults, ws, bench) gets it by
# python-install. The wheel's own steps (python-test, pyzmq-suite, jupyter-test)
# run in target/wheel-venv: made afresh for each new wheel, the wheel installed
# by pip with a PATH that has no cargo or rustc (and --no-index, so pip cannot
# fall back to a source build), run from directories where `import oxmq` cannot
# find python/oxmq, and each pytest process checks that it imported the
# installed wheel (tests/pytest_plugins/oxmq_installed.py).

PY_PKG_SRCS := $(shell find python/src python/oxmq -type f \( -name '*.rs' -o -name '*.py' -o -name '*.pyi' -o -name 'py.typed' \) 2>/dev/null) \
               python/Cargo.toml python/pyproject.toml python/build-wheels.sh python/wheel-data/purelib/oxmq-as-zmq.pth \
               Cargo.lock $(shell find crates/oxmq/src crates/oxmq-proto/src crates/oxmq-sodium/src -name "*.rs")

# The wheel ships oxmq's C ABI as pyzmq ships libzmq, for C code built against
# the Python package (zmq.get_includes(), zmq.get_library_dirs()): zmq.h in
# oxmq/include, libzmq.so(.5) in oxmq/_capi/zmq. Copied from `make capi`'s
# output (without its debug info) at build time (gitignored), listed in
# python/pyproject.toml.
PY_PKG_CAPI := python/oxmq/include/zmq.h python/oxmq/_capi/zmq/libzmq.so.5

# patchelf: maturin's repair copies the shared libraries the extension needs
# beyond the manylinux set (MIT krb5's, for GSSAPI) into the wheel, as
# auditwheel repair does.
DEB_PKGS += patchelf
WHEEL_DIR := target/wheels/dist
WHEEL_STAMP := $(WHEEL_DIR)/.built
# The newest glibc symbol version the modules need is GLIBC_2.34 (maturin's
# audit lists them when asked for less), so manylinux_2_34: glibc >= 2.34
# (Debian 12, Ubuntu 22.04, RHEL 9 and later).
WHEEL_MANYLINUX := manylinux_2_34
# The version-specific wheels, for the Pythons the abi3 one cannot serve.
WHEEL_PYTHONS ?= 3.9 3.10
# Remembered, so that changing it rebuilds the set.
WHEEL_PYTHONS_FILE := target/wheels/pythons.txt
$(shell mkdir -p target/wheels && { echo '$(WHEEL_PYTHONS)' | cmp -s - $(WHEEL_PYTHONS_FILE) || echo '$(WHEEL_PYTHONS)' > $(WHEEL_PYTHONS_FILE); })
MATURIN := $(VENV)/bin/maturin
# pip takes the wheel from WHEEL_DIR only: no index, no source build.
WHEEL_PIP_INSTALL := -m pip install -q --disable-pip-version-check --no-index --only-binary=:all: --find-links $(WHEEL_DIR)

PY_PKG_STAMP := $(VENV)/.oxmq-wheel.stamp
WHEEL_VENV := target/wheel-venv
WHEEL_VENV_PY := $(WHEEL_VENV)/bin/python
WHEEL_VENV_STAMP := $(WHEEL_VENV)/.oxmq-wheel.stamp
# What the wheel's own steps run under (python-test, pyzmq-suite, jupyter-test).
WHEEL_ENV := PATH="$(NOCARGO_PATH)" OXMQ_EXPECT_INSTALLED=$(abspath $(WHEEL_VENV)) PYTEST_PLUGINS=oxmq_installed

.PHONY: wheel python-install python-test python-capi wheel-venv wheel-test

python-capi: capi
	@mkdir -p python/oxmq/include python/oxmq/_capi/zmq
	@cmp -s $(CAPI_OUT)/include/zmq.h python/oxmq/include/zmq.h || cp -f $(CAPI_OUT)/include/zmq.h python/oxmq/include/zmq.h
	@strip --strip-debug -o target/libzmq.so.5.stripped $(CAPI_OUT)/libzmq.so.5
	@cmp -s target/libzmq.so.5.stripped python/oxmq/_capi/zmq/libzmq.so.5 || cp -f target/libzmq.so.5.stripped python/oxmq/_capi/zmq/libzmq.so.5
	@ln -sf libzmq.so.5 python/oxmq/_capi/zmq/libzmq.so

$(WHEEL_STAMP): $(PY_PKG_SRCS) $(PY_PKG_CAPI) $(WHEEL_PYTHONS_FILE) | venv
	@WHEEL_PYTHONS="$(WHEEL_PYTHONS)" python/build-wheels.sh $(abspath $(MATURIN)) $(WHEEL_DIR) $(WHEEL_MANYLINUX) $(PYTHON)
	@touch $@

wheel: venv python-capi $(WHEEL_STAMP)
	@$(VENV_PY) tests/packaging/wheel/describe.py $(WHEEL_DIR)

python-install: wheel
	@if [ $(PY_PKG_STAMP) -nt $(WHEEL_STAMP) ]; then echo "==> oxmq wheel in $(VENV) up to date"; else \
	  echo "==> $(VENV_PY) -m pip install oxmq (the wheel from $(WHEEL_DIR), PATH without cargo)"; \
	  PATH="$(NOCARGO_PATH)" $(VENV_PY) $(WHEEL_PIP_INSTALL) --no-deps --force-reinstall oxmq; \
	  touch $(PY_PKG_STAMP); fi

# requirements minus maturin: the wheel's venv has nothing that builds packages.
wheel-venv: wheel
	@if [ $(WHEEL_VENV_STAMP) -nt $(WHEEL_STAMP) ] && cmp -s $(REQUIREMENTS) $(WHEEL_VENV)/.requirements.stamp; then \
	  echo "==> $(WHEEL_VENV): the current wheel, installed"; else \
	  echo "==> fresh venv $(WHEEL_VENV) (PATH without cargo/rustc): pip install -r $(REQUIREMENTS) (minus maturin), then the wheel"; \
	  rm -rf $(WHEEL_VENV); \
	  PATH="$(NOCARGO_PATH)" $(PYTHON) -m venv $(WHEEL_VENV); \
	  grep -v '^maturin' $(REQUIREMENTS) > $(WHEEL_VENV)/requirements.txt; \
	  PATH="$(NOCARGO_PATH)" $(WHEEL_VENV_PY) -m pip install -q --disable-pip-version-check -r $(WHEEL_VENV)/requirements.txt; \
	  PATH="$(NOCARGO_PATH)" $(WHEEL_VENV_PY) $(WHEEL_PIP_INSTALL) oxmq; \
	  cp $(REQUIREMENTS) $(WHEEL_VENV)/.requirements.stamp; touch $(WHEEL_VENV_STAMP); fi; \
	cd / && $(WHEEL_ENV) $(abspath $(WHEEL_VENV_PY)) -c 'import oxmq; print("==> oxmq", oxmq.__version__, "from", oxmq.__file__)'

python-test: wheel-venv
	@echo "==> $(WHEEL_VENV_PY) -m pytest python/tests -v $(PYTEST_ARGS) (the installed wheel)"
	@cd python/tests && $(WHEEL_ENV) ../../$(WHEEL_VENV_PY) -m pytest . -v $(PYTEST_ARGS)

wheel-test: wheel
	@echo "==> tests/packaging/wheel/run.sh (the wheel in fresh Python 3.9, 3.10 and 3.13 venvs, PATH without cargo)"
	@PATH="$(NOCARGO_PATH)" WHEEL_PYTHONS="$(WHEEL_PYTHONS)" tests/packaging/wheel/run.sh $(WHEEL_DIR)

TEST_STEPS += python-test wheel-test
