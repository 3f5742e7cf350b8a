/*
 * oxmq_stats.h: oxmq's socket statistics, an extension libzmq does not have.
 *
 * Counters per socket and per connection, always on: messages and bytes in
 * and out, messages dropped by reason, reconnects, handshake failures by
 * cause, queue depths. Read them with oxmq_socket_stats() and
 * oxmq_socket_peer_stats(), or one at a time with zmq_getsockopt() and the
 * OXMQ_STATS_* options below (int64_t values; read-only).
 *
 * Programs that must also build against libzmq can test for OXMQ_STATS_H.
 */
#ifndef OXMQ_STATS_H
#define OXMQ_STATS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* zmq_getsockopt options, int64_t, read-only (libzmq's options are < 200). */
#define OXMQ_STATS_MSGS_IN 20000
#define OXMQ_STATS_BYTES_IN 20001
#define OXMQ_STATS_MSGS_OUT 20002
#define OXMQ_STATS_BYTES_OUT 20003
#define OXMQ_STATS_DROPS_HWM 20004
#define OXMQ_STATS_DROPS_NO_ROUTE 20005
#define OXMQ_STATS_DROPS_CONFLATE 20006
#define OXMQ_STATS_DROPS_OVERSIZE 20007
#define OXMQ_STATS_RECONNECTS 20008
#define OXMQ_STATS_HANDSHAKE_FAILED_PROTOCOL 20009
#define OXMQ_STATS_HANDSHAKE_FAILED_AUTH 20010
#define OXMQ_STATS_HANDSHAKE_FAILED_TIMEOUT 20011
#define OXMQ_STATS_HANDSHAKE_FAILED_OTHER 20012
#define OXMQ_STATS_QUEUED_IN 20013
#define OXMQ_STATS_QUEUED_OUT 20014
#define OXMQ_STATS_PEERS 20015

/* A socket's counters. msgs/bytes are what crossed between the socket and
 * its peers (a multipart message counts once, its bytes are its frames'
 * bodies): taken from a peer (_in, those a receiving CONFLATE replaced
 * included) and handed to one (_out: a PUB message to three subscribers
 * counts three times, a dropped one not at all); ROUTER's routing-id frames
 * are envelope, not traffic; connections that are gone still count.
 * queued_* sum the connections' queue depths (messages). */
typedef struct oxmq_socket_stats_t
{
    uint64_t msgs_in;
    uint64_t bytes_in;
    uint64_t msgs_out;
    uint64_t bytes_out;
    uint64_t queued_in;
    uint64_t queued_out;
    uint64_t drops_hwm;      /* a peer at its HWM, where the type drops */
    uint64_t drops_no_route; /* ROUTER: unknown routing id */
    uint64_t drops_conflate; /* CONFLATE: replaced before it was read */
    uint64_t drops_oversize; /* a peer's frame over MAXMSGSIZE */
    uint64_t reconnects;
    uint64_t handshake_failed_protocol;
    uint64_t handshake_failed_auth;
    uint64_t handshake_failed_timeout;
    uint64_t handshake_failed_other;
    uint64_t peers; /* connections now */
} oxmq_socket_stats_t;

/* One connection's counters. Strings are NUL-terminated, cut at 255 bytes. */
typedef struct oxmq_peer_stats_t
{
    uint64_t msgs_in;
    uint64_t bytes_in;
    uint64_t msgs_out;
    uint64_t bytes_out;
    uint64_t queued_in;
    uint64_t queued_out;
    uint64_t drops_hwm;
    uint64_t drops_no_route;
    uint64_t drops_conflate;
    uint64_t drops_oversize;
    size_t routing_id_size; /* 0: none */
    unsigned char routing_id[255];
    char endpoint[256];       /* the bind/connect endpoint it came from */
    char remote_address[256]; /* the peer's address, empty where unknown */
} oxmq_peer_stats_t;

/* Fill *stats; size is sizeof(oxmq_socket_stats_t) as the caller knows it
 * (a smaller, older struct gets the fields it has). 0, or -1 with errno
 * (ENOTSOCK, EFAULT, EINVAL for a size that is no whole number of fields). */
int oxmq_socket_stats (void *socket, oxmq_socket_stats_t *stats, size_t size);

/* Fill up to count entries of peers (NULL with count 0 just counts) and
 * return the number of connections the socket has; -1 with errno. */
int oxmq_socket_peer_stats (void *socket, oxmq_peer_stats_t *peers, size_t count);

/* The socket's statistics in Prometheus' text exposition format, labelled
 * socket="<name>", written NUL-terminated into buf, whose size is *len;
 * *len comes back as the size written (NUL included). A buffer too small
 * fails with EINVAL and *len set to the size needed. (Present when the
 * library is built with its default `prometheus` feature.) */
int oxmq_stats_prometheus (void *socket, const char *name, char *buf, size_t *len);

#ifdef __cplusplus
}
#endif

#endif
