//! Socket options: libzmq's option numbers and the values a socket carries.
//!
//! `Options` is plain data. A socket owns one; each connection (engine) gets an
//! `Arc` snapshot taken when it was created, as libzmq does, so changing an
//! option affects later binds and connects only.

use std::time::Duration;

use oxmq_proto::{CurveConfig, MechanismConfig, PlainConfig};
use zeroize::Zeroizing;

/// libzmq option numbers (`zmq.h`), used by the generic get/set API, the C ABI and Python.
pub mod opt {
    /// Which I/O threads (a bit mask) serve the socket's later connections; 0, the default, lets the context choose.
    pub const AFFINITY: i32 = 4;
    /// The identity this socket announces to its peers in the handshake, which a ROUTER peer then routes by (1-255 bytes; empty by default: the ROUTER makes one up).
    pub const ROUTING_ID: i32 = 5;
    /// Adds a topic prefix to a SUB's (or an XPUB_MANUAL publisher's) filter; the empty prefix matches every message.
    pub const SUBSCRIBE: i32 = 6;
    /// Removes one earlier [`SUBSCRIBE`] of the same prefix (subscriptions are counted).
    pub const UNSUBSCRIBE: i32 = 7;
    /// The multicast (pgm/epgm/norm) data rate in kbit/s (default 100).
    pub const RATE: i32 = 8;
    /// How long, in ms, a multicast sender keeps data for receivers that missed it (default 10000).
    pub const RECOVERY_IVL: i32 = 9;
    /// The kernel's send buffer size for the socket's connections, in bytes (-1, the default: the OS default).
    pub const SNDBUF: i32 = 11;
    /// The kernel's receive buffer size for the socket's connections, in bytes (-1, the default: the OS default).
    pub const RCVBUF: i32 = 12;
    /// Read-only: 1 when the last frame received has more frames of the same message after it.
    pub const RCVMORE: i32 = 13;
    /// Read-only: a file descriptor that becomes readable when [`EVENTS`] may have changed, for event loops (edge-like: read [`EVENTS`] after each wake-up).
    pub const FD: i32 = 14;
    /// Read-only: whether a message can be received ([`POLLIN`](crate::POLLIN)) and sent ([`POLLOUT`](crate::POLLOUT)) without blocking now.
    pub const EVENTS: i32 = 15;
    /// Read-only: the socket type's libzmq number.
    pub const TYPE: i32 = 16;
    /// How long, in ms, closing the socket (or terminating its context) waits to deliver queued messages: -1 forever (the default), 0 not at all.
    pub const LINGER: i32 = 17;
    /// How long, in ms, a connecting socket waits before retrying a lost or refused connection (default 100; -1: never reconnect).
    pub const RECONNECT_IVL: i32 = 18;
    /// The kernel's queue of connections not yet accepted, for tcp and ipc listeners (default 100).
    pub const BACKLOG: i32 = 19;
    /// The ceiling, in ms, that reconnect intervals double up to after repeated failures (0, the default: no backoff).
    pub const RECONNECT_IVL_MAX: i32 = 21;
    /// The largest message, in bytes, a peer may send; a bigger one drops that connection (-1, the default: no limit).
    pub const MAXMSGSIZE: i32 = 22;
    /// How many outgoing messages a peer's pipe holds before the socket blocks or drops, per its type (default 1000; 0: no limit).
    pub const SNDHWM: i32 = 23;
    /// How many incoming messages a peer's pipe holds before the connection stops reading from that peer (default 1000; 0: no limit).
    pub const RCVHWM: i32 = 24;
    /// The time-to-live of multicast packets (default 1: the local network only).
    pub const MULTICAST_HOPS: i32 = 25;
    /// How long, in ms, a blocking receive waits before failing with EAGAIN (-1, the default: forever).
    pub const RCVTIMEO: i32 = 27;
    /// How long, in ms, a blocking send waits before failing with EAGAIN (-1, the default: forever).
    pub const SNDTIMEO: i32 = 28;
    /// Read-only: the endpoint the socket last bound or connected, with wildcards resolved (the port `tcp://*:*` was given).
    pub const LAST_ENDPOINT: i32 = 32;
    /// Makes a ROUTER fail a send to an unknown routing id with EHOSTUNREACH (and block or EAGAIN at a full pipe) instead of dropping the message silently.
    pub const ROUTER_MANDATORY: i32 = 33;
    /// Turns TCP keep-alive probes on (1) or off (0) for the socket's connections (-1, the default: the OS default).
    pub const TCP_KEEPALIVE: i32 = 34;
    /// How many unanswered TCP keep-alive probes drop a connection (-1: the OS default).
    pub const TCP_KEEPALIVE_CNT: i32 = 35;
    /// How long, in s, a connection is idle before TCP sends keep-alive probes (-1: the OS default).
    pub const TCP_KEEPALIVE_IDLE: i32 = 36;
    /// The interval, in s, between TCP keep-alive probes (-1: the OS default).
    pub const TCP_KEEPALIVE_INTVL: i32 = 37;
    /// Queues messages only for completed connections, so that sends block (or fail) rather than wait for a peer that is not there yet.
    pub const IMMEDIATE: i32 = 39;
    /// Makes an XPUB pass every subscription up to its user, duplicates included, not just the first one of each topic.
    pub const XPUB_VERBOSE: i32 = 40;
    /// Turns a ROUTER into a raw TCP socket: no ZMTP, each connection's routing id is a frame before its data (STREAM's predecessor).
    pub const ROUTER_RAW: i32 = 41;
    /// Lets tcp endpoints use IPv6 as well as IPv4 (0, the default: IPv4 only).
    pub const IPV6: i32 = 42;
    /// Read-only: the security mechanism the socket is configured for (see [`mechanism`](super::mechanism)).
    pub const MECHANISM: i32 = 43;
    /// Makes the socket the PLAIN server: it accepts a user name and password, checked by the ZAP handler.
    pub const PLAIN_SERVER: i32 = 44;
    /// The user name a PLAIN client sends (setting it makes the socket a PLAIN client).
    pub const PLAIN_USERNAME: i32 = 45;
    /// The password a PLAIN client sends (kept zeroed on drop, never printed).
    pub const PLAIN_PASSWORD: i32 = 46;
    /// Makes the socket a CURVE server: it needs [`CURVE_SECRETKEY`] and authenticates clients through the ZAP handler.
    pub const CURVE_SERVER: i32 = 47;
    /// The socket's long-term CURVE public key (32 bytes, or 40 characters of Z85).
    pub const CURVE_PUBLICKEY: i32 = 48;
    /// The socket's long-term CURVE secret key (32 bytes, or 40 characters of Z85; zeroed on drop, never printed).
    pub const CURVE_SECRETKEY: i32 = 49;
    /// The public key of the server a CURVE client connects to (setting it makes the socket a CURVE client).
    pub const CURVE_SERVERKEY: i32 = 50;
    /// Makes a connecting REQ, DEALER or ROUTER send an empty message at once, so the ROUTER it reaches learns its routing id before any data.
    pub const PROBE_ROUTER: i32 = 51;
    /// Makes REQ tag each request with an id and drop replies that do not carry it (for use with [`REQ_RELAXED`]).
    pub const REQ_CORRELATE: i32 = 52;
    /// Lets REQ send a new request without waiting for the previous reply; a late reply to an abandoned request is discarded.
    pub const REQ_RELAXED: i32 = 53;
    /// Keeps only the newest message in the socket's queue (for last-value feeds; single-frame messages only).
    pub const CONFLATE: i32 = 54;
    /// The authentication domain this socket's handshakes send to the ZAP handler (a non-empty one also asks ZAP under NULL).
    pub const ZAP_DOMAIN: i32 = 55;
    /// Lets a new connection with a routing id already in use take it over from the old one, instead of being refused.
    pub const ROUTER_HANDOVER: i32 = 56;
    /// The IP type-of-service (DSCP) byte of the socket's tcp connections.
    pub const TOS: i32 = 57;
    /// The routing id the next `connect` gives its peer on this ROUTER or STREAM socket, instead of a generated one.
    pub const CONNECT_ROUTING_ID: i32 = 61;
    /// Makes the socket the GSSAPI server side of the handshake (Kerberos acceptor).
    pub const GSSAPI_SERVER: i32 = 62;
    /// The GSS-API principal whose credentials this socket uses.
    pub const GSSAPI_PRINCIPAL: i32 = 63;
    /// The principal of the service a GSSAPI client connects to (setting it makes the socket a GSSAPI client).
    pub const GSSAPI_SERVICE_PRINCIPAL: i32 = 64;
    /// Runs GSSAPI for authentication only: traffic after the handshake is not wrapped (encrypted).
    pub const GSSAPI_PLAINTEXT: i32 = 65;
    /// How [`GSSAPI_PRINCIPAL`] is read (see [`crate::gss::name_type`]).
    pub const GSSAPI_PRINCIPAL_NAMETYPE: i32 = 90;
    /// How [`GSSAPI_SERVICE_PRINCIPAL`] is read (see [`crate::gss::name_type`]).
    pub const GSSAPI_SERVICE_PRINCIPAL_NAMETYPE: i32 = 91;
    /// How long, in ms, a new connection may take to finish the ZMTP handshake before it is dropped (default 30000; 0: no limit).
    pub const HANDSHAKE_IVL: i32 = 66;
    /// The SOCKS5 proxy (`host:port`) that the socket's tcp connects go through.
    pub const SOCKS_PROXY: i32 = 68;
    /// Makes an XPUB (or PUB) block or fail with EAGAIN at a full subscriber pipe instead of dropping the message.
    pub const XPUB_NODROP: i32 = 69;
    /// libzmq's number of the context option [`crate::ctxopt::BLOCKY`], kept here because bindings list it with the socket options; a socket answers EINVAL.
    pub const BLOCKY: i32 = 70;
    /// Makes an XPUB apply subscriptions only when its user sets [`SUBSCRIBE`]/[`UNSUBSCRIBE`] on it after reading them, so it can filter or rewrite them.
    pub const XPUB_MANUAL: i32 = 71;
    /// A message an XPUB sends to each new subscriber when it connects.
    pub const XPUB_WELCOME_MSG: i32 = 72;
    /// Makes a STREAM socket deliver an empty message on each connect and disconnect (1, the default).
    pub const STREAM_NOTIFY: i32 = 73;
    /// Inverts PUB/SUB filtering: a SUB receives the messages that match none of its subscriptions.
    pub const INVERT_MATCHING: i32 = 74;
    /// How often, in ms, the socket sends a ZMTP PING on an otherwise quiet connection (0, the default: never).
    pub const HEARTBEAT_IVL: i32 = 75;
    /// How long, in ms, the peer should wait for traffic from us before it drops the connection (sent in our PINGs, in 100 ms units).
    pub const HEARTBEAT_TTL: i32 = 76;
    /// How long, in ms, a connection may stay silent after a PING before it is dropped (default: [`HEARTBEAT_IVL`]).
    pub const HEARTBEAT_TIMEOUT: i32 = 77;
    /// Like [`XPUB_VERBOSE`], for unsubscriptions too.
    pub const XPUB_VERBOSER: i32 = 78;
    /// How long, in ms, a tcp connect may take before it counts as failed and is retried (0, the default: the OS's timeout).
    pub const CONNECT_TIMEOUT: i32 = 79;
    /// How long, in ms, unacknowledged TCP data may wait before the kernel drops the connection (`TCP_USER_TIMEOUT`; 0: the OS default).
    pub const TCP_MAXRT: i32 = 80;
    /// Read-only: 1 for the thread-safe draft types (CLIENT, SERVER, RADIO, DISH, SCATTER, GATHER, PEER, CHANNEL), which have no [`FD`].
    pub const THREAD_SAFE: i32 = 81;
    /// The largest multicast transport data unit, in bytes (default 1500).
    pub const MULTICAST_MAXTPDU: i32 = 84;
    /// Binds the socket's tcp and udp connections to one network interface (`SO_BINDTODEVICE`; needs privileges).
    pub const BINDTODEVICE: i32 = 92;
    // Deprecated names libzmq 4.3.5 still answers.
    /// The inverse of [`IPV6`] (1: IPv4 only), kept because libzmq still answers it.
    pub const IPV4ONLY: i32 = 31;
    /// Lets only processes with this pid connect to the socket's ipc listeners (each set adds one; checked with `SO_PEERCRED`).
    pub const IPC_FILTER_PID: i32 = 58;
    /// Lets only processes of this user id connect to the socket's ipc listeners (each set adds one).
    pub const IPC_FILTER_UID: i32 = 59;
    /// Lets only processes of this group id connect to the socket's ipc listeners (each set adds one).
    pub const IPC_FILTER_GID: i32 = 60;
    /// A descriptor, already bound and listening, for the next `bind` to accept on instead of opening its own (for socket activation).
    pub const USE_FD: i32 = 89;
    // Options of libzmq's draft API that its release builds answer all the same.
    /// Windows' loopback fast path in libzmq; accepted and ignored here, as on Linux libzmq.
    pub const LOOPBACK_FASTPATH: i32 = 94;
    /// Whether a udp multicast RADIO's own messages come back to DISH sockets on the same host (1, the default).
    pub const MULTICAST_LOOP: i32 = 96;
    /// Like [`XPUB_MANUAL`], and a new subscriber's subscription is applied to it alone, so the user's reply (the last value) reaches only it.
    pub const XPUB_MANUAL_LAST_VALUE: i32 = 98;
    /// The user name for the [`SOCKS_PROXY`]'s user/password authentication (RFC 1929).
    pub const SOCKS_USERNAME: i32 = 99;
    /// The password for the [`SOCKS_PROXY`]'s user/password authentication (RFC 1929).
    pub const SOCKS_PASSWORD: i32 = 100;
    /// Treats only the first frame of a multi-frame message to an XPUB or XSUB as a subscription; later frames pass as data.
    pub const ONLY_FIRST_SUBSCRIBE: i32 = 108;
    /// Bits that make a connecting socket stop reconnecting for good: on a refused connection, on a failed handshake, after a disconnect (libzmq's `ZMQ_RECONNECT_STOP_*`).
    pub const RECONNECT_STOP: i32 = 109;
    /// Read-only: how many subscriptions an XPUB or XSUB holds.
    pub const TOPICS_COUNT: i32 = 116;
    /// Refuses a handshake that needs ZAP when the context has no ZAP handler, instead of admitting the peer (default 0, libzmq's backward-compatible choice).
    pub const ZAP_ENFORCE_DOMAIN: i32 = 93;
    // Accept filters (s3-options).
    /// Lets only peers from these addresses connect to the socket's tcp listeners (each set adds one; empty clears them).
    pub const TCP_ACCEPT_FILTER: i32 = 38;
    // ws:// and wss:// (libzmq draft options, set-only).
    /// The PEM private key a `wss://` listener presents.
    pub const WSS_KEY_PEM: i32 = 103;
    /// The PEM certificate (chain) a `wss://` listener presents.
    pub const WSS_CERT_PEM: i32 = 104;
    /// The PEM certificate a `wss://` client trusts as its root for the server's certificate.
    pub const WSS_TRUST_PEM: i32 = 105;
    /// The host name a `wss://` client checks the server's certificate against (default: the endpoint's host).
    pub const WSS_HOSTNAME: i32 = 106;
    /// Makes a `wss://` client trust the system's root certificates.
    pub const WSS_TRUST_SYSTEM: i32 = 107;
    // libzmq's draft API options (s3-draftopts).
    /// An `X-name:value` property this socket adds to its handshake metadata, which peers read back as the connection's properties ([`crate::Socket::peer_property`], C's `zmq_msg_gets`).
    pub const METADATA: i32 = 95;
    /// Makes a ROUTER deliver an empty message from a peer when it connects and/or disconnects (bits of [`notify`](super::notify)).
    pub const ROUTER_NOTIFY: i32 = 97;
    /// A message the socket sends to each new peer as soon as the connection is up.
    pub const HELLO_MSG: i32 = 110;
    /// A message the socket receives, as from the peer, when a peer's connection is lost.
    pub const DISCONNECT_MSG: i32 = 111;
    /// A message the socket receives when its connection to a peer is lost and will be retried (a connecting socket).
    pub const HICCUP_MSG: i32 = 114;
    // oxmq-only, read-only statistics (`Socket::stats`), as 64-bit integers.
    // From 20000 up: libzmq's socket options are all below 200.
    /// Messages taken from peers (`SocketStats::msgs_in`).
    pub const STATS_MSGS_IN: i32 = 20000;
    /// Body bytes taken from peers (`SocketStats::bytes_in`).
    pub const STATS_BYTES_IN: i32 = 20001;
    /// Messages handed to peers (`SocketStats::msgs_out`).
    pub const STATS_MSGS_OUT: i32 = 20002;
    /// Body bytes handed to peers (`SocketStats::bytes_out`).
    pub const STATS_BYTES_OUT: i32 = 20003;
    /// Messages dropped at a peer's HWM.
    pub const STATS_DROPS_HWM: i32 = 20004;
    /// Messages dropped for want of a route (ROUTER, unknown id).
    pub const STATS_DROPS_NO_ROUTE: i32 = 20005;
    /// Messages replaced under CONFLATE before anyone took them.
    pub const STATS_DROPS_CONFLATE: i32 = 20006;
    /// Frames over MAXMSGSIZE that ended a connection.
    pub const STATS_DROPS_OVERSIZE: i32 = 20007;
    /// Reconnects scheduled (CONNECT_RETRIED).
    pub const STATS_RECONNECTS: i32 = 20008;
    /// Handshakes failed on a protocol error.
    pub const STATS_HANDSHAKE_FAILED_PROTOCOL: i32 = 20009;
    /// Handshakes failed on authentication.
    pub const STATS_HANDSHAKE_FAILED_AUTH: i32 = 20010;
    /// Handshakes that timed out (HANDSHAKE_IVL).
    pub const STATS_HANDSHAKE_FAILED_TIMEOUT: i32 = 20011;
    /// Handshakes failed otherwise (connection lost, ZAP unreachable).
    pub const STATS_HANDSHAKE_FAILED_OTHER: i32 = 20012;
    /// Messages from peers not read yet, summed over peers.
    pub const STATS_QUEUED_IN: i32 = 20013;
    /// Messages to peers not taken yet, summed over peers.
    pub const STATS_QUEUED_OUT: i32 = 20014;
    /// Connections the socket has now.
    pub const STATS_PEERS: i32 = 20015;
}

/// `ZMQ_ROUTER_NOTIFY` bits: which peer events a ROUTER reports as messages.
pub mod notify {
    /// Deliver an empty message from each peer that connects.
    pub const CONNECT: i32 = 1;
    /// Deliver an empty message from each peer that disconnects.
    pub const DISCONNECT: i32 = 2;
}

/// `ZMQ_MECHANISM` values: the security mechanism a socket's handshakes use.
pub mod mechanism {
    /// No security: no authentication, no encryption (ZAP only with a ZAP domain).
    pub const NULL: i32 = 0;
    /// User name and password in clear text, checked by the ZAP handler.
    pub const PLAIN: i32 = 1;
    /// CurveZMQ: the peers authenticate by long-term keys and every message is encrypted.
    pub const CURVE: i32 = 2;
    /// Kerberos through GSS-API: authentication, and encryption unless `GSSAPI_PLAINTEXT`.
    pub const GSSAPI: i32 = 3;
}

/// Whether a socket is about to send or receive (`ZMQ_POLLIN`/`ZMQ_POLLOUT` bits of `EVENTS`).
pub const POLLIN: i16 = 1;
/// See [`POLLIN`].
pub const POLLOUT: i16 = 2;
/// See [`POLLIN`].
pub const POLLERR: i16 = 4;

/// Everything a socket and its connections are configured with (libzmq defaults).
#[derive(Clone, Debug)]
pub struct Options {
    pub(crate) sndhwm: i32,
    pub(crate) rcvhwm: i32,
    /// None = infinite.
    pub(crate) linger: Option<Duration>,
    pub(crate) sndtimeo: Option<Duration>,
    pub(crate) rcvtimeo: Option<Duration>,
    pub(crate) routing_id: Vec<u8>,
    pub(crate) connect_routing_id: Option<Vec<u8>>,
    pub(crate) immediate: bool,
    pub(crate) reconnect_ivl: Option<Duration>,
    pub(crate) reconnect_ivl_max: Option<Duration>,
    pub(crate) connect_timeout: Option<Duration>,
    pub(crate) handshake_ivl: Option<Duration>,
    pub(crate) heartbeat_ivl: Option<Duration>,
    pub(crate) heartbeat_ttl: Option<Duration>,
    pub(crate) heartbeat_timeout: Option<Duration>,
    /// None = no limit.
    pub(crate) maxmsgsize: Option<u64>,
    pub(crate) tcp_keepalive: i32,
    pub(crate) tcp_keepalive_cnt: i32,
    pub(crate) tcp_keepalive_idle: i32,
    pub(crate) tcp_keepalive_intvl: i32,
    pub(crate) sndbuf: i32,
    pub(crate) rcvbuf: i32,
    pub(crate) backlog: i32,
    pub(crate) ipv6: bool,
    pub(crate) tos: i32,
    pub(crate) conflate: bool,
    pub(crate) affinity: u64,
    pub(crate) rate: i32,
    pub(crate) recovery_ivl: i32,
    pub(crate) multicast_hops: i32,
    pub(crate) tcp_maxrt: i32,
    pub(crate) zap_domain: Vec<u8>,
    pub(crate) zap_enforce_domain: bool,
    pub(crate) bindtodevice: Vec<u8>,
    pub(crate) socks_proxy: Vec<u8>,
    pub(crate) socks_username: Vec<u8>,
    pub(crate) socks_password: Vec<u8>,
    /// ZMQ_USE_FD: -1, or a listening descriptor the next bind adopts.
    pub(crate) use_fd: i32,
    pub(crate) multicast_maxtpdu: i32,
    pub(crate) multicast_loop: bool,
    /// Windows-only in libzmq; kept so it reads back.
    pub(crate) loopback_fastpath: bool,
    pub(crate) invert_matching: bool,
    /// ZMQ_RECONNECT_STOP bits (libzmq stores any value).
    pub(crate) reconnect_stop: i32,
    /// ZMQ_IPC_FILTER_*: peers an ipc listener accepts (empty = anyone).
    pub(crate) ipc_filter_pids: Vec<i32>,
    pub(crate) ipc_filter_uids: Vec<i32>,
    pub(crate) ipc_filter_gids: Vec<i32>,
    pub(crate) security: Security,
    /// TCP_ACCEPT_FILTER: (network, prefix bits) a tcp listener accepts (empty = anyone).
    pub(crate) tcp_accept_filters: Vec<(std::net::IpAddr, u8)>,
    // Draft options (s3-draftopts); they act on connect and disconnect only.
    /// ROUTER_NOTIFY bits (`notify::*`).
    pub(crate) router_notify: i32,
    /// STREAM_NOTIFY (libzmq's raw_notify): a raw connection announces its
    /// arrival and departure with an empty message, pushed by its engine.
    pub(crate) raw_notify: bool,
    /// HELLO_MSG / DISCONNECT_MSG / HICCUP_MSG; empty = none.
    pub(crate) hello_msg: Vec<u8>,
    pub(crate) disconnect_msg: Vec<u8>,
    pub(crate) hiccup_msg: Vec<u8>,
    /// METADATA: `X-` properties added to the handshake, first value of a name kept.
    pub(crate) app_metadata: Vec<(String, Vec<u8>)>,
    /// wss:// certificates and names (ZMQ_WSS_*).
    pub(crate) wss: Wss,
}

/// ZMQ_WSS_* as libzmq keeps them: PEM text and a host name, stored as
/// given and checked when a wss:// endpoint is bound or connected.
#[derive(Clone, Debug, Default)]
pub(crate) struct Wss {
    pub(crate) key_pem: Zeroizing<Vec<u8>>,
    pub(crate) cert_pem: Vec<u8>,
    pub(crate) trust_pem: Vec<u8>,
    pub(crate) hostname: Vec<u8>,
    pub(crate) trust_system: bool,
}

/// The security options, as libzmq keeps them: one current mechanism and
/// an as-server flag, plus every credential ever set (switching mechanism
/// does not forget the others). Secrets are zeroed when dropped.
#[derive(Clone, Debug, Default)]
pub(crate) struct Security {
    pub(crate) mechanism: i32,
    pub(crate) as_server: bool,
    pub(crate) plain: PlainConfig,
    pub(crate) curve: CurveConfig,
    pub(crate) gss: crate::gss::GssOptions,
}

impl Security {
    /// What the handshake of a new connection runs.
    pub(crate) fn mechanism_config(&self) -> MechanismConfig {
        match self.mechanism {
            mechanism::PLAIN => MechanismConfig::Plain(self.plain.clone()),
            mechanism::CURVE => MechanismConfig::Curve(self.curve.clone()),
            mechanism::GSSAPI => MechanismConfig::Gssapi(self.gss.config()),
            _ => MechanismConfig::Null,
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            sndhwm: 1000,
            rcvhwm: 1000,
            linger: None,
            sndtimeo: None,
            rcvtimeo: None,
            routing_id: Vec::new(),
            connect_routing_id: None,
            immediate: false,
            reconnect_ivl: Some(Duration::from_millis(100)),
            reconnect_ivl_max: None,
            connect_timeout: None,
            handshake_ivl: Some(Duration::from_millis(30_000)),
            heartbeat_ivl: None,
            heartbeat_ttl: None,
            heartbeat_timeout: None,
            maxmsgsize: None,
            tcp_keepalive: -1,
            tcp_keepalive_cnt: -1,
            tcp_keepalive_idle: -1,
            tcp_keepalive_intvl: -1,
            sndbuf: -1,
            rcvbuf: -1,
            backlog: 100,
            ipv6: false,
            tos: 0,
            conflate: false,
            affinity: 0,
            rate: 100,
            recovery_ivl: 10_000,
            multicast_hops: 1,
            tcp_maxrt: 0,
            zap_domain: Vec::new(),
            zap_enforce_domain: false,
            bindtodevice: Vec::new(),
            socks_proxy: Vec::new(),
            socks_username: Vec::new(),
            socks_password: Vec::new(),
            use_fd: -1,
            multicast_maxtpdu: 1500,
            multicast_loop: true,
            loopback_fastpath: false,
            invert_matching: false,
            reconnect_stop: 0,
            ipc_filter_pids: Vec::new(),
            ipc_filter_uids: Vec::new(),
            ipc_filter_gids: Vec::new(),
            security: Security::default(),
            tcp_accept_filters: Vec::new(),
            router_notify: 0,
            raw_notify: true,
            hello_msg: Vec::new(),
            disconnect_msg: Vec::new(),
            hiccup_msg: Vec::new(),
            app_metadata: Vec::new(),
            wss: Wss::default(),
        }
    }
}

impl Options {
    /// libzmq's defaults for a socket of type `kind`: the table above, with
    /// LINGER 0 for SUB and XSUB (libzmq's constructors set it so that closing
    /// never waits for queued subscriptions to reach a peer that may never come).
    pub(crate) fn for_type(kind: oxmq_proto::SocketType) -> Options {
        use oxmq_proto::SocketType;
        let mut o = Options::default();
        if matches!(kind, SocketType::Sub | SocketType::XSub) {
            o.linger = Some(Duration::ZERO);
        }
        // Draft DISH sets LINGER 0 too (libzmq's dish_t, for its joins).
        if kind == SocketType::Dish {
            o.linger = Some(Duration::ZERO);
        }
        o
    }

    /// Send-side CONFLATE: whether a new pipe from a socket of type `kind`
    /// to its engine keeps only the last message (libzmq's types: DEALER,
    /// PUSH, PUB, and SUB, whose subscriptions conflate too: of several
    /// queued together only the last reaches the publisher, as in libzmq;
    /// PULL and SUB conflate what they receive, in `Socket::recv`).
    /// Chosen when the pipe is made, so sending costs nothing extra.
    pub(crate) fn conflates_sending(&self, kind: oxmq_proto::SocketType) -> bool {
        use oxmq_proto::SocketType;
        self.conflate && matches!(kind, SocketType::Dealer | SocketType::Push | SocketType::Pub | SocketType::Sub)
    }

    // Draft options (s3-draftopts): which types act on them, as libzmq's
    // can_send_hello_msg / can_recv_disconnect_msg / can_recv_hiccup_msg.

    /// HELLO_MSG goes to each new peer.
    pub(crate) fn sends_hello(&self, kind: oxmq_proto::SocketType) -> bool {
        use oxmq_proto::SocketType as T;
        !self.hello_msg.is_empty() && matches!(kind, T::Router | T::Dealer | T::Client | T::Server | T::Peer)
    }
    /// DISCONNECT_MSG arrives when a peer goes.
    pub(crate) fn receives_disconnect_msg(&self, kind: oxmq_proto::SocketType) -> bool {
        use oxmq_proto::SocketType as T;
        !self.disconnect_msg.is_empty() && matches!(kind, T::Router | T::Server | T::Peer)
    }
    /// HICCUP_MSG arrives when a connection this socket made dropped.
    pub(crate) fn receives_hiccup_msg(&self, kind: oxmq_proto::SocketType) -> bool {
        use oxmq_proto::SocketType as T;
        !self.hiccup_msg.is_empty() && matches!(kind, T::Dealer | T::Client | T::Peer)
    }

    /// Send HWM as a pipe limit (0 = unlimited).
    pub(crate) fn sndhwm_limit(&self) -> usize {
        self.sndhwm.max(0) as usize
    }
    /// Receive HWM as a pipe limit (0 = unlimited).
    pub(crate) fn rcvhwm_limit(&self) -> usize {
        self.rcvhwm.max(0) as usize
    }
}

/// Milliseconds as libzmq encodes durations: -1 means none/infinite, 0 means zero.
pub(crate) fn ms_to_opt(ms: i64) -> Option<Duration> {
    if ms < 0 {
        None
    } else {
        Some(Duration::from_millis(ms as u64))
    }
}

/// Inverse of [`ms_to_opt`].
pub(crate) fn opt_to_ms(d: Option<Duration>) -> i64 {
    d.map(|d| d.as_millis() as i64).unwrap_or(-1)
}

/// Like [`ms_to_opt`] but for options where 0 means "off" (heartbeats, reconnect max).
pub(crate) fn ms_to_opt_zero_off(ms: i64) -> Option<Duration> {
    if ms <= 0 {
        None
    } else {
        Some(Duration::from_millis(ms as u64))
    }
}
