/* One side of a draft-socket interop run.
 * The peer is npm's zeromq v6 (tests/interop/draft/node_peer.js) or oxmq itself.
 * Debian's libzmq 4.3.4 creates the draft sockets by number but aborts in its
 * handshake (mechanism.cpp: no ZMTP name for them in a non-draft build), so
 * its build of this program (draft_peer.libzmq) only proves that it compiles.
 * usage: draft_peer ROLE ENDPOINT
 *   ROLE: server-bind | client-connect | gather-bind | scatter-connect
 *         | channel-bind | channel-connect | peer-bind | peer-connect (oxmq only) */
#include "testutil.h"

#include <stdint.h>

#ifndef ZMQ_SERVER
#define ZMQ_SERVER 12
#define ZMQ_CLIENT 13
#define ZMQ_GATHER 16
#define ZMQ_SCATTER 17
#define ZMQ_PEER 19
#define ZMQ_CHANNEL 20
#endif
#ifndef ZMQ_THREAD_SAFE
#define ZMQ_THREAD_SAFE 81
#endif

#define ROUNDS 300

#ifndef REAL_LIBZMQ
uint32_t zmq_connect_peer(void *s_, const char *addr_);
int zmq_msg_set_routing_id(zmq_msg_t *msg_, uint32_t routing_id_);
uint32_t zmq_msg_routing_id(zmq_msg_t *msg_);
#endif

static void *open_sock(void *ctx, int type)
{
    void *s = zmq_socket(ctx, type);
    NOTNULL(s);
    int ms = 10000, zero = 0, ts = -1;
    size_t len = sizeof ts;
    OK(zmq_setsockopt(s, ZMQ_RCVTIMEO, &ms, sizeof ms));
    OK(zmq_setsockopt(s, ZMQ_SNDTIMEO, &ms, sizeof ms));
    OK(zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero));
    OK(zmq_getsockopt(s, ZMQ_THREAD_SAFE, &ts, &len));
    CHECK(ts == 1);
    return s;
}

static size_t body(char *buf, int i)
{
    return (size_t)snprintf(buf, 64, "round-%d-%0*d", i, i % 40, 0);
}

/* Receive ROUNDS messages and send each back as it came (with its routing
 * id, when `routed`); then linger so the last answer leaves before close. */
static void echo(void *s, int routed)
{
    for (int i = 0; i < ROUNDS; i++) {
        zmq_msg_t m;
        OK(zmq_msg_init(&m));
        int n = zmq_msg_recv(&m, s, 0);
        char want[64];
        CHECK(n == (int)body(want, i));
        CHECK(memcmp(zmq_msg_data(&m), want, (size_t)n) == 0);
#ifndef REAL_LIBZMQ
        CHECK((zmq_msg_routing_id(&m) != 0) == routed);
#endif
        CHECK(zmq_msg_send(&m, s, 0) == n);
    }
    (void)routed;
    int linger = 5000;
    OK(zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger));
}

/* Send ROUNDS messages (one at a time) and check each answer. */
static void ask(void *s)
{
    for (int i = 0; i < ROUNDS; i++) {
        char buf[64], got[64];
        size_t n = body(buf, i);
        CHECK(zmq_send(s, buf, n, 0) == (int)n);
        CHECK(zmq_recv(s, got, sizeof got, 0) == (int)n);
        CHECK(memcmp(got, buf, n) == 0);
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s ROLE ENDPOINT\n", argv[0]);
        return 2;
    }
    const char *role = argv[1], *ep = argv[2];
    void *ctx = zmq_ctx_new();
    NOTNULL(ctx);
    void *s;
    if (strcmp(role, "server-bind") == 0) {
        s = open_sock(ctx, ZMQ_SERVER);
        OK(zmq_bind(s, ep));
        echo(s, 1);
    } else if (strcmp(role, "client-connect") == 0) {
        s = open_sock(ctx, ZMQ_CLIENT);
        OK(zmq_connect(s, ep));
        FAILS(zmq_send(s, "x", 1, ZMQ_SNDMORE), EINVAL);
        ask(s);
    } else if (strcmp(role, "peer-bind") == 0) {
        s = open_sock(ctx, ZMQ_PEER);
        OK(zmq_bind(s, ep));
        echo(s, 1);
    } else if (strcmp(role, "gather-bind") == 0) {
        s = open_sock(ctx, ZMQ_GATHER);
        OK(zmq_bind(s, ep));
        for (int i = 0; i < ROUNDS; i++) {
            char want[64], got[64];
            size_t n = body(want, i);
            CHECK(zmq_recv(s, got, sizeof got, 0) == (int)n);
            CHECK(memcmp(got, want, n) == 0);
        }
    } else if (strcmp(role, "scatter-connect") == 0) {
        s = open_sock(ctx, ZMQ_SCATTER);
        OK(zmq_connect(s, ep));
        FAILS(zmq_send(s, "x", 1, ZMQ_SNDMORE), EINVAL);
        for (int i = 0; i < ROUNDS; i++) {
            char buf[64];
            size_t n = body(buf, i);
            CHECK(zmq_send(s, buf, n, 0) == (int)n);
        }
        /* LINGER 0 would drop what is still queued: wait for the last one to leave. */
        int linger = 5000;
        OK(zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger));
    } else if (strcmp(role, "channel-bind") == 0) {
        s = open_sock(ctx, ZMQ_CHANNEL);
        OK(zmq_bind(s, ep));
        echo(s, 0);
    } else if (strcmp(role, "channel-connect") == 0) {
        s = open_sock(ctx, ZMQ_CHANNEL);
        OK(zmq_connect(s, ep));
        ask(s);
    } else if (strcmp(role, "peer-connect") == 0) {
#ifdef REAL_LIBZMQ
        fprintf(stderr, "peer-connect needs zmq_connect_peer, which Debian's libzmq does not export\n");
        return 2;
#else
        s = open_sock(ctx, ZMQ_PEER);
        uint32_t rid = zmq_connect_peer(s, ep);
        CHECK(rid != 0);
        for (int i = 0; i < ROUNDS; i++) {
            char buf[64], got[64];
            size_t n = body(buf, i);
            zmq_msg_t m;
            OK(zmq_msg_init_size(&m, n));
            memcpy(zmq_msg_data(&m), buf, n);
            OK(zmq_msg_set_routing_id(&m, rid));
            CHECK(zmq_msg_send(&m, s, 0) == (int)n);
            OK(zmq_msg_init(&m));
            CHECK(zmq_msg_recv(&m, s, 0) == (int)n);
            CHECK(zmq_msg_routing_id(&m) == rid);
            memcpy(got, zmq_msg_data(&m), n);
            CHECK(memcmp(got, buf, n) == 0);
            OK(zmq_msg_close(&m));
        }
#endif
    } else {
        fprintf(stderr, "unknown role %s\n", role);
        return 2;
    }
    OK(zmq_close(s));
    OK(zmq_ctx_term(ctx));
    printf("draft_peer %s: %d rounds\n", role, ROUNDS);
    return 0;
}
