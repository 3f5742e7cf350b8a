//! ZMTP 3.x framing: `flags size body`, after the greeting; and the
//! ZMTP/1.0 framing (RFC 13) of libzmq 2.x peers: `size flags body`, where
//! the size counts the flags octet.

use bytes::{Buf, Bytes, BytesMut};

use crate::error::ProtocolError;

/// Flags bit: more frames of the same message follow.
pub const FLAG_MORE: u8 = 0x01;
/// Flags bit: the size is 8 octets (big-endian) instead of 1.
pub const FLAG_LONG: u8 = 0x02;
/// Flags bit: the frame is a command (READY, PING, SUBSCRIBE...), not message data.
pub const FLAG_COMMAND: u8 = 0x04;
const RESERVED_FLAGS: u8 = !(FLAG_MORE | FLAG_LONG | FLAG_COMMAND);

/// Largest size ZMTP can express: the long form is a signed-range u64.
const MAX_WIRE_SIZE: u64 = i64::MAX as u64;

/// One decoded frame. `body` shares the receive buffer's allocation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// More frames of the same message follow.
    pub more: bool,
    /// A command frame, not message data.
    pub command: bool,
    /// The frame's body, without its header.
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
    /// ZMTP/1.0 framing instead of 3.x (and 2.0).
    zmtp10: bool,
}

/// A complete, valid frame header at the front of a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameHeader {
    /// Octets of the header (flags and size; 2 or 9, or 1.0's 2 or 10).
    pub header_len: usize,
    /// Octets of the body that follow the header.
    pub body_len: usize,
    /// More frames of the same message follow.
    pub more: bool,
    /// A command frame, not message data.
    pub command: bool,
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
        FrameDecoder { max_msg_size, zmtp10: false }
    }

    /// A decoder for ZMTP/1.0 frames (RFC 13). As libzmq's, it keeps only
    /// the MORE bit of the flags octet (1.0 has no commands and no reserved
    /// bits to check) and refuses a size of 0, which lacks even the flags.
    pub fn zmtp10(max_msg_size: Option<u64>) -> Self {
        FrameDecoder { max_msg_size, zmtp10: true }
    }

    /// Whether this decoder reads ZMTP/1.0 framing (a libzmq 2.x peer).
    pub fn is_zmtp10(&self) -> bool {
        self.zmtp10
    }

    /// The `ZMQ_MAXMSGSIZE` limit frames are checked against, if any.
    pub fn max_msg_size(&self) -> Option<u64> {
        self.max_msg_size
    }

    /// Validates a header as soon as its flags octet and size are visible,
    /// so bad sizes are refused before the body is buffered.
    fn check_header(&self, buf: &[u8]) -> Result<Option<(usize, usize, u8)>, ProtocolError> {
        if self.zmtp10 {
            return self.check_header_v1(buf);
        }
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
        self.check_size(flags, header_len, size)
    }

    /// ZMTP/1.0: the size (1 octet, or 0xFF and 8 octets) comes first and
    /// is checked before the flags octet is needed, as libzmq does.
    fn check_header_v1(&self, buf: &[u8]) -> Result<Option<(usize, usize, u8)>, ProtocolError> {
        let Some(&first) = buf.first() else { return Ok(None) };
        let (size, header_len) = if first == 0xFF {
            let Some(raw) = buf.get(1..9) else { return Ok(None) };
            (u64::from_be_bytes(raw.try_into().expect("8 octets")), 10)
        } else {
            (u64::from(first), 2)
        };
        let body = size.checked_sub(1).ok_or(ProtocolError::EmptyZmtp10Frame)?;
        // Validate the size now so a lying header is refused before its flags arrive.
        self.check_size(0, header_len, body)?;
        let Some(&flags) = buf.get(header_len - 1) else { return Ok(None) };
        self.check_size(flags & FLAG_MORE, header_len, body)
    }

    fn check_size(&self, flags: u8, header_len: usize, size: u64) -> Result<Option<(usize, usize, u8)>, ProtocolError> {
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

    /// The header of the frame at the front of `buf` once the whole frame is
    /// there (`Ok(None)` before; errors as `decode`'s), consuming nothing. A
    /// caller can then copy a small body straight out of `buf` and advance
    /// past it, where `decode` would hand out a refcounted view of `buf`.
    pub fn complete_header(&self, buf: &[u8]) -> Result<Option<FrameHeader>, ProtocolError> {
        let Some((header_len, body_len, flags)) = self.check_header(buf)? else {
            return Ok(None);
        };
        if buf.len() - header_len < body_len {
            return Ok(None);
        }
        Ok(Some(FrameHeader { header_len, body_len, more: flags & FLAG_MORE != 0, command: flags & FLAG_COMMAND != 0 }))
    }

    /// `complete_header` for the commonest frame alone: a complete
    /// short-form data frame (ZMTP 3.x, flags octet 0 or MORE) within
    /// `ZMQ_MAXMSGSIZE`. `None` for anything else, including every frame
    /// `complete_header` would refuse: the caller then asks it, so errors are
    /// reported in one place. Inlined into the receive loop, it saves the
    /// general header parse per small frame.
    #[inline]
    pub fn complete_short_data(&self, buf: &[u8]) -> Option<FrameHeader> {
        if self.zmtp10 {
            return None;
        }
        let (&flags, &size) = (buf.first()?, buf.get(1)?);
        if flags & !FLAG_MORE != 0 {
            return None;
        }
        let body_len = usize::from(size);
        if buf.len() - 2 < body_len || self.max_msg_size.is_some_and(|max| u64::from(size) > max) {
            return None;
        }
        Some(FrameHeader { header_len: 2, body_len, more: flags == FLAG_MORE, command: false })
    }

    /// Total length (header + body) of the frame at the front of `buf`, once
    /// its header is complete, so the caller can reserve room for the whole
    /// frame. `None` if the header is incomplete or invalid (decode will
    /// report the latter).
    pub fn pending_frame_len(&self, buf: &[u8]) -> Option<usize> {
        self.pending_header(buf).map(|h| h.header_len + h.body_len)
    }

    /// The header of the frame at the front of `buf`, once complete and
    /// valid (`None` otherwise; decode reports the invalid ones). Lets a
    /// caller read a large body straight into its own buffer.
    pub fn pending_header(&self, buf: &[u8]) -> Option<FrameHeader> {
        match self.check_header(buf) {
            Ok(Some((header_len, body_len, flags))) => Some(FrameHeader {
                header_len,
                body_len,
                more: flags & FLAG_MORE != 0,
                command: flags & FLAG_COMMAND != 0,
            }),
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

/// ZMTP/1.0 header length for a body of `len` octets: 2, or 10 once the
/// size with its flags octet reaches 255 (libzmq's v1 encoder).
pub fn zmtp10_header_len(len: usize) -> usize {
    if len + 1 < 255 {
        2
    } else {
        10
    }
}

/// Appends a ZMTP/1.0 frame header: size (counting the flags octet), then
/// flags, where only MORE exists.
pub fn encode_zmtp10_frame_header(out: &mut Vec<u8>, more: bool, len: usize) {
    let size = len as u64 + 1;
    if size < 255 {
        out.push(size as u8);
    } else {
        out.push(0xFF);
        out.extend_from_slice(&size.to_be_bytes());
    }
    out.push(u8::from(more));
}

/// Appends a frame header in either framing: `zmtp10` picks RFC 13's.
/// A command never goes to a 1.0 peer (it has none), so `command` is
/// ignored there.
pub fn encode_any_frame_header(out: &mut Vec<u8>, zmtp10: bool, more: bool, command: bool, len: usize) {
    if zmtp10 {
        encode_zmtp10_frame_header(out, more, len);
    } else {
        encode_frame_header(out, more, command, len);
    }
}
