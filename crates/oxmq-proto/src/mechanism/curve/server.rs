//! The CURVE server: answers HELLO with WELCOME (S' and the cookie), checks
//! INITIATE's cookie and vouch, asks ZAP about the client's long-term key,
//! then sends READY.

use bytes::Bytes;
use crypto_box::SecretKey;
use crypto_secretbox::aead::generic_array::GenericArray;
use crypto_secretbox::aead::{AeadInPlace, KeyInit};
use crypto_secretbox::XSalsa20Poly1305;
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use super::client::{HELLO_LEN, WELCOME_LEN};
use super::{box_key, key32, long_nonce, open, seal_into, short_nonce, CurveCodec, KEY_LEN, TAG_LEN};
use crate::command::Metadata;
use crate::error::{HandshakeError, ProtocolError};
use crate::handshake::{CurveConfig, HandshakeConfig, PeerInfo};
use crate::mechanism::{is_command, Mechanism, ZapOutcome};
use crate::socket_type::SocketType;
use crate::zap::{ZapReply, ZapRequest};

/// `\x08INITIATE`, cookie (96), short nonce (8), Box[C + vouch] (144).
const INITIATE_MIN: usize = 9 + 96 + 8 + 144;

/// What survives INITIATE until READY: the session box and the client.
struct Session {
    precom: oxmq_sodium::BoxKey,
    peer: PeerInfo,
    last_recv_nonce: u64,
}

enum State {
    ExpectHello,
    /// WELCOME is out. Only the cookie key is kept: C' and s' are in the cookie.
    ExpectInitiate,
    ToAsk(Box<Session>, ZapRequest),
    WaitingForZap(Box<Session>),
    Done,
    Failed,
}

pub(crate) struct CurveServer {
    socket_type: SocketType,
    version: (u8, u8),
    properties: Metadata,
    public: [u8; KEY_LEN],
    secret: SecretKey,
    rng: ChaCha20Rng,
    cookie_key: Zeroizing<[u8; 32]>,
    last_recv_nonce: u64,
    nonce: u64,
    zap_template: ZapRequest,
    enforce_domain: bool,
    out: Vec<Vec<u8>>,
    state: State,
    peer: Option<PeerInfo>,
    /// The traffic codec, once the handshake is done (taken once).
    codec: Option<CurveCodec>,
}

fn malformed(name: &[u8]) -> HandshakeError {
    ProtocolError::MalformedCommand { name: name.to_vec() }.into()
}

impl CurveServer {
    pub(crate) fn new(config: &HandshakeConfig, curve: &CurveConfig, seed: [u8; 32]) -> Self {
        CurveServer {
            socket_type: config.socket_type,
            version: (3, 1),
            properties: super::super::basic_properties(config),
            public: super::public_key_of(&curve.secret_key),
            secret: SecretKey::from_bytes(*curve.secret_key),
            rng: ChaCha20Rng::from_seed(seed),
            cookie_key: Zeroizing::new([0; 32]),
            last_recv_nonce: 0,
            nonce: 1,
            zap_template: crate::mechanism::zap_request(config, "CURVE", Vec::new()),
            enforce_domain: config.zap_enforce_domain,
            out: Vec::new(),
            codec: None,
            state: State::ExpectHello,
            peer: None,
        }
    }

    fn random16(&mut self) -> [u8; 16] {
        let mut b = [0; 16];
        self.rng.fill_bytes(&mut b);
        b
    }

    /// Opens HELLO's Box[64 zeros](C'->S) and answers with WELCOME.
    fn on_hello(&mut self, body: &[u8]) -> Result<(), HandshakeError> {
        if body.len() != HELLO_LEN || body[6..8] != [1, 0] {
            return Err(malformed(b"HELLO"));
        }
        let client_short = key32(&body[80..112]);
        let n = u64::from_be_bytes(body[112..120].try_into().expect("8 octets"));
        // A low-order C' cannot make a box: the same answer as a box that does not open.
        let hello_box = box_key(&client_short, &self.secret).ok_or(ProtocolError::Cryptographic { what: "HELLO" })?;
        open(&hello_box, &short_nonce(b"CurveZMQHELLO---", n), &body[120..])
            .ok_or(ProtocolError::Cryptographic { what: "HELLO" })?;
        self.last_recv_nonce = n;

        let short_secret = super::random_secret(&mut self.rng);
        self.rng.fill_bytes(&mut *self.cookie_key);

        // Cookie = nonce + Box[C' + s'](K), K known only to this connection.
        let cookie_nonce = self.random16();
        let mut cookie_plain = Zeroizing::new([0u8; 64]);
        cookie_plain[..32].copy_from_slice(&client_short);
        cookie_plain[32..].copy_from_slice(&short_secret.to_bytes());
        let mut cookie = Vec::with_capacity(96);
        cookie.extend_from_slice(&cookie_nonce);
        let at = cookie.len();
        cookie.extend_from_slice(&[0; TAG_LEN]);
        cookie.extend_from_slice(&*cookie_plain);
        let cipher = XSalsa20Poly1305::new(GenericArray::from_slice(&*self.cookie_key));
        let tag = cipher
            .encrypt_in_place_detached(
                GenericArray::from_slice(&long_nonce(b"COOKIE--", &cookie_nonce)),
                b"",
                &mut cookie[at + TAG_LEN..],
            )
            .expect("secretbox encrypts any length without associated data");
        cookie[at..at + TAG_LEN].copy_from_slice(&tag);

        let mut plain = Vec::with_capacity(128);
        plain.extend_from_slice(&short_secret.public_key().to_bytes());
        plain.extend_from_slice(&cookie);
        let welcome_nonce = self.random16();
        let mut welcome = Vec::with_capacity(WELCOME_LEN);
        welcome.extend_from_slice(b"\x07WELCOME");
        welcome.extend_from_slice(&welcome_nonce);
        seal_into(&hello_box, &long_nonce(b"WELCOME-", &welcome_nonce), &plain, &mut welcome);
        self.out.push(welcome);
        Ok(())
    }

    /// Recovers C' and s' from the cookie, opens INITIATE, checks the vouch.
    fn on_initiate(&mut self, body: &[u8]) -> Result<(), HandshakeError> {
        if body.len() < INITIATE_MIN {
            return Err(malformed(b"INITIATE"));
        }
        let cookie = &body[9..105];
        let cipher = XSalsa20Poly1305::new(GenericArray::from_slice(&*self.cookie_key));
        let mut cookie_plain = Zeroizing::new(cookie[32..].to_vec());
        cipher
            .decrypt_in_place_detached(
                GenericArray::from_slice(&long_nonce(b"COOKIE--", &cookie[..16])),
                b"",
                &mut cookie_plain,
                GenericArray::from_slice(&cookie[16..32]),
            )
            .map_err(|_| ProtocolError::Cryptographic { what: "cookie" })?;
        // One INITIATE per cookie.
        *self.cookie_key = [0; 32];
        let client_short = key32(&cookie_plain[..32]);
        let short_secret = SecretKey::from_slice(&cookie_plain[32..64]).expect("32 octets");

        let n = u64::from_be_bytes(body[105..113].try_into().expect("8 octets"));
        if n <= self.last_recv_nonce {
            return Err(ProtocolError::InvalidSequence.into());
        }
        let precom = box_key(&client_short, &short_secret).ok_or(ProtocolError::Cryptographic { what: "INITIATE" })?;
        let plain = open(&precom, &short_nonce(b"CurveZMQINITIATE", n), &body[113..])
            .ok_or(ProtocolError::Cryptographic { what: "INITIATE" })?;
        let client_long = key32(&plain[..32]);
        let vouch = box_key(&client_long, &short_secret)
            .and_then(|bx| open(&bx, &long_nonce(b"VOUCH---", &plain[32..48]), &plain[48..128]))
            .ok_or(ProtocolError::Cryptographic { what: "vouch" })?;
        let short_ok = vouch[..32].ct_eq(&client_short);
        let server_ok = vouch[32..64].ct_eq(&self.public);
        if !bool::from(short_ok & server_ok) {
            return Err(ProtocolError::KeyExchange.into());
        }
        let metadata = Metadata::decode(&plain[128..])?;
        let peer = crate::mechanism::validate_peer(self.socket_type, self.version, metadata)?;
        let session = Box::new(Session { precom, peer, last_recv_nonce: n });
        let mut req = self.zap_template.clone();
        req.credentials = vec![client_long.to_vec()];
        self.state = State::ToAsk(session, req);
        Ok(())
    }

    /// Sends READY and completes.
    fn ready(&mut self, session: Session, outcome: ZapOutcome) {
        let mut plain = Vec::with_capacity(self.properties.encoded_len());
        self.properties.encode(&mut plain);
        let mut ready = Vec::with_capacity(14 + TAG_LEN + plain.len());
        ready.extend_from_slice(b"\x05READY");
        ready.extend_from_slice(&self.nonce.to_be_bytes());
        seal_into(&session.precom, &short_nonce(b"CurveZMQREADY---", self.nonce), &plain, &mut ready);
        self.nonce += 1;
        self.out.push(ready);
        let mut peer = session.peer;
        outcome.apply(&mut peer);
        self.peer = Some(peer);
        self.codec = Some(CurveCodec::new(session.precom, true, self.nonce, session.last_recv_nonce));
        self.state = State::Done;
    }
}

impl Mechanism for CurveServer {
    fn set_version(&mut self, version: (u8, u8)) {
        self.version = version;
    }

    fn poll_transmit(&mut self, out: &mut Vec<u8>) {
        crate::mechanism::write_commands(&mut self.out, out);
    }

    fn process_command(&mut self, body: &Bytes) -> Result<(), HandshakeError> {
        match std::mem::replace(&mut self.state, State::Failed) {
            State::ExpectHello if is_command(body, b"HELLO") => {
                self.on_hello(body)?;
                self.state = State::ExpectInitiate;
                Ok(())
            }
            State::ExpectInitiate if is_command(body, b"INITIATE") => self.on_initiate(body),
            _ if is_command(body, b"ERROR") => Err(crate::mechanism::peer_error(body)),
            _ => Err(ProtocolError::UnexpectedCommand { name: crate::mechanism::command_name(body) }.into()),
        }
    }

    fn take_peer(&mut self) -> Option<PeerInfo> {
        crate::mechanism::peer_once_sent(&self.out, &mut self.peer)
    }

    fn awaiting_zap(&self) -> bool {
        matches!(self.state, State::ToAsk(..) | State::WaitingForZap(_))
    }

    fn take_zap_request(&mut self) -> Option<ZapRequest> {
        match std::mem::replace(&mut self.state, State::Failed) {
            State::ToAsk(session, req) => {
                self.state = State::WaitingForZap(session);
                Some(req)
            }
            other => {
                self.state = other;
                None
            }
        }
    }

    fn zap_reply(&mut self, reply: ZapReply) -> Result<(), HandshakeError> {
        let State::WaitingForZap(session) = std::mem::replace(&mut self.state, State::Failed) else {
            return Err(ProtocolError::UnexpectedCommand { name: b"ZAP".to_vec() }.into());
        };
        match ZapOutcome::from_reply(reply) {
            Ok(outcome) => {
                self.ready(*session, outcome);
                Ok(())
            }
            Err((error, failure)) => {
                self.out.extend(error);
                Err(failure)
            }
        }
    }

    /// No handler: libzmq lets the client in (CurveZMQ's "Stonehouse":
    /// encryption without authentication) unless `ZAP_ENFORCE_DOMAIN`.
    fn zap_unavailable(&mut self) -> Result<(), HandshakeError> {
        match std::mem::replace(&mut self.state, State::Failed) {
            State::WaitingForZap(session) | State::ToAsk(session, _) if !self.enforce_domain => {
                self.ready(*session, ZapOutcome::default());
                Ok(())
            }
            _ => Err(HandshakeError::ZapUnavailable),
        }
    }

    fn take_codec(&mut self) -> Option<crate::mechanism::TrafficCodec> {
        self.codec.take().map(crate::mechanism::TrafficCodec::Curve)
    }
}
