"""pytest plugin: every skipped test of a `make test` step, with its reason,
appended to the file named by OXMQ_SKIP_LOG (the summary `make test` prints
at its end), so a step whose tests all skip cannot read as a pass.

Loaded with ``-p oxmq_skiplog`` (PYTEST_ARGS in the Makefile; this folder is
on PYTHONPATH there).
"""

import os


def pytest_runtest_logreport(report):
    path = os.environ.get("OXMQ_SKIP_LOG")
    if not path or not report.skipped:
        return
    reason = ""
    if isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:
        reason = str(report.longrepr[2]).removeprefix("Skipped: ")
    with open(path, "a") as f:
        f.write(f"pytest {report.nodeid}: {reason}\n")
