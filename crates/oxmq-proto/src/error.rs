//! Error types, split by whose fault the failure is.
//!
//! * [`ProtocolError`]: the bytes the peer sent are malformed or break ZMTP.
//!   The only sane reaction is to close the connection (libzmq does).
//! * [`HandshakeError`]: the handshake failed. Wraps [`ProtocolError`] and
//!   adds failures that are not malformed bytes but a refusal: wrong version,
//!   wrong mechanism, incompatible socket types, or an ERROR from the peer.
//! * [`UsageError`]: the local caller asked for something that cannot be put
//!   on the wire. Never caused by the peer.

use std::fmt;

use crate::socket_type::SocketType;

/// libzmq's `ZMQ_PROTOCOL_ERROR_*` codes (from `zmq.h`), as reported in
/// `ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL` monitor events.
pub mod zmq_codes {
    /// A ZMTP protocol violation of no more specific kind.
    pub const ZMTP_UNSPECIFIED: u32 = 0x1000_0000;
    /// A command the handshake's state does not expect (e.g. WELCOME from a client).
    pub const ZMTP_UNEXPECTED_COMMAND: u32 = 0x1000_0001;
    /// A CURVE nonce that does not increase, or commands out of order.
    pub const ZMTP_INVALID_SEQUENCE: u32 = 0x1000_0002;
    /// CURVE's key exchange failed (a cookie or a box that does not open).
    pub const ZMTP_KEY_EXCHANGE: u32 = 0x1000_0003;
    /// A malformed command of no more specific kind.
    pub const ZMTP_MALFORMED_COMMAND_UNSPECIFIED: u32 = 0x1000_0011;
    /// A malformed CURVE MESSAGE command.
    pub const ZMTP_MALFORMED_COMMAND_MESSAGE: u32 = 0x1000_0012;
    /// A malformed HELLO command.
    pub const ZMTP_MALFORMED_COMMAND_HELLO: u32 = 0x1000_0013;
    /// A malformed INITIATE command.
    pub const ZMTP_MALFORMED_COMMAND_INITIATE: u32 = 0x1000_0014;
    /// A malformed ERROR command.
    pub const ZMTP_MALFORMED_COMMAND_ERROR: u32 = 0x1000_0015;
    /// A malformed READY command.
    pub const ZMTP_MALFORMED_COMMAND_READY: u32 = 0x1000_0016;
    /// A malformed WELCOME command.
    pub const ZMTP_MALFORMED_COMMAND_WELCOME: u32 = 0x1000_0017;
    /// Metadata properties that do not parse, or a Socket-Type the socket cannot talk to.
    pub const ZMTP_INVALID_METADATA: u32 = 0x1000_0018;
    /// A cryptographic check failed (a box that does not open, a bad vouch).
    pub const ZMTP_CRYPTOGRAPHIC: u32 = 0x1100_0001;
    /// The peer's greeting names another security mechanism.
    pub const ZMTP_MECHANISM_MISMATCH: u32 = 0x1100_0002;
    /// A ZAP failure of no more specific kind.
    pub const ZAP_UNSPECIFIED: u32 = 0x2000_0000;
    /// The ZAP handler's reply does not have ZAP's frames.
    pub const ZAP_MALFORMED_REPLY: u32 = 0x2000_0001;
    /// The ZAP reply answers another request id.
    pub const ZAP_BAD_REQUEST_ID: u32 = 0x2000_0002;
    /// The ZAP reply's version is not `1.0`.
    pub const ZAP_BAD_VERSION: u32 = 0x2000_0003;
    /// The ZAP reply's status code is not 200, 300, 400 or 500.
    pub const ZAP_INVALID_STATUS_CODE: u32 = 0x2000_0004;
    /// The ZAP reply's metadata frame does not parse.
    pub const ZAP_INVALID_METADATA: u32 = 0x2000_0005;
}

/// The peer sent bytes that are malformed or violate ZMTP.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProtocolError {
    /// Greeting octet 0 is not `0xFF` or bit 0 of octet 9 is clear.
    BadSignature,
    /// The greeting announces a version below 3. `major` is the ZMTP major
    /// version as libzmq classifies the peer: 1 or 2.
    UnsupportedVersion {
        /// The ZMTP major version the peer speaks (1 or 2).
        major: u8,
    },
    /// Flag bits 3..7 of a frame header are set; they are reserved.
    ReservedFlagBits {
        /// The whole flags octet as received.
        flags: u8,
    },
    /// A command frame had MORE set; commands are always single frames.
    CommandWithMore,
    /// A long-form size with the top bit set (or too big for this platform's
    /// address space).
    FrameTooLong {
        /// The size the header announced.
        size: u64,
    },
    /// A frame body is larger than the configured `ZMQ_MAXMSGSIZE`.
    MessageTooLarge {
        /// The frame body's size, in octets.
        size: u64,
        /// The `ZMQ_MAXMSGSIZE` it exceeds.
        max: u64,
    },
    /// A command frame whose body cannot be parsed. `name` is the command
    /// name if it could be read, else empty.
    MalformedCommand {
        /// The command's name (empty when even that did not parse).
        name: Vec<u8>,
    },
    /// Metadata (READY / INITIATE properties) does not parse. `offset` is
    /// where, relative to the start of the property list, parsing failed.
    MalformedMetadata {
        /// Where parsing failed, from the start of the property list.
        offset: usize,
    },
    /// A command that is not valid at this point of the handshake.
    UnexpectedCommand {
        /// The command's name.
        name: Vec<u8>,
    },
    /// A message (non-command) frame arrived before the handshake finished.
    UnexpectedMessage,
    /// The peer's READY lacks the `Socket-Type` property.
    MissingSocketType,
    /// A CURVE box did not open: wrong keys, or bytes altered on the way.
    /// `what` names the box (`"HELLO"`, `"MESSAGE"`...), never its contents.
    Cryptographic {
        /// Which box (`"HELLO"`, `"MESSAGE"`...), never its contents.
        what: &'static str,
    },
    /// A CURVE vouch or cookie does not match the keys of this connection.
    KeyExchange,
    /// A CURVE short nonce did not increase (a replayed or reordered box).
    InvalidSequence,
    /// A ZMTP/1.0 frame with size 0: the size counts the flags octet, so
    /// every frame has at least 1 (libzmq: EPROTO).
    EmptyZmtp10Frame,
}

impl ProtocolError {
    /// The libzmq `ZMQ_PROTOCOL_ERROR_*` value libzmq reports for the same
    /// fault, for `ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL` monitor events.
    pub fn zmq_protocol_error_code(&self) -> u32 {
        use zmq_codes::*;
        match self {
            ProtocolError::MalformedCommand { name } => match name.as_slice() {
                b"READY" => ZMTP_MALFORMED_COMMAND_READY,
                b"ERROR" => ZMTP_MALFORMED_COMMAND_ERROR,
                b"HELLO" => ZMTP_MALFORMED_COMMAND_HELLO,
                b"WELCOME" => ZMTP_MALFORMED_COMMAND_WELCOME,
                b"INITIATE" => ZMTP_MALFORMED_COMMAND_INITIATE,
                b"MESSAGE" => ZMTP_MALFORMED_COMMAND_MESSAGE,
                _ => ZMTP_MALFORMED_COMMAND_UNSPECIFIED,
            },
            ProtocolError::MalformedMetadata { .. } | ProtocolError::MissingSocketType => ZMTP_INVALID_METADATA,
            ProtocolError::UnexpectedCommand { .. } | ProtocolError::UnexpectedMessage => ZMTP_UNEXPECTED_COMMAND,
            ProtocolError::Cryptographic { .. } => ZMTP_CRYPTOGRAPHIC,
            ProtocolError::KeyExchange => ZMTP_KEY_EXCHANGE,
            ProtocolError::InvalidSequence => ZMTP_INVALID_SEQUENCE,
            _ => ZMTP_UNSPECIFIED,
        }
    }
}

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProtocolError::BadSignature => f.write_str("greeting signature is not ZMTP 3.x"),
            ProtocolError::UnsupportedVersion { major } => {
                write!(f, "peer speaks ZMTP/{major}.0, which is not supported")
            }
            ProtocolError::ReservedFlagBits { flags } => {
                write!(f, "reserved frame flag bits set (flags {flags:#04x})")
            }
            ProtocolError::CommandWithMore => f.write_str("command frame has the MORE flag"),
            ProtocolError::FrameTooLong { size } => write!(f, "frame size {size} is out of range"),
            ProtocolError::MessageTooLarge { size, max } => {
                write!(f, "frame of {size} bytes exceeds the maximum message size {max}")
            }
            ProtocolError::MalformedCommand { name } => {
                write!(f, "malformed command {:?}", String::from_utf8_lossy(name))
            }
            ProtocolError::MalformedMetadata { offset } => {
                write!(f, "malformed metadata at offset {offset}")
            }
            ProtocolError::UnexpectedCommand { name } => {
                write!(f, "unexpected command {:?}", String::from_utf8_lossy(name))
            }
            ProtocolError::UnexpectedMessage => f.write_str("message frame received before the handshake completed"),
            ProtocolError::MissingSocketType => f.write_str("READY has no Socket-Type property"),
            ProtocolError::Cryptographic { what } => write!(f, "CURVE {what} box does not open"),
            ProtocolError::KeyExchange => f.write_str("CURVE vouch or cookie does not match this connection"),
            ProtocolError::InvalidSequence => f.write_str("CURVE nonce did not increase"),
            ProtocolError::EmptyZmtp10Frame => f.write_str("ZMTP/1.0 frame of size 0 (no flags octet)"),
        }
    }
}

impl std::error::Error for ProtocolError {}

/// Why a handshake failed.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HandshakeError {
    /// Malformed bytes or a ZMTP violation.
    Protocol(ProtocolError),
    /// The peer speaks ZMTP/1.0 (no 3.x signature, or revision 0), which
    /// libzmq would downgrade to and oxmq does not; or ZMTP/2.0 while a
    /// security mechanism or ZAP domain is set (libzmq refuses those too).
    UnsupportedVersion {
        /// The ZMTP major version the peer speaks (1 or 2).
        major: u8,
    },
    /// The peer's greeting names another mechanism (or the same name with
    /// different padding; libzmq compares all 20 octets). Names are shown
    /// with trailing NULs stripped.
    MechanismMismatch {
        /// Our mechanism's name.
        ours: Vec<u8>,
        /// The name in the peer's greeting.
        theirs: Vec<u8>,
    },
    /// The peer's socket type cannot talk to ours (RFC 37 table).
    IncompatibleSocketType {
        /// Our socket's type.
        ours: SocketType,
        /// The type the peer announced.
        theirs: SocketType,
    },
    /// The peer's Socket-Type is not one we know (e.g. a draft type such as
    /// `CLIENT`); libzmq treats this as incompatible too.
    UnknownSocketType {
        /// Our socket's type.
        ours: SocketType,
        /// The `Socket-Type` value the peer sent.
        theirs: Vec<u8>,
    },
    /// The peer sent ERROR. Fatal: do not retry with the same credentials.
    PeerError {
        /// The ERROR command's reason text.
        reason: Vec<u8>,
    },
    /// The handshake needs a ZAP handler (PLAIN server, or
    /// `ZAP_ENFORCE_DOMAIN`) and none is bound at `inproc://zeromq.zap.01`.
    /// libzmq reports it as `HANDSHAKE_FAILED_NO_DETAIL` with `EFAULT`.
    ZapUnavailable,
    /// The ZAP handler's reply is malformed; `code` is the
    /// `ZMQ_PROTOCOL_ERROR_ZAP_*` value libzmq reports.
    BadZapReply {
        /// The `ZMQ_PROTOCOL_ERROR_ZAP_*` code libzmq reports for the fault.
        code: u32,
    },
    /// The ZAP handler refused the peer with this status (300, 400 or 500).
    AuthFailed {
        /// The ZAP reply's status code.
        status: u16,
    },
    /// A GSS-API call failed (no credentials, unknown principal, a token
    /// the library refused): its major and minor status words.
    Gssapi {
        /// GSS-API's major status word.
        major: u32,
        /// The mechanism's (Kerberos') minor status word.
        minor: u32,
    },
}

impl HandshakeError {
    /// The `ZMQ_PROTOCOL_ERROR_*` code for a `HANDSHAKE_FAILED_PROTOCOL`
    /// monitor event. Failures libzmq reports without a specific code map
    /// to `ZMTP_UNSPECIFIED`.
    pub fn zmq_protocol_error_code(&self) -> u32 {
        match self {
            HandshakeError::Protocol(p) => p.zmq_protocol_error_code(),
            HandshakeError::MechanismMismatch { .. } => zmq_codes::ZMTP_MECHANISM_MISMATCH,
            HandshakeError::BadZapReply { code } => *code,
            _ => zmq_codes::ZMTP_UNSPECIFIED,
        }
    }

    /// If the peer's ERROR reason is a ZAP status code (`300`, `400`,
    /// `500`), return it: libzmq reports those as
    /// `ZMQ_EVENT_HANDSHAKE_FAILED_AUTH` rather than a protocol failure.
    pub fn zap_status_code(&self) -> Option<u16> {
        match self {
            HandshakeError::PeerError { reason } => match reason.as_slice() {
                [d @ b'3'..=b'5', b'0', b'0'] => Some(u16::from(d - b'0') * 100),
                _ => None,
            },
            HandshakeError::AuthFailed { status } => Some(*status),
            _ => None,
        }
    }
}

impl From<ProtocolError> for HandshakeError {
    fn from(e: ProtocolError) -> Self {
        match e {
            // One variant for one fault, whichever layer noticed it.
            ProtocolError::UnsupportedVersion { major } => HandshakeError::UnsupportedVersion { major },
            e => HandshakeError::Protocol(e),
        }
    }
}

impl fmt::Display for HandshakeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HandshakeError::Protocol(e) => write!(f, "protocol error: {e}"),
            HandshakeError::UnsupportedVersion { major } => {
                write!(f, "peer speaks ZMTP/{major}.0, which is not supported")
            }
            HandshakeError::MechanismMismatch { ours, theirs } => write!(
                f,
                "security mechanism mismatch: ours {:?}, peer's {:?}",
                String::from_utf8_lossy(ours),
                String::from_utf8_lossy(theirs)
            ),
            HandshakeError::IncompatibleSocketType { ours, theirs } => {
                write!(f, "socket type {} cannot connect to {}", ours.wire_name(), theirs.wire_name())
            }
            HandshakeError::UnknownSocketType { ours, theirs } => write!(
                f,
                "socket type {} cannot connect to unknown type {:?}",
                ours.wire_name(),
                String::from_utf8_lossy(theirs)
            ),
            HandshakeError::PeerError { reason } => {
                write!(f, "peer sent ERROR: {:?}", String::from_utf8_lossy(reason))
            }
            HandshakeError::ZapUnavailable => f.write_str("no ZAP handler is bound at inproc://zeromq.zap.01"),
            HandshakeError::BadZapReply { code } => write!(f, "malformed ZAP reply (protocol error {code:#x})"),
            HandshakeError::AuthFailed { status } => write!(f, "ZAP handler refused the peer with status {status}"),
            HandshakeError::Gssapi { major, minor } => {
                write!(f, "GSS-API call failed (major status {major:#010x}, minor {minor})")
            }
        }
    }
}

impl std::error::Error for HandshakeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            HandshakeError::Protocol(e) => Some(e),
            _ => None,
        }
    }
}

/// The local caller asked for something ZMTP cannot express.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UsageError {
    /// Metadata property names are 1..=255 octets.
    BadPropertyNameLength {
        /// The name's length, in octets.
        len: usize,
    },
    /// Metadata property values are at most 2^31-1 octets.
    PropertyValueTooLong {
        /// The value's length, in octets.
        len: usize,
    },
    /// Mechanism names are 1..=20 octets.
    BadMechanismNameLength {
        /// The name's length, in octets.
        len: usize,
    },
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UsageError::BadPropertyNameLength { len } => {
                write!(f, "metadata property name of {len} octets (must be 1..=255)")
            }
            UsageError::PropertyValueTooLong { len } => {
                write!(f, "metadata property value of {len} octets (max 2^31-1)")
            }
            UsageError::BadMechanismNameLength { len } => {
                write!(f, "mechanism name of {len} octets (must be 1..=20)")
            }
        }
    }
}

impl std::error::Error for UsageError {}

/// Why a connection's traffic phase ended (see [`crate::session::Session`]).
/// Each is fatal: close the connection.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionError {
    /// The peer's bytes are malformed or break ZMTP.
    Protocol(ProtocolError),
    /// The peer sent ERROR.
    PeerError {
        /// The ERROR command's reason text.
        reason: Vec<u8>,
    },
    /// Heartbeats: nothing arrived within `ZMQ_HEARTBEAT_TIMEOUT` of our
    /// PING, or within the TTL of the peer's.
    PeerSilent,
}

impl From<ProtocolError> for SessionError {
    fn from(e: ProtocolError) -> Self {
        SessionError::Protocol(e)
    }
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionError::Protocol(e) => write!(f, "protocol error: {e}"),
            SessionError::PeerError { reason } => {
                write!(f, "peer sent ERROR: {:?}", String::from_utf8_lossy(reason))
            }
            SessionError::PeerSilent => f.write_str("heartbeat: the peer stayed silent past its timeout or TTL"),
        }
    }
}

impl std::error::Error for SessionError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SessionError::Protocol(e) => Some(e),
            _ => None,
        }
    }
}
