/* One side of an interop run. Built twice: against oxmq's zmq.h and
 * libzmq.so.5, and against Debian's libzmq (-DREAL_LIBZMQ); run.sh pairs an
 * oxmq process with a libzmq one, in both directions, over tcp and ipc.
 * usage: interop_peer ROLE ENDPOINT
 *   ROLE: rep-bind | req-connect | pull-bind | push-connect
 *         | router-bind | dealer-connect | sub-bind | pub-connect */
#define _GNU_SOURCE
#include "testutil.h"

#include <dlfcn.h>

#define ROUNDS 200
#define PUSHES 20000

/* A message of `size` bytes whose content depends on (i, size). */
static void fill(char *buf, size_t size, int i)
{
    for (size_t k = 0; k < size; k++)
        buf[k] = (char)('a' + (k * 7 + (size_t)i) % 26);
}

static size_t size_of_round(int i)
{
    static const size_t sizes[] = {0, 1, 29, 255, 256, 1000, 70000};
    return sizes[i % 7];
}

static void recv_expected(void *s, int i, size_t size, int more)
{
    zmq_msg_t m;
    OK(zmq_msg_init(&m));
    CHECK(zmq_msg_recv(&m, s, 0) == (int)size);
    char *want = malloc(size + 1);
    fill(want, size, i);
    CHECK(memcmp(zmq_msg_data(&m), want, size) == 0);
    CHECK(zmq_msg_more(&m) == more);
    free(want);
    OK(zmq_msg_close(&m));
}

static void send_round(void *s, int i, int flags)
{
    size_t size = size_of_round(i);
    char *buf = malloc(size + 1);
    fill(buf, size, i);
    /* Two frames: a small header and the body. */
    char head[16];
    int n = snprintf(head, sizeof head, "round-%d", i);
    CHECK(zmq_send(s, head, (size_t)n, ZMQ_SNDMORE) == n);
    CHECK(zmq_send(s, buf, size, flags) == (int)size);
    free(buf);
}

static void recv_round(void *s, int i)
{
    char head[16], want[16];
    int n = snprintf(want, sizeof want, "round-%d", i);
    CHECK(zmq_recv(s, head, sizeof head, 0) == n);
    CHECK(memcmp(head, want, (size_t)n) == 0);
    recv_expected(s, i, size_of_round(i), 0);
}

int main(int argc, char **argv)
{
    CHECK(argc == 3);
    const char *role = argv[1], *endpoint = argv[2];
    Dl_info info;
    CHECK(dladdr((void *)zmq_ctx_new, &info) != 0);
    int major, minor, patch;
    zmq_version(&major, &minor, &patch);
    fprintf(stderr, "interop_peer %s %s: zmq_ctx_new from %s (%d.%d.%d)\n", role, endpoint, info.dli_fname, major,
            minor, patch);
#ifdef REAL_LIBZMQ
    CHECK(strstr(info.dli_fname, "target/") == NULL);
#else
    CHECK(strstr(info.dli_fname, "target/release/capi") != NULL);
#endif

    void *ctx = zmq_ctx_new();
    int timeout = 10000;
    void *s;
    if (!strcmp(role, "rep-bind") || !strcmp(role, "req-connect")) {
        int server = role[2] == 'p';
        s = zmq_socket(ctx, server ? ZMQ_REP : ZMQ_REQ);
        OK(zmq_setsockopt(s, ZMQ_RCVTIMEO, &timeout, sizeof timeout));
        OK(server ? zmq_bind(s, endpoint) : zmq_connect(s, endpoint));
        for (int i = 0; i < ROUNDS; i++) {
            if (server) {
                recv_round(s, i);
                send_round(s, i + 1, 0);
            } else {
                send_round(s, i, 0);
                recv_round(s, i + 1);
            }
        }
    } else if (!strcmp(role, "pull-bind") || !strcmp(role, "push-connect")) {
        int server = role[1] == 'u' && role[2] == 'l';
        s = zmq_socket(ctx, server ? ZMQ_PULL : ZMQ_PUSH);
        OK(zmq_setsockopt(s, ZMQ_RCVTIMEO, &timeout, sizeof timeout));
        if (server) {
            /* libzmq's receiving engine drops what is still in the kernel when
             * an ipc peer hangs up while the pipe is at RCVHWM (seen with
             * libzmq on both ends), so the test must not depend on that. */
            int unlimited = 0;
            OK(zmq_setsockopt(s, ZMQ_RCVHWM, &unlimited, sizeof unlimited));
        }
        OK(server ? zmq_bind(s, endpoint) : zmq_connect(s, endpoint));
        for (int i = 0; i < PUSHES; i++) {
            if (server) {
                int v = -1;
                if (zmq_recv(s, &v, sizeof v, 0) != sizeof v)
                    fprintf(stderr, "pull: message %d of %d missing\n", i, PUSHES);
                CHECK(v == i);
                CHECK(v == i);
            } else {
                CHECK(zmq_send(s, &i, sizeof i, 0) == sizeof i);
            }
        }
        if (!server) { /* make sure everything left before closing */
            int linger = 5000;
            OK(zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger));
        }
    } else if (!strcmp(role, "router-bind") || !strcmp(role, "dealer-connect")) {
        int server = role[0] == 'r';
        s = zmq_socket(ctx, server ? ZMQ_ROUTER : ZMQ_DEALER);
        OK(zmq_setsockopt(s, ZMQ_RCVTIMEO, &timeout, sizeof timeout));
        if (!server)
            OK(zmq_setsockopt(s, ZMQ_ROUTING_ID, "peer-x", 6));
        OK(server ? zmq_bind(s, endpoint) : zmq_connect(s, endpoint));
        for (int i = 0; i < ROUNDS; i++) {
            if (server) {
                char id[16];
                CHECK(zmq_recv(s, id, sizeof id, 0) == 6 && memcmp(id, "peer-x", 6) == 0);
                recv_round(s, i);
                CHECK(zmq_send(s, "peer-x", 6, ZMQ_SNDMORE) == 6);
                send_round(s, i + 1, 0);
            } else {
                send_round(s, i, 0);
                recv_round(s, i + 1);
            }
        }
    } else if (!strcmp(role, "sub-bind") || !strcmp(role, "pub-connect")) {
        int server = role[0] == 's';
        s = zmq_socket(ctx, server ? ZMQ_SUB : ZMQ_PUB);
        OK(server ? zmq_bind(s, endpoint) : zmq_connect(s, endpoint));
        if (server) {
            OK(zmq_setsockopt(s, ZMQ_RCVTIMEO, &timeout, sizeof timeout));
            OK(zmq_setsockopt(s, ZMQ_SUBSCRIBE, "keep", 4));
            int kept = 0;
            char buf[32];
            while (kept < 100) {
                int n = zmq_recv(s, buf, sizeof buf, 0);
                CHECK(n >= 4 && memcmp(buf, "keep", 4) == 0);
                if (n == 8 && memcmp(buf, "keep-end", 8) == 0)
                    break;
                kept++;
            }
            CHECK(kept >= 100);
        } else {
            /* Publish until the subscriber has certainly joined: a long stream. */
            double end = now_seconds() + 8;
            while (now_seconds() < end) {
                OK(send_str(s, "drop-me", 0));
                OK(send_str(s, "keep-it", 0));
                zmq_poll(NULL, 0, 1);
            }
        }
    } else {
        fprintf(stderr, "unknown role %s\n", role);
        return 2;
    }
    OK(zmq_close(s));
    OK(zmq_ctx_term(ctx));
    fprintf(stderr, "interop_peer %s: ok\n", role);
    return 0;
}
