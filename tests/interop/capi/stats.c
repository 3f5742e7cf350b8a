/* oxmq_stats.h: every kind of drop forced and read back through
 * oxmq_socket_stats, oxmq_socket_peer_stats and the OXMQ_STATS_* options;
 * reconnects and a handshake failure (CURVE, wrong server key). oxmq only:
 * libzmq has no such counters. */
#include "testutil.h"
#include <oxmq_stats.h>
#include <stdint.h>
#include <unistd.h>

/* A socket that does not hold up zmq_ctx_term with what it could not send. */
static void *sock(void *ctx, int type)
{
    void *s = zmq_socket(ctx, type);
    NOTNULL(s);
    int zero = 0;
    OK(zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero));
    return s;
}

static oxmq_socket_stats_t stats_of(void *s)
{
    oxmq_socket_stats_t st;
    OK(oxmq_socket_stats(s, &st, sizeof st));
    return st;
}

static int64_t opt64(void *s, int option)
{
    int64_t v = -1;
    size_t len = sizeof v;
    OK(zmq_getsockopt(s, option, &v, &len));
    CHECK(len == sizeof v);
    return v;
}

/* Poll `option` on `s` until it reaches `want` (10 s at most). */
static void wait_at_least(void *s, int option, int64_t want)
{
    for (int i = 0; i < 1000 && opt64(s, option) < want; i++)
        usleep(10000);
    if (opt64(s, option) < want) {
        fprintf(stderr, "option %d stayed at %lld, wanted %lld\n", option, (long long)opt64(s, option),
                (long long)want);
        exit(1);
    }
}

static int drain(void *s)
{
    char buf[64];
    int n = 0;
    while (zmq_recv(s, buf, sizeof buf, ZMQ_DONTWAIT) >= 0)
        n++;
    CHECK(zmq_errno() == EAGAIN);
    return n;
}

static void pub_at_hwm(void *ctx)
{
    void *pub = sock(ctx, ZMQ_PUB), *sub = sock(ctx, ZMQ_SUB);
    int hwm = 4;
    OK(zmq_setsockopt(pub, ZMQ_SNDHWM, &hwm, sizeof hwm));
    OK(zmq_setsockopt(sub, ZMQ_RCVHWM, &hwm, sizeof hwm));
    OK(zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "", 0));
    OK(zmq_bind(pub, "inproc://stats-pub"));
    OK(zmq_connect(sub, "inproc://stats-pub"));
    const int n = 100;
    for (int i = 0; i < n; i++)
        OK(zmq_send(pub, "m", 1, ZMQ_DONTWAIT));
    int got = drain(sub);
    CHECK(got > 0 && got < n);
    oxmq_socket_stats_t st = stats_of(pub);
    CHECK(st.drops_hwm == (uint64_t)(n - got));
    /* Out: what reached the subscriber's pipe; the drops did not. */
    CHECK(st.msgs_out == (uint64_t)got && st.bytes_out == (uint64_t)got);
    CHECK(st.peers == 1);
    CHECK(opt64(pub, OXMQ_STATS_DROPS_HWM) == n - got);
    oxmq_peer_stats_t peer;
    CHECK(oxmq_socket_peer_stats(pub, &peer, 1) == 1);
    CHECK(peer.drops_hwm == (uint64_t)(n - got));
    CHECK(strcmp(peer.endpoint, "inproc://stats-pub") == 0);
    CHECK(stats_of(sub).msgs_in == (uint64_t)got);
    /* The same counters in Prometheus' text format. */
    char text[16384];
    size_t tlen = 4;
    FAILS(oxmq_stats_prometheus(pub, "pub", text, &tlen), EINVAL);
    CHECK(tlen > 4 && tlen <= sizeof text);
    tlen = sizeof text;
    OK(oxmq_stats_prometheus(pub, "pub", text, &tlen));
    CHECK(tlen == strlen(text) + 1);
    char line[128];
    snprintf(line, sizeof line, "oxmq_dropped_messages_total{socket=\"pub\",reason=\"hwm\"} %d\n", n - got);
    if (!strstr(text, line)) {
        fprintf(stderr, "no line %s in:\n%s", line, text);
        exit(1);
    }
    CHECK(strstr(text, "# TYPE oxmq_messages counter") != NULL);
    zmq_close(pub);
    zmq_close(sub);
}

static void router_no_route(void *ctx)
{
    void *router = sock(ctx, ZMQ_ROUTER), *dealer = sock(ctx, ZMQ_DEALER);
    OK(zmq_setsockopt(dealer, ZMQ_ROUTING_ID, "bob", 3));
    OK(zmq_bind(router, "inproc://stats-router"));
    OK(zmq_connect(dealer, "inproc://stats-router"));
    OK(send_str(dealer, "hi", 0));
    char id[16];
    CHECK(zmq_recv(router, id, sizeof id, 0) == 3);
    expect_str(router, "hi");
    OK(send_str(router, "nobody", ZMQ_SNDMORE));
    OK(send_str(router, "lost", 0));
    CHECK(stats_of(router).drops_no_route == 1);
    CHECK(opt64(router, OXMQ_STATS_DROPS_NO_ROUTE) == 1);
    /* The peer keeps its routing id. */
    oxmq_peer_stats_t peers[2];
    CHECK(oxmq_socket_peer_stats(router, peers, 2) == 1);
    CHECK(peers[0].routing_id_size == 3 && memcmp(peers[0].routing_id, "bob", 3) == 0);
    CHECK(peers[0].msgs_in == 1 && peers[0].bytes_in == 2);
    CHECK(oxmq_socket_peer_stats(router, NULL, 0) == 1);
    zmq_close(router);
    zmq_close(dealer);
}

static void conflate(void *ctx)
{
    void *pull = sock(ctx, ZMQ_PULL), *push = sock(ctx, ZMQ_PUSH);
    int one = 1;
    OK(zmq_setsockopt(pull, ZMQ_CONFLATE, &one, sizeof one));
    OK(zmq_bind(pull, "inproc://stats-conflate"));
    OK(zmq_connect(push, "inproc://stats-conflate"));
    for (int i = 0; i < 5; i++)
        OK(send_str(push, i == 4 ? "last" : "old", 0));
    expect_str(pull, "last");
    CHECK(stats_of(pull).drops_conflate == 4);
    CHECK(opt64(pull, OXMQ_STATS_DROPS_CONFLATE) == 4);
    zmq_close(pull);
    zmq_close(push);
    /* The sending side: a conflating PUSH replaces what its peer has not
     * taken yet. */
    pull = sock(ctx, ZMQ_PULL);
    push = sock(ctx, ZMQ_PUSH);
    OK(zmq_setsockopt(push, ZMQ_CONFLATE, &one, sizeof one));
    OK(zmq_bind(pull, "inproc://stats-conflate-out"));
    OK(zmq_connect(push, "inproc://stats-conflate-out"));
    for (int i = 0; i < 3; i++)
        OK(send_str(push, i == 2 ? "last" : "old", 0));
    expect_str(pull, "last");
    CHECK(stats_of(push).drops_conflate == 2);
    oxmq_peer_stats_t peer;
    CHECK(oxmq_socket_peer_stats(push, &peer, 1) == 1);
    CHECK(peer.drops_conflate == 2 && peer.msgs_out == 3);
    zmq_close(pull);
    zmq_close(push);
}

static void oversize(void *ctx)
{
    void *pull = sock(ctx, ZMQ_PULL), *push = sock(ctx, ZMQ_PUSH);
    int64_t max = 10;
    OK(zmq_setsockopt(pull, ZMQ_MAXMSGSIZE, &max, sizeof max));
    OK(zmq_bind(pull, "tcp://127.0.0.1:*"));
    char ep[256];
    size_t len = sizeof ep;
    OK(zmq_getsockopt(pull, ZMQ_LAST_ENDPOINT, ep, &len));
    OK(zmq_connect(push, ep));
    char big[100] = {0};
    OK(zmq_send(push, big, sizeof big, 0));
    wait_at_least(pull, OXMQ_STATS_DROPS_OVERSIZE, 1);
    CHECK(stats_of(pull).msgs_in == 0);
    zmq_close(pull);
    zmq_close(push);
}

static void reconnects(void *ctx)
{
    /* A port that was free a moment ago: nothing listens there. */
    void *probe = sock(ctx, ZMQ_PULL);
    OK(zmq_bind(probe, "tcp://127.0.0.1:*"));
    char ep[256];
    size_t len = sizeof ep;
    OK(zmq_getsockopt(probe, ZMQ_LAST_ENDPOINT, ep, &len));
    zmq_close(probe);
    void *dealer = sock(ctx, ZMQ_DEALER);
    int ivl = 10;
    OK(zmq_setsockopt(dealer, ZMQ_RECONNECT_IVL, &ivl, sizeof ivl));
    OK(zmq_connect(dealer, ep));
    wait_at_least(dealer, OXMQ_STATS_RECONNECTS, 3);
    CHECK(stats_of(dealer).handshake_failed_protocol == 0);
    zmq_close(dealer);
}

static void curve_wrong_key(void *ctx)
{
    char server_public[41], server_secret[41], other_public[41], other_secret[41], client_public[41],
        client_secret[41];
    OK(zmq_curve_keypair(server_public, server_secret));
    OK(zmq_curve_keypair(other_public, other_secret));
    OK(zmq_curve_keypair(client_public, client_secret));
    void *server = sock(ctx, ZMQ_PULL), *client = sock(ctx, ZMQ_PUSH);
    int one = 1;
    OK(zmq_setsockopt(server, ZMQ_CURVE_SERVER, &one, sizeof one));
    OK(zmq_setsockopt(server, ZMQ_CURVE_SECRETKEY, server_secret, 40));
    OK(zmq_bind(server, "tcp://127.0.0.1:*"));
    char ep[256];
    size_t len = sizeof ep;
    OK(zmq_getsockopt(server, ZMQ_LAST_ENDPOINT, ep, &len));
    OK(zmq_setsockopt(client, ZMQ_CURVE_SERVERKEY, other_public, 40));
    OK(zmq_setsockopt(client, ZMQ_CURVE_PUBLICKEY, client_public, 40));
    OK(zmq_setsockopt(client, ZMQ_CURVE_SECRETKEY, client_secret, 40));
    OK(zmq_connect(client, ep));
    wait_at_least(server, OXMQ_STATS_HANDSHAKE_FAILED_PROTOCOL, 1);
    oxmq_socket_stats_t st = stats_of(server);
    CHECK(st.handshake_failed_auth == 0 && st.peers == 0);
    zmq_close(server);
    zmq_close(client);
}

static void errors(void *ctx)
{
    void *s = sock(ctx, ZMQ_PAIR);
    oxmq_socket_stats_t st;
    FAILS(oxmq_socket_stats(NULL, &st, sizeof st), ENOTSOCK);
    FAILS(oxmq_socket_stats(s, NULL, sizeof st), EFAULT);
    FAILS(oxmq_socket_stats(s, &st, 3), EINVAL);
    FAILS(oxmq_socket_stats(s, &st, sizeof st + 8), EINVAL);
    /* An older, shorter struct gets the fields it has. */
    uint64_t first_two[2] = {7, 7};
    OK(oxmq_socket_stats(s, (oxmq_socket_stats_t *)(void *)first_two, sizeof first_two));
    CHECK(first_two[0] == 0 && first_two[1] == 0);
    FAILS(oxmq_socket_peer_stats(s, NULL, 1), EFAULT);
    int64_t v = 0;
    FAILS(zmq_setsockopt(s, OXMQ_STATS_MSGS_IN, &v, sizeof v), EINVAL);
    int small = 0;
    size_t len = sizeof small;
    FAILS(zmq_getsockopt(s, OXMQ_STATS_MSGS_IN, &small, &len), EINVAL);
    zmq_close(s);
}

int main(void)
{
    void *ctx = zmq_ctx_new();
    NOTNULL(ctx);
    pub_at_hwm(ctx);
    router_no_route(ctx);
    conflate(ctx);
    oversize(ctx);
    reconnects(ctx);
    curve_wrong_key(ctx);
    errors(ctx);
    OK(zmq_ctx_term(ctx));
    printf("stats: HWM, no route, conflate (both sides), oversize, reconnects, CURVE failure counted\n");
    return 0;
}
