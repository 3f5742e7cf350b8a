//! Framing of ZMTP messages over the multicast transports, as libzmq 4.3
//! puts them on the wire (facts from its source; no code of it here).
//!
//! - PGM/EPGM: each APDU is `[u16 BE offset][ZMTP/1.0 frames...]`. A frame
//!   is `[len+1 as u8][flags][body]`, or `[0xff][len+1 as u64 BE][flags][body]`
//!   when `len+1 >= 255`; flags bit 0 is MORE. The offset is where the first
//!   frame of a message starts in the APDU, 0xffff when none does: a
//!   receiver joining mid-stream skips to it.
//! - NORM: one stream per sender; each frame is `[sync][ZMTP/2.0 frame]`
//!   with sync 0x00 before the first frame of a message and 0xff before the
//!   others, and the sender marks a NORM message boundary after each frame,
//!   where a receiver may start (`NormStreamSeekMsgStart`).

use crate::msg::Msg;

const MORE: u8 = 1;
/// ZMTP/2.0 flags bit: an 8-byte length follows.
const LONG: u8 = 2;

/// Appends one ZMTP/1.0 frame.
pub(crate) fn put_v1_frame(out: &mut Vec<u8>, body: &[u8], more: bool) {
    let size = body.len() as u64 + 1;
    if size < 255 {
        out.push(size as u8);
    } else {
        out.push(0xff);
        out.extend_from_slice(&size.to_be_bytes());
    }
    out.push(if more { MORE } else { 0 });
    out.extend_from_slice(body);
}

/// Appends one ZMTP/2.0 frame.
pub(crate) fn put_v2_frame(out: &mut Vec<u8>, body: &[u8], more: bool) {
    let more = if more { MORE } else { 0 };
    if body.len() < 256 {
        out.push(more);
        out.push(body.len() as u8);
    } else {
        out.push(more | LONG);
        out.extend_from_slice(&(body.len() as u64).to_be_bytes());
    }
    out.extend_from_slice(body);
}

/// A frame stream cannot be decoded: the peer's stream must be joined afresh.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum FrameError {
    /// A ZMTP/1.0 size of 0 (there is always a flags byte).
    Malformed,
    /// Larger than MAXMSGSIZE.
    TooLarge,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// `[size incl. flags][flags][body]` (PGM).
    V1,
    /// NORM: `[sync][flags][size][body]`.
    Norm,
}

#[derive(Debug)]
enum State {
    /// Collecting the header bytes in `head`.
    Header,
    /// Collecting `remaining` more body bytes.
    Body { remaining: usize },
}

/// An incremental decoder of one peer's frames; complete messages (all their
/// frames) come out together, so a half message is never handed on.
#[derive(Debug)]
pub(crate) struct Decoder {
    framing: Framing,
    max: Option<u64>,
    state: State,
    head: Vec<u8>,
    body: Vec<u8>,
    more: bool,
    frames: Vec<Msg>,
}

impl Decoder {
    pub(crate) fn new(framing: Framing, max: Option<u64>) -> Decoder {
        Decoder {
            framing,
            max,
            state: State::Header,
            head: Vec::new(),
            body: Vec::new(),
            more: false,
            frames: Vec::new(),
        }
    }

    /// The header is complete: `Some((body length, more))`.
    fn header_done(&self) -> Result<Option<(u64, bool)>, FrameError> {
        let h = &self.head;
        match self.framing {
            Framing::V1 => {
                let Some(&first) = h.first() else { return Ok(None) };
                let (size, need) = if first == 0xff {
                    if h.len() < 9 {
                        return Ok(None);
                    }
                    (u64::from_be_bytes(h[1..9].try_into().unwrap_or_default()), 10)
                } else {
                    (u64::from(first), 2)
                };
                if size == 0 {
                    return Err(FrameError::Malformed);
                }
                if let Some(max) = self.max {
                    if size - 1 > max {
                        return Err(FrameError::TooLarge);
                    }
                }
                if h.len() < need {
                    return Ok(None);
                }
                Ok(Some((size - 1, h[need - 1] & MORE != 0)))
            }
            Framing::Norm => {
                let base = usize::from(self.framing == Framing::Norm);
                if base == 1 && h.first().is_some_and(|&s| s != 0 && s != 0xff) {
                    return Err(FrameError::Malformed);
                }
                let Some(&flags) = h.get(base) else { return Ok(None) };
                let need = base + if flags & LONG != 0 { 9 } else { 2 };
                if h.len() < need {
                    return Ok(None);
                }
                let size = if flags & LONG != 0 {
                    u64::from_be_bytes(h[base + 1..base + 9].try_into().unwrap_or_default())
                } else {
                    u64::from(h[base + 1])
                };
                if let Some(max) = self.max {
                    if size > max {
                        return Err(FrameError::TooLarge);
                    }
                }
                Ok(Some((size, flags & MORE != 0)))
            }
        }
    }

    /// A NORM stream's decoder once its reader has found a message start
    /// and read the 0x00 sync byte there.
    pub(crate) fn norm_synced(max: Option<u64>) -> Decoder {
        let mut d = Decoder::new(Framing::Norm, max);
        d.head.push(0);
        d
    }

    /// Feeds bytes; each complete message is passed to `deliver`.
    pub(crate) fn feed(&mut self, mut data: &[u8], mut deliver: impl FnMut(Vec<Msg>)) -> Result<(), FrameError> {
        while !data.is_empty() {
            match self.state {
                State::Header => {
                    self.head.push(data[0]);
                    data = &data[1..];
                    if let Some((len, more)) = self.header_done()? {
                        let len = usize::try_from(len).map_err(|_| FrameError::TooLarge)?;
                        self.head.clear();
                        self.more = more;
                        self.body = Vec::with_capacity(len.min(1 << 20));
                        self.state = State::Body { remaining: len };
                    }
                }
                State::Body { remaining } => {
                    let n = remaining.min(data.len());
                    self.body.extend_from_slice(&data[..n]);
                    data = &data[n..];
                    self.state = State::Body { remaining: remaining - n };
                }
            }
            if let State::Body { remaining: 0 } = self.state {
                let body = std::mem::take(&mut self.body);
                self.frames.push(Msg::from_vec(body).with_more(self.more));
                self.state = State::Header;
                if !self.more {
                    deliver(std::mem::take(&mut self.frames));
                }
            }
        }
        Ok(())
    }
}

/// The sender's side of PGM: frames queued as one byte stream, cut into
/// APDUs of at most `max_apdu` bytes, each with its offset header.
#[derive(Debug)]
pub(crate) struct PgmEncoder {
    stream: std::collections::VecDeque<u8>,
    /// Positions in `stream` (counted from its front) where a message's first frame starts.
    starts: std::collections::VecDeque<usize>,
    /// The last frame queued had MORE: the next one does not start a message.
    in_message: bool,
}

impl PgmEncoder {
    pub(crate) fn new() -> PgmEncoder {
        PgmEncoder { stream: Default::default(), starts: Default::default(), in_message: false }
    }

    pub(crate) fn queued(&self) -> usize {
        self.stream.len()
    }

    pub(crate) fn push(&mut self, body: &[u8], more: bool) {
        if !self.in_message {
            self.starts.push_back(self.stream.len());
        }
        let mut f = Vec::with_capacity(body.len() + 10);
        put_v1_frame(&mut f, body, more);
        self.stream.extend(f);
        self.in_message = more;
    }

    /// The next APDU, or `None` when nothing is queued.
    pub(crate) fn next_apdu(&mut self, max_apdu: usize) -> Option<Vec<u8>> {
        if self.stream.is_empty() || max_apdu <= 2 {
            return None;
        }
        let n = self.stream.len().min(max_apdu - 2);
        let offset = match self.starts.front() {
            Some(&s) if s < n => s as u16,
            _ => 0xffff,
        };
        let mut apdu = Vec::with_capacity(n + 2);
        apdu.extend_from_slice(&offset.to_be_bytes());
        apdu.extend(self.stream.drain(..n));
        while self.starts.front().is_some_and(|&s| s < n) {
            self.starts.pop_front();
        }
        for s in self.starts.iter_mut() {
            *s -= n;
        }
        Some(apdu)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(d: &mut Decoder, data: &[u8]) -> Vec<Vec<Vec<u8>>> {
        let mut out = Vec::new();
        d.feed(data, |m| out.push(m.iter().map(|f| f.as_slice().to_vec()).collect())).unwrap();
        out
    }

    #[test]
    fn v1_frames_are_libzmqs_zmtp10() {
        let mut b = Vec::new();
        put_v1_frame(&mut b, b"abc", true);
        assert_eq!(b, [4, 1, b'a', b'b', b'c']);
        let mut b = Vec::new();
        put_v1_frame(&mut b, &[7u8; 254], false);
        assert_eq!(&b[..10], &[0xff, 0, 0, 0, 0, 0, 0, 0, 255, 0]);
        let mut b = Vec::new();
        put_v1_frame(&mut b, &[7u8; 253], false);
        assert_eq!(&b[..2], &[254, 0]);
    }

    #[test]
    fn v2_frames_are_zmtp20() {
        let mut b = Vec::new();
        put_v2_frame(&mut b, b"hi", false);
        assert_eq!(b, [0, 2, b'h', b'i']);
        let mut b = Vec::new();
        put_v2_frame(&mut b, &[0u8; 300], true);
        assert_eq!(&b[..9], &[3, 0, 0, 0, 0, 0, 0, 1, 44]);
    }

    #[test]
    fn decoder_hands_out_whole_messages_across_any_split() {
        for framing in [Framing::V1, Framing::Norm] {
            // A NORM stream is read from just after a message's 0x00 sync byte.
            let mut wire = Vec::new();
            if framing == Framing::V1 {
                put_v1_frame(&mut wire, b"topic", true);
                put_v1_frame(&mut wire, &[9u8; 1000], false);
                put_v1_frame(&mut wire, b"", false);
            } else {
                put_v2_frame(&mut wire, b"topic", true);
                wire.push(0xff);
                put_v2_frame(&mut wire, &[9u8; 1000], false);
                wire.push(0);
                put_v2_frame(&mut wire, b"", false);
            }
            for split in 0..wire.len() {
                let mut d =
                    if framing == Framing::V1 { Decoder::new(framing, None) } else { Decoder::norm_synced(None) };
                let mut got = collect(&mut d, &wire[..split]);
                got.extend(collect(&mut d, &wire[split..]));
                assert_eq!(got.len(), 2, "{framing:?} split at {split}");
                assert_eq!(got[0][0], b"topic");
                assert_eq!(got[0][1], vec![9u8; 1000]);
                assert_eq!(got[1], vec![Vec::<u8>::new()]);
            }
        }
    }

    #[test]
    fn norm_frames_carry_a_sync_byte_each() {
        let mut wire = Vec::new();
        put_v2_frame(&mut wire, b"a", true);
        wire.push(0xff);
        put_v2_frame(&mut wire, b"b", false);
        wire.push(0);
        put_v2_frame(&mut wire, b"c", false);
        let mut d = Decoder::norm_synced(None);
        let got = collect(&mut d, &wire);
        assert_eq!(got, vec![vec![b"a".to_vec(), b"b".to_vec()], vec![b"c".to_vec()]]);
        let mut d = Decoder::norm_synced(None);
        collect(&mut d, &[0, 0]);
        assert_eq!(d.feed(&[7], |_| {}), Err(FrameError::Malformed), "a sync byte is 0x00 or 0xff");
    }

    #[test]
    fn decoder_refuses_zero_size_and_oversize() {
        let mut d = Decoder::new(Framing::V1, None);
        assert_eq!(d.feed(&[0], |_| {}), Err(FrameError::Malformed));
        let mut d = Decoder::new(Framing::V1, Some(3));
        assert_eq!(d.feed(&[5, 0], |_| {}), Err(FrameError::TooLarge));
        let mut d = Decoder::norm_synced(Some(3));
        assert_eq!(d.feed(&[0, 4], |_| {}), Err(FrameError::TooLarge));
    }

    #[test]
    fn apdu_offsets_point_at_message_starts() {
        let mut e = PgmEncoder::new();
        e.push(b"a", true); // [2,1,a]
        e.push(&[1u8; 20], false); // [21,0,...20]
        e.push(b"b", false); // [2,0,b]
                             // 10-byte APDUs carry 8 bytes of stream each.
        let a = e.next_apdu(10).unwrap();
        assert_eq!(&a[..2], &[0, 0]);
        let a = e.next_apdu(10).unwrap();
        assert_eq!(&a[..2], &[0xff, 0xff], "only the middle of a message");
        let a = e.next_apdu(10).unwrap();
        assert_eq!(&a[..2], &[0xff, 0xff], "stream bytes 16..24: still message 1");
        let a = e.next_apdu(10).unwrap();
        // stream bytes 24..28: message 2 starts at 25, one byte in.
        assert_eq!(a, vec![0, 1, 1, 2, 0, b'b']);
        assert!(e.next_apdu(10).is_none());
    }
}
