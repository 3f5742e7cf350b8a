/* Message and utility corners read from a libzmq.so.5 (issue 13):
 * ZMQ_SHARED of init_data messages and copies, zmq_recviov's argument
 * checks, errno after a successful zmq_z85_decode, zmq_has answers.
 *
 *   msgprobe LIBRARY      one "name value" line per probe
 *
 * tests/options/compare_lines.py compares the output of two libraries.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

typedef struct { unsigned char _[64] __attribute__((aligned(8))); } msg_t;
static void noop_free(void *data, void *hint) { (void)data; (void)hint; }

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) { fprintf(stderr, "%s\n", dlerror()); return 2; }
#define SYM(t, n) __typeof__(t) z_##n = (__typeof__(t))dlsym(lib, "zmq_" #n); if (!z_##n) return 2
    SYM(int (*)(msg_t *, void *, size_t, void (*)(void *, void *), void *), msg_init_data);
    SYM(int (*)(msg_t *, size_t), msg_init_size);
    SYM(int (*)(msg_t *), msg_init);
    SYM(int (*)(msg_t *, msg_t *), msg_copy);
    SYM(int (*)(msg_t *, int), msg_get);
    SYM(int (*)(msg_t *), msg_close);
    SYM(int (*)(void *, struct iovec *, size_t *, int), recviov);
    SYM(unsigned char *(*)(unsigned char *, const char *), z85_decode);
    SYM(int (*)(const char *), has);
    SYM(int (*)(void), errno);
    SYM(void *(*)(void), ctx_new);
    SYM(int (*)(void *), ctx_term);
    SYM(void *(*)(void *, int), socket);
    SYM(int (*)(void *), close);

    static char data[100];
    msg_t a, b, c, d;
    z_msg_init_data(&a, data, sizeof data, noop_free, NULL);
    printf("shared init_data(ffn) %d\n", z_msg_get(&a, 3));
    z_msg_init_data(&b, data, sizeof data, NULL, NULL);
    printf("shared init_data(NULL ffn) %d\n", z_msg_get(&b, 3));
    z_msg_init(&c);
    z_msg_copy(&c, &a);
    printf("shared init_data copy: original %d copy %d\n", z_msg_get(&a, 3), z_msg_get(&c, 3));
    z_msg_init_size(&d, 10);
    msg_t e;
    z_msg_init(&e);
    z_msg_copy(&e, &d);
    printf("shared small copy: original %d copy %d\n", z_msg_get(&d, 3), z_msg_get(&e, 3));
    msg_t f, g;
    z_msg_init_size(&f, 1000);
    z_msg_init(&g);
    z_msg_copy(&g, &f);
    printf("shared large copy: original %d copy %d\n", z_msg_get(&f, 3), z_msg_get(&g, 3));
    z_msg_close(&a); z_msg_close(&b); z_msg_close(&c); z_msg_close(&d); z_msg_close(&e); z_msg_close(&f); z_msg_close(&g);

    void *ctx = z_ctx_new();
    void *s = z_socket(ctx, 7 /* PULL */);
    struct iovec iov[2];
    size_t n = 0;
    int rc = z_recviov(s, iov, &n, 1);
    printf("recviov count 0: rc %d errno %d\n", rc, rc == -1 ? z_errno() : 0);
    n = 2;
    rc = z_recviov(s, NULL, &n, 1);
    printf("recviov iov NULL: rc %d errno %d\n", rc, rc == -1 ? z_errno() : 0);
    z_close(s);
    z_ctx_term(ctx);

    unsigned char out[8];
    errno = 1234;
    unsigned char *p = z_z85_decode(out, "HelloWorld");
    printf("z85_decode ok: %s, errno after %d\n", p ? "ptr" : "NULL", errno);

    static const char *caps[] = {"ipc", "pgm", "tipc", "norm", "curve", "gssapi", "draft", "vmci", "ws", "wss", "udp", "nonsense"};
    for (size_t i = 0; i < sizeof caps / sizeof *caps; i++) printf("has %s %d\n", caps[i], z_has(caps[i]));
    return 0;
}
