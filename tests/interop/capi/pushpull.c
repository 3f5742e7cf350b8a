/* PUSH/PULL throughput between two threads over one transport.
 * usage: pushpull ENDPOINT [COUNT] [SIZE] */
#include "testutil.h"

#include <pthread.h>

static void *ctx;
static const char *endpoint;
static long count;
static size_t size;

static void *pusher(void *arg)
{
    (void)arg;
    void *push = zmq_socket(ctx, ZMQ_PUSH);
    OK(zmq_connect(push, endpoint));
    char *buf = calloc(1, size);
    for (long i = 0; i < count; i++) {
        memcpy(buf, &i, sizeof i < size ? sizeof i : size);
        CHECK(zmq_send(push, buf, size, 0) == (int)size);
    }
    free(buf);
    OK(zmq_close(push));
    return NULL;
}

int main(int argc, char **argv)
{
    endpoint = argc > 1 ? argv[1] : "tcp://127.0.0.1:5557";
    count = argc > 2 ? atol(argv[2]) : 1000000;
    size = argc > 3 ? (size_t)atol(argv[3]) : 64;
    CHECK(size >= sizeof(long));
    ctx = zmq_ctx_new();
    void *pull = zmq_socket(ctx, ZMQ_PULL);
    OK(zmq_bind(pull, endpoint));
    pthread_t t;
    CHECK(pthread_create(&t, NULL, pusher, NULL) == 0);
    char *buf = malloc(size);
    CHECK(zmq_recv(pull, buf, size, 0) == (int)size);
    double t0 = now_seconds();
    for (long i = 1; i < count; i++) {
        CHECK(zmq_recv(pull, buf, size, 0) == (int)size);
        long v;
        memcpy(&v, buf, sizeof v);
        CHECK(v == i);
    }
    double elapsed = now_seconds() - t0;
    CHECK(pthread_join(t, NULL) == 0);
    printf("pushpull %s: %ld x %zu B in %.3f s: %.2f M msg/s, %.1f MB/s\n", endpoint, count, size, elapsed,
           (double)(count - 1) / elapsed / 1e6, (double)(count - 1) * (double)size / elapsed / 1e6);
    free(buf);
    OK(zmq_close(pull));
    OK(zmq_ctx_term(ctx));
    return 0;
}
