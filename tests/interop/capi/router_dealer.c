/* ROUTER/DEALER multipart echo: several DEALERs (own routing ids, own
 * threads) send 3-frame messages; the ROUTER echoes each back to its sender
 * using the routing-id frame, built with zmq_msg_* calls.
 * usage: router_dealer ENDPOINT */
#include "testutil.h"

#include <pthread.h>

#define DEALERS 3
#define ROUNDS 2000

static void *ctx;
static const char *endpoint;

static void *dealer(void *arg)
{
    long id = (long)arg;
    void *d = zmq_socket(ctx, ZMQ_DEALER);
    char rid[16];
    snprintf(rid, sizeof rid, "dealer-%ld", id);
    OK(zmq_setsockopt(d, ZMQ_ROUTING_ID, rid, strlen(rid)));
    OK(zmq_connect(d, endpoint));
    for (int i = 0; i < ROUNDS; i++) {
        char body[32];
        snprintf(body, sizeof body, "%s:%d", rid, i);
        OK(send_str(d, "head", ZMQ_SNDMORE));
        OK(send_str(d, body, ZMQ_SNDMORE));
        OK(send_str(d, "tail", 0));
        expect_str(d, "head");
        expect_str(d, body);
        expect_str(d, "tail");
    }
    OK(zmq_close(d));
    return NULL;
}

int main(int argc, char **argv)
{
    endpoint = argc > 1 ? argv[1] : "tcp://127.0.0.1:5559";
    ctx = zmq_ctx_new();
    void *router = zmq_socket(ctx, ZMQ_ROUTER);
    int one = 1;
    OK(zmq_setsockopt(router, ZMQ_ROUTER_MANDATORY, &one, sizeof one));
    OK(zmq_bind(router, endpoint));
    pthread_t t[DEALERS];
    for (long i = 0; i < DEALERS; i++)
        CHECK(pthread_create(&t[i], NULL, dealer, (void *)i) == 0);
    double t0 = now_seconds();
    for (int n = 0; n < DEALERS * ROUNDS; n++) {
        /* Echo one whole message: routing id + 3 frames. */
        int frames = 0, more = 1;
        while (more) {
            zmq_msg_t part;
            OK(zmq_msg_init(&part));
            OK(zmq_msg_recv(&part, router, 0));
            if (frames == 0)
                CHECK(zmq_msg_size(&part) > 7 && memcmp(zmq_msg_data(&part), "dealer-", 7) == 0);
            more = zmq_msg_more(&part);
            OK(zmq_msg_send(&part, router, more ? ZMQ_SNDMORE : 0));
            OK(zmq_msg_close(&part));
            frames++;
        }
        CHECK(frames == 4);
    }
    double elapsed = now_seconds() - t0;
    for (int i = 0; i < DEALERS; i++)
        CHECK(pthread_join(t[i], NULL) == 0);
    printf("router_dealer %s: %d multipart echoes in %.3f s\n", endpoint, DEALERS * ROUNDS, elapsed);
    OK(zmq_close(router));
    OK(zmq_ctx_term(ctx));
    return 0;
}
