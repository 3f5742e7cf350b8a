/* libzmq behaviours programs rely on, read from a libzmq.so.5 (issue 13,
 * section 7): fork, ipc rebind, endpoint forms, HWM changed after connect,
 * RCVMORE sizing, ZMQ_FD readiness in plain poll(2) and in zmq_poll, and
 * udp's LAST_ENDPOINT and what unbind/disconnect take (DISH, DGRAM and RADIO
 * are created by number: libzmq builds without drafts have them too).
 *
 *   compatprobe LIBRARY      one "name: answer" line per probe
 *
 * Each probe runs in its own process under a 10 s alarm, so a hang prints
 * "TIMEOUT" instead of stopping the run. Two libraries agree when their
 * outputs are equal (mk/compat/behaviour.mk diffs oxmq's against pyzmq's libzmq).
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define PUSH 8
#define PULL 7
#define RADIO 14
#define DISH 15
#define DGRAM 18
#define O_LINGER 17
#define O_SNDHWM 23
#define O_RCVHWM 24
#define O_RCVMORE 13
#define O_FD 14
#define O_EVENTS 15
#define O_LAST_ENDPOINT 32
#define O_SNDTIMEO 28
#define O_RCVTIMEO 27
#define O_IPV6 42
#define DONTWAIT 1
#define Z_POLLIN 1

typedef struct { void *socket; int fd; short events, revents; } pollitem_t;

static void *(*z_ctx_new)(void);
static int (*z_ctx_term)(void *);
static void *(*z_socket)(void *, int);
static int (*z_close)(void *);
static int (*z_bind)(void *, const char *);
static int (*z_connect)(void *, const char *);
static int (*z_unbind)(void *, const char *);
static int (*z_disconnect)(void *, const char *);
static int (*z_send)(void *, const void *, size_t, int);
static int (*z_recv)(void *, void *, size_t, int);
static int (*z_setsockopt)(void *, int, const void *, size_t);
static int (*z_getsockopt)(void *, int, void *, size_t *);
static int (*z_poll)(pollitem_t *, int, long);
static int (*z_errno)(void);

static void seti(void *s, int o, int v) { z_setsockopt(s, o, &v, sizeof v); }
static int geti(void *s, int o) { int v = -1; size_t n = sizeof v; z_getsockopt(s, o, &v, &n); return v; }
static void endpoint(void *s, char *buf, size_t n) { z_getsockopt(s, O_LAST_ENDPOINT, buf, &n); }
static void say_rc(const char *what, int rc) { printf("%s: rc %d errno %d\n", what, rc, rc == -1 ? z_errno() : 0); }
static int fd_readable(int fd, int ms) { struct pollfd p = {fd, POLLIN, 0}; return poll(&p, 1, ms) == 1 && (p.revents & POLLIN); }

/* The child of fork() makes a new context and talks to the parent over tcp
 * (libzmq's test_fork), and runs an inproc pair of its own. */
static void probe_fork(void) {
    void *ctx = z_ctx_new();
    void *pull = z_socket(ctx, PULL);
    z_bind(pull, "tcp://127.0.0.1:*");
    char ep[256];
    endpoint(pull, ep, sizeof ep);
    seti(pull, O_RCVTIMEO, 5000);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        void *c2 = z_ctx_new();
        void *push = z_socket(c2, PUSH);
        z_connect(push, ep);
        z_send(push, "from child", 10, 0);
        void *a = z_socket(c2, PULL), *b = z_socket(c2, PUSH);
        z_bind(a, "inproc://forked");
        z_connect(b, "inproc://forked");
        z_send(b, "x", 1, 0);
        char buf[8];
        int n = z_recv(a, buf, sizeof buf, 0);
        printf("fork: child inproc recv %d\n", n);
        z_close(a); z_close(b); z_close(push);
        z_ctx_term(c2);
        printf("fork: child new context terminated\n");
        fflush(stdout);
        _exit(0);
    }
    char buf[32];
    int n = z_recv(pull, buf, sizeof buf, 0);
    int st = 0;
    waitpid(pid, &st, 0);
    printf("fork: parent got %d bytes from the child, child exit %d\n", n, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    z_close(pull);
    z_ctx_term(ctx);
}

/* A PUSH binds ipc://X, goes away, a new PUSH binds the same path: the PULL
 * connected to it reconnects and receives from the new one. */
static void probe_ipc_rebind(void) {
    char path[64];
    snprintf(path, sizeof path, "ipc:///tmp/oxmq-compat-%d", (int)getpid());
    void *ctx = z_ctx_new();
    void *push = z_socket(ctx, PUSH), *pull = z_socket(ctx, PULL);
    seti(push, O_LINGER, 0);
    seti(pull, O_RCVTIMEO, 4000);
    z_bind(push, path);
    z_connect(pull, path);
    z_send(push, "one", 3, 0);
    char buf[8];
    printf("ipc rebind: first recv %d\n", z_recv(pull, buf, sizeof buf, 0));
    z_close(push);
    usleep(50000);
    void *push2 = z_socket(ctx, PUSH);
    seti(push2, O_LINGER, 0);
    seti(push2, O_SNDTIMEO, 4000);
    say_rc("ipc rebind: second bind", z_bind(push2, path));
    printf("ipc rebind: send %d\n", z_send(push2, "two", 3, 0));
    printf("ipc rebind: second recv %d\n", z_recv(pull, buf, sizeof buf, 0));
    z_close(push2); z_close(pull);
    z_ctx_term(ctx);
}

static void probe_endpoints(void) {
    void *ctx = z_ctx_new();
    void *s = z_socket(ctx, PULL);
    say_rc("bind tcp://[::1]:* without IPV6", z_bind(s, "tcp://[::1]:*"));
    say_rc("connect tcp://[::1]:5599 without IPV6", z_connect(s, "tcp://[::1]:5599"));
    say_rc("connect tcp://::1:5599", z_connect(s, "tcp://::1:5599"));
    z_close(s);
    s = z_socket(ctx, PULL);
    seti(s, O_IPV6, 1);
    int rc = z_bind(s, "tcp://[::1]:*");
    say_rc("bind tcp://[::1]:* with IPV6", rc);
    char ep[256] = "";
    if (rc == 0) {
        endpoint(s, ep, sizeof ep);
        printf("ipv6 endpoint form: %s\n", strncmp(ep, "tcp://[::1]:", 12) == 0 ? "tcp://[::1]:PORT" : ep);
        void *p = z_socket(ctx, PUSH);
        seti(p, O_IPV6, 1);
        seti(p, O_LINGER, 0);
        say_rc("connect to it with IPV6", z_connect(p, ep));
        z_send(p, "v6", 2, 0);
        seti(s, O_RCVTIMEO, 3000);
        char buf[8];
        printf("ipv6 recv %d\n", z_recv(s, buf, sizeof buf, 0));
        z_close(p);
    }
    say_rc("connect tcp://[::1]:5599 with IPV6", z_connect(s, "tcp://[::1]:5599"));
    z_close(s);

    /* source-address form */
    s = z_socket(ctx, PULL);
    z_bind(s, "tcp://127.0.0.1:*");
    endpoint(s, ep, sizeof ep);
    char src[300];
    snprintf(src, sizeof src, "tcp://127.0.0.1:0;%s", ep + 6);
    void *p = z_socket(ctx, PUSH);
    seti(p, O_LINGER, 0);
    say_rc("connect tcp://127.0.0.1:0;DST", z_connect(p, src));
    snprintf(src, sizeof src, "tcp://127.0.0.1;%s", ep + 6);
    say_rc("connect tcp://127.0.0.1;DST", z_connect(p, src));
    z_send(p, "src", 3, 0);
    seti(s, O_RCVTIMEO, 3000);
    char buf[8];
    printf("source-address recv %d\n", z_recv(s, buf, sizeof buf, 0));
    say_rc("connect tcp://nosuchhost.invalid;127.0.0.1:5599", z_connect(p, "tcp://nosuchhost.invalid;127.0.0.1:5599"));
    say_rc("connect tcp://;127.0.0.1:5599", z_connect(p, "tcp://;127.0.0.1:5599"));
    z_close(p);

    /* unbinding the wildcard form */
    say_rc("unbind tcp://127.0.0.1:*", z_unbind(s, "tcp://127.0.0.1:*"));
    say_rc("unbind the resolved endpoint", z_unbind(s, ep));
    z_close(s);

    /* over-long ipc path */
    s = z_socket(ctx, PULL);
    char lp[300] = "ipc:///tmp/";
    memset(lp + 11, 'x', 200);
    lp[211] = 0;
    say_rc("bind over-long ipc path", z_bind(s, lp));
    say_rc("connect over-long ipc path", z_connect(s, lp));
    z_close(s);
    z_ctx_term(ctx);
}

/* A free udp port on 127.0.0.1, from the kernel. */
static int free_udp_port(void) {
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    bind(fd, (struct sockaddr *)&a, sizeof a);
    getsockname(fd, (struct sockaddr *)&a, &len);
    close(fd);
    return ntohs(a.sin_port);
}

/* s with the decimal port replaced by "PORT", so runs compare equal. */
static void unport(const char *s, int port, char *out, size_t n) {
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    const char *hit = strstr(s, ps);
    if (hit) snprintf(out, n, "%.*sPORT%s", (int)(hit - s), s, hit + strlen(ps));
    else snprintf(out, n, "%s", s);
}

/* A udp bind (DISH, DGRAM) or connect (RADIO): its rc, LAST_ENDPOINT, and
 * whether unbind/disconnect finds it by the URI given or by that string. */
static void udp_case(void *ctx, int type, const char *name, const char *fmt, int port) {
    char uri[128], shown[128], ep[256] = "", le[256];
    snprintf(uri, sizeof uri, fmt, port);
    unport(uri, port, shown, sizeof shown);
    void *s = z_socket(ctx, type);
    seti(s, O_LINGER, 0);
    int rc = type == RADIO ? z_connect(s, uri) : z_bind(s, uri);
    int err = rc == -1 ? z_errno() : 0;
    endpoint(s, ep, sizeof ep);
    unport(ep, port, le, sizeof le);
    printf("udp %s %s %s: rc %d errno %d last endpoint \"%s\"\n", name, type == RADIO ? "connect" : "bind", shown, rc,
           err, le);
    if (rc == 0) {
        int (*term)(void *, const char *) = type == RADIO ? z_disconnect : z_unbind;
        const char *verb = type == RADIO ? "disconnect" : "unbind";
        rc = term(s, ep);
        printf("udp %s %s last endpoint: rc %d errno %d\n", name, verb, rc, rc == -1 ? z_errno() : 0);
        rc = term(s, uri);
        printf("udp %s %s given: rc %d errno %d\n", name, verb, rc, rc == -1 ? z_errno() : 0);
    }
    z_close(s);
}

static void probe_udp(void) {
    void *ctx = z_ctx_new();
    int p = free_udp_port();
    static const char *binds[] = {"udp://127.0.0.1:%d", "udp://127.0.0.1:*", "udp://*:%d", "udp://*:*",
                                  "udp://127.0.0.1:0", "udp://[::1]:%d"};
    for (size_t i = 0; i < sizeof binds / sizeof *binds; i++) {
        udp_case(ctx, DISH, "DISH", binds[i], p);
        udp_case(ctx, DGRAM, "DGRAM", binds[i], p);
    }
    /* Refused before anything is bound: the iface part first, an empty host. */
    static const char *bad_binds[] = {"udp://:%d", "udp://127.0.0.1:%d;x", "udp://;:%d", "udp://127.0.0.1;:%d"};
    for (size_t i = 0; i < sizeof bad_binds / sizeof *bad_binds; i++) udp_case(ctx, DISH, "DISH", bad_binds[i], p);
    /* Ports go through atoi and are cut to 16 bits (RADIO: nothing bound). */
    static const char *connects[] = {"udp://127.0.0.1:%d", "udp://127.0.0.1:0", "udp://127.0.0.1:*",
                                     "udp://127.0.0.1;239.193.9.7:%d", "udp://[::1]:%d", "udp://127.0.0.1:70000",
                                     "udp://127.0.0.1:-1", "udp://127.0.0.1:5555x", "udp://127.0.0.1:00",
                                     "udp://127.0.0.1:65536", "udp://:%d", "udp://127.0.0.1;:%d"};
    for (size_t i = 0; i < sizeof connects / sizeof *connects; i++) udp_case(ctx, RADIO, "RADIO", connects[i], p);
    void *s = z_socket(ctx, PUSH);
    static const char *bad[] = {"", "127.0.0.1:5599", "udp://", "bogus://x", "udp://127.0.0.1:5599"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char what[64];
        snprintf(what, sizeof what, "PUSH unbind \"%s\"", bad[i]);
        say_rc(what, z_unbind(s, bad[i]));
        snprintf(what, sizeof what, "PUSH disconnect \"%s\"", bad[i]);
        say_rc(what, z_disconnect(s, bad[i]));
    }
    z_close(s);
    z_ctx_term(ctx);
}

/* How many messages a PUSH queues without a peer, after SNDHWM changes. */
static int fill(void *s) {
    int n = 0;
    while (n < 5000 && z_send(s, "m", 1, DONTWAIT) == 1) n++;
    return n;
}

static void probe_hwm(void) {
    void *ctx = z_ctx_new();
    void *p = z_socket(ctx, PUSH);
    seti(p, O_LINGER, 0);
    z_connect(p, "tcp://127.0.0.1:9");
    seti(p, O_SNDHWM, 5);
    printf("hwm: SNDHWM 5 after a dangling tcp connect queues %d\n", fill(p));
    z_close(p);

    /* inproc: the pipe keeps the peer's RCVHWM from when it was made. */
    void *a = z_socket(ctx, PULL), *b = z_socket(ctx, PUSH);
    seti(b, O_LINGER, 0);
    z_bind(a, "inproc://hwm");
    z_connect(b, "inproc://hwm");
    seti(b, O_SNDHWM, 3);
    printf("hwm: inproc SNDHWM 3 on the connecter after connect queues %d\n", fill(b));
    z_close(a); z_close(b);

    /* The binder adopts the pipe when it processes commands (EVENTS does). */
    a = z_socket(ctx, PULL);
    b = z_socket(ctx, PUSH);
    seti(b, O_LINGER, 0);
    z_bind(b, "inproc://hwm2");
    z_connect(a, "inproc://hwm2");
    geti(b, O_EVENTS);
    seti(b, O_SNDHWM, 7);
    printf("hwm: inproc SNDHWM 7 on the binder after connect queues %d\n", fill(b));
    z_close(a); z_close(b);

    /* RCVHWM lowered on the receiving end of an inproc pair. */
    a = z_socket(ctx, PULL);
    b = z_socket(ctx, PUSH);
    seti(b, O_LINGER, 0);
    seti(b, O_SNDHWM, 1);
    z_bind(a, "inproc://hwm3");
    z_connect(b, "inproc://hwm3");
    geti(a, O_EVENTS);
    seti(a, O_RCVHWM, 2);
    geti(b, O_EVENTS);
    printf("hwm: inproc RCVHWM 2 on the receiver after connect queues %d\n", fill(b));
    z_close(a); z_close(b);
    z_ctx_term(ctx);
}

static void probe_rcvmore(void) {
    void *ctx = z_ctx_new();
    void *s = z_socket(ctx, PULL);
    int64_t v = -1;
    size_t n = sizeof v;
    int rc = z_getsockopt(s, O_RCVMORE, &v, &n);
    printf("rcvmore 8-byte buffer: rc %d size %zu value %lld\n", rc, n, (long long)v);
    z_close(s);
    z_ctx_term(ctx);
}

/* ZMQ_FD used as libzmq documents it, in plain poll(2). */
static void probe_fd(void) {
    void *ctx = z_ctx_new();
    void *push = z_socket(ctx, PUSH);
    seti(push, O_LINGER, 0);
    z_bind(push, "tcp://127.0.0.1:*");
    char ep[256];
    endpoint(push, ep, sizeof ep);
    void *pull = z_socket(ctx, PULL);
    z_connect(pull, ep);
    int fd = -1;
    size_t fl = sizeof fd;
    z_getsockopt(pull, O_FD, &fd, &fl);
    usleep(200000);
    z_send(push, "hello", 5, 0);
    printf("fd: readable in poll(2) after a message reaches a fresh connect: %d\n", fd_readable(fd, 3000));
    /* The documented loop: on readable, read EVENTS and receive while POLLIN. */
    int got = 0;
    for (int round = 0; round < 3; round++) {
        if (round > 0) z_send(push, "again", 5, 0);
        if (!fd_readable(fd, 3000)) break;
        char buf[8];
        while (geti(pull, O_EVENTS) & Z_POLLIN)
            if (z_recv(pull, buf, sizeof buf, DONTWAIT) >= 0) got++;
    }
    printf("fd: messages received by the poll/EVENTS loop: %d\n", got);

    /* zmq_poll polls first: a raw ZMQ_FD item next to its socket sees the wake-up. */
    z_send(push, "third", 5, 0);
    usleep(200000);
    pollitem_t items[2] = {{pull, 0, Z_POLLIN, 0}, {NULL, fd, Z_POLLIN, 0}};
    int rc = z_poll(items, 2, 1000);
    printf("zmq_poll: rc %d socket revents %d fd revents %d\n", rc, items[0].revents, items[1].revents);
    z_close(pull); z_close(push);
    z_ctx_term(ctx);
}

static void run(const char *name, void (*probe)(void)) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(10);
        probe();
        fflush(stdout);
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    if (WIFSIGNALED(st)) printf("%s: %s\n", name, WTERMSIG(st) == SIGALRM ? "TIMEOUT" : "CRASHED");
}

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    setvbuf(stdout, NULL, _IOLBF, 0);
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) { fprintf(stderr, "%s\n", dlerror()); return 2; }
#define SYM(n) if (!(*(void **)&z_##n = dlsym(lib, "zmq_" #n))) return 2
    SYM(ctx_new); SYM(ctx_term); SYM(socket); SYM(close); SYM(bind); SYM(connect); SYM(unbind); SYM(disconnect);
    SYM(send); SYM(recv); SYM(setsockopt); SYM(getsockopt); SYM(poll); SYM(errno);
    run("fork", probe_fork);
    run("ipc rebind", probe_ipc_rebind);
    run("endpoints", probe_endpoints);
    run("hwm", probe_hwm);
    run("rcvmore", probe_rcvmore);
    run("fd", probe_fd);
    run("udp", probe_udp);
    return 0;
}
