# `make install PREFIX=...` / `make uninstall PREFIX=...`: oxmq's C ABI laid out
# as libzmq's own `make install` lays it out, for people who build from source:
#   $(LIBDIR)/libzmq.so.5 (soname libzmq.so.5), libzmq.so -> libzmq.so.5, liboxmq.a
#   $(INCLUDEDIR)/zmq.h, zmq_utils.h, oxmq_stats.h (oxmq's own statistics API)
#   $(PKGCONFIGDIR)/libzmq.pc
# so `gcc prog.c $(pkg-config --cflags --libs libzmq)` builds against oxmq with
# PKG_CONFIG_PATH=$(PREFIX)/lib/pkgconfig. DESTDIR stages the tree for a
# package (files land under $(DESTDIR)$(PREFIX), the .pc names $(PREFIX)).
# LIBDIR/INCLUDEDIR/PKGCONFIGDIR override the layout (e.g. Debian's multiarch
# LIBDIR=$(PREFIX)/lib/x86_64-linux-gnu).
#
#   make install-test   installs into a temporary PREFIX, builds a C program
#                       with pkg-config, runs it, checks it ran on oxmq, then
#                       uninstalls and checks nothing is left (part of make test)

PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
DESTDIR ?=
INSTALL ?= install
# The files `install` creates, relative to $(DESTDIR); uninstall removes exactly these.
INSTALLED_FILES = $(LIBDIR)/libzmq.so.5 $(LIBDIR)/libzmq.so $(LIBDIR)/liboxmq.a \
                  $(INCLUDEDIR)/zmq.h $(INCLUDEDIR)/zmq_utils.h $(INCLUDEDIR)/oxmq_stats.h \
                  $(PKGCONFIGDIR)/libzmq.pc

.PHONY: install uninstall install-test

install: capi
	@echo "==> install oxmq's C ABI into $(DESTDIR)$(PREFIX)"
	@$(INSTALL) -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR)
	@$(INSTALL) -m 0755 $(CAPI_OUT)/libzmq.so.5 $(DESTDIR)$(LIBDIR)/libzmq.so.5
	@ln -sfn libzmq.so.5 $(DESTDIR)$(LIBDIR)/libzmq.so
	@$(INSTALL) -m 0644 $(CAPI_OUT)/liboxmq.a $(DESTDIR)$(LIBDIR)/liboxmq.a
	@$(INSTALL) -m 0644 $(CAPI_INC)/zmq.h $(CAPI_INC)/zmq_utils.h $(CAPI_INC)/oxmq_stats.h $(DESTDIR)$(INCLUDEDIR)/
	@{ echo "prefix=$(PREFIX)"; \
	   echo "libdir=$(LIBDIR)"; \
	   echo "includedir=$(INCLUDEDIR)"; \
	   echo ""; \
	   echo "Name: libzmq"; \
	   echo "Description: oxmq, ZeroMQ in Rust, with the libzmq 4.3 C ABI"; \
	   echo "Version: 4.3.5"; \
	   echo 'Libs: -L$${libdir} -lzmq'; \
	   echo "Libs.private: -lgssapi_krb5 -lpthread -ldl -lm"; \
	   echo 'Cflags: -I$${includedir}'; \
	 } > $(DESTDIR)$(PKGCONFIGDIR)/libzmq.pc
	@chmod 0644 $(DESTDIR)$(PKGCONFIGDIR)/libzmq.pc
	@for f in $(INSTALLED_FILES); do echo "    $(DESTDIR)$$f"; done
	@case "$(LIBDIR)" in /usr/lib|/usr/local/lib|/usr/lib/*-linux-gnu) \
	  [ -z "$(DESTDIR)" ] && [ "$$(id -u)" -eq 0 ] && command -v ldconfig >/dev/null && ldconfig || true;; esac

uninstall:
	@echo "==> uninstall oxmq's C ABI from $(DESTDIR)$(PREFIX)"
	@for f in $(INSTALLED_FILES); do \
	  if [ -e "$(DESTDIR)$$f" ] || [ -L "$(DESTDIR)$$f" ]; then rm -f "$(DESTDIR)$$f" && echo "    removed $(DESTDIR)$$f"; fi; \
	done
	@: "directories go only if install left them empty, never one that holds anything else"
	@rmdir $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) 2>/dev/null || true
	@case "$(LIBDIR)" in /usr/lib|/usr/local/lib|/usr/lib/*-linux-gnu) \
	  [ -z "$(DESTDIR)" ] && [ "$$(id -u)" -eq 0 ] && command -v ldconfig >/dev/null && ldconfig || true;; esac

install-test: capi
	@echo "==> tests/packaging/install/run.sh (make install/uninstall into a temporary PREFIX, a C program via pkg-config)"
	@tests/packaging/install/run.sh

TEST_STEPS += install-test
