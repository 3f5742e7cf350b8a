/* Study 1: cost of a non-blocking send of 5 bytes on a PUB socket bound to
 * ipc with no subscriber.  Usage: callcost COUNT */
#include "common.h"
#include <unistd.h>

int main(int argc, char **argv) {
    long n = argl(argc, argv, 1, 10000000);
    char ep[128];
    snprintf(ep, sizeof ep, "ipc:///tmp/oxmq-bench-cc-%d", (int)getpid());
    void *ctx = zmq_ctx_new();
    void *pub = zmq_socket(ctx, ZMQ_PUB);
    int linger = 0;
    CHECK(zmq_setsockopt(pub, ZMQ_LINGER, &linger, sizeof linger));
    CHECK(zmq_bind(pub, ep));
    double t0 = now_s();
    for (long i = 0; i < n; i++)
        if (zmq_send(pub, "hello", 5, ZMQ_DONTWAIT) != 5) die("zmq_send");
    double secs = now_s() - t0;
    printf("{\"count\":%ld,\"seconds\":%.9f,\"ns_per_call\":%.3f,", n, secs, secs * 1e9 / (double)n);
    print_lib_fields();
    printf("}\n");
    zmq_close(pub);
    zmq_ctx_term(ctx);
    unlink(ep + 6);
    return 0;
}
