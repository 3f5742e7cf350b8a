# Jupyter, unmodified, on oxmq (issue 9): jupyter_client + ipykernel from PyPI
# (tests/requirements.txt) start a kernel with OXMQ_AS_ZMQ=1, so `import zmq`
# is oxmq in the test process and in the kernel it starts; the test runs a
# cell with output, an error, kernel_info, an interrupt, a restart, a shutdown.

.PHONY: jupyter-test

# In the venv of the installed wheel (mk/python.mk, wheel-venv; the kernel it
# starts is that venv's Python too), run from tests/compat/jupyter.
jupyter-test: wheel-venv
	@echo "==> OXMQ_AS_ZMQ=1 $(WHEEL_VENV_PY) -m pytest tests/compat/jupyter -v (the installed wheel)"
	@cd tests/compat/jupyter && OXMQ_AS_ZMQ=1 $(WHEEL_ENV) ../../../$(WHEEL_VENV_PY) -m pytest . -v -p no:cacheprovider --timeout 120

TEST_STEPS += jupyter-test
