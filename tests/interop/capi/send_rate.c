/* Tight send-rate loop: zmq_send of a small message on a PUB socket (no
 * subscriber, so every message is dropped: this measures the call itself,
 * as Perl ZMQ::FFI's bench/zmq-bench.pl does). Prints ns per zmq_send.
 * usage: send_rate [COUNT] */
#include "testutil.h"

int main(int argc, char **argv)
{
    long count = argc > 1 ? atol(argv[1]) : 5000000;
    void *ctx = zmq_ctx_new();
    void *pub = zmq_socket(ctx, ZMQ_PUB);
    OK(zmq_bind(pub, "inproc://send-rate"));
    for (long i = 0; i < count / 10; i++) /* warm up */
        CHECK(zmq_send(pub, "hello world", 11, 0) == 11);
    double t0 = now_seconds();
    for (long i = 0; i < count; i++)
        CHECK(zmq_send(pub, "hello world", 11, 0) == 11);
    double elapsed = now_seconds() - t0;
    int major, minor, patch;
    zmq_version(&major, &minor, &patch);
#ifdef OXMQ_ZMQ_H
    const char *lib = "oxmq";
#else
    const char *lib = "libzmq";
#endif
    printf("send_rate[%s %d.%d.%d]: %ld sends in %.3f s: %.1f ns per zmq_send, %.2f M/s\n", lib, major, minor,
           patch, count, elapsed, elapsed * 1e9 / (double)count, (double)count / elapsed / 1e6);
    OK(zmq_close(pub));
    OK(zmq_ctx_term(ctx));
    return 0;
}
