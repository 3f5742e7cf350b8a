//! CURVE (RFC 25 over RFC 26 CurveZMQ), with libzmq's choices:
//!
//! * short nonces are big-endian counters starting at 1, shared by the
//!   handshake commands and the MESSAGE boxes that follow (the client sends
//!   HELLO with 1 and INITIATE with 2, the server READY with 1);
//! * a received short nonce must be strictly greater than the last one
//!   (`ZMQ_PROTOCOL_ERROR_ZMTP_INVALID_SEQUENCE` otherwise);
//! * every traffic frame, commands included, travels as one `MESSAGE` box in
//!   a plain (flag-less) ZMTP frame; the box's first plaintext octet carries
//!   MORE (`0x01`) and COMMAND (`0x02`), so PING/PONG and SUBSCRIBE/CANCEL
//!   are encrypted too;
//! * the server keeps no short-term secret between WELCOME and INITIATE:
//!   C' and s' come back inside the cookie, sealed with a key only it has.
//!
//! The boxes are NaCl's `crypto_box` (X25519, XSalsa20, Poly1305) from
//! `oxmq-sodium` (libsodium, RustCrypto's secretbox for small boxes), and
//! the cookie a `crypto_secretbox`. Nothing cryptographic is written here;
//! this module only lays out bytes.

mod client;
mod server;

use bytes::{Bytes, BytesMut};
use crypto_box::SecretKey;
use oxmq_sodium::BoxKey;
use zeroize::Zeroizing;

use crate::error::ProtocolError;
use crate::frame::encode_frame_header;

pub(crate) use client::CurveClient;
pub(crate) use server::CurveServer;

/// Key length in octets (public and secret).
pub const KEY_LEN: usize = 32;
const TAG_LEN: usize = 16;
const MESSAGE_PREFIX: &[u8] = b"\x07MESSAGE";
/// `\x07MESSAGE`, short nonce, tag, flags.
const MESSAGE_OVERHEAD: usize = 8 + 8 + TAG_LEN + 1;

const FLAG_MORE: u8 = 0x01;
const FLAG_COMMAND: u8 = 0x02;

/// A 24-octet nonce from a 16-octet prefix and a short nonce.
fn short_nonce(prefix: &[u8; 16], n: u64) -> [u8; 24] {
    let mut nonce = [0; 24];
    nonce[..16].copy_from_slice(prefix);
    nonce[16..].copy_from_slice(&n.to_be_bytes());
    nonce
}

/// A 24-octet nonce from an 8-octet prefix and 16 octets (random or received).
fn long_nonce(prefix: &[u8; 8], tail: &[u8]) -> [u8; 24] {
    let mut nonce = [0; 24];
    nonce[..8].copy_from_slice(prefix);
    nonce[8..].copy_from_slice(&tail[..16]);
    nonce
}

/// Appends `Box[plaintext]` (tag, then ciphertext) to `out`.
fn seal_into(bx: &BoxKey, nonce: &[u8; 24], plaintext: &[u8], out: &mut Vec<u8>) {
    let tag_at = out.len();
    out.extend_from_slice(&[0; TAG_LEN]);
    out.extend_from_slice(plaintext);
    let tag = bx.seal_in_place(nonce, &mut out[tag_at + TAG_LEN..]);
    out[tag_at..tag_at + TAG_LEN].copy_from_slice(&tag);
}

/// Opens `Box[...]` (tag, then ciphertext); `None` if it does not open.
fn open(bx: &BoxKey, nonce: &[u8; 24], boxed: &[u8]) -> Option<Zeroizing<Vec<u8>>> {
    let (tag, ct) = boxed.split_at_checked(TAG_LEN)?;
    let mut plain = Zeroizing::new(ct.to_vec());
    bx.open_in_place(nonce, &mut plain, tag.try_into().ok()?).then_some(plain)
}

/// A short-term secret key from the connection's CSPRNG.
fn random_secret(rng: &mut impl rand_chacha::rand_core::RngCore) -> SecretKey {
    let mut bytes = Zeroizing::new([0u8; KEY_LEN]);
    rng.fill_bytes(&mut *bytes);
    SecretKey::from_bytes(*bytes)
}

/// The box key between `secret` and the peer's `public` key; `None` for a
/// low-order public key (an all-zero shared secret), which libsodium refuses.
fn box_key(public: &[u8; KEY_LEN], secret: &SecretKey) -> Option<BoxKey> {
    BoxKey::precompute(public, &Zeroizing::new(secret.to_bytes()))
}

fn key32(bytes: &[u8]) -> [u8; KEY_LEN] {
    let mut k = [0; KEY_LEN];
    k.copy_from_slice(&bytes[..KEY_LEN]);
    k
}

/// The public key of a CURVE secret key (libzmq `zmq_curve_public`).
pub fn public_key_of(secret: &[u8; KEY_LEN]) -> [u8; KEY_LEN] {
    SecretKey::from_bytes(*secret).public_key().to_bytes()
}

/// A new CURVE key pair `(public, secret)` from 32 octets of entropy
/// (libzmq `zmq_curve_keypair`, given the caller's randomness).
pub fn keypair_from_entropy(entropy: [u8; KEY_LEN]) -> ([u8; KEY_LEN], Zeroizing<[u8; KEY_LEN]>) {
    let secret = SecretKey::from_bytes(entropy);
    (secret.public_key().to_bytes(), Zeroizing::new(secret.to_bytes()))
}

/// Boxes and unboxes traffic frames once a CURVE handshake is done.
///
/// Each ZMTP frame the socket sends becomes one flag-less frame whose body is
/// `\x07MESSAGE`, the short nonce and `Box[flags + body]`. A frame is sealed
/// into the caller's output buffer, read from the body where it lies (a
/// large one in one pass, a small one copied and sealed in place). Frames
/// are opened in place, in the buffer they were received into
/// ([`open_in_place`](Self::open_in_place)).
pub struct CurveCodec {
    bx: BoxKey,
    send_prefix: &'static [u8; 16],
    recv_prefix: &'static [u8; 16],
    send_nonce: u64,
    last_recv_nonce: u64,
}

/// One frame unboxed by [`CurveCodec::decode`].
#[derive(Debug)]
pub struct Unboxed {
    /// More frames of the same message follow (the MORE flag travels inside the box).
    pub more: bool,
    /// A command (PING, SUBSCRIBE...) inside the box, not message data.
    pub command: bool,
    /// The frame's plaintext.
    pub body: Bytes,
}

impl CurveCodec {
    /// The codec a finished handshake leaves: `server` picks which of
    /// libzmq's MESSAGE nonce prefixes is ours and which the peer's.
    fn new(bx: BoxKey, server: bool, send_nonce: u64, last_recv_nonce: u64) -> CurveCodec {
        let (ours, theirs): (&'static [u8; 16], &'static [u8; 16]) = if server {
            (b"CurveZMQMESSAGES", b"CurveZMQMESSAGEC")
        } else {
            (b"CurveZMQMESSAGEC", b"CurveZMQMESSAGES")
        };
        CurveCodec { bx, send_prefix: ours, recv_prefix: theirs, send_nonce, last_recv_nonce }
    }

    /// The ZMTP frame length for a body of `len` octets.
    pub fn boxed_len(len: usize) -> usize {
        MESSAGE_OVERHEAD + len
    }

    /// Appends one frame boxing the concatenation of `parts`.
    pub fn encode(&mut self, more: bool, command: bool, parts: &[&[u8]], out: &mut Vec<u8>) {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        encode_frame_header(out, false, false, Self::boxed_len(len));
        out.extend_from_slice(MESSAGE_PREFIX);
        out.extend_from_slice(&self.send_nonce.to_be_bytes());
        let nonce = short_nonce(self.send_prefix, self.send_nonce);
        self.send_nonce += 1;
        let tag_at = out.len();
        out.extend_from_slice(&[0; TAG_LEN]);
        let plain_at = out.len();
        let flags = (u8::from(more) * FLAG_MORE) | (u8::from(command) * FLAG_COMMAND);
        let tag = if let [body] = parts {
            // A data frame: sealed from the message body straight into `out`.
            self.bx.seal_append(&nonce, flags, body, out)
        } else {
            out.push(flags);
            for p in parts {
                out.extend_from_slice(p);
            }
            self.bx.seal_in_place(&nonce, &mut out[plain_at..])
        };
        out[tag_at..plain_at].copy_from_slice(&tag);
    }

    /// Unboxes one received frame body: in place when `body` is its
    /// buffer's only view, else on one copy.
    pub fn decode(&mut self, body: Bytes) -> Result<Unboxed, ProtocolError> {
        let mut buf = body.try_into_mut().unwrap_or_else(|shared| BytesMut::from(&shared[..]));
        let opened = self.open_in_place(&mut buf)?;
        Ok(Unboxed { more: opened.more, command: opened.command, body: buf.freeze().slice(Opened::PLAINTEXT_AT..) })
    }

    /// Opens one received frame body where it lies: on success the frame's
    /// plaintext is `body[Opened::PLAINTEXT_AT..]`, so a caller that owns
    /// the buffer hands it on without a copy (libzmq opens in place too,
    /// then moves the plaintext to the buffer's start). On an error the
    /// box did not open and `body` is as it was.
    pub fn open_in_place(&mut self, body: &mut [u8]) -> Result<Opened, ProtocolError> {
        if !body.starts_with(MESSAGE_PREFIX) {
            return Err(ProtocolError::UnexpectedCommand { name: super::command_name(body) });
        }
        if body.len() < MESSAGE_OVERHEAD {
            return Err(ProtocolError::MalformedCommand { name: b"MESSAGE".to_vec() });
        }
        let n = u64::from_be_bytes(body[8..16].try_into().expect("8 octets"));
        if n <= self.last_recv_nonce {
            return Err(ProtocolError::InvalidSequence);
        }
        let nonce = short_nonce(self.recv_prefix, n);
        let (head, sealed) = body.split_at_mut(32);
        let tag: &[u8; TAG_LEN] = head[16..32].try_into().expect("16 octets");
        if !self.bx.open_in_place(&nonce, sealed, tag) {
            return Err(ProtocolError::Cryptographic { what: "MESSAGE" });
        }
        self.last_recv_nonce = n;
        let flags = sealed[0];
        Ok(Opened { more: flags & FLAG_MORE != 0, command: flags & FLAG_COMMAND != 0 })
    }
}

/// The flags of a frame [`CurveCodec::open_in_place`] opened.
#[derive(Clone, Copy, Debug)]
pub struct Opened {
    /// More frames of the same message follow.
    pub more: bool,
    /// A command (PING, SUBSCRIBE...) inside the box, not message data.
    pub command: bool,
}

impl Opened {
    /// Where an opened frame's plaintext starts in its body: after
    /// `\x07MESSAGE`, the short nonce, the tag and the flags octet.
    pub const PLAINTEXT_AT: usize = MESSAGE_OVERHEAD;
}
