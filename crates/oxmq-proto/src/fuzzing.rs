//! Bodies of the cargo-fuzz targets, kept here so the corpus can be
//! replayed by ordinary tests. Inputs must never panic.

use bytes::BytesMut;

use crate::command::Command;
use crate::frame::FrameDecoder;
use crate::handshake::{Handshake, HandshakeConfig};
use crate::socket_type::SocketType;

/// Frames and commands from arbitrary bytes, fed in growing chunks.
pub fn decode(data: &[u8]) {
    let max = data.first().map(|&b| u64::from(b) * 16);
    let mut dec = FrameDecoder::new(max);
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
