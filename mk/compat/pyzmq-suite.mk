# pyzmq's own test suite (issue 9), run on real pyzmq and on oxmq in the same
# run: tests/compat/pyzmq_suite/run.py downloads the pinned pyzmq sdist from PyPI into
# target/pyzmq-suite (never committed), runs each test file in its own pytest
# process (per-test and per-file timeouts), once on pyzmq and once with
# OXMQ_AS_ZMQ=1 (`import zmq` is oxmq), and prints
#   pyzmq suite: oxmq N passed of M that pass on pyzmq
# Exclusions (pyzmq's Cython/CFFI internals only) with reasons:
# tests/compat/pyzmq_suite/exclusions.txt. A ratchet: the tests that pass on pyzmq and
# fail on oxmq today are listed with a reason each in
# tests/compat/pyzmq_suite/known_failures.txt; any other such test fails the step (after
# one retry, counted and printed), and so does a file that gives no results or
# times out on the pyzmq side, or an oxmq side whose `import zmq` is not oxmq.
#
#   make pyzmq-suite                       both sides, every file
#   make pyzmq-suite SUITE_ARGS="-v --only test_socket"   one file, list failures

SUITE_ARGS ?=

.PHONY: pyzmq-suite

# Both sides run in the venv of the installed wheel (mk/python.mk, wheel-venv),
# with its PATH without cargo; every pytest process checks that `import oxmq`
# is the installed wheel (WHEEL_ENV).
pyzmq-suite: wheel-venv
	@echo "==> $(WHEEL_VENV_PY) tests/compat/pyzmq_suite/run.py $(SUITE_ARGS) (the installed wheel)"
	@$(WHEEL_ENV) $(WHEEL_VENV_PY) tests/compat/pyzmq_suite/run.py --cache target/pyzmq-suite -v $(SUITE_ARGS)

TEST_STEPS += pyzmq-suite
