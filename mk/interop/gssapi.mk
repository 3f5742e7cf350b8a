# ZMQ_GSSAPI (issue 23, item 3): `make gssapi-test` starts a real MIT Kerberos
# KDC on a throwaway realm under target/gssapi (its own krb5.conf and kdc.conf
# through KRB5_CONFIG / KRB5_KDC_PROFILE; nothing under /etc is used), and runs
# tests/interop/gssapi/gss_peer.c (built once against Debian's libzmq5, which is linked
# with MIT krb5) on Debian's libzmq and on oxmq's libzmq.so.5, in both roles:
# encrypted, GSSAPI_PLAINTEXT, with a ZAP handler, and failing (an unknown
# service principal, a stale service keytab, a ZAP refusal), then libzmq's own
# tests/test_security_gssapi on both libraries. The mechanism's byte layout is
# tested by oxmq-proto's tests/mechanisms.rs (cargo test).

# libkrb5-dev: libgssapi_krb5 for the `libgssapi` crate, whose bindings
# bindgen makes at build time (libclang-dev). krb5-kdc has krb5kdc and
# kdb5_util, krb5-admin-server kadmin.local (addprinc, ktadd).
DEB_PKGS += libkrb5-dev libclang-dev krb5-kdc krb5-admin-server libzmq3-dev gcc

GSSAPI_OUT := target/gssapi
# libzmq's own GSSAPI test program, from `make libzmq-suite`'s build (cached
# under target/libzmq-suite; built here first when a fresh clone lacks it).
GSSAPI_LIBZMQ_TEST := $(CURDIR)/target/libzmq-suite/build/bin/test_security_gssapi

.PHONY: gssapi-test

$(GSSAPI_OUT)/gss_peer: tests/interop/gssapi/gss_peer.c
	@mkdir -p $(GSSAPI_OUT)
	gcc -O2 -Wall -Wextra -Werror -std=gnu11 -pthread -o $@ $< $$(pkg-config --cflags --libs libzmq)

gssapi-test: deb-deps capi libzmq-suite-build $(GSSAPI_OUT)/gss_peer
	@echo "==> tests/interop/gssapi/run.sh (KDC on a throwaway realm; oxmq <-> Debian's libzmq $$(pkg-config --modversion libzmq))"
	@start=$$(date +%s); \
	GSS_PEER=$(GSSAPI_OUT)/gss_peer OXMQ_LIB_DIR=$(CURDIR)/$(CAPI_OUT) GSS_DIR=$(GSSAPI_OUT) \
	  LIBZMQ_GSSAPI_TEST=$(GSSAPI_LIBZMQ_TEST) tests/interop/gssapi/run.sh; \
	echo "gssapi-test: $$(( $$(date +%s) - start )) s"

TEST_STEPS += gssapi-test
