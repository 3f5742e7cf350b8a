//! The classic libzmq socket types and the RFC 37 compatibility table.

/// A socket type. Discriminants are libzmq's `ZMQ_PAIR`..`ZMQ_STREAM`.
///
/// `Stream` (11) does not speak ZMTP: it is raw TCP, compatible with no ZMTP
/// peer. The draft types sit in [`SocketType::DRAFT`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SocketType {
    /// One peer, both ways: for two threads or processes that talk only to each other.
    Pair = 0,
    /// Publisher: sends every message to each subscriber whose subscriptions match; never receives.
    Pub = 1,
    /// Subscriber: receives the publishers' messages that match its subscriptions; never sends.
    Sub = 2,
    /// Client of request/reply: a request, then its reply, in strict turn, load-balanced over peers.
    Req = 3,
    /// Server of request/reply: receives a request, then sends its reply to whoever asked.
    Rep = 4,
    /// Asynchronous request/reply: load-balances sends and fair-queues receives, no turn-taking.
    Dealer = 5,
    /// Routes by peer: each received message starts with the sender's routing id, each sent one with the recipient's.
    Router = 6,
    /// Pipeline sink: fair-queues messages from its pushers; never sends.
    Pull = 7,
    /// Pipeline source: load-balances messages over its pullers; never receives.
    Push = 8,
    /// A PUB that also receives its subscribers' subscriptions as messages (for proxies).
    XPub = 9,
    /// A SUB that sends its subscriptions as messages (for proxies).
    XSub = 10,
    /// Raw TCP: no ZMTP; each message is a routing id frame and the bytes.
    Stream = 11,
    // Draft thread-safe types (CLIENT/SERVER, SCATTER/GATHER, PEER/CHANNEL).
    /// Draft, thread-safe: single-frame replies addressed by the routing id on each received message.
    Server = 12,
    /// Draft, thread-safe: single-frame messages, load-balanced out and fair-queued in.
    Client = 13,
    /// Draft, thread-safe PULL: single-frame messages fair-queued from scatterers.
    Gather = 16,
    /// Draft, thread-safe PUSH: single-frame messages load-balanced over gatherers.
    Scatter = 17,
    /// Draft, thread-safe: connects to many peers and addresses each by routing id (`zmq_connect_peer`).
    Peer = 19,
    /// Draft, thread-safe PAIR: one peer, single-frame messages.
    Channel = 20,
    // Draft RADIO/DISH (groups; also over udp://).
    /// Draft, thread-safe publisher of messages tagged with a group (over tcp, ipc, inproc or udp).
    Radio = 14,
    /// Draft, thread-safe subscriber that joins groups and receives RADIO messages of those groups.
    Dish = 15,
    // Draft DGRAM (raw datagrams over udp://; not thread-safe).
    /// Draft: raw udp datagrams, each message an `ip:port` address frame and the body.
    Dgram = 18,
}

impl SocketType {
    /// The stable socket types, PAIR (0) to STREAM (11), each at the index of its libzmq number (the draft types are not here).
    pub const ALL: [SocketType; 12] = [
        SocketType::Pair,
        SocketType::Pub,
        SocketType::Sub,
        SocketType::Req,
        SocketType::Rep,
        SocketType::Dealer,
        SocketType::Router,
        SocketType::Pull,
        SocketType::Push,
        SocketType::XPub,
        SocketType::XSub,
        SocketType::Stream,
    ];

    /// From libzmq's numeric constant (`ZMQ_PAIR` = 0 .. `ZMQ_STREAM` = 11).
    pub fn from_raw(v: i32) -> Option<SocketType> {
        usize::try_from(v).ok().and_then(|i| Self::ALL.get(i).copied()).or_else(|| Self::from_raw_draft(v))
    }

    /// The draft socket types of libzmq 4.3.5 that oxmq has (draft API),
    /// thread-safe like libzmq's: CLIENT/SERVER, SCATTER/GATHER, PEER/CHANNEL,
    /// RADIO/DISH.
    pub const DRAFT: [SocketType; 8] = [
        SocketType::Server,
        SocketType::Client,
        SocketType::Gather,
        SocketType::Scatter,
        SocketType::Peer,
        SocketType::Channel,
        // Draft RADIO/DISH.
        SocketType::Radio,
        SocketType::Dish,
    ];

    fn from_raw_draft(v: i32) -> Option<SocketType> {
        Self::DRAFT.into_iter().chain(Self::DRAFT_UNSAFE).find(|t| t.as_raw() == v)
    }

    /// Draft DGRAM: a draft type that is not thread-safe (it has a
    /// `ZMQ_FD`, as libzmq's `dgram_t`), so it stays out of [`Self::DRAFT`].
    pub const DRAFT_UNSAFE: [SocketType; 1] = [SocketType::Dgram];

    /// libzmq's `ZMQ_THREAD_SAFE`: these sockets may be used from several
    /// threads at once (and have no `ZMQ_FD`).
    pub fn is_thread_safe(self) -> bool {
        Self::DRAFT.contains(&self)
    }

    /// REQ and REP: one message in flight per round trip, each side waiting
    /// for the other's. Their threads send and receive on the connection
    /// themselves when it is idle (nothing to batch, a hand-off saved).
    pub fn is_round_trip(self) -> bool {
        matches!(self, SocketType::Req | SocketType::Rep)
    }

    /// Draft RADIO/DISH: one of the two.
    pub fn is_radio_dish(self) -> bool {
        matches!(self, SocketType::Radio | SocketType::Dish)
    }

    /// libzmq's number for the type (`ZMQ_PAIR` 0 ... `ZMQ_DGRAM` 18).
    pub fn as_raw(self) -> i32 {
        self as i32
    }

    /// The value of the `Socket-Type` READY property.
    pub fn wire_name(self) -> &'static str {
        match self {
            SocketType::Pair => "PAIR",
            SocketType::Pub => "PUB",
            SocketType::Sub => "SUB",
            SocketType::Req => "REQ",
            SocketType::Rep => "REP",
            SocketType::Dealer => "DEALER",
            SocketType::Router => "ROUTER",
            SocketType::Pull => "PULL",
            SocketType::Push => "PUSH",
            SocketType::XPub => "XPUB",
            SocketType::XSub => "XSUB",
            SocketType::Stream => "STREAM",
            SocketType::Server => "SERVER",
            SocketType::Client => "CLIENT",
            SocketType::Gather => "GATHER",
            SocketType::Scatter => "SCATTER",
            SocketType::Peer => "PEER",
            SocketType::Channel => "CHANNEL",
            SocketType::Radio => "RADIO",
            SocketType::Dish => "DISH",
            SocketType::Dgram => "DGRAM",
        }
    }

    /// Exact, case-sensitive match: libzmq compares with `memcmp`, so a
    /// peer sending `dealer` is not a DEALER to libzmq either.
    pub fn from_wire_name(name: &[u8]) -> Option<SocketType> {
        Self::ALL.into_iter().chain(Self::DRAFT).chain(Self::DRAFT_UNSAFE).find(|t| t.wire_name().as_bytes() == name)
    }

    /// Whether a socket of type `self` may talk to a peer of type `peer`
    /// (RFC 37; libzmq `mechanism_t::check_socket_type`). Symmetric.
    pub fn is_compatible_with(self, peer: SocketType) -> bool {
        use SocketType::*;
        match self {
            Pair => peer == Pair,
            Req => matches!(peer, Rep | Router),
            Rep => matches!(peer, Req | Dealer),
            Dealer => matches!(peer, Rep | Dealer | Router),
            Router => matches!(peer, Req | Dealer | Router),
            Pull => peer == Push,
            Push => peer == Pull,
            Pub | XPub => matches!(peer, Sub | XSub),
            Sub | XSub => matches!(peer, Pub | XPub),
            Stream => false,
            // Draft types (RFC 41, 49, 51, 52; libzmq mechanism_base).
            Server => peer == Client,
            Client => peer == Server,
            Gather => peer == Scatter,
            Scatter => peer == Gather,
            Peer => peer == Peer,
            Channel => peer == Channel,
            Radio => peer == Dish,
            Dish => peer == Radio,
            // Draft DGRAM: ZMTP only over ws:// (tcp/ipc are raw), as libzmq.
            Dgram => peer == Dgram,
        }
    }

    /// libzmq puts an `Identity` property in READY only from these types
    /// (`mechanism_t::add_basic_properties`), even when it is empty.
    pub fn sends_identity(self) -> bool {
        matches!(self, SocketType::Req | SocketType::Dealer | SocketType::Router)
    }
}
