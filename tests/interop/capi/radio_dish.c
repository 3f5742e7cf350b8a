/* Draft RADIO/DISH through the C API (zmq.h with ZMQ_BUILD_DRAFT_API).
 *
 *   radio_dish self             groups, libzmq's errors, and a RADIO->DISH
 *                               round over tcp, ipc, inproc and udp
 *   radio_dish radio EP         a RADIO streaming "hello" (group "G" when the
 *                               library has zmq_msg_set_group, else none) to EP
 *                               (bound for tcp/ipc, connected for udp)
 *   radio_dish dish EP GROUP    a DISH that joins GROUP and must receive
 *                               "hello" in it from EP
 *
 * Built twice (tests/interop/capi/run.sh): against oxmq, and against Debian's libzmq,
 * which creates RADIO/DISH by number but exports none of the draft
 * functions; they are looked up at run time so the same source links there. */
#ifndef REAL_LIBZMQ
#define ZMQ_BUILD_DRAFT_API
#endif
#include "testutil.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef ZMQ_RADIO
#define ZMQ_RADIO 14
#define ZMQ_DISH 15
#define ZMQ_GROUP_MAX_LENGTH 255
#endif

typedef int (*join_fn)(void *, const char *);
typedef int (*set_group_fn)(zmq_msg_t *, const char *);
typedef const char *(*group_fn)(zmq_msg_t *);

static join_fn p_join, p_leave;
static set_group_fn p_set_group;
static group_fn p_group;

static int load_drafts(void)
{
#ifdef REAL_LIBZMQ
    p_join = (join_fn)dlsym(RTLD_DEFAULT, "zmq_join");
    p_leave = (join_fn)dlsym(RTLD_DEFAULT, "zmq_leave");
    p_set_group = (set_group_fn)dlsym(RTLD_DEFAULT, "zmq_msg_set_group");
    p_group = (group_fn)dlsym(RTLD_DEFAULT, "zmq_msg_group");
#else
    p_join = zmq_join;
    p_leave = zmq_leave;
    p_set_group = zmq_msg_set_group;
    p_group = zmq_msg_group;
#endif
    return p_join && p_leave && p_set_group && p_group;
}

static int send_grouped(void *radio, const char *group, const char *body)
{
    zmq_msg_t m;
    OK(zmq_msg_init_size(&m, strlen(body)));
    memcpy(zmq_msg_data(&m), body, strlen(body));
    if (group && p_set_group)
        OK(p_set_group(&m, group));
    int rc = zmq_msg_send(&m, radio, 0);
    if (rc == -1)
        zmq_msg_close(&m);
    return rc;
}

/* Receive one message (bounded by RCVTIMEO): 0 and its group/body, or -1. */
static int recv_grouped(void *dish, char *group, size_t glen, char *body, size_t blen)
{
    zmq_msg_t m;
    OK(zmq_msg_init(&m));
    if (zmq_msg_recv(&m, dish, 0) == -1) {
        zmq_msg_close(&m);
        return -1;
    }
    size_t n = zmq_msg_size(&m) < blen - 1 ? zmq_msg_size(&m) : blen - 1;
    memcpy(body, zmq_msg_data(&m), n);
    body[n] = 0;
    snprintf(group, glen, "%s", p_group ? p_group(&m) : "");
    OK(zmq_msg_close(&m));
    return 0;
}

static void set_int(void *s, int opt, int v)
{
    OK(zmq_setsockopt(s, opt, &v, sizeof v));
}

/* Probe until a message of `group` gets through (joins travel, and UDP
 * datagrams sent before the DISH reads are lost), then drain. */
static void sync_group(void *radio, void *dish, const char *group)
{
    char g[300], b[64];
    set_int(dish, ZMQ_RCVTIMEO, 20);
    for (int i = 0;; i++) {
        CHECK(i < 250);
        OK(send_grouped(radio, group, "probe"));
        if (recv_grouped(dish, g, sizeof g, b, sizeof b) == 0)
            break;
    }
    usleep(50 * 1000);
    while (recv_grouped(dish, g, sizeof g, b, sizeof b) == 0)
        ;
    set_int(dish, ZMQ_RCVTIMEO, 5000);
}

static void round_over(void *ctx, const char *bind_ep)
{
    void *radio = zmq_socket(ctx, ZMQ_RADIO);
    void *dish = zmq_socket(ctx, ZMQ_DISH);
    NOTNULL(radio);
    NOTNULL(dish);
    set_int(radio, ZMQ_LINGER, 0);
    set_int(dish, ZMQ_LINGER, 0);
    OK(zmq_bind(dish, bind_ep));
    char ep[256];
    size_t len = sizeof ep;
    OK(zmq_getsockopt(dish, ZMQ_LAST_ENDPOINT, ep, &len));
    OK(p_join(dish, "Movies"));
    if (strncmp(bind_ep, "udp://", 6) == 0) {
        /* libzmq's udp LAST_ENDPOINT: the address as given, no "udp://". */
        CHECK(strcmp(ep, bind_ep + 6) == 0);
        OK(zmq_connect(radio, bind_ep));
    } else {
        OK(zmq_connect(radio, ep));
    }
    sync_group(radio, dish, "Movies");

    OK(send_grouped(radio, "TV", "Friends"));
    OK(send_grouped(radio, "Movies", "Godfather"));
    char g[300], b[64];
    OK(recv_grouped(dish, g, sizeof g, b, sizeof b));
    CHECK(strcmp(g, "Movies") == 0 && strcmp(b, "Godfather") == 0);

    char long_group[ZMQ_GROUP_MAX_LENGTH + 1];
    memset(long_group, 'A', ZMQ_GROUP_MAX_LENGTH);
    long_group[ZMQ_GROUP_MAX_LENGTH] = 0;
    OK(p_join(dish, long_group));
    sync_group(radio, dish, long_group);
    OK(send_grouped(radio, long_group, "long"));
    OK(recv_grouped(dish, g, sizeof g, b, sizeof b));
    CHECK(strcmp(g, long_group) == 0 && strcmp(b, "long") == 0);
    OK(zmq_close(radio));
    OK(zmq_close(dish));
    printf("round over %s: ok\n", ep);
}

/* Threads racing on thread-safe sockets: two threads send on one RADIO
 * (XPUB_NODROP, so a full pipe makes them wait rather than drop), one
 * blocks in zmq_recv on the DISH while another joins and leaves groups on
 * it. Every message arrives, in order per sender, and nothing fails. */
#define RACE_N 3000
struct race {
    void *radio, *dish;
    int id;
};

static void *race_send(void *arg)
{
    struct race *r = arg;
    char body[32];
    for (int i = 0; i < RACE_N; i++) {
        snprintf(body, sizeof body, "%d:%d", r->id, i);
        OK(send_grouped(r->radio, "R", body));
    }
    return NULL;
}

static void *race_join(void *arg)
{
    struct race *r = arg;
    char g[16];
    for (int i = 0; i < 300; i++) {
        snprintf(g, sizeof g, "J%d", i);
        OK(p_join(r->dish, g));
        OK(p_leave(r->dish, g));
    }
    return NULL;
}

static void *blocked_recv(void *arg)
{
    struct race *r = arg;
    char g[300], body[64];
    set_int(r->dish, ZMQ_RCVTIMEO, 5000);
    int rc = recv_grouped(r->dish, g, sizeof g, body, sizeof body);
    if (rc != 0)
        fprintf(stderr, "blocked recv failed: %s\n", zmq_strerror(zmq_errno()));
    else if (strcmp(g, "late") != 0)
        fprintf(stderr, "blocked recv got group \"%s\"\n", g);
    r->id = rc == 0 && strcmp(g, "late") == 0;
    return NULL;
}

static void race(void *ctx)
{
    void *radio = zmq_socket(ctx, ZMQ_RADIO);
    void *dish = zmq_socket(ctx, ZMQ_DISH);
    set_int(radio, ZMQ_XPUB_NODROP, 1);
    set_int(radio, ZMQ_SNDHWM, 100);
    set_int(dish, ZMQ_RCVHWM, 100);
    OK(zmq_bind(dish, "inproc://race"));
    OK(zmq_connect(radio, "inproc://race"));
    OK(p_join(dish, "R"));
    sync_group(radio, dish, "R");
    struct race a = {radio, dish, 0}, b = {radio, dish, 1};
    pthread_t ta, tb, tj;
    CHECK(pthread_create(&ta, NULL, race_send, &a) == 0);
    CHECK(pthread_create(&tb, NULL, race_send, &b) == 0);
    CHECK(pthread_create(&tj, NULL, race_join, &a) == 0);
    int next[2] = {0, 0};
    char g[300], body[64];
    for (int n = 0; n < 2 * RACE_N; n++) {
        OK(recv_grouped(dish, g, sizeof g, body, sizeof body));
        int id, i;
        CHECK(sscanf(body, "%d:%d", &id, &i) == 2 && (id == 0 || id == 1));
        CHECK(strcmp(g, "R") == 0 && i == next[id]);
        next[id]++;
    }
    CHECK(pthread_join(ta, NULL) == 0 && pthread_join(tb, NULL) == 0 && pthread_join(tj, NULL) == 0);

    /* A thread blocked in zmq_recv does not lock others out: join and
     * leave from here while it waits, as libzmq's thread-safe sockets allow. */
    OK(p_leave(dish, "R"));
    struct race w = {radio, dish, 0};
    pthread_t tw;
    CHECK(pthread_create(&tw, NULL, blocked_recv, &w) == 0);
    usleep(100 * 1000);
    OK(p_join(dish, "late"));
    for (int i = 0; i < 50; i++) {
        OK(send_grouped(radio, "late", "x"));
        usleep(10 * 1000);
    }
    CHECK(pthread_join(tw, NULL) == 0);
    CHECK(w.id == 1);
    OK(zmq_close(radio));
    OK(zmq_close(dish));
    printf("race: %d messages from two sender threads while a third joined/left: ok\n", 2 * RACE_N);
}

/* A free udp port on 127.0.0.1, from the kernel (a bound "*" port is not
 * readable back from libzmq's LAST_ENDPOINT). */
static int free_udp_port(void)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    CHECK(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    CHECK(bind(fd, (struct sockaddr *)&a, sizeof a) == 0);
    CHECK(getsockname(fd, (struct sockaddr *)&a, &len) == 0);
    close(fd);
    return ntohs(a.sin_port);
}

static int self_test(void)
{
    void *ctx = zmq_ctx_new();
    NOTNULL(ctx);
    void *radio = zmq_socket(ctx, ZMQ_RADIO);
    void *dish = zmq_socket(ctx, ZMQ_DISH);
    void *pub = zmq_socket(ctx, ZMQ_PUB);
    NOTNULL(radio);
    NOTNULL(dish);
    int v = 0;
    size_t vlen = sizeof v;
    OK(zmq_getsockopt(dish, ZMQ_THREAD_SAFE, &v, &vlen));
    CHECK(v == 1);
    OK(zmq_getsockopt(pub, ZMQ_THREAD_SAFE, &v, &vlen));
    CHECK(v == 0);
    int fd;
    size_t fdlen = sizeof fd;
    FAILS(zmq_getsockopt(dish, ZMQ_FD, &fd, &fdlen), EINVAL);

    OK(p_join(dish, "Movies"));
    FAILS(p_join(dish, "Movies"), EINVAL);
    FAILS(p_leave(dish, "TV"), EINVAL);
    OK(p_leave(dish, "Movies"));
    char too_long[ZMQ_GROUP_MAX_LENGTH + 2];
    memset(too_long, 'A', sizeof too_long - 1);
    too_long[sizeof too_long - 1] = 0;
    FAILS(p_join(dish, too_long), EINVAL);
    FAILS(p_join(pub, "x"), ENOTSUP);
    FAILS(zmq_send(dish, "x", 1, 0), ENOTSUP);
    char buf[8];
    FAILS(zmq_recv(radio, buf, sizeof buf, ZMQ_DONTWAIT), ENOTSUP);
    FAILS(zmq_send(radio, "x", 1, ZMQ_SNDMORE), EINVAL);
    FAILS(zmq_bind(radio, "udp://*:5556"), ENOCOMPATPROTO);
    FAILS(zmq_connect(dish, "udp://127.0.0.1:5556"), ENOCOMPATPROTO);
    FAILS(zmq_connect(pub, "udp://127.0.0.1:5556"), ENOCOMPATPROTO);

    zmq_msg_t m;
    OK(zmq_msg_init_size(&m, 3));
    CHECK(strcmp(p_group(&m), "") == 0);
    FAILS(p_set_group(&m, too_long), EINVAL);
    OK(p_set_group(&m, "TV"));
    memcpy(zmq_msg_data(&m), "abc", 3);
    CHECK(strcmp(p_group(&m), "TV") == 0 && zmq_msg_size(&m) == 3);
    zmq_msg_t c;
    OK(zmq_msg_init(&c));
    OK(zmq_msg_copy(&c, &m));
    CHECK(strcmp(p_group(&c), "TV") == 0 && memcmp(zmq_msg_data(&c), "abc", 3) == 0);
    OK(zmq_msg_close(&c));
    OK(zmq_msg_close(&m));
    OK(zmq_close(radio));
    OK(zmq_close(dish));
    OK(zmq_close(pub));

    char ipc[128];
    snprintf(ipc, sizeof ipc, "ipc:///tmp/oxmq-radio-dish-%d.ipc", (int)getpid());
    round_over(ctx, "tcp://127.0.0.1:*");
    round_over(ctx, ipc);
    round_over(ctx, "inproc://radio-dish");
    char udp[64];
    snprintf(udp, sizeof udp, "udp://127.0.0.1:%d", free_udp_port());
    round_over(ctx, udp);
    unlink(ipc + strlen("ipc://"));
    race(ctx);
    OK(zmq_ctx_term(ctx));
    printf("radio_dish self: groups, errors, tcp/ipc/inproc/udp ok\n");
    return 0;
}

static int radio(const char *ep)
{
    void *ctx = zmq_ctx_new();
    void *radio = zmq_socket(ctx, ZMQ_RADIO);
    NOTNULL(radio);
    set_int(radio, ZMQ_LINGER, 0);
    if (strncmp(ep, "udp://", 6) == 0)
        OK(zmq_connect(radio, ep));
    else
        OK(zmq_bind(radio, ep));
    /* Stream until the peer is done and the runner stops us. */
    for (int i = 0; i < 3000; i++) {
        OK(send_grouped(radio, "G", "hello"));
        usleep(10 * 1000);
    }
    OK(zmq_close(radio));
    zmq_ctx_term(ctx);
    return 0;
}

static int dish(const char *ep, const char *group)
{
    void *ctx = zmq_ctx_new();
    void *dish = zmq_socket(ctx, ZMQ_DISH);
    NOTNULL(dish);
    set_int(dish, ZMQ_LINGER, 0);
    set_int(dish, ZMQ_RCVTIMEO, 10000);
    OK(p_join(dish, group));
    if (strncmp(ep, "udp://", 6) == 0)
        OK(zmq_bind(dish, ep));
    else
        OK(zmq_connect(dish, ep));
    char g[300], b[64];
    OK(recv_grouped(dish, g, sizeof g, b, sizeof b));
    CHECK(strcmp(g, group) == 0 && strcmp(b, "hello") == 0);
    printf("dish got \"%s\" in group \"%s\" from %s\n", b, g, ep);
    OK(zmq_close(dish));
    zmq_ctx_term(ctx);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: radio_dish self | radio EP | dish EP GROUP\n");
        return 2;
    }
    int drafts = load_drafts();
    if (strcmp(argv[1], "radio") == 0 && argc == 3)
        return radio(argv[2]);
    if (!drafts) {
        printf("SKIP %s: this libzmq exports no zmq_join/zmq_msg_set_group (built without drafts)\n", argv[1]);
        return 0;
    }
    if (strcmp(argv[1], "self") == 0)
        return self_test();
    if (strcmp(argv[1], "dish") == 0 && argc == 4)
        return dish(argv[2], argv[3]);
    fprintf(stderr, "bad arguments\n");
    return 2;
}
