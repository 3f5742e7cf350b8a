# pgm://, epgm:// and norm:// (issue 23, item 3): oxmq's libzmq.so.5 against
# Debian's libzmq5 (linked with libpgm-5.3 and libnorm) both ways and with
# itself, PUB/SUB and XPUB/XSUB, in a network namespace's loopback
# (tests/interop/multicast/run.sh), plus zmq_has, the socket types multicast refuses
# and bad endpoints compared with Debian's answers, and oxmq where both
# libraries are hidden (a mount namespace): oxmq loads them at run time, so it
# then answers zmq_has 0 and EPROTONOSUPPORT. Needs root (ip netns, unshare;
# pgm:// also needs raw sockets). Rust tests: crates/oxmq/tests/options.rs
# (errno cases) and the unit tests in crates/oxmq/src/transport/multicast/.

DEB_PKGS += libpgm-dev libnorm-dev iproute2 gcc

MULTICAST_OUT := target/multicast

.PHONY: multicast-test

$(MULTICAST_OUT)/mcpeer: tests/interop/multicast/mcpeer.c
	@mkdir -p $(MULTICAST_OUT)
	@gcc -O1 -Wall -Werror -o $@ $< $$(pkg-config --cflags --libs libzmq)

multicast-test: capi $(MULTICAST_OUT)/mcpeer
	@echo "==> tests/interop/multicast/run.sh (pgm/epgm/norm: oxmq vs Debian's libzmq $$(pkg-config --modversion libzmq))"
	@start=$$(date +%s); \
	tests/interop/multicast/run.sh $(MULTICAST_OUT)/mcpeer $(CAPI_OUT); \
	echo "==> multicast-test: $$(( $$(date +%s) - start )) s"

TEST_STEPS += multicast-test
