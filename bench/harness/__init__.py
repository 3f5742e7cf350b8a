"""The benchmark harness (bench/run.py is its command line): which sides can
run (discover), how a run's processes are started (runner), how a cell's sides
are measured interleaved (measure), the speed ratios (stats), number formatting
(fmt) and the machine's description (machine). The studies themselves are in
bench/studies/; the rendering in bench/report.py, which imports from here and
never from run.py.

Import order, bottom up: config, fmt, discover, runner, stats, measure, machine."""
