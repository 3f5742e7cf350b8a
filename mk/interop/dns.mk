# Name resolution on connect (issue 25, item 3): `make dns-test` runs
# crates/oxmq/tests/dns.rs in a private mount and network namespace against
# Debian's dnsmasq on loopback, plus tests/interop/dns/held_dns.py for a slow answer
# (tests/interop/dns/run.sh sets it up). Needs root (unshare, mount --bind), as CI is.

DEB_PKGS += dnsmasq-base iproute2 util-linux

DNS_WORK := target/dns

.PHONY: dns-test

dns-test: deb-deps
	@echo "==> cargo test --release -p oxmq --test dns (in a namespace with its own dnsmasq)"
	@bin=$$($(CARGO) test --release -p oxmq --test dns --no-run --message-format=json \
	    | $(PYTHON) -c 'import json,sys; print(*[m["executable"] for m in map(json.loads, sys.stdin) if m.get("executable")][-1:])'); \
	if [ -z "$$bin" ]; then echo "dns-test: no test binary from cargo"; exit 1; fi; \
	timeout 120 tests/interop/dns/run.sh $(CURDIR)/$(DNS_WORK) "$$bin"

TEST_STEPS += dns-test
