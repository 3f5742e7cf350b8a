//! ZMTP 3.x framing: `flags size body`, after the greeting.

use bytes::{Buf, Bytes, BytesMut};

use crate::error::ProtocolError;

pub const FLAG_MORE: u8 = 0x01;
pub const FLAG_LONG: u8 = 0x02;
pub const FLAG_COMMAND: u8 = 0x04;
const RESERVED_FLAGS: u8 = !(FLAG_MORE | FLAG_LONG | FLAG_COMMAND);

/// Largest size ZMTP can express: the long form is a signed-range u64.
const MAX_WIRE_SIZE: u64 = i64::MAX as u64;

/// One decoded frame. `body` shares the receive buffer's allocation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    pub more: bool,
    pub command: bool,
    pub body: Bytes,
}

/// Streaming frame decoder.
///
/// Call-order contract: after appending received bytes to a `BytesMut`, call
/// [`decode`](Self::decode) until it returns `Ok(None)`; then read more and
/// repeat. The decoder never consumes a partial frame, so it keeps no
/// per-frame state and any number of decoders (e.g. the handshake's, then
/// the engine's) can take turns on the same buffer. After an `Err` the
/// connection must be dropped; the buffer contents are unspecified.
#[derive(Clone, Debug, Default)]
pub struct FrameDecoder {
    max_msg_size: Option<u64>,
}

/// Parsed frame header: (flags, header length, body length).
type Header = (u8, usize, u64);

fn parse_header(buf: &[u8]) -> Option<Header> {
    let flags = *buf.first()?;
    if flags & FLAG_LONG == 0 {
        Some((flags, 2, u64::from(*buf.get(1)?)))
    } else {
        let raw: [u8; 8] = buf.get(1..9)?.try_into().ok()?;
        Some((flags, 9, u64::from_be_bytes(raw)))
    }
}

impl FrameDecoder {
    /// `max_msg_size` is `ZMQ_MAXMSGSIZE`: a frame body larger than this is
    /// an error. Like libzmq, the check is per frame, not per message.
    pub fn new(max_msg_size: Option<u64>) -> Self {
        FrameDecoder { max_msg_size }
    }

    pub fn max_msg_size(&self) -> Option<u64> {
        self.max_msg_size
    }

    /// Validates a header as soon as its flags octet and size are visible,
    /// so bad sizes are refused before the body is buffered.
    fn check_header(&self, buf: &[u8]) -> Result<Option<(usize, usize, u8)>, ProtocolError> {
        if let Some(&flags) = buf.first() {
            if flags & RESERVED_FLAGS != 0 {
                return Err(ProtocolError::ReservedFlagBits { flags });
            }
            if flags & (FLAG_COMMAND | FLAG_MORE) == FLAG_COMMAND | FLAG_MORE {
                return Err(ProtocolError::CommandWithMore);
            }
        }
        let Some((flags, header_len, size)) = parse_header(buf) else {
            return Ok(None);
        };
        if size > MAX_WIRE_SIZE {
            return Err(ProtocolError::FrameTooLong { size });
        }
        if let Some(max) = self.max_msg_size {
            if size > max {
                return Err(ProtocolError::MessageTooLarge { size, max });
            }
        }
        // On 32-bit targets a legal ZMTP size may not fit in memory at all.
        let body_len = usize::try_from(size)
            .ok()
            .filter(|n| n.checked_add(header_len).is_some())
            .ok_or(ProtocolError::FrameTooLong { size })?;
        Ok(Some((header_len, body_len, flags)))
    }

    /// Splits one complete frame off the front of `buf` (no body copy), or
    /// returns `Ok(None)` and leaves `buf` untouched if more bytes are needed.
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Frame>, ProtocolError> {
        let Some((header_len, body_len, flags)) = self.check_header(buf)? else {
            return Ok(None);
        };
        if buf.len() - header_len < body_len {
            return Ok(None);
        }
        buf.advance(header_len);
        let body = buf.split_to(body_len).freeze();
        Ok(Some(Frame { more: flags & FLAG_MORE != 0, command: flags & FLAG_COMMAND != 0, body }))
    }

    /// Total length (header + body) of the frame at the front of `buf`, once
    /// its header is complete, so the caller can reserve room for the whole
    /// frame. `None` if the header is incomplete or invalid (decode will
    /// report the latter).
    pub fn pending_frame_len(&self, buf: &[u8]) -> Option<usize> {
        match self.check_header(buf) {
            Ok(Some((header_len, body_len, _))) => Some(header_len + body_len),
            _ => None,
        }
    }
}

/// Header length for a body of `len` octets: 2 (short) or 9 (long).
pub fn frame_header_len(len: usize) -> usize {
    if len <= 255 {
        2
    } else {
        9
    }
}

/// Appends a frame header. Uses the short form exactly when `len <= 255`,
/// as libzmq does.
pub fn encode_frame_header(out: &mut Vec<u8>, more: bool, command: bool, len: usize) {
    let mut flags = 0;
    if more {
        flags |= FLAG_MORE;
    }
    if command {
        flags |= FLAG_COMMAND;
    }
    if len <= 255 {
        out.extend_from_slice(&[flags, len as u8]);
    } else {
        out.push(flags | FLAG_LONG);
        out.extend_from_slice(&(len as u64).to_be_bytes());
    }
}

/// Appends a whole frame (header and body).
pub fn encode_frame(out: &mut Vec<u8>, more: bool, command: bool, body: &[u8]) {
    encode_frame_header(out, more, command, body.len());
    out.extend_from_slice(body);
}
