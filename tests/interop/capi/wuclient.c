/* Weather update client: subscribes to one zip code ("10001 ") and averages
 * 100 temperatures; every update received must match the filter.
 * usage: wuclient ENDPOINT */
#include "testutil.h"

int main(int argc, char **argv)
{
    const char *endpoint = argc > 1 ? argv[1] : "tcp://127.0.0.1:5556";
    const char *filter = "10001 ";
    void *ctx = zmq_ctx_new();
    void *sub = zmq_socket(ctx, ZMQ_SUB);
    OK(zmq_connect(sub, endpoint));
    OK(zmq_setsockopt(sub, ZMQ_SUBSCRIBE, filter, strlen(filter)));
    long total = 0;
    int n;
    for (n = 0; n < 100; n++) {
        char update[64];
        int size = zmq_recv(sub, update, sizeof update - 1, 0);
        CHECK(size > 0);
        update[size] = 0;
        CHECK(strncmp(update, filter, strlen(filter)) == 0);
        int zip, temperature, humidity;
        CHECK(sscanf(update, "%d %d %d", &zip, &temperature, &humidity) == 3);
        CHECK(zip == 10001);
        total += temperature;
    }
    printf("wuclient: average temperature for zipcode '%s' was %dF over %d updates\n", filter,
           (int)(total / n), n);
    OK(zmq_close(sub));
    OK(zmq_ctx_term(ctx));
    return 0;
}
