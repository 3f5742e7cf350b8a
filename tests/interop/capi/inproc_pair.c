/* 1M int messages over inproc PAIR between two threads, checked in order. */
#include "testutil.h"

#include <pthread.h>

#define COUNT 1000000

static void *ctx;

static void *sender(void *arg)
{
    (void)arg;
    void *s = zmq_socket(ctx, ZMQ_PAIR);
    OK(zmq_connect(s, "inproc://pair"));
    for (int i = 0; i < COUNT; i++)
        CHECK(zmq_send(s, &i, sizeof i, 0) == sizeof i);
    OK(zmq_close(s));
    return NULL;
}

int main(void)
{
    ctx = zmq_ctx_new();
    void *r = zmq_socket(ctx, ZMQ_PAIR);
    OK(zmq_bind(r, "inproc://pair"));
    pthread_t t;
    double t0 = now_seconds();
    CHECK(pthread_create(&t, NULL, sender, NULL) == 0);
    for (int i = 0; i < COUNT; i++) {
        int v = -1;
        CHECK(zmq_recv(r, &v, sizeof v, 0) == sizeof v);
        CHECK(v == i);
    }
    double elapsed = now_seconds() - t0;
    CHECK(pthread_join(t, NULL) == 0);
    printf("inproc_pair: %d ints in %.3f s (%.2f M msg/s)\n", COUNT, elapsed, COUNT / elapsed / 1e6);
    OK(zmq_close(r));
    OK(zmq_ctx_term(ctx));
    return 0;
}
