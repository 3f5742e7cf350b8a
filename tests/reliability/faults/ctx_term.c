/* zmq_ctx_term through oxmq's C ABI with sockets in every state: bound idle
 * (tcp, ipc, inproc), connecting to nothing with a queued message, a
 * mid-multipart send, unread inproc messages, a monitor, and threads blocked
 * in zmq_recv, in zmq_send at the HWM and in zmq_poll. The blocked calls must
 * fail with ETERM (the threads then close their sockets), and zmq_ctx_term
 * must return within the linger time. Exit 0 on success. */
#define _GNU_SOURCE
#include <zmq.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LINGER_MS 300
#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "ctx_term: FAIL %s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__); fprintf(stderr, " (errno %d: %s)\n", zmq_errno(), zmq_strerror(zmq_errno())); exit(1); } } while (0)

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void *mk(void *ctx, int type) {
    void *s = zmq_socket(ctx, type);
    CHECK(s, "zmq_socket");
    int linger = LINGER_MS;
    CHECK(zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger) == 0, "LINGER");
    return s;
}

static void *blocked_recv(void *s) {
    char buf[8];
    int rc = zmq_recv(s, buf, sizeof buf, 0);
    CHECK(rc == -1 && zmq_errno() == ETERM, "blocked zmq_recv returned %d", rc);
    zmq_close(s);
    return NULL;
}

static void *blocked_send(void *s) {
    for (;;) {
        int rc = zmq_send(s, "x", 1, 0);
        if (rc == -1) {
            CHECK(zmq_errno() == ETERM, "blocked zmq_send");
            break;
        }
    }
    zmq_close(s);
    return NULL;
}

static void *blocked_poll(void *s) {
    zmq_pollitem_t item = { s, 0, ZMQ_POLLIN, 0 };
    int rc = zmq_poll(&item, 1, -1);
    CHECK(rc == -1 && zmq_errno() == ETERM, "blocked zmq_poll returned %d", rc);
    zmq_close(s);
    return NULL;
}

int main(void) {
    void *ctx = zmq_ctx_new();
    CHECK(ctx, "zmq_ctx_new");
    char ipc[128];
    snprintf(ipc, sizeof ipc, "ipc:///tmp/oxmq-faults-term-%d.ipc", (int)getpid());

    void *bound_tcp = mk(ctx, ZMQ_REP);
    CHECK(zmq_bind(bound_tcp, "tcp://127.0.0.1:*") == 0, "bind tcp");
    void *bound_ipc = mk(ctx, ZMQ_ROUTER);
    CHECK(zmq_bind(bound_ipc, ipc) == 0, "bind ipc");
    void *bound_inproc = mk(ctx, ZMQ_PULL);
    CHECK(zmq_bind(bound_inproc, "inproc://term-idle") == 0, "bind inproc");
    CHECK(zmq_socket_monitor(bound_tcp, "inproc://term-monitor", ZMQ_EVENT_ALL) == 0, "monitor");

    void *nowhere = mk(ctx, ZMQ_DEALER);
    CHECK(zmq_connect(nowhere, "tcp://127.0.0.1:1") == 0, "connect nowhere");
    CHECK(zmq_send(nowhere, "queued", 6, ZMQ_DONTWAIT) == 6, "queue on DEALER");

    void *sink = mk(ctx, ZMQ_PULL);
    CHECK(zmq_bind(sink, "inproc://term-sink") == 0, "bind sink");
    void *partial = mk(ctx, ZMQ_PUSH);
    CHECK(zmq_connect(partial, "inproc://term-sink") == 0, "connect partial");
    CHECK(zmq_send(partial, "first", 5, ZMQ_SNDMORE) == 5, "first frame");

    void *pa = mk(ctx, ZMQ_PAIR), *pb = mk(ctx, ZMQ_PAIR);
    CHECK(zmq_bind(pa, "inproc://term-pair") == 0, "bind pair");
    CHECK(zmq_connect(pb, "inproc://term-pair") == 0, "connect pair");
    for (int i = 0; i < 5; i++)
        CHECK(zmq_send(pb, "unread", 6, 0) == 6, "send unread");

    void *r = mk(ctx, ZMQ_PULL);
    CHECK(zmq_bind(r, "inproc://term-recv") == 0, "bind recv");
    void *full = mk(ctx, ZMQ_PULL);
    int one = 1;
    zmq_setsockopt(full, ZMQ_RCVHWM, &one, sizeof one);
    CHECK(zmq_bind(full, "inproc://term-full") == 0, "bind full");
    void *w = mk(ctx, ZMQ_PUSH);
    zmq_setsockopt(w, ZMQ_SNDHWM, &one, sizeof one);
    CHECK(zmq_connect(w, "inproc://term-full") == 0, "connect full");
    void *p = mk(ctx, ZMQ_SUB);
    CHECK(zmq_connect(p, "tcp://127.0.0.1:1") == 0, "connect sub");

    pthread_t t1, t2, t3;
    pthread_create(&t1, NULL, blocked_recv, r);
    pthread_create(&t2, NULL, blocked_send, w);
    pthread_create(&t3, NULL, blocked_poll, p);
    usleep(200 * 1000);

    double start = now_ms();
    void *mine[] = { bound_tcp, bound_ipc, bound_inproc, nowhere, sink, partial, pa, pb, full };
    for (size_t i = 0; i < sizeof mine / sizeof mine[0]; i++)
        CHECK(zmq_close(mine[i]) == 0, "close %zu", i);
    CHECK(zmq_ctx_term(ctx) == 0, "zmq_ctx_term");
    double took = now_ms() - start;
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    pthread_join(t3, NULL);
    CHECK(took < LINGER_MS + 1500, "zmq_ctx_term took %.0f ms with LINGER %d", took, LINGER_MS);
    printf("ctx_term: zmq_ctx_term returned in %.0f ms (LINGER %d ms); blocked recv/send/poll got ETERM\n", took, LINGER_MS);
    return 0;
}
