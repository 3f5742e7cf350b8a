//! The eleven classic libzmq socket types and the RFC 37 compatibility table.

/// A ZMTP socket type. Discriminants are libzmq's `ZMQ_PAIR`..`ZMQ_XSUB`.
///
/// `ZMQ_STREAM` (11) is not here: it does not speak ZMTP. Draft types
/// (CLIENT, SERVER, RADIO, ...) are not supported yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SocketType {
    Pair = 0,
    Pub = 1,
    Sub = 2,
    Req = 3,
    Rep = 4,
    Dealer = 5,
    Router = 6,
    Pull = 7,
    Push = 8,
    XPub = 9,
    XSub = 10,
}

impl SocketType {
    pub const ALL: [SocketType; 11] = [
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
    ];

    /// From libzmq's numeric constant (`ZMQ_PAIR` = 0 .. `ZMQ_XSUB` = 10).
    pub fn from_raw(v: i32) -> Option<SocketType> {
        usize::try_from(v).ok().and_then(|i| Self::ALL.get(i).copied())
    }

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
        }
    }

    /// Exact, case-sensitive match: libzmq compares with `memcmp`, so a
    /// peer sending `dealer` is not a DEALER to libzmq either.
    pub fn from_wire_name(name: &[u8]) -> Option<SocketType> {
        Self::ALL.into_iter().find(|t| t.wire_name().as_bytes() == name)
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
        }
    }

    /// libzmq puts an `Identity` property in READY only from these types
    /// (`mechanism_t::add_basic_properties`), even when it is empty.
    pub fn sends_identity(self) -> bool {
        matches!(self, SocketType::Req | SocketType::Dealer | SocketType::Router)
    }
}
