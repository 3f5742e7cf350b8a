/* Every exported function of the C ABI, its error paths, and the struct
 * layouts. Runs against oxmq's libzmq.so.5 (and, built with -DREAL_LIBZMQ,
 * against Debian's libzmq to check that the expectations are libzmq's). */

#define _GNU_SOURCE
#include "testutil.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <unistd.h>

/* Checks of cases where libzmq crashes or asserts and oxmq fails cleanly. */
#ifdef REAL_LIBZMQ
#define OXMQ_ONLY(stmt)
#else
#define OXMQ_ONLY(stmt) stmt
#endif

static void test_layout_and_version(void)
{
    CHECK(sizeof(zmq_msg_t) == 64);
    CHECK(alignof(zmq_msg_t) >= 8);
    CHECK(sizeof(zmq_pollitem_t) == 16);
    CHECK(offsetof(zmq_pollitem_t, fd) == 8);
    CHECK(offsetof(zmq_pollitem_t, events) == 12);
    CHECK(offsetof(zmq_pollitem_t, revents) == 14);

    int major = 0, minor = 0, patch = 0;
    zmq_version(&major, &minor, &patch);
    CHECK(major == 4 && minor == 3 && patch >= 4);
    CHECK(ZMQ_MAKE_VERSION(major, minor, 0) == 40300);
#ifndef REAL_LIBZMQ
    zmq_version(NULL, NULL, NULL); /* tolerated by oxmq (libzmq crashes) */
#endif

    CHECK(ZMQ_HAUSNUMERO == 156384712);
    CHECK(EFSM == 156384763 && ENOCOMPATPROTO == 156384764 && ETERM == 156384765 && EMTHREAD == 156384766);
    CHECK(ZMQ_IDENTITY == ZMQ_ROUTING_ID && ZMQ_NOBLOCK == ZMQ_DONTWAIT);
    CHECK(ZMQ_XREQ == ZMQ_DEALER && ZMQ_XREP == ZMQ_ROUTER);
}

static void test_errors_and_capabilities(void)
{
    CHECK(strcmp(zmq_strerror(EFSM), "Operation cannot be accomplished in current state") == 0);
    CHECK(strcmp(zmq_strerror(ETERM), "Context was terminated") == 0);
    CHECK(strlen(zmq_strerror(EAGAIN)) > 0);
    CHECK(zmq_strerror(EINVAL) == zmq_strerror(EINVAL)); /* stable pointer */
    CHECK(zmq_strerror(123456) != NULL);

    CHECK(zmq_has("ipc") == 1);
    CHECK(zmq_has("nonsense") == 0);
    /* Both answer as Debian's build, without the draft API (oxmq exports the
       draft functions, but a program built against Debian's zmq.h asks). */
    CHECK(zmq_has("draft") == 0);
    CHECK(zmq_has("curve") == 1);
    CHECK(zmq_has("gssapi") == 1);
    /* Both: Debian links libzmq with libpgm and libnorm, as oxmq is. */
    CHECK(zmq_has("pgm") == 1 && zmq_has("norm") == 1);
#ifndef REAL_LIBZMQ /* Debian's libzmq has tipc */
    CHECK(zmq_has("tipc") == 0 && zmq_has("vmci") == 0);
    CHECK(zmq_has(NULL) == 0);
#endif

    /* errno is set, and zmq_errno reports it. */
    errno = 0;
    CHECK(zmq_close(NULL) == -1);
    CHECK(errno == ENOTSOCK && zmq_errno() == ENOTSOCK);
}

static void test_context(void)
{
    void *ctx = zmq_ctx_new();
    NOTNULL(ctx);
    CHECK(zmq_ctx_get(ctx, ZMQ_IO_THREADS) == ZMQ_IO_THREADS_DFLT);
    CHECK(zmq_ctx_get(ctx, ZMQ_MAX_SOCKETS) == ZMQ_MAX_SOCKETS_DFLT);
    CHECK(zmq_ctx_get(ctx, ZMQ_MSG_T_SIZE) == (int)sizeof(zmq_msg_t));
    CHECK(zmq_ctx_get(ctx, ZMQ_SOCKET_LIMIT) > 0);
    OK(zmq_ctx_set(ctx, ZMQ_IO_THREADS, 2));
    CHECK(zmq_ctx_get(ctx, ZMQ_IO_THREADS) == 2);
    OK(zmq_ctx_set(ctx, ZMQ_MAX_SOCKETS, 100));
    CHECK(zmq_ctx_get(ctx, ZMQ_MAX_SOCKETS) == 100);
    OK(zmq_ctx_set(ctx, ZMQ_BLOCKY, 0));
    CHECK(zmq_ctx_get(ctx, ZMQ_BLOCKY) == 0);
    OK(zmq_ctx_set(ctx, ZMQ_IPV6, 1));
    CHECK(zmq_ctx_get(ctx, ZMQ_IPV6) == 1);
    FAILS(zmq_ctx_set(ctx, 9999, 1), EINVAL);
    FAILS(zmq_ctx_get(ctx, 9999), EINVAL);
    FAILS(zmq_ctx_set(ctx, ZMQ_IO_THREADS, -1), EINVAL);
    FAILS(zmq_ctx_get(NULL, ZMQ_IO_THREADS), EFAULT);
    FAILS(zmq_ctx_set(NULL, ZMQ_IO_THREADS, 1), EFAULT);
    FAILS(zmq_ctx_term(NULL), EFAULT);
    FAILS(zmq_ctx_shutdown(NULL), EFAULT);
    FAILS(zmq_ctx_destroy(NULL), EFAULT);

    /* Sockets of a shut-down context fail with ETERM; new ones too. */
    void *s = zmq_socket(ctx, ZMQ_PAIR);
    NOTNULL(s);
    OK(zmq_ctx_shutdown(ctx));
    char buf[4];
    FAILS(zmq_recv(s, buf, sizeof buf, 0), ETERM);
    FAILS_NULL(zmq_socket(ctx, ZMQ_PAIR), ETERM);
    OK(zmq_close(s));
    OK(zmq_ctx_term(ctx));

    /* Legacy names. */
    void *old = zmq_init(1);
    NOTNULL(old);
    OK(zmq_term(old));
    FAILS_NULL(zmq_init(-1), EINVAL);
    void *d = zmq_ctx_new();
    OK(zmq_ctx_destroy(d));
}

static void test_socket_lifecycle_and_endpoints(void *ctx)
{
    FAILS_NULL(zmq_socket(NULL, ZMQ_PAIR), EFAULT);
    FAILS_NULL(zmq_socket(ctx, 99), EINVAL);

    /* Foreign memory is not a socket. */
    alignas(8) unsigned char garbage[64];
    memset(garbage, 0x5a, sizeof garbage);
    FAILS(zmq_close(garbage), ENOTSOCK);
    FAILS(zmq_close(NULL), ENOTSOCK);
    FAILS(zmq_bind(NULL, "inproc://x"), ENOTSOCK);
    FAILS(zmq_connect(garbage, "inproc://x"), ENOTSOCK);
    FAILS(zmq_unbind(NULL, "inproc://x"), ENOTSOCK);
    FAILS(zmq_disconnect(NULL, "inproc://x"), ENOTSOCK);
    FAILS(zmq_send(NULL, "a", 1, 0), ENOTSOCK);
    FAILS(zmq_recv(NULL, garbage, 1, 0), ENOTSOCK);
    int v = 0;
    size_t vl = sizeof v;
    FAILS(zmq_setsockopt(NULL, ZMQ_LINGER, &v, sizeof v), ENOTSOCK);
    FAILS(zmq_getsockopt(NULL, ZMQ_LINGER, &v, &vl), ENOTSOCK);

    void *s = zmq_socket(ctx, ZMQ_PULL);
    NOTNULL(s);
    OXMQ_ONLY(FAILS(zmq_bind(s, NULL), EINVAL));
    FAILS(zmq_bind(s, "nosuch://x"), EPROTONOSUPPORT);
    FAILS(zmq_bind(s, "tcp://"), EINVAL);
    OK(zmq_bind(s, "tcp://127.0.0.1:*"));
    char endpoint[256];
    size_t len = sizeof endpoint;
    OK(zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, endpoint, &len));
    CHECK(len == strlen(endpoint) + 1); /* length includes the NUL */
    CHECK(strncmp(endpoint, "tcp://127.0.0.1:", 16) == 0);
    size_t small = 5;
    FAILS(zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, endpoint, &small), EINVAL);

    /* A second socket binding the same port: EADDRINUSE. */
    void *t = zmq_socket(ctx, ZMQ_PULL);
    FAILS(zmq_bind(t, endpoint), EADDRINUSE);
    OK(zmq_close(t));

    OK(zmq_unbind(s, endpoint));
    FAILS(zmq_unbind(s, endpoint), ENOENT);
    FAILS(zmq_disconnect(s, "tcp://127.0.0.1:1"), ENOENT);
    OK(zmq_connect(s, "tcp://127.0.0.1:1"));
    OK(zmq_disconnect(s, "tcp://127.0.0.1:1"));
    OK(zmq_bind(s, "ipc:///tmp/oxmq-capi-test-api.ipc"));
    OK(zmq_unbind(s, "ipc:///tmp/oxmq-capi-test-api.ipc"));
    OK(zmq_close(s));
}

static void test_options(void *ctx)
{
    void *s = zmq_socket(ctx, ZMQ_DEALER);
    NOTNULL(s);
    int v;
    size_t len;

    v = 250;
    OK(zmq_setsockopt(s, ZMQ_LINGER, &v, sizeof v));
    v = 0;
    len = sizeof v;
    OK(zmq_getsockopt(s, ZMQ_LINGER, &v, &len));
    CHECK(v == 250 && len == sizeof(int));

    len = sizeof v;
    OK(zmq_getsockopt(s, ZMQ_TYPE, &v, &len));
    CHECK(v == ZMQ_DEALER);
    len = sizeof v;
    OK(zmq_getsockopt(s, ZMQ_SNDHWM, &v, &len));
    CHECK(v == 1000);
    len = sizeof v;
    OK(zmq_getsockopt(s, ZMQ_RCVMORE, &v, &len));
    CHECK(v == 0);
    len = sizeof v;
    OK(zmq_getsockopt(s, ZMQ_EVENTS, &v, &len));
    CHECK((v & ~(ZMQ_POLLIN | ZMQ_POLLOUT)) == 0);

    int fd = -1;
    len = sizeof fd;
    OK(zmq_getsockopt(s, ZMQ_FD, &fd, &len));
    CHECK(len == sizeof(int) && fd >= 0 && fcntl(fd, F_GETFD) != -1);

    /* 64-bit options. */
    int64_t big = 1 << 20;
    OK(zmq_setsockopt(s, ZMQ_MAXMSGSIZE, &big, sizeof big));
    big = 0;
    len = sizeof big;
    OK(zmq_getsockopt(s, ZMQ_MAXMSGSIZE, &big, &len));
    CHECK(big == 1 << 20 && len == 8);
    uint64_t affinity = 3;
    OK(zmq_setsockopt(s, ZMQ_AFFINITY, &affinity, sizeof affinity));
    FAILS(zmq_setsockopt(s, ZMQ_MAXMSGSIZE, &v, sizeof v), EINVAL);

    /* Binary routing id: exact length back. */
    OK(zmq_setsockopt(s, ZMQ_ROUTING_ID, "A\0B", 3));
    char id[256];
    len = sizeof id;
    OK(zmq_getsockopt(s, ZMQ_ROUTING_ID, id, &len));
    CHECK(len == 3 && memcmp(id, "A\0B", 3) == 0);
    len = 2;
    FAILS(zmq_getsockopt(s, ZMQ_ROUTING_ID, id, &len), EINVAL);
    OK(zmq_setsockopt(s, ZMQ_IDENTITY, "me", 2));

    /* Errors. */
    len = 2;
    FAILS(zmq_getsockopt(s, ZMQ_LINGER, &v, &len), EINVAL); /* buffer too small */
    OXMQ_ONLY(FAILS(zmq_getsockopt(s, ZMQ_LINGER, &v, NULL), EFAULT));
    FAILS(zmq_setsockopt(s, 9999, &v, sizeof v), EINVAL);
    len = sizeof v;
    FAILS(zmq_getsockopt(s, 9999, &v, &len), EINVAL);
    FAILS(zmq_setsockopt(s, ZMQ_LINGER, &v, 2), EINVAL);
    OXMQ_ONLY(FAILS(zmq_setsockopt(s, ZMQ_LINGER, NULL, sizeof v), EFAULT));
    OK(zmq_close(s));

    /* SUBSCRIBE with NULL/0 subscribes to everything. */
    void *sub = zmq_socket(ctx, ZMQ_SUB);
    OK(zmq_setsockopt(sub, ZMQ_SUBSCRIBE, NULL, 0));
    OK(zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "topic", 5));
    OK(zmq_setsockopt(sub, ZMQ_UNSUBSCRIBE, "topic", 5));
    OK(zmq_close(sub));
}

static void test_send_recv(void *ctx)
{
    void *a = zmq_socket(ctx, ZMQ_PAIR);
    void *b = zmq_socket(ctx, ZMQ_PAIR);
    OK(zmq_bind(a, "inproc://send-recv"));
    OK(zmq_connect(b, "inproc://send-recv"));

    char buf[64];
    FAILS(zmq_recv(a, buf, sizeof buf, ZMQ_DONTWAIT), EAGAIN);
    CHECK(zmq_send(b, "hello world", 11, 0) == 11);
    /* Truncated to the buffer, the full size returned. */
    CHECK(zmq_recv(a, buf, 5, 0) == 11);
    CHECK(memcmp(buf, "hello", 5) == 0);

    OXMQ_ONLY(FAILS(zmq_send(b, NULL, 5, 0), EFAULT));
    CHECK(zmq_send(b, NULL, 0, 0) == 0);
    CHECK(zmq_recv(a, NULL, 0, 0) == 0);

    static const char constant[] = "constant data";
    CHECK(zmq_send_const(b, constant, sizeof constant, ZMQ_SNDMORE) == (int)sizeof constant);
    CHECK(zmq_send(b, "tail", 4, 0) == 4);
    CHECK(zmq_recv(a, buf, sizeof buf, 0) == (int)sizeof constant);
    CHECK(strcmp(buf, constant) == 0);
    int more = 0;
    size_t len = sizeof more;
    OK(zmq_getsockopt(a, ZMQ_RCVMORE, &more, &len));
    CHECK(more == 1);
    CHECK(zmq_recv(a, buf, sizeof buf, 0) == 4);
    len = sizeof more;
    OK(zmq_getsockopt(a, ZMQ_RCVMORE, &more, &len));
    CHECK(more == 0);

    /* sendiov / recviov. */
    struct iovec out[3] = {{"one", 3}, {"two!", 4}, {"three", 5}};
    CHECK(zmq_sendiov(b, out, 3, ZMQ_SNDMORE) == 5); /* one 3-frame message */
    struct iovec in[4];
    size_t count = 4;
    CHECK(zmq_recviov(a, in, &count, 0) == 3);
    CHECK(count == 3);
    CHECK(in[0].iov_len == 3 && memcmp(in[0].iov_base, "one", 3) == 0);
    CHECK(in[2].iov_len == 5 && memcmp(in[2].iov_base, "three", 5) == 0);
    for (size_t i = 0; i < count; i++)
        free(in[i].iov_base);
    FAILS(zmq_sendiov(b, NULL, 1, 0), EINVAL);

    /* SNDTIMEO / RCVTIMEO give EAGAIN. */
    int timeout = 20;
    OK(zmq_setsockopt(a, ZMQ_RCVTIMEO, &timeout, sizeof timeout));
    double t0 = now_seconds();
    FAILS(zmq_recv(a, buf, sizeof buf, 0), EAGAIN);
    CHECK(now_seconds() - t0 >= 0.015);

    OK(zmq_close(a));
    OK(zmq_close(b));
}

static void test_state_errors(void *ctx)
{
    /* EFSM: REQ must send first, REP must receive first. */
    void *req = zmq_socket(ctx, ZMQ_REQ);
    void *rep = zmq_socket(ctx, ZMQ_REP);
    char buf[16];
    FAILS(zmq_recv(req, buf, sizeof buf, 0), EFSM);
    FAILS(zmq_send(rep, "x", 1, 0), EFSM);
    OK(zmq_bind(rep, "inproc://fsm"));
    OK(zmq_connect(req, "inproc://fsm"));
    OK(send_str(req, "ping", 0));
    FAILS(zmq_send(req, "again", 5, 0), EFSM);
    expect_str(rep, "ping");
    OK(send_str(rep, "pong", 0));
    expect_str(req, "pong");
    OK(zmq_close(req));
    OK(zmq_close(rep));

    /* EHOSTUNREACH: ROUTER_MANDATORY to an unknown peer. */
    void *router = zmq_socket(ctx, ZMQ_ROUTER);
    int one = 1;
    OK(zmq_setsockopt(router, ZMQ_ROUTER_MANDATORY, &one, sizeof one));
    FAILS(zmq_send(router, "nobody", 6, ZMQ_SNDMORE), EHOSTUNREACH);
    OK(zmq_close(router));

    /* ENOTSUP: receiving on a PUB. */
    void *pub = zmq_socket(ctx, ZMQ_PUB);
    FAILS(zmq_recv(pub, buf, sizeof buf, 0), ENOTSUP);
    OK(zmq_close(pub));

    /* EAGAIN on a PUSH with no peer and DONTWAIT. */
    void *push = zmq_socket(ctx, ZMQ_PUSH);
    FAILS(zmq_send(push, "x", 1, ZMQ_DONTWAIT), EAGAIN);
    OK(zmq_close(push));
}

/* ------------------------------------------------------------- messages */

static volatile int freed_count;
static void *freed_hint;

static void free_fn(void *data, void *hint)
{
    (void)data;
    freed_hint = hint;
    __atomic_add_fetch(&freed_count, 1, __ATOMIC_SEQ_CST);
}

static void wait_freed(int n)
{
    double deadline = now_seconds() + 5;
    while (__atomic_load_n(&freed_count, __ATOMIC_SEQ_CST) < n && now_seconds() < deadline)
        usleep(1000);
    CHECK(__atomic_load_n(&freed_count, __ATOMIC_SEQ_CST) == n);
}

/* Receive on `sub` until a frame of `size` bytes comes (earlier probes are skipped). */
static void recv_sized(void *sub, const char *payload, size_t size)
{
    zmq_msg_t r;
    OK(zmq_msg_init(&r));
    int n;
    do {
        n = zmq_msg_recv(&r, sub, 0);
        CHECK(n != -1);
    } while ((size_t)n != size);
    CHECK(memcmp(zmq_msg_data(&r), payload, size) == 0);
    OK(zmq_msg_close(&r));
}

/* A lent buffer that is copied (zmq_msg_copy) and fanned out by a PUB to a
 * subscriber over inproc and one over tcp: both get its bytes, and the free
 * function runs once, after the last of them. */
static void test_lent_fanout(void *ctx, const char *payload, size_t size)
{
    void *pub = zmq_socket(ctx, ZMQ_PUB), *s1 = zmq_socket(ctx, ZMQ_SUB), *s2 = zmq_socket(ctx, ZMQ_SUB);
    int tmo = 5000;
    char ep[256];
    size_t len = sizeof ep;
    OK(zmq_bind(pub, "inproc://lent-fanout"));
    OK(zmq_bind(pub, "tcp://127.0.0.1:*"));
    OK(zmq_getsockopt(pub, ZMQ_LAST_ENDPOINT, ep, &len));
    void *subs[2] = {s1, s2};
    for (int i = 0; i < 2; i++) {
        OK(zmq_setsockopt(subs[i], ZMQ_SUBSCRIBE, "", 0));
        OK(zmq_setsockopt(subs[i], ZMQ_RCVTIMEO, &tmo, sizeof tmo));
    }
    OK(zmq_connect(s1, "inproc://lent-fanout"));
    OK(zmq_connect(s2, ep));
    /* Probe until both subscriptions have reached the PUB. */
    int got[2] = {0, 0};
    double deadline = now_seconds() + 5;
    while ((!got[0] || !got[1]) && now_seconds() < deadline) {
        OK(zmq_send(pub, "probe", 5, 0));
        usleep(10000);
        char buf[8];
        for (int i = 0; i < 2; i++)
            while (zmq_recv(subs[i], buf, sizeof buf, ZMQ_DONTWAIT) == 5)
                got[i] = 1;
    }
    CHECK(got[0] && got[1]);
    freed_count = 0;
    zmq_msg_t m, c;
    OK(zmq_msg_init_data(&m, (void *)payload, size, free_fn, (void *)0x5678));
    OK(zmq_msg_init(&c));
    OK(zmq_msg_copy(&c, &m));
    CHECK(zmq_msg_get(&c, ZMQ_SHARED) == 1 && zmq_msg_get(&m, ZMQ_SHARED) == 1);
    CHECK(zmq_msg_data(&c) == payload);
    OK(zmq_msg_send(&m, pub, 0));
    recv_sized(s1, payload, size);
    recv_sized(s2, payload, size);
    CHECK(freed_count == 0); /* `c` still holds it */
    OK(zmq_msg_close(&m));
    OK(zmq_msg_close(&c));
    wait_freed(1);
    CHECK(freed_hint == (void *)0x5678);
    usleep(20000);
    CHECK(freed_count == 1);
    OK(zmq_close(s1));
    OK(zmq_close(s2));
    OK(zmq_close(pub));
}

static void test_messages(void *ctx)
{
    zmq_msg_t m;
    OK(zmq_msg_init(&m));
    CHECK(zmq_msg_size(&m) == 0);
    CHECK(zmq_msg_more(&m) == 0);
    NOTNULL(zmq_msg_data(&m));
    OK(zmq_msg_close(&m));
    /* Closing twice, or closing garbage, fails cleanly. */
    FAILS(zmq_msg_close(&m), EFAULT);
    zmq_msg_t junk;
    memset(&junk, 0xa5, sizeof junk);
    FAILS(zmq_msg_close(&junk), EFAULT);
    OXMQ_ONLY(FAILS(zmq_msg_close(NULL), EFAULT));
    OXMQ_ONLY(FAILS(zmq_msg_init(NULL), EFAULT));
    OXMQ_ONLY(FAILS(zmq_msg_init_size(NULL, 10), EFAULT));
    OXMQ_ONLY(FAILS_NULL(zmq_msg_data(&junk), EFAULT));

    /* init_size: the caller writes into the data, small and large. */
    size_t sizes[] = {0, 1, 38, 39, 1000, 1 << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        OK(zmq_msg_init_size(&m, sizes[i]));
        CHECK(zmq_msg_size(&m) == sizes[i]);
        unsigned char *d = zmq_msg_data(&m);
        NOTNULL(d);
        memset(d, (int)i + 1, sizes[i]);
        CHECK(zmq_msg_data(&m) == d); /* stable */
        OK(zmq_msg_close(&m));
    }

    void *a = zmq_socket(ctx, ZMQ_PAIR);
    void *b = zmq_socket(ctx, ZMQ_PAIR);
    OK(zmq_bind(a, "inproc://msgs"));
    OK(zmq_connect(b, "inproc://msgs"));

    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t n = sizes[i];
        OK(zmq_msg_init_size(&m, n));
        memset(zmq_msg_data(&m), 'a' + (int)i, n);
        CHECK(zmq_msg_send(&m, b, 0) == (int)n);
        CHECK(zmq_msg_size(&m) == 0); /* emptied by a successful send */
        OK(zmq_msg_close(&m));

        zmq_msg_t r;
        OK(zmq_msg_init(&r));
        CHECK(zmq_msg_recv(&r, a, 0) == (int)n);
        CHECK(zmq_msg_size(&r) == n);
        unsigned char *d = zmq_msg_data(&r);
        for (size_t k = 0; k < n; k++)
            CHECK(d[k] == 'a' + i);
        /* Received data may be modified in place. */
        if (n)
            d[0] = 'Z';
        CHECK(n == 0 || ((unsigned char *)zmq_msg_data(&r))[0] == 'Z');
        OK(zmq_msg_close(&r));
    }

    /* Multipart: more flag and ZMQ_MORE. */
    OK(zmq_msg_init_size(&m, 3));
    memcpy(zmq_msg_data(&m), "abc", 3);
    OK(zmq_msg_send(&m, b, ZMQ_SNDMORE));
    OK(zmq_msg_init_size(&m, 3));
    memcpy(zmq_msg_data(&m), "def", 3);
    OK(zmq_sendmsg(b, &m, 0));
    zmq_msg_t r;
    OK(zmq_msg_init(&r));
    OK(zmq_msg_recv(&r, a, 0));
    CHECK(zmq_msg_more(&r) == 1 && zmq_msg_get(&r, ZMQ_MORE) == 1);
    OK(zmq_recvmsg(a, &r, 0)); /* old content dropped */
    CHECK(zmq_msg_more(&r) == 0 && memcmp(zmq_msg_data(&r), "def", 3) == 0);
    CHECK(zmq_msg_get(&r, ZMQ_SRCFD) == -1 || zmq_msg_get(&r, ZMQ_SRCFD) >= 0);
    FAILS(zmq_msg_get(&r, 999), EINVAL);
    FAILS(zmq_msg_set(&r, ZMQ_MORE, 1), EINVAL);
    FAILS_NULL(zmq_msg_gets(&r, "Socket-Type"), EINVAL); /* inproc: no connection properties */
    OK(zmq_msg_close(&r));

    /* Over tcp a received message knows its peer's properties. */
    {
        void *pull = zmq_socket(ctx, ZMQ_PULL);
        void *push = zmq_socket(ctx, ZMQ_PUSH);
        int tmo = 5000;
        OK(zmq_setsockopt(pull, ZMQ_RCVTIMEO, &tmo, sizeof tmo));
        OK(zmq_bind(pull, "tcp://127.0.0.1:*"));
        char ep[64];
        size_t eplen = sizeof ep;
        OK(zmq_getsockopt(pull, ZMQ_LAST_ENDPOINT, ep, &eplen));
        OK(zmq_connect(push, ep));
        CHECK(zmq_send(push, "hi", 2, 0) == 2);
        zmq_msg_t got;
        OK(zmq_msg_init(&got));
        CHECK(zmq_msg_recv(&got, pull, 0) == 2);
        const char *st = zmq_msg_gets(&got, "Socket-Type");
        CHECK(st != NULL && strcmp(st, "PUSH") == 0);
        const char *addr = zmq_msg_gets(&got, "Peer-Address");
        CHECK(addr != NULL && strcmp(addr, "127.0.0.1") == 0);
        FAILS_NULL(zmq_msg_gets(&got, "No-Such-Property"), EINVAL);
        zmq_msg_t copy;
        OK(zmq_msg_init(&copy));
        OK(zmq_msg_copy(&copy, &got));
        OK(zmq_msg_close(&got));
        st = zmq_msg_gets(&copy, "Socket-Type"); /* properties travel with copies */
        CHECK(st != NULL && strcmp(st, "PUSH") == 0);
        OK(zmq_msg_close(&copy));
        int zero = 0;
        OK(zmq_setsockopt(push, ZMQ_LINGER, &zero, sizeof zero));
        OK(zmq_close(push));
        OK(zmq_close(pull));
    }
    FAILS(zmq_msg_recv(&r, a, ZMQ_DONTWAIT), EFAULT); /* closed message */

    /* A failed send leaves the message with the caller. */
    void *lonely = zmq_socket(ctx, ZMQ_PUSH);
    OK(zmq_msg_init_size(&m, 100));
    void *before = zmq_msg_data(&m);
    memset(before, 7, 100);
    FAILS(zmq_msg_send(&m, lonely, ZMQ_DONTWAIT), EAGAIN);
    CHECK(zmq_msg_size(&m) == 100 && zmq_msg_data(&m) == before && ((char *)before)[99] == 7);
    FAILS(zmq_msg_send(&m, NULL, 0), ENOTSOCK);
    OK(zmq_msg_close(&m));
    /* A caller's buffer too: a failed send neither frees nor copies it. */
    static char lent[200];
    freed_count = 0;
    OK(zmq_msg_init_data(&m, lent, sizeof lent, free_fn, NULL));
    FAILS(zmq_msg_send(&m, lonely, ZMQ_DONTWAIT), EAGAIN);
    CHECK(freed_count == 0 && zmq_msg_data(&m) == lent && zmq_msg_size(&m) == sizeof lent);
    OK(zmq_msg_close(&m));
    wait_freed(1);
    /* A shared body stays shared, with its other reference intact. */
    OK(zmq_msg_init_size(&m, 300));
    memset(zmq_msg_data(&m), 5, 300);
    zmq_msg_t other;
    OK(zmq_msg_init(&other));
    OK(zmq_msg_copy(&other, &m));
    FAILS(zmq_msg_send(&m, lonely, ZMQ_DONTWAIT), EAGAIN);
    CHECK(zmq_msg_get(&m, ZMQ_SHARED) == 1 && zmq_msg_data(&m) == zmq_msg_data(&other));
    CHECK(zmq_msg_size(&m) == 300 && ((char *)zmq_msg_data(&m))[299] == 5);
    OK(zmq_msg_close(&other));
    OK(zmq_msg_close(&m));
    OK(zmq_close(lonely));

    /* copy and move. */
    zmq_msg_t c, mv;
    OK(zmq_msg_init_size(&m, 500));
    memset(zmq_msg_data(&m), 'q', 500);
    OK(zmq_msg_init(&c));
    OK(zmq_msg_copy(&c, &m));
    CHECK(zmq_msg_size(&c) == 500);
    CHECK(zmq_msg_get(&c, ZMQ_SHARED) == 1 && zmq_msg_get(&m, ZMQ_SHARED) == 1);
    CHECK(zmq_msg_data(&c) == zmq_msg_data(&m)); /* same body, no copy */
    OK(zmq_msg_init(&mv));
    OK(zmq_msg_move(&mv, &c));
    CHECK(zmq_msg_size(&mv) == 500 && zmq_msg_size(&c) == 0);
    OK(zmq_msg_close(&c));
    OK(zmq_msg_close(&mv));
    OK(zmq_msg_close(&m));
    zmq_msg_t closed;
    OK(zmq_msg_init(&closed));
    OK(zmq_msg_close(&closed));
    FAILS(zmq_msg_copy(&c, &closed), EFAULT);
    FAILS(zmq_msg_move(&c, &closed), EFAULT);

    /* init_data: zero copy; the free function runs once, maybe on another thread. */
    static char payload[4096];
    memset(payload, 'z', sizeof payload);
    freed_count = 0;
    OK(zmq_msg_init_data(&m, payload, sizeof payload, free_fn, (void *)0x1234));
    CHECK(zmq_msg_data(&m) == payload);
    OK(zmq_msg_send(&m, b, 0));
    OK(zmq_msg_init(&r));
    CHECK(zmq_msg_recv(&r, a, 0) == (int)sizeof payload);
    CHECK(zmq_msg_data(&r) == payload); /* inproc: the very same buffer */
    OK(zmq_msg_close(&r));
    wait_freed(1);
    CHECK(freed_hint == (void *)0x1234);
    OK(zmq_msg_close(&m));
    CHECK(freed_count == 1);
    /* Closed without sending: freed at close. */
    OK(zmq_msg_init_data(&m, payload, 10, free_fn, NULL));
    OK(zmq_msg_close(&m));
    wait_freed(2);
    /* NULL free function: constant data. */
    OK(zmq_msg_init_data(&m, payload, 10, NULL, NULL));
    OK(zmq_msg_send(&m, b, 0));
    CHECK(zmq_recv(a, payload + 100, 10, 0) == 10);
    OXMQ_ONLY(FAILS(zmq_msg_init_data(&m, NULL, 10, NULL, NULL), EFAULT));

    OK(zmq_close(a));
    OK(zmq_close(b));
    test_lent_fanout(ctx, payload, sizeof payload);
}

/* ----------------------------------------------------------------- poll */

static void test_poll_and_fd(void *ctx)
{
    void *a = zmq_socket(ctx, ZMQ_PAIR);
    void *b = zmq_socket(ctx, ZMQ_PAIR);
    OK(zmq_bind(a, "inproc://poll"));
    OK(zmq_connect(b, "inproc://poll"));
    int pipefd[2];
    CHECK(pipe(pipefd) == 0);

    zmq_pollitem_t items[] = {
        {a, 0, ZMQ_POLLIN, 0},
        {NULL, pipefd[0], ZMQ_POLLIN, 0},
    };
    CHECK(zmq_poll(items, 2, 0) == 0);
    double t0 = now_seconds();
    CHECK(zmq_poll(items, 2, 30) == 0);
    CHECK(now_seconds() - t0 >= 0.025);

    OK(send_str(b, "x", 0));
    CHECK(zmq_poll(items, 2, 1000) == 1);
    CHECK(items[0].revents == ZMQ_POLLIN && items[1].revents == 0);
    CHECK(write(pipefd[1], "!", 1) == 1);
    CHECK(zmq_poll(items, 2, 1000) == 2);
    CHECK(items[1].revents == ZMQ_POLLIN);
    expect_str(a, "x");

    zmq_pollitem_t out[] = {{b, 0, ZMQ_POLLOUT, 0}};
    CHECK(zmq_poll(out, 1, 0) == 1 && out[0].revents == ZMQ_POLLOUT);

    /* Errors. */
    zmq_pollitem_t bad[] = {{(void *)pipefd, 0, ZMQ_POLLIN, 0}};
    FAILS(zmq_poll(bad, 1, 0), ENOTSOCK);
    FAILS(zmq_poll(NULL, 1, 0), EFAULT);
    FAILS(zmq_poll(items, -1, 0), EINVAL);
    t0 = now_seconds();
    CHECK(zmq_poll(NULL, 0, 20) == 0);
    CHECK(now_seconds() - t0 >= 0.015);

    /* ZMQ_FD / ZMQ_EVENTS, edge-like: after the fd fires, EVENTS tells. */
    int fd;
    size_t len = sizeof fd;
    OK(zmq_getsockopt(a, ZMQ_FD, &fd, &len));
    int events;
    len = sizeof events;
    OK(zmq_getsockopt(a, ZMQ_EVENTS, &events, &len));
    CHECK((events & ZMQ_POLLIN) == 0);
    OK(send_str(b, "edge", 0));
    struct pollfd pfd = {fd, POLLIN, 0};
    CHECK(poll(&pfd, 1, 1000) == 1);
    len = sizeof events;
    OK(zmq_getsockopt(a, ZMQ_EVENTS, &events, &len));
    CHECK(events & ZMQ_POLLIN);
    expect_str(a, "edge");
    len = sizeof events;
    OK(zmq_getsockopt(a, ZMQ_EVENTS, &events, &len));
    CHECK((events & ZMQ_POLLIN) == 0);

    close(pipefd[0]);
    close(pipefd[1]);
    OK(zmq_close(a));
    OK(zmq_close(b));
}

/* ---------------------------------------------------------------- proxy */

struct proxy_args {
    void *front, *back, *capture, *control;
    int rc, err;
};

static void *proxy_thread(void *p)
{
    struct proxy_args *a = p;
    if (a->control)
        a->rc = zmq_proxy_steerable(a->front, a->back, a->capture, a->control);
    else
        a->rc = zmq_proxy(a->front, a->back, a->capture);
    a->err = zmq_errno();
    return NULL;
}

static void test_proxy(void)
{
    void *ctx = zmq_ctx_new();
    void *front = zmq_socket(ctx, ZMQ_PULL);
    void *back = zmq_socket(ctx, ZMQ_PUSH);
    void *capture = zmq_socket(ctx, ZMQ_PUSH);
    void *control = zmq_socket(ctx, ZMQ_PAIR);
    OK(zmq_bind(front, "inproc://front"));
    OK(zmq_bind(back, "inproc://back"));
    OK(zmq_bind(capture, "inproc://capture"));
    OK(zmq_bind(control, "inproc://control"));
    void *in = zmq_socket(ctx, ZMQ_PUSH);
    void *out = zmq_socket(ctx, ZMQ_PULL);
    void *cap = zmq_socket(ctx, ZMQ_PULL);
    void *ctl = zmq_socket(ctx, ZMQ_PAIR);
    OK(zmq_connect(in, "inproc://front"));
    OK(zmq_connect(out, "inproc://back"));
    OK(zmq_connect(cap, "inproc://capture"));
    OK(zmq_connect(ctl, "inproc://control"));

    struct proxy_args args = {front, back, capture, control, 0, 0};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, proxy_thread, &args) == 0);

    OK(send_str(in, "part1", ZMQ_SNDMORE));
    OK(send_str(in, "part2", 0));
    expect_str(out, "part1");
    expect_str(out, "part2");
    expect_str(cap, "part1");
    expect_str(cap, "part2");

    OK(send_str(ctl, "STATISTICS", 0));
    uint64_t stats[8];
    for (int i = 0; i < 8; i++) {
        CHECK(zmq_recv(ctl, &stats[i], sizeof stats[i], 0) == 8);
        int more;
        size_t len = sizeof more;
        OK(zmq_getsockopt(ctl, ZMQ_RCVMORE, &more, &len));
        CHECK(more == (i < 7));
    }
    CHECK(stats[0] == 1 && stats[1] == 10); /* frontend: 1 message in, 10 bytes */
    CHECK(stats[6] == 1 && stats[7] == 10); /* backend: 1 message out */
    expect_str(cap, "STATISTICS"); /* the capture sees control commands too */

    /* libzmq 4.3.5 answers every command but STATISTICS with an empty frame;
     * 4.3.4 answers none. */
    int major, minor, patch;
    zmq_version(&major, &minor, &patch);
    int answers_every_command = ZMQ_MAKE_VERSION(major, minor, patch) >= ZMQ_MAKE_VERSION(4, 3, 5);
    OK(send_str(ctl, "PAUSE", 0));
    if (answers_every_command)
        expect_str(ctl, "");
    OK(send_str(ctl, "RESUME", 0));
    if (answers_every_command)
        expect_str(ctl, "");
    OK(send_str(in, "after", 0));
    expect_str(out, "after");
    OK(send_str(ctl, "TERMINATE", 0));
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(args.rc == 0);

    /* zmq_proxy returns -1/ETERM when the context is shut down; zmq_device too. */
    struct proxy_args plain = {front, back, NULL, NULL, 0, 0};
    CHECK(pthread_create(&t, NULL, proxy_thread, &plain) == 0);
    OK(send_str(in, "plain", 0));
    expect_str(out, "plain");
    OK(zmq_ctx_shutdown(ctx));
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(plain.rc == -1 && plain.err == ETERM);
    FAILS(zmq_device(ZMQ_QUEUE, front, back), ETERM);
    FAILS(zmq_proxy(NULL, back, NULL), EFAULT);

    void *all[] = {front, back, capture, control, in, out, cap, ctl};
    for (int i = 0; i < 8; i++)
        OK(zmq_close(all[i]));
    OK(zmq_ctx_term(ctx));
}

/* ------------------------------------------------------- z85 and curve */

static void test_z85_and_curve(void)
{
    const uint8_t data[8] = {0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B};
    char text[11];
    CHECK(zmq_z85_encode(text, data, 8) == text);
    CHECK(strcmp(text, "HelloWorld") == 0);
    uint8_t back[8];
    CHECK(zmq_z85_decode(back, "HelloWorld") == back);
    CHECK(memcmp(back, data, 8) == 0);
    FAILS_NULL(zmq_z85_encode(text, data, 7), EINVAL);
    FAILS_NULL(zmq_z85_decode(back, "Hello!"), EINVAL);

    char pub[41], sec[41], derived[41];
    int rc = zmq_curve_keypair(pub, sec);
#ifdef REAL_LIBZMQ
    if (rc == -1 && zmq_errno() == ENOTSUP)
        return;
#endif
    OK(rc);
    CHECK(strlen(pub) == 40 && strlen(sec) == 40);
    OK(zmq_curve_public(derived, sec));
    CHECK(strcmp(derived, pub) == 0);
    OXMQ_ONLY(FAILS(zmq_curve_public(derived, "short"), EINVAL));
    uint8_t raw[32];
    NOTNULL(zmq_z85_decode(raw, pub));
}

/* ---------------------------------------------------- counters and timers */

static int timer_hits[4];
static void *timer_arg_seen;

static void on_timer(int id, void *arg)
{
    timer_arg_seen = arg;
    if (id > 0 && id < 4)
        timer_hits[id]++;
}

static void test_utilities(void)
{
    void *counter = zmq_atomic_counter_new();
    NOTNULL(counter);
    CHECK(zmq_atomic_counter_value(counter) == 0);
    zmq_atomic_counter_set(counter, 2);
    CHECK(zmq_atomic_counter_inc(counter) == 2); /* the value before */
    CHECK(zmq_atomic_counter_value(counter) == 3);
    CHECK(zmq_atomic_counter_dec(counter) == 1);
    CHECK(zmq_atomic_counter_dec(counter) == 1);
    CHECK(zmq_atomic_counter_dec(counter) == 0); /* reached zero */
    zmq_atomic_counter_destroy(&counter);
    CHECK(counter == NULL);

    void *timers = zmq_timers_new();
    NOTNULL(timers);
    CHECK(zmq_timers_timeout(timers) == -1);
    int t1 = zmq_timers_add(timers, 10, on_timer, (void *)0x42);
    int t2 = zmq_timers_add(timers, 1000, on_timer, NULL);
    CHECK(t1 == 1 && t2 == 2);
    FAILS(zmq_timers_add(timers, 10, NULL, NULL), EFAULT);
    long timeout = zmq_timers_timeout(timers);
    CHECK(timeout >= 0 && timeout <= 10);
    usleep(15000);
    OK(zmq_timers_execute(timers));
    CHECK(timer_hits[1] == 1 && timer_hits[2] == 0 && timer_arg_seen == (void *)0x42);
    OK(zmq_timers_set_interval(timers, t2, 5));
    OK(zmq_timers_reset(timers, t1));
    OK(zmq_timers_cancel(timers, t1));
    FAILS(zmq_timers_cancel(timers, t1), EINVAL);
    FAILS(zmq_timers_reset(timers, 77), EINVAL);
    FAILS(zmq_timers_set_interval(timers, 77, 5), EINVAL);
    usleep(10000);
    OK(zmq_timers_execute(timers));
    CHECK(timer_hits[1] == 1 && timer_hits[2] == 1);
    OK(zmq_timers_destroy(&timers));
    CHECK(timers == NULL);
    FAILS(zmq_timers_destroy(&timers), EFAULT);
    FAILS(zmq_timers_cancel(NULL, 1), EFAULT);

    void *watch = zmq_stopwatch_start();
    NOTNULL(watch);
    usleep(10000);
    unsigned long mid = zmq_stopwatch_intermediate(watch);
    CHECK(mid >= 9000);
    CHECK(zmq_stopwatch_stop(watch) >= mid);
    zmq_sleep(0);
}

static void thread_fn(void *arg)
{
    *(int *)arg = 42;
}

static void test_threads_and_monitor(void *ctx)
{
    int value = 0;
    void *t = zmq_threadstart(thread_fn, &value);
    NOTNULL(t);
    zmq_threadclose(t);
    CHECK(value == 42);

    FAILS(zmq_socket_monitor(NULL, "inproc://mon", ZMQ_EVENT_ALL), ENOTSOCK);
    void *s = zmq_socket(ctx, ZMQ_PAIR);
    FAILS(zmq_socket_monitor(s, "tcp://127.0.0.1:5555", ZMQ_EVENT_ALL), EPROTONOSUPPORT);
    OK(zmq_socket_monitor(s, "inproc://monitor-api", ZMQ_EVENT_LISTENING | ZMQ_EVENT_MONITOR_STOPPED));
    void *mon = zmq_socket(ctx, ZMQ_PAIR);
    int timeout = 5000;
    OK(zmq_setsockopt(mon, ZMQ_RCVTIMEO, &timeout, sizeof timeout));
    OK(zmq_connect(mon, "inproc://monitor-api"));
    OK(zmq_bind(s, "tcp://127.0.0.1:*"));
    /* One event: 6 bytes (uint16 event, uint32 value), then the endpoint. */
    unsigned char ev[6];
    CHECK(zmq_recv(mon, ev, sizeof ev, 0) == 6);
    uint16_t id;
    memcpy(&id, ev, 2);
    CHECK(id == ZMQ_EVENT_LISTENING);
    int more = 0;
    size_t more_len = sizeof more;
    OK(zmq_getsockopt(mon, ZMQ_RCVMORE, &more, &more_len));
    CHECK(more == 1);
    char ep[256];
    int n = zmq_recv(mon, ep, sizeof ep - 1, 0);
    CHECK(n > 6 && memcmp(ep, "tcp://", 6) == 0);
    OK(zmq_socket_monitor(s, NULL, 0));
    CHECK(zmq_recv(mon, ev, sizeof ev, 0) == 6);
    memcpy(&id, ev, 2);
    CHECK(id == ZMQ_EVENT_MONITOR_STOPPED);
    OK(zmq_close(mon));
    OK(zmq_close(s));
}

int main(void)
{
    test_layout_and_version();
    test_errors_and_capabilities();
    test_context();
    void *ctx = zmq_ctx_new();
    NOTNULL(ctx);
    test_socket_lifecycle_and_endpoints(ctx);
    test_options(ctx);
    test_send_recv(ctx);
    test_state_errors(ctx);
    test_messages(ctx);
    test_poll_and_fd(ctx);
    test_threads_and_monitor(ctx);
    OK(zmq_ctx_term(ctx));
    test_proxy();
    test_z85_and_curve();
    test_utilities();
    printf("test_api: all checks passed\n");
    return 0;
}
