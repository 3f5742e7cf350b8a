/* The conformance suite's adapter for any implementation of libzmq's C ABI.
 *
 * The suite (conformance/run.py) drives it with one command per line on stdin
 * and reads one reply line per command on stdout, so the clauses never depend
 * on the implementation's API, only on what it puts on the wire.  Frames travel
 * as hex ("-" is an empty frame).
 *
 *   SOCKET <TYPE>            -> OK | ERR <errno>
 *   OPTI <option> <int>      -> OK | ERR <errno>
 *   OPTB <option> <hex|->    -> OK | ERR <errno>
 *   BIND <endpoint>          -> OK <last endpoint> | ERR <errno>
 *   CONNECT <endpoint>       -> OK | ERR <errno>
 *   SEND <hex|-> ...         -> OK | ERR <errno>   (one multipart message)
 *   RECV <timeout ms>        -> MSG <hex|-> ... | TIMEOUT | ERR <errno>
 *   ZAP <status code>        -> OK | ERR <errno>   (a ZAP handler, RFC 27, in the
 *                               same context, answering every request so)
 *   ZAPLOG                   -> MSG <hex|-> ... (the first request's frames) | NONE
 *   ALIVE                    -> ALIVE <libzmq version>
 *   QUIT                     -> (exits)
 *
 * Linked against the libzmq 4.3 ABI; which library serves it is chosen by
 * LD_LIBRARY_PATH (or the rpath it was built with). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#define LINE_MAX_LEN (1 << 20)

static const struct {
    const char *name;
    int type;
} TYPES[] = {
    {"PAIR", ZMQ_PAIR},   {"PUB", ZMQ_PUB},       {"SUB", ZMQ_SUB},   {"REQ", ZMQ_REQ},
    {"REP", ZMQ_REP},     {"DEALER", ZMQ_DEALER}, {"ROUTER", ZMQ_ROUTER}, {"PULL", ZMQ_PULL},
    {"PUSH", ZMQ_PUSH},   {"XPUB", ZMQ_XPUB},     {"XSUB", ZMQ_XSUB},
};

static void *ctx;
static void *sock;

/* The ZAP handler: a REP socket on its own thread, as RFC 27 places it; it
 * answers with the status code the suite chose and keeps the first request
 * so the suite can check its frames. */
static struct {
    pthread_t thread;
    int running;
    volatile int stop;
    char status[4];
    pthread_mutex_t lock;
    char first[4096]; /* the first request, formatted as a MSG reply */
} zap = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void reply_err(void) { printf("ERR %d\n", zmq_errno()); }

static int hexval(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Decodes hex (or "-" for empty) in place; returns the length or -1. */
static long unhex(char *s) {
    if (strcmp(s, "-") == 0) return 0;
    size_t n = strlen(s);
    if (n % 2) return -1;
    for (size_t i = 0; i < n / 2; i++) {
        int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
        if (hi < 0 || lo < 0) return -1;
        s[i] = (char)(hi * 16 + lo);
    }
    return (long)(n / 2);
}

static void print_hex(const unsigned char *p, size_t n) {
    if (n == 0) {
        fputs("-", stdout);
        return;
    }
    for (size_t i = 0; i < n; i++) printf("%02x", p[i]);
}

static void cmd_socket(char *arg) {
    for (size_t i = 0; i < sizeof TYPES / sizeof TYPES[0]; i++) {
        if (strcmp(arg, TYPES[i].name) == 0) {
            sock = zmq_socket(ctx, TYPES[i].type);
            if (!sock) {
                reply_err();
                return;
            }
            int zero = 0;
            zmq_setsockopt(sock, ZMQ_LINGER, &zero, sizeof zero);
            puts("OK");
            return;
        }
    }
    puts("ERR unknown-type");
}

static void *zap_handler(void *handler) {
    char frames[16][256];
    size_t sizes[16];
    while (!zap.stop) {
        zmq_pollitem_t item = {handler, 0, ZMQ_POLLIN, 0};
        if (zmq_poll(&item, 1, 100) <= 0) continue;
        int n = 0, more = 1;
        while (more) {
            zmq_msg_t msg;
            zmq_msg_init(&msg);
            if (zmq_msg_recv(&msg, handler, 0) < 0) {
                zmq_msg_close(&msg);
                break;
            }
            if (n < 16) {
                size_t len = zmq_msg_size(&msg) < sizeof frames[0] ? zmq_msg_size(&msg) : sizeof frames[0];
                memcpy(frames[n], zmq_msg_data(&msg), len);
                sizes[n++] = len;
            }
            more = zmq_msg_more(&msg);
            zmq_msg_close(&msg);
        }
        pthread_mutex_lock(&zap.lock);
        if (!zap.first[0]) {
            size_t at = (size_t)snprintf(zap.first, sizeof zap.first, "MSG");
            for (int i = 0; i < n && at + 2 * sizes[i] + 3 < sizeof zap.first; i++) {
                at += (size_t)snprintf(zap.first + at, sizeof zap.first - at, " ");
                if (!sizes[i]) at += (size_t)snprintf(zap.first + at, sizeof zap.first - at, "-");
                for (size_t k = 0; k < sizes[i]; k++)
                    at += (size_t)snprintf(zap.first + at, sizeof zap.first - at, "%02x", (unsigned char)frames[i][k]);
            }
        }
        pthread_mutex_unlock(&zap.lock);
        /* version, request id (echoed), status code, status text, user id, metadata */
        const char *reply[6] = {"1.0", frames[1], zap.status, "conformance", "user", ""};
        size_t lens[6] = {3, n > 1 ? sizes[1] : 0, strlen(zap.status), 11, 4, 0};
        for (int i = 0; i < 6; i++) zmq_send(handler, reply[i], lens[i], i < 5 ? ZMQ_SNDMORE : 0);
    }
    zmq_close(handler);
    return NULL;
}

static void cmd_zap(const char *status) {
    if (zap.running || strlen(status) != 3) {
        puts("ERR bad-args");
        return;
    }
    void *handler = zmq_socket(ctx, ZMQ_REP);
    int zero = 0;
    if (!handler || zmq_setsockopt(handler, ZMQ_LINGER, &zero, sizeof zero) < 0 ||
        zmq_bind(handler, "inproc://zeromq.zap.01") < 0) {
        reply_err();
        if (handler) zmq_close(handler);
        return;
    }
    memcpy(zap.status, status, 4);
    if (pthread_create(&zap.thread, NULL, zap_handler, handler) != 0) {
        puts("ERR thread");
        zmq_close(handler);
        return;
    }
    zap.running = 1;
    puts("OK");
}

static void cmd_send(char *args) {
    char *frames[256];
    int n = 0;
    for (char *t = strtok(args, " "); t && n < 256; t = strtok(NULL, " ")) frames[n++] = t;
    for (int i = 0; i < n; i++) {
        long len = unhex(frames[i]);
        if (len < 0) {
            puts("ERR bad-hex");
            return;
        }
        if (zmq_send(sock, frames[i], (size_t)len, i + 1 < n ? ZMQ_SNDMORE : 0) < 0) {
            reply_err();
            return;
        }
    }
    puts("OK");
}

static void cmd_recv(long timeout_ms) {
    zmq_pollitem_t item = {sock, 0, ZMQ_POLLIN, 0};
    int rc = zmq_poll(&item, 1, timeout_ms);
    if (rc < 0) {
        reply_err();
        return;
    }
    if (rc == 0) {
        puts("TIMEOUT");
        return;
    }
    fputs("MSG", stdout);
    int more = 1;
    while (more) {
        zmq_msg_t msg;
        zmq_msg_init(&msg);
        if (zmq_msg_recv(&msg, sock, 0) < 0) {
            zmq_msg_close(&msg);
            printf(" ERR %d\n", zmq_errno());
            return;
        }
        fputs(" ", stdout);
        print_hex(zmq_msg_data(&msg), zmq_msg_size(&msg));
        more = zmq_msg_more(&msg);
        zmq_msg_close(&msg);
    }
    puts("");
}

int main(void) {
    static char line[LINE_MAX_LEN];
    ctx = zmq_ctx_new();
    setvbuf(stdout, NULL, _IOLBF, 0);
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n")] = 0;
        char *arg = strchr(line, ' ');
        if (arg) *arg++ = 0;
        else arg = line + strlen(line);
        if (strcmp(line, "QUIT") == 0) break;
        if (strcmp(line, "ALIVE") == 0) {
            int ma, mi, pa;
            zmq_version(&ma, &mi, &pa);
            printf("ALIVE %d.%d.%d\n", ma, mi, pa);
        } else if (strcmp(line, "ZAP") == 0) {
            cmd_zap(arg);
        } else if (strcmp(line, "ZAPLOG") == 0) {
            pthread_mutex_lock(&zap.lock);
            puts(zap.first[0] ? zap.first : "NONE");
            pthread_mutex_unlock(&zap.lock);
        } else if (strcmp(line, "SOCKET") == 0) {
            cmd_socket(arg);
        } else if (!sock) {
            puts("ERR no-socket");
        } else if (strcmp(line, "OPTI") == 0) {
            int opt = 0, val = 0;
            if (sscanf(arg, "%d %d", &opt, &val) != 2) puts("ERR bad-args");
            else if (zmq_setsockopt(sock, opt, &val, sizeof val) < 0) reply_err();
            else puts("OK");
        } else if (strcmp(line, "OPTB") == 0) {
            char *val = strchr(arg, ' ');
            long len = val ? unhex(val + 1) : -1;
            if (len < 0) puts("ERR bad-args");
            else if (zmq_setsockopt(sock, atoi(arg), val + 1, (size_t)len) < 0) reply_err();
            else puts("OK");
        } else if (strcmp(line, "BIND") == 0) {
            char ep[256];
            size_t len = sizeof ep;
            if (zmq_bind(sock, arg) < 0) reply_err();
            else if (zmq_getsockopt(sock, ZMQ_LAST_ENDPOINT, ep, &len) < 0) reply_err();
            else printf("OK %s\n", ep);
        } else if (strcmp(line, "CONNECT") == 0) {
            if (zmq_connect(sock, arg) < 0) reply_err();
            else puts("OK");
        } else if (strcmp(line, "SEND") == 0) {
            cmd_send(arg);
        } else if (strcmp(line, "RECV") == 0) {
            cmd_recv(atol(arg));
        } else {
            puts("ERR unknown-command");
        }
    }
    if (sock) zmq_close(sock);
    if (zap.running) {
        zap.stop = 1;
        pthread_join(zap.thread, NULL);
    }
    zmq_ctx_term(ctx);
    return 0;
}
