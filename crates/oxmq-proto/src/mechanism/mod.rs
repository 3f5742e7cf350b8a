//! Security mechanisms, each a state machine driven by the handshake.
//!
//! A mechanism starts once both greetings are exchanged. The handshake feeds
//! it every command frame body the peer sends and drains its output after
//! each step, until it reports completion. A server-side mechanism may stop
//! half-way to ask the ZAP handler about the peer ([`Mechanism::take_zap_request`]);
//! the caller answers with [`Mechanism::zap_reply`] or
//! [`Mechanism::zap_unavailable`]. CURVE and GSSAPI (unless in plaintext)
//! additionally hand over a [`TrafficCodec`] that boxes every traffic frame.

pub(crate) mod curve;
pub(crate) mod gssapi;
pub(crate) mod null;
pub(crate) mod plain;

use bytes::Bytes;

use crate::command::{Command, Metadata};
use crate::error::{HandshakeError, ProtocolError};
use crate::frame::encode_frame_header;
use crate::handshake::{HandshakeConfig, MechanismConfig, PeerInfo};
use crate::socket_type::SocketType;
use crate::zap::{ZapReply, ZapRequest};

pub use curve::CurveCodec;
pub(crate) use gssapi::GssapiConfig;

/// What every mechanism does; see the module docs for the calling order.
pub(crate) trait Mechanism: Send {
    /// Tells the mechanism the negotiated ZMTP version.
    fn set_version(&mut self, version: (u8, u8));
    /// Appends frames to send.
    fn poll_transmit(&mut self, out: &mut Vec<u8>);
    /// Consumes one command frame body from the peer.
    fn process_command(&mut self, body: &Bytes) -> Result<(), HandshakeError>;
    /// `Some` once the mechanism is done and all its output was drained.
    fn take_peer(&mut self) -> Option<PeerInfo>;
    /// A ZAP request to send, taken once.
    fn take_zap_request(&mut self) -> Option<ZapRequest> {
        None
    }
    /// Whether a ZAP request is pending or unanswered: the handshake then
    /// leaves the peer's further bytes unread until the answer is in.
    fn awaiting_zap(&self) -> bool {
        false
    }
    /// The handler's answer to the request taken above.
    fn zap_reply(&mut self, _reply: ZapReply) -> Result<(), HandshakeError> {
        Err(ProtocolError::UnexpectedCommand { name: b"ZAP".to_vec() }.into())
    }
    /// No handler is bound at `inproc://zeromq.zap.01`.
    fn zap_unavailable(&mut self) -> Result<(), HandshakeError> {
        Err(HandshakeError::ZapUnavailable)
    }
    /// The traffic codec, once the handshake completed (CURVE, GSSAPI).
    fn take_codec(&mut self) -> Option<TrafficCodec> {
        None
    }
    /// A local failure the mechanism stalls on instead of failing (GSSAPI,
    /// as libzmq's): the caller reports it when the handshake times out.
    fn local_failure(&self) -> Option<&HandshakeError> {
        None
    }
}

/// What boxes traffic frames after a handshake: CURVE's boxes or GSSAPI's
/// wrap tokens. Both put each frame in one flag-less `MESSAGE` frame.
pub enum TrafficCodec {
    /// CURVE: each frame sealed in a crypto_box under the session's short-term keys.
    Curve(CurveCodec),
    /// GSSAPI: each frame wrapped by `gss_wrap` (unless `GSSAPI_PLAINTEXT`).
    Gssapi(gssapi::GssapiCodec),
}

impl TrafficCodec {
    /// Appends one frame boxing the concatenation of `parts`.
    #[inline]
    pub fn encode(&mut self, more: bool, command: bool, parts: &[&[u8]], out: &mut Vec<u8>) {
        match self {
            TrafficCodec::Curve(c) => c.encode(more, command, parts, out),
            TrafficCodec::Gssapi(g) => g.encode(more, command, parts, out),
        }
    }

    /// Unboxes one received frame body.
    #[inline]
    pub fn decode(&mut self, body: Bytes) -> Result<curve::Unboxed, ProtocolError> {
        match self {
            TrafficCodec::Curve(c) => c.decode(body),
            TrafficCodec::Gssapi(g) => g.decode(body),
        }
    }

    /// Whether the codec can no longer box (a GSSAPI context that expired):
    /// the connection must close.
    #[inline]
    pub fn is_broken(&self) -> bool {
        match self {
            TrafficCodec::Curve(_) => false,
            TrafficCodec::Gssapi(g) => g.is_broken(),
        }
    }
}

/// Builds the mechanism our options select. `seed` is fresh entropy for
/// this connection (CURVE's short-term keys, cookie key and nonces).
pub(crate) fn new_mechanism(config: &HandshakeConfig, seed: [u8; 32]) -> Box<dyn Mechanism> {
    match &config.mechanism {
        MechanismConfig::Null => Box::new(null::NullMechanism::new(config)),
        MechanismConfig::Plain(_) if config.as_server => Box::new(plain::PlainServer::new(config)),
        MechanismConfig::Plain(p) => Box::new(plain::PlainClient::new(config, p)),
        MechanismConfig::Curve(c) if config.as_server => Box::new(curve::CurveServer::new(config, c, seed)),
        MechanismConfig::Curve(c) => Box::new(curve::CurveClient::new(config, c, seed)),
        MechanismConfig::Gssapi(g) if config.as_server => Box::new(gssapi::GssapiServer::new(config, g)),
        MechanismConfig::Gssapi(g) => Box::new(gssapi::GssapiClient::new(config, g)),
    }
}

/// Greeting field for a mechanism config.
pub(crate) fn wire_name(config: &MechanismConfig) -> &'static str {
    match config {
        MechanismConfig::Null => "NULL",
        MechanismConfig::Plain(_) => "PLAIN",
        MechanismConfig::Curve(_) => "CURVE",
        MechanismConfig::Gssapi(_) => "GSSAPI",
    }
}

/// The basic properties every mechanism announces, exactly as libzmq's
/// `add_basic_properties`: `Socket-Type` always, `Identity` only from the
/// types that use it.
pub(crate) fn basic_properties(config: &HandshakeConfig) -> Metadata {
    let mut m = Metadata::new();
    m.insert("Socket-Type", config.socket_type.wire_name().as_bytes());
    if config.socket_type.sends_identity() {
        m.insert("Identity", &config.identity);
    }
    for (name, value) in &config.metadata {
        // The socket checked them; one the wire cannot carry is left out.
        let _ = m.try_insert(name, value);
    }
    m
}

/// Checks the peer's properties and builds what the engine needs to know.
/// Names are matched case-sensitively, as libzmq does.
pub(crate) fn validate_peer(
    ours: SocketType,
    version: (u8, u8),
    metadata: Metadata,
) -> Result<PeerInfo, HandshakeError> {
    let name = metadata.get_exact("Socket-Type").ok_or(ProtocolError::MissingSocketType)?;
    let theirs = SocketType::from_wire_name(name)
        .ok_or_else(|| HandshakeError::UnknownSocketType { ours, theirs: name.to_vec() })?;
    if !ours.is_compatible_with(theirs) {
        return Err(HandshakeError::IncompatibleSocketType { ours, theirs });
    }
    let identity = metadata.get_exact("Identity").filter(|id| !id.is_empty()).map(Bytes::copy_from_slice);
    Ok(PeerInfo {
        version,
        socket_type: theirs,
        identity,
        metadata,
        user_id: None,
        zap_properties: Metadata::new(),
        filters_locally: false,
    })
}

/// Appends one command frame (header and body).
pub(crate) fn write_command(out: &mut Vec<u8>, body: &[u8]) {
    encode_frame_header(out, false, true, body.len());
    out.extend_from_slice(body);
}

/// Writes queued command bodies as frames, emptying the queue.
pub(crate) fn write_commands<B: AsRef<[u8]>>(bodies: &mut Vec<B>, out: &mut Vec<u8>) {
    for body in bodies.drain(..) {
        write_command(out, body.as_ref());
    }
}

/// The peer, once nothing we must send first is still queued.
pub(crate) fn peer_once_sent<B>(queued: &[B], peer: &mut Option<PeerInfo>) -> Option<PeerInfo> {
    if queued.is_empty() {
        peer.take()
    } else {
        None
    }
}

/// The body of an ERROR command carrying a ZAP status.
pub(crate) fn error_body(status: u16) -> Vec<u8> {
    let mut body = Vec::with_capacity(10);
    Command::Error { reason: status.to_string().into_bytes() }.encode_body(&mut body);
    body
}

/// Name of a command body, for errors (never its data, which may be secret).
pub(crate) fn command_name(body: &[u8]) -> Vec<u8> {
    let n = usize::from(body.first().copied().unwrap_or(0));
    body.get(1..1 + n).unwrap_or_default().to_vec()
}

/// The outcome of asking ZAP, shared by the server-side mechanisms.
#[derive(Default)]
pub(crate) struct ZapOutcome {
    pub(crate) user_id: Option<Bytes>,
    pub(crate) properties: Metadata,
}

impl ZapOutcome {
    /// Applies a reply: `Ok` for 200; otherwise the ERROR to send (libzmq
    /// sends none for 300, a temporary failure) and the failure to report.
    pub(crate) fn from_reply(reply: ZapReply) -> Result<ZapOutcome, (Option<Vec<u8>>, HandshakeError)> {
        match reply.status {
            200 => Ok(ZapOutcome { user_id: Some(reply.user_id), properties: reply.metadata }),
            300 => Err((None, HandshakeError::AuthFailed { status: 300 })),
            s => Err((Some(error_body(s)), HandshakeError::AuthFailed { status: s })),
        }
    }

    pub(crate) fn apply(self, peer: &mut PeerInfo) {
        peer.user_id = self.user_id;
        peer.zap_properties = self.properties;
    }
}

/// A ZAP request as a server mechanism of this config would send it.
pub(crate) fn zap_request(config: &HandshakeConfig, mechanism: &'static str, credentials: Vec<Vec<u8>>) -> ZapRequest {
    ZapRequest { domain: config.zap_domain.clone(), routing_id: config.identity.clone(), mechanism, credentials }
}

/// How libzmq 4.3.5's PLAIN and CURVE servers spell ERROR on the wire:
/// their source writes `"\x05ERROR"`, which C reads as the hex escape
/// `\x05E` (0x5E, `^`) followed by `RROR`. Seen from pyzmq's bundled
/// libzmq; its own clients expect exactly these bytes, so we accept them.
const LIBZMQ_ERROR: &[u8] = b"\x5eRROR";

/// Parses an ERROR command from the peer into the failure it means.
pub(crate) fn peer_error(body: &Bytes) -> HandshakeError {
    if let Some(rest) = body.strip_prefix(LIBZMQ_ERROR) {
        if let Some((&n, reason)) = rest.split_first() {
            if let Some(reason) = reason.get(..usize::from(n)) {
                return HandshakeError::PeerError { reason: reason.to_vec() };
            }
        }
    }
    match Command::parse(body) {
        Ok(Command::Error { reason }) => HandshakeError::PeerError { reason },
        Ok(_) | Err(_) => ProtocolError::MalformedCommand { name: b"ERROR".to_vec() }.into(),
    }
}

/// Whether a command body is named `name` (ERROR also in libzmq's spelling).
pub(crate) fn is_command(body: &[u8], name: &[u8]) -> bool {
    if name == b"ERROR" && body.starts_with(LIBZMQ_ERROR) {
        return true;
    }
    body.first().is_some_and(|&n| usize::from(n) == name.len()) && body.get(1..1 + name.len()) == Some(name)
}
