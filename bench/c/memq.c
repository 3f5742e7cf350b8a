/* Memory study (bench/run.py study 11): resident memory while COUNT messages
 * of SIZE bytes sit queued in one pipe. An inproc PUSH sends them to a PULL
 * that never receives, both high-water marks 0 (unlimited), so every message
 * stays queued. Prints the process's resident set (VmRSS) before the sends,
 * after them, and the difference per queued message.
 *
 *   memq COUNT SIZE
 */
#include "common.h"

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

int main(int argc, char **argv) {
    long count = argl(argc, argv, 1, 1000000), size = argl(argc, argv, 2, 100);
    int zero = 0;
    void *ctx = zmq_ctx_new();
    void *pull = zmq_socket(ctx, ZMQ_PULL);
    CHECK(zmq_setsockopt(pull, ZMQ_RCVHWM, &zero, sizeof zero));
    CHECK(zmq_bind(pull, "inproc://memq"));
    void *push = zmq_socket(ctx, ZMQ_PUSH);
    CHECK(zmq_setsockopt(push, ZMQ_SNDHWM, &zero, sizeof zero));
    CHECK(zmq_connect(push, "inproc://memq"));
    char *buf = malloc((size_t)size + 1);
    memset(buf, 'x', (size_t)size + 1);
    long before = rss_bytes();
    double t0 = now_s();
    for (long i = 0; i < count; i++) CHECK(zmq_send(push, buf, (size_t)size, ZMQ_DONTWAIT));
    double secs = now_s() - t0;
    long after = rss_bytes();
    /* Every message must really be queued: receive them all back. */
    for (long i = 0; i < count; i++)
        if (zmq_recv(pull, buf, (size_t)size, 0) != size) die("queued message lost or resized");
    printf("{\"count\":%ld,\"size\":%ld,\"rss_before\":%ld,\"rss_after\":%ld,\"rss_mib\":%.3f,"
           "\"bytes_per_msg\":%.1f,\"seconds\":%.6f,",
           count, size, before, after, (double)after / 1048576.0, (double)(after - before) / (double)count, secs);
    print_lib_fields();
    printf("}\n");
    int linger = 0;
    zmq_setsockopt(push, ZMQ_LINGER, &linger, sizeof linger);
    zmq_close(push);
    zmq_close(pull);
    zmq_ctx_term(ctx);
    free(buf);
    return 0;
}
