//! The CURVE client: HELLO, then INITIATE with the vouch once WELCOME
//! arrives, then READY completes the handshake.

use bytes::Bytes;
use crypto_box::SecretKey;
use oxmq_sodium::BoxKey;
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

use super::{box_key, key32, long_nonce, open, seal_into, short_nonce, CurveCodec, KEY_LEN};
use crate::command::Metadata;
use crate::error::{HandshakeError, ProtocolError};
use crate::handshake::{CurveConfig, HandshakeConfig, PeerInfo};
use crate::mechanism::{is_command, Mechanism};
use crate::socket_type::SocketType;

pub(super) const HELLO_LEN: usize = 200;
pub(super) const WELCOME_LEN: usize = 168;
/// `\x05READY`, short nonce, tag.
pub(super) const READY_MIN: usize = 6 + 8 + 16;

enum State {
    ExpectWelcome,
    /// INITIATE is out; `precom` is Box(S', c').
    ExpectReady(BoxKey),
    Done,
    Failed,
}

pub(crate) struct CurveClient {
    socket_type: SocketType,
    version: (u8, u8),
    properties: Metadata,
    public: [u8; KEY_LEN],
    secret: SecretKey,
    server: [u8; KEY_LEN],
    cn_secret: SecretKey,
    cn_public: [u8; KEY_LEN],
    vouch_nonce: [u8; 16],
    nonce: u64,
    out: Vec<Vec<u8>>,
    state: State,
    peer: Option<PeerInfo>,
    /// The traffic codec, once the handshake is done (taken once).
    codec: Option<CurveCodec>,
}

impl CurveClient {
    pub(crate) fn new(config: &HandshakeConfig, curve: &CurveConfig, seed: [u8; 32]) -> Self {
        let mut rng = ChaCha20Rng::from_seed(seed);
        let cn_secret = super::random_secret(&mut rng);
        let mut vouch_nonce = [0; 16];
        rng.fill_bytes(&mut vouch_nonce);
        let mut me = CurveClient {
            socket_type: config.socket_type,
            version: (3, 1),
            properties: super::super::basic_properties(config),
            public: curve.public_key,
            secret: SecretKey::from_bytes(*curve.secret_key),
            server: curve.server_key,
            cn_public: cn_secret.public_key().to_bytes(),
            cn_secret,
            vouch_nonce,
            nonce: 1,
            out: Vec::new(),
            codec: None,
            state: State::ExpectWelcome,
            peer: None,
        };
        let hello = me.hello();
        me.out.push(hello);
        me
    }

    /// `\x05HELLO`, version 1.0, 72 octets of padding (so the server's
    /// WELCOME is never larger than what provoked it), C', short nonce,
    /// Box[64 zeros](C'->S).
    fn hello(&mut self) -> Vec<u8> {
        let mut body = Vec::with_capacity(HELLO_LEN);
        body.extend_from_slice(b"\x05HELLO\x01\x00");
        body.extend_from_slice(&[0; 72]);
        body.extend_from_slice(&self.cn_public);
        body.extend_from_slice(&self.nonce.to_be_bytes());
        match box_key(&self.server, &self.cn_secret) {
            Some(bx) => seal_into(&bx, &short_nonce(b"CurveZMQHELLO---", self.nonce), &[0; 64], &mut body),
            // A low-order server key (a configuration error) makes no box:
            // send one that cannot open, so the server refuses this client
            // at once, as it would any HELLO it cannot open.
            None => body.extend_from_slice(&[0; 16 + 64]),
        }
        self.nonce += 1;
        body
    }

    /// Opens WELCOME and answers with INITIATE.
    fn on_welcome(&mut self, body: &[u8]) -> Result<BoxKey, HandshakeError> {
        if body.len() != WELCOME_LEN {
            return Err(ProtocolError::MalformedCommand { name: b"WELCOME".to_vec() }.into());
        }
        let plain = box_key(&self.server, &self.cn_secret)
            .and_then(|bx| open(&bx, &long_nonce(b"WELCOME-", &body[8..24]), &body[24..]))
            .ok_or(ProtocolError::Cryptographic { what: "WELCOME" })?;
        let server_short = key32(&plain[..32]);
        let cookie = &plain[32..128];

        // Vouch: Box[C' + S](C->S'), proving the long-term key holder made C'.
        let mut vouch_plain = [0u8; 64];
        vouch_plain[..32].copy_from_slice(&self.cn_public);
        vouch_plain[32..].copy_from_slice(&self.server);
        let mut vouch = Vec::with_capacity(96);
        vouch.extend_from_slice(&self.vouch_nonce);
        let vouch_box = box_key(&server_short, &self.secret).ok_or(ProtocolError::Cryptographic { what: "WELCOME" })?;
        seal_into(&vouch_box, &long_nonce(b"VOUCH---", &self.vouch_nonce), &vouch_plain, &mut vouch);

        let mut plain = Vec::with_capacity(128 + self.properties.encoded_len());
        plain.extend_from_slice(&self.public);
        plain.extend_from_slice(&vouch);
        self.properties.encode(&mut plain);

        let precom = box_key(&server_short, &self.cn_secret).ok_or(ProtocolError::Cryptographic { what: "WELCOME" })?;
        let mut initiate = Vec::with_capacity(113 + 16 + plain.len());
        initiate.extend_from_slice(b"\x08INITIATE");
        initiate.extend_from_slice(cookie);
        initiate.extend_from_slice(&self.nonce.to_be_bytes());
        seal_into(&precom, &short_nonce(b"CurveZMQINITIATE", self.nonce), &plain, &mut initiate);
        self.nonce += 1;
        self.out.push(initiate);
        Ok(precom)
    }

    /// Opens READY: the server's metadata.
    fn on_ready(&mut self, precom: BoxKey, body: &[u8]) -> Result<(), HandshakeError> {
        if body.len() < READY_MIN {
            return Err(ProtocolError::MalformedCommand { name: b"READY".to_vec() }.into());
        }
        let n = u64::from_be_bytes(body[6..14].try_into().expect("8 octets"));
        let plain = open(&precom, &short_nonce(b"CurveZMQREADY---", n), &body[14..])
            .ok_or(ProtocolError::Cryptographic { what: "READY" })?;
        let metadata = Metadata::decode(&plain)?;
        self.peer = Some(crate::mechanism::validate_peer(self.socket_type, self.version, metadata)?);
        self.codec = Some(CurveCodec::new(precom, false, self.nonce, n));
        self.state = State::Done;
        Ok(())
    }
}

impl Mechanism for CurveClient {
    fn set_version(&mut self, version: (u8, u8)) {
        self.version = version;
    }

    fn poll_transmit(&mut self, out: &mut Vec<u8>) {
        crate::mechanism::write_commands(&mut self.out, out);
    }

    fn process_command(&mut self, body: &Bytes) -> Result<(), HandshakeError> {
        let state = std::mem::replace(&mut self.state, State::Failed);
        if is_command(body, b"ERROR") && matches!(state, State::ExpectWelcome | State::ExpectReady(_)) {
            return Err(crate::mechanism::peer_error(body));
        }
        match state {
            State::ExpectWelcome if is_command(body, b"WELCOME") => {
                let precom = self.on_welcome(body)?;
                self.state = State::ExpectReady(precom);
                Ok(())
            }
            State::ExpectReady(precom) if is_command(body, b"READY") => self.on_ready(precom, body),
            _ => Err(ProtocolError::UnexpectedCommand { name: crate::mechanism::command_name(body) }.into()),
        }
    }

    fn take_peer(&mut self) -> Option<PeerInfo> {
        crate::mechanism::peer_once_sent(&self.out, &mut self.peer)
    }

    fn take_codec(&mut self) -> Option<crate::mechanism::TrafficCodec> {
        self.codec.take().map(crate::mechanism::TrafficCodec::Curve)
    }
}
