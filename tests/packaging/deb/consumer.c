/* A C program built against the installed liboxmq-dev exactly as a user
 * builds one: gcc consumer.c $(pkg-config --cflags --libs libzmq). REQ/REP and
 * PUSH/PULL over tcp and ipc; prints LIBZMQ_MAPPED/ZMQ_VERSION lines as the
 * other consumers do. With -DUSE_DRAFT it also calls a draft function
 * (zmq_poller), which only liboxmq5 exports: dpkg-shlibdeps must then ask for
 * liboxmq5, not just libzmq5.
 *
 *   consumer SCRATCH_DIR
 */
#ifdef USE_DRAFT
#define ZMQ_BUILD_DRAFT_API
#endif
#include <zmq.h>
#include <zmq_utils.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef OXMQ_ZMQ_H
#error "zmq.h is not oxmq's: pkg-config --cflags libzmq did not point at liboxmq-dev"
#endif

static void check(int cond, const char *what, const char *ep) {
    printf("%s - %s %s\n", cond ? "ok" : "not ok", ep, what);
    if (!cond) exit(1);
}

static void report_lib(void) {
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096], last[4096] = "";
    while (f && fgets(line, sizeof line, f)) {
        char *path = strchr(line, '/');
        if (!path) continue;
        path[strcspn(path, "\n")] = 0;
        const char *base = strrchr(path, '/') + 1;
        if ((strncmp(base, "libzmq", 6) == 0 || strncmp(base, "liboxmq", 7) == 0) && strcmp(path, last) != 0) {
            printf("LIBZMQ_MAPPED=%s\n", path);
            snprintf(last, sizeof last, "%s", path);
        }
    }
    if (f) fclose(f);
    int M, m, p;
    zmq_version(&M, &m, &p);
    printf("ZMQ_VERSION=%d.%d.%d (C, header %d.%d.%d)\n", M, m, p, ZMQ_VERSION_MAJOR, ZMQ_VERSION_MINOR,
           ZMQ_VERSION_PATCH);
}

static void last_endpoint(void *s, char *ep, size_t n) {
    if (zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, ep, &n) != 0) check(0, "LAST_ENDPOINT", "");
}

static void req_rep(void *ctx, const char *addr) {
    char ep[256], buf[64], want[64];
    void *rep = zmq_socket(ctx, ZMQ_REP), *req = zmq_socket(ctx, ZMQ_REQ);
    check(zmq_bind(rep, addr) == 0, "REP bind", addr);
    last_endpoint(rep, ep, sizeof ep);
    check(zmq_connect(req, ep) == 0, "REQ connect", ep);
    for (int i = 0; i < 300; i++) {
        int n = snprintf(want, sizeof want, "request %d", i);
        if (zmq_send(req, want, (size_t)n, 0) != n) check(0, "REQ send", ep);
        int r = zmq_recv(rep, buf, sizeof buf, 0);
        if (r != n || zmq_send(rep, buf, (size_t)r, 0) != r) check(0, "REP echo", ep);
        r = zmq_recv(req, buf, sizeof buf, 0);
        if (r != n || memcmp(buf, want, (size_t)n) != 0) check(0, "REQ reply", ep);
    }
    check(1, "REQ/REP, 300 round trips", ep);
    zmq_send(req, "x", 1, 0);
    check(zmq_send(req, "y", 1, 0) == -1 && zmq_errno() == EFSM, "a second send on REQ fails with EFSM", ep);
    int linger = 0;
    zmq_setsockopt(req, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(rep, ZMQ_LINGER, &linger, sizeof linger);
    zmq_close(req);
    zmq_close(rep);
}

static void push_pull(void *ctx, const char *addr) {
    char ep[256];
    static char buf[70000], got[70000];
    void *pull = zmq_socket(ctx, ZMQ_PULL), *push = zmq_socket(ctx, ZMQ_PUSH);
    check(zmq_bind(pull, addr) == 0, "PULL bind", addr);
    last_endpoint(pull, ep, sizeof ep);
    check(zmq_connect(push, ep) == 0, "PUSH connect", ep);
    const int sizes[] = {0, 1, 29, 255, 256, 70000};
    for (int i = 0; i < 600; i++) {
        int n = sizes[i % 6];
        memset(buf, i % 251, (size_t)n);
        if (zmq_send(push, buf, (size_t)n, 0) != n) check(0, "PUSH send", ep);
    }
    for (int i = 0; i < 600; i++) {
        int n = sizes[i % 6];
        memset(buf, i % 251, (size_t)n);
        if (zmq_recv(pull, got, sizeof got, 0) != n || memcmp(got, buf, (size_t)n) != 0)
            check(0, "PULL message in order", ep);
    }
    check(1, "PUSH/PULL, 600 messages of 0-70000 bytes in order", ep);
    zmq_close(push);
    zmq_close(pull);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: consumer SCRATCH_DIR\n");
        return 2;
    }
    void *ctx = zmq_ctx_new();
    report_lib();
    char ipc[512];
    snprintf(ipc, sizeof ipc, "ipc://%s/c-%d", argv[1], (int)getpid());
    const char *addrs[] = {"tcp://127.0.0.1:*", ipc};
    for (int i = 0; i < 2; i++) {
        req_rep(ctx, addrs[i]);
        push_pull(ctx, addrs[i]);
    }
    void *watch = zmq_stopwatch_start();
    check(zmq_stopwatch_stop(watch) < 10000000UL, "zmq_stopwatch from zmq_utils.h", "");
#ifdef USE_DRAFT
    void *poller = zmq_poller_new();
    check(poller != NULL && zmq_poller_size(poller) == 0, "draft zmq_poller_new", "");
    zmq_poller_destroy(&poller);
#endif
    check(zmq_ctx_term(ctx) == 0, "zmq_ctx_term", "");
    printf("C consumer: all ok\n");
    return 0;
}
