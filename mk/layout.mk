# The core's import graph (issue 22): tools/import_graph.py reads the `use`
# lines and paths of crates/oxmq/src, prints its loops, and fails on any loop
# beyond context <-> socket (loops inside one folder, a mod.rs and its files,
# are printed, not failed) and on any import from transport/ or io/ up into
# socket/ or ctx. Part of `make lint`, so CI runs it. Python 3 only, no venv.
# --self-test first: the check must find the faults planted in a small crate.

.PHONY: import-graph

import-graph:
	@$(PYTHON) tools/import_graph.py --self-test
	@echo "==> $(PYTHON) tools/import_graph.py crates/oxmq/src"
	@$(PYTHON) tools/import_graph.py crates/oxmq/src

lint: import-graph
