/* One side of a CURVE run through the C ABI. Built twice (oxmq and Debian's
 * libzmq); run.sh pairs an oxmq process with a libzmq one, both ways.
 * usage: curve_peer server|client|wrongkey ENDPOINT
 *   server:   REP with CURVE_SERVER, a ZAP handler (REP at
 *             inproc://zeromq.zap.01) that admits only the expected client
 *             key and names it "capi-user"; checks User-Id on every request.
 *   client:   REQ with the server's public key; ROUNDS round trips of
 *             several sizes, each reply checked.
 *   wrongkey: a client that uses another server key: it must get nothing.
 * The keys are fixed test keys (those libzmq's own tests use); each public
 * key is derived with zmq_curve_public, so that is exercised too. */
#define _GNU_SOURCE
#include "testutil.h"

#include <pthread.h>
#include <unistd.h>

#define ROUNDS 300

static const char *SERVER_SECRET = "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6";
static const char *CLIENT_SECRET = "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs";

static size_t size_of_round(int i)
{
    static const size_t sizes[] = {0, 1, 33, 255, 1024, 65536, 300000};
    return sizes[i % 7];
}

static void fill(char *buf, size_t size, int i)
{
    for (size_t k = 0; k < size; k++)
        buf[k] = (char)('A' + (k * 3 + (size_t)i) % 26);
}

static void *zap_handler(void *ctx)
{
    char client_public[41];
    uint8_t client_key[32];
    OK(zmq_curve_public(client_public, CLIENT_SECRET));
    NOTNULL(zmq_z85_decode(client_key, client_public));
    void *rep = zmq_socket(ctx, ZMQ_REP);
    NOTNULL(rep);
    int linger = 0;
    OK(zmq_setsockopt(rep, ZMQ_LINGER, &linger, sizeof linger));
    OK(zmq_bind(rep, "inproc://zeromq.zap.01"));
    for (;;) {
        char frames[8][64];
        int sizes[8];
        int n = 0, more = 1;
        while (more && n < 8) {
            zmq_msg_t m;
            OK(zmq_msg_init(&m));
            if (zmq_msg_recv(&m, rep, 0) == -1) {
                /* context terminated: done */
                zmq_msg_close(&m);
                zmq_close(rep);
                return NULL;
            }
            sizes[n] = (int)zmq_msg_size(&m);
            memcpy(frames[n], zmq_msg_data(&m), sizes[n] < 64 ? (size_t)sizes[n] : 64);
            more = zmq_msg_more(&m);
            OK(zmq_msg_close(&m));
            n++;
        }
        CHECK(n == 7);
        CHECK(sizes[0] == 3 && memcmp(frames[0], "1.0", 3) == 0);
        CHECK(sizes[5] == 5 && memcmp(frames[5], "CURVE", 5) == 0);
        int ok = sizes[6] == 32 && memcmp(frames[6], client_key, 32) == 0;
        const char *status = ok ? "200" : "400";
        const char *user = ok ? "capi-user" : "";
        zmq_send(rep, "1.0", 3, ZMQ_SNDMORE);
        zmq_send(rep, frames[1], (size_t)sizes[1], ZMQ_SNDMORE);
        zmq_send(rep, status, 3, ZMQ_SNDMORE);
        zmq_send(rep, "", 0, ZMQ_SNDMORE);
        zmq_send(rep, user, strlen(user), ZMQ_SNDMORE);
        zmq_send(rep, "", 0, 0);
    }
}

static void set_client_keys(void *s, const char *server_secret)
{
    char server_public[41], public[41], secret[41];
    OK(zmq_curve_public(server_public, server_secret));
    OK(zmq_curve_public(public, CLIENT_SECRET));
    memcpy(secret, CLIENT_SECRET, 41);
    OK(zmq_setsockopt(s, ZMQ_CURVE_SERVERKEY, server_public, 40));
    OK(zmq_setsockopt(s, ZMQ_CURVE_PUBLICKEY, public, 41)); /* with the NUL, as libzmq allows */
    OK(zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, secret, 40));
    /* Read back in both forms. */
    char z85[41];
    uint8_t raw[32], decoded[32];
    size_t len = sizeof z85;
    OK(zmq_getsockopt(s, ZMQ_CURVE_SERVERKEY, z85, &len));
    CHECK(len == 41 && strcmp(z85, server_public) == 0);
    len = sizeof raw;
    OK(zmq_getsockopt(s, ZMQ_CURVE_SERVERKEY, raw, &len));
    NOTNULL(zmq_z85_decode(decoded, server_public));
    CHECK(len == 32 && memcmp(raw, decoded, 32) == 0);
    int mech = -1;
    len = sizeof mech;
    OK(zmq_getsockopt(s, ZMQ_MECHANISM, &mech, &len));
    CHECK(mech == ZMQ_CURVE);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: curve_peer server|client|wrongkey ENDPOINT\n");
        return 2;
    }
    const char *role = argv[1], *endpoint = argv[2];
    CHECK(zmq_has("curve") == 1);
    void *ctx = zmq_ctx_new();
    NOTNULL(ctx);
    int timeout = 10000, linger = 0, one = 1;
    if (strcmp(role, "server") == 0) {
        pthread_t zap;
        CHECK(pthread_create(&zap, NULL, zap_handler, ctx) == 0);
        usleep(100000); /* let the handler bind before any handshake */
        void *rep = zmq_socket(ctx, ZMQ_REP);
        NOTNULL(rep);
        OK(zmq_setsockopt(rep, ZMQ_RCVTIMEO, &timeout, sizeof timeout));
        OK(zmq_setsockopt(rep, ZMQ_LINGER, &linger, sizeof linger));
        OK(zmq_setsockopt(rep, ZMQ_CURVE_SERVER, &one, sizeof one));
        OK(zmq_setsockopt(rep, ZMQ_CURVE_SECRETKEY, SERVER_SECRET, 40));
        OK(zmq_bind(rep, endpoint));
        for (int i = 0; i < ROUNDS; i++) {
            zmq_msg_t m;
            OK(zmq_msg_init(&m));
            CHECK(zmq_msg_recv(&m, rep, 0) == (int)size_of_round(i));
            const char *user = zmq_msg_gets(&m, "User-Id");
            CHECK(user != NULL && strcmp(user, "capi-user") == 0);
            /* Echo it back. */
            CHECK(zmq_msg_send(&m, rep, 0) == (int)size_of_round(i));
        }
        /* LINGER 0 could drop the last reply before it is written (seen
         * with both libraries as server): give it time to leave. */
        int drain = 2000;
        OK(zmq_setsockopt(rep, ZMQ_LINGER, &drain, sizeof drain));
        zmq_close(rep);
        zmq_ctx_term(ctx); /* the ZAP handler's recv fails with ETERM: it exits */
        pthread_join(zap, NULL);
        printf("curve_peer server: %d round trips, User-Id checked on each\n", ROUNDS);
        return 0;
    }
    void *req = zmq_socket(ctx, ZMQ_REQ);
    NOTNULL(req);
    OK(zmq_setsockopt(req, ZMQ_LINGER, &linger, sizeof linger));
    if (strcmp(role, "wrongkey") == 0) {
        int short_wait = 1000;
        OK(zmq_setsockopt(req, ZMQ_RCVTIMEO, &short_wait, sizeof short_wait));
        set_client_keys(req, CLIENT_SECRET); /* not the server's key */
        OK(zmq_connect(req, endpoint));
        (void)zmq_send(req, "x", 1, ZMQ_DONTWAIT);
        char buf[8];
        CHECK(zmq_recv(req, buf, sizeof buf, 0) == -1 && zmq_errno() == EAGAIN);
        zmq_close(req);
        zmq_ctx_term(ctx);
        printf("curve_peer wrongkey: refused as expected\n");
        return 0;
    }
    OK(zmq_setsockopt(req, ZMQ_RCVTIMEO, &timeout, sizeof timeout));
    set_client_keys(req, SERVER_SECRET);
    OK(zmq_connect(req, endpoint));
    char *buf = malloc(300000), *got = malloc(300000);
    for (int i = 0; i < ROUNDS; i++) {
        size_t size = size_of_round(i);
        fill(buf, size, i);
        CHECK(zmq_send(req, buf, size, 0) == (int)size);
        CHECK(zmq_recv(req, got, 300000, 0) == (int)size);
        CHECK(memcmp(buf, got, size) == 0);
    }
    free(buf);
    free(got);
    zmq_close(req);
    zmq_ctx_term(ctx);
    printf("curve_peer client: %d round trips\n", ROUNDS);
    return 0;
}
