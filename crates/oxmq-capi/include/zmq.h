/*
 * zmq.h for oxmq: the libzmq 4.3 C API, implemented in Rust by liboxmq
 * (installed as the drop-in libzmq.so.5).
 *
 * Written for oxmq; the constant values, struct layouts and function
 * signatures are those of libzmq 4.3 so that programs and bindings built
 * against libzmq compile and link unchanged.
 *
 * Conventions (as libzmq): a function that fails returns -1 (or NULL) and
 * sets errno, readable with zmq_errno(). A context may be shared between
 * threads; a socket must be used by one thread at a time.
 *
 * SPDX-License-Identifier: MPL-2.0
 */

#ifndef OXMQ_ZMQ_H_INCLUDED
#define OXMQ_ZMQ_H_INCLUDED

/* ---------------------------------------------------------------- version */

#define ZMQ_VERSION_MAJOR 4
#define ZMQ_VERSION_MINOR 3
#define ZMQ_VERSION_PATCH 5

#define ZMQ_MAKE_VERSION(major, minor, patch) ((major) * 10000 + (minor) * 100 + (patch))
#define ZMQ_VERSION ZMQ_MAKE_VERSION(ZMQ_VERSION_MAJOR, ZMQ_VERSION_MINOR, ZMQ_VERSION_PATCH)

/* Marks this header as coming from oxmq (libzmq does not define it). */
#define OXMQ_ZMQ_H 1

#ifdef __cplusplus
extern "C" {
#endif

#include <errno.h>
#include <stddef.h>
#include <stdio.h>

/* <stdint.h> is always available on the platforms oxmq supports. */
#include <stdint.h>
#define ZMQ_DEFINED_STDINT 1

#if defined(_WIN32)
#if defined(ZMQ_STATIC)
#define ZMQ_EXPORT
#elif defined(DLL_EXPORT)
#define ZMQ_EXPORT __declspec(dllexport)
#else
#define ZMQ_EXPORT __declspec(dllimport)
#endif
#elif defined(__GNUC__) || defined(__clang__)
#define ZMQ_EXPORT __attribute__((visibility("default")))
#else
#define ZMQ_EXPORT
#endif

/* ----------------------------------------------------------------- errors */

/* Base for the error numbers that libzmq defines itself. */
#define ZMQ_HAUSNUMERO 156384712

/* POSIX errors the platform may lack: defined only when <errno.h> did not. */
#ifndef ENOTSUP
#define ENOTSUP (ZMQ_HAUSNUMERO + 1)
#endif
#ifndef EPROTONOSUPPORT
#define EPROTONOSUPPORT (ZMQ_HAUSNUMERO + 2)
#endif
#ifndef ENOBUFS
#define ENOBUFS (ZMQ_HAUSNUMERO + 3)
#endif
#ifndef ENETDOWN
#define ENETDOWN (ZMQ_HAUSNUMERO + 4)
#endif
#ifndef EADDRINUSE
#define EADDRINUSE (ZMQ_HAUSNUMERO + 5)
#endif
#ifndef EADDRNOTAVAIL
#define EADDRNOTAVAIL (ZMQ_HAUSNUMERO + 6)
#endif
#ifndef ECONNREFUSED
#define ECONNREFUSED (ZMQ_HAUSNUMERO + 7)
#endif
#ifndef EINPROGRESS
#define EINPROGRESS (ZMQ_HAUSNUMERO + 8)
#endif
#ifndef ENOTSOCK
#define ENOTSOCK (ZMQ_HAUSNUMERO + 9)
#endif
#ifndef EMSGSIZE
#define EMSGSIZE (ZMQ_HAUSNUMERO + 10)
#endif
#ifndef EAFNOSUPPORT
#define EAFNOSUPPORT (ZMQ_HAUSNUMERO + 11)
#endif
#ifndef ENETUNREACH
#define ENETUNREACH (ZMQ_HAUSNUMERO + 12)
#endif
#ifndef ECONNABORTED
#define ECONNABORTED (ZMQ_HAUSNUMERO + 13)
#endif
#ifndef ECONNRESET
#define ECONNRESET (ZMQ_HAUSNUMERO + 14)
#endif
#ifndef ENOTCONN
#define ENOTCONN (ZMQ_HAUSNUMERO + 15)
#endif
#ifndef ETIMEDOUT
#define ETIMEDOUT (ZMQ_HAUSNUMERO + 16)
#endif
#ifndef EHOSTUNREACH
#define EHOSTUNREACH (ZMQ_HAUSNUMERO + 17)
#endif
#ifndef ENETRESET
#define ENETRESET (ZMQ_HAUSNUMERO + 18)
#endif

/* Errors that only ZeroMQ has. */
#define EFSM (ZMQ_HAUSNUMERO + 51)           /* call not valid in the socket's state */
#define ENOCOMPATPROTO (ZMQ_HAUSNUMERO + 52) /* transport not usable with this socket type */
#define ETERM (ZMQ_HAUSNUMERO + 53)          /* context was terminated */
#define EMTHREAD (ZMQ_HAUSNUMERO + 54)       /* no I/O thread available */

ZMQ_EXPORT int zmq_errno(void);
ZMQ_EXPORT const char *zmq_strerror(int errnum_);
ZMQ_EXPORT void zmq_version(int *major_, int *minor_, int *patch_);

/* ---------------------------------------------------------------- context */

/* Options for zmq_ctx_set / zmq_ctx_get. */
#define ZMQ_IO_THREADS 1
#define ZMQ_MAX_SOCKETS 2
#define ZMQ_SOCKET_LIMIT 3
#define ZMQ_THREAD_PRIORITY 3
#define ZMQ_THREAD_SCHED_POLICY 4
#define ZMQ_MAX_MSGSZ 5
#define ZMQ_MSG_T_SIZE 6
#define ZMQ_THREAD_AFFINITY_CPU_ADD 7
#define ZMQ_THREAD_AFFINITY_CPU_REMOVE 8
#define ZMQ_THREAD_NAME_PREFIX 9

/* Their defaults. */
#define ZMQ_IO_THREADS_DFLT 1
#define ZMQ_MAX_SOCKETS_DFLT 1023
#define ZMQ_THREAD_PRIORITY_DFLT -1
#define ZMQ_THREAD_SCHED_POLICY_DFLT -1

ZMQ_EXPORT void *zmq_ctx_new(void);
ZMQ_EXPORT int zmq_ctx_term(void *context_);
ZMQ_EXPORT int zmq_ctx_shutdown(void *context_);
ZMQ_EXPORT int zmq_ctx_set(void *context_, int option_, int optval_);
ZMQ_EXPORT int zmq_ctx_get(void *context_, int option_);

/* Older names for the same operations. */
ZMQ_EXPORT void *zmq_init(int io_threads_);
ZMQ_EXPORT int zmq_term(void *context_);
ZMQ_EXPORT int zmq_ctx_destroy(void *context_);

/* --------------------------------------------------------------- messages */

/* An opaque message: 64 bytes, aligned for any pointer or 64-bit field. */
typedef struct zmq_msg_t {
#if defined(_MSC_VER)
    __declspec(align(8)) unsigned char _[64];
#elif defined(__GNUC__) || defined(__clang__)
    unsigned char _[64] __attribute__((aligned(8)));
#else
    unsigned char _[64];
#endif
} zmq_msg_t;

/* Called once the library no longer needs a buffer given to zmq_msg_init_data.
   It may run on any thread, including an internal I/O thread. */
typedef void(zmq_free_fn)(void *data_, void *hint_);

ZMQ_EXPORT int zmq_msg_init(zmq_msg_t *msg_);
ZMQ_EXPORT int zmq_msg_init_size(zmq_msg_t *msg_, size_t size_);
ZMQ_EXPORT int zmq_msg_init_data(zmq_msg_t *msg_, void *data_, size_t size_, zmq_free_fn *ffn_, void *hint_);
ZMQ_EXPORT int zmq_msg_send(zmq_msg_t *msg_, void *s_, int flags_);
ZMQ_EXPORT int zmq_msg_recv(zmq_msg_t *msg_, void *s_, int flags_);
ZMQ_EXPORT int zmq_msg_close(zmq_msg_t *msg_);
ZMQ_EXPORT int zmq_msg_move(zmq_msg_t *dest_, zmq_msg_t *src_);
ZMQ_EXPORT int zmq_msg_copy(zmq_msg_t *dest_, zmq_msg_t *src_);
ZMQ_EXPORT void *zmq_msg_data(zmq_msg_t *msg_);
ZMQ_EXPORT size_t zmq_msg_size(const zmq_msg_t *msg_);
ZMQ_EXPORT int zmq_msg_more(const zmq_msg_t *msg_);
ZMQ_EXPORT int zmq_msg_get(const zmq_msg_t *msg_, int property_);
ZMQ_EXPORT int zmq_msg_set(zmq_msg_t *msg_, int property_, int optval_);
ZMQ_EXPORT const char *zmq_msg_gets(const zmq_msg_t *msg_, const char *property_);

/* Message properties (zmq_msg_get). */
#define ZMQ_MORE 1
#define ZMQ_SHARED 3

/* ---------------------------------------------------------------- sockets */

/* Socket types. */
#define ZMQ_PAIR 0
#define ZMQ_PUB 1
#define ZMQ_SUB 2
#define ZMQ_REQ 3
#define ZMQ_REP 4
#define ZMQ_DEALER 5
#define ZMQ_ROUTER 6
#define ZMQ_PULL 7
#define ZMQ_PUSH 8
#define ZMQ_XPUB 9
#define ZMQ_XSUB 10
#define ZMQ_STREAM 11

/* Older names of DEALER and ROUTER. */
#define ZMQ_XREQ ZMQ_DEALER
#define ZMQ_XREP ZMQ_ROUTER

/* Socket options (zmq_setsockopt / zmq_getsockopt). */
#define ZMQ_AFFINITY 4
#define ZMQ_ROUTING_ID 5
#define ZMQ_SUBSCRIBE 6
#define ZMQ_UNSUBSCRIBE 7
#define ZMQ_RATE 8
#define ZMQ_RECOVERY_IVL 9
#define ZMQ_SNDBUF 11
#define ZMQ_RCVBUF 12
#define ZMQ_RCVMORE 13
#define ZMQ_FD 14
#define ZMQ_EVENTS 15
#define ZMQ_TYPE 16
#define ZMQ_LINGER 17
#define ZMQ_RECONNECT_IVL 18
#define ZMQ_BACKLOG 19
#define ZMQ_RECONNECT_IVL_MAX 21
#define ZMQ_MAXMSGSIZE 22
#define ZMQ_SNDHWM 23
#define ZMQ_RCVHWM 24
#define ZMQ_MULTICAST_HOPS 25
#define ZMQ_RCVTIMEO 27
#define ZMQ_SNDTIMEO 28
#define ZMQ_LAST_ENDPOINT 32
#define ZMQ_ROUTER_MANDATORY 33
#define ZMQ_TCP_KEEPALIVE 34
#define ZMQ_TCP_KEEPALIVE_CNT 35
#define ZMQ_TCP_KEEPALIVE_IDLE 36
#define ZMQ_TCP_KEEPALIVE_INTVL 37
#define ZMQ_IMMEDIATE 39
#define ZMQ_XPUB_VERBOSE 40
#define ZMQ_ROUTER_RAW 41
#define ZMQ_IPV6 42
#define ZMQ_MECHANISM 43
#define ZMQ_PLAIN_SERVER 44
#define ZMQ_PLAIN_USERNAME 45
#define ZMQ_PLAIN_PASSWORD 46
#define ZMQ_CURVE_SERVER 47
#define ZMQ_CURVE_PUBLICKEY 48
#define ZMQ_CURVE_SECRETKEY 49
#define ZMQ_CURVE_SERVERKEY 50
#define ZMQ_PROBE_ROUTER 51
#define ZMQ_REQ_CORRELATE 52
#define ZMQ_REQ_RELAXED 53
#define ZMQ_CONFLATE 54
#define ZMQ_ZAP_DOMAIN 55
#define ZMQ_ROUTER_HANDOVER 56
#define ZMQ_TOS 57
#define ZMQ_CONNECT_ROUTING_ID 61
#define ZMQ_GSSAPI_SERVER 62
#define ZMQ_GSSAPI_PRINCIPAL 63
#define ZMQ_GSSAPI_SERVICE_PRINCIPAL 64
#define ZMQ_GSSAPI_PLAINTEXT 65
#define ZMQ_HANDSHAKE_IVL 66
#define ZMQ_SOCKS_PROXY 68
#define ZMQ_XPUB_NODROP 69
#define ZMQ_BLOCKY 70
#define ZMQ_XPUB_MANUAL 71
#define ZMQ_XPUB_WELCOME_MSG 72
#define ZMQ_STREAM_NOTIFY 73
#define ZMQ_INVERT_MATCHING 74
#define ZMQ_HEARTBEAT_IVL 75
#define ZMQ_HEARTBEAT_TTL 76
#define ZMQ_HEARTBEAT_TIMEOUT 77
#define ZMQ_XPUB_VERBOSER 78
#define ZMQ_CONNECT_TIMEOUT 79
#define ZMQ_TCP_MAXRT 80
#define ZMQ_THREAD_SAFE 81
#define ZMQ_MULTICAST_MAXTPDU 84
#define ZMQ_VMCI_BUFFER_SIZE 85
#define ZMQ_VMCI_BUFFER_MIN_SIZE 86
#define ZMQ_VMCI_BUFFER_MAX_SIZE 87
#define ZMQ_VMCI_CONNECT_TIMEOUT 88
#define ZMQ_USE_FD 89
#define ZMQ_GSSAPI_PRINCIPAL_NAMETYPE 90
#define ZMQ_GSSAPI_SERVICE_PRINCIPAL_NAMETYPE 91
#define ZMQ_BINDTODEVICE 92

/* Send and receive flags. */
#define ZMQ_DONTWAIT 1
#define ZMQ_SNDMORE 2

/* Security mechanisms (ZMQ_MECHANISM). */
#define ZMQ_NULL 0
#define ZMQ_PLAIN 1
#define ZMQ_CURVE 2
#define ZMQ_GSSAPI 3

/* RADIO/DISH group names are at most this long. */
#define ZMQ_GROUP_MAX_LENGTH 255

/* Deprecated option and flag names, kept for old programs. */
#define ZMQ_IDENTITY ZMQ_ROUTING_ID
#define ZMQ_CONNECT_RID ZMQ_CONNECT_ROUTING_ID
#define ZMQ_TCP_ACCEPT_FILTER 38
#define ZMQ_IPC_FILTER_PID 58
#define ZMQ_IPC_FILTER_UID 59
#define ZMQ_IPC_FILTER_GID 60
#define ZMQ_IPV4ONLY 31
#define ZMQ_DELAY_ATTACH_ON_CONNECT ZMQ_IMMEDIATE
#define ZMQ_NOBLOCK ZMQ_DONTWAIT
#define ZMQ_FAIL_UNROUTABLE ZMQ_ROUTER_MANDATORY
#define ZMQ_ROUTER_BEHAVIOR ZMQ_ROUTER_MANDATORY

/* Socket options of libzmq's draft API (s3-options). Release builds of
   libzmq 4.3.5 answer many of them all the same (oxmq answers as they do);
   their names sit behind ZMQ_BUILD_DRAFT_API, as in libzmq's zmq.h. */
#ifdef ZMQ_BUILD_DRAFT_API
#define ZMQ_ZAP_ENFORCE_DOMAIN 93
#define ZMQ_LOOPBACK_FASTPATH 94
#define ZMQ_METADATA 95
#define ZMQ_MULTICAST_LOOP 96
#define ZMQ_ROUTER_NOTIFY 97
#define ZMQ_XPUB_MANUAL_LAST_VALUE 98
#define ZMQ_SOCKS_USERNAME 99
#define ZMQ_SOCKS_PASSWORD 100
#define ZMQ_IN_BATCH_SIZE 101
#define ZMQ_OUT_BATCH_SIZE 102
#define ZMQ_WSS_KEY_PEM 103
#define ZMQ_WSS_CERT_PEM 104
#define ZMQ_WSS_TRUST_PEM 105
#define ZMQ_WSS_HOSTNAME 106
#define ZMQ_WSS_TRUST_SYSTEM 107
#define ZMQ_ONLY_FIRST_SUBSCRIBE 108
#define ZMQ_RECONNECT_STOP 109
#define ZMQ_HELLO_MSG 110
#define ZMQ_DISCONNECT_MSG 111
#define ZMQ_PRIORITY 112
#define ZMQ_BUSY_POLL 113
#define ZMQ_HICCUP_MSG 114
#define ZMQ_XSUB_VERBOSE_UNSUBSCRIBE 115
#define ZMQ_TOPICS_COUNT 116

/* ZMQ_RECONNECT_STOP bits. */
#define ZMQ_RECONNECT_STOP_CONN_REFUSED 0x1
#define ZMQ_RECONNECT_STOP_HANDSHAKE_FAILED 0x2
#define ZMQ_RECONNECT_STOP_AFTER_DISCONNECT 0x4

/* ZMQ_ROUTER_NOTIFY values. */
#define ZMQ_NOTIFY_CONNECT 1
#define ZMQ_NOTIFY_DISCONNECT 2
#endif /* ZMQ_BUILD_DRAFT_API */

/* Deprecated message property: the descriptor a message came from. */
#define ZMQ_SRCFD 2

/* GSSAPI principal name types. */
#define ZMQ_GSSAPI_NT_HOSTBASED 0
#define ZMQ_GSSAPI_NT_USER_NAME 1
#define ZMQ_GSSAPI_NT_KRB5_PRINCIPAL 2

/* Socket monitor events: frame 1 of an event is a 16-bit event number and a
   32-bit value, frame 2 the endpoint. */
#define ZMQ_EVENT_CONNECTED 0x0001
#define ZMQ_EVENT_CONNECT_DELAYED 0x0002
#define ZMQ_EVENT_CONNECT_RETRIED 0x0004
#define ZMQ_EVENT_LISTENING 0x0008
#define ZMQ_EVENT_BIND_FAILED 0x0010
#define ZMQ_EVENT_ACCEPTED 0x0020
#define ZMQ_EVENT_ACCEPT_FAILED 0x0040
#define ZMQ_EVENT_CLOSED 0x0080
#define ZMQ_EVENT_CLOSE_FAILED 0x0100
#define ZMQ_EVENT_DISCONNECTED 0x0200
#define ZMQ_EVENT_MONITOR_STOPPED 0x0400
#define ZMQ_EVENT_ALL 0xFFFF
#define ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL 0x0800
#define ZMQ_EVENT_HANDSHAKE_SUCCEEDED 0x1000
#define ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL 0x2000
#define ZMQ_EVENT_HANDSHAKE_FAILED_AUTH 0x4000

/* Values of ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL events. */
#define ZMQ_PROTOCOL_ERROR_ZMTP_UNSPECIFIED 0x10000000
#define ZMQ_PROTOCOL_ERROR_ZMTP_UNEXPECTED_COMMAND 0x10000001
#define ZMQ_PROTOCOL_ERROR_ZMTP_INVALID_SEQUENCE 0x10000002
#define ZMQ_PROTOCOL_ERROR_ZMTP_KEY_EXCHANGE 0x10000003
#define ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_UNSPECIFIED 0x10000011
#define ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_MESSAGE 0x10000012
#define ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_HELLO 0x10000013
#define ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_INITIATE 0x10000014
#define ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_ERROR 0x10000015
#define ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_READY 0x10000016
#define ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_WELCOME 0x10000017
#define ZMQ_PROTOCOL_ERROR_ZMTP_INVALID_METADATA 0x10000018
#define ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC 0x11000001
#define ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH 0x11000002
#define ZMQ_PROTOCOL_ERROR_ZAP_UNSPECIFIED 0x20000000
#define ZMQ_PROTOCOL_ERROR_ZAP_MALFORMED_REPLY 0x20000001
#define ZMQ_PROTOCOL_ERROR_ZAP_BAD_REQUEST_ID 0x20000002
#define ZMQ_PROTOCOL_ERROR_ZAP_BAD_VERSION 0x20000003
#define ZMQ_PROTOCOL_ERROR_ZAP_INVALID_STATUS_CODE 0x20000004
#define ZMQ_PROTOCOL_ERROR_ZAP_INVALID_METADATA 0x20000005
#define ZMQ_PROTOCOL_ERROR_WS_UNSPECIFIED 0x30000000

/* ws:// and wss:// socket options (libzmq's draft API; set-only). */
#ifdef ZMQ_BUILD_DRAFT_API
#define ZMQ_WSS_KEY_PEM 103
#define ZMQ_WSS_CERT_PEM 104
#define ZMQ_WSS_TRUST_PEM 105
#define ZMQ_WSS_HOSTNAME 106
#define ZMQ_WSS_TRUST_SYSTEM 107
#endif

ZMQ_EXPORT void *zmq_socket(void *, int type_);
ZMQ_EXPORT int zmq_close(void *s_);
ZMQ_EXPORT int zmq_setsockopt(void *s_, int option_, const void *optval_, size_t optvallen_);
ZMQ_EXPORT int zmq_getsockopt(void *s_, int option_, void *optval_, size_t *optvallen_);
ZMQ_EXPORT int zmq_bind(void *s_, const char *addr_);
ZMQ_EXPORT int zmq_connect(void *s_, const char *addr_);
ZMQ_EXPORT int zmq_unbind(void *s_, const char *addr_);
ZMQ_EXPORT int zmq_disconnect(void *s_, const char *addr_);
ZMQ_EXPORT int zmq_send(void *s_, const void *buf_, size_t len_, int flags_);
ZMQ_EXPORT int zmq_send_const(void *s_, const void *buf_, size_t len_, int flags_);
ZMQ_EXPORT int zmq_recv(void *s_, void *buf_, size_t len_, int flags_);
ZMQ_EXPORT int zmq_socket_monitor(void *s_, const char *addr_, int events_);

/* DRAFT socket monitoring (libzmq's event version 2: a u64 event id, a u64
   count n, n u64 values, then the local and the remote endpoint).
   zmq_socket_monitor_pipes_stats sends one ZMQ_EVENT_PIPES_STATS per
   connection, with two values: the messages queued outbound, then inbound
   (EINVAL when the monitor does not ask for the event, EAGAIN with no
   connection). */
#ifdef ZMQ_BUILD_DRAFT_API
#define ZMQ_CURRENT_EVENT_VERSION 1
#define ZMQ_CURRENT_EVENT_VERSION_DRAFT 2
#define ZMQ_EVENT_PIPES_STATS 0x10000
#define ZMQ_EVENT_ALL_V1 ZMQ_EVENT_ALL
#define ZMQ_EVENT_ALL_V2 (ZMQ_EVENT_ALL_V1 | ZMQ_EVENT_PIPES_STATS)
ZMQ_EXPORT int zmq_socket_monitor_versioned(void *s_, const char *addr_, uint64_t events_, int event_version_, int type_);
ZMQ_EXPORT int zmq_socket_monitor_pipes_stats(void *s_);

/* oxmq only, event version 2. Where oxmq knows the peer's routing id, it
   follows libzmq's value as more values, which a libzmq reader skips:
   value 2 is its length L, values 3 .. 2+ceil(L/8) its bytes, 8 per value,
   in order, the last zero-padded (n = 1: no id known). Two more events, on
   bits libzmq does not use and outside ZMQ_EVENT_ALL_V2: a message dropped
   (value: an OXMQ_DROP_* reason), a pipe to a peer full (value: its HWM)
   and a connect's host name lookup that found no address (value:
   getaddrinfo's EAI_* code as a signed 64-bit number; CONNECT_RETRIED
   follows, as in libzmq). */
#define OXMQ_EVENT_MSG_DROPPED 0x100000000ULL
#define OXMQ_EVENT_HWM_REACHED 0x200000000ULL
#define OXMQ_EVENT_RESOLVE_FAILED 0x400000000ULL
#define OXMQ_EVENT_ALL (ZMQ_EVENT_ALL_V2 | OXMQ_EVENT_MSG_DROPPED | OXMQ_EVENT_HWM_REACHED | OXMQ_EVENT_RESOLVE_FAILED)
#define OXMQ_DROP_HWM 1
#define OXMQ_DROP_NO_ROUTE 2
#define OXMQ_DROP_CONFLATE 3
#define OXMQ_DROP_OVERSIZE 4
#endif

/* ---------------------------------------------------------------- polling */

#define ZMQ_POLLIN 1
#define ZMQ_POLLOUT 2
#define ZMQ_POLLERR 4
#define ZMQ_POLLPRI 8

/* One entry of a zmq_poll set: a socket, or (socket == NULL) a descriptor. */
typedef struct zmq_pollitem_t {
    void *socket;
#if defined(_WIN32)
    uintptr_t fd; /* SOCKET */
#else
    int fd;
#endif
    short events;
    short revents;
} zmq_pollitem_t;

#define ZMQ_POLLITEMS_DFLT 16

ZMQ_EXPORT int zmq_poll(zmq_pollitem_t *items_, int nitems_, long timeout_);

/* ---------------------------------------------------------- proxy/devices */

ZMQ_EXPORT int zmq_proxy(void *frontend_, void *backend_, void *capture_);
ZMQ_EXPORT int zmq_proxy_steerable(void *frontend_, void *backend_, void *capture_, void *control_);

/* Legacy device types for zmq_device (all behave as zmq_proxy). */
#define ZMQ_STREAMER 1
#define ZMQ_FORWARDER 2
#define ZMQ_QUEUE 3

ZMQ_EXPORT int zmq_device(int type_, void *frontend_, void *backend_);

/* ------------------------------------------------------------ capabilities */

/* zmq_has is available (it answers "ipc", "pgm", "tipc", "norm", "curve",
   "gssapi", "draft"). */
#define ZMQ_HAS_CAPABILITIES 1

ZMQ_EXPORT int zmq_has(const char *capability_);

/* ------------------------------------------------------ deprecated message */

ZMQ_EXPORT int zmq_sendmsg(void *s_, zmq_msg_t *msg_, int flags_);
ZMQ_EXPORT int zmq_recvmsg(void *s_, zmq_msg_t *msg_, int flags_);

struct iovec;
ZMQ_EXPORT int zmq_sendiov(void *s_, struct iovec *iov_, size_t count_, int flags_);
ZMQ_EXPORT int zmq_recviov(void *s_, struct iovec *iov_, size_t *count_, int flags_);

/* ---------------------------------------------------------- Z85 and CURVE */

/* Encode size_ bytes (a multiple of 4) as size_ * 5 / 4 characters plus NUL. */
ZMQ_EXPORT char *zmq_z85_encode(char *dest_, const uint8_t *data_, size_t size_);
/* Decode a string whose length is a multiple of 5 into strlen * 4 / 5 bytes. */
ZMQ_EXPORT uint8_t *zmq_z85_decode(uint8_t *dest_, const char *string_);

/* Keys are 40 Z85 characters plus NUL (41-byte buffers). */
ZMQ_EXPORT int zmq_curve_keypair(char *z85_public_key_, char *z85_secret_key_);
ZMQ_EXPORT int zmq_curve_public(char *z85_public_key_, const char *z85_secret_key_);

/* --------------------------------------------------------- atomic counters */

ZMQ_EXPORT void *zmq_atomic_counter_new(void);
ZMQ_EXPORT void zmq_atomic_counter_set(void *counter_, int value_);
ZMQ_EXPORT int zmq_atomic_counter_inc(void *counter_);
ZMQ_EXPORT int zmq_atomic_counter_dec(void *counter_);
ZMQ_EXPORT int zmq_atomic_counter_value(void *counter_);
ZMQ_EXPORT void zmq_atomic_counter_destroy(void **counter_p_);

/* ------------------------------------------------------------------ timers */

typedef void(zmq_timer_fn)(int timer_id, void *arg);

ZMQ_EXPORT void *zmq_timers_new(void);
ZMQ_EXPORT int zmq_timers_destroy(void **timers_p);
ZMQ_EXPORT int zmq_timers_add(void *timers, size_t interval, zmq_timer_fn handler, void *arg);
ZMQ_EXPORT int zmq_timers_cancel(void *timers, int timer_id);
ZMQ_EXPORT int zmq_timers_set_interval(void *timers, int timer_id, size_t interval);
ZMQ_EXPORT int zmq_timers_reset(void *timers, int timer_id);
ZMQ_EXPORT long zmq_timers_timeout(void *timers);
ZMQ_EXPORT int zmq_timers_execute(void *timers);

/* ---------------------------------------------------------------- utility */

/* Microseconds since zmq_stopwatch_start; zmq_stopwatch_stop frees the watch. */
ZMQ_EXPORT void *zmq_stopwatch_start(void);
ZMQ_EXPORT unsigned long zmq_stopwatch_intermediate(void *watch_);
ZMQ_EXPORT unsigned long zmq_stopwatch_stop(void *watch_);

ZMQ_EXPORT void zmq_sleep(int seconds_);

typedef void(zmq_thread_fn)(void *);

/* Run func_(arg_) on a new thread; zmq_threadclose joins it. */
ZMQ_EXPORT void *zmq_threadstart(zmq_thread_fn *func_, void *arg_);
ZMQ_EXPORT void zmq_threadclose(void *thread_);

/* ------------------------------------------------------------- draft API */
/* CLIENT/SERVER, SCATTER/GATHER, PEER/CHANNEL and zmq_poller, behind
   ZMQ_BUILD_DRAFT_API as in libzmq's zmq.h. These sockets are thread-safe
   (ZMQ_THREAD_SAFE reads 1) and have no ZMQ_FD: poll them with zmq_poller. */

#ifdef ZMQ_BUILD_DRAFT_API

#define ZMQ_SERVER 12
#define ZMQ_CLIENT 13
#define ZMQ_GATHER 16
#define ZMQ_SCATTER 17
#define ZMQ_PEER 19
#define ZMQ_CHANNEL 20

ZMQ_EXPORT int zmq_msg_set_routing_id(zmq_msg_t *msg_, uint32_t routing_id_);
ZMQ_EXPORT uint32_t zmq_msg_routing_id(zmq_msg_t *msg_);
ZMQ_EXPORT uint32_t zmq_connect_peer(void *s_, const char *addr_);

#if defined(_WIN32)
typedef uintptr_t zmq_fd_t;
#else
typedef int zmq_fd_t;
#endif

typedef struct zmq_poller_event_t {
    void *socket;
    zmq_fd_t fd;
    void *user_data;
    short events;
} zmq_poller_event_t;

ZMQ_EXPORT void *zmq_poller_new(void);
ZMQ_EXPORT int zmq_poller_destroy(void **poller_p);
ZMQ_EXPORT int zmq_poller_size(void *poller);
ZMQ_EXPORT int zmq_poller_add(void *poller, void *socket, void *user_data, short events);
ZMQ_EXPORT int zmq_poller_modify(void *poller, void *socket, short events);
ZMQ_EXPORT int zmq_poller_remove(void *poller, void *socket);
ZMQ_EXPORT int zmq_poller_wait(void *poller, zmq_poller_event_t *event, long timeout);
ZMQ_EXPORT int zmq_poller_wait_all(void *poller, zmq_poller_event_t *events, int n_events, long timeout);
ZMQ_EXPORT int zmq_poller_fd(void *poller, zmq_fd_t *fd);
ZMQ_EXPORT int zmq_poller_add_fd(void *poller, zmq_fd_t fd, void *user_data, short events);
ZMQ_EXPORT int zmq_poller_modify_fd(void *poller, zmq_fd_t fd, short events);
ZMQ_EXPORT int zmq_poller_remove_fd(void *poller, zmq_fd_t fd);

#endif /* ZMQ_BUILD_DRAFT_API */

/* ------------------------------------------ draft API: RADIO/DISH groups */

#ifdef ZMQ_BUILD_DRAFT_API
#define ZMQ_RADIO 14
#define ZMQ_DISH 15

/* DRAFT Msg methods: groups (libzmq 4.3.5's limit). */
#define ZMQ_GROUP_MAX_LENGTH 255
ZMQ_EXPORT int zmq_msg_set_group(zmq_msg_t *msg, const char *group);
ZMQ_EXPORT const char *zmq_msg_group(zmq_msg_t *msg);

/* DRAFT Socket methods: a DISH joins and leaves groups. */
ZMQ_EXPORT int zmq_join(void *s, const char *group);
ZMQ_EXPORT int zmq_leave(void *s, const char *group);
#endif

/* ------------------------------------------ draft API: DGRAM (raw udp://) */

#ifdef ZMQ_BUILD_DRAFT_API
#define ZMQ_DGRAM 18
#endif

#ifdef __cplusplus
}
#endif

#endif /* OXMQ_ZMQ_H_INCLUDED */
