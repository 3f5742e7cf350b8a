//! Outbound side of the engine: gathering messages from the out pipe into
//! write batches and writing them with vectored writes.

use super::{Engine, Fault, Phase};
use crate::channel::direct::Enter;
use bytes::{Buf, Bytes};
use oxmq_proto::Session;
use std::collections::VecDeque;
use std::io::{self, IoSlice};

/// Bytes gathered from the pipe into one write batch.
const OUT_BATCH: usize = 256 * 1024;
/// Bytes written per `run` before yielding to other connections.
const WRITE_BUDGET: usize = 256 * 1024;
/// Bodies at least this large are written from the message itself.
const ZERO_COPY_MIN: usize = 8 * 1024;
/// Upper bound on iovecs per `sendmsg`.
const MAX_IOV: usize = 64;
/// A batch that starts a large body goes out as a first write of at most
/// this many bytes, then the engine yields and writes the rest on its next
/// run: libzmq's pattern (an 8 KiB batch, then the body). When one I/O thread
/// serves both ends of a connection, this lets the reading end take the
/// frame's header (and allocate the body) before the body is written, and the
/// body is then read straight into it in one read: with one write of the whole
/// 1 MiB frame the reader took 64 KiB through its receive buffer first, and
/// the I/O thread used ~1.5x the CPU per message (issue 21 item 4; figures in
/// bench/TRAILING.md section 7).
const HEAD_WRITE: usize = 8 * 1024;

pub(super) enum Seg {
    Buf { start: usize, end: usize },
    Big(Bytes),
}

impl Engine {
    /// Extend the last buffer segment (or start one) with `tx_buf[start..]`.
    pub(super) fn note_buf(&mut self, start: usize) {
        note_seg(&mut self.segs, start, self.tx_buf.len());
    }

    /// Whether the write buffer ends inside a message: a frame with MORE
    /// was framed for this connection and its message's last frame was not
    /// (frames being skipped never reach this connection).
    pub(super) fn mid_message(&self) -> bool {
        self.out_mid && !self.out_skip
    }

    /// Moves messages from the out pipe into the (empty) write buffer,
    /// framed by the session; large bodies are referenced, not copied.
    /// Commands the session holds go in at the first message boundary.
    fn pull(&mut self) {
        if self.raw_close {
            return;
        }
        let mut total = 0;
        if self.mid_message() && self.session.as_ref().is_some_and(Session::has_transmit) {
            total = self.pull_frames::<true>(total);
            // Unless the batch filled up before the message's end.
            self.queue_session_output();
        }
        self.pull_frames::<false>(total);
    }

    /// The batch loop of [`pull`](Self::pull), from `total` bytes gathered
    /// to the total it returns. `TO_BOUNDARY`: stop after the current
    /// message's last frame (a separate instance, so the usual loop pays
    /// nothing per frame for it).
    fn pull_frames<const TO_BOUNDARY: bool>(&mut self, mut total: usize) -> usize {
        let (Some(pipe), Some(session)) = (&mut self.pipe, &mut self.session) else { return total };
        while total < OUT_BATCH && self.segs.len() < MAX_IOV - 2 {
            if TO_BOUNDARY && !self.out_mid {
                break;
            }
            let Some(msg) = pipe.out.read() else { break };
            if self.out_skip {
                self.out_skip = msg.more();
                self.out_mid = msg.more();
                continue;
            }
            self.out_mid = msg.more();
            // ROUTER and STREAM: the socket already took the id frame.
            if msg.is_routing_id() {
                continue;
            }
            let start = self.tx_buf.len();
            let body = msg.as_slice();
            if msg.is_subscribe() || msg.is_cancel() {
                session.encode_subscription(msg.is_subscribe(), body, &mut self.tx_buf);
            } else if body.len() >= ZERO_COPY_MIN
                && !msg.is_inline()
                && session.encode_frame_header(msg.more(), body.len(), &mut self.tx_buf)
            {
                let end = self.tx_buf.len();
                note_seg(&mut self.segs, start, end);
                let big = msg.into_bytes();
                total += end - start + big.len();
                self.segs.push_back(Seg::Big(big));
                continue;
            } else if !session.encode_frame(msg.more(), body, &mut self.tx_buf) {
                // STREAM: the socket asked to close this connection.
                self.raw_close = true;
                break;
            }
            total += self.tx_buf.len() - start;
            note_seg(&mut self.segs, start, self.tx_buf.len());
        }
        total
    }

    /// Writes buffered output, refilling from the pipe whenever the buffer
    /// drains. Returns whether it stopped because of the budget.
    pub(super) fn write_out(&mut self) -> Result<bool, Fault> {
        if let Some(port) = &self.direct {
            // Nothing to write (as after reading a REQ's reply) and the
            // half left to senders: it is not taken at all, or the
            // sender's next message, sent the moment that reply arrives,
            // would find it busy and wait for the engine to let go (a
            // wake-up per round trip). Held (a carry, a hand-back, the
            // start), it is entered and left as usual.
            if self.segs.is_empty()
                && !self.out_mid
                && !self.out_skip
                && matches!(self.phase, Phase::Active)
                && !port.engine_holds()
                && !self.pipe.as_mut().is_some_and(|p| p.out.check_read())
            {
                return Ok(false);
            }
            match port.engine_enter() {
                // The rest of a frame a sender began goes before anything.
                Enter::Go(Some(tail)) => self.segs.push_front(Seg::Big(tail)),
                Enter::Go(None) => {}
                // It wakes us when it lets go.
                Enter::Held => return Ok(false),
            }
        }
        let mut budget = WRITE_BUDGET;
        loop {
            if self.segs.is_empty() {
                self.tx_buf.clear();
                if matches!(self.phase, Phase::Active) {
                    self.pull();
                    if let Some(session) = &self.session {
                        session.check_codec()?;
                    }
                }
                if self.segs.is_empty() {
                    if self.writable && self.stream.has_pending() {
                        // ws: translated output the socket did not take yet.
                        match self.stream.flush_pending() {
                            Ok(done) => self.writable = done,
                            Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.writable = false,
                            Err(e) => return Err(Fault::Io(e)),
                        }
                    }
                    if let Some(port) = &self.direct {
                        // Everything the socket queued is on the wire, up
                        // to a message boundary: its next large send may
                        // write itself.
                        if !self.out_mid && !self.out_skip {
                            port.engine_leave();
                        }
                    }
                    return Ok(false);
                }
            }
            if !self.writable {
                return Ok(false);
            }
            if budget == 0 {
                return Ok(true);
            }
            let head = self.starts_large_body();
            let mut limit = if head { HEAD_WRITE } else { usize::MAX };
            let mut iov: [IoSlice<'_>; MAX_IOV] = [IoSlice::new(&[]); MAX_IOV];
            let mut n_iov = 0;
            for seg in self.segs.iter().take(MAX_IOV) {
                if limit == 0 {
                    break;
                }
                let bytes: &[u8] = match seg {
                    Seg::Buf { start, end } => &self.tx_buf[*start..*end],
                    Seg::Big(b) => b,
                };
                let bytes = &bytes[..bytes.len().min(limit)];
                limit -= bytes.len();
                iov[n_iov] = IoSlice::new(bytes);
                n_iov += 1;
            }
            let offered: usize = iov[..n_iov].iter().map(|b| b.len()).sum();
            match self.stream.writev(&iov[..n_iov]) {
                Ok(n) => {
                    budget = budget.saturating_sub(n);
                    self.advance(n);
                    if head && n == offered {
                        // The rest of the body on the next run.
                        return Ok(true);
                    }
                    if n < offered {
                        // The kernel buffer is full: wait for a writable edge.
                        self.writable = false;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.writable = false;
                    return Ok(false);
                }
                Err(e) => return Err(Fault::Io(e)),
            }
        }
    }

    /// Whether the next write starts a fresh batch whose first segment (the
    /// framing of small messages, then a large body's header) is followed by
    /// a large body: the write that [`HEAD_WRITE`] cuts.
    fn starts_large_body(&self) -> bool {
        matches!(self.segs.front(), Some(Seg::Buf { start: 0, .. })) && matches!(self.segs.get(1), Some(Seg::Big(_)))
    }

    fn advance(&mut self, mut n: usize) {
        while n > 0 {
            let Some(front) = self.segs.front_mut() else {
                return;
            };
            match front {
                Seg::Buf { start, end } => {
                    let len = *end - *start;
                    if n >= len {
                        n -= len;
                        self.segs.pop_front();
                    } else {
                        *start += n;
                        n = 0;
                    }
                }
                Seg::Big(b) => {
                    if n >= b.len() {
                        n -= b.len();
                        self.segs.pop_front();
                    } else {
                        b.advance(n);
                        n = 0;
                    }
                }
            }
        }
    }
}

fn note_seg(segs: &mut VecDeque<Seg>, start: usize, end: usize) {
    if end == start {
        return;
    }
    if let Some(Seg::Buf { end: e, .. }) = segs.back_mut() {
        if *e == start {
            *e = end;
            return;
        }
    }
    segs.push_back(Seg::Buf { start, end });
}
