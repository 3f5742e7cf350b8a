//! ZMTP 3.x (RFC 23 / RFC 37) as pure state machines, wire-compatible with
//! libzmq 4.3.5: greeting, framing, commands and metadata, the handshake
//! with its security mechanism (NULL, PLAIN, CURVE, GSSAPI, and the ZAP exchange
//! they ask of the caller), and heartbeat timers. Older peers are spoken to
//! as libzmq 4.3 does: ZMTP/2.0 (RFC 15) and ZMTP/1.0 (RFC 13) under NULL.
//!
//! After the handshake, [`Session`] runs a connection's traffic phase
//! (framing, subscriptions, PING/PONG, CURVE boxes) the same way.
//!
//! No I/O, no threads, no clocks: callers feed bytes in, take bytes out,
//! and pass `Instant`s to the timer logic. Each stateful type documents its
//! call-order contract.
#![forbid(unsafe_code)]
// Every public item says what it is and why it exists (issue 22 item 9);
// `make lint` (clippy -D warnings) fails on one that does not.
#![warn(missing_docs)]

pub mod command;
pub mod error;
pub mod frame;
pub mod greeting;
pub mod handshake;
pub mod heartbeat;
pub(crate) mod mechanism;
pub mod session;
pub mod socket_type;
pub mod ws;
pub mod zap;

#[doc(hidden)]
pub mod fuzzing;

pub use command::{Command, Metadata};
pub use error::{HandshakeError, ProtocolError, SessionError, UsageError};
pub use frame::{
    encode_any_frame_header, encode_frame, encode_frame_header, encode_zmtp10_frame_header, frame_header_len,
    zmtp10_header_len, Frame, FrameDecoder, FrameHeader, FLAG_COMMAND, FLAG_LONG, FLAG_MORE,
};
pub use greeting::{Greeting, GREETING_LEN};
pub use handshake::{CurveConfig, Handshake, HandshakeConfig, MechanismConfig, PeerInfo, PlainConfig};
pub use heartbeat::{Heartbeat, HeartbeatAction};
pub use mechanism::curve::{keypair_from_entropy, public_key_of, Opened, Unboxed, KEY_LEN as CURVE_KEY_LEN};
pub use mechanism::gssapi::{GssContext, GssContextFactory, GssFailure, GssStep, GssapiCodec, GssapiConfig};
pub use mechanism::{CurveCodec, TrafficCodec};
pub use session::{Framing, Inbound, Session, SessionConfig, Zmtp3};
pub use socket_type::SocketType;
pub use zap::{ZapReply, ZapRequest, ZAP_ENDPOINT};
