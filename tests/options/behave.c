/* What options do, not only what they read back: scenarios run on a
 * libzmq.so.5 given by path, printing a transcript that must be the same for
 * oxmq's drop-in and for real libzmq (mk/options.mk diffs them).
 *
 *   behave LIBRARY
 *
 * Each line is "scenario: step -> result". Received messages print as their
 * bytes (non-printable ones as \xNN), "EAGAIN" when nothing arrived within the
 * wait, and failed calls as "rc=-1 errno=NAME".
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <fcntl.h>
#include <sys/time.h>

#define ZMQ_PUB 1
#define ZMQ_SUB 2
#define ZMQ_XPUB 9
#define ZMQ_XSUB 10
#define ZMQ_PUSH 8
#define ZMQ_PULL 7
#define ZMQ_DEALER 5
#define ZMQ_PAIR 0
#define ZMQ_SUBSCRIBE 6
#define ZMQ_UNSUBSCRIBE 7
#define ZMQ_RCVMORE 13
#define ZMQ_LINGER 17
#define ZMQ_RCVTIMEO 27
#define ZMQ_SNDHWM 23
#define ZMQ_CONFLATE 54
#define ZMQ_XPUB_VERBOSE 40
#define ZMQ_XPUB_MANUAL 71
#define ZMQ_XPUB_MANUAL_LAST_VALUE 98
#define ZMQ_ONLY_FIRST_SUBSCRIBE 108
#define ZMQ_ROUTER 6
#define ZMQ_ROUTER_MANDATORY 33
#define ZMQ_ROUTER_RAW 41
#define ZMQ_LAST_ENDPOINT 32
#define ZMQ_USE_FD 89
#define ZMQ_RECONNECT_IVL 18
#define ZMQ_RECONNECT_STOP 109
#define ZMQ_TCP_ACCEPT_FILTER 38
#define ZMQ_IPC_FILTER_PID 58
#define ZMQ_IPC_FILTER_UID 59
#define ZMQ_IPC_FILTER_GID 60
#define ZMQ_SNDMORE 2
#define ZMQ_DONTWAIT 1

static void *(*z_ctx_new)(void);
static int (*z_ctx_term)(void *);
static void *(*z_socket)(void *, int);
static int (*z_close)(void *);
static int (*z_set)(void *, int, const void *, size_t);
static int (*z_getsockopt)(void *, int, void *, size_t *);
static int (*z_bind)(void *, const char *);
static int (*z_connect)(void *, const char *);
static int (*z_send)(void *, const void *, size_t, int);
static int (*z_recv)(void *, void *, size_t, int);
static int (*z_errno)(void);
static int (*z_ctx_set)(void *, int, int);
static int (*z_ctx_get)(void *, int);

static void *ctx;

static const char *ename(int e) {
    switch (e) {
    case EAGAIN: return "EAGAIN";
    case EINVAL: return "EINVAL";
    case ENOTSUP: return "ENOTSUP";
    case EFAULT: return "EFAULT";
    case EMFILE: return "EMFILE";
    case EHOSTUNREACH: return "EHOSTUNREACH";
    case ECONNREFUSED: return "ECONNREFUSED";
    case 156384763: return "EFSM";
    default: return "other";
    }
}

static void *sock(int type) {
    void *s = z_socket(ctx, type);
    int zero = 0;
    z_set(s, ZMQ_LINGER, &zero, sizeof zero);
    return s;
}

static void seti(void *s, int o, int v) {
    if (z_set(s, o, &v, sizeof v) != 0) printf("  setsockopt %d=%d failed: %s\n", o, v, ename(z_errno()));
}

static void setb(const char *sc, const char *what, void *s, int o, const char *v) {
    int rc = z_set(s, o, v, strlen(v));
    if (rc == 0)
        printf("%s: %s -> ok\n", sc, what);
    else
        printf("%s: %s -> rc=-1 errno=%s\n", sc, what, ename(z_errno()));
}

static void sendm(void *s, const char *m, int more) {
    if (z_send(s, m, strlen(m), more ? ZMQ_SNDMORE : 0) < 0) printf("  send failed: %s\n", ename(z_errno()));
}

/* Receive one whole message within `ms` and print it ("a|b" for multipart). */
static void recvp(const char *sc, const char *what, void *s, int ms) {
    z_set(s, ZMQ_RCVTIMEO, &ms, sizeof ms);
    char out[1024] = "";
    size_t o = 0;
    for (int part = 0;; part++) {
        unsigned char buf[256];
        int n = z_recv(s, buf, sizeof buf, 0);
        if (n < 0) {
            printf("%s: %s -> %s%s\n", sc, what, out, part ? "|<error>" : ename(z_errno()));
            return;
        }
        if (part) out[o++] = '|';
        for (int i = 0; i < n && o < sizeof out - 8; i++)
            o += (buf[i] >= 32 && buf[i] < 127) ? (size_t)sprintf(out + o, "%c", buf[i])
                                               : (size_t)sprintf(out + o, "\\x%02x", buf[i]);
        out[o] = 0;
        int more = 0;
        size_t len = sizeof more;
        z_getsockopt(s, ZMQ_RCVMORE, &more, &len);
        if (!more) break;
    }
    printf("%s: %s -> %s\n", sc, what, out);
}


static void xpub_manual(void) {
    const char *sc = "xpub_manual";
    void *plain = sock(ZMQ_XPUB);
    setb(sc, "SUBSCRIBE on an XPUB without XPUB_MANUAL", plain, ZMQ_SUBSCRIBE, "A");
    z_close(plain);

    void *x = sock(ZMQ_XPUB);
    seti(x, ZMQ_XPUB_MANUAL, 1);
    z_bind(x, "inproc://manual");
    setb(sc, "SUBSCRIBE before any notice", x, ZMQ_SUBSCRIBE, "A");
    void *s1 = sock(ZMQ_SUB);
    z_connect(s1, "inproc://manual");
    z_set(s1, ZMQ_SUBSCRIBE, "A", 1);
    recvp(sc, "xpub recv (s1 subscribed A)", x, 1000);
    sendm(x, "A0", 0);
    recvp(sc, "s1 recv before the user applies it", s1, 200);
    setb(sc, "SUBSCRIBE A", x, ZMQ_SUBSCRIBE, "A");
    sendm(x, "A1", 0);
    recvp(sc, "s1 recv", s1, 1000);
    void *s2 = sock(ZMQ_SUB);
    z_connect(s2, "inproc://manual");
    z_set(s2, ZMQ_SUBSCRIBE, "A", 1);
    recvp(sc, "xpub recv (s2 subscribed A too)", x, 1000);
    sendm(x, "A2", 0);
    recvp(sc, "s2 recv before the user applies it", s2, 200);
    recvp(sc, "s1 recv", s1, 1000);
    setb(sc, "SUBSCRIBE A", x, ZMQ_SUBSCRIBE, "A");
    sendm(x, "A3", 0);
    recvp(sc, "s2 recv", s2, 1000);
    recvp(sc, "s1 recv", s1, 1000);
    z_set(s1, ZMQ_UNSUBSCRIBE, "A", 1);
    recvp(sc, "xpub recv (s1 cancelled A)", x, 1000);
    sendm(x, "A4", 0);
    recvp(sc, "s1 recv before the user applies the cancel", s1, 200);
    setb(sc, "UNSUBSCRIBE A", x, ZMQ_UNSUBSCRIBE, "A");
    sendm(x, "A5", 0);
    recvp(sc, "s1 recv", s1, 200);
    recvp(sc, "s2 recv", s2, 1000);
    recvp(sc, "s2 recv", s2, 1000);
    z_close(s2);
    recvp(sc, "xpub recv (s2 closed)", x, 1000);
    recvp(sc, "xpub recv", x, 200);
    z_close(s1);
    z_close(x);
}

static void xpub_manual_last_value(void) {
    const char *sc = "xpub_manual_last_value";
    void *x = sock(ZMQ_XPUB);
    seti(x, ZMQ_XPUB_MANUAL_LAST_VALUE, 1);
    z_bind(x, "inproc://mlv");
    void *s1 = sock(ZMQ_SUB);
    z_connect(s1, "inproc://mlv");
    z_set(s1, ZMQ_SUBSCRIBE, "T", 1);
    recvp(sc, "xpub recv", x, 1000);
    setb(sc, "SUBSCRIBE T", x, ZMQ_SUBSCRIBE, "T");
    sendm(x, "T0", 0);
    recvp(sc, "s1 recv", s1, 1000);
    void *s2 = sock(ZMQ_SUB);
    z_connect(s2, "inproc://mlv");
    z_set(s2, ZMQ_SUBSCRIBE, "T", 1);
    recvp(sc, "xpub recv", x, 1000);
    setb(sc, "SUBSCRIBE T", x, ZMQ_SUBSCRIBE, "T");
    sendm(x, "T-last", 1);
    sendm(x, "value", 0);
    recvp(sc, "s2 recv (the last value)", s2, 1000);
    recvp(sc, "s1 recv (not for it)", s1, 200);
    sendm(x, "T1", 0);
    recvp(sc, "s1 recv", s1, 1000);
    recvp(sc, "s2 recv", s2, 1000);
    z_close(s1);
    z_close(s2);
    z_close(x);
}

static void only_first_subscribe(void) {
    for (int xsub_of = 0; xsub_of <= 1; xsub_of++) {
        char sc[64];
        snprintf(sc, sizeof sc, "only_first_subscribe(xsub=%d)", xsub_of);
        void *x = sock(ZMQ_XPUB);
        seti(x, ZMQ_XPUB_VERBOSE, 1);
        seti(x, ZMQ_ONLY_FIRST_SUBSCRIBE, 1);
        char ep[64];
        snprintf(ep, sizeof ep, "inproc://ofs%d", xsub_of);
        z_bind(x, ep);
        void *xs = sock(ZMQ_XSUB);
        seti(xs, ZMQ_ONLY_FIRST_SUBSCRIBE, xsub_of);
        z_connect(xs, ep);
        sendm(xs, "\x01" "a", 1);
        sendm(xs, "\x01" "b", 0);
        sendm(xs, "d", 1);
        sendm(xs, "\x01" "c", 0);
        sendm(xs, "\x01" "e", 1);
        z_send(xs, "\x00" "a", 2, 0);
        sendm(xs, "f", 0);
        for (int i = 0; i < 7; i++) recvp(sc, "xpub recv", x, i < 5 ? 1000 : 200);
        z_close(xs);
        z_close(x);
    }
}

/* Send-side CONFLATE: messages queued before the peer is there, then one after. */
static void conflate_send(void) {
    static const int types[][2] = {{ZMQ_PUSH, ZMQ_PULL}, {ZMQ_DEALER, ZMQ_DEALER}, {ZMQ_PUB, ZMQ_SUB}};
    for (int bind_first = 0; bind_first <= 1; bind_first++)
        for (int tr = 0; tr < 2; tr++)
            for (int t = 0; t < 3; t++) {
                if (tr == 0 && bind_first) continue; /* tcp: the queued case only */
                char sc[96], ep[64];
                snprintf(sc, sizeof sc, "conflate_send(%s type %d, %s)", tr ? "inproc" : "tcp", types[t][0],
                         bind_first ? "bound first" : "connected first");
                if (tr)
                    snprintf(ep, sizeof ep, "inproc://conflate-%d-%d", bind_first, t);
                else
                    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", 45870 + t);
                void *p = sock(types[t][0]);
                void *q = sock(types[t][1]);
                seti(p, ZMQ_CONFLATE, 1);
                if (types[t][1] == ZMQ_SUB) z_set(q, ZMQ_SUBSCRIBE, "", 0);
                if (bind_first) z_bind(q, ep);
                if (z_connect(p, ep) != 0) printf("  connect failed: %s\n", ename(z_errno()));
                sendm(p, "1", 0);
                sendm(p, "2", 0);
                sendm(p, "a", 1);
                sendm(p, "b", 0);
                sendm(p, "3", 0);
                if (!bind_first && z_bind(q, ep) != 0) printf("  bind failed: %s\n", ename(z_errno()));
                recvp(sc, "recv", q, 500);
                recvp(sc, "recv", q, 200);
                if (types[t][0] != ZMQ_PUB) {
                    sendm(p, "after", 0);
                    recvp(sc, "recv after", q, 1000);
                }
                z_close(p);
                z_close(q);
            }
}

/* SUB with CONFLATE: its outgoing pipe conflates too, so of the
 * subscriptions queued before the connection only the last reaches the XPUB. */
static void conflate_sub(void) {
    for (int tr = 0; tr < 2; tr++)
        for (int conflate = 0; conflate <= 1; conflate++) {
            char sc[96], ep[256];
            snprintf(sc, sizeof sc, "conflate_sub(%s, CONFLATE=%d)", tr ? "inproc" : "tcp", conflate);
            void *x = sock(ZMQ_XPUB);
            if (tr) {
                snprintf(ep, sizeof ep, "inproc://conflate-sub-%d", conflate);
                z_bind(x, ep);
            } else {
                z_bind(x, "tcp://127.0.0.1:*");
                size_t len = sizeof ep;
                z_getsockopt(x, ZMQ_LAST_ENDPOINT, ep, &len);
            }
            void *s = sock(ZMQ_SUB);
            seti(s, ZMQ_CONFLATE, conflate);
            z_set(s, ZMQ_SUBSCRIBE, "a", 1);
            z_set(s, ZMQ_SUBSCRIBE, "b", 1);
            z_connect(s, ep);
            recvp(sc, "XPUB reads", x, 1000);
            recvp(sc, "XPUB reads", x, 300);
            z_close(s);
            z_close(x);
        }
}

/* A plain TCP client talking to a ROUTER with ROUTER_RAW. Routing ids are
 * generated, so only their length prints. */
static void recv_id(const char *sc, const char *what, void *s, unsigned char *id, int *idlen) {
    int ms = 1000;
    z_set(s, ZMQ_RCVTIMEO, &ms, sizeof ms);
    *idlen = z_recv(s, id, 256, 0);
    if (*idlen < 0) {
        printf("%s: %s -> %s\n", sc, what, ename(z_errno()));
        return;
    }
    char label[128];
    snprintf(label, sizeof label, "%s (an id of %d bytes, then)", what, *idlen);
    recvp(sc, label, s, 1000);
}

static void router_raw(void) {
    const char *sc = "router_raw";
    void *r = sock(ZMQ_ROUTER);
    int v = -1;
    int rc = z_set(r, ZMQ_ROUTER_RAW, &v, sizeof v);
    printf("%s: ROUTER_RAW -1 -> rc=%d errno=%s\n", sc, rc, rc ? ename(z_errno()) : "-");
    seti(r, ZMQ_ROUTER_RAW, 1);
    z_bind(r, "tcp://127.0.0.1:*");
    char ep[256];
    size_t len = sizeof ep;
    z_getsockopt(r, ZMQ_LAST_ENDPOINT, ep, &len);
    int port = atoi(strrchr(ep, ':') + 1);
    int c = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timeval tv = {.tv_sec = 1};
    setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (connect(c, (struct sockaddr *)&a, sizeof a) != 0) {
        printf("%s: tcp connect failed\n", sc);
        return;
    }
    unsigned char id[256];
    int idlen;
    recv_id(sc, "on connect", r, id, &idlen);
    if (write(c, "GET /", 5) != 5) printf("%s: write failed\n", sc);
    recv_id(sc, "data", r, id, &idlen);
    sendm(r, "lone", 0);
    sendm(r, "nobody", 1);
    sendm(r, "x", 0);
    z_send(r, id, idlen, ZMQ_SNDMORE);
    sendm(r, "one", 1);
    sendm(r, "two", 0);
    usleep(200 * 1000);
    char buf[64];
    ssize_t n = read(c, buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = 0;
    printf("%s: client reads -> %s\n", sc, n > 0 ? buf : "nothing");
    seti(r, ZMQ_ROUTER_MANDATORY, 1);
    rc = z_send(r, "nobody", 6, ZMQ_SNDMORE);
    printf("%s: send to an unknown id with ROUTER_MANDATORY -> rc=%d errno=%s\n", sc, rc < 0 ? -1 : 0,
           rc < 0 ? ename(z_errno()) : "-");
    close(c);
    recv_id(sc, "client closed", r, id, &idlen);
    recvp(sc, "then", r, 200);
    z_close(r);
}

/* ROUTER_RAW, an empty data frame: libzmq ends that peer's pipe, and the
 * connection closes once the ROUTER next handles its commands (any later
 * send, recv or poll: until then it stays open, as STREAM's does). What
 * follows for that id is dropped, what the client sends is not delivered. */
static void router_raw_empty(void) {
    const char *sc = "router_raw_empty";
    void *r = sock(ZMQ_ROUTER);
    seti(r, ZMQ_ROUTER_RAW, 1);
    z_bind(r, "tcp://127.0.0.1:*");
    char ep[256];
    size_t len = sizeof ep;
    z_getsockopt(r, ZMQ_LAST_ENDPOINT, ep, &len);
    int port = atoi(strrchr(ep, ':') + 1);
    int c = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timeval tv = {.tv_sec = 1};
    setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (connect(c, (struct sockaddr *)&a, sizeof a) != 0) {
        printf("%s: tcp connect failed\n", sc);
        return;
    }
    unsigned char id[256];
    int idlen;
    recv_id(sc, "on connect", r, id, &idlen);
    if (idlen <= 0) return;
    z_send(r, id, idlen, ZMQ_SNDMORE);
    sendm(r, "one", 0);
    char buf[64];
    ssize_t n = read(c, buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = 0;
    printf("%s: client reads -> %s\n", sc, n > 0 ? buf : "nothing");
    z_send(r, id, idlen, ZMQ_SNDMORE);
    int rc = z_send(r, "", 0, 0);
    printf("%s: send an empty frame -> rc=%d\n", sc, rc);
    z_send(r, id, idlen, ZMQ_SNDMORE);
    rc = z_send(r, "two", 3, 0);
    printf("%s: send to that id again -> rc=%d\n", sc, rc);
    recvp(sc, "a recv, which handles the ROUTER's commands", r, 300);
    n = read(c, buf, sizeof buf - 1);
    printf("%s: client reads -> %s\n", sc, n == 0 ? "end of stream" : n > 0 ? "data" : "nothing (still open)");
    send(c, "late", 4, MSG_NOSIGNAL);
    recvp(sc, "what the client sent after", r, 300);
    seti(r, ZMQ_ROUTER_MANDATORY, 1);
    rc = z_send(r, id, idlen, ZMQ_SNDMORE);
    printf("%s: that id with ROUTER_MANDATORY -> rc=%d errno=%s\n", sc, rc < 0 ? -1 : 0,
           rc < 0 ? ename(z_errno()) : "-");
    if (rc >= 0) sendm(r, "three", 0);
    close(c);
    z_close(r);
}

/* ZMQ_USE_FD: bind adopts a listening socket the application made. */
static void use_fd(void) {
    const char *sc = "use_fd";
    for (int ipc = 0; ipc <= 1; ipc++) {
        int l;
        char path[64];
        snprintf(path, sizeof path, "/tmp/oxmq-behave-usefd-%d", (int)getpid());
        if (ipc) {
            l = socket(AF_UNIX, SOCK_STREAM, 0);
            struct sockaddr_un a = {.sun_family = AF_UNIX};
            strcpy(a.sun_path, path);
            unlink(path);
            bind(l, (struct sockaddr *)&a, sizeof a);
        } else {
            l = socket(AF_INET, SOCK_STREAM, 0);
            struct sockaddr_in a = {.sin_family = AF_INET};
            a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            bind(l, (struct sockaddr *)&a, sizeof a);
        }
        listen(l, 10);
        void *pull = sock(ZMQ_PULL);
        seti(pull, ZMQ_USE_FD, l);
        int got = -2;
        size_t len = sizeof got;
        z_getsockopt(pull, ZMQ_USE_FD, &got, &len);
        printf("%s: %s: USE_FD reads back the fd -> %s\n", sc, ipc ? "ipc" : "tcp", got == l ? "yes" : "no");
        /* The endpoint's address is ignored: the fd's own address is bound. */
        int rc = z_bind(pull, ipc ? "ipc:///tmp/oxmq-behave-usefd-ignored" : "tcp://127.0.0.1:1");
        printf("%s: %s: bind -> rc=%d %s\n", sc, ipc ? "ipc" : "tcp", rc, rc ? ename(z_errno()) : "");
        char ep[256] = "", want[256];
        len = sizeof ep;
        z_getsockopt(pull, ZMQ_LAST_ENDPOINT, ep, &len);
        if (ipc) {
            snprintf(want, sizeof want, "ipc://%s", path);
        } else {
            struct sockaddr_in a;
            socklen_t alen = sizeof a;
            getsockname(l, (struct sockaddr *)&a, &alen);
            snprintf(want, sizeof want, "tcp://127.0.0.1:%d", ntohs(a.sin_port));
        }
        printf("%s: %s: LAST_ENDPOINT is the fd's address -> %s\n", sc, ipc ? "ipc" : "tcp",
               strcmp(ep, want) == 0 ? "yes" : ep);
        void *push = sock(ZMQ_PUSH);
        z_connect(push, want);
        sendm(push, "through the adopted fd", 0);
        recvp(sc, ipc ? "ipc: recv" : "tcp: recv", pull, 2000);
        z_close(push);
        z_close(pull);
        /* libzmq closes it with the socket (in its I/O thread: give it time). */
        usleep(200 * 1000);
        printf("%s: %s: the fd after close -> %s\n", sc, ipc ? "ipc" : "tcp",
               fcntl(l, F_GETFD) == -1 && errno == EBADF ? "closed" : "still open");
        if (ipc) unlink(path);
    }
}

/* Accept filters: does a PUSH get a message through to a filtered PULL? */
static int filters_try(int ipc, int opt1, const void *v1, size_t l1, int opt2, const void *v2, size_t l2) {
    void *pull = sock(ZMQ_PULL);
    if (opt1 && z_set(pull, opt1, v1, l1) != 0) printf("  set %d failed: %s\n", opt1, ename(z_errno()));
    if (opt2 && z_set(pull, opt2, v2, l2) != 0) printf("  set %d failed: %s\n", opt2, ename(z_errno()));
    static int n;
    char ep[256];
    /* A fresh path each time: rebinding a path just closed is another matter. */
    snprintf(ep, sizeof ep, ipc ? "ipc:///tmp/oxmq-behave-filter-%d-%d" : "tcp://127.0.0.1:*", (int)getpid(), n++);
    z_bind(pull, ep);
    size_t len = sizeof ep;
    z_getsockopt(pull, ZMQ_LAST_ENDPOINT, ep, &len);
    void *push = sock(ZMQ_PUSH);
    z_connect(push, ep);
    z_send(push, "hi", 2, ZMQ_DONTWAIT);
    int ms = 300;
    z_set(pull, ZMQ_RCVTIMEO, &ms, sizeof ms);
    char buf[8];
    int ok = z_recv(pull, buf, sizeof buf, 0) == 2;
    z_close(push);
    z_close(pull);
    if (ipc) unlink(ep + strlen("ipc://"));
    return ok;
}

static void accept_filters(void) {
    const char *sc = "accept_filters";
    void *s = sock(ZMQ_PULL);
    int rc = z_set(s, ZMQ_TCP_ACCEPT_FILTER, "10.0.0.0/33", 11);
    printf("%s: TCP_ACCEPT_FILTER 10.0.0.0/33 -> rc=%d %s\n", sc, rc, rc ? ename(z_errno()) : "");
    rc = z_set(s, ZMQ_TCP_ACCEPT_FILTER, NULL, 0);
    printf("%s: TCP_ACCEPT_FILTER NULL (clear) -> rc=%d\n", sc, rc);
    rc = z_set(s, ZMQ_IPC_FILTER_UID, NULL, 0);
    printf("%s: IPC_FILTER_UID NULL (clear) -> rc=%d\n", sc, rc);
    z_close(s);
    int uid = (int)getuid() + 1, pid = (int)getpid(), other = pid + 1, gid = (int)getgid();
    printf("%s: tcp, filter 10.0.0.1 -> %s\n", sc,
           filters_try(0, ZMQ_TCP_ACCEPT_FILTER, "10.0.0.1", 8, 0, 0, 0) ? "delivered" : "refused");
    printf("%s: tcp, filters 10.0.0.1 and 127.0.0.0/8 -> %s\n", sc,
           filters_try(0, ZMQ_TCP_ACCEPT_FILTER, "10.0.0.1", 8, ZMQ_TCP_ACCEPT_FILTER, "127.0.0.0/8", 11)
               ? "delivered" : "refused");
    printf("%s: ipc, another uid and pid -> %s\n", sc,
           filters_try(1, ZMQ_IPC_FILTER_UID, &uid, 4, ZMQ_IPC_FILTER_PID, &other, 4) ? "delivered" : "refused");
    printf("%s: ipc, our pid -> %s\n", sc,
           filters_try(1, ZMQ_IPC_FILTER_UID, &uid, 4, ZMQ_IPC_FILTER_PID, &pid, 4) ? "delivered" : "refused");
    printf("%s: ipc, our gid -> %s\n", sc,
           filters_try(1, ZMQ_IPC_FILTER_GID, &gid, 4, 0, 0, 0) ? "delivered" : "refused");
    printf("%s: tcp with ipc filters -> %s\n", sc,
           filters_try(0, ZMQ_IPC_FILTER_UID, &uid, 4, 0, 0, 0) ? "delivered" : "refused");
}

/* RECONNECT_STOP: a refused tcp connect ends the endpoint with CONN_REFUSED. */
static void reconnect_stop(void) {
    const char *sc = "reconnect_stop";
    for (int stop = 0; stop <= 2; stop++) {
        int t = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t alen = sizeof a;
        bind(t, (struct sockaddr *)&a, sizeof a);
        getsockname(t, (struct sockaddr *)&a, &alen);
        close(t); /* nothing listens there now: connects are refused */
        char ep[64];
        snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", ntohs(a.sin_port));
        void *p = sock(ZMQ_PUSH);
        seti(p, ZMQ_RECONNECT_IVL, 50);
        seti(p, ZMQ_RECONNECT_STOP, stop);
        z_connect(p, ep);
        usleep(300 * 1000);
        void *q = sock(ZMQ_PULL);
        z_bind(q, ep);
        int rc = z_send(p, "m", 1, ZMQ_DONTWAIT);
        char what[64];
        snprintf(what, sizeof what, "RECONNECT_STOP=%d: send after the refusal", stop);
        printf("%s: %s -> rc=%d %s\n", sc, what, rc < 0 ? -1 : rc, rc < 0 ? ename(z_errno()) : "");
        snprintf(what, sizeof what, "RECONNECT_STOP=%d: recv once bound", stop);
        recvp(sc, what, q, rc < 0 ? 300 : 1500);
        z_close(p);
        z_close(q);
    }
}

/* Context options that change what new sockets get, or how many there may be. */
static void context_options(void) {
    const char *sc = "context_options";
    void *c = z_ctx_new();
    z_ctx_set(c, 1 /* ZMQ_MAX_SOCKETS */, 2);
    void *a = z_socket(c, ZMQ_PAIR), *b = z_socket(c, ZMQ_PAIR), *d = z_socket(c, ZMQ_PAIR);
    printf("%s: MAX_SOCKETS=2, a third socket -> %s\n", sc, d ? "created" : ename(z_errno()));
    printf("%s: MAX_SOCKETS reads -> %d\n", sc, z_ctx_get(c, 1));
    z_close(a);
    z_close(b);
    if (d) z_close(d);
    z_ctx_set(c, 42 /* ZMQ_IPV6 */, 1);
    z_ctx_set(c, 70 /* ZMQ_BLOCKY */, 0);
    void *e = z_socket(c, ZMQ_DEALER);
    int v = -5;
    size_t len = sizeof v;
    z_getsockopt(e, 42, &v, &len);
    printf("%s: ctx IPV6=1, a new socket's IPV6 -> %d\n", sc, v);
    len = sizeof v;
    z_getsockopt(e, ZMQ_LINGER, &v, &len);
    printf("%s: ctx BLOCKY=0, a new socket's LINGER -> %d\n", sc, v);
    z_close(e);
    z_ctx_term(c);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: behave LIBRARY\n");
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "behave: %s\n", dlerror());
        return 2;
    }
#define SYM(v, n) *(void **)(&v) = dlsym(lib, n)
    SYM(z_ctx_new, "zmq_ctx_new");
    SYM(z_ctx_term, "zmq_ctx_term");
    SYM(z_socket, "zmq_socket");
    SYM(z_close, "zmq_close");
    SYM(z_set, "zmq_setsockopt");
    SYM(z_getsockopt, "zmq_getsockopt");
    SYM(z_bind, "zmq_bind");
    SYM(z_connect, "zmq_connect");
    SYM(z_send, "zmq_send");
    SYM(z_recv, "zmq_recv");
    SYM(z_errno, "zmq_errno");
    SYM(z_ctx_set, "zmq_ctx_set");
    SYM(z_ctx_get, "zmq_ctx_get");
    ctx = z_ctx_new();
    setvbuf(stdout, NULL, _IOLBF, 0);
    xpub_manual();
    xpub_manual_last_value();
    only_first_subscribe();
    conflate_send();
    conflate_sub();
    router_raw();
    router_raw_empty();
    use_fd();
    accept_filters();
    reconnect_stop();
    context_options();
    z_ctx_term(ctx);
    return 0;
}
