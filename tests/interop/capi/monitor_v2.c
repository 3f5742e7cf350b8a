/* Version-2 socket monitors through the C ABI (draft
 * zmq_socket_monitor_versioned): the frames as libzmq's own test reader
 * takes them, both endpoints, the peer's routing id oxmq appends to the
 * values, the sink types, and oxmq's MSG_DROPPED / HWM_REACHED events.
 * Debian's libzmq exports no draft functions: its build only says so and
 * is not run. */
#define ZMQ_BUILD_DRAFT_API
#include "testutil.h"

#ifdef REAL_LIBZMQ
int main(void)
{
    puts("not run: Debian's libzmq does not export the draft functions");
    return 1;
}
#else

#include <stdint.h>
#include <stdlib.h>

typedef struct {
    uint64_t id;
    uint64_t count;
    uint64_t values[16];
    char local[256];
    char remote[256];
} event_t;

static void recv_frame(void *s, void *buf, size_t cap, size_t *len, int more)
{
    zmq_msg_t m;
    OK(zmq_msg_init(&m));
    CHECK(zmq_msg_recv(&m, s, 0) >= 0);
    CHECK(zmq_msg_more(&m) == more);
    CHECK(zmq_msg_size(&m) <= cap);
    memcpy(buf, zmq_msg_data(&m), zmq_msg_size(&m));
    *len = zmq_msg_size(&m);
    OK(zmq_msg_close(&m));
}

/* libzmq's layout: u64 id, u64 count, count u64 values, local, remote (last). */
static void next_event(void *reader, event_t *e)
{
    size_t n;
    memset(e, 0, sizeof *e);
    recv_frame(reader, &e->id, 8, &n, 1);
    CHECK(n == 8);
    recv_frame(reader, &e->count, 8, &n, 1);
    CHECK(n == 8);
    CHECK(e->count >= 1 && e->count <= 16);
    for (uint64_t i = 0; i < e->count; i++) {
        recv_frame(reader, &e->values[i], 8, &n, 1);
        CHECK(n == 8);
    }
    recv_frame(reader, e->local, sizeof e->local - 1, &n, 1);
    recv_frame(reader, e->remote, sizeof e->remote - 1, &n, 0);
}

static void wait_for(void *reader, uint64_t id, event_t *e)
{
    for (int i = 0; i < 50; i++) {
        next_event(reader, e);
        if (e->id == id)
            return;
    }
    fprintf(stderr, "event %#llx never came\n", (unsigned long long)id);
    exit(1);
}

/* The routing id after libzmq's value: length, then its bytes 8 per value. */
static void check_routing_id(const event_t *e, const char *want)
{
    size_t len = strlen(want);
    CHECK(e->count == 2 + (len + 7) / 8);
    CHECK(e->values[1] == len);
    CHECK(memcmp(&e->values[2], want, len) == 0);
}

static void *monitor(void *ctx, void *s, const char *ep, uint64_t events, int sink, int reader_type)
{
    OK(zmq_socket_monitor_versioned(s, ep, events, 2, sink));
    void *r = zmq_socket(ctx, reader_type);
    NOTNULL(r);
    int ms = 5000;
    OK(zmq_setsockopt(r, ZMQ_RCVTIMEO, &ms, sizeof ms));
    OK(zmq_connect(r, ep));
    return r;
}

static void connection_events(void *ctx)
{
    void *server = zmq_socket(ctx, ZMQ_ROUTER);
    void *client = zmq_socket(ctx, ZMQ_DEALER);
    OK(zmq_setsockopt(client, ZMQ_ROUTING_ID, "client-1-long-id", 16));
    OK(zmq_setsockopt(server, ZMQ_ROUTING_ID, "srv", 3));
    void *smon = monitor(ctx, server, "inproc://mon-server", ZMQ_EVENT_ALL_V2, ZMQ_PAIR, ZMQ_PAIR);
    /* A PUSH sink read by a PULL, as libzmq allows. */
    void *cmon = monitor(ctx, client, "inproc://mon-client", ZMQ_EVENT_ALL_V2, ZMQ_PUSH, ZMQ_PULL);
    OK(zmq_bind(server, "tcp://127.0.0.1:*"));
    char ep[256];
    size_t len = sizeof ep;
    OK(zmq_getsockopt(server, ZMQ_LAST_ENDPOINT, ep, &len));
    OK(zmq_connect(client, ep));
    CHECK(zmq_send(client, "hi", 2, 0) == 2);
    char buf[32];
    CHECK(zmq_recv(server, buf, sizeof buf, 0) == 16);
    CHECK(zmq_recv(server, buf, sizeof buf, 0) == 2);

    event_t e, connected;
    wait_for(smon, ZMQ_EVENT_LISTENING, &e);
    CHECK(strcmp(e.local, ep) == 0 && e.remote[0] == 0 && e.count == 1);
    wait_for(cmon, ZMQ_EVENT_CONNECTED, &connected);
    CHECK(strcmp(connected.remote, ep) == 0);
    CHECK(strncmp(connected.local, "tcp://127.0.0.1:", 16) == 0);
    CHECK(connected.count == 1);
    wait_for(smon, ZMQ_EVENT_ACCEPTED, &e);
    CHECK(strcmp(e.local, ep) == 0 && strcmp(e.remote, connected.local) == 0);
    wait_for(cmon, ZMQ_EVENT_HANDSHAKE_SUCCEEDED, &e);
    check_routing_id(&e, "srv");
    wait_for(smon, ZMQ_EVENT_HANDSHAKE_SUCCEEDED, &e);
    check_routing_id(&e, "client-1-long-id");
    CHECK(strcmp(e.remote, connected.local) == 0);

    OK(zmq_close(client));
    wait_for(smon, ZMQ_EVENT_DISCONNECTED, &e);
    check_routing_id(&e, "client-1-long-id");
    CHECK(strcmp(e.local, ep) == 0 && strcmp(e.remote, connected.local) == 0);

    /* Stopping: MONITOR_STOPPED with value 0 and no endpoints. */
    OK(zmq_socket_monitor_versioned(server, NULL, 0, 2, 0));
    wait_for(smon, ZMQ_EVENT_MONITOR_STOPPED, &e);
    CHECK(e.count == 1 && e.values[0] == 0 && e.local[0] == 0 && e.remote[0] == 0);
    OK(zmq_close(server));
    OK(zmq_close(smon));
    OK(zmq_close(cmon));
}

static void drops(void *ctx)
{
    void *router = zmq_socket(ctx, ZMQ_ROUTER);
    void *dealer = zmq_socket(ctx, ZMQ_DEALER);
    int hwm = 1;
    OK(zmq_setsockopt(router, ZMQ_SNDHWM, &hwm, sizeof hwm));
    OK(zmq_setsockopt(dealer, ZMQ_RCVHWM, &hwm, sizeof hwm));
    OK(zmq_setsockopt(dealer, ZMQ_ROUTING_ID, "D", 1));
    void *mon = monitor(ctx, router, "inproc://mon-drops", OXMQ_EVENT_ALL & ~(uint64_t)ZMQ_EVENT_ALL_V2, ZMQ_PAIR,
                        ZMQ_PAIR);
    OK(zmq_bind(router, "inproc://drops"));
    OK(zmq_connect(dealer, "inproc://drops"));
    CHECK(zmq_send(dealer, "x", 1, 0) == 1);
    char buf[8];
    CHECK(zmq_recv(router, buf, sizeof buf, 0) == 1);
    CHECK(zmq_recv(router, buf, sizeof buf, 0) == 1);

    event_t e;
    /* No route: the id it was addressed to comes with the event. */
    CHECK(zmq_send(router, "nobody", 6, ZMQ_SNDMORE) == 6);
    CHECK(zmq_send(router, "m", 1, 0) == 1);
    next_event(mon, &e);
    CHECK(e.id == OXMQ_EVENT_MSG_DROPPED && e.values[0] == OXMQ_DROP_NO_ROUTE);
    check_routing_id(&e, "nobody");

    /* inproc holds SNDHWM + the peer's RCVHWM = 2; the third is dropped. */
    for (int i = 0; i < 3; i++) {
        CHECK(zmq_send(router, "D", 1, ZMQ_SNDMORE) == 1);
        CHECK(zmq_send(router, "m", 1, 0) == 1);
    }
    next_event(mon, &e);
    CHECK(e.id == OXMQ_EVENT_HWM_REACHED && e.values[0] == 2);
    check_routing_id(&e, "D");
    next_event(mon, &e);
    CHECK(e.id == OXMQ_EVENT_MSG_DROPPED && e.values[0] == OXMQ_DROP_HWM);
    check_routing_id(&e, "D");

    /* Bad sink type: EINVAL, as libzmq. */
    FAILS(zmq_socket_monitor_versioned(router, "inproc://mon-bad", ZMQ_EVENT_ALL_V2, 2, ZMQ_DEALER), EINVAL);
    OK(zmq_close(router));
    OK(zmq_close(dealer));
    OK(zmq_close(mon));
}

int main(void)
{
    void *ctx = zmq_ctx_new();
    NOTNULL(ctx);
    connection_events(ctx);
    drops(ctx);
    OK(zmq_ctx_term(ctx));
    puts("monitor_v2: connection events with both ends and routing ids, drops, HWM reached");
    return 0;
}
#endif
