/* Study 2: PUSH/PULL throughput.
 *   thr recv ENDPOINT SIZE COUNT          bind PULL and an ack PUSH (tcp: an ephemeral
 *                                         port; ipc: ENDPOINT-ack), print "READY ep ack_ep",
 *                                         time from the first message, then send one ack
 *   thr send ENDPOINT SIZE COUNT MODE ACK connect PUSH, send COUNT messages (MODE copy|zc),
 *                                         then wait for the receiver's ack before closing
 * The ack keeps a sender from exiting while its last messages are in flight
 * (libzmq can drop the tail on the bound side when the peer goes away at once).
 *   thr inproc SIZE COUNT MODE            both, in two threads of one process
 *   thr tcpthreads SIZE COUNT MODE        one context, tcp loopback: PULL bound in the
 *                                         main thread, PUSH connected from a second thread
 *                                         (one I/O thread serves both ends of the connection)
 * copy = zmq_send (the library copies the buffer); zc = zmq_msg_init_data on the
 * caller's buffer with a no-op free function (no copy on the send side).
 * BENCH_CURVE=1: PULL is a CURVE server, PUSH a client (study 9; common.h). */
#include "common.h"
#include <pthread.h>

static double recv_loop(void *pull, long size, long count) {
    zmq_msg_t m;
    zmq_msg_init(&m);
    CHECK(zmq_msg_recv(&m, pull, 0));
    if ((long)zmq_msg_size(&m) != size) die("size mismatch");
    double t0 = now_s();
    for (long i = 1; i < count; i++) CHECK(zmq_msg_recv(&m, pull, 0));
    double secs = now_s() - t0;
    zmq_msg_close(&m);
    return secs;
}

static double send_loop(void *push, char *buf, long size, long count, int zc) {
    double t0 = now_s();
    for (long i = 0; i < count; i++) {
        if (zc) {
            zmq_msg_t m;
            CHECK(zmq_msg_init_data(&m, buf, (size_t)size, nofree, NULL));
            CHECK(zmq_msg_send(&m, push, 0));
        } else {
            CHECK(zmq_send(push, buf, (size_t)size, 0));
        }
    }
    return now_s() - t0;
}

static void print_recv(void *pull, long size, long count, double secs) {
    double rate = (double)(count - 1) / secs;
    printf("{\"count\":%ld,\"seconds\":%.9f,\"msgs_per_s\":%.3f,\"mb_per_s\":%.3f,\"cpu_s\":%.6f,", count, secs,
           rate, rate * (double)size / 1e6, cpu_s());
    print_mechanism(pull);
    print_lib_fields();
    printf("}\n");
}

struct targs {
    void *pull;
    long size, count;
    double secs;
};

struct sargs {
    void *ctx;
    const char *ep;
    char *buf;
    long size, count;
    int zc;
    double secs;
};

static void *push_thread(void *p) {
    struct sargs *a = p;
    int hwm = 1000;
    void *push = zmq_socket(a->ctx, ZMQ_PUSH);
    CHECK(zmq_setsockopt(push, ZMQ_SNDHWM, &hwm, sizeof hwm));
    CHECK(zmq_connect(push, a->ep));
    a->secs = send_loop(push, a->buf, a->size, a->count, a->zc);
    zmq_close(push); /* default linger: the tail is still delivered */
    return NULL;
}

static void *recv_thread(void *p) {
    struct targs *a = p;
    a->secs = recv_loop(a->pull, a->size, a->count);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    void *ctx = zmq_ctx_new();
    int hwm = 1000;
    if (!strcmp(argv[1], "recv")) {
        long size = argl(argc, argv, 3, 100), count = argl(argc, argv, 4, 1000);
        void *pull = zmq_socket(ctx, ZMQ_PULL);
        curve_server(pull);
        CHECK(zmq_bind(pull, argv[2]));
        void *ack = zmq_socket(ctx, ZMQ_PUSH);
        char ack_ep[300];
        if (!strncmp(argv[2], "tcp://", 6))
            snprintf(ack_ep, sizeof ack_ep, "tcp://127.0.0.1:*");
        else
            snprintf(ack_ep, sizeof ack_ep, "%s-ack", argv[2]);
        CHECK(zmq_bind(ack, ack_ep));
        char ep[256], aep[256];
        size_t n1 = sizeof ep, n2 = sizeof aep;
        CHECK(zmq_getsockopt(pull, ZMQ_LAST_ENDPOINT, ep, &n1));
        CHECK(zmq_getsockopt(ack, ZMQ_LAST_ENDPOINT, aep, &n2));
        printf("READY %s %s\n", ep, aep);
        fflush(stdout);
        double secs = recv_loop(pull, size, count);
        CHECK(zmq_send(ack, "done", 4, 0));
        print_recv(pull, size, count, secs);
        zmq_close(pull);
        zmq_close(ack);
    } else if (!strcmp(argv[1], "send")) {
        long size = argl(argc, argv, 3, 100), count = argl(argc, argv, 4, 1000);
        int zc = argc > 5 && !strcmp(argv[5], "zc");
        char *buf = malloc((size_t)size + 1);
        memset(buf, 'x', (size_t)size + 1);
        void *push = zmq_socket(ctx, ZMQ_PUSH);
        CHECK(zmq_setsockopt(push, ZMQ_SNDHWM, &hwm, sizeof hwm));
        curve_client(push);
        CHECK(zmq_connect(push, argv[2]));
        void *ack = zmq_socket(ctx, ZMQ_PULL);
        if (argc > 6) CHECK(zmq_connect(ack, argv[6]));
        double secs = send_loop(push, buf, size, count, zc);
        if (argc > 6) {
            char done[8];
            CHECK(zmq_recv(ack, done, sizeof done, 0));
        }
        zmq_close(ack);
        printf("{\"count\":%ld,\"send_seconds\":%.9f,\"send_calls_per_s\":%.3f,\"cpu_s\":%.6f,", count, secs,
               (double)count / secs, cpu_s());
        print_lib_fields();
        printf("}\n");
        fflush(stdout);
        zmq_close(push); /* default linger: everything is delivered before term returns */
        zmq_ctx_term(ctx);
        free(buf);
        return 0;
    } else if (!strcmp(argv[1], "inproc")) {
        long size = argl(argc, argv, 2, 100), count = argl(argc, argv, 3, 1000);
        int zc = argc > 4 && !strcmp(argv[4], "zc");
        char *buf = malloc((size_t)size + 1);
        memset(buf, 'x', (size_t)size + 1);
        void *pull = zmq_socket(ctx, ZMQ_PULL);
        CHECK(zmq_bind(pull, "inproc://thr"));
        void *push = zmq_socket(ctx, ZMQ_PUSH);
        CHECK(zmq_connect(push, "inproc://thr"));
        struct targs a = {pull, size, count, 0};
        pthread_t th;
        pthread_create(&th, NULL, recv_thread, &a);
        double ssecs = send_loop(push, buf, size, count, zc);
        pthread_join(th, NULL);
        double rate = (double)(count - 1) / a.secs;
        printf("{\"count\":%ld,\"seconds\":%.9f,\"msgs_per_s\":%.3f,\"mb_per_s\":%.3f,"
               "\"send_seconds\":%.9f,\"send_calls_per_s\":%.3f,\"cpu_s\":%.6f,",
               count, a.secs, rate, rate * (double)size / 1e6, ssecs, (double)count / ssecs, cpu_s());
        print_lib_fields();
        printf("}\n");
        zmq_close(push);
        zmq_close(pull);
        free(buf);
    } else if (!strcmp(argv[1], "tcpthreads")) {
        long size = argl(argc, argv, 2, 100), count = argl(argc, argv, 3, 1000);
        int zc = argc > 4 && !strcmp(argv[4], "zc");
        char *buf = malloc((size_t)size + 1);
        memset(buf, 'x', (size_t)size + 1);
        void *pull = zmq_socket(ctx, ZMQ_PULL);
        CHECK(zmq_bind(pull, "tcp://127.0.0.1:*"));
        char ep[256];
        size_t n = sizeof ep;
        CHECK(zmq_getsockopt(pull, ZMQ_LAST_ENDPOINT, ep, &n));
        struct sargs a = {ctx, ep, buf, size, count, zc, 0};
        pthread_t th;
        pthread_create(&th, NULL, push_thread, &a);
        double secs = recv_loop(pull, size, count);
        pthread_join(th, NULL);
        double rate = (double)(count - 1) / secs;
        printf("{\"count\":%ld,\"seconds\":%.9f,\"msgs_per_s\":%.3f,\"mb_per_s\":%.3f,"
               "\"send_seconds\":%.9f,\"send_calls_per_s\":%.3f,\"cpu_s\":%.6f,",
               count, secs, rate, rate * (double)size / 1e6, a.secs, (double)count / a.secs, cpu_s());
        print_lib_fields();
        printf("}\n");
        zmq_close(pull);
        free(buf);
    } else {
        return 2;
    }
    zmq_ctx_term(ctx);
    return 0;
}
