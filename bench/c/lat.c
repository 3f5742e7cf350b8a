/* Study 3: REQ/REP round-trip latency.
 *   lat server ENDPOINT SIZE COUNT   bind REP, print READY, echo COUNT (+warm-up) messages
 *   lat client ENDPOINT SIZE COUNT   connect REQ, time each of COUNT round trips
 *   lat inproc SIZE COUNT            both, in two threads of one process
 * The first WARM round trips are not timed. BENCH_CURVE=1: REP is a CURVE
 * server, REQ a client (study 9; common.h). */
#include "common.h"
#include <pthread.h>

#define WARM 100

static void serve(void *rep, long count) {
    zmq_msg_t m;
    zmq_msg_init(&m);
    for (long i = 0; i < count + WARM; i++) {
        CHECK(zmq_msg_recv(&m, rep, 0));
        CHECK(zmq_msg_send(&m, rep, 0));
    }
    zmq_msg_close(&m);
}

static int cmpd(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void client(void *req, long size, long count) {
    char *buf = malloc((size_t)size + 1);
    memset(buf, 'x', (size_t)size + 1);
    double *rt = malloc(sizeof(double) * (size_t)count);
    zmq_msg_t m;
    zmq_msg_init(&m);
    for (long i = 0; i < count + WARM; i++) {
        double t0 = now_s();
        CHECK(zmq_send(req, buf, (size_t)size, 0));
        CHECK(zmq_msg_recv(&m, req, 0));
        double dt = now_s() - t0;
        if ((long)zmq_msg_size(&m) != size) die("size mismatch");
        if (i >= WARM) rt[i - WARM] = dt;
    }
    zmq_msg_close(&m);
    double sum = 0;
    for (long i = 0; i < count; i++) sum += rt[i];
    qsort(rt, (size_t)count, sizeof(double), cmpd);
    printf("{\"count\":%ld,\"seconds\":%.9f,\"mean_us\":%.3f,\"p50_us\":%.3f,\"p99_us\":%.3f,", count, sum,
           sum / (double)count * 1e6, rt[count / 2] * 1e6, rt[(long)((double)count * 0.99)] * 1e6);
    print_mechanism(req);
    print_lib_fields();
    printf("}\n");
    free(rt);
    free(buf);
}

struct sargs {
    void *rep;
    long count;
};
static void *server_thread(void *p) {
    struct sargs *a = p;
    serve(a->rep, a->count);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    void *ctx = zmq_ctx_new();
    if (!strcmp(argv[1], "server")) {
        void *rep = zmq_socket(ctx, ZMQ_REP);
        curve_server(rep);
        CHECK(zmq_bind(rep, argv[2]));
        ready(rep);
        serve(rep, argl(argc, argv, 4, 1000));
        printf("{\"served\":true}\n");
        zmq_close(rep);
    } else if (!strcmp(argv[1], "client")) {
        void *req = zmq_socket(ctx, ZMQ_REQ);
        curve_client(req);
        CHECK(zmq_connect(req, argv[2]));
        client(req, argl(argc, argv, 3, 100), argl(argc, argv, 4, 1000));
        zmq_close(req);
    } else if (!strcmp(argv[1], "inproc")) {
        long size = argl(argc, argv, 2, 100), count = argl(argc, argv, 3, 1000);
        void *rep = zmq_socket(ctx, ZMQ_REP);
        CHECK(zmq_bind(rep, "inproc://lat"));
        void *req = zmq_socket(ctx, ZMQ_REQ);
        CHECK(zmq_connect(req, "inproc://lat"));
        struct sargs a = {rep, count};
        pthread_t th;
        pthread_create(&th, NULL, server_thread, &a);
        client(req, size, count);
        pthread_join(th, NULL);
        zmq_close(req);
        zmq_close(rep);
    } else {
        return 2;
    }
    zmq_ctx_term(ctx);
    return 0;
}
