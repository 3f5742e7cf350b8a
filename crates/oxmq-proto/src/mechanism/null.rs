//! The NULL mechanism (RFC 23/37), symmetric as in libzmq: each side sends
//! READY as soon as the greetings are done, without waiting for the other.

use bytes::Bytes;

use crate::command::Command;
use crate::error::{HandshakeError, ProtocolError};
use crate::handshake::{HandshakeConfig, PeerInfo};
use crate::socket_type::SocketType;

pub(crate) struct NullMechanism {
    socket_type: SocketType,
    version: (u8, u8),
    ready_to_send: Option<Command>,
    peer: Option<PeerInfo>,
}

impl NullMechanism {
    pub(crate) fn new(config: &HandshakeConfig) -> Self {
        NullMechanism {
            socket_type: config.socket_type,
            version: (3, 1),
            ready_to_send: Some(Command::Ready(super::basic_properties(config))),
            peer: None,
        }
    }

    pub(crate) fn set_version(&mut self, version: (u8, u8)) {
        self.version = version;
    }

    pub(crate) fn poll_transmit(&mut self, out: &mut Vec<u8>) {
        if let Some(cmd) = self.ready_to_send.take() {
            cmd.encode(out);
        }
    }

    pub(crate) fn process_command(&mut self, body: &Bytes) -> Result<(), HandshakeError> {
        if self.peer.is_some() {
            // The handshake stops feeding us once READY arrived; a second
            // command here means a caller bug, which we still refuse cleanly.
            return Err(unexpected(body).into());
        }
        match Command::parse(body)? {
            Command::Ready(metadata) => {
                self.peer = Some(super::validate_peer(self.socket_type, self.version, metadata)?);
                Ok(())
            }
            Command::Error { reason } => Err(HandshakeError::PeerError { reason }),
            other => Err(ProtocolError::UnexpectedCommand { name: other.name().to_vec() }.into()),
        }
    }

    pub(crate) fn take_peer(&mut self) -> Option<PeerInfo> {
        if self.ready_to_send.is_some() {
            return None;
        }
        self.peer.take()
    }
}

fn unexpected(body: &Bytes) -> ProtocolError {
    let name = body.get(1..).unwrap_or_default();
    let n = usize::from(body.first().copied().unwrap_or(0)).min(name.len());
    ProtocolError::UnexpectedCommand { name: name[..n].to_vec() }
}
