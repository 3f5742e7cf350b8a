# ws:// and wss:// (ZWS 2.0, issue 13) against an independent WebSocket peer:
# tests/ws drives oxmq's Python package against a ZWS peer written on the
# `websockets` library (no libzmq with ws support is available offline: the
# draft API it needs is off in pyzmq's and Debian's builds). The Rust side
# (crates/oxmq/tests/ws.rs, oxmq-proto's ws unit tests) runs with cargo test.

.PHONY: ws-interop

ws-interop: python-install
	@echo "==> $(VENV_PY) -m pytest tests/ws -v"
	@$(VENV_PY) -m pytest tests/ws -v -p no:cacheprovider $(PYTEST_ARGS)

TEST_STEPS += ws-interop
