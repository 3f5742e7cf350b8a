/* Regression test (issue 13): a SUB connected to a tcp address where nothing
 * listens, holding a subscription, must not keep zmq_ctx_term waiting. libzmq
 * gives SUB and XSUB a default LINGER of 0 for exactly this; oxmq used -1 and
 * hung here forever (Ruby ffi-rzmq's spec suite hit it).
 *
 *   sub_term LIBRARY
 *
 * The library is dlopen'ed, so the same check runs on oxmq and on real libzmq.
 * A hang is caught by alarm(): the process dies with SIGALRM and the step fails.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define ZMQ_SUB 2
#define ZMQ_XSUB 10
#define ZMQ_SUBSCRIBE 6
#define ZMQ_LINGER 17

/* A loopback port nobody listens on: bind to port 0, read it, close. */
static int free_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || getsockname(fd, (struct sockaddr *)&a, &len) != 0)
        return -1;
    close(fd);
    return ntohs(a.sin_port);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s LIBRARY\n", argv[0]);
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 2;
    }
    void *(*ctx_new)(void) = (void *(*)(void))dlsym(lib, "zmq_ctx_new");
    int (*ctx_term)(void *) = (int (*)(void *))dlsym(lib, "zmq_ctx_term");
    void *(*sock)(void *, int) = (void *(*)(void *, int))dlsym(lib, "zmq_socket");
    int (*setopt)(void *, int, const void *, size_t) = (int (*)(void *, int, const void *, size_t))dlsym(lib, "zmq_setsockopt");
    int (*getopt)(void *, int, void *, size_t *) = (int (*)(void *, int, void *, size_t *))dlsym(lib, "zmq_getsockopt");
    int (*conn)(void *, const char *) = (int (*)(void *, const char *))dlsym(lib, "zmq_connect");
    int (*close_)(void *) = (int (*)(void *))dlsym(lib, "zmq_close");
    if (!ctx_new || !ctx_term || !sock || !setopt || !getopt || !conn || !close_) return 2;

    static const int types[] = {ZMQ_SUB, ZMQ_XSUB};
    for (int i = 0; i < 2; i++) {
        int port = free_port();
        if (port < 0) return 2;
        char ep[64];
        snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", port);
        void *ctx = ctx_new();
        void *s = sock(ctx, types[i]);
        int linger = 12345;
        size_t len = sizeof linger;
        if (getopt(s, ZMQ_LINGER, &linger, &len) != 0 || linger != 0) {
            fprintf(stderr, "type %d: default LINGER is %d, libzmq's is 0\n", types[i], linger);
            return 1;
        }
        if (conn(s, ep) != 0) return 1;
        if (types[i] == ZMQ_SUB) {
            if (setopt(s, ZMQ_SUBSCRIBE, "topic", 5) != 0) return 1;
        }
        close_(s);
        alarm(20); /* a hang, not a slow machine */
        if (ctx_term(ctx) != 0) return 1;
        alarm(0);
        printf("type %d: ctx_term returned with a dangling connect and a subscription\n", types[i]);
    }
    return 0;
}
