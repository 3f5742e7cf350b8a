//! Security mechanisms, each a state machine driven by the handshake.
//!
//! A mechanism starts once both greetings are exchanged. The handshake feeds
//! it every command frame body the peer sends and drains its output after
//! each step, until it reports completion. PLAIN and CURVE will be further
//! variants of [`Mechanism`]; CURVE will additionally have to wrap traffic
//! frames once the handshake is over.

pub(crate) mod null;

use bytes::Bytes;

use crate::command::Metadata;
use crate::error::{HandshakeError, ProtocolError};
use crate::handshake::{HandshakeConfig, MechanismConfig, PeerInfo};
use crate::socket_type::SocketType;

pub(crate) enum Mechanism {
    Null(null::NullMechanism),
}

impl Mechanism {
    pub(crate) fn new(config: &HandshakeConfig) -> Mechanism {
        match config.mechanism {
            MechanismConfig::Null => Mechanism::Null(null::NullMechanism::new(config)),
        }
    }

    /// Greeting field for a mechanism config.
    pub(crate) fn wire_name(config: &MechanismConfig) -> &'static str {
        match config {
            MechanismConfig::Null => "NULL",
        }
    }

    /// Tells the mechanism the negotiated ZMTP version.
    pub(crate) fn set_version(&mut self, version: (u8, u8)) {
        match self {
            Mechanism::Null(m) => m.set_version(version),
        }
    }

    /// Appends frames to send.
    pub(crate) fn poll_transmit(&mut self, out: &mut Vec<u8>) {
        match self {
            Mechanism::Null(m) => m.poll_transmit(out),
        }
    }

    /// Consumes one command frame body from the peer.
    pub(crate) fn process_command(&mut self, body: &Bytes) -> Result<(), HandshakeError> {
        match self {
            Mechanism::Null(m) => m.process_command(body),
        }
    }

    /// `Some` once the mechanism is done and all its output was drained.
    pub(crate) fn take_peer(&mut self) -> Option<PeerInfo> {
        match self {
            Mechanism::Null(m) => m.take_peer(),
        }
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
    Ok(PeerInfo { version, socket_type: theirs, identity, metadata })
}
