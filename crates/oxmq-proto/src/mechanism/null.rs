//! The NULL mechanism (RFC 23/37), symmetric as in libzmq: each side sends
//! READY as soon as the greetings are done, without waiting for the other.
//!
//! With a `ZAP_DOMAIN` set, libzmq first asks the ZAP handler (if one is
//! bound) and sends READY only on status 200; 400/500 get an ERROR with the
//! status, 300 gets nothing. With no handler the peer is let in unless
//! `ZAP_ENFORCE_DOMAIN` is set.

use bytes::Bytes;

use super::{Mechanism, ZapOutcome};
use crate::command::Command;
use crate::error::{HandshakeError, ProtocolError};
use crate::handshake::{HandshakeConfig, PeerInfo};
use crate::socket_type::SocketType;
use crate::zap::{ZapReply, ZapRequest};

enum Zap {
    /// No ZAP: READY goes out at once.
    Off,
    /// The request is built and not yet taken by the caller.
    ToAsk(ZapRequest),
    Waiting,
    Done(ZapOutcome),
}

pub(crate) struct NullMechanism {
    socket_type: SocketType,
    version: (u8, u8),
    ready: Option<Command>,
    ready_sent: bool,
    error_out: Option<Vec<u8>>,
    zap: Zap,
    enforce_domain: bool,
    peer: Option<PeerInfo>,
}

impl NullMechanism {
    pub(crate) fn new(config: &HandshakeConfig) -> Self {
        let zap = if config.zap_domain.is_empty() {
            Zap::Off
        } else {
            Zap::ToAsk(super::zap_request(config, "NULL", Vec::new()))
        };
        NullMechanism {
            socket_type: config.socket_type,
            version: (3, 1),
            ready: Some(Command::Ready(super::basic_properties(config))),
            ready_sent: false,
            error_out: None,
            zap,
            enforce_domain: config.zap_enforce_domain,
            peer: None,
        }
    }

    fn may_send_ready(&self) -> bool {
        matches!(self.zap, Zap::Off | Zap::Done(_))
    }
}

impl Mechanism for NullMechanism {
    fn set_version(&mut self, version: (u8, u8)) {
        self.version = version;
    }

    fn poll_transmit(&mut self, out: &mut Vec<u8>) {
        if let Some(body) = self.error_out.take() {
            super::write_command(out, &body);
        }
        if self.may_send_ready() {
            if let Some(cmd) = self.ready.take() {
                cmd.encode(out);
                self.ready_sent = true;
            }
        }
    }

    fn process_command(&mut self, body: &Bytes) -> Result<(), HandshakeError> {
        if self.peer.is_some() {
            // The handshake stops feeding us once READY arrived; a second
            // command here means a caller bug, which we still refuse cleanly.
            return Err(ProtocolError::UnexpectedCommand { name: super::command_name(body) }.into());
        }
        if super::is_command(body, b"ERROR") {
            return Err(super::peer_error(body));
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

    fn take_peer(&mut self) -> Option<PeerInfo> {
        if !self.ready_sent || self.peer.is_none() {
            return None;
        }
        let mut peer = self.peer.take()?;
        if let Zap::Done(outcome) = std::mem::replace(&mut self.zap, Zap::Off) {
            outcome.apply(&mut peer);
        }
        Some(peer)
    }

    fn awaiting_zap(&self) -> bool {
        matches!(self.zap, Zap::ToAsk(_) | Zap::Waiting)
    }

    fn take_zap_request(&mut self) -> Option<ZapRequest> {
        match std::mem::replace(&mut self.zap, Zap::Waiting) {
            Zap::ToAsk(req) => Some(req),
            other => {
                self.zap = other;
                None
            }
        }
    }

    fn zap_reply(&mut self, reply: ZapReply) -> Result<(), HandshakeError> {
        if !matches!(self.zap, Zap::Waiting) {
            return Err(ProtocolError::UnexpectedCommand { name: b"ZAP".to_vec() }.into());
        }
        match ZapOutcome::from_reply(reply) {
            Ok(outcome) => {
                self.zap = Zap::Done(outcome);
                Ok(())
            }
            Err((error, failure)) => {
                self.error_out = error;
                self.ready = None;
                Err(failure)
            }
        }
    }

    fn zap_unavailable(&mut self) -> Result<(), HandshakeError> {
        if self.enforce_domain {
            return Err(HandshakeError::ZapUnavailable);
        }
        self.zap = Zap::Off;
        Ok(())
    }
}
