# Debian packages of the C ABI (issue 24, item 2): liboxmq5 (libzmq.so.5,
# Provides/Replaces/Conflicts libzmq5) and liboxmq-dev (zmq.h, libzmq.so,
# libzmq.a, libzmq.pc; Provides/Replaces/Conflicts libzmq3-dev), laid out by
# packaging/deb/build.sh with dpkg-deb, checked by lintian.
#
#   make deb        build both .deb files in target/deb/
#   make deb-test   install them with apt inside a throw-away mount namespace
#                   (overlays over /usr, /etc, /var: the machine is not changed)
#                   and run Debian's own libzmq consumers on them, no
#                   LD_LIBRARY_PATH: python3-zmq, ZMQ::FFI, ffi-rzmq, CZMQ's
#                   selftests, a C program built with pkg-config; see tests/packaging/deb/run.sh

DEB_PKGS += dpkg-dev lintian binutils gcc pkg-config iproute2 libzmq5 libzmq3-dev \
            python3-zmq python3-pytest python3-pytest-timeout libzmq-ffi-perl \
            libanyevent-perl libev-perl ruby-ffi-rzmq libczmq-dev

DEB_OUT := target/deb
# Shell globs, not $(wildcard): make's directory cache may not see the files
# build.sh makes during the run (build.sh leaves one of each).
DEB_LIB5 = $(DEB_OUT)/liboxmq5_*.deb
DEB_DEV = $(DEB_OUT)/liboxmq-dev_*.deb
DEB_STAGED_LIB = $(DEB_OUT)/liboxmq5/usr/lib/*/libzmq.so.5.*

.PHONY: deb deb-test

# Rebuilt (and lintian re-run) only when what goes into the packages changed:
# the libraries, the headers, the packaging files, or the commit (named in the
# changelog).
DEB_INPUTS = $(CAPI_OUT)/libzmq.so.5 $(CAPI_OUT)/liboxmq.a $(CAPI_INC)/zmq.h $(CAPI_INC)/zmq_utils.h $(CAPI_INC)/oxmq_stats.h \
             packaging/deb/build.sh packaging/deb/copyright Cargo.toml

deb: deb-deps capi
	@key="$$(cat $(DEB_INPUTS) | sha256sum | cut -d' ' -f1) $$(git log -1 --format='%H %ct' 2>/dev/null)"; \
	if [ "$$key" = "$$(cat $(DEB_OUT)/.inputs 2>/dev/null)" ] && ls $(DEB_LIB5) $(DEB_DEV) >/dev/null 2>&1; then \
	  echo "==> $(DEB_OUT): $$(cd $(DEB_OUT) && echo *.deb) up to date (lintian: $$(grep -c '^[EW]: ' $(DEB_OUT)/lintian.txt) warnings, no error)"; \
	  exit 0; \
	fi; \
	rm -f $(DEB_OUT)/.inputs; \
	echo "==> packaging/deb/build.sh -> $(DEB_OUT)"; \
	packaging/deb/build.sh $(CAPI_OUT)/libzmq.so.5 $(CAPI_INC)/zmq.h $(DEB_OUT) $(CAPI_OUT)/liboxmq.a; \
	echo "==> lintian $(DEB_OUT)/*.deb (any E: fails the step)"; \
	rc=0; lintian --display-info --fail-on error $(DEB_OUT)/*.deb > $(DEB_OUT)/lintian.txt 2>&1 || rc=$$?; \
	grep -v 'running with root privileges' $(DEB_OUT)/lintian.txt | sed 's/^/    /'; \
	if [ $$rc -ne 0 ] || grep -q '^E: ' $(DEB_OUT)/lintian.txt; then echo "==> FAIL: lintian (exit $$rc)"; exit 1; fi; \
	echo "$$key" > $(DEB_OUT)/.inputs

deb-test: deb
	@echo "==> tests/packaging/deb/run.sh" $(DEB_LIB5) $(DEB_DEV)
	@tests/packaging/deb/run.sh $(DEB_LIB5) $(DEB_DEV) $(DEB_STAGED_LIB)

TEST_STEPS += deb-test
