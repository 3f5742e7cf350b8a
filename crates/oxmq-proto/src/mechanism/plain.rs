//! PLAIN (RFC 24): a username and password in clear text, checked by the
//! server's ZAP handler.
//!
//! ```text
//! client                          server
//! HELLO ulen user plen pass  ->
//!                                 (ZAP request: user, pass)
//!                            <-   WELCOME          | ERROR status
//! INITIATE metadata          ->
//!                            <-   READY metadata
//! ```
//!
//! As libzmq: a PLAIN server with no ZAP handler refuses every client
//! (`HANDSHAKE_FAILED_NO_DETAIL`, `EFAULT`); status 300 closes without ERROR.

use bytes::Bytes;
use zeroize::Zeroizing;

use super::{is_command, Mechanism, ZapOutcome};
use crate::command::Metadata;
use crate::error::{HandshakeError, ProtocolError};
use crate::handshake::{HandshakeConfig, PeerInfo, PlainConfig};
use crate::socket_type::SocketType;
use crate::zap::{ZapReply, ZapRequest};

const HELLO: &[u8] = b"HELLO";
const WELCOME: &[u8] = b"WELCOME";
const INITIATE: &[u8] = b"INITIATE";
const READY: &[u8] = b"READY";
const ERROR: &[u8] = b"ERROR";

fn malformed(name: &[u8]) -> HandshakeError {
    ProtocolError::MalformedCommand { name: name.to_vec() }.into()
}

fn unexpected(body: &[u8]) -> HandshakeError {
    ProtocolError::UnexpectedCommand { name: super::command_name(body) }.into()
}

/// `name-len name` followed by metadata properties.
fn command_with_metadata(name: &[u8], metadata: &Metadata) -> Vec<u8> {
    let mut body = Vec::with_capacity(1 + name.len() + metadata.encoded_len());
    body.push(name.len() as u8);
    body.extend_from_slice(name);
    metadata.encode(&mut body);
    body
}

#[derive(PartialEq, Eq)]
enum ClientState {
    ExpectWelcome,
    ExpectReady,
    Done,
}

pub(crate) struct PlainClient {
    socket_type: SocketType,
    version: (u8, u8),
    properties: Metadata,
    /// Bodies to send; HELLO holds the password, so each is zeroed once sent.
    out: Vec<Zeroizing<Vec<u8>>>,
    state: ClientState,
    peer: Option<PeerInfo>,
}

impl PlainClient {
    pub(crate) fn new(config: &HandshakeConfig, plain: &PlainConfig) -> Self {
        // Option setters cap both at 255 octets, as libzmq does.
        let user = &plain.username[..plain.username.len().min(255)];
        let pass = &plain.password[..plain.password.len().min(255)];
        let mut hello = Zeroizing::new(Vec::with_capacity(8 + user.len() + pass.len()));
        hello.push(HELLO.len() as u8);
        hello.extend_from_slice(HELLO);
        hello.push(user.len() as u8);
        hello.extend_from_slice(user);
        hello.push(pass.len() as u8);
        hello.extend_from_slice(pass);
        PlainClient {
            socket_type: config.socket_type,
            version: (3, 1),
            properties: super::basic_properties(config),
            out: vec![hello],
            state: ClientState::ExpectWelcome,
            peer: None,
        }
    }
}

impl Mechanism for PlainClient {
    fn set_version(&mut self, version: (u8, u8)) {
        self.version = version;
    }

    fn poll_transmit(&mut self, out: &mut Vec<u8>) {
        super::write_commands(&mut self.out, out);
    }

    fn process_command(&mut self, body: &Bytes) -> Result<(), HandshakeError> {
        if is_command(body, ERROR) && self.state != ClientState::Done {
            return Err(super::peer_error(body));
        }
        match self.state {
            ClientState::ExpectWelcome if is_command(body, WELCOME) => {
                if body.len() != 1 + WELCOME.len() {
                    return Err(malformed(WELCOME));
                }
                self.out.push(Zeroizing::new(command_with_metadata(INITIATE, &self.properties)));
                self.state = ClientState::ExpectReady;
                Ok(())
            }
            ClientState::ExpectReady if is_command(body, READY) => {
                let metadata = Metadata::decode(&body[1 + READY.len()..])?;
                self.peer = Some(super::validate_peer(self.socket_type, self.version, metadata)?);
                self.state = ClientState::Done;
                Ok(())
            }
            _ => Err(unexpected(body)),
        }
    }

    fn take_peer(&mut self) -> Option<PeerInfo> {
        super::peer_once_sent(&self.out, &mut self.peer)
    }
}

enum ServerState {
    ExpectHello,
    /// Credentials parsed; the request is waiting to be taken.
    ToAsk(ZapRequest),
    WaitingForZap,
    ExpectInitiate(ZapOutcome),
    Done,
    Failed,
}

pub(crate) struct PlainServer {
    config_socket_type: SocketType,
    version: (u8, u8),
    properties: Metadata,
    request_template: ZapRequest,
    out: Vec<Vec<u8>>,
    state: ServerState,
    peer: Option<PeerInfo>,
}

impl PlainServer {
    pub(crate) fn new(config: &HandshakeConfig) -> Self {
        PlainServer {
            config_socket_type: config.socket_type,
            version: (3, 1),
            properties: super::basic_properties(config),
            request_template: super::zap_request(config, "PLAIN", Vec::new()),
            out: Vec::new(),
            state: ServerState::ExpectHello,
            peer: None,
        }
    }

    /// `HELLO ulen user plen pass`, nothing after it.
    fn parse_hello(body: &[u8]) -> Result<(Vec<u8>, Vec<u8>), HandshakeError> {
        let rest = &body[1 + HELLO.len()..];
        let (&ulen, rest) = rest.split_first().ok_or_else(|| malformed(HELLO))?;
        let user = rest.get(..usize::from(ulen)).ok_or_else(|| malformed(HELLO))?;
        let rest = &rest[user.len()..];
        let (&plen, rest) = rest.split_first().ok_or_else(|| malformed(HELLO))?;
        if rest.len() != usize::from(plen) {
            return Err(malformed(HELLO));
        }
        Ok((user.to_vec(), rest.to_vec()))
    }
}

impl Mechanism for PlainServer {
    fn set_version(&mut self, version: (u8, u8)) {
        self.version = version;
    }

    fn poll_transmit(&mut self, out: &mut Vec<u8>) {
        super::write_commands(&mut self.out, out);
    }

    fn process_command(&mut self, body: &Bytes) -> Result<(), HandshakeError> {
        match std::mem::replace(&mut self.state, ServerState::Failed) {
            ServerState::ExpectHello if is_command(body, HELLO) => {
                let (user, pass) = Self::parse_hello(body)?;
                let mut req = self.request_template.clone();
                req.credentials = vec![user, pass];
                self.state = ServerState::ToAsk(req);
                Ok(())
            }
            ServerState::ExpectInitiate(outcome) if is_command(body, INITIATE) => {
                let metadata = Metadata::decode(&body[1 + INITIATE.len()..])?;
                let mut peer = super::validate_peer(self.config_socket_type, self.version, metadata)?;
                outcome.apply(&mut peer);
                self.peer = Some(peer);
                self.out.push(command_with_metadata(READY, &self.properties));
                self.state = ServerState::Done;
                Ok(())
            }
            _ if is_command(body, ERROR) => Err(super::peer_error(body)),
            _ => Err(unexpected(body)),
        }
    }

    fn take_peer(&mut self) -> Option<PeerInfo> {
        super::peer_once_sent(&self.out, &mut self.peer)
    }

    fn awaiting_zap(&self) -> bool {
        matches!(self.state, ServerState::ToAsk(_) | ServerState::WaitingForZap)
    }

    fn take_zap_request(&mut self) -> Option<ZapRequest> {
        match std::mem::replace(&mut self.state, ServerState::WaitingForZap) {
            ServerState::ToAsk(req) => Some(req),
            other => {
                self.state = other;
                None
            }
        }
    }

    fn zap_reply(&mut self, reply: ZapReply) -> Result<(), HandshakeError> {
        if !matches!(self.state, ServerState::WaitingForZap) {
            return Err(unexpected(b"\x03ZAP"));
        }
        match ZapOutcome::from_reply(reply) {
            Ok(outcome) => {
                let mut welcome = vec![WELCOME.len() as u8];
                welcome.extend_from_slice(WELCOME);
                self.out.push(welcome);
                self.state = ServerState::ExpectInitiate(outcome);
                Ok(())
            }
            Err((error, failure)) => {
                self.out.extend(error);
                self.state = ServerState::Failed;
                Err(failure)
            }
        }
    }
}
