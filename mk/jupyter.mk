# Jupyter, unmodified, on oxmq (issue 9): jupyter_client + ipykernel from PyPI
# (tests/requirements.txt) start a kernel with OXMQ_AS_ZMQ=1, so `import zmq`
# is oxmq in the test process and in the kernel it starts; the test runs a
# cell with output, an error, kernel_info, an interrupt, a restart, a shutdown.

.PHONY: jupyter-test

jupyter-test: python-install
	@echo "==> OXMQ_AS_ZMQ=1 $(VENV_PY) -m pytest tests/jupyter -v $(PYTEST_ARGS)"
	@OXMQ_AS_ZMQ=1 $(VENV_PY) -m pytest tests/jupyter -v -p no:cacheprovider --timeout 120

TEST_STEPS += jupyter-test
