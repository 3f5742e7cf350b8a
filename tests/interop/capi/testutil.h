/* Tiny assertion helpers shared by the C ABI tests (tests/interop/capi). */
#ifndef OXMQ_CAPI_TESTUTIL_H
#define OXMQ_CAPI_TESTUTIL_H

#include <zmq.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(cond)                                                                                     \
    do {                                                                                                \
        if (!(cond)) {                                                                                  \
            fprintf(stderr, "%s:%d: CHECK failed: %s (errno %d: %s)\n", __FILE__, __LINE__, #cond,     \
                    zmq_errno(), zmq_strerror(zmq_errno()));                                            \
            exit(1);                                                                                    \
        }                                                                                               \
    } while (0)

/* A call that must succeed (rc != -1 / non-NULL). */
#define OK(expr) CHECK((expr) != -1)
#define NOTNULL(expr) CHECK((expr) != NULL)

/* A call that must fail with -1 and the given errno. */
#define FAILS(expr, err)                                                                                \
    do {                                                                                                \
        errno = 0;                                                                                      \
        int rc_ = (expr);                                                                               \
        if (rc_ != -1 || zmq_errno() != (err)) {                                                        \
            fprintf(stderr, "%s:%d: expected %s to fail with %s (%d), got rc %d errno %d (%s)\n",       \
                    __FILE__, __LINE__, #expr, #err, (err), rc_, zmq_errno(), zmq_strerror(zmq_errno())); \
            exit(1);                                                                                    \
        }                                                                                               \
    } while (0)

/* A call returning a pointer that must fail with NULL and the given errno. */
#define FAILS_NULL(expr, err)                                                                           \
    do {                                                                                                \
        errno = 0;                                                                                      \
        void *p_ = (void *)(expr);                                                                      \
        if (p_ != NULL || zmq_errno() != (err)) {                                                       \
            fprintf(stderr, "%s:%d: expected %s to fail with %s (%d), got %p errno %d\n", __FILE__,     \
                    __LINE__, #expr, #err, (err), p_, zmq_errno());                                     \
            exit(1);                                                                                    \
        }                                                                                               \
    } while (0)

static inline double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Send a NUL-terminated string as one frame. */
static inline int send_str(void *s, const char *text, int flags)
{
    return zmq_send(s, text, strlen(text), flags);
}

/* Receive one frame and compare it with a string. */
static inline void expect_str(void *s, const char *text)
{
    char buf[256];
    int n = zmq_recv(s, buf, sizeof buf - 1, 0);
    CHECK(n >= 0);
    CHECK((size_t)n == strlen(text));
    buf[n < (int)sizeof buf - 1 ? n : (int)sizeof buf - 1] = 0;
    if (strcmp(buf, text) != 0) {
        fprintf(stderr, "expected \"%s\", got \"%s\"\n", text, buf);
        exit(1);
    }
}

#endif
