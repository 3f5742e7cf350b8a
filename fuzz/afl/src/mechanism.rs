//! Greeting/version detection and the security handshakes (NULL, PLAIN,
//! CURVE), each against raw fuzz bytes or against an honest peer whose bytes
//! the fuzzer corrupts in flight (which reaches the later CURVE states that
//! random bytes never would: a forged box fails at the first command).

use bytes::{Bytes, BytesMut};
use oxmq_proto::greeting::{Greeting, GREETING_LEN};
use oxmq_proto::{
    keypair_from_entropy, CurveConfig, FrameDecoder, Handshake, HandshakeConfig, HandshakeError, MechanismConfig,
    PeerInfo, PlainConfig, SocketType, ZapReply,
};
use std::sync::OnceLock;
use zeroize::Zeroizing;

/// A 64-octet greeting decodes, re-encodes to itself, and a handshake reaches
/// the same verdict whether the bytes come at once or one at a time.
pub fn greeting(data: &[u8]) {
    if data.len() >= GREETING_LEN {
        let raw: [u8; GREETING_LEN] = data[..GREETING_LEN].try_into().unwrap();
        if let Ok(g) = Greeting::decode(&raw) {
            let again = Greeting::decode(&g.encode()).expect("an encoded greeting decodes");
            assert_eq!(again.mechanism_name(), g.mechanism_name());
            assert_eq!(again.negotiated_version(), g.negotiated_version());
            assert_eq!(again.as_server, g.as_server);
        }
    }
    let Some((&ty, stream)) = data.split_first() else { return };
    let socket_type = SocketType::ALL[usize::from(ty) % SocketType::ALL.len()];
    let whole = verdict(socket_type, stream, stream.len().max(1));
    let bytewise = verdict(socket_type, stream, 1);
    assert_eq!(whole, bytewise, "chunking changed the handshake's verdict");
}

/// None = still going; Some(true) = done; Some(false) = refused.
fn verdict(socket_type: SocketType, stream: &[u8], chunk: usize) -> Option<bool> {
    let mut hs = Handshake::new(HandshakeConfig::null(socket_type, b""));
    let mut out = Vec::new();
    hs.poll_transmit(&mut out);
    let mut buf = BytesMut::new();
    for part in stream.chunks(chunk) {
        buf.extend_from_slice(part);
        match hs.handle_input(&mut buf) {
            Ok(Some(_)) => return Some(true),
            Ok(None) => {}
            Err(_) => return Some(false),
        }
        hs.poll_transmit(&mut out);
    }
    None
}

/// The long-term key pairs, derived once: two scalar multiplications per
/// input would otherwise dominate the NULL and PLAIN inputs' run time.
fn keys(seed: u8) -> ([u8; 32], Zeroizing<[u8; 32]>) {
    type Pair = ([u8; 32], Zeroizing<[u8; 32]>);
    static SERVER: OnceLock<Pair> = OnceLock::new();
    static CLIENT: OnceLock<Pair> = OnceLock::new();
    let slot = if seed == 7 { &SERVER } else { &CLIENT };
    slot.get_or_init(|| keypair_from_entropy([seed; 32])).clone()
}

/// Our side and an honest peer for mechanism `mech` (0 NULL, 1 PLAIN, 2 CURVE).
fn configs(mech: u8, we_serve: bool, socket_type: SocketType) -> (HandshakeConfig, HandshakeConfig) {
    let peer_type = match socket_type {
        SocketType::Req => SocketType::Rep,
        SocketType::Rep => SocketType::Req,
        SocketType::Push => SocketType::Pull,
        SocketType::Pull => SocketType::Push,
        SocketType::Pub => SocketType::Sub,
        SocketType::Sub => SocketType::Pub,
        SocketType::Router => SocketType::Dealer,
        other => other,
    };
    let (server_pub, server_sec) = keys(7);
    let (client_pub, client_sec) = keys(9);
    let make = |server: bool, ty: SocketType, entropy: u8| {
        let mechanism = match mech {
            0 => MechanismConfig::Null,
            1 if server => MechanismConfig::Plain(PlainConfig::default()),
            1 => MechanismConfig::Plain(PlainConfig {
                username: b"admin".to_vec(),
                password: Zeroizing::new(b"secret".to_vec()),
            }),
            _ if server => MechanismConfig::Curve(CurveConfig {
                public_key: server_pub,
                secret_key: server_sec.clone(),
                server_key: [0; 32],
            }),
            _ => MechanismConfig::Curve(CurveConfig {
                public_key: client_pub,
                secret_key: client_sec.clone(),
                server_key: server_pub,
            }),
        };
        HandshakeConfig {
            as_server: server,
            mechanism,
            zap_domain: if entropy % 2 == 0 { b"global".to_vec() } else { Vec::new() },
            entropy: [entropy; 32],
            ..HandshakeConfig::null(ty, b"id")
        }
    };
    (make(we_serve, socket_type, 2), make(!we_serve, peer_type, 3))
}

fn zap_reply(status: &[u8]) -> ZapReply {
    let frames: Vec<(bool, Bytes)> = [&b""[..], b"1.0", b"1", status, b"text", b"user", b""]
        .iter()
        .enumerate()
        .map(|(i, f)| (i < 6, Bytes::copy_from_slice(f)))
        .collect();
    ZapReply::parse(&frames).expect("well-formed ZAP reply")
}

struct Side {
    hs: Handshake,
    inbox: BytesMut,
    done: Option<Result<PeerInfo, HandshakeError>>,
}

impl Side {
    fn new(cfg: HandshakeConfig) -> Side {
        Side { hs: Handshake::new(cfg), inbox: BytesMut::new(), done: None }
    }

    fn step(&mut self, zap: u8) -> Vec<u8> {
        if self.done.is_none() && !self.inbox.is_empty() {
            let r = self.hs.handle_input(&mut self.inbox);
            self.record(r);
        }
        if self.done.is_none() {
            if let Some(_req) = self.hs.take_zap_request() {
                let r = match zap {
                    0 => self.hs.handle_zap_unavailable(),
                    1 => self.hs.handle_zap_reply(zap_reply(b"200")),
                    2 => self.hs.handle_zap_reply(zap_reply(b"400")),
                    _ => self.hs.handle_zap_reply(zap_reply(b"500")),
                };
                self.record(r);
            }
        }
        let mut out = Vec::new();
        self.hs.poll_transmit(&mut out);
        out
    }

    fn record(&mut self, r: Result<Option<PeerInfo>, HandshakeError>) {
        match r {
            Ok(Some(p)) => self.done = Some(Ok(p)),
            Ok(None) => {}
            Err(e) => self.done = Some(Err(e)),
        }
    }
}

/// Octet 0: bits 0-1 mechanism, bit 2 we are the server, bits 3-4 the ZAP
/// handler's answer, bit 5 honest peer with corruption (else raw bytes).
/// Octet 1: our socket type. Raw: the rest is the peer's stream. Honest: the
/// rest is (position u16 BE, xor) triples applied to the peer's stream, an
/// xor of 0 cutting it there.
pub fn mechanism(data: &[u8]) {
    let (Some(&mode), Some(&ty)) = (data.first(), data.get(1)) else { return };
    let mech = (mode & 3).min(2);
    let we_serve = mode & 4 != 0;
    let zap = (mode >> 3) & 3;
    let socket_type = SocketType::ALL[usize::from(ty) % SocketType::ALL.len()];
    let (ours, theirs) = configs(mech, we_serve, socket_type);
    let rest = &data[2..];
    let mut us = Side::new(ours);
    if mode & 0x20 == 0 {
        for part in rest.chunks(usize::from(ty >> 4).max(1) * 7) {
            us.inbox.extend_from_slice(part);
            us.step(zap);
            if us.done.is_some() {
                break;
            }
        }
    } else {
        let patches: Vec<(usize, u8)> =
            rest.chunks_exact(3).map(|p| (usize::from(u16::from_be_bytes([p[0], p[1]])), p[2])).collect();
        let mut peer = Side::new(theirs);
        let mut sent = 0usize;
        let mut cut = false;
        for _ in 0..64 {
            let to_peer = us.step(zap);
            peer.inbox.extend_from_slice(&to_peer);
            let mut to_us = peer.step(1);
            for (i, b) in to_us.iter_mut().enumerate() {
                for &(pos, x) in &patches {
                    if pos == sent + i {
                        if x == 0 {
                            cut = true;
                        }
                        *b ^= x;
                    }
                }
            }
            if cut {
                if let Some(at) = patches.iter().filter(|p| p.1 == 0 && p.0 >= sent).map(|p| p.0 - sent).min() {
                    to_us.truncate(at.min(to_us.len()));
                }
            }
            sent += to_us.len();
            let idle = to_peer.is_empty() && to_us.is_empty();
            us.inbox.extend_from_slice(&to_us);
            if us.done.is_some() || idle {
                break;
            }
        }
    }
    if let Some(Ok(_)) = &us.done {
        // Traffic after the handshake: CURVE boxes or plain frames.
        let mut tail = BytesMut::from(&rest[rest.len() / 2..]);
        match us.hs.take_codec() {
            Some(mut codec) => {
                let _ = codec.decode(tail.freeze());
            }
            None => {
                let mut dec = FrameDecoder::new(Some(4096));
                while let Ok(Some(_)) = dec.decode(&mut tail) {}
            }
        }
    }
}
