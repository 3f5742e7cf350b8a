//! Bodies of the cargo-fuzz targets, kept here so the corpus can be
//! replayed by ordinary tests. Inputs must never panic.

use bytes::BytesMut;

use crate::command::Command;
use crate::frame::FrameDecoder;
use crate::handshake::{Handshake, HandshakeConfig};
use crate::socket_type::SocketType;

/// Frames and commands from arbitrary bytes, fed in growing chunks, in
/// ZMTP 3.x framing and then in ZMTP/1.0 framing.
pub fn decode(data: &[u8]) {
    let max = data.first().map(|&b| u64::from(b) * 16);
    decode_with(FrameDecoder::new(max), data);
    decode_with(FrameDecoder::zmtp10(max), data);
}

fn decode_with(mut dec: FrameDecoder, data: &[u8]) {
    let mut buf = BytesMut::new();
    for chunk in data.chunks(7) {
        buf.extend_from_slice(chunk);
        let _ = dec.pending_frame_len(&buf);
        loop {
            match dec.decode(&mut buf) {
                Ok(Some(frame)) => {
                    if frame.command {
                        if let Ok(cmd) = Command::parse(&frame.body) {
                            let mut out = Vec::new();
                            cmd.encode(&mut out);
                            // Re-encoding what we parsed must parse again.
                            let mut re = BytesMut::from(&out[..]);
                            let again = FrameDecoder::new(None).decode(&mut re);
                            assert!(matches!(again, Ok(Some(_))), "re-encoded command must decode");
                        }
                    }
                }
                Ok(None) => break,
                Err(_) => return,
            }
        }
    }
}

/// A handshake fed arbitrary peer bytes. Octet 0 picks our socket type,
/// octet 1 the chunk size (0 = all at once); the rest is the peer's stream.
pub fn handshake(data: &[u8]) {
    let (Some(&ty), Some(&chunk)) = (data.first(), data.get(1)) else {
        return;
    };
    let socket_type = SocketType::ALL[usize::from(ty) % SocketType::ALL.len()];
    let mut hs = Handshake::new(HandshakeConfig::null(socket_type, b"fuzz"));
    let mut out = Vec::new();
    hs.poll_transmit(&mut out);
    let input = &data[2..];
    let chunk = if chunk == 0 { input.len().max(1) } else { usize::from(chunk) };
    let mut buf = BytesMut::new();
    for part in input.chunks(chunk) {
        buf.extend_from_slice(part);
        let res = hs.handle_input(&mut buf);
        hs.poll_transmit(&mut out);
        match res {
            Ok(Some(_)) => {
                // What is left is traffic; it must be decodable or rejected
                // without panicking.
                let mut dec = FrameDecoder::new(None);
                while let Ok(Some(_)) = dec.decode(&mut buf) {}
                return;
            }
            Ok(None) => {}
            Err(_) => return,
        }
    }
}

/// Keys and entropy the security targets (and their seeds) are built with.
pub mod security {
    use bytes::{Bytes, BytesMut};
    use zeroize::Zeroizing;

    use crate::handshake::{CurveConfig, Handshake, HandshakeConfig, MechanismConfig, PlainConfig};
    use crate::mechanism::curve::keypair_from_entropy;
    use crate::session::{Session, SessionConfig};
    use crate::socket_type::SocketType;
    use crate::zap::ZapReply;

    /// Which mechanism a target drives.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Mech {
        Plain,
        Curve,
    }

    /// The config of one side: `server` picks the role; entropy is fixed so
    /// that recorded transcripts replay.
    pub fn config(mech: Mech, server: bool) -> HandshakeConfig {
        // Long-term keys are fixed, so derive them once: two scalar
        // multiplications per execution halved the curve target's speed.
        static KEYS: std::sync::OnceLock<[([u8; 32], [u8; 32]); 2]> = std::sync::OnceLock::new();
        let keys = KEYS.get_or_init(|| {
            let (sp, ss) = keypair_from_entropy([1; 32]);
            let (cp, cs) = keypair_from_entropy([2; 32]);
            [(sp, *ss), (cp, *cs)]
        });
        let [(server_public, server_secret), (client_public, client_secret)] = *keys;
        let (server_secret, client_secret) = (Zeroizing::new(server_secret), Zeroizing::new(client_secret));
        let mechanism = match (mech, server) {
            (Mech::Plain, true) => MechanismConfig::Plain(PlainConfig::default()),
            (Mech::Plain, false) => MechanismConfig::Plain(PlainConfig {
                username: b"admin".to_vec(),
                password: Zeroizing::new(b"secret".to_vec()),
            }),
            (Mech::Curve, true) => MechanismConfig::Curve(CurveConfig {
                public_key: server_public,
                secret_key: server_secret,
                server_key: [0; 32],
            }),
            (Mech::Curve, false) => MechanismConfig::Curve(CurveConfig {
                public_key: client_public,
                secret_key: client_secret,
                server_key: server_public,
            }),
        };
        HandshakeConfig {
            as_server: server,
            mechanism,
            entropy: [if server { 3 } else { 4 }; 32],
            ..HandshakeConfig::null(if server { SocketType::Router } else { SocketType::Dealer }, b"")
        }
    }

    fn zap_reply(status: &[u8]) -> ZapReply {
        let frames: Vec<(bool, Bytes)> = [&b""[..], b"1.0", b"1", status, b"", b"user", b""]
            .iter()
            .enumerate()
            .map(|(i, f)| (i < 6, Bytes::copy_from_slice(f)))
            .collect();
        ZapReply::parse(&frames).expect("well-formed reply")
    }

    /// One side of a PLAIN or CURVE handshake fed arbitrary peer bytes.
    /// Octet 0: bit 0 = we serve; bits 1-2 = the ZAP answer (200, 400,
    /// 300, no handler); bit 3 = CURVE traffic goes through a session.
    /// Octet 1: chunk size (0 = all at once). The rest is the peer's
    /// stream, greeting first. Returns whether it completed.
    pub fn handshake(mech: Mech, data: &[u8]) -> bool {
        let (Some(&mode), Some(&chunk)) = (data.first(), data.get(1)) else {
            return false;
        };
        let mut hs = Handshake::new(config(mech, mode & 1 != 0));
        let mut out = Vec::new();
        hs.poll_transmit(&mut out);
        let input = &data[2..];
        let chunk = if chunk == 0 { input.len().max(1) } else { usize::from(chunk) };
        let mut buf = BytesMut::new();
        for part in input.chunks(chunk) {
            buf.extend_from_slice(part);
            let mut res = hs.handle_input(&mut buf);
            if matches!(res, Ok(None)) && hs.take_zap_request().is_some() {
                res = match (mode >> 1) & 3 {
                    0 => hs.handle_zap_reply(zap_reply(b"200")),
                    1 => hs.handle_zap_reply(zap_reply(b"400")),
                    2 => hs.handle_zap_reply(zap_reply(b"300")),
                    _ => hs.handle_zap_unavailable(),
                };
                if matches!(res, Ok(None)) {
                    res = hs.handle_input(&mut buf);
                }
            }
            hs.poll_transmit(&mut out);
            match res {
                Ok(Some(peer)) => {
                    // Whatever follows must unbox or be refused, never panic:
                    // frame by frame through the codec, or (bit 3) through a
                    // session, which opens each frame in its receive buffer.
                    if let Some(mut codec) = hs.take_codec() {
                        if mode & 8 == 0 {
                            let mut dec = crate::frame::FrameDecoder::new(None);
                            while let Ok(Some(f)) = dec.decode(&mut buf) {
                                if codec.decode(f.body).is_err() {
                                    break;
                                }
                            }
                        } else {
                            let ours = if mode & 1 != 0 { SocketType::Router } else { SocketType::Dealer };
                            let now = std::time::Instant::now();
                            let mut session = Session::new(&SessionConfig::new(ours), &peer, Some(codec), now);
                            while let Ok(Some(_)) = session.poll_inbound(&mut buf, now) {}
                        }
                    }
                    return true;
                }
                Ok(None) => {}
                Err(_) => return false,
            }
        }
        false
    }

    /// Feeds `inbox` to `hs` (answering ZAP with 200) and queues its output.
    fn step(hs: &mut Handshake, inbox: &mut Vec<u8>, outbox: &mut Vec<u8>) {
        let mut buf = BytesMut::from(&inbox[..]);
        inbox.clear();
        let mut r = hs.handle_input(&mut buf);
        if matches!(r, Ok(None)) && hs.take_zap_request().is_some() {
            r = hs.handle_zap_reply(zap_reply(b"200"));
            if matches!(r, Ok(None)) {
                r = hs.handle_input(&mut buf);
            }
        }
        drop(r);
        hs.poll_transmit(outbox);
    }

    /// What the peer of `config(mech, we_serve)` sends in a good handshake
    /// (ZAP answering 200): a seed for [`handshake`].
    pub fn transcript(mech: Mech, we_serve: bool) -> Vec<u8> {
        let mut us = Handshake::new(config(mech, we_serve));
        let mut them = Handshake::new(config(mech, !we_serve));
        let (mut to_us, mut to_them) = (Vec::new(), Vec::new());
        us.poll_transmit(&mut to_them);
        them.poll_transmit(&mut to_us);
        let mut recorded = to_us.clone();
        for _ in 0..10 {
            step(&mut us, &mut to_us, &mut to_them);
            let before = to_us.len();
            step(&mut them, &mut to_them, &mut to_us);
            recorded.extend_from_slice(&to_us[before..]);
        }
        recorded
    }
}
