/* One side of a ZMQ_GSSAPI exchange, for tests/interop/gssapi/run.sh. Built once
 * against Debian's libzmq; run as is (Debian's libzmq5) or with oxmq's
 * libzmq.so.5 first on LD_LIBRARY_PATH. Credentials come from the
 * environment the script sets (KRB5_CONFIG, KRB5_KTNAME, KRB5_CLIENT_KTNAME,
 * KRB5CCNAME).
 *
 *   gss_peer server PORTFILE [plaintext] [zap|zap-deny] [expect-fail]   REP, GSSAPI_SERVER
 *   gss_peer client PORT SERVICE [plaintext] [expect-fail] [hostbased]   REQ, GSSAPI client
 *
 * SERVICE is a Kerberos principal name, or with `hostbased` a GSS host-based
 * service name (`service@host`, ZMQ_GSSAPI_NT_HOSTBASED, the default type).
 *
 * Both print the library's version and the monitor events of the run. The
 * server answers one request (and checks User-Id when it runs a ZAP
 * handler); the client sends one, expects the answer, and exits 0 only if it
 * came. With `expect-fail` either side instead waits for the handshake to
 * fail, and exits 0 if nothing came through and it is still alive. */
#include <zmq.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(cond)                                                                                 \
    do {                                                                                            \
        if (!(cond)) {                                                                              \
            fprintf(stderr, "gss_peer: %s:%d: %s failed (errno %d: %s)\n", __FILE__, __LINE__, #cond, \
                    zmq_errno(), zmq_strerror(zmq_errno()));                                        \
            exit(1);                                                                                \
        }                                                                                           \
    } while (0)

static const char *SERVICE_PRINCIPAL_ENV = "GSS_SERVICE_PRINCIPAL";
static const char *CLIENT_PRINCIPAL_ENV = "GSS_CLIENT_PRINCIPAL";

static int has_arg(int argc, char **argv, const char *word) {
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], word) == 0)
            return 1;
    return 0;
}

static void set_int(void *s, int opt, int v) { CHECK(zmq_setsockopt(s, opt, &v, sizeof v) == 0); }

static void set_str(void *s, int opt, const char *v) { CHECK(zmq_setsockopt(s, opt, v, strlen(v)) == 0); }

static const char *event_name(int e) {
    switch (e) {
    case ZMQ_EVENT_CONNECTED: return "CONNECTED";
    case ZMQ_EVENT_CONNECT_DELAYED: return "CONNECT_DELAYED";
    case ZMQ_EVENT_CONNECT_RETRIED: return "CONNECT_RETRIED";
    case ZMQ_EVENT_LISTENING: return "LISTENING";
    case ZMQ_EVENT_ACCEPTED: return "ACCEPTED";
    case ZMQ_EVENT_CLOSED: return "CLOSED";
    case ZMQ_EVENT_DISCONNECTED: return "DISCONNECTED";
    case ZMQ_EVENT_MONITOR_STOPPED: return "MONITOR_STOPPED";
    case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL: return "HANDSHAKE_FAILED_NO_DETAIL";
    case ZMQ_EVENT_HANDSHAKE_SUCCEEDED: return "HANDSHAKE_SUCCEEDED";
    case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL: return "HANDSHAKE_FAILED_PROTOCOL";
    case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH: return "HANDSHAKE_FAILED_AUTH";
    default: return "OTHER";
    }
}

/* Prints every event queued on the monitor, waiting up to `ms` for the first. */
static void drain_events(void *mon, int ms) {
    zmq_pollitem_t item = {mon, 0, ZMQ_POLLIN, 0};
    while (zmq_poll(&item, 1, ms) == 1) {
        zmq_msg_t m;
        zmq_msg_init(&m);
        CHECK(zmq_msg_recv(&m, mon, 0) >= 6);
        unsigned short event;
        unsigned int value;
        memcpy(&event, zmq_msg_data(&m), 2);
        memcpy(&value, (char *) zmq_msg_data(&m) + 2, 4);
        zmq_msg_close(&m);
        zmq_msg_init(&m);
        CHECK(zmq_msg_recv(&m, mon, 0) >= 0);
        zmq_msg_close(&m);
        /* DISCONNECTED/CLOSED carry an fd, LISTENING too: not comparable. */
        int has_value = event & (ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
                                 | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH);
        if (has_value)
            printf("event %s %u\n", event_name(event), value);
        else
            printf("event %s\n", event_name(event));
        ms = 0;
    }
    fflush(stdout);
}

static void *monitor_of(void *ctx, void *s, const char *name) {
    char ep[64];
    snprintf(ep, sizeof ep, "inproc://monitor-%s", name);
    CHECK(zmq_socket_monitor(s, ep, ZMQ_EVENT_ALL) == 0);
    void *mon = zmq_socket(ctx, ZMQ_PAIR);
    CHECK(mon != NULL);
    CHECK(zmq_connect(mon, ep) == 0);
    return mon;
}

/* A ZAP handler (RFC 27) that admits every principal as "zap:" + principal
 * (or, with `zap_deny`, refuses it with 400) and prints what it was asked. */
static int zap_deny;

static void *zap_handler(void *ctx) {
    void *h = zmq_socket(ctx, ZMQ_REP);
    CHECK(zmq_bind(h, "inproc://zeromq.zap.01") == 0);
    char frames[7][256];
    int sizes[7];
    for (int i = 0; i < 7; i++) {
        sizes[i] = zmq_recv(h, frames[i], sizeof frames[i] - 1, 0);
        if (sizes[i] < 0) { /* context terminated */
            zmq_close(h);
            return NULL;
        }
        frames[i][sizes[i]] = 0;
    }
    int more;
    size_t more_len = sizeof more;
    CHECK(zmq_getsockopt(h, ZMQ_RCVMORE, &more, &more_len) == 0 && !more);
    printf("zap version=%s mechanism=%s credential=%s\n", frames[0], frames[5], frames[6]);
    fflush(stdout);
    char user[300];
    snprintf(user, sizeof user, "zap:%s", frames[6]);
    zmq_send(h, "1.0", 3, ZMQ_SNDMORE);
    zmq_send(h, frames[1], sizes[1], ZMQ_SNDMORE);
    zmq_send(h, zap_deny ? "400" : "200", 3, ZMQ_SNDMORE);
    zmq_send(h, "OK", 2, ZMQ_SNDMORE);
    zmq_send(h, user, strlen(user), ZMQ_SNDMORE);
    zmq_send(h, "", 0, 0);
    zmq_close(h);
    return NULL;
}

static int run_server(int argc, char **argv) {
    int expect_fail = has_arg(argc, argv, "expect-fail");
    void *ctx = zmq_ctx_new();
    pthread_t zap;
    zap_deny = has_arg(argc, argv, "zap-deny");
    int with_zap = has_arg(argc, argv, "zap") || zap_deny;
    if (with_zap)
        CHECK(pthread_create(&zap, NULL, zap_handler, ctx) == 0);
    void *s = zmq_socket(ctx, ZMQ_REP);
    void *mon = monitor_of(ctx, s, "server");
    set_int(s, ZMQ_GSSAPI_SERVER, 1);
    set_str(s, ZMQ_GSSAPI_PRINCIPAL, getenv(SERVICE_PRINCIPAL_ENV));
    set_int(s, ZMQ_GSSAPI_PRINCIPAL_NAMETYPE, ZMQ_GSSAPI_NT_KRB5_PRINCIPAL);
    if (has_arg(argc, argv, "plaintext"))
        set_int(s, ZMQ_GSSAPI_PLAINTEXT, 1);
    set_int(s, ZMQ_RCVTIMEO, expect_fail ? 6000 : 20000);
    set_int(s, ZMQ_HANDSHAKE_IVL, 3000);
    int mech;
    size_t len = sizeof mech;
    CHECK(zmq_getsockopt(s, ZMQ_MECHANISM, &mech, &len) == 0);
    CHECK(mech == ZMQ_GSSAPI);
    CHECK(zmq_bind(s, "tcp://127.0.0.1:*") == 0);
    char ep[256];
    len = sizeof ep;
    CHECK(zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, ep, &len) == 0);
    FILE *f = fopen(argv[2], "w");
    CHECK(f != NULL);
    fprintf(f, "%s\n", strrchr(ep, ':') + 1);
    fclose(f);

    zmq_msg_t req;
    zmq_msg_init(&req);
    int n = zmq_msg_recv(&req, s, 0);
    int rc = 0;
    if (n < 0) {
        printf("server: no request (errno %d)\n", zmq_errno());
        rc = expect_fail ? 0 : 1;
    } else {
        const char *uid = zmq_msg_gets(&req, "User-Id");
        printf("server: got %.*s user-id=%s\n", n, (char *) zmq_msg_data(&req), uid ? uid : "(none)");
        char reply[300];
        int m = snprintf(reply, sizeof reply, "pong:%.*s", n, (char *) zmq_msg_data(&req));
        CHECK(zmq_send(s, reply, m, 0) == m);
        if (expect_fail || (with_zap && (uid == NULL || strncmp(uid, "zap:", 4) != 0)))
            rc = 1;
    }
    zmq_msg_close(&req);
    drain_events(mon, 200);
    zmq_close(mon);
    set_int(s, ZMQ_LINGER, 1000);
    zmq_close(s);
    zmq_ctx_term(ctx);
    if (with_zap)
        pthread_join(zap, NULL);
    return rc;
}

static int run_client(int argc, char **argv) {
    int expect_fail = has_arg(argc, argv, "expect-fail");
    void *ctx = zmq_ctx_new();
    void *s = zmq_socket(ctx, ZMQ_REQ);
    void *mon = monitor_of(ctx, s, "client");
    const char *me = getenv(CLIENT_PRINCIPAL_ENV);
    if (me && *me) {
        set_str(s, ZMQ_GSSAPI_PRINCIPAL, me);
        set_int(s, ZMQ_GSSAPI_PRINCIPAL_NAMETYPE, ZMQ_GSSAPI_NT_KRB5_PRINCIPAL);
    }
    set_str(s, ZMQ_GSSAPI_SERVICE_PRINCIPAL, argv[3]);
    if (!has_arg(argc, argv, "hostbased"))
        set_int(s, ZMQ_GSSAPI_SERVICE_PRINCIPAL_NAMETYPE, ZMQ_GSSAPI_NT_KRB5_PRINCIPAL);
    if (has_arg(argc, argv, "plaintext"))
        set_int(s, ZMQ_GSSAPI_PLAINTEXT, 1);
    set_int(s, ZMQ_RCVTIMEO, expect_fail ? 4000 : 15000);
    set_int(s, ZMQ_HANDSHAKE_IVL, 1500);
    set_int(s, ZMQ_RECONNECT_IVL, 10000);
    set_int(s, ZMQ_LINGER, 0);
    int v;
    size_t len = sizeof v;
    CHECK(zmq_getsockopt(s, ZMQ_MECHANISM, &v, &len) == 0 && v == ZMQ_GSSAPI);
    len = sizeof v;
    CHECK(zmq_getsockopt(s, ZMQ_GSSAPI_SERVER, &v, &len) == 0 && v == 0);
    char ep[64];
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%s", argv[2]);
    CHECK(zmq_connect(s, ep) == 0);
    CHECK(zmq_send(s, "ping", 4, 0) == 4);
    char buf[300];
    int n = zmq_recv(s, buf, sizeof buf - 1, 0);
    int rc;
    if (n >= 0) {
        buf[n] = 0;
        printf("client: got %s\n", buf);
        rc = (!expect_fail && strcmp(buf, "pong:ping") == 0) ? 0 : 1;
    } else {
        printf("client: no reply (errno %d)\n", zmq_errno());
        rc = expect_fail ? 0 : 1;
    }
    drain_events(mon, 200);
    zmq_close(mon);
    zmq_close(s);
    zmq_ctx_term(ctx);
    return rc;
}

int main(int argc, char **argv) {
    int major, minor, patch;
    zmq_version(&major, &minor, &patch);
    printf("%s: libzmq %d.%d.%d, has gssapi %d\n", argc > 1 ? argv[1] : "?", major, minor, patch, zmq_has("gssapi"));
    fflush(stdout);
    if (argc >= 3 && strcmp(argv[1], "server") == 0)
        return run_server(argc, argv);
    if (argc >= 4 && strcmp(argv[1], "client") == 0)
        return run_client(argc, argv);
    fprintf(stderr, "usage: gss_peer server PORTFILE [plaintext] [zap|zap-deny] [expect-fail] | client PORT SERVICE [plaintext] [expect-fail] [hostbased]\n");
    return 2;
}
