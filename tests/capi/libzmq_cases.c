/* Cases of libzmq's own test programs that oxmq failed (issue 23), one
 * function per program. Built twice, as every program here: against oxmq,
 * and with -DREAL_LIBZMQ against Debian's libzmq, so each expectation is
 * checked on libzmq too. */

#define _GNU_SOURCE
#include "testutil.h"

#include <netdb.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef ZMQ_SOCKS_USERNAME /* draft names in 4.3's zmq.h */
#define ZMQ_SOCKS_USERNAME 99
#define ZMQ_SOCKS_PASSWORD 100
#endif

static char tmpdir[] = "/tmp/oxmq-libzmq-cases.XXXXXX";

static inline void *socket_of(void *ctx, int type)
{
    void *s = zmq_socket(ctx, type);
    NOTNULL(s);
    int linger = 0, timeout = 5000;
    OK(zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger));
    OK(zmq_setsockopt(s, ZMQ_RCVTIMEO, &timeout, sizeof timeout));
    OK(zmq_setsockopt(s, ZMQ_SNDTIMEO, &timeout, sizeof timeout));
    return s;
}

static inline void bound_endpoint(void *s, const char *ep, char *out, size_t size)
{
    OK(zmq_bind(s, ep));
    OK(zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, out, &size));
}

/* test_base85: zmq_errno reports errno as it is (the test resets errno to 0
 * after a failing call, then expects 0 after a succeeding one); an empty
 * string is not Z85. */
static void test_z85(void)
{
    char text[11];
    FAILS_NULL(zmq_z85_encode(text, (const uint8_t *)"abc", 3), EINVAL);
    errno = 0;
    uint8_t out[8] = {0};
    NOTNULL(zmq_z85_decode(out, "HelloWorld"));
    CHECK(zmq_errno() == 0);
    const uint8_t want[8] = {0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B};
    CHECK(memcmp(out, want, 8) == 0);
    FAILS_NULL(zmq_z85_decode(out, ""), EINVAL);
    FAILS_NULL(zmq_z85_decode(out, "0"), EINVAL);
    FAILS_NULL(zmq_z85_decode(out, "%nSc1"), EINVAL); /* above 0xffffffff */
    NOTNULL(zmq_z85_decode(out, "%nSc0"));
    CHECK(memcmp(out, "\xff\xff\xff\xff", 4) == 0);
    FAILS_NULL(zmq_z85_decode(out, "####\004"), EINVAL);
    /* encoding nothing is the empty string */
    CHECK(zmq_z85_encode(text, NULL, 0) == text && text[0] == 0);
}

int main(void)
{
    CHECK(mkdtemp(tmpdir) != NULL);
    test_z85();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    CHECK(system(cmd) == 0);
    printf("libzmq_cases: z85\n");
    return 0;
}
