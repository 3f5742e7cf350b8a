# Skips are never passes: each test or cell of `make test` that cannot run here
# appends "<where>: <what>: <reason>" to $(OXMQ_SKIP_LOG): Rust tests through
# tests/common's skip(), shell runners through tests/lib.sh's skip, pytest
# through tests/pytest_plugins/oxmq_skiplog.py (in PYTEST_ARGS). `make test`
# empties the file first (skips-reset) and prints every line at its end
# (skips-summary), with the count.

.PHONY: skips-reset skips-summary

skips-reset:
	@mkdir -p $(dir $(OXMQ_SKIP_LOG))
	@: > $(OXMQ_SKIP_LOG)

skips-summary:
	@n=$$(sort -u $(OXMQ_SKIP_LOG) 2>/dev/null | wc -l); \
	echo "==> skipped in this run: $$n (each with its reason; from $(OXMQ_SKIP_LOG))"; \
	sort -u $(OXMQ_SKIP_LOG) 2>/dev/null | sed 's/^/    SKIP /' || true
