/* Study 5: the zguide weather station.
 *   weather server ENDPOINT ZIPRANGE   PUB: publish "%05d %d %d" updates as fast as
 *                                      it can until SIGTERM; print the rate
 *   weather client ENDPOINT N          SUB on "10001 ": average N temperatures
 * Zip codes are drawn uniformly from ZIPRANGE consecutive codes centred on
 * 10001 (the zguide draws from 100000; a smaller range keeps runs short). */
#include "common.h"
#include <signal.h>

static volatile sig_atomic_t stop;
static void on_term(int sig) {
    (void)sig;
    stop = 1;
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    void *ctx = zmq_ctx_new();
    if (!strcmp(argv[1], "server")) {
        long range = argl(argc, argv, 3, 100000);
        long base = 10001 - range / 2;
        if (base < 0) base = 0;
        signal(SIGTERM, on_term);
        void *pub = zmq_socket(ctx, ZMQ_PUB);
        int linger = 0;
        CHECK(zmq_setsockopt(pub, ZMQ_LINGER, &linger, sizeof linger));
        CHECK(zmq_bind(pub, argv[2]));
        ready(pub);
        srandom(42);
        long sent = 0;
        double t0 = now_s();
        while (!stop) {
            int zip = (int)(base + random() % range);
            int temp = (int)(random() % 215) - 80;
            int rel = (int)(random() % 50) + 10;
            char update[32];
            int n = snprintf(update, sizeof update, "%05d %d %d", zip, temp, rel);
            if (zmq_send(pub, update, (size_t)n, 0) < 0 && zmq_errno() != EINTR) die("send");
            sent++;
        }
        double secs = now_s() - t0;
        printf("{\"published\":%ld,\"seconds\":%.6f,\"pub_rate\":%.3f,", sent, secs, (double)sent / secs);
        print_lib_fields();
        printf("}\n");
        zmq_close(pub);
    } else {
        long n = argl(argc, argv, 3, 100);
        double t0 = now_s();
        void *sub = zmq_socket(ctx, ZMQ_SUB);
        CHECK(zmq_connect(sub, argv[2]));
        CHECK(zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "10001 ", 6));
        long total = 0;
        for (long i = 0; i < n; i++) {
            char buf[64];
            int len = zmq_recv(sub, buf, sizeof buf - 1, 0);
            if (len < 0) die("recv");
            buf[len] = 0;
            int zip, temp, rel;
            if (sscanf(buf, "%d %d %d", &zip, &temp, &rel) != 3 || zip != 10001) die("bad update");
            total += temp;
        }
        double secs = now_s() - t0;
        printf("{\"updates\":%ld,\"seconds\":%.6f,\"avg_temp\":%.2f,", n, secs, (double)total / (double)n);
        print_lib_fields();
        printf("}\n");
        zmq_close(sub);
    }
    zmq_ctx_term(ctx);
    return 0;
}
