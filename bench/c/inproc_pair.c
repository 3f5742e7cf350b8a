/* Study 4: the classic inproc hand-off, N four-byte messages from one thread
 * to another.
 *   inproc_pair zmq N     over inproc PAIR
 *   inproc_pair mutex N   over a bounded ring queue guarded by a mutex and two
 *                         condition variables (capacity 1000, like the HWM)
 * Time: from before the receiving thread is started to its join. */
#include "common.h"
#include <pthread.h>
#include <stdint.h>

static void *ctx;
static long N;

static void *zmq_receiver(void *arg) {
    (void)arg;
    void *rx = zmq_socket(ctx, ZMQ_PAIR);
    CHECK(zmq_connect(rx, "inproc://pair"));
    uint32_t v;
    for (long i = 0; i < N; i++) {
        if (zmq_recv(rx, &v, sizeof v, 0) != 4) die("zmq_recv");
        if (v != (uint32_t)i) die("out of order");
    }
    zmq_close(rx);
    return NULL;
}

#define CAP 1000
static struct {
    pthread_mutex_t mu;
    pthread_cond_t not_empty, not_full;
    uint32_t buf[CAP];
    long head, tail; /* head: next to pop; tail: next to push */
} q = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, 0, 0};

static void q_push(uint32_t v) {
    pthread_mutex_lock(&q.mu);
    while (q.tail - q.head == CAP) pthread_cond_wait(&q.not_full, &q.mu);
    q.buf[q.tail % CAP] = v;
    q.tail++;
    pthread_cond_signal(&q.not_empty);
    pthread_mutex_unlock(&q.mu);
}

static uint32_t q_pop(void) {
    pthread_mutex_lock(&q.mu);
    while (q.tail == q.head) pthread_cond_wait(&q.not_empty, &q.mu);
    uint32_t v = q.buf[q.head % CAP];
    q.head++;
    pthread_cond_signal(&q.not_full);
    pthread_mutex_unlock(&q.mu);
    return v;
}

static void *mutex_receiver(void *arg) {
    (void)arg;
    for (long i = 0; i < N; i++)
        if (q_pop() != (uint32_t)i) die("out of order");
    return NULL;
}

int main(int argc, char **argv) {
    int use_zmq = argc > 1 && !strcmp(argv[1], "zmq");
    N = argl(argc, argv, 2, 1 << 20);
    pthread_t th;
    double t0, secs;
    if (use_zmq) {
        ctx = zmq_ctx_new();
        void *tx = zmq_socket(ctx, ZMQ_PAIR);
        CHECK(zmq_bind(tx, "inproc://pair"));
        t0 = now_s();
        pthread_create(&th, NULL, zmq_receiver, NULL);
        for (long i = 0; i < N; i++) {
            uint32_t v = (uint32_t)i;
            CHECK(zmq_send(tx, &v, sizeof v, 0));
        }
        pthread_join(th, NULL);
        secs = now_s() - t0;
        zmq_close(tx);
        zmq_ctx_term(ctx);
    } else {
        t0 = now_s();
        pthread_create(&th, NULL, mutex_receiver, NULL);
        for (long i = 0; i < N; i++) q_push((uint32_t)i);
        pthread_join(th, NULL);
        secs = now_s() - t0;
    }
    printf("{\"count\":%ld,\"seconds\":%.9f,\"msgs_per_s\":%.3f,", N, secs, (double)N / secs);
    if (use_zmq)
        print_lib_fields();
    else
        printf("\"lib\":\"pthread\"");
    printf("}\n");
    return 0;
}
