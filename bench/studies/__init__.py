"""The studies, one file each: `NN_name.py` is study NN, called `name` in
results.json. Each file has a TITLE (the report's heading) and
measure(suite, impls), which runs the study's cells through suite.compare.

A new study is a new file here and a section in bench/report.py (SECTIONS).
"""

import importlib
import re
from pathlib import Path

_FILE = re.compile(r"^(\d\d)_(\w+)\.py$")

# Short studies first and the long throughput study last: results.json is
# written after each study, so a run cut short still renders (--report-only)
# with the most studies in it.
SUITE_ORDER = (8, 1, 11, 12, 13, 4, 7, 5, 6, 10, 3, 9, 2)


def _load():
    mods = {}
    for p in sorted(Path(__file__).parent.iterdir()):
        m = _FILE.match(p.name)
        if m:
            mods[int(m.group(1))] = (m.group(2), importlib.import_module("%s.%s" % (__name__, p.stem)))
    return mods


_MODULES = _load()

# {number: (name, title, measure)}
STUDIES = {n: (name, mod.TITLE, mod.measure) for n, (name, mod) in _MODULES.items()}
assert set(SUITE_ORDER) == set(STUDIES), "SUITE_ORDER must list every study once"


def module(n):
    """Study n's module, for what a test reads of it (its constants and helpers)."""
    return _MODULES[n][1]
