//! GSSAPI (the ZMTP mechanism libzmq 4.3 names `GSSAPI`, RFC 38's draft),
//! laid out as libzmq lays it out on the wire:
//!
//! ```text
//! client                                server
//! INITIATE len token            ->                      (gss_init_sec_context)
//!                               <-  INITIATE len token  (gss_accept_sec_context)
//! ... until the client's context is complete; a side whose step gave no
//! token sends an empty command frame instead ...
//!                                   (ZAP: "GSSAPI", the client's principal)
//!                               <-  READY metadata
//! READY metadata                ->
//! ```
//!
//! `len` is a 4-octet big-endian token length. Unless `GSSAPI_PLAINTEXT` is
//! set, READY and every traffic frame afterwards travel as
//! `\x07MESSAGE len wrap(flags + body)`, `flags` carrying MORE (`0x01`) and
//! COMMAND (`0x02`) as CURVE's boxes do; READY's flags octet is 0. The
//! wrapped READY is a command frame; traffic frames are flag-less.
//!
//! As libzmq: when a GSS-API call fails (no credentials, an unknown
//! principal, a token the library refuses) the mechanism sends nothing more
//! and waits; the handshake timer ends the connection and reports the
//! failure ([`Handshake::local_failure`](crate::Handshake::local_failure)).
//! A command arriving meanwhile is unexpected.
//!
//! The GSS-API calls themselves are behind [`GssContext`]: this crate only
//! lays out bytes, so it is tested with a stand-in context.

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use zeroize::Zeroizing;

use super::{is_command, Mechanism, ZapOutcome};
use crate::command::Metadata;
use crate::error::{HandshakeError, ProtocolError};
use crate::frame::encode_frame_header;
use crate::handshake::{HandshakeConfig, PeerInfo};
use crate::socket_type::SocketType;
use crate::zap::{ZapReply, ZapRequest};

const INITIATE: &[u8] = b"\x08INITIATE";
const READY: &[u8] = b"\x05READY";
const MESSAGE: &[u8] = b"\x07MESSAGE";
const FLAG_MORE: u8 = 0x01;
const FLAG_COMMAND: u8 = 0x02;

/// A GSS-API failure: the major and minor status words, never a token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GssFailure {
    /// GSS-API's major status (the routine error and supplementary bits).
    pub major: u32,
    /// The mechanism's (Kerberos') minor status.
    pub minor: u32,
}

/// One context-establishment step's result.
pub struct GssStep {
    /// The token to send the peer (may be empty).
    pub token: Vec<u8>,
    /// The context is established on our side.
    pub complete: bool,
}

/// One security context, as the mechanism drives it.
pub trait GssContext: Send {
    /// `gss_init_sec_context` (initiator; `None` on the first call) or
    /// `gss_accept_sec_context` (acceptor; always `Some`).
    fn step(&mut self, token: Option<&[u8]>) -> Result<GssStep, GssFailure>;
    /// `gss_wrap` with confidentiality.
    fn wrap(&mut self, plaintext: &[u8]) -> Result<Vec<u8>, GssFailure>;
    /// `gss_unwrap`.
    fn unwrap(&mut self, token: &[u8]) -> Result<Zeroizing<Vec<u8>>, GssFailure>;
    /// The authenticated initiator's name, as `gss_display_name` spells it
    /// (acceptor only): the ZAP request's credential.
    fn peer_principal(&self) -> Result<Vec<u8>, GssFailure>;
}

/// Makes the context for a new connection; `true` for the acceptor side.
pub type GssContextFactory = dyn Fn(bool) -> Result<Box<dyn GssContext>, GssFailure> + Send + Sync;

/// `ZMQ_GSSAPI_*` as the mechanism needs them: the principals and name
/// types are the factory's business.
#[derive(Clone)]
pub struct GssapiConfig {
    /// `ZMQ_GSSAPI_PLAINTEXT`: no wrapping of READY and traffic.
    pub plaintext: bool,
    /// Makes a connection's security context; the principals and name types are bound into it.
    pub new_context: Arc<GssContextFactory>,
}

impl PartialEq for GssapiConfig {
    fn eq(&self, other: &Self) -> bool {
        self.plaintext == other.plaintext && Arc::ptr_eq(&self.new_context, &other.new_context)
    }
}

impl Eq for GssapiConfig {}

impl fmt::Debug for GssapiConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GssapiConfig").field("plaintext", &self.plaintext).finish_non_exhaustive()
    }
}

fn gss_failed(e: GssFailure) -> HandshakeError {
    HandshakeError::Gssapi { major: e.major, minor: e.minor }
}

fn malformed(name: &[u8]) -> HandshakeError {
    ProtocolError::MalformedCommand { name: name.to_vec() }.into()
}

fn unexpected(body: &[u8]) -> HandshakeError {
    ProtocolError::UnexpectedCommand { name: super::command_name(body) }.into()
}

/// `\x08INITIATE len token`.
fn initiate_body(token: &[u8]) -> Vec<u8> {
    let mut body = Vec::with_capacity(INITIATE.len() + 4 + token.len());
    body.extend_from_slice(INITIATE);
    body.extend_from_slice(&(token.len() as u32).to_be_bytes());
    body.extend_from_slice(token);
    body
}

/// What a step's token becomes on the wire: INITIATE, or an empty command.
fn token_body(token: &[u8]) -> Vec<u8> {
    if token.is_empty() {
        Vec::new()
    } else {
        initiate_body(token)
    }
}

/// `name len value`, nothing after it; `malformed_as` names the command a
/// bad length is reported against (libzmq: INITIATE or MESSAGE).
fn length_prefixed<'a>(body: &'a [u8], name: &[u8], malformed_as: &[u8]) -> Result<&'a [u8], HandshakeError> {
    let rest = body.strip_prefix(name).ok_or_else(|| unexpected(body))?;
    let (len, value) = rest.split_first_chunk::<4>().ok_or_else(|| malformed(malformed_as))?;
    if value.len() != u32::from_be_bytes(*len) as usize {
        return Err(malformed(malformed_as));
    }
    Ok(value)
}

/// `\x07MESSAGE len wrap(flags + parts...)`.
fn wrap_body(ctx: &mut dyn GssContext, flags: u8, parts: &[&[u8]]) -> Result<Vec<u8>, GssFailure> {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    let mut plain = Zeroizing::new(Vec::with_capacity(1 + len));
    plain.push(flags);
    for p in parts {
        plain.extend_from_slice(p);
    }
    let token = ctx.wrap(&plain)?;
    let mut body = Vec::with_capacity(MESSAGE.len() + 4 + token.len());
    body.extend_from_slice(MESSAGE);
    body.extend_from_slice(&(token.len() as u32).to_be_bytes());
    body.extend_from_slice(&token);
    Ok(body)
}

/// Opens a MESSAGE body: its flags octet and its plaintext.
fn unwrap_body(ctx: &mut dyn GssContext, body: &[u8]) -> Result<(u8, Bytes), ProtocolError> {
    let token = length_prefixed(body, MESSAGE, b"MESSAGE").map_err(|e| match e {
        HandshakeError::Protocol(p) => p,
        _ => ProtocolError::MalformedCommand { name: b"MESSAGE".to_vec() },
    })?;
    let plain = ctx.unwrap(token).map_err(|_| ProtocolError::Cryptographic { what: "MESSAGE" })?;
    let (&flags, rest) = plain.split_first().ok_or(ProtocolError::MalformedCommand { name: b"MESSAGE".to_vec() })?;
    Ok((flags, Bytes::copy_from_slice(rest)))
}

/// READY with our basic properties, wrapped unless in plaintext.
fn ready_body(ctx: &mut dyn GssContext, properties: &Metadata, plaintext: bool) -> Result<Vec<u8>, GssFailure> {
    let mut ready = Vec::with_capacity(READY.len() + properties.encoded_len());
    ready.extend_from_slice(READY);
    properties.encode(&mut ready);
    if plaintext {
        return Ok(ready);
    }
    wrap_body(ctx, 0, &[&ready])
}

/// The peer's READY, unwrapped unless in plaintext, as a validated peer.
fn read_ready(
    ctx: &mut dyn GssContext,
    body: &Bytes,
    plaintext: bool,
    ours: SocketType,
    version: (u8, u8),
) -> Result<PeerInfo, HandshakeError> {
    let body = if plaintext { body.clone() } else { unwrap_body(ctx, body)?.1 };
    if !body.starts_with(READY) {
        return Err(unexpected(&body));
    }
    let metadata = Metadata::decode(&body[READY.len()..])?;
    super::validate_peer(ours, version, metadata)
}

/// The common parts of both sides.
struct Shared {
    socket_type: SocketType,
    version: (u8, u8),
    properties: Metadata,
    plaintext: bool,
    out: Vec<Vec<u8>>,
    peer: Option<PeerInfo>,
    /// A GSS-API call failed: the mechanism stalls (see the module docs).
    failure: Option<HandshakeError>,
    codec: Option<GssapiCodec>,
}

impl Shared {
    fn new(config: &HandshakeConfig, gss: &GssapiConfig) -> Shared {
        Shared {
            socket_type: config.socket_type,
            version: (3, 1),
            properties: super::basic_properties(config),
            plaintext: gss.plaintext,
            out: Vec::new(),
            peer: None,
            failure: None,
            codec: None,
        }
    }

    /// Stops the handshake on a failed GSS-API call, as libzmq does.
    fn stall(&mut self, e: GssFailure) {
        self.failure = Some(gss_failed(e));
    }

    /// The handshake is over: traffic goes through the context from now on
    /// (or not at all, in plaintext).
    fn finish(&mut self, ctx: Box<dyn GssContext>) {
        if !self.plaintext {
            self.codec = Some(GssapiCodec { ctx, broken: false });
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ClientState {
    ExpectToken,
    ExpectReady,
    Done,
    Failed,
}

pub(crate) struct GssapiClient {
    shared: Shared,
    ctx: Option<Box<dyn GssContext>>,
    state: ClientState,
}

impl GssapiClient {
    pub(crate) fn new(config: &HandshakeConfig, gss: &GssapiConfig) -> Self {
        let mut client = GssapiClient { shared: Shared::new(config, gss), ctx: None, state: ClientState::Failed };
        match (gss.new_context)(false) {
            Ok(ctx) => {
                client.ctx = Some(ctx);
                client.step(None);
            }
            Err(e) => client.shared.stall(e),
        }
        client
    }

    /// One `gss_init_sec_context`; its token (or an empty command) goes out.
    fn step(&mut self, token: Option<&[u8]>) {
        self.state = ClientState::Failed;
        let Some(ctx) = self.ctx.as_mut() else { return };
        match ctx.step(token) {
            Ok(step) => {
                self.shared.out.push(token_body(&step.token));
                self.state = if step.complete { ClientState::ExpectReady } else { ClientState::ExpectToken };
            }
            Err(e) => self.shared.stall(e),
        }
    }
}

impl Mechanism for GssapiClient {
    fn set_version(&mut self, version: (u8, u8)) {
        self.shared.version = version;
    }

    fn poll_transmit(&mut self, out: &mut Vec<u8>) {
        super::write_commands(&mut self.shared.out, out);
    }

    fn process_command(&mut self, body: &Bytes) -> Result<(), HandshakeError> {
        match self.state {
            ClientState::ExpectToken => {
                self.state = ClientState::Failed;
                let token = length_prefixed(body, INITIATE, b"INITIATE")?;
                self.step(Some(token));
                Ok(())
            }
            ClientState::ExpectReady => {
                self.state = ClientState::Failed;
                let Some(mut ctx) = self.ctx.take() else { return Err(unexpected(body)) };
                let s = &mut self.shared;
                let peer = read_ready(ctx.as_mut(), body, s.plaintext, s.socket_type, s.version)?;
                match ready_body(ctx.as_mut(), &s.properties, s.plaintext) {
                    Ok(ready) => s.out.push(ready),
                    Err(e) => {
                        s.stall(e);
                        return Ok(());
                    }
                }
                s.peer = Some(peer);
                s.finish(ctx);
                self.state = ClientState::Done;
                Ok(())
            }
            ClientState::Done | ClientState::Failed => Err(unexpected(body)),
        }
    }

    fn take_peer(&mut self) -> Option<PeerInfo> {
        super::peer_once_sent(&self.shared.out, &mut self.shared.peer)
    }

    fn local_failure(&self) -> Option<&HandshakeError> {
        self.shared.failure.as_ref()
    }

    fn take_codec(&mut self) -> Option<super::TrafficCodec> {
        self.shared.codec.take().map(super::TrafficCodec::Gssapi)
    }
}

enum ServerState {
    /// Reading INITIATE tokens until our context is established.
    ExpectToken,
    /// Established: the client's next command (its last token, or an empty
    /// one) triggers ZAP and READY.
    ExpectLast,
    ToAsk(ZapRequest),
    WaitingForZap,
    ExpectReady(ZapOutcome),
    Done,
    Failed,
}

pub(crate) struct GssapiServer {
    shared: Shared,
    ctx: Option<Box<dyn GssContext>>,
    request_template: ZapRequest,
    state: ServerState,
}

impl GssapiServer {
    pub(crate) fn new(config: &HandshakeConfig, gss: &GssapiConfig) -> Self {
        let mut server = GssapiServer {
            shared: Shared::new(config, gss),
            ctx: None,
            request_template: super::zap_request(config, "GSSAPI", Vec::new()),
            state: ServerState::ExpectToken,
        };
        match (gss.new_context)(true) {
            Ok(ctx) => server.ctx = Some(ctx),
            // As libzmq: the first INITIATE still comes in, and then the
            // server goes quiet.
            Err(e) => server.shared.stall(e),
        }
        server
    }

    /// Sends READY and waits for the client's.
    fn send_ready(&mut self, outcome: ZapOutcome) -> Result<(), HandshakeError> {
        let ctx = self.ctx.as_mut().ok_or_else(|| unexpected(b""))?;
        match ready_body(ctx.as_mut(), &self.shared.properties, self.shared.plaintext) {
            Ok(ready) => {
                self.shared.out.push(ready);
                self.state = ServerState::ExpectReady(outcome);
            }
            Err(e) => self.shared.stall(e),
        }
        Ok(())
    }
}

impl Mechanism for GssapiServer {
    fn set_version(&mut self, version: (u8, u8)) {
        self.shared.version = version;
    }

    fn poll_transmit(&mut self, out: &mut Vec<u8>) {
        super::write_commands(&mut self.shared.out, out);
    }

    fn process_command(&mut self, body: &Bytes) -> Result<(), HandshakeError> {
        match std::mem::replace(&mut self.state, ServerState::Failed) {
            ServerState::ExpectToken => {
                let token = length_prefixed(body, INITIATE, b"INITIATE")?;
                let Some(ctx) = self.ctx.as_mut() else { return Ok(()) };
                match ctx.step(Some(token)) {
                    Ok(step) => {
                        self.shared.out.push(token_body(&step.token));
                        self.state = if step.complete { ServerState::ExpectLast } else { ServerState::ExpectToken };
                    }
                    Err(e) => self.shared.stall(e),
                }
                Ok(())
            }
            ServerState::ExpectLast => {
                // libzmq reads nothing from this command.
                let ctx = self.ctx.as_ref().ok_or_else(|| unexpected(body))?;
                match ctx.peer_principal() {
                    Ok(principal) => {
                        let mut req = self.request_template.clone();
                        req.credentials = vec![principal];
                        self.state = ServerState::ToAsk(req);
                    }
                    Err(e) => self.shared.stall(e),
                }
                Ok(())
            }
            ServerState::ExpectReady(outcome) => {
                let mut ctx = self.ctx.take().ok_or_else(|| unexpected(body))?;
                let s = &mut self.shared;
                let mut peer = read_ready(ctx.as_mut(), body, s.plaintext, s.socket_type, s.version)?;
                outcome.apply(&mut peer);
                s.peer = Some(peer);
                s.finish(ctx);
                self.state = ServerState::Done;
                Ok(())
            }
            _ if is_command(body, b"ERROR") => Err(super::peer_error(body)),
            _ => Err(unexpected(body)),
        }
    }

    fn take_peer(&mut self) -> Option<PeerInfo> {
        super::peer_once_sent(&self.shared.out, &mut self.shared.peer)
    }

    fn local_failure(&self) -> Option<&HandshakeError> {
        self.shared.failure.as_ref()
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
            Ok(outcome) => self.send_ready(outcome),
            Err((_, failure)) => {
                // libzmq 4.3's GSSAPI server reports the refusal and then
                // admits the client anyway; we refuse it. Its GSSAPI client
                // knows no ERROR command, so none is sent: the connection closes.
                self.state = ServerState::Failed;
                Err(failure)
            }
        }
    }

    fn zap_unavailable(&mut self) -> Result<(), HandshakeError> {
        // As libzmq: without a handler every authenticated principal is
        // admitted (GSSAPI does not look at ZAP_ENFORCE_DOMAIN).
        if !matches!(self.state, ServerState::WaitingForZap | ServerState::ToAsk(_)) {
            return Err(unexpected(b"\x03ZAP"));
        }
        self.send_ready(ZapOutcome::default())
    }

    fn take_codec(&mut self) -> Option<super::TrafficCodec> {
        self.shared.codec.take().map(super::TrafficCodec::Gssapi)
    }
}

/// Wraps and unwraps traffic frames once a GSSAPI handshake is done
/// (not used under `GSSAPI_PLAINTEXT`).
pub struct GssapiCodec {
    ctx: Box<dyn GssContext>,
    /// A wrap failed (an expired context): the frame was not written and
    /// the connection must close.
    broken: bool,
}

impl GssapiCodec {
    /// Appends one flag-less frame wrapping the concatenation of `parts`.
    pub fn encode(&mut self, more: bool, command: bool, parts: &[&[u8]], out: &mut Vec<u8>) {
        if self.broken {
            return;
        }
        let flags = (u8::from(more) * FLAG_MORE) | (u8::from(command) * FLAG_COMMAND);
        match wrap_body(self.ctx.as_mut(), flags, parts) {
            Ok(body) => {
                encode_frame_header(out, false, false, body.len());
                out.extend_from_slice(&body);
            }
            Err(_) => self.broken = true,
        }
    }

    /// Unwraps one received frame body.
    pub fn decode(&mut self, body: Bytes) -> Result<super::curve::Unboxed, ProtocolError> {
        if self.broken {
            return Err(ProtocolError::Cryptographic { what: "MESSAGE" });
        }
        let (flags, body) = unwrap_body(self.ctx.as_mut(), &body)?;
        Ok(super::curve::Unboxed { more: flags & FLAG_MORE != 0, command: flags & FLAG_COMMAND != 0, body })
    }

    /// Whether a wrap failed; the connection must then close.
    pub fn is_broken(&self) -> bool {
        self.broken
    }
}
