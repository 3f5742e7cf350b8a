/* zmq_poll over two sockets (the zguide "mspoller"): a PULL fed by a task
 * ventilator and a SUB fed by a weather publisher; read both until each
 * has delivered its share, never blocking on one while the other waits. */
#include "testutil.h"

#include <pthread.h>

#define EACH 5000

static void *ctx;

static void *producer(void *arg)
{
    (void)arg;
    void *push = zmq_socket(ctx, ZMQ_PUSH);
    void *pub = zmq_socket(ctx, ZMQ_PUB);
    int unlimited = 0; /* a PUB drops at its HWM: keep every update */
    OK(zmq_setsockopt(pub, ZMQ_SNDHWM, &unlimited, sizeof unlimited));
    OK(zmq_connect(push, "inproc://tasks"));
    OK(zmq_connect(pub, "inproc://weather"));
    /* Slow joiner: publish hellos until the subscriber has seen one. */
    void *sync = zmq_socket(ctx, ZMQ_PAIR);
    OK(zmq_connect(sync, "inproc://sync"));
    char go[4];
    while (zmq_recv(sync, go, sizeof go, ZMQ_DONTWAIT) == -1) {
        CHECK(zmq_errno() == EAGAIN);
        OK(send_str(pub, "10001 hello", 0));
        zmq_poll(NULL, 0, 1);
    }
    for (int i = 0; i < EACH; i++) {
        OK(send_str(push, "task", 0));
        OK(send_str(pub, "10001 weather", 0));
    }
    OK(zmq_close(sync));
    OK(zmq_close(push));
    OK(zmq_close(pub));
    return NULL;
}

int main(void)
{
    ctx = zmq_ctx_new();
    void *pull = zmq_socket(ctx, ZMQ_PULL);
    void *sub = zmq_socket(ctx, ZMQ_SUB);
    void *sync = zmq_socket(ctx, ZMQ_PAIR);
    int hwm = 0;
    OK(zmq_setsockopt(sub, ZMQ_RCVHWM, &hwm, sizeof hwm));
    OK(zmq_bind(pull, "inproc://tasks"));
    OK(zmq_bind(sub, "inproc://weather"));
    OK(zmq_bind(sync, "inproc://sync"));
    OK(zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "10001 ", 6));
    pthread_t t;
    CHECK(pthread_create(&t, NULL, producer, NULL) == 0);
    char buf[32];
    int n;
    do {
        n = zmq_recv(sub, buf, sizeof buf, 0);
        CHECK(n > 0);
    } while (n != 11);
    OK(send_str(sync, "go", 0));

    int tasks = 0, updates = 0;
    while (tasks < EACH || updates < EACH) {
        zmq_pollitem_t items[] = {{pull, 0, ZMQ_POLLIN, 0}, {sub, 0, ZMQ_POLLIN, 0}};
        int rc = zmq_poll(items, 2, 5000);
        CHECK(rc > 0);
        if (items[0].revents & ZMQ_POLLIN) {
            CHECK(zmq_recv(pull, buf, sizeof buf, 0) == 4);
            tasks++;
        }
        if (items[1].revents & ZMQ_POLLIN) {
            n = zmq_recv(sub, buf, sizeof buf, 0);
            CHECK(n == 13 || n == 11); /* late hellos are skipped */
            updates += n == 13;
        }
    }
    CHECK(pthread_join(t, NULL) == 0);
    printf("poll_two: %d tasks and %d updates through zmq_poll\n", tasks, updates);
    OK(zmq_close(pull));
    OK(zmq_close(sub));
    OK(zmq_close(sync));
    OK(zmq_ctx_term(ctx));
    return 0;
}
