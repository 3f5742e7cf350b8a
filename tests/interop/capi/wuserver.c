/* Weather update server (the classic zguide example, written for oxmq):
 * publishes "zipcode temperature humidity" on a PUB socket. Zip codes are
 * drawn from a small range so that a client's filter matches often.
 * usage: wuserver ENDPOINT [SECONDS] */
#include "testutil.h"

#include <unistd.h>

int main(int argc, char **argv)
{
    const char *endpoint = argc > 1 ? argv[1] : "tcp://127.0.0.1:5556";
    double seconds = argc > 2 ? atof(argv[2]) : 20;
    void *ctx = zmq_ctx_new();
    void *pub = zmq_socket(ctx, ZMQ_PUB);
    OK(zmq_bind(pub, endpoint));
    srandom((unsigned)time(NULL));
    double end = now_seconds() + seconds;
    long sent = 0;
    while (now_seconds() < end) {
        char update[32];
        int zip = 10000 + (int)(random() % 8);
        int temperature = (int)(random() % 215) - 80;
        int humidity = (int)(random() % 50) + 10;
        snprintf(update, sizeof update, "%05d %d %d", zip, temperature, humidity);
        OK(send_str(pub, update, 0));
        if (++sent % 1000 == 0)
            usleep(1000); /* let slow joiners in; keep the CPU for the client */
    }
    OK(zmq_close(pub));
    OK(zmq_ctx_term(ctx));
    return 0;
}
