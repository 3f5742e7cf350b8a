/* Study 8: what the machine can do, without any messaging library.
 *   physical tcp CHUNK TOTAL    loopback TCP: a child writes TOTAL bytes in CHUNK writes
 *   physical unix CHUNK TOTAL   the same over a Unix stream socketpair
 *   physical memcpy CHUNK TOTAL memcpy of CHUNK-sized blocks, TOTAL bytes in all
 *   physical pingtcp SIZE COUNT [block|poll]   study 3's floor: COUNT timed round
 *   physical pingunix SIZE COUNT [block|poll]    trips of SIZE bytes (after WARM
 *                                untimed) echoed by a child, plain read/write
 * The ping-pong waits for the peer's bytes in one of two ways. block: a
 * blocking read(), so each side sleeps and is woken once per message. poll:
 * non-blocking reads retried in a loop for up to SPIN_NS before falling back to
 * poll(2), as libraries that busy-poll do (omq.rs's I/O thread calls
 * epoll_wait with a zero timeout repeatedly before it blocks). On a virtual
 * machine whose idle vCPU halts at once, waking a sleeping peer on the other
 * core costs an exit to the hypervisor and an IPI, tens of µs; a side still
 * spinning when the bytes land pays neither. The floor is the best of both.
 * Writer and reader are pinned to different cores when there are two (the
 * ping-pong's client on core 1 and echo on core 0, as study 3's REQ and REP),
 * unless PHYS_NOPIN is set (the floor is the best of both, as a library may
 * run unpinned). Unix sockets get the 1 MiB send and receive buffers oxmq's
 * ipc asks for (crates/oxmq/src/transport/ipc/mod.rs, BUFFER), so the raw figure
 * is measured like for like; tcp keeps the kernel's, as libzmq and oxmq do. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
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

#define IPC_BUFFER (1 << 20)

static void pin(int cpu) {
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || getenv("PHYS_NOPIN")) return;
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

/* How long a polling side retries a non-blocking read or write before it
 * sleeps in poll(2): the kernel's own default for a KVM guest's idle polling
 * (haltpoll's guest_halt_poll_ns, 200 µs), and longer than a peer's turn at
 * every study-3 size on an unloaded machine, so that pinned on two cores
 * neither side sleeps; sharing one core, a side gives the core up after it. */
#define SPIN_NS 200000L

static int polling;

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

/* Reads or writes exactly LEN bytes (a round trip's message may arrive in
 * pieces). Polling, the socket is non-blocking: EAGAIN is retried until
 * SPIN_NS have passed without progress, then the side sleeps in poll(2). */
static void full_io(int fd, char *buf, long len, int do_write) {
    long done = 0, since = 0;
    while (done < len) {
        ssize_t n = do_write ? write(fd, buf + done, (size_t)(len - done)) : read(fd, buf + done, (size_t)(len - done));
        if (n > 0) {
            done += n;
            since = 0;
            continue;
        }
        if (n < 0 && errno == EAGAIN && polling) {
            long t = now_ns();
            if (!since) since = t;
            if (t - since < SPIN_NS) {
                cpu_relax();
                continue;
            }
            struct pollfd p = {.fd = fd, .events = do_write ? POLLOUT : POLLIN};
            if (poll(&p, 1, -1) < 0 && errno != EINTR) { perror("poll"); _exit(1); }
            since = 0;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        perror(do_write ? "write" : "read");
        _exit(1);
    }
}

static int cmpd(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define WARM 100

/* The ping-pong floor for study 3: what a REQ/REP round trip would cost if the
 * library added nothing to the two socket writes and reads. */
static void ping_pong(int fds[2], long size, long count) {
    if (polling)
        for (int i = 0; i < 2; i++) fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK);
    char *buf = malloc((size_t)size);
    memset(buf, 'x', (size_t)size);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        pin(0);
        for (long i = 0; i < count + WARM; i++) {
            full_io(fds[1], buf, size, 0);
            full_io(fds[1], buf, size, 1);
        }
        _exit(0);
    }
    close(fds[1]);
    pin(1);
    double *rt = malloc(sizeof(double) * (size_t)count), sum = 0;
    for (long i = 0; i < count + WARM; i++) {
        double t0 = now_s();
        full_io(fds[0], buf, size, 1);
        full_io(fds[0], buf, size, 0);
        if (i >= WARM) rt[i - WARM] = now_s() - t0;
    }
    waitpid(pid, NULL, 0);
    for (long i = 0; i < count; i++) sum += rt[i];
    qsort(rt, (size_t)count, sizeof(double), cmpd);
    printf("{\"kind\":\"ping\",\"wait\":\"%s\",\"count\":%ld,\"seconds\":%.9f,\"mean_us\":%.3f,\"p50_us\":%.3f,\"p99_us\":%.3f}\n",
           polling ? "poll" : "block", count, sum, sum / (double)count * 1e6, rt[count / 2] * 1e6, rt[(long)((double)count * 0.99)] * 1e6);
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
        int ping = !strncmp(argv[1], "ping", 4);
        if (!strcmp(argv[1], "unix") || !strcmp(argv[1], "pingunix")) {
            if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) < 0) { perror("socketpair"); return 1; }
            int bufsz = IPC_BUFFER;
            for (int i = 0; i < 2; i++) {
                setsockopt(fds[i], SOL_SOCKET, SO_SNDBUF, &bufsz, sizeof bufsz);
                setsockopt(fds[i], SOL_SOCKET, SO_RCVBUF, &bufsz, sizeof bufsz);
            }
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
            if (ping) {  /* as libzmq and oxmq set it on every tcp connection */
                int one = 1;
                setsockopt(fds[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                setsockopt(fds[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            }
        }
        if (ping) {
            if (argc > 4 && strcmp(argv[4], "poll") && strcmp(argv[4], "block")) return 2;
            polling = argc > 4 && !strcmp(argv[4], "poll");
            ping_pong(fds, chunk, total);
            return 0;
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
