"""pytest plugin: refuse to run unless ``import oxmq`` is the installed wheel.

The steps that test the wheel (python-test, pyzmq-suite, jupyter-test; see
mk/python.mk) set OXMQ_EXPECT_INSTALLED to the venv the wheel was installed in
and load this plugin through PYTEST_PLUGINS, so that every pytest process they
start, including pyzmq-suite's per-file runs and their children, checks it.
Without the check a test run from the wrong directory could pick up the
source tree's python/oxmq, or another venv's build, and still pass.
"""

import os
import sys
import sysconfig

import pytest


def pytest_configure(config):
    venv = os.environ.get("OXMQ_EXPECT_INSTALLED")
    if not venv:
        return
    import oxmq

    where = os.path.realpath(os.path.dirname(oxmq.__file__))
    site = os.path.realpath(sysconfig.get_paths()["purelib"])
    if os.path.realpath(sys.prefix) != os.path.realpath(venv):
        raise pytest.UsageError(f"oxmq_installed: running in {sys.prefix}, not the wheel's venv {venv}")
    if os.path.dirname(where) != site:
        raise pytest.UsageError(f"oxmq_installed: oxmq imported from {where}, not from the installed wheel in {site}")
