/* REQ/REP round trips between two threads.
 * usage: reqrep ENDPOINT [ROUNDTRIPS] */
#include "testutil.h"

#include <pthread.h>

static void *ctx;
static const char *endpoint;
static long rounds;

static void *server(void *arg)
{
    void *rep = arg;
    for (long i = 0; i < rounds; i++) {
        char buf[32];
        int n = zmq_recv(rep, buf, sizeof buf, 0);
        CHECK(n > 0);
        CHECK(zmq_send(rep, buf, (size_t)n, 0) == n);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    endpoint = argc > 1 ? argv[1] : "tcp://127.0.0.1:5558";
    rounds = argc > 2 ? atol(argv[2]) : 20000;
    ctx = zmq_ctx_new();
    void *rep = zmq_socket(ctx, ZMQ_REP);
    OK(zmq_bind(rep, endpoint));
    void *req = zmq_socket(ctx, ZMQ_REQ);
    OK(zmq_connect(req, endpoint));
    pthread_t t;
    CHECK(pthread_create(&t, NULL, server, rep) == 0);
    double t0 = now_seconds();
    for (long i = 0; i < rounds; i++) {
        char msg[32], back[32];
        int n = snprintf(msg, sizeof msg, "request %ld", i);
        CHECK(zmq_send(req, msg, (size_t)n, 0) == n);
        CHECK(zmq_recv(req, back, sizeof back, 0) == n);
        CHECK(memcmp(msg, back, (size_t)n) == 0);
    }
    double elapsed = now_seconds() - t0;
    CHECK(pthread_join(t, NULL) == 0);
    printf("reqrep %s: %ld round trips, %.1f us each\n", endpoint, rounds, elapsed * 1e6 / (double)rounds);
    OK(zmq_close(req));
    OK(zmq_close(rep));
    OK(zmq_ctx_term(ctx));
    return 0;
}
