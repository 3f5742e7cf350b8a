//! Socket options: libzmq's option numbers and the values a socket carries.
//!
//! `Options` is plain data. A socket owns one; each connection (engine) gets an
//! `Arc` snapshot taken when it was created, as libzmq does, so changing an
//! option affects later binds and connects only.

use std::time::Duration;

use oxmq_proto::{CurveConfig, MechanismConfig, PlainConfig};
use zeroize::Zeroizing;

/// libzmq option numbers (`zmq.h`), used by the generic get/set API, the C ABI and Python.
#[allow(missing_docs)]
pub mod opt {
    pub const AFFINITY: i32 = 4;
    pub const ROUTING_ID: i32 = 5;
    pub const SUBSCRIBE: i32 = 6;
    pub const UNSUBSCRIBE: i32 = 7;
    pub const RATE: i32 = 8;
    pub const RECOVERY_IVL: i32 = 9;
    pub const SNDBUF: i32 = 11;
    pub const RCVBUF: i32 = 12;
    pub const RCVMORE: i32 = 13;
    pub const FD: i32 = 14;
    pub const EVENTS: i32 = 15;
    pub const TYPE: i32 = 16;
    pub const LINGER: i32 = 17;
    pub const RECONNECT_IVL: i32 = 18;
    pub const BACKLOG: i32 = 19;
    pub const RECONNECT_IVL_MAX: i32 = 21;
    pub const MAXMSGSIZE: i32 = 22;
    pub const SNDHWM: i32 = 23;
    pub const RCVHWM: i32 = 24;
    pub const MULTICAST_HOPS: i32 = 25;
    pub const RCVTIMEO: i32 = 27;
    pub const SNDTIMEO: i32 = 28;
    pub const LAST_ENDPOINT: i32 = 32;
    pub const ROUTER_MANDATORY: i32 = 33;
    pub const TCP_KEEPALIVE: i32 = 34;
    pub const TCP_KEEPALIVE_CNT: i32 = 35;
    pub const TCP_KEEPALIVE_IDLE: i32 = 36;
    pub const TCP_KEEPALIVE_INTVL: i32 = 37;
    pub const IMMEDIATE: i32 = 39;
    pub const XPUB_VERBOSE: i32 = 40;
    pub const ROUTER_RAW: i32 = 41;
    pub const IPV6: i32 = 42;
    pub const MECHANISM: i32 = 43;
    pub const PLAIN_SERVER: i32 = 44;
    pub const PLAIN_USERNAME: i32 = 45;
    pub const PLAIN_PASSWORD: i32 = 46;
    pub const CURVE_SERVER: i32 = 47;
    pub const CURVE_PUBLICKEY: i32 = 48;
    pub const CURVE_SECRETKEY: i32 = 49;
    pub const CURVE_SERVERKEY: i32 = 50;
    pub const PROBE_ROUTER: i32 = 51;
    pub const REQ_CORRELATE: i32 = 52;
    pub const REQ_RELAXED: i32 = 53;
    pub const CONFLATE: i32 = 54;
    pub const ZAP_DOMAIN: i32 = 55;
    pub const ROUTER_HANDOVER: i32 = 56;
    pub const TOS: i32 = 57;
    pub const CONNECT_ROUTING_ID: i32 = 61;
    pub const GSSAPI_SERVER: i32 = 62;
    pub const GSSAPI_PRINCIPAL: i32 = 63;
    pub const GSSAPI_SERVICE_PRINCIPAL: i32 = 64;
    pub const GSSAPI_PLAINTEXT: i32 = 65;
    pub const GSSAPI_PRINCIPAL_NAMETYPE: i32 = 90;
    pub const GSSAPI_SERVICE_PRINCIPAL_NAMETYPE: i32 = 91;
    pub const HANDSHAKE_IVL: i32 = 66;
    pub const SOCKS_PROXY: i32 = 68;
    pub const XPUB_NODROP: i32 = 69;
    pub const BLOCKY: i32 = 70;
    pub const XPUB_MANUAL: i32 = 71;
    pub const XPUB_WELCOME_MSG: i32 = 72;
    pub const STREAM_NOTIFY: i32 = 73;
    pub const INVERT_MATCHING: i32 = 74;
    pub const HEARTBEAT_IVL: i32 = 75;
    pub const HEARTBEAT_TTL: i32 = 76;
    pub const HEARTBEAT_TIMEOUT: i32 = 77;
    pub const XPUB_VERBOSER: i32 = 78;
    pub const CONNECT_TIMEOUT: i32 = 79;
    pub const TCP_MAXRT: i32 = 80;
    pub const THREAD_SAFE: i32 = 81;
    pub const MULTICAST_MAXTPDU: i32 = 84;
    pub const BINDTODEVICE: i32 = 92;
    // Deprecated names libzmq 4.3.5 still answers.
    pub const IPV4ONLY: i32 = 31;
    pub const IPC_FILTER_PID: i32 = 58;
    pub const IPC_FILTER_UID: i32 = 59;
    pub const IPC_FILTER_GID: i32 = 60;
    pub const USE_FD: i32 = 89;
    // Options of libzmq's draft API that its release builds answer all the same.
    pub const LOOPBACK_FASTPATH: i32 = 94;
    pub const MULTICAST_LOOP: i32 = 96;
    pub const XPUB_MANUAL_LAST_VALUE: i32 = 98;
    pub const SOCKS_USERNAME: i32 = 99;
    pub const SOCKS_PASSWORD: i32 = 100;
    pub const ONLY_FIRST_SUBSCRIBE: i32 = 108;
    pub const RECONNECT_STOP: i32 = 109;
    pub const TOPICS_COUNT: i32 = 116;
    pub const ZAP_ENFORCE_DOMAIN: i32 = 93;
    // Accept filters (s3-options).
    pub const TCP_ACCEPT_FILTER: i32 = 38;
    // ws:// and wss:// (libzmq draft options, set-only).
    pub const WSS_KEY_PEM: i32 = 103;
    pub const WSS_CERT_PEM: i32 = 104;
    pub const WSS_TRUST_PEM: i32 = 105;
    pub const WSS_HOSTNAME: i32 = 106;
    pub const WSS_TRUST_SYSTEM: i32 = 107;
    // libzmq's draft API options (s3-draftopts).
    pub const METADATA: i32 = 95;
    pub const ROUTER_NOTIFY: i32 = 97;
    pub const HELLO_MSG: i32 = 110;
    pub const DISCONNECT_MSG: i32 = 111;
    pub const HICCUP_MSG: i32 = 114;
    // oxmq-only, read-only statistics (`Socket::stats`), as 64-bit integers.
    // From 20000 up: libzmq's socket options are all below 200.
    pub const STATS_MSGS_IN: i32 = 20000;
    pub const STATS_BYTES_IN: i32 = 20001;
    pub const STATS_MSGS_OUT: i32 = 20002;
    pub const STATS_BYTES_OUT: i32 = 20003;
    pub const STATS_DROPS_HWM: i32 = 20004;
    pub const STATS_DROPS_NO_ROUTE: i32 = 20005;
    pub const STATS_DROPS_CONFLATE: i32 = 20006;
    pub const STATS_DROPS_OVERSIZE: i32 = 20007;
    pub const STATS_RECONNECTS: i32 = 20008;
    pub const STATS_HANDSHAKE_FAILED_PROTOCOL: i32 = 20009;
    pub const STATS_HANDSHAKE_FAILED_AUTH: i32 = 20010;
    pub const STATS_HANDSHAKE_FAILED_TIMEOUT: i32 = 20011;
    pub const STATS_HANDSHAKE_FAILED_OTHER: i32 = 20012;
    pub const STATS_QUEUED_IN: i32 = 20013;
    pub const STATS_QUEUED_OUT: i32 = 20014;
    pub const STATS_PEERS: i32 = 20015;
}

/// `ZMQ_ROUTER_NOTIFY` bits.
#[allow(missing_docs)]
pub mod notify {
    pub const CONNECT: i32 = 1;
    pub const DISCONNECT: i32 = 2;
}

/// `ZMQ_MECHANISM` values.
#[allow(missing_docs)]
pub mod mechanism {
    pub const NULL: i32 = 0;
    pub const PLAIN: i32 = 1;
    pub const CURVE: i32 = 2;
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
