//! The one table of libzmq 4.3.5's socket options: how each is encoded, which
//! socket types take it, and how `zmq_getsockopt` sizes it.
//!
//! The values and their defaults live in [`crate::options::Options`]
//! (`Options::for_type` applies the per-type defaults); this table says what
//! shape each option has, so the C ABI, Python and the generic codec answer
//! alike. It follows what libzmq 4.3.5 answers as built by pyzmq (CURVE, no
//! GSSAPI/PGM/NORM/VMCI/TIPC, draft API off), checked probe by probe against
//! it by `tests/options` in `make test`, plus the GSSAPI options as Debian's
//! libzmq5 (built with MIT krb5) answers them.

use crate::options::opt;
use oxmq_proto::SocketType;

/// How an option's value is encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A native `int`.
    Int,
    /// A native `int64_t` / `uint64_t`.
    Int64,
    /// Raw bytes, returned without a terminator (routing ids).
    Bytes,
    /// A string, returned with its terminating NUL.
    Str,
}

/// How `zmq_getsockopt` checks the caller's buffer size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GetSize {
    /// Not readable: EINVAL.
    None,
    /// libzmq's `options_t` integers: the buffer must be exactly the size.
    Exact,
    /// The socket's own answers (RCVMORE, EVENTS, FD, ...): at least the size;
    /// the size written comes back.
    AtLeast,
}

/// Which socket types take an option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Types {
    /// Every socket type.
    All,
    /// Only these (libzmq's type numbers).
    Only(&'static [i32]),
}

impl Types {
    /// Whether `kind` takes the option.
    pub fn contains(self, kind: SocketType) -> bool {
        match self {
            Types::All => true,
            Types::Only(list) => list.contains(&(kind.as_raw())),
        }
    }
}

/// One socket option.
#[derive(Clone, Copy, Debug)]
pub struct OptionSpec {
    /// libzmq's number.
    pub num: i32,
    /// libzmq's name, without `ZMQ_`.
    pub name: &'static str,
    /// Value encoding.
    pub kind: Kind,
    /// Read rule.
    pub get: GetSize,
    /// Settable at all.
    pub set: bool,
    /// Socket types that take it (for both directions).
    pub types: Types,
    /// For string options: whether an empty value is accepted on set.
    pub empty_ok: bool,
}

const PUB: i32 = 1;
const SUB: i32 = 2;
const REQ: i32 = 3;
const REP: i32 = 4;
const DEALER: i32 = 5;
const ROUTER: i32 = 6;
const XPUB: i32 = 9;
const XSUB: i32 = 10;
const STREAM: i32 = 11;
// Draft RADIO/DISH.
const RADIO: i32 = 14;

// PUB is an XPUB in libzmq and REP a ROUTER: they take their bases' options.
const XPUB_TYPES: Types = Types::Only(&[PUB, XPUB]);
const ROUTER_TYPES: Types = Types::Only(&[REP, ROUTER]);
const PROBE_TYPES: Types = Types::Only(&[REQ, REP, DEALER, ROUTER]);
const TOPIC_TYPES: Types = Types::Only(&[PUB, SUB, XPUB, XSUB]);
// XPUB_MANUAL: SUBSCRIBE/UNSUBSCRIBE on a publisher.
const SUBSCRIBE_TYPES: Types = Types::Only(&[SUB, PUB, XPUB]);

const fn spec(num: i32, name: &'static str, kind: Kind, get: GetSize, set: bool, types: Types) -> OptionSpec {
    OptionSpec { num, name, kind, get, set, types, empty_ok: false }
}
/// A read-write integer option every socket has (libzmq `options_t`).
const fn int(num: i32, name: &'static str) -> OptionSpec {
    spec(num, name, Kind::Int, GetSize::Exact, true, Types::All)
}
/// A set-only integer option of some socket types.
const fn set_only(num: i32, name: &'static str, types: Types) -> OptionSpec {
    spec(num, name, Kind::Int, GetSize::None, true, types)
}
/// A read-only integer the socket answers itself.
const fn read_only(num: i32, name: &'static str, types: Types) -> OptionSpec {
    spec(num, name, Kind::Int, GetSize::AtLeast, false, types)
}
/// A read-write string option.
const fn string(num: i32, name: &'static str, empty_ok: bool) -> OptionSpec {
    OptionSpec { num, name, kind: Kind::Str, get: GetSize::AtLeast, set: true, types: Types::All, empty_ok }
}

/// Every socket option oxmq answers. An option not here is EINVAL both ways,
/// as in a libzmq built without it (VMCI, TIPC,
/// and the options of libzmq's draft API: IN/OUT_BATCH_SIZE, PRIORITY,
/// BUSY_POLL).
pub static OPTIONS: &[OptionSpec] = &[
    spec(opt::AFFINITY, "AFFINITY", Kind::Int64, GetSize::Exact, true, Types::All),
    spec(opt::ROUTING_ID, "ROUTING_ID", Kind::Bytes, GetSize::AtLeast, true, Types::All),
    // XPUB takes them too, with XPUB_MANUAL (EINVAL otherwise, from the pattern).
    OptionSpec {
        empty_ok: true,
        ..spec(opt::SUBSCRIBE, "SUBSCRIBE", Kind::Bytes, GetSize::None, true, SUBSCRIBE_TYPES)
    },
    OptionSpec {
        empty_ok: true,
        ..spec(opt::UNSUBSCRIBE, "UNSUBSCRIBE", Kind::Bytes, GetSize::None, true, SUBSCRIBE_TYPES)
    },
    int(opt::RATE, "RATE"),
    int(opt::RECOVERY_IVL, "RECOVERY_IVL"),
    int(opt::SNDBUF, "SNDBUF"),
    int(opt::RCVBUF, "RCVBUF"),
    read_only(opt::RCVMORE, "RCVMORE", Types::All),
    read_only(opt::FD, "FD", Types::All),
    read_only(opt::EVENTS, "EVENTS", Types::All),
    spec(opt::TYPE, "TYPE", Kind::Int, GetSize::Exact, false, Types::All),
    int(opt::LINGER, "LINGER"),
    int(opt::RECONNECT_IVL, "RECONNECT_IVL"),
    int(opt::BACKLOG, "BACKLOG"),
    int(opt::RECONNECT_IVL_MAX, "RECONNECT_IVL_MAX"),
    spec(opt::MAXMSGSIZE, "MAXMSGSIZE", Kind::Int64, GetSize::Exact, true, Types::All),
    int(opt::SNDHWM, "SNDHWM"),
    int(opt::RCVHWM, "RCVHWM"),
    int(opt::MULTICAST_HOPS, "MULTICAST_HOPS"),
    int(opt::RCVTIMEO, "RCVTIMEO"),
    int(opt::SNDTIMEO, "SNDTIMEO"),
    int(opt::IPV4ONLY, "IPV4ONLY"),
    spec(opt::LAST_ENDPOINT, "LAST_ENDPOINT", Kind::Str, GetSize::AtLeast, false, Types::All),
    set_only(opt::ROUTER_MANDATORY, "ROUTER_MANDATORY", ROUTER_TYPES),
    int(opt::TCP_KEEPALIVE, "TCP_KEEPALIVE"),
    int(opt::TCP_KEEPALIVE_CNT, "TCP_KEEPALIVE_CNT"),
    int(opt::TCP_KEEPALIVE_IDLE, "TCP_KEEPALIVE_IDLE"),
    int(opt::TCP_KEEPALIVE_INTVL, "TCP_KEEPALIVE_INTVL"),
    int(opt::IMMEDIATE, "IMMEDIATE"),
    set_only(opt::XPUB_VERBOSE, "XPUB_VERBOSE", XPUB_TYPES),
    set_only(opt::ROUTER_RAW, "ROUTER_RAW", ROUTER_TYPES),
    int(opt::IPV6, "IPV6"),
    spec(opt::MECHANISM, "MECHANISM", Kind::Int, GetSize::Exact, false, Types::All),
    int(opt::PLAIN_SERVER, "PLAIN_SERVER"),
    string(opt::PLAIN_USERNAME, "PLAIN_USERNAME", false),
    string(opt::PLAIN_PASSWORD, "PLAIN_PASSWORD", false),
    int(opt::CURVE_SERVER, "CURVE_SERVER"),
    // Keys: 32 binary bytes or 40 Z85 characters (+ NUL); sized by the security code.
    spec(opt::CURVE_PUBLICKEY, "CURVE_PUBLICKEY", Kind::Bytes, GetSize::AtLeast, true, Types::All),
    spec(opt::CURVE_SECRETKEY, "CURVE_SECRETKEY", Kind::Bytes, GetSize::AtLeast, true, Types::All),
    spec(opt::CURVE_SERVERKEY, "CURVE_SERVERKEY", Kind::Bytes, GetSize::AtLeast, true, Types::All),
    set_only(opt::PROBE_ROUTER, "PROBE_ROUTER", PROBE_TYPES),
    set_only(opt::REQ_CORRELATE, "REQ_CORRELATE", Types::Only(&[REQ])),
    set_only(opt::REQ_RELAXED, "REQ_RELAXED", Types::Only(&[REQ])),
    int(opt::CONFLATE, "CONFLATE"),
    string(opt::ZAP_DOMAIN, "ZAP_DOMAIN", false),
    set_only(opt::ROUTER_HANDOVER, "ROUTER_HANDOVER", ROUTER_TYPES),
    int(opt::TOS, "TOS"),
    set_only(opt::IPC_FILTER_PID, "IPC_FILTER_PID", Types::All),
    set_only(opt::IPC_FILTER_UID, "IPC_FILTER_UID", Types::All),
    set_only(opt::IPC_FILTER_GID, "IPC_FILTER_GID", Types::All),
    int(opt::GSSAPI_SERVER, "GSSAPI_SERVER"),
    string(opt::GSSAPI_PRINCIPAL, "GSSAPI_PRINCIPAL", false),
    string(opt::GSSAPI_SERVICE_PRINCIPAL, "GSSAPI_SERVICE_PRINCIPAL", false),
    int(opt::GSSAPI_PLAINTEXT, "GSSAPI_PLAINTEXT"),
    spec(
        opt::CONNECT_ROUTING_ID,
        "CONNECT_ROUTING_ID",
        Kind::Bytes,
        GetSize::None,
        true,
        Types::Only(&[REP, ROUTER, STREAM]),
    ),
    int(opt::HANDSHAKE_IVL, "HANDSHAKE_IVL"),
    string(opt::SOCKS_PROXY, "SOCKS_PROXY", false),
    // Draft RADIO takes XPUB_NODROP too (libzmq's radio_t::xsetsockopt).
    set_only(opt::XPUB_NODROP, "XPUB_NODROP", Types::Only(&[PUB, XPUB, RADIO])),
    set_only(opt::XPUB_MANUAL, "XPUB_MANUAL", XPUB_TYPES),
    OptionSpec {
        empty_ok: true,
        ..spec(opt::XPUB_WELCOME_MSG, "XPUB_WELCOME_MSG", Kind::Bytes, GetSize::None, true, XPUB_TYPES)
    },
    set_only(opt::STREAM_NOTIFY, "STREAM_NOTIFY", Types::Only(&[STREAM])),
    int(opt::INVERT_MATCHING, "INVERT_MATCHING"),
    int(opt::HEARTBEAT_IVL, "HEARTBEAT_IVL"),
    int(opt::HEARTBEAT_TTL, "HEARTBEAT_TTL"),
    int(opt::HEARTBEAT_TIMEOUT, "HEARTBEAT_TIMEOUT"),
    set_only(opt::XPUB_VERBOSER, "XPUB_VERBOSER", XPUB_TYPES),
    int(opt::CONNECT_TIMEOUT, "CONNECT_TIMEOUT"),
    int(opt::TCP_MAXRT, "TCP_MAXRT"),
    read_only(opt::THREAD_SAFE, "THREAD_SAFE", Types::All),
    int(opt::MULTICAST_MAXTPDU, "MULTICAST_MAXTPDU"),
    int(opt::USE_FD, "USE_FD"),
    string(opt::BINDTODEVICE, "BINDTODEVICE", false),
    int(opt::GSSAPI_PRINCIPAL_NAMETYPE, "GSSAPI_PRINCIPAL_NAMETYPE"),
    int(opt::GSSAPI_SERVICE_PRINCIPAL_NAMETYPE, "GSSAPI_SERVICE_PRINCIPAL_NAMETYPE"),
    int(93, "ZAP_ENFORCE_DOMAIN"),
    int(opt::LOOPBACK_FASTPATH, "LOOPBACK_FASTPATH"),
    int(opt::MULTICAST_LOOP, "MULTICAST_LOOP"),
    set_only(opt::XPUB_MANUAL_LAST_VALUE, "XPUB_MANUAL_LAST_VALUE", XPUB_TYPES),
    string(opt::SOCKS_USERNAME, "SOCKS_USERNAME", true),
    string(opt::SOCKS_PASSWORD, "SOCKS_PASSWORD", true),
    set_only(opt::ONLY_FIRST_SUBSCRIBE, "ONLY_FIRST_SUBSCRIBE", Types::Only(&[PUB, XPUB, XSUB])),
    int(opt::RECONNECT_STOP, "RECONNECT_STOP"),
    read_only(opt::TOPICS_COUNT, "TOPICS_COUNT", TOPIC_TYPES),
    // Accept filters (s3-options): set-only, as in libzmq.
    spec(opt::TCP_ACCEPT_FILTER, "TCP_ACCEPT_FILTER", Kind::Bytes, GetSize::None, true, Types::All),
    // Draft options (s3-draftopts), as a libzmq built with ZMQ_BUILD_DRAFT_API
    // answers them. ROUTER_NOTIFY reads on every type (options_t) but only
    // ROUTER and REP set it (checked in `Socket::set_option`).
    int(opt::ROUTER_NOTIFY, "ROUTER_NOTIFY"),
    spec(opt::METADATA, "METADATA", Kind::Bytes, GetSize::None, true, Types::All),
    OptionSpec { empty_ok: true, ..spec(opt::HELLO_MSG, "HELLO_MSG", Kind::Bytes, GetSize::None, true, Types::All) },
    OptionSpec {
        empty_ok: true,
        ..spec(opt::DISCONNECT_MSG, "DISCONNECT_MSG", Kind::Bytes, GetSize::None, true, Types::All)
    },
    OptionSpec { empty_ok: true, ..spec(opt::HICCUP_MSG, "HICCUP_MSG", Kind::Bytes, GetSize::None, true, Types::All) },
    // ws:// and wss:// (libzmq draft options; set-only there too).
    wss_pem(opt::WSS_KEY_PEM, "WSS_KEY_PEM"),
    wss_pem(opt::WSS_CERT_PEM, "WSS_CERT_PEM"),
    wss_pem(opt::WSS_TRUST_PEM, "WSS_TRUST_PEM"),
    wss_pem(opt::WSS_HOSTNAME, "WSS_HOSTNAME"),
    set_only(opt::WSS_TRUST_SYSTEM, "WSS_TRUST_SYSTEM", Types::All),
    // oxmq-only: the counters of `Socket::stats`, read-only (oxmq_stats.h).
    stat(opt::STATS_MSGS_IN, "STATS_MSGS_IN"),
    stat(opt::STATS_BYTES_IN, "STATS_BYTES_IN"),
    stat(opt::STATS_MSGS_OUT, "STATS_MSGS_OUT"),
    stat(opt::STATS_BYTES_OUT, "STATS_BYTES_OUT"),
    stat(opt::STATS_DROPS_HWM, "STATS_DROPS_HWM"),
    stat(opt::STATS_DROPS_NO_ROUTE, "STATS_DROPS_NO_ROUTE"),
    stat(opt::STATS_DROPS_CONFLATE, "STATS_DROPS_CONFLATE"),
    stat(opt::STATS_DROPS_OVERSIZE, "STATS_DROPS_OVERSIZE"),
    stat(opt::STATS_RECONNECTS, "STATS_RECONNECTS"),
    stat(opt::STATS_HANDSHAKE_FAILED_PROTOCOL, "STATS_HANDSHAKE_FAILED_PROTOCOL"),
    stat(opt::STATS_HANDSHAKE_FAILED_AUTH, "STATS_HANDSHAKE_FAILED_AUTH"),
    stat(opt::STATS_HANDSHAKE_FAILED_TIMEOUT, "STATS_HANDSHAKE_FAILED_TIMEOUT"),
    stat(opt::STATS_HANDSHAKE_FAILED_OTHER, "STATS_HANDSHAKE_FAILED_OTHER"),
    stat(opt::STATS_QUEUED_IN, "STATS_QUEUED_IN"),
    stat(opt::STATS_QUEUED_OUT, "STATS_QUEUED_OUT"),
    stat(opt::STATS_PEERS, "STATS_PEERS"),
];

/// The first and last oxmq-only option numbers (libzmq's are all below 200).
pub const OXMQ_ONLY: std::ops::RangeInclusive<i32> = opt::STATS_MSGS_IN..=opt::STATS_PEERS;

/// A read-only oxmq statistics counter.
const fn stat(num: i32, name: &'static str) -> OptionSpec {
    spec(num, name, Kind::Int64, GetSize::Exact, false, Types::All)
}

/// A set-only byte-string WSS_* option (any length, empty included).
const fn wss_pem(num: i32, name: &'static str) -> OptionSpec {
    OptionSpec { empty_ok: true, ..spec(num, name, Kind::Bytes, GetSize::None, true, Types::All) }
}

/// A libzmq option number that oxmq does not build: what its value is, so a
/// binding converts the caller's value as libzmq's bindings do and the core
/// answers EINVAL, as a libzmq built without the feature does.
#[derive(Clone, Copy, Debug)]
pub struct NotBuilt {
    /// libzmq's number.
    pub num: i32,
    /// libzmq's name, without `ZMQ_`.
    pub name: &'static str,
    /// Value encoding in libzmq.
    pub kind: Kind,
}

const fn not_built(num: i32, name: &'static str, kind: Kind) -> NotBuilt {
    NotBuilt { num, name, kind }
}

/// libzmq 4.3.5's options (stable and draft) that oxmq does not build. An
/// option moves from here to [`OPTIONS`] when oxmq implements it.
pub static NOT_BUILT: &[NotBuilt] = &[
    not_built(85, "VMCI_BUFFER_SIZE", Kind::Int64),
    not_built(86, "VMCI_BUFFER_MIN_SIZE", Kind::Int64),
    not_built(87, "VMCI_BUFFER_MAX_SIZE", Kind::Int64),
    not_built(88, "VMCI_CONNECT_TIMEOUT", Kind::Int),
    not_built(101, "IN_BATCH_SIZE", Kind::Int),
    not_built(102, "OUT_BATCH_SIZE", Kind::Int),
    not_built(112, "PRIORITY", Kind::Int),
    not_built(113, "BUSY_POLL", Kind::Int),
    not_built(115, "XSUB_VERBOSE_UNSUBSCRIBE", Kind::Int),
    not_built(117, "NORM_MODE", Kind::Int),
    not_built(118, "NORM_UNICAST_NACK", Kind::Int),
    not_built(119, "NORM_BUFFER_SIZE", Kind::Int),
    not_built(120, "NORM_SEGMENT_SIZE", Kind::Int),
    not_built(121, "NORM_BLOCK_SIZE", Kind::Int),
    not_built(122, "NORM_NUM_PARITY", Kind::Int),
    not_built(123, "NORM_NUM_AUTOPARITY", Kind::Int),
    not_built(124, "NORM_PUSH", Kind::Int),
];

/// How option `num`'s value is encoded, for every option libzmq names,
/// built or not. `None` for a number libzmq does not have.
pub fn kind_of(num: i32) -> Option<Kind> {
    lookup(num).map(|s| s.kind).or_else(|| NOT_BUILT.iter().find(|n| n.num == num).map(|n| n.kind))
}

/// Whether option `num` takes a byte string (raw or C string) rather than an
/// integer. Unknown numbers are integers, as pyzmq and libzmq treat them.
pub fn takes_bytes(num: i32) -> bool {
    matches!(kind_of(num), Some(Kind::Bytes | Kind::Str))
}

/// Whether option `num` is a 64-bit integer.
pub fn is_int64(num: i32) -> bool {
    kind_of(num) == Some(Kind::Int64)
}

/// CURVE keys, which the C ABI gives as 32 raw bytes or Z85 text depending
/// on the caller's buffer; it sizes them itself.
pub fn is_security_option(num: i32) -> bool {
    matches!(num, opt::CURVE_PUBLICKEY | opt::CURVE_SECRETKEY | opt::CURVE_SERVERKEY)
}

/// The table entry for option `num`, if oxmq has it.
pub fn lookup(num: i32) -> Option<&'static OptionSpec> {
    OPTIONS.iter().find(|s| s.num == num)
}

/// The entry for `num` if `kind` takes it.
pub fn lookup_for(num: i32, kind: SocketType) -> Option<&'static OptionSpec> {
    lookup(num).filter(|s| s.types.contains(kind))
}

/// Bytes a value of this kind takes in `zmq_getsockopt`'s buffer.
pub fn encoded_len(kind: Kind, value_len: usize) -> usize {
    match kind {
        Kind::Int => 4,
        Kind::Int64 => 8,
        Kind::Bytes => value_len,
        Kind::Str => value_len + 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_unique() {
        for (i, a) in OPTIONS.iter().enumerate() {
            for b in &OPTIONS[i + 1..] {
                assert_ne!(a.num, b.num, "{} and {} share a number", a.name, b.name);
            }
        }
    }

    #[test]
    fn per_type_lookup() {
        assert!(lookup_for(opt::SUBSCRIBE, SocketType::Sub).is_some());
        assert!(lookup_for(opt::SUBSCRIBE, SocketType::XSub).is_none());
        assert!(lookup_for(opt::ROUTER_MANDATORY, SocketType::Rep).is_some());
        assert!(lookup_for(opt::XPUB_NODROP, SocketType::Pub).is_some());
        assert!(lookup_for(opt::XPUB_NODROP, SocketType::Sub).is_none());
        assert!(lookup(opt::GSSAPI_PRINCIPAL).is_some_and(|s| s.kind == Kind::Str), "GSSAPI is built in");
        assert!(lookup(85).is_none(), "VMCI (VMCI_BUFFER_SIZE) is not built in");
    }

    #[test]
    fn not_built_is_disjoint_and_kinds_answer_for_both() {
        for n in NOT_BUILT {
            assert!(lookup(n.num).is_none(), "{} is both built and not built", n.name);
        }
        assert_eq!(kind_of(opt::MAXMSGSIZE), Some(Kind::Int64));
        assert!(takes_bytes(opt::ROUTING_ID) && takes_bytes(opt::LAST_ENDPOINT) && takes_bytes(63));
        assert!(!takes_bytes(opt::SNDHWM) && !takes_bytes(9999));
        assert!(is_int64(opt::AFFINITY) && is_int64(85) && !is_int64(opt::LINGER));
    }
}
