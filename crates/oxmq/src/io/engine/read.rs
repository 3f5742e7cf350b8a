//! Inbound side of the engine: socket reads, and what the session makes of
//! them delivered into the inbound pipe.

use super::{Engine, Fault, RX_CHUNK};
use crate::bufpool::Placed;
use crate::channel::direct_read::ReadEnter;
use crate::io::stream::Stream;
use crate::msg::{Msg, FLAG_CANCEL, FLAG_SUBSCRIBE, INLINE_CAPACITY};
use bytes::{Buf, BytesMut};
use oxmq_proto::Session;
use oxmq_proto::{FrameHeader, Framing, Inbound};
use std::io;
use std::time::Instant;

/// Frame bodies at least this large are read into a buffer of their own
/// (exactly their size), never through the shared receive buffer.
const BIG_FRAME_MIN: usize = 16 * 1024;
/// Largest body whose whole size is allocated as soon as its header arrives.
const PRERESERVE_MAX: usize = 64 * 1024 * 1024;
/// Bytes read per `run` before yielding to other connections. Kept small
/// (with WRITE_BUDGET) so that, when both ends of a connection share this
/// I/O thread, bytes are read back soon after they were written, while the
/// kernel's copies of them are still in cache: with 1 MiB/4 MiB budgets
/// large-message tcp throughput was ~30% lower.
const READ_BUDGET: usize = 256 * 1024;

/// A large inbound frame whose body is being read straight into its own
/// buffer. Its header has been consumed from the receive buffer.
pub(super) struct BigFrame {
    body: Placed,
    len: usize,
    more: bool,
    command: bool,
}

impl BigFrame {
    /// Takes the frame at the front of `rx` (header complete, body of `len`
    /// bytes not yet complete), moving the body bytes already read; the
    /// body begins `source_at` bytes after its message did.
    fn start(rx: &mut BytesMut, header: FrameHeader, source_at: usize) -> BigFrame {
        let (header_len, len) = (header.header_len, header.body_len);
        let have = &rx[header_len..];
        // The header is trusted only up to PRERESERVE_MAX; beyond that the
        // buffer grows with the bytes that actually arrive, so a lying
        // header cannot exhaust memory.
        let mut body = Placed::take(len.min(PRERESERVE_MAX).max(have.len()), source_at);
        body.extend_from_slice(have);
        rx.clear();
        BigFrame { body, len, more: header.more, command: header.command }
    }

    /// One read of (at most) the rest of the body. Returns the bytes read
    /// and how many were asked for.
    fn read(&mut self, stream: &mut Stream) -> io::Result<(usize, usize)> {
        let missing = self.len - self.body.len();
        if self.body.room() == 0 {
            let grow = missing.min(self.body.len().max(PRERESERVE_MAX));
            self.body.tail().reserve_exact(grow);
        }
        let room = missing.min(self.body.room());
        stream.read_into_vec(self.body.tail(), room).map(|n| (n, room))
    }

    fn is_complete(&self) -> bool {
        self.body.len() == self.len
    }

    /// What the session makes of the whole frame: a CURVE box is opened in
    /// this buffer, which then becomes the message body as it is.
    fn finish(self, session: &mut Session, now: Instant) -> Result<Option<Inbound>, oxmq_proto::SessionError> {
        session.handle_owned_frame(self.more, self.command, self.body, Placed::freeze, now)
    }
}

impl Engine {
    /// Reads and decodes until WouldBlock, the HWM, or the budget. Returns
    /// whether it stopped because of the budget.
    pub(super) fn read_active(&mut self, now: Instant) -> Result<bool, Fault> {
        let Some(pipe) = &self.pipe else {
            return Ok(false);
        };
        if pipe.inn.is_reader_gone() {
            return Ok(false);
        }
        if let Some(port) = &self.direct {
            match port.read.engine_enter(self.readable) {
                ReadEnter::Go => {}
                ReadEnter::Handed(carry) => {
                    // A receiving thread read these first (from a message
                    // boundary, which is where it took the half) and saw
                    // more than its one message, or an EOF.
                    if let Some(carry) = carry {
                        self.stream_pos = self.stream_pos.wrapping_add(carry.len());
                        let rest = self.rx.split();
                        self.rx.extend_from_slice(&carry);
                        self.rx.unsplit(rest);
                    }
                    self.readable = true;
                    self.drain = true;
                }
                ReadEnter::Held => return Ok(false),
                ReadEnter::Idle => {
                    self.readable = false;
                    return Ok(false);
                }
            }
        }
        let raw = matches!(self.session.as_ref().map(Session::framing), Some(Framing::Raw { .. }));
        let res = if raw { self.raw_read_loop(now) } else { self.read_loop(now) };
        if self.in_dirty {
            if let Some(p) = &mut self.pipe {
                p.inn.flush();
            }
            self.in_dirty = false;
        }
        if matches!(res, Ok(false)) && self.read_is_idle() {
            if let Some(port) = &self.direct {
                port.read.engine_leave();
            }
        }
        res
    }

    /// Nothing read is held back and the socket is drained: a receiving
    /// thread may read the next message itself (`channel::direct_read`).
    fn read_is_idle(&self) -> bool {
        !self.readable
            && !self.drain
            && self.rx.is_empty()
            && self.big.is_none()
            && self.parts.is_empty()
            && self.stalled.is_none()
            // Only a round-trip socket's thread reads its connection; for
            // the others an idle half would cost a peek per arrival.
            && self.cfg.socket_type.is_round_trip()
            && self.session.as_ref().is_some_and(Session::others_may_read)
    }

    fn read_loop(&mut self, now: Instant) -> Result<bool, Fault> {
        let mut budget = READ_BUDGET;
        loop {
            if !self.decode_frames(now)? {
                return Ok(false); // at the HWM: wait for the pipe to wake us
            }
            if !self.readable {
                return Ok(false);
            }
            if budget == 0 {
                return Ok(true);
            }
            if self.big.is_none() {
                if let Some(h) = self.session.as_ref().and_then(|s| s.pending_header(&self.rx)) {
                    // Valid and incomplete (decode took every complete frame).
                    if h.body_len >= BIG_FRAME_MIN {
                        self.mark_message_start();
                        let source_at = self.rx_front_pos().wrapping_add(h.header_len).wrapping_sub(self.msg_start);
                        self.big = Some(BigFrame::start(&mut self.rx, h, source_at));
                    }
                }
            }
            let res = match &mut self.big {
                Some(big) => big.read(&mut self.stream),
                None => {
                    // Small frames only: at most RX_CHUNK is missing.
                    if self.rx.capacity() - self.rx.len() < RX_CHUNK {
                        self.rx.reserve(RX_CHUNK);
                    }
                    let room = self.rx.capacity() - self.rx.len();
                    self.stream.read_into(&mut self.rx).map(|n| (n, room))
                }
            };
            match res {
                Ok((0, _)) => return Err(Fault::PeerClosed),
                Ok((n, room)) => {
                    budget = budget.saturating_sub(n);
                    self.stream_pos = self.stream_pos.wrapping_add(n);
                    if n < room && !self.drain {
                        // A short read drained the socket: skip the
                        // WouldBlock round trip; the next arrival is a new edge.
                        // Not while draining (after a hang-up, or on a new
                        // socket): only a read shows an EOF already queued.
                        self.readable = false;
                    }
                    let Some(session) = &mut self.session else { return Ok(false) };
                    session.handle_bytes_received(now);
                    if self.big.as_ref().is_some_and(BigFrame::is_complete) {
                        if let Some(big) = self.big.take() {
                            self.stalled = big.finish(session, now)?;
                        }
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.readable = false;
                    self.drain = false;
                }
                Err(e) => return Err(Fault::Io(e)),
            }
        }
    }

    /// STREAM: every read becomes one message, as libzmq's raw engine does.
    /// Returns false when stopped by the HWM or the socket running dry.
    fn raw_read_loop(&mut self, now: Instant) -> Result<bool, Fault> {
        let mut budget = READ_BUDGET;
        loop {
            if !self.rx.is_empty() {
                let (Some(pipe), Some(session)) = (&mut self.pipe, &mut self.session) else { return Ok(false) };
                if !pipe.inn.check_write() {
                    return Ok(false);
                }
                if let Some(Inbound::Frame { body, .. }) = session.poll_inbound(&mut self.rx, now)? {
                    pipe.inn.write(Msg::from_bytes(body));
                    self.in_dirty = true;
                }
            }
            if !self.readable {
                return Ok(false);
            }
            if budget == 0 {
                return Ok(true);
            }
            if self.rx.capacity() < RX_CHUNK {
                self.rx.reserve(RX_CHUNK);
            }
            let room = self.rx.capacity() - self.rx.len();
            match self.stream.read_into(&mut self.rx) {
                Ok(0) => return Err(Fault::PeerClosed),
                Ok(n) => {
                    budget = budget.saturating_sub(n);
                    // As in `read_loop`.
                    if n < room && !self.drain {
                        self.readable = false;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.readable = false;
                    self.drain = false;
                }
                Err(e) => return Err(Fault::Io(e)),
            }
        }
    }

    /// Where the front of `rx` is in the stream.
    fn rx_front_pos(&self) -> usize {
        self.stream_pos.wrapping_sub(self.rx.len())
    }

    /// The frame at the front of `rx` begins a message unless earlier
    /// frames of its message are waiting in `parts`.
    fn mark_message_start(&mut self) {
        if self.parts.is_empty() {
            self.msg_start = self.rx_front_pos();
        }
    }

    /// Decodes buffered frames into the inbound pipe. Returns false when
    /// stopped by the HWM.
    /// The commonest frame, a small data frame, copied from the receive
    /// buffer straight into an inline message: `decode` would hand out a
    /// refcounted view of the buffer only for the message to copy it inline
    /// and drop the view, two atomic operations on a shared count per frame.
    /// `Some(true)`: delivered; `Some(false)`: the pipe is at its HWM and the
    /// frame stays in the buffer; `None`: not such a frame (or not complete),
    /// `decode` takes it.
    #[inline]
    fn small_frame(&mut self) -> Result<Option<bool>, Fault> {
        let Some(session) = &self.session else { return Ok(None) };
        // Not under CURVE (boxed) nor for a PUB (it reads subscriptions from data frames).
        let Some(h) = session.small_data_frame(&self.rx, INLINE_CAPACITY)? else {
            return Ok(None);
        };
        let Some(pipe) = &mut self.pipe else {
            return Ok(None);
        };
        if self.parts.is_empty() && !pipe.inn.check_write() {
            return Ok(Some(false));
        }
        let msg = Msg::from_slice(&self.rx[h.header_len..h.header_len + h.body_len]);
        let taken = h.header_len + h.body_len;
        self.rx.advance(taken);
        if self.parts.is_empty() && !h.more {
            // `deliver`'s common case, here: a call and a move less per frame.
            pipe.inn.write(msg);
            self.in_dirty = true;
        } else {
            if self.parts.is_empty() {
                // A multipart message begins (`mark_message_start`, with
                // the pipe borrowed and the frame taken); a single-frame
                // one's start is never asked for.
                self.msg_start = self.rx_front_pos().wrapping_sub(taken);
            }
            self.deliver(msg, h.more);
        }
        Ok(Some(true))
    }

    /// Queues one data frame: a single-frame message goes straight into the
    /// pipe, the frames of a multipart one wait in `parts` until the last
    /// (the pipe only ever holds whole messages). The caller has checked the
    /// HWM at the message's first frame.
    #[inline]
    fn deliver(&mut self, mut msg: Msg, more: bool) {
        let Some(pipe) = &mut self.pipe else { return };
        if self.parts.is_empty() && !more {
            pipe.inn.write(msg);
            self.in_dirty = true;
            return;
        }
        msg.set_more(more);
        self.parts.push(msg);
        if !more {
            for m in self.parts.drain(..) {
                pipe.inn.write(m);
            }
            self.in_dirty = true;
        }
    }

    fn decode_frames(&mut self, now: Instant) -> Result<bool, Fault> {
        loop {
            let inbound = match self.stalled.take() {
                Some(inbound) => inbound,
                None => {
                    match self.small_frame()? {
                        Some(true) => continue,
                        Some(false) => return Ok(false),
                        None => {}
                    }
                    self.mark_message_start();
                    let Some(session) = &mut self.session else { return Ok(true) };
                    match session.poll_inbound(&mut self.rx, now)? {
                        Some(inbound) => inbound,
                        None => return Ok(true),
                    }
                }
            };
            let flag = |subscribe| if subscribe { FLAG_SUBSCRIBE } else { FLAG_CANCEL };
            if let Inbound::Subscription { subscribe, topic, in_band: false } = inbound {
                self.push_subscription(topic, flag(subscribe));
                continue;
            }
            let Some(pipe) = &mut self.pipe else {
                return Ok(true);
            };
            // First frame of a message: respect the socket's RCVHWM.
            if self.parts.is_empty() && !pipe.inn.check_write() {
                self.stalled = Some(inbound);
                return Ok(false);
            }
            let (msg, more) = match inbound {
                Inbound::Frame { more, body } => (Msg::from_bytes(body), more),
                // A ZMTP 3.0 subscription: a message, in turn with the others.
                Inbound::Subscription { subscribe, topic, .. } => {
                    (Msg::from_bytes(topic).with_flags(flag(subscribe)), false)
                }
                // Nothing the socket could take.
                _ => continue,
            };
            self.deliver(msg, more);
        }
    }
}
