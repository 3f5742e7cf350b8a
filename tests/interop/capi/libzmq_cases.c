/* Cases of libzmq's own test programs that oxmq failed (issue 23), one
 * function per program. Built twice, as every program here: against oxmq,
 * and with -DREAL_LIBZMQ against Debian's libzmq, so each expectation is
 * checked on libzmq too. */

#define _GNU_SOURCE
#include "testutil.h"

#include <netdb.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef ZMQ_SOCKS_USERNAME /* draft names in 4.3's zmq.h */
#define ZMQ_SOCKS_USERNAME 99
#define ZMQ_SOCKS_PASSWORD 100
#endif

static char tmpdir[] = "/tmp/oxmq-libzmq-cases.XXXXXX";

static inline void *socket_of(void *ctx, int type)
{
    void *s = zmq_socket(ctx, type);
    NOTNULL(s);
    int linger = 0, timeout = 5000;
    OK(zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger));
    OK(zmq_setsockopt(s, ZMQ_RCVTIMEO, &timeout, sizeof timeout));
    OK(zmq_setsockopt(s, ZMQ_SNDTIMEO, &timeout, sizeof timeout));
    return s;
}

static inline void bound_endpoint(void *s, const char *ep, char *out, size_t size)
{
    OK(zmq_bind(s, ep));
    OK(zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, out, &size));
}

/* test_base85: zmq_errno reports errno as it is (the test resets errno to 0
 * after a failing call, then expects 0 after a succeeding one); an empty
 * string is not Z85. */
static void test_z85(void)
{
    char text[11];
    FAILS_NULL(zmq_z85_encode(text, (const uint8_t *)"abc", 3), EINVAL);
    errno = 0;
    uint8_t out[8] = {0};
    NOTNULL(zmq_z85_decode(out, "HelloWorld"));
    CHECK(zmq_errno() == 0);
    const uint8_t want[8] = {0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B};
    CHECK(memcmp(out, want, 8) == 0);
    FAILS_NULL(zmq_z85_decode(out, ""), EINVAL);
    FAILS_NULL(zmq_z85_decode(out, "0"), EINVAL);
    FAILS_NULL(zmq_z85_decode(out, "%nSc1"), EINVAL); /* above 0xffffffff */
    NOTNULL(zmq_z85_decode(out, "%nSc0"));
    CHECK(memcmp(out, "\xff\xff\xff\xff", 4) == 0);
    FAILS_NULL(zmq_z85_decode(out, "####\004"), EINVAL);
    /* encoding nothing is the empty string */
    CHECK(zmq_z85_encode(text, NULL, 0) == text && text[0] == 0);
}

/* The string left in `opt`, and its length as getsockopt reports it. */
static void expect_string_opt(void *s, int opt, const char *want, size_t want_len)
{
    char buf[512];
    size_t len = sizeof buf;
    OK(zmq_getsockopt(s, opt, buf, &len));
    CHECK(len == want_len + 1);
    CHECK(buf[want_len] == 0 && memcmp(buf, want, want_len) == 0);
}

/* test_socks: test_socks_proxy_options and test_socks_userpass_options,
 * and the same rules on the other string options (libzmq 4.3.4 and 4.3.5
 * answer alike). */
static void test_string_options(void *ctx)
{
    char big[300];
    memset(big, 'a', sizeof big);
    void *s = socket_of(ctx, ZMQ_SUB);

    /* SOCKS_PROXY: NULL clears it, "" is refused, any length is taken. */
    OK(zmq_setsockopt(s, ZMQ_SOCKS_PROXY, "somehost:1080", 13));
    expect_string_opt(s, ZMQ_SOCKS_PROXY, "somehost:1080", 13);
    OK(zmq_setsockopt(s, ZMQ_SOCKS_PROXY, NULL, 0));
    expect_string_opt(s, ZMQ_SOCKS_PROXY, "", 0);
    FAILS(zmq_setsockopt(s, ZMQ_SOCKS_PROXY, "", 0), EINVAL);
    FAILS(zmq_setsockopt(s, ZMQ_SOCKS_PROXY, NULL, 5), EINVAL);
    OK(zmq_setsockopt(s, ZMQ_SOCKS_PROXY, big, 256));
    expect_string_opt(s, ZMQ_SOCKS_PROXY, big, 256);

    /* SOCKS_USERNAME/PASSWORD: NULL (whatever the length) and "" clear it,
     * at most 255 bytes. */
    const int creds[2] = {ZMQ_SOCKS_USERNAME, ZMQ_SOCKS_PASSWORD};
    for (int i = 0; i < 2; i++) {
        int opt = creds[i];
        expect_string_opt(s, opt, "", 0);
        OK(zmq_setsockopt(s, opt, "someuser", 8));
        expect_string_opt(s, opt, "someuser", 8);
        OK(zmq_setsockopt(s, opt, NULL, 0));
        expect_string_opt(s, opt, "", 0);
        OK(zmq_setsockopt(s, opt, "someuser", 8));
        OK(zmq_setsockopt(s, opt, "", 0));
        expect_string_opt(s, opt, "", 0);
        OK(zmq_setsockopt(s, opt, "someuser", 8));
        OK(zmq_setsockopt(s, opt, NULL, 5));
        expect_string_opt(s, opt, "", 0);
        OK(zmq_setsockopt(s, opt, big, 255));
        expect_string_opt(s, opt, big, 255);
        FAILS(zmq_setsockopt(s, opt, big, 256), EINVAL);
        expect_string_opt(s, opt, big, 255);
        /* the NUL needs room too */
        char small[255];
        size_t len = 255;
        FAILS(zmq_getsockopt(s, opt, small, &len), EINVAL);
    }

    /* BINDTODEVICE: NULL clears it, "" is refused, at most 16 bytes. */
    OK(zmq_setsockopt(s, ZMQ_BINDTODEVICE, big, 16));
    expect_string_opt(s, ZMQ_BINDTODEVICE, big, 16);
    FAILS(zmq_setsockopt(s, ZMQ_BINDTODEVICE, big, 17), EINVAL);
    FAILS(zmq_setsockopt(s, ZMQ_BINDTODEVICE, "", 0), EINVAL);
    OK(zmq_setsockopt(s, ZMQ_BINDTODEVICE, NULL, 0));
    expect_string_opt(s, ZMQ_BINDTODEVICE, "", 0);

    /* ZAP_DOMAIN: neither NULL nor "" is taken. */
    OK(zmq_setsockopt(s, ZMQ_ZAP_DOMAIN, "global", 6));
    FAILS(zmq_setsockopt(s, ZMQ_ZAP_DOMAIN, NULL, 0), EINVAL);
    FAILS(zmq_setsockopt(s, ZMQ_ZAP_DOMAIN, "", 0), EINVAL);
    expect_string_opt(s, ZMQ_ZAP_DOMAIN, "global", 6);

    /* PLAIN_USERNAME: NULL goes back to the NULL mechanism and keeps the name. */
    OK(zmq_setsockopt(s, ZMQ_PLAIN_USERNAME, "admin", 5));
    int mechanism = -1;
    size_t len = sizeof mechanism;
    OK(zmq_getsockopt(s, ZMQ_MECHANISM, &mechanism, &len));
    CHECK(mechanism == ZMQ_PLAIN);
    OK(zmq_setsockopt(s, ZMQ_PLAIN_USERNAME, NULL, 0));
    OK(zmq_getsockopt(s, ZMQ_MECHANISM, &mechanism, &len));
    CHECK(mechanism == ZMQ_NULL);
    expect_string_opt(s, ZMQ_PLAIN_USERNAME, "admin", 5);
    FAILS(zmq_setsockopt(s, ZMQ_PLAIN_USERNAME, "", 0), EINVAL);

    OK(zmq_close(s));
}

/* test_srcfd: a received message names the fd of its connection (tcp and
 * ipc; the `__fd` property), none for inproc (-1, EINVAL). */
static void srcfd_over(void *ctx, const char *where, int tcp)
{
    char ep[256];
    void *rep = socket_of(ctx, ZMQ_REP);
    void *req = socket_of(ctx, ZMQ_REQ);
    bound_endpoint(rep, where, ep, sizeof ep);
    OK(zmq_connect(req, ep));
    OK(send_str(req, "ping", 0));
    zmq_msg_t msg;
    OK(zmq_msg_init(&msg));
    CHECK(zmq_msg_recv(&msg, rep, 0) == 4);
    int fd = zmq_msg_get(&msg, ZMQ_SRCFD);
    if (strncmp(where, "inproc", 6) == 0) {
        CHECK(fd == -1 && zmq_errno() == EINVAL);
        OK(zmq_msg_close(&msg));
        OK(zmq_close(req));
        OK(zmq_close(rep));
        return;
    }
    CHECK(fd >= 0);
    const char *fd_text = zmq_msg_gets(&msg, "__fd");
    NOTNULL(fd_text);
    CHECK(atoi(fd_text) == fd);
    zmq_msg_t copy;
    OK(zmq_msg_init(&copy));
    OK(zmq_msg_copy(&copy, &msg));
    CHECK(zmq_msg_get(&copy, ZMQ_SRCFD) == fd);
    OK(zmq_msg_close(&copy));
    /* Peer-Address goes with it: the IP over tcp, localhost:UID:GID:PID over ipc. */
    const char *peer = zmq_msg_gets(&msg, "Peer-Address");
    NOTNULL(peer);
    char want[128];
    if (tcp)
        snprintf(want, sizeof want, "127.0.0.1");
    else
        snprintf(want, sizeof want, "localhost:%u:%u:%d", (unsigned)getuid(), (unsigned)getgid(), (int)getpid());
    if (strcmp(peer, want) != 0) {
        fprintf(stderr, "Peer-Address %s, expected %s\n", peer, want);
        exit(1);
    }
    OK(zmq_msg_close(&msg));
    /* It is the connection's fd: its peer is the REQ's end. */
    struct sockaddr_storage ss;
    socklen_t sslen = sizeof ss;
    CHECK(getpeername(fd, (struct sockaddr *)&ss, &sslen) == 0);
    if (tcp) {
        char host[NI_MAXHOST];
        CHECK(getnameinfo((struct sockaddr *)&ss, sslen, host, sizeof host, NULL, 0, NI_NUMERICHOST) == 0);
        CHECK(strcmp(host, "127.0.0.1") == 0);
    } else {
        CHECK(ss.ss_family == AF_UNIX);
    }
    OK(send_str(rep, "pong", 0));
    expect_str(req, "pong");
    OK(zmq_close(req));
    OK(zmq_close(rep));

    /* A message made here has no source. */
    OK(zmq_msg_init_size(&msg, 3));
    errno = 0;
    CHECK(zmq_msg_get(&msg, ZMQ_SRCFD) == -1 && zmq_errno() == EINVAL);
    OK(zmq_msg_close(&msg));
}

static void test_srcfd(void *ctx)
{
    char ep[300];
    srcfd_over(ctx, "tcp://127.0.0.1:*", 1);
    snprintf(ep, sizeof ep, "ipc://%s/srcfd.ipc", tmpdir);
    srcfd_over(ctx, ep, 0);
    srcfd_over(ctx, "inproc://srcfd", 0);
}

/* test_rebind_ipc: a second PUSH binds the path of a closed one; the PULL
 * reconnects to it. Also after an unbind, and with the first socket closed
 * only after the second has bound (its listener closing last). */
static void test_rebind_ipc(void *ctx)
{
    char ep[300];
    snprintf(ep, sizeof ep, "ipc://%s/rebind.ipc", tmpdir);
    void *first = socket_of(ctx, ZMQ_PUSH);
    void *second = socket_of(ctx, ZMQ_PUSH);
    OK(zmq_bind(first, ep));
    void *pull = socket_of(ctx, ZMQ_PULL);
    OK(zmq_connect(pull, ep));
    OK(send_str(first, "one", 0));
    expect_str(pull, "one");
    OK(zmq_close(first));
    OK(zmq_bind(second, ep));
    OK(send_str(second, "two", 0));
    expect_str(pull, "two");

    OK(zmq_unbind(second, ep));
    void *third = socket_of(ctx, ZMQ_PUSH);
    OK(zmq_bind(third, ep));
    OK(zmq_close(second));
    OK(send_str(third, "three", 0));
    expect_str(pull, "three");
    OK(zmq_close(third));
    OK(zmq_close(pull));
}

/* test_fork: the child closes the parent's socket and terminates the
 * parent's context (EINTR, at once, as libzmq: the I/O thread is the
 * parent's), then talks to the parent through a context of its own. */
static void test_fork(void)
{
    void *ctx = zmq_ctx_new();
    NOTNULL(ctx);
    void *pull = socket_of(ctx, ZMQ_PULL);
    char ep[256];
    bound_endpoint(pull, "tcp://127.0.0.1:*", ep, sizeof ep);
    /* A live connection in the parent, so its I/O thread has work. */
    void *push = socket_of(ctx, ZMQ_PUSH);
    OK(zmq_connect(push, ep));
    OK(send_str(push, "parent", 0));
    expect_str(pull, "parent");

    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        alarm(20); /* a hang fails the parent's waitpid check */
        CHECK(zmq_close(push) == 0);
        CHECK(zmq_close(pull) == 0);
        errno = 0;
        CHECK(zmq_ctx_term(ctx) == -1 && errno == EINTR);
        CHECK(zmq_ctx_term(ctx) == -1 && errno == EINTR);
        errno = 0;
        CHECK(zmq_socket(ctx, ZMQ_PUSH) == NULL && errno == ETERM);
        void *child_ctx = zmq_ctx_new();
        NOTNULL(child_ctx);
        void *out = zmq_socket(child_ctx, ZMQ_PUSH);
        NOTNULL(out);
        OK(zmq_connect(out, ep));
        for (int i = 0; i < 5; i++)
            CHECK(send_str(out, "Hello", 0) == 5);
        OK(zmq_close(out));
        OK(zmq_ctx_term(child_ctx));
        _exit(0);
    }
    for (int i = 0; i < 5; i++)
        expect_str(pull, "Hello");
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "fork child: status %d\n", status);
        exit(1);
    }
    /* The parent's sockets and context are untouched by the child. */
    OK(send_str(push, "still here", 0));
    expect_str(pull, "still here");
    OK(zmq_close(push));
    OK(zmq_close(pull));
    OK(zmq_ctx_term(ctx));
}

int main(void)
{
    CHECK(mkdtemp(tmpdir) != NULL);
    test_z85();
    void *ctx = zmq_ctx_new();
    NOTNULL(ctx);
    test_string_options(ctx);
    test_srcfd(ctx);
    test_rebind_ipc(ctx);
    OK(zmq_ctx_term(ctx));
    test_fork();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    CHECK(system(cmd) == 0);
    printf("libzmq_cases: z85, string options, SRCFD, ipc rebind, fork\n");
    return 0;
}
