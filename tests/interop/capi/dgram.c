/* Draft DGRAM through the C API (zmq.h with ZMQ_BUILD_DRAFT_API).
 *
 *   dgram self          two DGRAMs round-trip over udp, the address frame's
 *                       form ("ip:port" and a NUL), libzmq's errors
 *   dgram echo PORT     bind udp://127.0.0.1:PORT, answer one datagram with
 *                       "echo:" + its body, sent back to its address frame
 *   dgram ask PORT PEER bind udp://127.0.0.1:PORT, send "ping" to PEER
 *                       (ip:port) until "echo:ping" comes back from it
 *   dgram ws-echo PORT, dgram ws-ask PORT (oxmq only): the same over
 *                       ws://127.0.0.1:PORT/dgram, where [a][b] are frames
 *
 * Built twice (tests/interop/capi/run.sh rules): against oxmq, and against Debian's
 * libzmq 4.3.4, which creates DGRAM by number (no draft header), so the
 * same checks run on both and the two interoperate across processes. */
#ifndef REAL_LIBZMQ
#define ZMQ_BUILD_DRAFT_API
#endif
#include "testutil.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef ZMQ_DGRAM
#define ZMQ_DGRAM 18
#endif

static void *bound(void *ctx, int port)
{
    void *s = zmq_socket(ctx, ZMQ_DGRAM);
    NOTNULL(s);
    int linger = 0, timeo = 5000;
    OK(zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger));
    OK(zmq_setsockopt(s, ZMQ_RCVTIMEO, &timeo, sizeof timeo));
    char ep[64];
    snprintf(ep, sizeof ep, "udp://127.0.0.1:%d", port);
    OK(zmq_bind(s, ep));
    return s;
}

/* Receive [address][body]; the address frame must be "ip:port" and a NUL. */
static int recv_from(void *s, char *addr, size_t addr_cap, char *body, size_t body_cap)
{
    int n = zmq_recv(s, addr, addr_cap - 1, 0);
    if (n < 0) return -1;
    int more = 0;
    size_t sz = sizeof more;
    CHECK(zmq_getsockopt(s, ZMQ_RCVMORE, &more, &sz) == 0 && more);
    CHECK(n >= 2 && (size_t)n < addr_cap && addr[n - 1] == '\0' && strlen(addr) == (size_t)n - 1);
    int m = zmq_recv(s, body, body_cap - 1, 0);
    CHECK(m >= 0 && (size_t)m < body_cap);
    body[m] = 0;
    CHECK(zmq_getsockopt(s, ZMQ_RCVMORE, &more, &sz) == 0 && !more);
    return m;
}

static void send_to(void *s, const char *addr, const char *body)
{
    OK(send_str(s, addr, ZMQ_SNDMORE));
    OK(send_str(s, body, 0));
}

/* A free udp port on 127.0.0.1, from the kernel: libzmq's LAST_ENDPOINT
 * leaves a bound "*" port unresolved, so the test picks the port itself. */
static int free_port(void)
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
    int pa = free_port(), pb = free_port();
    while (pb == pa) pb = free_port();
    void *a = bound(ctx, pa), *b = bound(ctx, pb);
    char a_addr[32], b_addr[32], addr[64], body[64];
    snprintf(a_addr, sizeof a_addr, "127.0.0.1:%d", pa);
    snprintf(b_addr, sizeof b_addr, "127.0.0.1:%d", pb);

    send_to(b, a_addr, "Is someone there ?");
    CHECK(recv_from(a, addr, sizeof addr, body, sizeof body) >= 0);
    CHECK(strcmp(addr, b_addr) == 0 && strcmp(body, "Is someone there ?") == 0);
    send_to(a, addr, "Yes, there is !");
    CHECK(recv_from(b, addr, sizeof addr, body, sizeof body) >= 0);
    CHECK(strcmp(addr, a_addr) == 0 && strcmp(body, "Yes, there is !") == 0);

    /* libzmq's errors: connect is refused, a message is exactly two frames. */
    FAILS(zmq_connect(a, "udp://127.0.0.1:5556"), ENOCOMPATPROTO);
    FAILS(send_str(a, "lonely", 0), EINVAL);
    OK(send_str(a, b_addr, ZMQ_SNDMORE));
    FAILS(send_str(a, "body", ZMQ_SNDMORE), EINVAL);
    OK(send_str(a, "last", 0));
    CHECK(recv_from(b, addr, sizeof addr, body, sizeof body) >= 0 && strcmp(body, "last") == 0);
    /* An address that does not resolve drops only that message. */
    send_to(a, "nonsense", "lost");
    send_to(a, b_addr, "after");
    CHECK(recv_from(b, addr, sizeof addr, body, sizeof body) >= 0 && strcmp(body, "after") == 0);

    int ts = -1;
    size_t sz = sizeof ts;
    OK(zmq_getsockopt(a, ZMQ_THREAD_SAFE, &ts, &sz));
    CHECK(ts == 0);
    void *lone = zmq_socket(ctx, ZMQ_DGRAM);
#ifndef REAL_LIBZMQ
    /* libzmq 4.3's zmq_send aborts here (its dgram_t closes the message
     * that zmq_send then closes again: EFAULT, assertion); oxmq answers
     * EAGAIN, as libzmq's zmq_msg_send does. */
    FAILS(zmq_send(lone, "x", 1, ZMQ_SNDMORE | ZMQ_DONTWAIT), EAGAIN);
#endif
    /* tcp, ipc and inproc are taken as in libzmq (raw byte streams over
     * tcp/ipc: tests/interop/dgram/stream_transports.py). */
    OK(zmq_bind(lone, "tcp://127.0.0.1:*"));
    OK(zmq_bind(lone, "inproc://dgram"));
    zmq_close(lone);
    zmq_close(a);
    zmq_close(b);
    zmq_ctx_term(ctx);
    printf("dgram self: round trip, address frames, errors OK\n");
    return 0;
}

static int echo(int port)
{
    void *ctx = zmq_ctx_new();
    void *s = bound(ctx, port);
    char addr[64], body[64], reply[80];
    int timeo = 30000;
    OK(zmq_setsockopt(s, ZMQ_RCVTIMEO, &timeo, sizeof timeo));
    CHECK(recv_from(s, addr, sizeof addr, body, sizeof body) >= 0);
    snprintf(reply, sizeof reply, "echo:%s", body);
    send_to(s, addr, reply);
    usleep(100 * 1000); /* let the udp thread send before the context goes */
    zmq_close(s);
    zmq_ctx_term(ctx);
    return 0;
}

static int ask(int port, const char *peer)
{
    void *ctx = zmq_ctx_new();
    void *s = bound(ctx, port);
    int timeo = 100;
    OK(zmq_setsockopt(s, ZMQ_RCVTIMEO, &timeo, sizeof timeo));
    char addr[64], body[64];
    for (int i = 0; i < 200; i++) {
        send_to(s, peer, "ping");
        if (recv_from(s, addr, sizeof addr, body, sizeof body) < 0) continue;
        CHECK(strcmp(addr, peer) == 0 && strcmp(body, "echo:ping") == 0);
        printf("DGRAM got \"echo:ping\" from %s\n", addr);
        zmq_close(s);
        zmq_ctx_term(ctx);
        return 0;
    }
    fprintf(stderr, "no answer from %s\n", peer);
    return 1;
}

#ifndef REAL_LIBZMQ
/* DGRAM over ws:// (ZWS, not raw; Debian's libzmq has no ws): [a][b] travels
 * as two frames, to npm's libzmq 4.3.5 (tests/interop/dgram/peer.js ws-echo/ws-ask). */
static int ws_role(int echo, int port)
{
    void *ctx = zmq_ctx_new();
    void *s = zmq_socket(ctx, ZMQ_DGRAM);
    NOTNULL(s);
    int linger = 1000, timeo = 10000;
    OK(zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger));
    OK(zmq_setsockopt(s, ZMQ_RCVTIMEO, &timeo, sizeof timeo));
    char ep[64], a[64], b[64], reply[80];
    snprintf(ep, sizeof ep, "ws://127.0.0.1:%d/dgram", port);
    if (!echo) {
        OK(zmq_connect(s, ep));
        send_to(s, "ask", "ping");
    } else {
        OK(zmq_bind(s, ep));
    }
    int n = zmq_recv(s, a, sizeof a - 1, 0);
    CHECK(n >= 0);
    a[n] = 0;
    int m = zmq_recv(s, b, sizeof b - 1, 0);
    CHECK(m >= 0);
    b[m] = 0;
    if (echo) {
        snprintf(reply, sizeof reply, "echo:%s", b);
        send_to(s, a, reply);
        printf("DGRAM echoed [%s][%s] over ws\n", a, b);
    } else {
        CHECK(strcmp(a, "ask") == 0 && strcmp(b, "echo:ping") == 0);
        printf("DGRAM got [ask][echo:ping] over ws\n");
    }
    zmq_close(s);
    zmq_ctx_term(ctx);
    return 0;
}
#endif

int main(int argc, char **argv)
{
#ifndef REAL_LIBZMQ
    if (argc >= 3 && strcmp(argv[1], "ws-echo") == 0) return ws_role(1, atoi(argv[2]));
    if (argc >= 3 && strcmp(argv[1], "ws-ask") == 0) return ws_role(0, atoi(argv[2]));
#endif
    if (argc >= 2 && strcmp(argv[1], "self") == 0) return self_test();
    if (argc >= 3 && strcmp(argv[1], "echo") == 0) return echo(atoi(argv[2]));
    if (argc >= 4 && strcmp(argv[1], "ask") == 0) return ask(atoi(argv[2]), argv[3]);
    fprintf(stderr, "usage: %s self | echo PORT | ask PORT PEER\n", argv[0]);
    return 2;
}
