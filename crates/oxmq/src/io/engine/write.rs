//! Outbound side of the engine: gathering messages from the out pipe into
//! write batches and writing them with vectored writes.

use super::{Engine, Fault, Phase};
use bytes::{Buf, Bytes};
use oxmq_proto::{encode_any_frame_header, Command, SocketType};
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

pub(super) enum Seg {
    Buf { start: usize, end: usize },
    Big(Bytes),
}

impl Engine {
    /// Queues a command frame, boxed under CURVE.
    pub(super) fn send_command(&mut self, cmd: &Command) {
        let start = self.tx_buf.len();
        match &mut self.codec {
            Some(codec) => {
                let mut body = Vec::with_capacity(cmd.body_len());
                cmd.encode_body(&mut body);
                codec.encode(false, true, &[&body], &mut self.tx_buf);
            }
            None => cmd.encode(&mut self.tx_buf),
        }
        self.note_buf(start);
    }

    /// Extend the last buffer segment (or start one) with `tx_buf[start..]`.
    pub(super) fn note_buf(&mut self, start: usize) {
        note_seg(&mut self.segs, start, self.tx_buf.len());
    }

    /// Moves messages from the out pipe into the (empty) write buffer.
    fn pull(&mut self) {
        if self.raw_close {
            return;
        }
        let Some(pipe) = &mut self.pipe else { return };
        let mut total = 0;
        while total < OUT_BATCH && self.segs.len() < MAX_IOV - 2 {
            let Some(msg) = pipe.out.read() else { break };
            if self.out_skip {
                self.out_skip = msg.more();
                self.out_mid = msg.more();
                continue;
            }
            self.out_mid = msg.more();
            let start = self.tx_buf.len();
            let body = msg.as_slice();
            if self.raw {
                // STREAM: the bytes alone (the socket already took the id
                // frame); DGRAM over tcp/ipc: each frame's bytes, back to back.
                if msg.is_routing_id() {
                    continue;
                }
                if body.is_empty() {
                    if self.cfg.socket_type == SocketType::Dgram {
                        // DGRAM: an empty frame adds no bytes to the stream
                        // (libzmq aborts the process on it; oxmq writes the rest).
                        continue;
                    }
                    // The socket asked to close this connection.
                    self.raw_close = true;
                    break;
                }
                self.tx_buf.extend_from_slice(body);
                total += body.len();
                note_seg(&mut self.segs, start, self.tx_buf.len());
                continue;
            }
            if let Some(codec) = &mut self.codec {
                if msg.is_routing_id() {
                    continue;
                }
                if msg.is_subscribe() || msg.is_cancel() {
                    let sub = msg.is_subscribe();
                    if self.cfg.socket_type == SocketType::Dish {
                        let name: &[u8] = if sub { b"\x04JOIN" } else { b"\x05LEAVE" };
                        codec.encode(false, true, &[name, body], &mut self.tx_buf);
                    } else if self.peer_minor >= 1 {
                        let name: &[u8] = if sub { b"\x09SUBSCRIBE" } else { b"\x06CANCEL" };
                        codec.encode(false, true, &[name, body], &mut self.tx_buf);
                    } else {
                        codec.encode(false, false, &[&[u8::from(sub)], body], &mut self.tx_buf);
                    }
                } else {
                    codec.encode(msg.more(), false, &[body], &mut self.tx_buf);
                }
                total += self.tx_buf.len() - start;
                note_seg(&mut self.segs, start, self.tx_buf.len());
                continue;
            }
            if msg.is_subscribe() || msg.is_cancel() {
                let sub = msg.is_subscribe();
                // Draft DISH: JOIN/LEAVE are command frames for every ZMTP 3.x peer (libzmq dish.cpp).
                if self.peer_minor >= 1 || self.cfg.socket_type == SocketType::Dish {
                    let name: &[u8] = match (sub, self.cfg.socket_type == SocketType::Dish) {
                        (true, false) => b"SUBSCRIBE",
                        (false, false) => b"CANCEL",
                        (true, true) => b"JOIN",
                        (false, true) => b"LEAVE",
                    };
                    encode_any_frame_header(&mut self.tx_buf, self.zmtp10, false, true, 1 + name.len() + body.len());
                    self.tx_buf.push(name.len() as u8);
                    self.tx_buf.extend_from_slice(name);
                } else {
                    encode_any_frame_header(&mut self.tx_buf, self.zmtp10, false, false, 1 + body.len());
                    self.tx_buf.push(u8::from(sub));
                }
                self.tx_buf.extend_from_slice(body);
            } else if msg.is_routing_id() {
                continue;
            } else if body.len() >= ZERO_COPY_MIN && !msg.is_inline() {
                encode_any_frame_header(&mut self.tx_buf, self.zmtp10, msg.more(), false, body.len());
                let end = self.tx_buf.len();
                note_seg(&mut self.segs, start, end);
                let big = msg.into_bytes();
                total += end - start + big.len();
                self.segs.push_back(Seg::Big(big));
                continue;
            } else {
                encode_any_frame_header(&mut self.tx_buf, self.zmtp10, msg.more(), false, body.len());
                self.tx_buf.extend_from_slice(body);
            }
            total += self.tx_buf.len() - start;
            note_seg(&mut self.segs, start, self.tx_buf.len());
        }
    }

    /// Writes buffered output, refilling from the pipe whenever the buffer
    /// drains. Returns whether it stopped because of the budget.
    pub(super) fn write_out(&mut self) -> Result<bool, Fault> {
        let mut budget = WRITE_BUDGET;
        loop {
            if self.segs.is_empty() {
                self.tx_buf.clear();
                if matches!(self.phase, Phase::Active) {
                    self.pull();
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
                    return Ok(false);
                }
            }
            if !self.writable {
                return Ok(false);
            }
            if budget == 0 {
                return Ok(true);
            }
            let mut iov: [IoSlice<'_>; MAX_IOV] = [IoSlice::new(&[]); MAX_IOV];
            let mut n_iov = 0;
            for seg in self.segs.iter().take(MAX_IOV) {
                iov[n_iov] = match seg {
                    Seg::Buf { start, end } => IoSlice::new(&self.tx_buf[*start..*end]),
                    Seg::Big(b) => IoSlice::new(b),
                };
                n_iov += 1;
            }
            let offered: usize = iov[..n_iov].iter().map(|b| b.len()).sum();
            match self.stream.writev(&iov[..n_iov]) {
                Ok(n) => {
                    budget = budget.saturating_sub(n);
                    self.advance(n);
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
