/* Study 8: what the machine can do, without any messaging library.
 *   physical tcp CHUNK TOTAL    loopback TCP: a child writes TOTAL bytes in CHUNK writes
 *   physical unix CHUNK TOTAL   the same over a Unix stream socketpair
 *   physical memcpy CHUNK TOTAL memcpy of CHUNK-sized blocks, TOTAL bytes in all
 * Writer and reader are pinned to different cores when there are two. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void pin(int cpu) {
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2) return;
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    sched_setaffinity(0, sizeof s, &s);
}

static void writer(int fd, long chunk, long total) {
    char *buf = malloc((size_t)chunk);
    memset(buf, 'x', (size_t)chunk);
    long left = total;
    while (left > 0) {
        ssize_t n = write(fd, buf, (size_t)(left < chunk ? left : chunk));
        if (n <= 0) { perror("write"); _exit(1); }
        left -= n;
    }
    close(fd);
    _exit(0);
}

static double reader(int fd, long chunk, long total) {
    char *buf = malloc((size_t)chunk);
    long got = 0;
    double t0 = 0;
    while (got < total) {
        ssize_t n = read(fd, buf, (size_t)chunk);
        if (n <= 0) { perror("read"); exit(1); }
        if (got == 0) t0 = now_s();
        got += n;
    }
    return now_s() - t0;
}

int main(int argc, char **argv) {
    if (argc < 4) return 2;
    long chunk = atol(argv[2]), total = atol(argv[3]);
    double secs;
    if (!strcmp(argv[1], "memcpy")) {
        char *a = malloc((size_t)chunk), *b = malloc((size_t)chunk);
        memset(a, 1, (size_t)chunk);
        memset(b, 2, (size_t)chunk);
        long reps = total / chunk;
        if (reps < 1) reps = 1;
        double t0 = now_s();
        for (long i = 0; i < reps; i++) {
            memcpy(i & 1 ? a : b, i & 1 ? b : a, (size_t)chunk);
            __asm__ __volatile__("" ::: "memory");
        }
        secs = now_s() - t0;
        total = reps * chunk;
    } else {
        int fds[2];
        if (!strcmp(argv[1], "unix")) {
            if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) < 0) { perror("socketpair"); return 1; }
        } else {
            int l = socket(AF_INET, SOCK_STREAM, 0);
            struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
            socklen_t al = sizeof a;
            if (bind(l, (struct sockaddr *)&a, sizeof a) < 0 || listen(l, 1) < 0) { perror("listen"); return 1; }
            getsockname(l, (struct sockaddr *)&a, &al);
            fds[1] = socket(AF_INET, SOCK_STREAM, 0);
            if (connect(fds[1], (struct sockaddr *)&a, sizeof a) < 0) { perror("connect"); return 1; }
            fds[0] = accept(l, NULL, NULL);
            close(l);
        }
        pid_t pid = fork();
        if (pid == 0) {
            close(fds[0]);
            pin(1);
            writer(fds[1], chunk, total);
        }
        close(fds[1]);
        pin(0);
        secs = reader(fds[0], chunk, total);
        waitpid(pid, NULL, 0);
    }
    printf("{\"kind\":\"%s\",\"chunk\":%ld,\"bytes\":%ld,\"seconds\":%.9f,\"mb_per_s\":%.3f}\n", argv[1], chunk,
           total, secs, (double)total / secs / 1e6);
    return 0;
}
