# ws:// and wss:// (ZWS 2.0, issue 13): `make ws-interop` runs tests/interop/ws with
# oxmq's Python package against
#  - real libzmq 4.3.5 with ws: npm's `zeromq` v6 bundles one built with the
#    draft API (pyzmq's and Debian's are built without it, hence without ws);
#    installed with npm under target/ws-npm (tests/interop/ws/libzmq_peer.js drives it);
#  - an independent ZWS 2.0 peer written on the `websockets` PyPI package (wss too).
# Missing node/npm or a failed npm install fail the step (make test installs
# node and npm, and npm's registry is reachable). The Rust side (crates/oxmq/tests/ws.rs, oxmq-proto's ws unit tests)
# runs with cargo test.

# node and npm for the libzmq peer. Debian's npm conflicts with a NodeSource
# nodejs (which bundles npm), so ask for them only when npm is absent.
ifeq ($(shell command -v npm 2>/dev/null),)
DEB_PKGS += nodejs npm
endif

WS_NPM := target/ws-npm
WS_ZEROMQ_JS_VERSION := 6.8.0
WS_NPM_STAMP := $(WS_NPM)/.zeromq-$(WS_ZEROMQ_JS_VERSION).stamp

.PHONY: ws-interop

# The package carries prebuilt binaries; its install script (a source build
# fallback) is not run.
$(WS_NPM_STAMP):
	@mkdir -p $(WS_NPM)
	@if ! command -v npm >/dev/null 2>&1; then echo "ws-interop: npm not found (make deb-deps installs it)"; exit 1; fi; \
	echo "==> npm install zeromq@$(WS_ZEROMQ_JS_VERSION) (libzmq 4.3.5 with ws) into $(WS_NPM)"; \
	if timeout 300 npm install --prefix $(WS_NPM) --no-audit --no-fund --ignore-scripts --loglevel=error \
	    zeromq@$(WS_ZEROMQ_JS_VERSION) >$(WS_NPM)/npm.log 2>&1; then touch $@; \
	else echo "ws-interop: npm install zeromq@$(WS_ZEROMQ_JS_VERSION) failed:"; tail -5 $(WS_NPM)/npm.log; exit 1; fi

ws-interop: python-install $(WS_NPM_STAMP)
	@echo "==> $(VENV_PY) -m pytest tests/interop/ws -v -rs"
	@ZEROMQ_JS=$(CURDIR)/$(WS_NPM)/node_modules/zeromq $(VENV_PY) -m pytest tests/interop/ws -v -rs -p no:cacheprovider $(PYTEST_ARGS)

TEST_STEPS += ws-interop
