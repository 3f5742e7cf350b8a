/* Shared helpers for the C study programs (bench/). Each program takes its
 * parameters on argv and prints one JSON line of results on stdout; programs
 * that bind first print "READY <endpoint>" so the orchestrator can start the
 * peer. The same sources build against Debian libzmq and oxmq's C ABI. */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <zmq.h>

static inline double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* User + system CPU seconds of the whole process so far (messages per CPU-second). */
static inline double cpu_s(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec * 1e-6;
}

static inline void die(const char *what) {
    fprintf(stderr, "FAIL: %s: %s\n", what, zmq_strerror(zmq_errno()));
    exit(1);
}

#define CHECK(x)                      \
    do {                              \
        if ((x) < 0) die(#x);         \
    } while (0)

/* The libzmq-like file mapped into this process (which library really ran). */
static inline const char *mapped_lib(void) {
    static char found[512];
    FILE *f = fopen("/proc/self/maps", "r");
    char line[1024];
    found[0] = 0;
    if (!f) return "?";
    while (fgets(line, sizeof line, f)) {
        char *p = strchr(line, '/');
        if (!p) continue;
        p[strcspn(p, "\n")] = 0;
        const char *base = strrchr(p, '/') + 1;
        if (strncmp(base, "libzmq", 6) == 0 || strncmp(base, "liboxmq", 7) == 0) {
            snprintf(found, sizeof found, "%s", p);
            break;
        }
    }
    fclose(f);
    return found[0] ? found : "?";
}

/* Common JSON suffix: which library and version ran. */
static inline void print_lib_fields(void) {
    int a, b, c;
    zmq_version(&a, &b, &c);
    printf("\"lib\":\"%s\",\"zmq_version\":\"%d.%d.%d\"", mapped_lib(), a, b, c);
}

static inline void ready(void *sock) {
    char ep[256];
    size_t n = sizeof ep;
    CHECK(zmq_getsockopt(sock, ZMQ_LAST_ENDPOINT, ep, &n));
    printf("READY %s\n", ep);
    fflush(stdout);
}

static inline long argl(int argc, char **argv, int i, long dflt) {
    return argc > i ? atol(argv[i]) : dflt;
}

static inline void nofree(void *data, void *hint) {
    (void)data;
    (void)hint;
}

/* The CURVE study (bench/run.py study 9): with BENCH_CURVE=1 in the
 * environment the bound (serving) socket is a CURVE server and the connecting
 * one a CURVE client, with fixed test keys; ack sockets stay NULL. Public keys
 * are derived with zmq_curve_public so each library derives its own. */
#define BENCH_SERVER_SECRET "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6"
#define BENCH_CLIENT_SECRET "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs"

static inline int bench_curve(void) {
    const char *v = getenv("BENCH_CURVE");
    return v && *v && strcmp(v, "0") != 0;
}

static inline void curve_server(void *sock) {
    if (!bench_curve()) return;
    int one = 1;
    CHECK(zmq_setsockopt(sock, ZMQ_CURVE_SERVER, &one, sizeof one));
    CHECK(zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, BENCH_SERVER_SECRET, 40));
}

static inline void curve_client(void *sock) {
    if (!bench_curve()) return;
    char server_pub[41], client_pub[41];
    CHECK(zmq_curve_public(server_pub, BENCH_SERVER_SECRET));
    CHECK(zmq_curve_public(client_pub, BENCH_CLIENT_SECRET));
    CHECK(zmq_setsockopt(sock, ZMQ_CURVE_SERVERKEY, server_pub, 40));
    CHECK(zmq_setsockopt(sock, ZMQ_CURVE_PUBLICKEY, client_pub, 40));
    CHECK(zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, BENCH_CLIENT_SECRET, 40));
}

/* Reported in every result line so a run can prove which mechanism it used. */
static inline void print_mechanism(void *sock) {
    int mech = -1;
    size_t n = sizeof mech;
    CHECK(zmq_getsockopt(sock, ZMQ_MECHANISM, &mech, &n));
    printf("\"mechanism\":%d,", mech);
}

#endif
