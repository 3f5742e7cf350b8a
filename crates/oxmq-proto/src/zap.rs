//! ZAP (RFC 27): the request a handshake sends to the authentication
//! handler bound at `inproc://zeromq.zap.01`, and the reply it expects.
//!
//! Framing follows libzmq's `zap_client_t` exactly: an empty delimiter,
//! version `1.0`, request id `1`, domain, peer address, the *local* socket's
//! routing id, the mechanism name, then its credentials. The reply must be
//! exactly seven frames (delimiter, `1.0`, `1`, status, text, user id,
//! metadata); anything else fails the handshake with libzmq's
//! `ZMQ_PROTOCOL_ERROR_ZAP_*` code.

use std::fmt;

use bytes::Bytes;

use crate::command::Metadata;
use crate::error::zmq_codes;
use crate::error::HandshakeError;

/// Where ZAP handlers bind, in the same context.
pub const ZAP_ENDPOINT: &str = "zeromq.zap.01";

const VERSION: &[u8] = b"1.0";
const REQUEST_ID: &[u8] = b"1";

/// A request a server-side mechanism wants answered before it lets the
/// peer in. Credentials may be secrets (a PLAIN password): `Debug` never
/// shows them.
#[derive(Clone, PartialEq, Eq)]
pub struct ZapRequest {
    /// The socket's `ZMQ_ZAP_DOMAIN`, which lets one handler serve several policies.
    pub domain: Vec<u8>,
    /// The local socket's routing id (libzmq sends its own, not the peer's).
    pub routing_id: Vec<u8>,
    /// The mechanism's wire name (`NULL`, `PLAIN`, `CURVE`, `GSSAPI`).
    pub mechanism: &'static str,
    /// What the peer proved: none for NULL, user name and password for PLAIN, the client's public key for CURVE, the principal for GSSAPI.
    pub credentials: Vec<Vec<u8>>,
}

impl fmt::Debug for ZapRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ZapRequest")
            .field("domain", &String::from_utf8_lossy(&self.domain))
            .field("mechanism", &self.mechanism)
            .field("credentials", &format_args!("<{} frames redacted>", self.credentials.len()))
            .finish()
    }
}

impl ZapRequest {
    /// The request's frames, in order; all but the last carry MORE.
    /// `address` is the peer's IP address as text (empty for ipc).
    pub fn frames(&self, address: &[u8]) -> Vec<Bytes> {
        let mut out = Vec::with_capacity(7 + self.credentials.len());
        out.push(Bytes::new());
        out.push(Bytes::from_static(VERSION));
        out.push(Bytes::from_static(REQUEST_ID));
        out.push(Bytes::copy_from_slice(&self.domain));
        out.push(Bytes::copy_from_slice(address));
        out.push(Bytes::copy_from_slice(&self.routing_id));
        out.push(Bytes::from_static(self.mechanism.as_bytes()));
        out.extend(self.credentials.iter().map(|c| Bytes::copy_from_slice(c)));
        out
    }
}

/// A well-formed reply from the handler.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZapReply {
    /// 200, 300, 400 or 500.
    pub status: u16,
    /// The handler's explanation, sent to a refused peer in ERROR.
    pub status_text: Bytes,
    /// The identity the handler gives the peer, read back as the `User-Id` property of its messages.
    pub user_id: Bytes,
    /// Properties the handler attaches to the connection, read back like the peer's own.
    pub metadata: Metadata,
}

impl ZapReply {
    /// Validates a whole reply, as libzmq does. `frames` are `(more, body)`
    /// pairs as they came off the pipe.
    pub fn parse(frames: &[(bool, Bytes)]) -> Result<ZapReply, HandshakeError> {
        let bad = |code| HandshakeError::BadZapReply { code };
        if frames.len() != 7 || frames.iter().enumerate().any(|(i, (more, _))| *more != (i < 6)) {
            return Err(bad(zmq_codes::ZAP_MALFORMED_REPLY));
        }
        let body = |i: usize| &frames[i].1;
        if !body(0).is_empty() {
            return Err(bad(zmq_codes::ZAP_UNSPECIFIED));
        }
        if body(1).as_ref() != VERSION {
            return Err(bad(zmq_codes::ZAP_BAD_VERSION));
        }
        if body(2).as_ref() != REQUEST_ID {
            return Err(bad(zmq_codes::ZAP_BAD_REQUEST_ID));
        }
        let status = match body(3).as_ref() {
            [d @ b'2'..=b'5', b'0', b'0'] => u16::from(d - b'0') * 100,
            _ => return Err(bad(zmq_codes::ZAP_INVALID_STATUS_CODE)),
        };
        let metadata = Metadata::decode(body(6)).map_err(|_| bad(zmq_codes::ZAP_INVALID_METADATA))?;
        Ok(ZapReply { status, status_text: body(4).clone(), user_id: body(5).clone(), metadata })
    }
}
