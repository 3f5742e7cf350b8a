//! The ZMTP 3.x handshake: greeting exchange, then the security mechanism.

use std::fmt;

use bytes::{Buf, Bytes, BytesMut};
use zeroize::Zeroizing;

use crate::command::Metadata;
use crate::error::{HandshakeError, ProtocolError};
use crate::frame::FrameDecoder;
use crate::greeting::{self, Greeting, GREETING_LEN};
use crate::mechanism::{self, GssapiConfig, Mechanism, TrafficCodec};
use crate::socket_type::SocketType;
use crate::zap::{ZapReply, ZapRequest};

/// What the local socket brings to the handshake.
#[derive(Clone, Debug)]
pub struct HandshakeConfig {
    /// The local socket's type, sent as `Socket-Type` and checked against the peer's.
    pub socket_type: SocketType,
    /// `ZMQ_ROUTING_ID`; sent only by REQ, DEALER and ROUTER (as libzmq).
    pub identity: Vec<u8>,
    /// `ZMQ_PLAIN_SERVER` / `ZMQ_CURVE_SERVER`. Ignored by NULL, whose
    /// greeting always says 0.
    pub as_server: bool,
    /// The security mechanism and its settings; both ends must name the same.
    pub mechanism: MechanismConfig,
    /// `ZMQ_ZAP_DOMAIN`. NULL asks ZAP only when it is set (libzmq).
    pub zap_domain: Vec<u8>,
    /// `ZMQ_ZAP_ENFORCE_DOMAIN`: with no ZAP handler, refuse instead of admitting.
    pub zap_enforce_domain: bool,
    /// Fresh entropy for this connection, from a CSPRNG: CURVE draws its
    /// short-term keys, cookie key and random nonces from it. Never reuse it.
    pub entropy: [u8; 32],
    /// `ZMQ_METADATA` (draft): application properties (`X-` names) sent
    /// after the basic ones in READY / INITIATE.
    pub metadata: Vec<(String, Vec<u8>)>,
}

impl HandshakeConfig {
    /// A NULL-mechanism config with no ZAP domain.
    pub fn null(socket_type: SocketType, identity: &[u8]) -> HandshakeConfig {
        HandshakeConfig {
            socket_type,
            identity: identity.to_vec(),
            as_server: false,
            mechanism: MechanismConfig::Null,
            zap_domain: Vec::new(),
            zap_enforce_domain: false,
            entropy: [0; 32],
            metadata: Vec::new(),
        }
    }
}

/// Which security mechanism to run, with its credentials.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MechanismConfig {
    /// No security (RFC 23's NULL): READY both ways, ZAP only with a domain.
    Null,
    /// User name and password in clear (RFC 24); the server checks them through ZAP.
    Plain(PlainConfig),
    /// CurveZMQ (RFC 26): authenticated keys and encrypted traffic.
    Curve(CurveConfig),
    /// Kerberos through GSS-API (RFC 38).
    Gssapi(GssapiConfig),
}

/// PLAIN credentials (a client's; a server has none of its own).
#[derive(Clone, PartialEq, Eq, Default)]
pub struct PlainConfig {
    /// The user name a client sends in HELLO.
    pub username: Vec<u8>,
    /// The password a client sends in HELLO (zeroed on drop).
    pub password: Zeroizing<Vec<u8>>,
}

impl fmt::Debug for PlainConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PlainConfig")
            .field("username", &String::from_utf8_lossy(&self.username))
            .field("password", &"<redacted>")
            .finish()
    }
}

/// CURVE keys: our long-term pair and, for a client, the server's public key.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct CurveConfig {
    /// Our long-term public key.
    pub public_key: [u8; 32],
    /// Our long-term secret key (zeroed on drop, never printed).
    pub secret_key: Zeroizing<[u8; 32]>,
    /// The server's long-term public key, which a client must know beforehand (unused on a server).
    pub server_key: [u8; 32],
}

impl fmt::Debug for CurveConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CurveConfig").field("secret_key", &"<redacted>").finish_non_exhaustive()
    }
}

/// What we learned about the peer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeerInfo {
    /// Negotiated version: `(3, 0)` or `(3, 1)`. Peers announcing anything
    /// newer than 3.0 are spoken to as 3.1. `(2, 0)`: a ZMTP/2.0 peer (no
    /// commands; subscriptions as messages, as with 3.0). `(1, 0)`: a
    /// ZMTP/1.0 peer, the same but its traffic is in 1.0 framing.
    pub version: (u8, u8),
    /// The peer's socket type, from its `Socket-Type` property.
    pub socket_type: SocketType,
    /// The `Identity` property, if present and non-empty.
    pub identity: Option<Bytes>,
    /// All properties the peer sent, in order, including `Socket-Type`
    /// and `Identity`.
    pub metadata: Metadata,
    /// The user id the ZAP handler gave (status 200), if ZAP was asked.
    pub user_id: Option<Bytes>,
    /// Properties from the ZAP handler's reply.
    pub zap_properties: Metadata,
    /// An unversioned ZMTP/1.0 peer (libzmq 2.x): it never sends its
    /// subscriptions, a SUB of its kind filters locally, so a PUB or XPUB
    /// must treat it as subscribed to everything (libzmq injects that
    /// subscription).
    pub filters_locally: bool,
}

enum State {
    Greeting,
    /// ZMTP/2.0 (RFC 15): the peer's greeting is signature, revision 1 and
    /// its socket type; its identity frame (2.0 framing) comes next.
    Zmtp20 {
        peer_type: u8,
    },
    /// ZMTP/1.0 (RFC 13): the peer's identity frame, in 1.0 framing, comes
    /// next. `peer_type` is `None` for an unversioned peer (no greeting at
    /// all: what libzmq 2.x sends), `Some` after a revision-0 greeting.
    Zmtp10 {
        peer_type: Option<u8>,
    },
    Mechanism(Box<dyn Mechanism>),
    Done(Option<TrafficCodec>),
    Failed(HandshakeError),
}

/// The handshake state machine for one connection. It does no I/O.
///
/// Call-order contract:
/// 1. [`new`](Self::new), then [`poll_transmit`](Self::poll_transmit) and
///    send what it appended (our greeting; we do not wait for the peer's).
/// 2. Whenever bytes arrive, append them to a `BytesMut` and call
///    [`handle_input`](Self::handle_input), then `poll_transmit` again and
///    send what it appended, even if `handle_input` failed or completed:
///    on completion our READY may still be waiting there, and it must reach
///    the wire before any traffic frame.
/// 3. `handle_input` returns `Ok(Some(peer))` exactly once. Bytes left in
///    the buffer then belong to the traffic phase; hand them to a
///    [`FrameDecoder`]. Do not call `handle_input` again (it would return
///    `Ok(None)` and consume nothing).
/// 4. On `Err`, close the connection (after sending what `poll_transmit`
///    still gives: an ERROR may be there). Later calls return the same error.
/// 5. ZAP: after each call, [`take_zap_request`](Self::take_zap_request)
///    may return a request for the handler at `inproc://zeromq.zap.01`.
///    Answer with [`handle_zap_reply`](Self::handle_zap_reply), or with
///    [`handle_zap_unavailable`](Self::handle_zap_unavailable) if no handler
///    is bound; both return like `handle_input`. Until then the peer's
///    bytes stay in the buffer: call `handle_input` again after answering.
/// 6. After completion, [`take_codec`](Self::take_codec) gives the CURVE
///    or GSSAPI traffic codec (`None` for NULL, PLAIN and GSSAPI_PLAINTEXT):
///    every traffic frame must then go through it in both directions.
/// 7. GSSAPI: when a GSS-API call fails the handshake stalls, as libzmq's
///    does; on `ZMQ_HANDSHAKE_IVL`, report [`local_failure`](Self::local_failure)
///    if it is `Some`.
///
/// The caller enforces `ZMQ_HANDSHAKE_IVL`; this type has no clock.
pub struct Handshake {
    config: HandshakeConfig,
    state: State,
    out: Vec<u8>,
    peer_greeting: [u8; GREETING_LEN],
    greeting_read: usize,
    negotiated: Option<(u8, u8)>,
    decoder: FrameDecoder,
    /// How much of our greeting has been queued. libzmq sends it in three
    /// steps (signature; major version once the peer's signature is in;
    /// the rest once its revision is), so that a ZMTP/2.0 peer never sees
    /// 3.x octets and is answered with a 2.0 greeting instead.
    sent: usize,
}

/// Our greeting up to and including the major version octet.
const MAJOR_END: usize = 11;
/// The signature: octet 0 to octet 9.
const SIGNATURE_END: usize = 10;
/// A ZMTP/2.0 greeting: signature, revision, socket type.
const V2_GREETING_LEN: usize = 12;
/// ZMTP/2.0's revision octet (RFC 15); libzmq calls it ZMTP_2_0.
const REVISION_2_0: u8 = 1;
/// A versioned ZMTP/1.0 greeting's revision octet (libzmq: ZMTP_1_0).
const REVISION_1_0: u8 = 0;

/// Wipes the caller's entropy once the mechanism has consumed it.
fn take_entropy(config: &mut HandshakeConfig) -> [u8; 32] {
    std::mem::take(&mut config.entropy)
}

impl Handshake {
    /// A handshake about to send our greeting; feed it the peer's bytes and send what it produces.
    pub fn new(config: HandshakeConfig) -> Handshake {
        let mut out = Self::our_greeting(&config).encode()[..SIGNATURE_END].to_vec();
        // As libzmq: the padding is `identity length + 1`, so that the
        // signature doubles as the header of a ZMTP/1.0 identity frame (long
        // size, then flags 0x7F) should the peer turn out to speak 1.0.
        out[1..9].copy_from_slice(&(config.identity.len() as u64 + 1).to_be_bytes());
        Handshake {
            config,
            state: State::Greeting,
            out,
            peer_greeting: [0; GREETING_LEN],
            greeting_read: 0,
            negotiated: None,
            decoder: FrameDecoder::new(None),
            sent: SIGNATURE_END,
        }
    }

    /// libzmq speaks ZMTP/2.0 only without security: a 2.0 peer has no
    /// mechanism, and with ZAP asked for (a domain) the peer is refused.
    fn accepts_zmtp20(&self) -> bool {
        matches!(self.config.mechanism, MechanismConfig::Null) && self.config.zap_domain.is_empty()
    }

    fn our_greeting(config: &HandshakeConfig) -> Greeting {
        // NULL's as-server octet MUST be 0; PLAIN's and CURVE's come from the option.
        let as_server = !matches!(config.mechanism, MechanismConfig::Null) && config.as_server;
        Greeting::new(mechanism::wire_name(&config.mechanism), as_server)
            .expect("built-in mechanism names fit the greeting")
    }

    /// Applies `ZMQ_MAXMSGSIZE` to handshake commands too, as libzmq does
    /// (its decoder is the same one used for traffic). Default: no limit.
    pub fn set_max_msg_size(&mut self, max: Option<u64>) {
        self.decoder = FrameDecoder::new(max);
    }

    /// Appends bytes that must be sent to the peer.
    pub fn poll_transmit(&mut self, out: &mut Vec<u8>) {
        if let State::Mechanism(m) = &mut self.state {
            m.poll_transmit(&mut self.out);
        }
        out.append(&mut self.out);
    }

    /// The peer's negotiated minor version (0 for ZMTP 3.0, 1 for 3.1 or
    /// newer), once its greeting is in. Decides e.g. whether subscriptions
    /// go out as commands (3.1) or legacy messages (3.0).
    pub fn peer_minor_version(&self) -> Option<u8> {
        self.negotiated.map(|(_, minor)| minor)
    }

    /// Whether `handle_input` has returned the peer info.
    pub fn is_complete(&self) -> bool {
        matches!(self.state, State::Done(_))
    }

    /// Feeds bytes from the peer; see the type's call-order contract.
    pub fn handle_input(&mut self, buf: &mut BytesMut) -> Result<Option<PeerInfo>, HandshakeError> {
        match &self.state {
            State::Failed(e) => return Err(e.clone()),
            State::Done(_) => return Ok(None),
            _ => {}
        }
        let res = self.step(buf);
        self.finish(res)
    }

    /// A ZAP request the mechanism is waiting on, taken once.
    pub fn take_zap_request(&mut self) -> Option<ZapRequest> {
        match &mut self.state {
            State::Mechanism(m) => m.take_zap_request(),
            _ => None,
        }
    }

    /// The ZAP handler's reply to the request taken above.
    pub fn handle_zap_reply(&mut self, reply: ZapReply) -> Result<Option<PeerInfo>, HandshakeError> {
        self.after_zap(|m| m.zap_reply(reply))
    }

    /// No ZAP handler is bound: proceed or refuse as libzmq does.
    pub fn handle_zap_unavailable(&mut self) -> Result<Option<PeerInfo>, HandshakeError> {
        self.after_zap(|m| m.zap_unavailable())
    }

    /// A local failure the handshake stalls on, as libzmq's GSSAPI does
    /// when a GSS-API call fails (no credentials, a refused token): nothing
    /// more is sent, and the caller reports this when `ZMQ_HANDSHAKE_IVL`
    /// expires instead of a plain timeout.
    pub fn local_failure(&self) -> Option<HandshakeError> {
        match &self.state {
            State::Mechanism(m) => m.local_failure().cloned(),
            _ => None,
        }
    }

    /// The CURVE or GSSAPI traffic codec, once complete (taken once).
    pub fn take_codec(&mut self) -> Option<TrafficCodec> {
        match &mut self.state {
            State::Done(codec) => codec.take(),
            _ => None,
        }
    }

    fn after_zap(
        &mut self,
        f: impl FnOnce(&mut dyn Mechanism) -> Result<(), HandshakeError>,
    ) -> Result<Option<PeerInfo>, HandshakeError> {
        let State::Mechanism(m) = &mut self.state else {
            return match &self.state {
                State::Failed(e) => Err(e.clone()),
                _ => Ok(None),
            };
        };
        let res = f(m.as_mut());
        m.poll_transmit(&mut self.out);
        let res = res.map(|()| m.take_peer());
        self.finish(res)
    }

    fn finish(&mut self, res: Result<Option<PeerInfo>, HandshakeError>) -> Result<Option<PeerInfo>, HandshakeError> {
        match res {
            Ok(Some(peer)) => {
                let codec = match &mut self.state {
                    State::Mechanism(m) => m.take_codec(),
                    _ => None,
                };
                self.state = State::Done(codec);
                Ok(Some(peer))
            }
            Ok(None) => Ok(None),
            Err(e) => {
                // An ERROR the mechanism queued must still reach the wire.
                if let State::Mechanism(m) = &mut self.state {
                    m.poll_transmit(&mut self.out);
                }
                self.state = State::Failed(e.clone());
                Err(e)
            }
        }
    }

    fn step(&mut self, buf: &mut BytesMut) -> Result<Option<PeerInfo>, HandshakeError> {
        if let State::Greeting = self.state {
            if !self.read_greeting(buf)? {
                return Ok(None);
            }
        }
        if let State::Zmtp20 { peer_type } = self.state {
            return self.read_zmtp20_identity(peer_type, buf);
        }
        if let State::Zmtp10 { peer_type } = self.state {
            return self.read_zmtp10_identity(peer_type, buf);
        }
        let State::Mechanism(mech) = &mut self.state else {
            unreachable!("greeting done implies a mechanism");
        };
        // One frame at a time: once the mechanism completes, the rest of
        // `buf` is traffic and must stay there.
        // A mechanism that starts by asking ZAP (NULL with a domain) may
        // have nothing to wait for from the peer.
        mech.poll_transmit(&mut self.out);
        if let Some(peer) = mech.take_peer() {
            return Ok(Some(peer));
        }
        while !mech.awaiting_zap() {
            let Some(frame) = self.decoder.decode(buf)? else { break };
            if !frame.command {
                return Err(ProtocolError::UnexpectedMessage.into());
            }
            mech.process_command(&frame.body)?;
            mech.poll_transmit(&mut self.out);
            if let Some(peer) = mech.take_peer() {
                return Ok(Some(peer));
            }
        }
        Ok(None)
    }

    /// Returns true once the whole greeting is in and accepted (for a
    /// ZMTP/2.0 peer: its 12 octets, the state then being `Zmtp20`).
    fn read_greeting(&mut self, buf: &mut BytesMut) -> Result<bool, HandshakeError> {
        let map_version = |e| match e {
            // libzmq treats a peer without the 3.x signature as ZMTP/1.0.
            ProtocolError::BadSignature => HandshakeError::UnsupportedVersion { major: 1 },
            e => HandshakeError::from(e),
        };
        loop {
            // Never read past the revision octet before knowing the version:
            // a 2.0 greeting is 12 octets and its identity frame follows.
            let want = if self.greeting_read < MAJOR_END {
                MAJOR_END
            } else if self.peer_greeting[SIGNATURE_END] <= REVISION_2_0 {
                V2_GREETING_LEN
            } else {
                GREETING_LEN
            };
            let n = (want - self.greeting_read).min(buf.len());
            self.peer_greeting[self.greeting_read..self.greeting_read + n].copy_from_slice(&buf[..n]);
            buf.advance(n);
            self.greeting_read += n;
            let got = &self.peer_greeting[..self.greeting_read];
            if greeting::is_unversioned(got) && self.accepts_zmtp20() {
                self.start_unversioned(buf);
                return Ok(true);
            }
            let rev = got.get(SIGNATURE_END).copied();
            match rev {
                Some(REVISION_1_0 | REVISION_2_0) if self.accepts_zmtp20() => {}
                _ => greeting::check_prefix(got).map_err(map_version)?,
            }
            if got.len() >= SIGNATURE_END && self.sent == SIGNATURE_END {
                // The peer is versioned: tell it our major version.
                self.out.push(3);
                self.sent = MAJOR_END;
            }
            let Some(rev) = rev else { return Ok(false) };
            if self.sent == MAJOR_END {
                if rev == REVISION_2_0 {
                    // Downgrade: the 2.0 greeting's socket type, then our
                    // identity as a 2.0 frame (flags 0, as libzmq sends it:
                    // ZMQ_ROUTING_ID whatever the socket type, unlike 3.x's
                    // Identity property).
                    self.out.push(self.config.socket_type.as_raw() as u8);
                    crate::frame::encode_frame(&mut self.out, false, false, &self.config.identity);
                } else if rev == REVISION_1_0 {
                    // The same greeting, then our identity in 1.0 framing.
                    self.out.push(self.config.socket_type.as_raw() as u8);
                    crate::frame::encode_zmtp10_frame_header(&mut self.out, false, self.config.identity.len());
                    self.out.extend_from_slice(&self.config.identity);
                } else {
                    let ours = Self::our_greeting(&self.config).encode();
                    self.out.extend_from_slice(&ours[MAJOR_END..]);
                }
                self.sent = GREETING_LEN;
            }
            if self.greeting_read < want {
                return Ok(false);
            }
            if want == V2_GREETING_LEN {
                let peer_type = self.peer_greeting[V2_GREETING_LEN - 1];
                if rev == REVISION_1_0 {
                    self.enter_zmtp10(Some(peer_type));
                } else {
                    self.negotiated = Some((2, 0));
                    self.state = State::Zmtp20 { peer_type };
                }
                return Ok(true);
            }
            if want == GREETING_LEN {
                break;
            }
        }
        let theirs = Greeting::decode(&self.peer_greeting).map_err(map_version)?;
        let ours = Self::our_greeting(&self.config);
        // libzmq compares all 20 octets, padding included.
        if theirs.mechanism != ours.mechanism {
            return Err(HandshakeError::MechanismMismatch {
                ours: trim_nuls(&ours.mechanism).to_vec(),
                theirs: trim_nuls(&theirs.mechanism).to_vec(),
            });
        }
        let version = theirs.negotiated_version();
        self.negotiated = Some(version);
        let entropy = take_entropy(&mut self.config);
        let mut mech = mechanism::new_mechanism(&self.config, entropy);
        mech.set_version(version);
        mech.poll_transmit(&mut self.out);
        self.state = State::Mechanism(mech);
        Ok(true)
    }

    /// An unversioned ZMTP/1.0 peer: what it sent so far is the start of
    /// its identity frame, and our signature was the header of ours, so
    /// only our identity's body is left to send.
    fn start_unversioned(&mut self, buf: &mut BytesMut) {
        let mut all = BytesMut::with_capacity(self.greeting_read + buf.len());
        all.extend_from_slice(&self.peer_greeting[..self.greeting_read]);
        all.extend_from_slice(buf);
        *buf = all;
        self.greeting_read = 0;
        self.out.extend_from_slice(&self.config.identity);
        self.sent = GREETING_LEN;
        self.enter_zmtp10(None);
    }

    fn enter_zmtp10(&mut self, peer_type: Option<u8>) {
        self.negotiated = Some((1, 0));
        self.decoder = FrameDecoder::zmtp10(self.decoder.max_msg_size());
        self.state = State::Zmtp10 { peer_type };
    }

    /// ZMTP/1.0: the peer's first frame is its identity. libzmq keeps only
    /// its MORE bit and checks nothing else of it; the traffic that follows
    /// is in 1.0 framing, which the caller's decoder must then speak
    /// ([`FrameDecoder::zmtp10`]).
    fn read_zmtp10_identity(
        &mut self,
        peer_type: Option<u8>,
        buf: &mut BytesMut,
    ) -> Result<Option<PeerInfo>, HandshakeError> {
        let Some(frame) = self.decoder.decode(buf)? else { return Ok(None) };
        let socket_type = peer_type.and_then(|t| SocketType::from_raw(i32::from(t))).unwrap_or(self.config.socket_type);
        Ok(Some(PeerInfo {
            version: (1, 0),
            socket_type,
            identity: (!frame.body.is_empty()).then_some(frame.body),
            metadata: Metadata::default(),
            user_id: None,
            zap_properties: Metadata::default(),
            filters_locally: peer_type.is_none(),
        }))
    }

    /// ZMTP/2.0: the peer's first frame is its identity. Like libzmq, the
    /// socket types are not checked against each other and no metadata
    /// exists; a peer sending garbage fails the frame decoder.
    fn read_zmtp20_identity(&mut self, peer_type: u8, buf: &mut BytesMut) -> Result<Option<PeerInfo>, HandshakeError> {
        let Some(frame) = self.decoder.decode(buf)? else { return Ok(None) };
        if frame.command || frame.more {
            return Err(ProtocolError::UnexpectedMessage.into());
        }
        // An unknown type octet is kept as our own type's peer: nothing
        // downstream may depend on it for a 2.0 peer.
        let socket_type = SocketType::from_raw(i32::from(peer_type)).unwrap_or(self.config.socket_type);
        Ok(Some(PeerInfo {
            version: (2, 0),
            socket_type,
            identity: (!frame.body.is_empty()).then_some(frame.body),
            metadata: Metadata::default(),
            user_id: None,
            zap_properties: Metadata::default(),
            filters_locally: false,
        }))
    }
}

fn trim_nuls(s: &[u8]) -> &[u8] {
    let end = s.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    &s[..end]
}
