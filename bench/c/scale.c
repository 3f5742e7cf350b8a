/* Scale study (bench/run.py study 13): how cost grows with the number of peers.
 *
 *   scale router ENDPOINT N CLIENTS
 *       bind a ROUTER, print "READY <endpoint> <start_at>" (a CLOCK_MONOTONIC time
 *       the DEALER processes wait for, so that they all start connecting
 *       together), echo every message, and measure the resident set before any
 *       connection and once all N hellos have arrived.
 *   scale dealer HOST ENDPOINT N_TOTAL N_MINE INDEX START_AT PINGS
 *       one of CLIENTS processes: N_MINE DEALERs connect to HOST at ENDPOINT's
 *       port, each sends a hello; timed until every one has its reply. Process
 *       0 then waits until the ROUTER has all N_TOTAL hellos and times PINGS
 *       round trips (after a 1 s pause), DEALER after DEALER over a sample of
 *       its sockets (at most 100), one warm-up round first.
 *   scale pub ENDPOINT CLIENTS MSGS SIZE
 *       bind a PUB (and a PULL for the start and end signals), print
 *       "READY <pub endpoint> <pull endpoint>", publish until every SUB process
 *       says all its SUBs hear it, then publish MSGS messages of SIZE bytes.
 *   scale sub HOST PUB_ENDPOINT PULL_ENDPOINT SUBS MSGS
 *       one SUB process: SUBS SUB sockets, each must receive all MSGS in order.
 *
 * High-water marks in the fan-out are set above anything a run can queue
 * (FANOUT_HWM; not 0, which omq-libzmq refuses) so that nothing is dropped and
 * every run delivers the same messages. Each process prints one JSON line.
 * The same source builds against every library (bench/c, mk/bench.mk). */
#include "common.h"
#include <stdint.h>

/* VmRSS of this process in bytes, from /proc/self/status. */
static long rss_bytes(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1) break;
    fclose(f);
    return kb * 1024;
}

/* Every connection costs a descriptor, and libzmq also gives each socket a
 * mailbox descriptor: raise the soft limit to what is needed (root may also
 * raise the hard one). Too few descriptors would fail the run, not skew it. */
static void raise_nofile(long want) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
    if ((rlim_t)want > rl.rlim_max) {
        struct rlimit up = {(rlim_t)want, (rlim_t)want};
        if (setrlimit(RLIMIT_NOFILE, &up) == 0) return;
    }
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    getrlimit(RLIMIT_NOFILE, &rl);
    if ((rlim_t)want > rl.rlim_cur) {
        fprintf(stderr, "FAIL: need %ld descriptors, RLIMIT_NOFILE allows %ld\n", want, (long)rl.rlim_cur);
        exit(1);
    }
}

static void sleep_until(double t) {
    double d = t - now_s();
    if (d <= 0) return;
    struct timespec ts = {(time_t)d, (long)((d - (double)(time_t)d) * 1e9)};
    nanosleep(&ts, NULL);
}

/* "tcp://HOST:PORT" from ENDPOINT's port. */
static void endpoint_at(char *out, size_t n, const char *host, const char *ep) {
    const char *port = strrchr(ep, ':');
    if (!port) {
        fprintf(stderr, "FAIL: no port in %s\n", ep);
        exit(1);
    }
    snprintf(out, n, "tcp://%s:%s", host, port + 1);
}

static void *new_ctx(long sockets) {
    void *ctx = zmq_ctx_new();
    if (!ctx) die("zmq_ctx_new");
    /* libzmq's default limit is 1023 sockets per context. */
    CHECK(zmq_ctx_set(ctx, ZMQ_MAX_SOCKETS, (int)(sockets + 16)));
    return ctx;
}

static void set_int(void *s, int opt, int v) { CHECK(zmq_setsockopt(s, opt, &v, sizeof v)); }

static int cmpd(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* ---- ROUTER with N DEALERs ---------------------------------------------- */

#define START_DELAY_S 1.5
#define SETTLE_S 1.0

static int router_main(int argc, char **argv) {
    if (argc < 5) die("usage: scale router ENDPOINT N CLIENTS");
    long n = atol(argv[3]), clients = atol(argv[4]);
    raise_nofile(n + 256);
    void *ctx = new_ctx(4);
    void *router = zmq_socket(ctx, ZMQ_ROUTER);
    if (!router) die("zmq_socket");
    /* A backlog of libzmq's default 100 would measure the kernel's SYN
     * retransmission timer (1 s), not the library, once 100 connects queue. */
    set_int(router, ZMQ_BACKLOG, (int)(n < 65535 ? n : 65535));
    CHECK(zmq_bind(router, argv[2]));
    long rss0 = rss_bytes();
    char ep[256];
    size_t epn = sizeof ep;
    CHECK(zmq_getsockopt(router, ZMQ_LAST_ENDPOINT, ep, &epn));
    printf("READY %s %.6f\n", ep, now_s() + START_DELAY_S);
    fflush(stdout);

    long hellos = 0, quits = 0, rss1 = -1;
    double cpu0 = cpu_s(), cpu1 = 0;
    /* The routing ids held back until the pinging process is done. */
    zmq_msg_t *held = calloc((size_t)clients, sizeof(zmq_msg_t));
    int ended = 0;
    for (;;) {
        zmq_msg_t id, body;
        zmq_msg_init(&id);
        zmq_msg_init(&body);
        CHECK(zmq_msg_recv(&id, router, 0));
        if (!zmq_msg_more(&id)) die("routing id without a body");
        CHECK(zmq_msg_recv(&body, router, 0));
        char kind = zmq_msg_size(&body) ? *(char *)zmq_msg_data(&body) : 0;
        if (kind == 'H' || kind == 'P') {
            if (kind == 'H' && ++hellos == n) {
                rss1 = rss_bytes();
                cpu1 = cpu_s();
            }
            CHECK(zmq_msg_send(&id, router, ZMQ_SNDMORE));
            CHECK(zmq_msg_send(&body, router, 0));
        } else if (kind == 'A') {
            char all = hellos == n ? '1' : '0';
            CHECK(zmq_msg_send(&id, router, ZMQ_SNDMORE));
            CHECK(zmq_send(router, &all, 1, 0));
            zmq_msg_close(&body);
        } else if (kind == 'Q' || kind == 'E') {
            if (quits >= clients) die("more end messages than client processes");
            zmq_msg_init(&held[quits]);
            zmq_msg_move(&held[quits], &id);
            zmq_msg_close(&id);
            zmq_msg_close(&body);
            quits++;
            ended |= kind == 'E';
            if (ended && quits == clients) break;
        } else {
            die("unexpected message");
        }
    }
    /* CPU time after the last hello: the round trips, and whatever the
     * library does with N idle connections (a scan per message, a busy loop). */
    double cpu2 = cpu_s();
    for (long i = 0; i < clients; i++) {
        CHECK(zmq_msg_send(&held[i], router, ZMQ_SNDMORE));
        CHECK(zmq_send(router, "B", 1, 0));
    }
    printf("{\"role\":\"router\",\"connections\":%ld,\"rss_before\":%ld,\"rss_after\":%ld,"
           "\"router_kib_per_conn\":%.3f,\"router_cpu_s_connect\":%.4f,\"router_cpu_s_after\":%.6f,",
           n, rss0, rss1, (double)(rss1 - rss0) / 1024.0 / (double)n, cpu1 - cpu0, cpu2 - cpu1);
    print_lib_fields();
    printf("}\n");
    fflush(stdout);
    set_int(router, ZMQ_LINGER, 2000);
    zmq_close(router);
    zmq_ctx_term(ctx);
    free(held);
    return 0;
}

/* Wait for a one-part reply on DEALER s (30 s at most: a lost reply is a failure, not a hang). */
static char await_reply(void *s) {
    zmq_pollitem_t it = {s, 0, ZMQ_POLLIN, 0};
    int rc;
    while ((rc = zmq_poll(&it, 1, 30000)) < 0 && zmq_errno() == EINTR) {
    }
    if (rc <= 0) die("no reply within 30 s");
    char c = 0;
    if (zmq_recv(s, &c, 1, 0) < 0) die("zmq_recv");
    return c;
}

static int dealer_main(int argc, char **argv) {
    if (argc < 9) die("usage: scale dealer HOST ENDPOINT N_TOTAL N_MINE INDEX START_AT PINGS");
    const char *host = argv[2];
    long mine = atol(argv[5]), index = atol(argv[6]), pings = atol(argv[8]);
    double start_at = atof(argv[7]);
    char ep[300];
    endpoint_at(ep, sizeof ep, host, argv[3]);
    raise_nofile(2 * mine + 256);
    long rss0 = rss_bytes();
    void *ctx = new_ctx(mine);
    void **socks = calloc((size_t)mine, sizeof(void *));
    for (long i = 0; i < mine; i++) {
        socks[i] = zmq_socket(ctx, ZMQ_DEALER);
        if (!socks[i]) die("zmq_socket");
    }
    sleep_until(start_at);
    double t0 = now_s(), cpu0 = cpu_s();
    for (long i = 0; i < mine; i++) {
        CHECK(zmq_connect(socks[i], ep));
        CHECK(zmq_send(socks[i], "H", 1, 0));
    }
    /* Poll the DEALERs still waiting for their reply. */
    long *pending = malloc(sizeof(long) * (size_t)mine);
    zmq_pollitem_t *items = malloc(sizeof(zmq_pollitem_t) * (size_t)mine);
    long npend = mine;
    for (long i = 0; i < mine; i++) pending[i] = i;
    while (npend > 0) {
        for (long j = 0; j < npend; j++) items[j] = (zmq_pollitem_t){socks[pending[j]], 0, ZMQ_POLLIN, 0};
        int rc = zmq_poll(items, (int)npend, 60000);
        if (rc < 0 && zmq_errno() == EINTR) continue;
        if (rc <= 0) die("DEALERs without a reply after 60 s");
        long keep = 0;
        for (long j = 0; j < npend; j++) {
            char c;
            if ((items[j].revents & ZMQ_POLLIN) && zmq_recv(socks[pending[j]], &c, 1, ZMQ_DONTWAIT) == 1) {
                if (c != 'H') die("wrong reply");
            } else {
                pending[keep++] = pending[j];
            }
        }
        npend = keep;
    }
    double t1 = now_s(), cpu1 = cpu_s();
    long rss1 = rss_bytes();
    double p50 = 0, p99 = 0, mean = 0, ping_cpu = 0;
    long sample = mine < 100 ? mine : 100;
    if (index == 0) {
        /* Round trips only once every process's DEALERs are connected. */
        double deadline = now_s() + 60;
        for (;;) {
            CHECK(zmq_send(socks[0], "A", 1, 0));
            if (await_reply(socks[0]) == '1') break;
            if (now_s() > deadline) die("the ROUTER never had every hello");
            struct timespec ts = {0, 5000000};
            nanosleep(&ts, NULL);
        }
        /* Steady state, not the tail of the connection storm (other processes
         * may still be taking their last replies). */
        sleep_until(now_s() + SETTLE_S);
        double *rt = malloc(sizeof(double) * (size_t)pings);
        double pcpu0 = cpu_s();
        for (long k = -sample; k < pings; k++) { /* one warm-up round per sampled DEALER */
            void *s = socks[(k + sample) % sample];
            double a = now_s();
            CHECK(zmq_send(s, "P", 1, 0));
            if (await_reply(s) != 'P') die("wrong ping reply");
            if (k >= 0) rt[k] = now_s() - a;
        }
        ping_cpu = cpu_s() - pcpu0;
        for (long k = 0; k < pings; k++) mean += rt[k];
        mean /= (double)pings;
        qsort(rt, (size_t)pings, sizeof(double), cmpd);
        p50 = rt[pings / 2];
        p99 = rt[(long)((double)pings * 0.99)];
        free(rt);
        CHECK(zmq_send(socks[0], "E", 1, 0));
    } else {
        CHECK(zmq_send(socks[0], "Q", 1, 0));
    }
    /* The ROUTER answers once the pinging process is done: stay connected until then. */
    if (await_reply(socks[0]) != 'B') die("wrong end reply");
    printf("{\"role\":\"dealer\",\"index\":%ld,\"dealers\":%ld,\"t0\":%.6f,\"t1\":%.6f,\"connect_seconds\":%.6f,"
           "\"client_cpu_s_connect\":%.4f,\"rss_before\":%ld,\"rss_after\":%ld,\"client_kib_per_conn\":%.3f,",
           index, mine, t0, t1, t1 - t0, cpu1 - cpu0, rss0, rss1, (double)(rss1 - rss0) / 1024.0 / (double)mine);
    if (index == 0)
        printf("\"pings\":%ld,\"ping_sample\":%ld,\"mean_us\":%.3f,\"p50_us\":%.3f,\"p99_us\":%.3f,"
               "\"client_cpu_us_per_ping\":%.3f,",
               pings, sample, mean * 1e6, p50 * 1e6, p99 * 1e6, ping_cpu / (double)(pings + sample) * 1e6);
    print_lib_fields();
    printf("}\n");
    fflush(stdout);
    for (long i = 0; i < mine; i++) {
        set_int(socks[i], ZMQ_LINGER, 0);
        zmq_close(socks[i]);
    }
    zmq_ctx_term(ctx);
    free(socks);
    free(pending);
    free(items);
    return 0;
}

/* ---- PUB fanning out to SUBs --------------------------------------------- */

/* Warm-ups (one per 2 ms for at most 60 s) plus the counted messages. */
#define FANOUT_HWM(msgs) ((int)((msgs) + 40000))

struct datum {
    char kind; /* 'W' (warm-up, before the count) or 'D' */
    char pad[3];
    uint32_t seq;
    double sent; /* CLOCK_MONOTONIC, the same clock in every process */
};

static int pub_main(int argc, char **argv) {
    if (argc < 6) die("usage: scale pub ENDPOINT CLIENTS MSGS SIZE");
    long clients = atol(argv[3]), msgs = atol(argv[4]), size = atol(argv[5]);
    if (size < (long)sizeof(struct datum)) size = (long)sizeof(struct datum);
    raise_nofile(4096);
    void *ctx = new_ctx(4);
    void *pub = zmq_socket(ctx, ZMQ_PUB);
    set_int(pub, ZMQ_SNDHWM, FANOUT_HWM(msgs));
    CHECK(zmq_bind(pub, argv[2]));
    char pep[256], sep[300];
    size_t n = sizeof pep;
    CHECK(zmq_getsockopt(pub, ZMQ_LAST_ENDPOINT, pep, &n));
    /* The PULL binds on the PUB's address, another port. */
    snprintf(sep, sizeof sep, "%s", pep);
    *strrchr(sep, ':') = 0;
    strcat(sep, ":*");
    void *pull = zmq_socket(ctx, ZMQ_PULL);
    CHECK(zmq_bind(pull, sep));
    n = sizeof sep;
    CHECK(zmq_getsockopt(pull, ZMQ_LAST_ENDPOINT, sep, &n));
    printf("READY %s %s\n", pep, sep);
    fflush(stdout);

    char *buf = calloc(1, (size_t)size);
    struct datum d = {'W', {0}, 0, 0};
    long ready = 0;
    double deadline = now_s() + 60;
    while (ready < clients) {
        d.sent = now_s();
        memcpy(buf, &d, sizeof d);
        CHECK(zmq_send(pub, buf, (size_t)size, 0));
        zmq_pollitem_t it = {pull, 0, ZMQ_POLLIN, 0};
        if (zmq_poll(&it, 1, 2) > 0) {
            char c;
            CHECK(zmq_recv(pull, &c, 1, 0));
            if (c == 'R') ready++;
        }
        if (now_s() > deadline) die("SUBs not all subscribed after 60 s");
    }
    double t0 = now_s();
    d.kind = 'D';
    for (long i = 0; i < msgs; i++) {
        d.seq = (uint32_t)i;
        d.sent = now_s();
        memcpy(buf, &d, sizeof d);
        CHECK(zmq_send(pub, buf, (size_t)size, 0));
    }
    double t1 = now_s();
    for (long done = 0; done < clients;) {
        zmq_pollitem_t it = {pull, 0, ZMQ_POLLIN, 0};
        if (zmq_poll(&it, 1, 120000) <= 0) die("SUB processes not done after 120 s");
        char c;
        CHECK(zmq_recv(pull, &c, 1, 0));
        if (c == 'E') done++;
    }
    printf("{\"role\":\"pub\",\"msgs\":%ld,\"size\":%ld,\"publish_seconds\":%.6f,", msgs, size, t1 - t0);
    print_lib_fields();
    printf("}\n");
    fflush(stdout);
    set_int(pub, ZMQ_LINGER, 0);
    set_int(pull, ZMQ_LINGER, 0);
    zmq_close(pub);
    zmq_close(pull);
    zmq_ctx_term(ctx);
    free(buf);
    return 0;
}

static int sub_main(int argc, char **argv) {
    if (argc < 7) die("usage: scale sub HOST PUB_ENDPOINT PULL_ENDPOINT SUBS MSGS");
    const char *host = argv[2];
    long subs = atol(argv[5]), msgs = atol(argv[6]);
    char pep[300], sep[300];
    endpoint_at(pep, sizeof pep, host, argv[3]);
    endpoint_at(sep, sizeof sep, host, argv[4]);
    raise_nofile(2 * subs + 256);
    void *ctx = new_ctx(subs + 1);
    void *push = zmq_socket(ctx, ZMQ_PUSH);
    CHECK(zmq_connect(push, sep));
    void **socks = calloc((size_t)subs, sizeof(void *));
    long *got = calloc((size_t)subs, sizeof(long));
    char *heard = calloc((size_t)subs, 1);
    zmq_pollitem_t *items = malloc(sizeof(zmq_pollitem_t) * (size_t)subs);
    for (long i = 0; i < subs; i++) {
        socks[i] = zmq_socket(ctx, ZMQ_SUB);
        if (!socks[i]) die("zmq_socket");
        set_int(socks[i], ZMQ_RCVHWM, FANOUT_HWM(msgs));
        CHECK(zmq_setsockopt(socks[i], ZMQ_SUBSCRIBE, "", 0));
        CHECK(zmq_connect(socks[i], pep));
        items[i] = (zmq_pollitem_t){socks[i], 0, ZMQ_POLLIN, 0};
    }
    long nheard = 0, done = 0;
    double first_sent = -1, last_sent = -1, first_done = -1, last_done = -1;
    char *buf = malloc(65536);
    while (done < subs) {
        int rc = zmq_poll(items, (int)subs, 60000);
        if (rc < 0 && zmq_errno() == EINTR) continue;
        if (rc <= 0) die("SUBs idle for 60 s before the last message");
        for (long i = 0; i < subs; i++) {
            if (!(items[i].revents & ZMQ_POLLIN)) continue;
            int len;
            while ((len = zmq_recv(socks[i], buf, 65536, ZMQ_DONTWAIT)) >= 0) {
                struct datum d;
                if ((size_t)len < sizeof d) die("short message");
                memcpy(&d, buf, sizeof d);
                if (d.kind == 'W') {
                    if (!heard[i]) {
                        heard[i] = 1;
                        if (++nheard == subs) CHECK(zmq_send(push, "R", 1, 0));
                    }
                    continue;
                }
                if (d.kind != 'D' || (long)d.seq != got[i]) die("message lost or out of order");
                if (d.seq == 0 && first_sent < 0) first_sent = d.sent;
                if (++got[i] == msgs) {
                    double t = now_s();
                    if (first_done < 0) first_done = t;
                    last_done = t;
                    last_sent = d.sent;
                    done++;
                }
            }
            if (zmq_errno() != EAGAIN) die("zmq_recv");
        }
    }
    CHECK(zmq_send(push, "E", 1, 0));
    /* lag: how long after the publisher sent its last message the slowest SUB had it. */
    printf("{\"role\":\"sub\",\"subs\":%ld,\"msgs\":%ld,\"first_sent\":%.6f,\"last_sent\":%.6f,"
           "\"first_done\":%.6f,\"last_done\":%.6f,",
           subs, msgs, first_sent, last_sent, first_done, last_done);
    print_lib_fields();
    printf("}\n");
    fflush(stdout);
    for (long i = 0; i < subs; i++) {
        set_int(socks[i], ZMQ_LINGER, 0);
        zmq_close(socks[i]);
    }
    set_int(push, ZMQ_LINGER, 5000);
    zmq_close(push);
    zmq_ctx_term(ctx);
    free(socks);
    free(got);
    free(heard);
    free(items);
    free(buf);
    return 0;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "router")) return router_main(argc, argv);
    if (!strcmp(mode, "dealer")) return dealer_main(argc, argv);
    if (!strcmp(mode, "pub")) return pub_main(argc, argv);
    if (!strcmp(mode, "sub")) return sub_main(argc, argv);
    fprintf(stderr, "usage: scale router|dealer|pub|sub ...\n");
    return 2;
}
