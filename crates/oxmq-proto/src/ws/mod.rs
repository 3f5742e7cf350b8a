//! ZWS 2.0 (RFC 45): ZeroMQ over WebSocket (RFC 6455), with no I/O.
//!
//! Two parts:
//! - the HTTP/1.1 upgrade: build and parse the client's request and the
//!   server's `101` answer, and pick the `Sec-WebSocket-Protocol`;
//! - [`WsDecoder`] / [`WsEncoder`]: streaming translators between WebSocket
//!   messages and ZMTP frames. Each ZMTP frame (or command) is one binary
//!   message whose first payload octet is a flags octet (`0x01` MORE,
//!   `0x02` COMMAND). Translating to and from ZMTP framing lets the ZMTP
//!   engine (mechanisms, CURVE boxes, multipart assembly, MAXMSGSIZE) run
//!   unchanged over WebSocket; only this stage knows about WebSocket.
//!
//! libzmq 4.3.5 details kept here: the client offers `ZWS2.0/NULL,ZWS2.0`
//! (NULL), `ZWS2.0/PLAIN` or `ZWS2.0/CURVE`; the server takes the first
//! offered protocol that matches its own mechanism. Fragmented messages,
//! text frames, wrongly masked frames and empty binary messages are
//! protocol errors. ZMTP heartbeats travel as WebSocket ping/pong control
//! frames (empty payload), not as PING/PONG commands.
//!
//! `handshake` holds the upgrade, `frame` the codec; both are re-exported
//! here, so callers name `ws::X` whichever part `X` lives in.

use std::fmt;

mod frame;
mod handshake;
pub use frame::*;
pub use handshake::*;

/// Why a WebSocket peer is dropped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WsError {
    /// The HTTP upgrade request or response is malformed or refused.
    BadUpgrade(&'static str),
    /// No offered `Sec-WebSocket-Protocol` matches our mechanism.
    NoProtocol,
    /// A WebSocket frame breaks RFC 6455 or ZWS 2.0.
    BadFrame(&'static str),
}

impl fmt::Display for WsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WsError::BadUpgrade(why) => write!(f, "bad WebSocket upgrade: {why}"),
            WsError::NoProtocol => f.write_str("no matching ZWS2.0 protocol offered"),
            WsError::BadFrame(why) => write!(f, "bad WebSocket frame: {why}"),
        }
    }
}

impl std::error::Error for WsError {}

#[cfg(test)]
mod tests;
