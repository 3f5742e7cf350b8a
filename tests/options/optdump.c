/* Dump what a libzmq.so.5 answers for every socket and context option.
 *
 *   optdump LIBRARY
 *
 * The library is dlopen'ed (RTLD_LOCAL), so one binary reads oxmq's drop-in,
 * Debian's libzmq and pyzmq's bundled libzmq alike. For every socket type
 * 0..20 and every option number 0..130 it prints one line per probe:
 *
 *   getN TYPE OPT rc=R errno=E len=N val=HEX      zmq_getsockopt with an N-byte buffer
 *                                                 (N = 4, 8, 256: libzmq wants the exact
 *                                                 size for integers, enough for strings)
 *   set TYPE OPT KIND rc=R errno=E [then=HEX]      zmq_setsockopt on a fresh socket
 *
 * KIND is the value tried: "same" (what get returned), i32 -2/-1/0/1/2/1000,
 * i64 0, "str" (a 5-byte string), "empty" (zero bytes). After a successful
 * set, "then" is what get reads back. ctx lines do the same for zmq_ctx_get
 * and zmq_ctx_set. Values that differ by nature (ZMQ_FD's number) print as
 * "fd". tests/options/compare.py compares two dumps.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef void *(*ctx_new_t)(void);
typedef int (*ctx_term_t)(void *);
typedef void *(*socket_t)(void *, int);
typedef int (*close_t)(void *);
typedef int (*getsockopt_t)(void *, int, void *, size_t *);
typedef int (*setsockopt_t)(void *, int, const void *, size_t);
typedef int (*errno_t_)(void);
typedef int (*ctx_get_t)(void *, int);
typedef int (*ctx_set_t)(void *, int, int);

static ctx_new_t z_ctx_new;
static ctx_term_t z_ctx_term;
static socket_t z_socket;
static close_t z_close;
static getsockopt_t z_get;
static setsockopt_t z_set;
static errno_t_ z_errno;
static ctx_get_t z_ctx_get;
static ctx_set_t z_ctx_set;

#define ZMQ_LINGER 17
#define ZMQ_FD 14
#define MAX_TYPE 20
#define MAX_OPT 130

static void hex(const unsigned char *b, size_t n, char *out) {
    for (size_t i = 0; i < n && i < 120; i++) sprintf(out + 2 * i, "%02x", b[i]);
    if (n == 0) strcpy(out, "-");
}

/* Read option `o` into `buf` (size `cap`); prints into `line`. */
static int get(void *s, int o, size_t cap, char *line, size_t linecap, unsigned char *buf, size_t *len) {
    memset(buf, 0xAA, 256);
    *len = cap;
    int rc = z_get(s, o, buf, len);
    int e = rc == -1 ? z_errno() : 0;
    char h[300];
    if (rc == 0 && o == ZMQ_FD)
        strcpy(h, "fd");
    else if (rc == 0)
        hex(buf, *len, h);
    else
        strcpy(h, "-");
    snprintf(line, linecap, "rc=%d errno=%d len=%zu val=%s", rc, e, rc == 0 ? *len : 0, h);
    return rc;
}

static void *new_socket(void *ctx, int type) {
    void *s = z_socket(ctx, type);
    if (s) {
        int zero = 0;
        z_set(s, ZMQ_LINGER, &zero, sizeof zero);
    }
    return s;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s LIBRARY\n", argv[0]);
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
        return 2;
    }
#define SYM(var, name)                                                   \
    do {                                                                 \
        *(void **)&var = dlsym(lib, name);                               \
        if (!var) {                                                      \
            fprintf(stderr, "%s: no symbol %s\n", argv[1], name);        \
            return 2;                                                    \
        }                                                                \
    } while (0)
    SYM(z_ctx_new, "zmq_ctx_new");
    SYM(z_ctx_term, "zmq_ctx_term");
    SYM(z_socket, "zmq_socket");
    SYM(z_close, "zmq_close");
    SYM(z_get, "zmq_getsockopt");
    SYM(z_set, "zmq_setsockopt");
    SYM(z_errno, "zmq_errno");
    SYM(z_ctx_get, "zmq_ctx_get");
    SYM(z_ctx_set, "zmq_ctx_set");

    void *ctx = z_ctx_new();
    if (!ctx) return 2;
    char line[300];
    unsigned char buf[256];
    size_t len;

    /* Context options: 0..20, plus IPV6 (42) and BLOCKY (70). */
    static const int ctx_opts[] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,
                                   12, 13, 14, 15, 16, 17, 18, 19, 20, 42, 70};
    const int n_ctx_opts = sizeof ctx_opts / sizeof *ctx_opts;
    for (int i = 0; i < n_ctx_opts; i++) {
        int o = ctx_opts[i];
        int v = z_ctx_get(ctx, o);
        printf("ctxget %d rc=%d errno=%d\n", o, v, v == -1 ? z_errno() : 0);
    }
    static const int ctx_tries[] = {-2, -1, 0, 1, 2, 1000};
    for (int i = 0; i < n_ctx_opts; i++) {
        int o = ctx_opts[i];
        for (size_t k = 0; k < sizeof ctx_tries / sizeof *ctx_tries; k++) {
            void *c = z_ctx_new();
            int rc = z_ctx_set(c, o, ctx_tries[k]);
            int e = rc == -1 ? z_errno() : 0;
            int back = rc == 0 ? z_ctx_get(c, o) : 0;
            printf("ctxset %d i32:%d rc=%d errno=%d then=%d\n", o, ctx_tries[k], rc, e, back);
            z_ctx_term(c);
        }
    }

    for (int t = 0; t <= MAX_TYPE; t++) {
        void *s = z_socket(ctx, t);
        if (!s) {
            printf("socket %d rc=-1 errno=%d\n", t, z_errno());
            continue;
        }
        printf("socket %d rc=0\n", t);
        z_close(s);

        for (int o = 0; o <= MAX_OPT; o++) {
            unsigned char same[256];
            size_t same_len = 0, same_cap = 0;
            int have_same = 0;
            /* libzmq releases a closed socket's slot asynchronously: a
             * context per option keeps MAX_SOCKETS out of the picture. */
            void *octx = z_ctx_new();
            s = z_socket(octx, t);
            /* The default, read before anything was set (not even LINGER). */
            static const size_t caps[] = {4, 8, 256};
            for (int c = 0; c < 3; c++) {
                if (get(s, o, caps[c], line, sizeof line, buf, &len) == 0 && !have_same) {
                    memcpy(same, buf, len);
                    same_len = len;
                    same_cap = caps[c];
                    have_same = 1;
                }
                printf("get%zu %d %d %s\n", caps[c], t, o, line);
            }
            z_close(s);

            struct {
                const char *kind;
                const void *val;
                size_t len;
            } tries[12];
            int n = 0;
            static const int32_t ints[] = {-2, -1, 0, 1, 2, 1000};
            static const char *int_names[] = {"i32:-2", "i32:-1", "i32:0", "i32:1", "i32:2", "i32:1000"};
            static const int64_t i64_zero = 0, i64_big = 5000000000LL;
            if (have_same && o != ZMQ_FD) tries[n++] = (typeof(tries[0])){"same", same, same_len};
            for (int k = 0; k < 6; k++) tries[n++] = (typeof(tries[0])){int_names[k], &ints[k], 4};
            tries[n++] = (typeof(tries[0])){"i64:0", &i64_zero, 8};
            tries[n++] = (typeof(tries[0])){"i64:5e9", &i64_big, 8};
            tries[n++] = (typeof(tries[0])){"str", "abcde", 5};
            tries[n++] = (typeof(tries[0])){"empty", "", 0};
            for (int k = 0; k < n; k++) {
                s = new_socket(octx, t);
                int rc = z_set(s, o, tries[k].val, tries[k].len);
                int e = rc == -1 ? z_errno() : 0;
                char then[400] = "";
                if (rc == 0) {
                    char g[300];
                    /* Integers are read back with the size their default
                     * needed; strings (which filled less than the buffer)
                     * with a large one. */
                    size_t cap = have_same && same_len == same_cap ? same_cap : 256;
                    get(s, o, cap, g, sizeof g, buf, &len);
                    snprintf(then, sizeof then, " then: %s", g);
                }
                printf("set %d %d %s rc=%d errno=%d%s\n", t, o, tries[k].kind, rc, e, then);
                z_close(s);
            }
            z_ctx_term(octx);
        }
    }
    z_ctx_term(ctx);
    return 0;
}
