/* Built by tests/packaging/install/run.sh with `pkg-config --cflags --libs libzmq`
   against an installed oxmq: a PUSH/PULL round trip over tcp and inproc, and
   the library's version, which tells oxmq (4.3.5) from Debian's libzmq (4.3.4). */
#include <zmq.h>
#include <zmq_utils.h>
#include <stdio.h>
#include <string.h>

static int round_trip(void *ctx, const char *endpoint) {
    void *pull = zmq_socket(ctx, ZMQ_PULL);
    void *push = zmq_socket(ctx, ZMQ_PUSH);
    char ep[256];
    size_t len = sizeof ep;
    char buf[32];
    int linger = 0, timeo = 5000, rc = -1;
    zmq_setsockopt(push, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(pull, ZMQ_RCVTIMEO, &timeo, sizeof timeo);
    if (zmq_bind(pull, endpoint) != 0 ||
        zmq_getsockopt(pull, ZMQ_LAST_ENDPOINT, ep, &len) != 0 ||
        zmq_connect(push, ep) != 0 ||
        zmq_send(push, "hello", 5, 0) != 5) {
        fprintf(stderr, "%s: %s\n", endpoint, zmq_strerror(zmq_errno()));
    } else {
        int n = zmq_recv(pull, buf, sizeof buf, 0);
        if (n == 5 && memcmp(buf, "hello", 5) == 0)
            rc = 0;
        else
            fprintf(stderr, "%s: recv %d: %s\n", endpoint, n, zmq_strerror(zmq_errno()));
    }
    zmq_close(push);
    zmq_close(pull);
    return rc;
}

int main(void) {
    int major, minor, patch;
    void *ctx = zmq_ctx_new();
    int failed = round_trip(ctx, "tcp://127.0.0.1:*") | round_trip(ctx, "inproc://install-test");
    zmq_ctx_term(ctx);
    zmq_version(&major, &minor, &patch);
    printf("zmq_version %d.%d.%d, PUSH/PULL over tcp and inproc: %s\n", major, minor, patch,
           failed ? "FAILED" : "ok");
    return failed ? 1 : 0;
}
