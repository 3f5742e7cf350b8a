/* The draft API on oxmq (ZMQ_BUILD_DRAFT_API): CLIENT/SERVER routing ids,
 * SCATTER/GATHER, PEER with zmq_connect_peer, CHANNEL, ZMQ_THREAD_SAFE, no
 * ZMQ_FD, the zmq_poller_* family with libzmq's errno values, and threads
 * racing on one SERVER. Debian's libzmq exports no draft functions, so its
 * build of this file only says so. */
#define ZMQ_BUILD_DRAFT_API
#include "testutil.h"

#ifdef REAL_LIBZMQ
int main(void)
{
    puts("skipped: Debian's libzmq does not export the draft functions");
    return 0;
}
#else

#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#define WORKERS 4
#define REQUESTS 2000

static void *server_sock;

static void set_timeouts(void *s)
{
    int ms = 5000;
    OK(zmq_setsockopt(s, ZMQ_RCVTIMEO, &ms, sizeof ms));
    OK(zmq_setsockopt(s, ZMQ_SNDTIMEO, &ms, sizeof ms));
    int zero = 0;
    OK(zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero));
}

/* Echo requests until "stop"; every thread uses the same SERVER. */
static void *echo_worker(void *arg)
{
    int *handled = arg;
    for (;;) {
        zmq_msg_t m;
        OK(zmq_msg_init(&m));
        int n = zmq_msg_recv(&m, server_sock, 0);
        CHECK(n >= 0);
        CHECK(zmq_msg_routing_id(&m) != 0);
        if (n == 4 && memcmp(zmq_msg_data(&m), "stop", 4) == 0) {
            OK(zmq_msg_close(&m));
            return NULL;
        }
        (*handled)++;
        /* The received message keeps its routing id: sending it answers its peer. */
        CHECK(zmq_msg_send(&m, server_sock, 0) == n);
    }
}

static void client_server(void *ctx)
{
    void *server = zmq_socket(ctx, ZMQ_SERVER);
    void *client = zmq_socket(ctx, ZMQ_CLIENT);
    NOTNULL(server);
    NOTNULL(client);
    set_timeouts(server);
    set_timeouts(client);
    OK(zmq_bind(server, "tcp://127.0.0.1:*"));
    char ep[256];
    size_t len = sizeof ep;
    OK(zmq_getsockopt(server, ZMQ_LAST_ENDPOINT, ep, &len));
    OK(zmq_connect(client, ep));

    int v = -1;
    len = sizeof v;
    OK(zmq_getsockopt(server, ZMQ_THREAD_SAFE, &v, &len));
    CHECK(v == 1);
    int fd;
    len = sizeof fd;
    FAILS(zmq_getsockopt(client, ZMQ_FD, &fd, &len), EINVAL);
    FAILS(send_str(client, "part", ZMQ_SNDMORE), EINVAL);

    OK(send_str(client, "hello", 0));
    zmq_msg_t m;
    OK(zmq_msg_init(&m));
    CHECK(zmq_msg_recv(&m, server, 0) == 5);
    uint32_t rid = zmq_msg_routing_id(&m);
    CHECK(rid != 0);
    OK(zmq_msg_close(&m));

    FAILS(zmq_msg_set_routing_id(&m, 0), EINVAL);
    OK(zmq_msg_init_size(&m, 5));
    memcpy(zmq_msg_data(&m), "world", 5);
    OK(zmq_msg_set_routing_id(&m, rid));
    CHECK(zmq_msg_routing_id(&m) == rid);
    CHECK(zmq_msg_send(&m, server, 0) == 5);
    expect_str(client, "world");

    /* An unknown routing id: EHOSTUNREACH, and the message stays with the caller. */
    OK(zmq_msg_init_size(&m, 1));
    OK(zmq_msg_set_routing_id(&m, rid + 1));
    FAILS(zmq_msg_send(&m, server, 0), EHOSTUNREACH);
    OK(zmq_msg_close(&m));
    FAILS(send_str(server, "no id", 0), EHOSTUNREACH);

    /* Threads racing on one SERVER while one CLIENT sends. */
    server_sock = server;
    pthread_t th[WORKERS];
    int handled[WORKERS] = {0};
    for (int i = 0; i < WORKERS; i++)
        CHECK(pthread_create(&th[i], NULL, echo_worker, &handled[i]) == 0);
    for (int i = 0; i < REQUESTS; i++) {
        char buf[32];
        snprintf(buf, sizeof buf, "req-%d", i);
        OK(send_str(client, buf, 0));
    }
    static char seen[REQUESTS];
    for (int i = 0; i < REQUESTS; i++) {
        char buf[32];
        int n = zmq_recv(client, buf, sizeof buf - 1, 0);
        CHECK(n > 4);
        buf[n] = 0;
        int k = atoi(buf + 4);
        CHECK(k >= 0 && k < REQUESTS && !seen[k]);
        seen[k] = 1;
    }
    for (int i = 0; i < WORKERS; i++)
        OK(send_str(client, "stop", 0));
    int total = 0;
    for (int i = 0; i < WORKERS; i++) {
        CHECK(pthread_join(th[i], NULL) == 0);
        total += handled[i];
    }
    CHECK(total == REQUESTS);
    printf("%d requests echoed by %d threads on one SERVER\n", total, WORKERS);
    OK(zmq_close(client));
    OK(zmq_close(server));
}

static void scatter_gather_channel_peer(void *ctx)
{
    void *gather = zmq_socket(ctx, ZMQ_GATHER);
    void *scatter = zmq_socket(ctx, ZMQ_SCATTER);
    set_timeouts(gather);
    set_timeouts(scatter);
    OK(zmq_bind(gather, "inproc://sg"));
    OK(zmq_connect(scatter, "inproc://sg"));
    FAILS(send_str(scatter, "x", ZMQ_SNDMORE), EINVAL);
    OK(send_str(scatter, "spread", 0));
    expect_str(gather, "spread");
    FAILS(send_str(gather, "x", ZMQ_DONTWAIT), ENOTSUP);
    OK(zmq_close(gather));
    OK(zmq_close(scatter));

    void *a = zmq_socket(ctx, ZMQ_CHANNEL);
    void *b = zmq_socket(ctx, ZMQ_CHANNEL);
    set_timeouts(a);
    set_timeouts(b);
    OK(zmq_bind(a, "inproc://ch"));
    OK(zmq_connect(b, "inproc://ch"));
    OK(send_str(b, "ping", 0));
    expect_str(a, "ping");
    OK(zmq_close(a));
    OK(zmq_close(b));

    void *p1 = zmq_socket(ctx, ZMQ_PEER);
    void *p2 = zmq_socket(ctx, ZMQ_PEER);
    set_timeouts(p1);
    set_timeouts(p2);
    OK(zmq_bind(p1, "tcp://127.0.0.1:*"));
    char ep[256];
    size_t len = sizeof ep;
    OK(zmq_getsockopt(p1, ZMQ_LAST_ENDPOINT, ep, &len));
    uint32_t rid = zmq_connect_peer(p2, ep);
    CHECK(rid != 0);
    zmq_msg_t m;
    OK(zmq_msg_init_size(&m, 2));
    memcpy(zmq_msg_data(&m), "hi", 2);
    OK(zmq_msg_set_routing_id(&m, rid));
    CHECK(zmq_msg_send(&m, p2, 0) == 2);
    expect_str(p1, "hi");
    void *srv = zmq_socket(ctx, ZMQ_SERVER);
    errno = 0;
    CHECK(zmq_connect_peer(srv, ep) == 0 && zmq_errno() == ENOTSUP);
    errno = 0;
    CHECK(zmq_connect_peer(NULL, ep) == 0 && zmq_errno() == ENOTSOCK);
    OK(zmq_close(srv));
    OK(zmq_close(p1));
    OK(zmq_close(p2));
}

static void poller(void *ctx)
{
    void *server = zmq_socket(ctx, ZMQ_SERVER);
    void *client = zmq_socket(ctx, ZMQ_CLIENT);
    set_timeouts(server);
    set_timeouts(client);
    OK(zmq_bind(server, "inproc://poller"));
    OK(zmq_connect(client, "inproc://poller"));

    void *p = zmq_poller_new();
    NOTNULL(p);
    zmq_poller_event_t ev;
    int fd;
    CHECK(zmq_poller_size(p) == 0);
    /* Nothing registered: EAGAIN after the timeout, EFAULT when it would wait forever. */
    FAILS(zmq_poller_wait(p, &ev, 0), EAGAIN);
    FAILS(zmq_poller_wait(p, &ev, -1), EFAULT);
    FAILS(zmq_poller_fd(p, &fd), EINVAL);
    FAILS(zmq_poller_add(p, NULL, NULL, ZMQ_POLLIN), ENOTSOCK);
    FAILS(zmq_poller_add(NULL, server, NULL, ZMQ_POLLIN), EFAULT);
    FAILS(zmq_poller_add(p, server, NULL, 0x100), EINVAL);
    int tag = 7;
    OK(zmq_poller_add(p, server, &tag, ZMQ_POLLIN));
    FAILS(zmq_poller_add(p, server, NULL, ZMQ_POLLIN), EINVAL);
    FAILS(zmq_poller_modify(p, client, ZMQ_POLLIN), EINVAL);
    FAILS(zmq_poller_remove(p, client), EINVAL);
    FAILS(zmq_poller_add_fd(p, -1, NULL, ZMQ_POLLIN), EBADF);
    FAILS(zmq_poller_remove_fd(p, 12345), EINVAL);
    CHECK(zmq_poller_size(p) == 1);
    OK(zmq_poller_fd(p, &fd));
    CHECK(fd >= 0);

    FAILS(zmq_poller_wait(p, &ev, 10), EAGAIN);
    CHECK(ev.socket == NULL && ev.events == 0);
    OK(send_str(client, "wake", 0));
    OK(zmq_poller_wait(p, &ev, 5000));
    CHECK(ev.socket == server && ev.user_data == &tag && (ev.events & ZMQ_POLLIN));

    /* A raw descriptor next to the socket. */
    int pipefd[2];
    CHECK(pipe(pipefd) == 0);
    OK(zmq_poller_add_fd(p, pipefd[0], NULL, ZMQ_POLLIN));
    FAILS(zmq_poller_add_fd(p, pipefd[0], NULL, ZMQ_POLLIN), EINVAL);
    CHECK(write(pipefd[1], "x", 1) == 1);
    zmq_poller_event_t evs[4];
    CHECK(zmq_poller_wait_all(p, evs, 4, 5000) == 2);
    CHECK(evs[0].socket == server && evs[1].socket == NULL && evs[1].fd == pipefd[0]);
    FAILS(zmq_poller_wait_all(p, NULL, 1, 0), EFAULT);
    FAILS(zmq_poller_wait_all(p, evs, -1, 0), EINVAL);
    OK(zmq_poller_modify_fd(p, pipefd[0], ZMQ_POLLOUT));
    OK(zmq_poller_remove_fd(p, pipefd[0]));
    OK(zmq_poller_modify(p, server, ZMQ_POLLOUT));
    OK(zmq_poller_remove(p, server));
    CHECK(zmq_poller_size(p) == 0);
    OK(zmq_poller_destroy(&p));
    CHECK(p == NULL);
    FAILS(zmq_poller_destroy(&p), EFAULT);
    FAILS(zmq_poller_destroy(NULL), EFAULT);
    close(pipefd[0]);
    close(pipefd[1]);
    OK(zmq_close(client));
    OK(zmq_close(server));
}

int main(void)
{
    void *ctx = zmq_ctx_new();
    NOTNULL(ctx);
    client_server(ctx);
    scatter_gather_channel_peer(ctx);
    poller(ctx);
    OK(zmq_ctx_term(ctx));
    return 0;
}
#endif
