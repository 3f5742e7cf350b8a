//! [`WsDecoder`] / [`WsEncoder`]: streaming translators between WebSocket
//! messages and ZMTP frames (one binary message per ZMTP frame or command,
//! led by a flags octet). Control frames carry the ZMTP heartbeats.

use super::handshake::GREETING_LEN;
use super::WsError;
use bytes::BufMut;
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

const OP_CONT: u8 = 0x0;
const OP_TEXT: u8 = 0x1;
const OP_BINARY: u8 = 0x2;
const OP_CLOSE: u8 = 0x8;
const OP_PING: u8 = 0x9;
const OP_PONG: u8 = 0xA;

const WS_MORE: u8 = 0x01;
const WS_COMMAND: u8 = 0x02;

/// XORs `data` with the 4-octet `mask`, starting at mask offset `pos`;
/// returns the offset after it. Eight octets at a time: client traffic is
/// masked and unmasked in full, so this is the ws path's per-byte cost.
fn apply_mask(mask: [u8; 4], pos: usize, data: &mut [u8]) -> usize {
    let mut pattern = [0u8; 8];
    for (i, p) in pattern.iter_mut().enumerate() {
        *p = mask[(pos + i) & 3];
    }
    let word = u64::from_ne_bytes(pattern);
    let mut chunks = data.chunks_exact_mut(8);
    for c in &mut chunks {
        let v = u64::from_ne_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]) ^ word;
        c.copy_from_slice(&v.to_ne_bytes());
    }
    for (i, b) in chunks.into_remainder().iter_mut().enumerate() {
        *b ^= pattern[i];
    }
    pos + data.len()
}

/// A control frame the caller must act on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Control {
    /// Answer with a pong carrying this payload.
    Ping(Vec<u8>),
    /// The peer closes: answer with a close frame, then end the connection.
    Close(Vec<u8>),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum DecState {
    Header,
    /// Binary message: the flags octet is next (`left` counts it).
    Flags,
    /// Binary message body, streamed through.
    Body,
    /// Control frame payload, collected whole.
    Control,
    /// Bare ZWS2.0: the peer's first message (its routing id), collected whole.
    RoutingId,
}

/// WebSocket bytes in, ZMTP frames out.
pub struct WsDecoder {
    /// Servers require masked frames, clients unmasked ones.
    masked: bool,
    state: DecState,
    hdr: [u8; 14],
    hdr_len: usize,
    opcode: u8,
    mask: [u8; 4],
    mask_pos: usize,
    left: u64,
    control: Vec<u8>,
    /// Bare ZWS2.0: the socket type the first message's READY names.
    bare_peer: Option<&'static str>,
}

impl WsDecoder {
    /// `masked`: whether the peer must mask (true on the server side).
    pub fn new(masked: bool) -> WsDecoder {
        WsDecoder {
            masked,
            state: DecState::Header,
            hdr: [0; 14],
            hdr_len: 0,
            opcode: 0,
            mask: [0; 4],
            mask_pos: 0,
            left: 0,
            control: Vec::new(),
            bare_peer: None,
        }
    }

    /// Bare ZWS2.0: the peer's first message is its routing id; it reaches
    /// the engine as the READY a NULL peer of type `peer_type` would send.
    pub fn expect_routing_id(&mut self, peer_type: &'static str) {
        self.bare_peer = Some(peer_type);
    }

    /// The header length once its first two octets are known.
    fn needed(&self) -> usize {
        let base = match self.hdr[1] & 0x7F {
            126 => 4,
            127 => 10,
            _ => 2,
        };
        base + if self.masked { 4 } else { 0 }
    }

    /// Moves what `input` has of the current frame into `control`, unmasked;
    /// true once the frame is complete.
    fn take_control(&mut self, input: &mut &[u8]) -> bool {
        let take = (self.left as usize).min(input.len());
        let mut chunk = input[..take].to_vec();
        *input = &input[take..];
        self.unmask(&mut chunk);
        self.control.extend_from_slice(&chunk);
        self.left -= take as u64;
        self.left == 0
    }

    fn unmask(&mut self, data: &mut [u8]) {
        if self.masked {
            self.mask_pos = apply_mask(self.mask, self.mask_pos, data);
        }
    }

    /// Consumes bytes from the front of `input`, appending ZMTP frames to
    /// `out`. Stops early to hand back a control frame.
    pub fn decode(&mut self, input: &mut &[u8], out: &mut Vec<u8>) -> Result<Option<Control>, WsError> {
        while !input.is_empty() {
            match self.state {
                DecState::Header => {
                    let want = if self.hdr_len < 2 { 2 } else { self.needed() };
                    let take = (want - self.hdr_len).min(input.len());
                    self.hdr[self.hdr_len..self.hdr_len + take].copy_from_slice(&input[..take]);
                    self.hdr_len += take;
                    *input = &input[take..];
                    if self.hdr_len == 2 {
                        self.check_first_octets()?;
                    }
                    if self.hdr_len >= 2 && self.hdr_len == self.needed() {
                        self.header_done()?;
                        if self.state == DecState::Control && self.left == 0 {
                            if let Some(c) = self.control_done(out) {
                                return Ok(Some(c));
                            }
                        }
                    }
                }
                DecState::Flags => {
                    let mut f = [input[0]];
                    *input = &input[1..];
                    self.unmask(&mut f);
                    self.left -= 1;
                    if self.bare_peer.is_some() {
                        if self.left > 255 {
                            return Err(WsError::BadFrame("routing id longer than 255 octets"));
                        }
                        self.control.clear();
                        self.state = DecState::RoutingId;
                        if self.left == 0 {
                            self.routing_id_done(out);
                        }
                        continue;
                    }
                    crate::encode_frame_header(out, f[0] & WS_MORE != 0, f[0] & WS_COMMAND != 0, self.left as usize);
                    self.state = DecState::Body;
                    if self.left == 0 {
                        self.frame_done();
                    }
                }
                DecState::RoutingId => {
                    if self.take_control(input) {
                        self.routing_id_done(out);
                    }
                }
                DecState::Body => {
                    let take = (self.left.min(input.len() as u64)) as usize;
                    let start = out.len();
                    out.extend_from_slice(&input[..take]);
                    *input = &input[take..];
                    if self.masked {
                        self.mask_pos = apply_mask(self.mask, self.mask_pos, &mut out[start..]);
                    }
                    self.left -= take as u64;
                    if self.left == 0 {
                        self.frame_done();
                    }
                }
                DecState::Control => {
                    if self.take_control(input) {
                        if let Some(c) = self.control_done(out) {
                            return Ok(Some(c));
                        }
                    }
                }
            }
        }
        Ok(None)
    }

    fn check_first_octets(&self) -> Result<(), WsError> {
        let (b0, b1) = (self.hdr[0], self.hdr[1]);
        if b0 & 0x70 != 0 {
            return Err(WsError::BadFrame("reserved bits set"));
        }
        if b0 & 0x80 == 0 {
            return Err(WsError::BadFrame("fragmented messages are not supported"));
        }
        match b0 & 0x0F {
            OP_BINARY | OP_CLOSE | OP_PING | OP_PONG => {}
            OP_TEXT => return Err(WsError::BadFrame("text frame")),
            OP_CONT => return Err(WsError::BadFrame("continuation frame")),
            _ => return Err(WsError::BadFrame("unknown opcode")),
        }
        if (b1 & 0x80 != 0) != self.masked {
            return Err(WsError::BadFrame(if self.masked { "unmasked client frame" } else { "masked server frame" }));
        }
        if b0 & 0x08 != 0 && b1 & 0x7F > 125 {
            return Err(WsError::BadFrame("control frame longer than 125 octets"));
        }
        Ok(())
    }

    fn header_done(&mut self) -> Result<(), WsError> {
        self.opcode = self.hdr[0] & 0x0F;
        let (len, at) = match self.hdr[1] & 0x7F {
            126 => (u16::from_be_bytes([self.hdr[2], self.hdr[3]]) as u64, 4),
            127 => {
                let mut b = [0u8; 8];
                b.copy_from_slice(&self.hdr[2..10]);
                (u64::from_be_bytes(b), 10)
            }
            n => (n as u64, 2),
        };
        if len >> 63 != 0 {
            return Err(WsError::BadFrame("length with the top bit set"));
        }
        if self.masked {
            self.mask.copy_from_slice(&self.hdr[at..at + 4]);
        }
        self.mask_pos = 0;
        self.left = len;
        self.hdr_len = 0;
        if self.opcode == OP_BINARY {
            if len == 0 {
                return Err(WsError::BadFrame("binary message without a flags octet"));
            }
            self.state = DecState::Flags;
        } else {
            self.control.clear();
            self.state = DecState::Control;
        }
        Ok(())
    }

    fn frame_done(&mut self) {
        self.state = DecState::Header;
    }

    fn routing_id_done(&mut self, out: &mut Vec<u8>) {
        self.state = DecState::Header;
        let Some(peer) = self.bare_peer.take() else { return };
        let mut md = crate::Metadata::new();
        md.insert("Socket-Type", peer.as_bytes());
        md.insert("Identity", &self.control);
        crate::Command::Ready(md).encode(out);
    }

    fn control_done(&mut self, out: &mut Vec<u8>) -> Option<Control> {
        self.state = DecState::Header;
        let payload = std::mem::take(&mut self.control);
        match self.opcode {
            OP_PING => Some(Control::Ping(payload)),
            OP_CLOSE => Some(Control::Close(payload)),
            _ => {
                // A pong answers our heartbeat: hand the engine a PONG
                // command so it sees the traffic (it ignores the command).
                crate::Command::Pong { context: Default::default() }.encode(out);
                None
            }
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum EncState {
    /// Swallowing our own ZMTP greeting (ZWS has none); counts what is left.
    Greeting(usize),
    Header,
    Body,
    /// A command's body, collected whole (PING/PONG become control frames).
    Command,
}

/// ZMTP frames in, WebSocket messages out.
pub struct WsEncoder {
    /// Clients mask every frame (RFC 6455), servers never do.
    mask_frames: bool,
    rng: ChaCha8Rng,
    state: EncState,
    hdr: [u8; 9],
    hdr_len: usize,
    more: bool,
    left: u64,
    mask: [u8; 4],
    mask_pos: usize,
    command: Vec<u8>,
    /// Bare ZWS2.0: our READY goes out as our routing id instead.
    bare: bool,
}

impl WsEncoder {
    /// `mask_frames`: true on the client side. `seed` drives the masking
    /// keys (RFC 6455 wants them unpredictable).
    pub fn new(mask_frames: bool, seed: [u8; 32]) -> WsEncoder {
        WsEncoder {
            mask_frames,
            rng: ChaCha8Rng::from_seed(seed),
            state: EncState::Greeting(GREETING_LEN),
            hdr: [0; 9],
            hdr_len: 0,
            more: false,
            left: 0,
            mask: [0; 4],
            mask_pos: 0,
            command: Vec::new(),
            bare: false,
        }
    }

    /// Bare ZWS2.0: the engine's READY becomes a message carrying its
    /// Identity (empty when it has none), libzmq's first message there.
    pub fn send_routing_id_for_ready(&mut self) {
        self.bare = true;
    }

    /// Whether everything given so far forms whole WebSocket frames, so a
    /// control frame may be sent now.
    pub fn at_boundary(&self) -> bool {
        // A frame's WebSocket header goes out only once its ZMTP header
        // (or whole command) is in, so only a body in flight is "inside".
        !matches!(self.state, EncState::Body)
    }

    /// Writes a WebSocket frame header (and mask key) for `len` payload octets.
    fn frame_header(&mut self, opcode: u8, len: u64, out: &mut Vec<u8>) {
        out.push(0x80 | opcode);
        let m = if self.mask_frames { 0x80 } else { 0 };
        if len <= 125 {
            out.push(m | len as u8);
        } else if len <= 0xFFFF {
            out.push(m | 126);
            out.put_u16(len as u16);
        } else {
            out.push(m | 127);
            out.put_u64(len);
        }
        self.mask_pos = 0;
        if self.mask_frames {
            self.rng.fill_bytes(&mut self.mask);
            out.extend_from_slice(&self.mask);
        }
    }

    /// Appends `data`, masked if we mask.
    fn payload(&mut self, data: &[u8], out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(data);
        if self.mask_frames {
            self.mask_pos = apply_mask(self.mask, self.mask_pos, &mut out[start..]);
        }
    }

    /// The answer to a peer's control frame: a pong echoing a ping's
    /// payload, or a close echoing the status code of a close.
    pub fn answer(&mut self, control: &Control, out: &mut Vec<u8>) {
        let (op, data) = match control {
            Control::Ping(p) => (OP_PONG, &p[..]),
            Control::Close(p) => (OP_CLOSE, p.get(..2).unwrap_or_default()),
        };
        self.frame_header(op, data.len() as u64, out);
        self.payload(data, out);
    }

    /// Translates ZMTP bytes from `input` into WebSocket bytes in `out`.
    /// Consumes all of `input` (partial frames are carried over).
    pub fn encode(&mut self, mut input: &[u8], out: &mut Vec<u8>) {
        while !input.is_empty() {
            match self.state {
                EncState::Greeting(left) => {
                    let take = left.min(input.len());
                    input = &input[take..];
                    self.state = if take == left { EncState::Header } else { EncState::Greeting(left - take) };
                }
                EncState::Header => {
                    let want = if self.hdr_len == 0 || self.hdr[0] & crate::FLAG_LONG == 0 { 2 } else { 9 };
                    let take = (want - self.hdr_len).min(input.len());
                    self.hdr[self.hdr_len..self.hdr_len + take].copy_from_slice(&input[..take]);
                    self.hdr_len += take;
                    input = &input[take..];
                    let want = if self.hdr[0] & crate::FLAG_LONG == 0 { 2 } else { 9 };
                    if self.hdr_len == want {
                        self.zmtp_header_done(out);
                    }
                }
                EncState::Body => {
                    let take = (self.left.min(input.len() as u64)) as usize;
                    self.payload(&input[..take], out);
                    input = &input[take..];
                    self.left -= take as u64;
                    if self.left == 0 {
                        self.state = EncState::Header;
                    }
                }
                EncState::Command => {
                    let take = (self.left.min(input.len() as u64)) as usize;
                    self.command.extend_from_slice(&input[..take]);
                    input = &input[take..];
                    self.left -= take as u64;
                    if self.left == 0 {
                        self.command_done(out);
                    }
                }
            }
        }
    }

    fn zmtp_header_done(&mut self, out: &mut Vec<u8>) {
        let flags = self.hdr[0];
        let len = if flags & crate::FLAG_LONG == 0 {
            self.hdr[1] as u64
        } else {
            let mut b = [0u8; 8];
            b.copy_from_slice(&self.hdr[1..9]);
            u64::from_be_bytes(b)
        };
        self.hdr_len = 0;
        self.more = flags & crate::FLAG_MORE != 0;
        self.left = len;
        if flags & crate::FLAG_COMMAND != 0 {
            self.command.clear();
            self.state = EncState::Command;
            if len == 0 {
                self.command_done(out);
            }
            return;
        }
        self.frame_header(OP_BINARY, len + 1, out);
        let f = if self.more { WS_MORE } else { 0 };
        self.payload(&[f], out);
        self.state = if len == 0 { EncState::Header } else { EncState::Body };
    }

    fn command_done(&mut self, out: &mut Vec<u8>) {
        self.state = EncState::Header;
        let body = std::mem::take(&mut self.command);
        if self.bare && body.starts_with(b"\x05READY") {
            self.bare = false;
            let id = match crate::Command::parse(&bytes::Bytes::copy_from_slice(&body)) {
                Ok(crate::Command::Ready(md)) => md.get("Identity").map(<[u8]>::to_vec).unwrap_or_default(),
                _ => Vec::new(),
            };
            self.frame_header(OP_BINARY, id.len() as u64 + 1, out);
            self.payload(&[0], out);
            self.payload(&id, out);
        } else if body.starts_with(b"\x04PING") {
            self.frame_header(OP_PING, 0, out);
        } else if body.starts_with(b"\x04PONG") {
            self.frame_header(OP_PONG, 0, out);
        } else {
            self.frame_header(OP_BINARY, body.len() as u64 + 1, out);
            let f = WS_COMMAND | if self.more { WS_MORE } else { 0 };
            self.payload(&[f], out);
            self.payload(&body, out);
        }
        // Keep the allocation for the next command.
        self.command = body;
        self.command.clear();
    }
}
