/* A peer for the multicast interop tests (mk/interop/multicast.mk), built against
 * Debian's libzmq headers and run on Debian's libzmq5 or, through
 * LD_LIBRARY_PATH, on oxmq's libzmq.so.5.
 *
 *   mcpeer pub|xpub ENDPOINT MILLIS
 *       send [topic][seq][2000-byte body] every 20 ms for MILLIS, topic "A"
 *       for even seq and "B" for odd (the publisher connects)
 *   mcpeer sub|xsub ENDPOINT N MILLIS
 *       subscribe to "A" (an XSUB by sending \x01A), take N messages within
 *       MILLIS, checking every frame and that seq only grows; a SUB must see
 *       only "A", an XSUB (which does not filter) both (the subscriber binds:
 *       libzmq takes bind and connect alike for multicast)
 *   mcpeer version               print zmq_version (which library runs)
 *   mcpeer errors IFACE          print what bind/connect/zmq_has answer for the
 *                                cases the step compares between the libraries
 *   mcpeer errors-extra IFACE    the cases only oxmq answers (see run_errors_extra)
 *   mcpeer no-libraries IFACE    zmq_has and bind/connect answers where libpgm and
 *                                libnorm cannot be loaded (see run_no_libraries)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#define BODY 2000

static long long now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void *socket_with_rate (void *ctx, int type)
{
    void *s = zmq_socket (ctx, type);
    int rate = 10000; /* kbit/s: room for the 2 KB messages */
    if (!s || zmq_setsockopt (s, ZMQ_RATE, &rate, sizeof rate) != 0) {
        fprintf (stderr, "socket/ZMQ_RATE: %s\n", zmq_strerror (zmq_errno ()));
        exit (2);
    }
    return s;
}

static int run_pub (int type, const char *ep, long millis)
{
    void *ctx = zmq_ctx_new ();
    void *pub = socket_with_rate (ctx, type);
    if (zmq_connect (pub, ep) != 0) {
        fprintf (stderr, "pub connect %s: %s\n", ep, zmq_strerror (zmq_errno ()));
        return 2;
    }
    char body[BODY];
    long long end = now_ms () + millis;
    for (unsigned seq = 0; now_ms () < end; seq++) {
        for (int i = 0; i < BODY; i++)
            body[i] = (char) (seq + i);
        char seqs[16];
        snprintf (seqs, sizeof seqs, "%u", seq);
        zmq_send (pub, seq % 2 ? "B" : "A", 1, ZMQ_SNDMORE);
        zmq_send (pub, seqs, strlen (seqs), ZMQ_SNDMORE);
        zmq_send (pub, body, BODY, 0);
        usleep (20000);
    }
    int linger = 0;
    zmq_setsockopt (pub, ZMQ_LINGER, &linger, sizeof linger);
    zmq_close (pub);
    zmq_ctx_term (ctx);
    return 0;
}

static int run_sub (int type, const char *ep, int want, long millis)
{
    void *ctx = zmq_ctx_new ();
    void *sub = socket_with_rate (ctx, type);
    int tmo = 200;
    zmq_setsockopt (sub, ZMQ_RCVTIMEO, &tmo, sizeof tmo);
    if (zmq_bind (sub, ep) != 0) {
        fprintf (stderr, "sub bind %s: %s\n", ep, zmq_strerror (zmq_errno ()));
        return 2;
    }
    if (type == ZMQ_SUB)
        zmq_setsockopt (sub, ZMQ_SUBSCRIBE, "A", 1);
    else
        zmq_send (sub, "\x01" "A", 2, 0);
    long long end = now_ms () + millis;
    int got = 0, got_b = 0;
    long last = -1;
    while (got < want && now_ms () < end) {
        char topic[8], seqs[16], body[BODY + 1];
        int n = zmq_recv (sub, topic, sizeof topic, 0);
        if (n < 0)
            continue;
        int more;
        size_t ml = sizeof more;
        zmq_getsockopt (sub, ZMQ_RCVMORE, &more, &ml);
        if (n != 1 || (topic[0] != 'A' && (type == ZMQ_SUB || topic[0] != 'B')) || !more) {
            fprintf (stderr, "bad topic frame (len %d, more %d)\n", n, more);
            return 1;
        }
        n = zmq_recv (sub, seqs, sizeof seqs - 1, 0);
        if (n <= 0) {
            fprintf (stderr, "missing seq frame\n");
            return 1;
        }
        seqs[n] = 0;
        unsigned seq = (unsigned) strtoul (seqs, NULL, 10);
        n = zmq_recv (sub, body, sizeof body, 0);
        zmq_getsockopt (sub, ZMQ_RCVMORE, &more, &ml);
        if (n != BODY || more) {
            fprintf (stderr, "body frame: len %d more %d\n", n, more);
            return 1;
        }
        for (int i = 0; i < BODY; i++)
            if (body[i] != (char) (seq + i)) {
                fprintf (stderr, "body of %u corrupt at %d\n", seq, i);
                return 1;
            }
        if ((long) seq <= last || (int) (seq % 2) != (topic[0] == 'B')) {
            fprintf (stderr, "seq %u after %ld\n", seq, last);
            return 1;
        }
        last = seq;
        got++;
        got_b += topic[0] == 'B';
    }
    printf ("received %d of %d", got, want);
    if (type == ZMQ_XSUB)
        printf (" (%d on topic B: an XSUB does not filter)", got_b);
    printf ("\n");
    zmq_close (sub);
    zmq_ctx_term (ctx);
    return got == want && (type == ZMQ_SUB || got_b > 0) ? 0 : 1;
}

static void try_ep (void *ctx, int type, const char *tname, const char *ep)
{
    void *s = zmq_socket (ctx, type);
    int rc = zmq_connect (s, ep);
    int e = rc ? zmq_errno () : 0;
    int rc2 = zmq_bind (s, ep);
    int e2 = rc2 ? zmq_errno () : 0;
    printf ("%-5s %-42s connect %2d %-16s bind %2d %s\n", tname, ep, rc, rc ? zmq_strerror (e) : "",
            rc2, rc2 ? zmq_strerror (e2) : "");
    int linger = 0;
    zmq_setsockopt (s, ZMQ_LINGER, &linger, sizeof linger);
    zmq_close (s);
}

static int run_errors (const char *iface)
{
    const char *caps[] = {"ipc", "pgm", "norm", "curve", "draft", "vmci", NULL};
    for (int i = 0; caps[i]; i++)
        printf ("zmq_has(%s) = %d\n", caps[i], zmq_has (caps[i]));
    void *ctx = zmq_ctx_new ();
    char ep[128];
    /* Socket types multicast does not allow. */
    int bad_types[] = {ZMQ_REQ, ZMQ_REP, ZMQ_DEALER, ZMQ_ROUTER, ZMQ_PUSH, ZMQ_PULL, ZMQ_PAIR, ZMQ_STREAM};
    const char *bad_names[] = {"REQ", "REP", "DEALER", "ROUTER", "PUSH", "PULL", "PAIR", "STREAM"};
    const char *protos[] = {"pgm", "epgm", "norm"};
    for (int p = 0; p < 3; p++)
        for (int t = 0; t < 8; t++) {
            snprintf (ep, sizeof ep, "%s://%s;239.192.9.9:5599", protos[p], iface);
            try_ep (ctx, bad_types[t], bad_names[t], ep);
        }
    /* Bad addresses (where libzmq answers rather than asserting in its I/O thread). */
    const char *bad_eps[] = {"epgm://%s;239.192.9.9",
                             "epgm://nosuchif0;239.192.9.9:5599",
                             "epgm://%s;not-a-group:5599",
                             "epgm://",
                             "pgm://%s;239.192.9.9",
                             "pgm://nosuchif0;239.192.9.9:5599",
                             "vmci://1:5599",
                             "vsock://1:5599",
                             NULL};
    for (int i = 0; bad_eps[i]; i++) {
        snprintf (ep, sizeof ep, bad_eps[i], iface);
        try_ep (ctx, ZMQ_SUB, "SUB", ep);
        try_ep (ctx, ZMQ_PUB, "PUB", ep);
    }
    /* An endpoint that works is filed under its URI: LAST_ENDPOINT and disconnect. */
    void *s = zmq_socket (ctx, ZMQ_SUB);
    snprintf (ep, sizeof ep, "epgm://%s;239.192.9.9:5599", iface);
    int rc = zmq_connect (s, ep);
    char last[256] = "";
    size_t ll = sizeof last;
    zmq_getsockopt (s, ZMQ_LAST_ENDPOINT, last, &ll);
    int d = zmq_disconnect (s, ep);
    int de = d ? zmq_errno () : 0;
    int d2 = zmq_disconnect (s, ep);
    int de2 = d2 ? zmq_errno () : 0;
    printf ("SUB connect %s: %d, LAST_ENDPOINT %s, disconnect %d %s, again %d %s\n", ep, rc, last, d,
            d ? zmq_strerror (de) : "", d2, d2 ? zmq_strerror (de2) : "");
    /* ...and zmq_unbind finds it too, whether it was bound or connected. */
    rc = zmq_bind (s, ep);
    d = zmq_unbind (s, ep);
    de = d ? zmq_errno () : 0;
    printf ("SUB bind %s: %d, unbind %d %s\n", ep, rc, d, d ? zmq_strerror (de) : "");
    rc = zmq_connect (s, ep);
    d = zmq_unbind (s, ep);
    de = d ? zmq_errno () : 0;
    printf ("SUB connect %s: %d, unbind %d %s\n", ep, rc, d, d ? zmq_strerror (de) : "");
    int linger = 0;
    zmq_setsockopt (s, ZMQ_LINGER, &linger, sizeof linger);
    zmq_close (s);
    zmq_ctx_term (ctx);
    return 0;
}

/* Cases not compared with libzmq, which answers them with a stale errno
 * (a port that reads as 0: it returns -1 without setting errno) or by
 * asserting in its I/O thread (a norm address without a port): oxmq says
 * EINVAL; and TIPC, which Debian's libzmq has but this kernel lacks: oxmq
 * answers as libzmq built without it (zmq_has 0, EPROTONOSUPPORT). The step
 * checks these answers on oxmq. */
static int run_errors_extra (const char *iface)
{
    printf ("zmq_has(tipc) = %d\n", zmq_has ("tipc"));
    void *ctx = zmq_ctx_new ();
    const char *eps[] = {"tipc://{5560,0,0}", "epgm://%s;239.192.9.9:0", "epgm://%s;239.192.9.9:x", "pgm://%s;239.192.9.9:0",
                         "norm://239.192.9.9", "norm://%s;239.192.9.9", NULL};
    char ep[128];
    for (int i = 0; eps[i]; i++) {
        snprintf (ep, sizeof ep, eps[i], iface);
        try_ep (ctx, ZMQ_SUB, "SUB", ep);
        try_ep (ctx, ZMQ_PUB, "PUB", ep);
    }
    zmq_ctx_term (ctx);
    return 0;
}

/* Run where libpgm-5.3.so.0 and libnorm.so.1 cannot be loaded: oxmq loads
 * them on first use, so it starts without them and answers as a libzmq built
 * without pgm and norm (zmq_has 0, EPROTONOSUPPORT before the socket type is
 * looked at); tcp still works. */
static int run_no_libraries (const char *iface)
{
    printf ("zmq_has(pgm) = %d\n", zmq_has ("pgm"));
    printf ("zmq_has(norm) = %d\n", zmq_has ("norm"));
    void *ctx = zmq_ctx_new ();
    const char *protos[] = {"pgm", "epgm", "norm"};
    int types[] = {ZMQ_SUB, ZMQ_PUB, ZMQ_REQ};
    const char *names[] = {"SUB", "PUB", "REQ"};
    char ep[128];
    for (int p = 0; p < 3; p++)
        for (int t = 0; t < 3; t++) {
            snprintf (ep, sizeof ep, "%s://%s;239.192.9.9:5599", protos[p], iface);
            try_ep (ctx, types[t], names[t], ep);
        }
    void *s = zmq_socket (ctx, ZMQ_PUB);
    int rc = zmq_bind (s, "tcp://127.0.0.1:*");
    printf ("PUB bind tcp://127.0.0.1:* %d\n", rc);
    zmq_close (s);
    zmq_ctx_term (ctx);
    return 0;
}

int main (int argc, char **argv)
{
    setvbuf (stdout, NULL, _IOLBF, 0);
    if (argc == 4 && (!strcmp (argv[1], "pub") || !strcmp (argv[1], "xpub")))
        return run_pub (argv[1][0] == 'x' ? ZMQ_XPUB : ZMQ_PUB, argv[2], atol (argv[3]));
    if (argc == 5 && (!strcmp (argv[1], "sub") || !strcmp (argv[1], "xsub")))
        return run_sub (argv[1][0] == 'x' ? ZMQ_XSUB : ZMQ_SUB, argv[2], atoi (argv[3]), atol (argv[4]));
    if (argc == 2 && !strcmp (argv[1], "version")) {
        int major, minor, patch;
        zmq_version (&major, &minor, &patch);
        printf ("%d.%d.%d\n", major, minor, patch);
        return 0;
    }
    if (argc == 3 && !strcmp (argv[1], "errors"))
        return run_errors (argv[2]);
    if (argc == 3 && !strcmp (argv[1], "errors-extra"))
        return run_errors_extra (argv[2]);
    if (argc == 3 && !strcmp (argv[1], "no-libraries"))
        return run_no_libraries (argv[2]);
    fprintf (stderr, "usage: mcpeer pub|xpub EP MILLIS | sub|xsub EP N MILLIS | errors[-extra] IFACE | no-libraries IFACE\n");
    return 2;
}
