# The C ABI (crates/oxmq-capi): liboxmq.so / drop-in libzmq.so.5, zmq.h, and
# the C programs under tests/interop/capi that prove it (incl. interop with Debian's
# real libzmq). Nothing is installed system-wide: everything lands in
# target/release/capi.
#
#   make capi        build the library and lay out target/release/capi
#   make capi-test   build and run the C tests (part of `make test`)

DEB_PKGS += libzmq3-dev pkg-config gcc

CAPI_OUT := target/release/capi
CAPI_INC := crates/oxmq-capi/include
CAPI_SRC := tests/interop/capi
CAPI_BIN := target/capi-tests
CAPI_ABS := $(abspath $(CAPI_OUT))

CAPI_CC ?= gcc
CAPI_CFLAGS ?= -O2 -g -Wall -Wextra -Werror -std=gnu11 -pthread
# Programs built against oxmq's header and library (rpath: no LD_LIBRARY_PATH needed).
CAPI_OX_FLAGS = -I$(CAPI_INC) -L$(CAPI_OUT) -Wl,-rpath,$(CAPI_ABS) -lzmq
# The same programs built against Debian's libzmq, for interop and comparison.
CAPI_REAL_FLAGS = $(shell pkg-config --cflags --libs libzmq)

# (Built after `capi`, which provides the library.)
# Each program in tests/interop/capi/*.c is built twice: oxmq (NAME) and real libzmq (NAME.libzmq).
CAPI_PROGS := $(basename $(notdir $(wildcard $(CAPI_SRC)/*.c)))
# Programs of oxmq's own extensions (oxmq_stats.h): no libzmq build of them.
CAPI_OXMQ_ONLY := stats

.PHONY: capi capi-test capi-progs

capi:
	@echo "==> cargo build --release -p oxmq-capi"
	@$(CARGO) build --release -p oxmq-capi
	@mkdir -p $(CAPI_OUT)/include $(CAPI_OUT)/pkgconfig
	@cp -f target/release/liboxmq.so $(CAPI_OUT)/libzmq.so.5
	@cp -f target/release/liboxmq.so $(CAPI_OUT)/liboxmq.so
	@cp -f target/release/liboxmq.a $(CAPI_OUT)/liboxmq.a
	@ln -sf libzmq.so.5 $(CAPI_OUT)/libzmq.so
	@cp -f $(CAPI_INC)/zmq.h $(CAPI_INC)/oxmq_stats.h $(CAPI_OUT)/include/
	@for pc in libzmq oxmq; do \
	  { echo "prefix=$(CAPI_ABS)"; \
	    echo 'libdir=$${prefix}'; \
	    echo 'includedir=$${prefix}/include'; \
	    echo ''; \
	    echo "Name: $$pc"; \
	    echo 'Description: oxmq, ZeroMQ in Rust, with the libzmq 4.3 C ABI'; \
	    echo 'Version: 4.3.5'; \
	    echo 'Libs: -L$${libdir} -Wl,-rpath,$${libdir} -lzmq'; \
	    echo 'Libs.private: -lgssapi_krb5 -lpthread -ldl -lm'; \
	    echo 'Cflags: -I$${includedir}'; \
	  } > $(CAPI_OUT)/pkgconfig/$$pc.pc; \
	done
	@echo "==> $(CAPI_OUT): libzmq.so.5 (soname $$(objdump -p $(CAPI_OUT)/libzmq.so.5 | awk '/SONAME/ {print $$2}')), liboxmq.a, include/{zmq.h,oxmq_stats.h}, pkgconfig/{libzmq,oxmq}.pc"

$(CAPI_BIN)/%: $(CAPI_SRC)/%.c $(CAPI_SRC)/testutil.h $(CAPI_INC)/zmq.h $(CAPI_INC)/oxmq_stats.h
	@mkdir -p $(CAPI_BIN)
	$(CAPI_CC) $(CAPI_CFLAGS) -o $@ $< $(CAPI_OX_FLAGS) -ldl

$(CAPI_BIN)/%.libzmq: $(CAPI_SRC)/%.c $(CAPI_SRC)/testutil.h
	@mkdir -p $(CAPI_BIN)
	$(CAPI_CC) $(CAPI_CFLAGS) -DREAL_LIBZMQ -I$(CAPI_SRC) -o $@ $< $(CAPI_REAL_FLAGS) -ldl

capi-progs: capi
	@$(MAKE) -s --no-print-directory $(foreach p,$(CAPI_PROGS),$(CAPI_BIN)/$(p)) \
	  $(foreach p,$(filter-out $(CAPI_OXMQ_ONLY),$(CAPI_PROGS)),$(CAPI_BIN)/$(p).libzmq)

capi-test: capi-progs
	@echo "==> tests/interop/capi/run.sh"
	@CAPI_BIN=$(CAPI_BIN) CAPI_LIB=$(CAPI_ABS)/libzmq.so.5 tests/interop/capi/run.sh

TEST_STEPS += capi-test
