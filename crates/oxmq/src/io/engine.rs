//! The stream engine: one per tcp/ipc connection, driven by the I/O thread.
//!
//! Call-order contract (the owner is a listener's accepted connection or a
//! connect-side session):
//! 1. [`Engine::new`] queues our greeting; register the stream, then call
//!    [`Engine::run`] on every readiness event ([`Engine::set_ready`] first),
//!    pipe wake-up and timer ([`Engine::deadline`]).
//! 2. `run` returns [`Step::Handshaken`] once; the owner then calls
//!    [`Engine::attach`] with the pipe pair and calls `run` again (bytes
//!    after the handshake may already be buffered).
//! 3. [`Step::Again`] asks to be run again soon (a fairness budget ran out);
//!    [`Step::Closed`] means the connection is over: deregister the stream
//!    and take the pipe back with [`Engine::take_pipe`] if it outlives the
//!    connection.
//!
//! Data path: reads land in a large `BytesMut` and frames are split off it
//! without copying; a large frame's body is read straight into a buffer of
//! exactly its size (no read past its end, so nothing is copied on).
//! Frames of a multipart message are held back until the last one arrives,
//! so the pipe only ever holds whole messages and one flush per read batch
//! suffices. Before the first frame of each message the
//! inbound pipe's HWM is checked; at the HWM the engine stops reading from
//! the socket (keeping the undelivered frame) until the pipe wakes it.
//! Writes gather many messages into one buffer and one `sendmsg`; large
//! bodies are referenced, not copied.

use crate::ctx::CtxInner;
use crate::io::stream::Stream;
use crate::io::zap::ZapClient;
use crate::io::EnginePipe;
use crate::msg::{Msg, FLAG_CANCEL, FLAG_SUBSCRIBE};
use crate::options::Options;
use crate::pipe::Wake;
use bytes::{Buf, Bytes, BytesMut};
use oxmq_proto::{
    encode_any_frame_header, Command, CurveCodec, Frame, FrameDecoder, FrameHeader, Handshake, HandshakeConfig,
    HandshakeError, Heartbeat, HeartbeatAction, PeerInfo, ProtocolError, SocketType,
};
use std::collections::VecDeque;
use std::io::{self, IoSlice};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// Smallest free space kept in the receive buffer before a read.
const RX_CHUNK: usize = 64 * 1024;
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
/// Bytes gathered from the pipe into one write batch.
const OUT_BATCH: usize = 256 * 1024;
/// Bytes written per `run` before yielding to other connections.
const WRITE_BUDGET: usize = 256 * 1024;
/// Bodies at least this large are written from the message itself.
const ZERO_COPY_MIN: usize = 8 * 1024;
/// Upper bound on iovecs per `sendmsg`.
const MAX_IOV: usize = 64;

/// Why a connection was closed. Never reported to the socket, which only
/// sees its pipe go away; its monitor (if any) gets it as events.
#[derive(Debug)]
pub(crate) enum Fault {
    Io(io::Error),
    PeerClosed,
    Handshake(HandshakeError),
    Protocol(ProtocolError),
    HandshakeTimeout,
    HeartbeatDead,
    PeerError,
    Linger,
}

impl From<ProtocolError> for Fault {
    fn from(e: ProtocolError) -> Self {
        Fault::Protocol(e)
    }
}

/// What the owner must do after [`Engine::run`].
#[derive(Debug)]
pub(crate) enum Step {
    Idle,
    Again,
    Handshaken(Box<PeerInfo>),
    Closed(Fault),
}

enum Seg {
    Buf { start: usize, end: usize },
    Big(Bytes),
}

/// A large inbound frame whose body is being read straight into its own
/// buffer. Its header has been consumed from the receive buffer.
struct BigFrame {
    body: Vec<u8>,
    len: usize,
    more: bool,
    command: bool,
}

impl BigFrame {
    /// Takes the frame at the front of `rx` (header complete, body of `len`
    /// bytes not yet complete), moving the body bytes already read.
    fn start(rx: &mut BytesMut, header: FrameHeader) -> BigFrame {
        let (header_len, len) = (header.header_len, header.body_len);
        let have = &rx[header_len..];
        // The header is trusted only up to PRERESERVE_MAX; beyond that the
        // buffer grows with the bytes that actually arrive, so a lying
        // header cannot exhaust memory.
        let mut body = crate::bufpool::take(len.min(PRERESERVE_MAX).max(have.len()));
        body.extend_from_slice(have);
        rx.clear();
        BigFrame { body, len, more: header.more, command: header.command }
    }

    /// One read of (at most) the rest of the body. Returns the bytes read
    /// and how many were asked for.
    fn read(&mut self, stream: &mut Stream) -> io::Result<(usize, usize)> {
        let missing = self.len - self.body.len();
        if self.body.len() == self.body.capacity() {
            self.body.reserve_exact(missing.min(self.body.len().max(PRERESERVE_MAX)));
        }
        let room = missing.min(self.body.capacity() - self.body.len());
        stream.read_into_vec(&mut self.body, room).map(|n| (n, room))
    }

    fn is_complete(&self) -> bool {
        self.body.len() == self.len
    }

    fn into_frame(self) -> Frame {
        Frame { more: self.more, command: self.command, body: crate::bufpool::freeze(self.body) }
    }
}

enum Phase {
    Handshake(Box<Handshake>),
    /// STREAM (raw TCP): no handshake; the first run hands out the pipe.
    RawStart,
    Active,
}

/// Socket-side facts an engine needs.
#[derive(Clone)]
pub(crate) struct EngineConfig {
    pub(crate) socket_type: SocketType,
    pub(crate) options: Arc<Options>,
    pub(crate) linger_ms: Arc<AtomicI64>,
    /// Where the ZAP handler is looked up.
    pub(crate) ctx: Weak<CtxInner>,
}

pub(crate) struct Engine {
    pub(crate) stream: Stream,
    cfg: EngineConfig,
    phase: Phase,
    hs_deadline: Option<Instant>,
    rx: BytesMut,
    decoder: FrameDecoder,
    tx_buf: Vec<u8>,
    segs: VecDeque<Seg>,
    readable: bool,
    writable: bool,
    /// The peer hung up (EOF or error queued): a short read no longer means
    /// the socket is drained, the EOF behind the data has no edge of its own.
    hangup: bool,
    pipe: Option<EnginePipe>,
    /// A frame to process before any in `rx`: one that starts a message,
    /// held while the inbound pipe is full, or a just completed big frame.
    stalled: Option<Frame>,
    /// A large frame whose body is being read; `rx` is empty meanwhile.
    big: Option<BigFrame>,
    /// Frames of an inbound multipart message not yet complete.
    parts: Vec<Msg>,
    in_dirty: bool,
    /// The last outbound frame taken from the pipe had MORE (or frames are
    /// being skipped up to the end of a message begun on an earlier connection).
    out_mid: bool,
    out_skip: bool,
    peer_minor: u8,
    heartbeat: Option<Heartbeat>,
    /// Set when the socket went away: `Some(None)` = wait forever.
    linger: Option<Option<Instant>>,
    is_pub: bool,
    /// CURVE: every traffic frame is boxed and unboxed through it.
    codec: Option<CurveCodec>,
    /// A ZAP request waiting for the handler's reply.
    zap: Option<ZapClient>,
    /// Wakes this engine (ZAP replies arrive on a pipe like any other).
    waker: Arc<dyn Wake>,
    /// STREAM: bytes in and out as they are, no ZMTP.
    raw: bool,
    /// STREAM: the socket sent an empty frame; close once the output is written.
    raw_close: bool,
    /// The peer speaks ZMTP/1.0 (issue 13: older peers): RFC 13 framing both ways.
    zmtp10: bool,
    /// PUB/XPUB with an unversioned 1.0 peer: subscribe it to everything
    /// once the pipe is attached, as libzmq does for a SUB that filters locally.
    subscribe_all: bool,
}

impl Engine {
    pub(crate) fn new(stream: Stream, cfg: EngineConfig, now: Instant, waker: Arc<dyn Wake>) -> Engine {
        let opts = &cfg.options;
        let mut hs = Handshake::new(HandshakeConfig {
            socket_type: cfg.socket_type,
            identity: opts.routing_id.clone(),
            as_server: opts.security.as_server,
            mechanism: opts.security.mechanism_config(),
            zap_domain: opts.zap_domain.clone(),
            zap_enforce_domain: opts.zap_enforce_domain,
            entropy: crate::security::fresh_entropy(),
            metadata: opts.app_metadata.clone(),
        });
        hs.set_max_msg_size(opts.maxmsgsize);
        let is_pub = matches!(cfg.socket_type, SocketType::Pub | SocketType::XPub);
        let raw = cfg.socket_type == SocketType::Stream;
        let mut e = Engine {
            stream,
            hs_deadline: opts.handshake_ivl.filter(|d| !d.is_zero()).map(|d| now + d),
            decoder: FrameDecoder::new(opts.maxmsgsize),
            cfg,
            phase: Phase::Active,
            rx: BytesMut::with_capacity(RX_CHUNK),
            tx_buf: Vec::with_capacity(16 * 1024),
            segs: VecDeque::new(),
            readable: true,
            writable: true,
            hangup: false,
            pipe: None,
            stalled: None,
            big: None,
            parts: Vec::new(),
            in_dirty: false,
            out_mid: false,
            out_skip: false,
            peer_minor: 1,
            heartbeat: None,
            linger: None,
            is_pub,
            codec: None,
            zap: None,
            waker,
            raw,
            raw_close: false,
            zmtp10: false,
            subscribe_all: false,
        };
        if raw {
            e.hs_deadline = None;
            e.phase = Phase::RawStart;
            return e;
        }
        let start = e.tx_buf.len();
        hs.poll_transmit(&mut e.tx_buf);
        e.note_buf(start);
        e.phase = Phase::Handshake(Box::new(hs));
        e
    }

    /// Record readiness reported by the poller (edge-triggered).
    pub(crate) fn set_ready(&mut self, readable: bool, writable: bool) {
        self.readable |= readable;
        self.writable |= writable;
    }

    /// Record that the poller reported the peer's hang-up (see `hangup`).
    pub(crate) fn note_hangup(&mut self) {
        self.hangup = true;
    }

    pub(crate) fn is_handshaking(&self) -> bool {
        matches!(self.phase, Phase::Handshake(_))
    }

    /// Hand the engine its pipe after [`Step::Handshaken`]. `skip_partial`:
    /// the out pipe starts in the middle of a message whose head went to an
    /// earlier connection; its remaining frames are discarded.
    pub(crate) fn attach(&mut self, pipe: EnginePipe, skip_partial: bool) {
        self.pipe = Some(pipe);
        self.out_skip = skip_partial;
        self.out_mid = skip_partial;
        if std::mem::take(&mut self.subscribe_all) {
            self.push_subscription(Bytes::new(), FLAG_SUBSCRIBE);
        }
        self.send_hello();
    }

    /// HELLO_MSG (draft): the first message every new peer receives, ahead
    /// of anything queued (see `Options::sends_hello`).
    fn send_hello(&mut self) {
        let o = &self.cfg.options;
        if !o.sends_hello(self.cfg.socket_type) {
            return;
        }
        let start = self.tx_buf.len();
        match &mut self.codec {
            Some(codec) => codec.encode(false, false, &[&o.hello_msg], &mut self.tx_buf),
            None => {
                encode_any_frame_header(&mut self.tx_buf, self.zmtp10, false, false, o.hello_msg.len());
                self.tx_buf.extend_from_slice(&o.hello_msg);
            }
        }
        self.note_buf(start);
    }

    /// Take the pipe back after the connection closed. The bool says whether
    /// the out pipe is in the middle of a message (see [`Engine::attach`]).
    /// Complete inbound messages have been flushed; a partial one is dropped.
    pub(crate) fn take_pipe(&mut self) -> Option<(EnginePipe, bool)> {
        let mut pipe = self.pipe.take()?;
        if self.in_dirty {
            pipe.inn.flush();
            self.in_dirty = false;
        }
        self.parts.clear();
        self.stalled = None;
        self.big = None;
        Some((pipe, self.out_mid))
    }

    /// LINGER state: `None` = the socket has not gone; `Some(None)` = wait
    /// forever; `Some(Some(t))` = give up at `t`.
    pub(crate) fn linger(&self) -> Option<Option<Instant>> {
        self.linger
    }

    /// The earliest time [`Engine::run`] must be called again.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        let hb = match self.phase {
            Phase::Active => self.heartbeat.as_ref().and_then(|h| h.next_deadline()),
            Phase::Handshake(_) | Phase::RawStart => None,
        };
        let linger = self.linger.flatten();
        [self.hs_deadline, hb, linger].into_iter().flatten().min()
    }

    /// Do all pending work; see the type's contract.
    pub(crate) fn run(&mut self, now: Instant) -> Step {
        match self.run_inner(now) {
            Ok(step) => step,
            Err(fault) => Step::Closed(fault),
        }
    }

    fn run_inner(&mut self, now: Instant) -> Result<Step, Fault> {
        if let Phase::RawStart = self.phase {
            self.phase = Phase::Active;
            return Ok(Step::Handshaken(Box::new(PeerInfo {
                version: (3, 1),
                socket_type: SocketType::Stream,
                identity: None,
                metadata: Default::default(),
                user_id: None,
                zap_properties: Default::default(),
                filters_locally: false,
            })));
        }
        if let Phase::Handshake(_) = self.phase {
            if self.hs_deadline.is_some_and(|d| now >= d) {
                return Err(Fault::HandshakeTimeout);
            }
            let step = self.handshake_step(now);
            // Our greeting/READY (or an ERROR) must reach the wire either way.
            let written = self.write_out();
            let step = step?;
            written?;
            return Ok(step);
        }
        if let Some(hb) = &mut self.heartbeat {
            match hb.handle_timeout(now) {
                HeartbeatAction::None => {}
                HeartbeatAction::SendPing(cmd) => self.send_command(&cmd),
                HeartbeatAction::Dead => return Err(Fault::HeartbeatDead),
            }
        }
        self.check_linger(now)?;
        let read_again = self.read_active(now)?;
        let write_again = self.write_out()?;
        if self.raw_close && self.segs.is_empty() {
            return Err(Fault::Linger);
        }
        if let Some(p) = &self.pipe {
            if p.out.is_terminated() && self.segs.is_empty() && !self.stream.has_pending() {
                // The socket is gone and everything it sent is on the wire.
                return Err(Fault::Linger);
            }
        }
        Ok(if read_again || write_again { Step::Again } else { Step::Idle })
    }

    fn check_linger(&mut self, now: Instant) -> Result<(), Fault> {
        let Some(p) = &self.pipe else { return Ok(()) };
        if self.linger.is_none() && p.out.is_writer_gone() {
            let ms = self.cfg.linger_ms.load(Ordering::Relaxed);
            self.linger = Some(if ms < 0 { None } else { Some(now + Duration::from_millis(ms as u64)) });
        }
        if let Some(Some(deadline)) = self.linger {
            if now >= deadline {
                return Err(Fault::Linger);
            }
        }
        Ok(())
    }

    fn handshake_step(&mut self, now: Instant) -> Result<Step, Fault> {
        loop {
            let Phase::Handshake(hs) = &mut self.phase else { unreachable!() };
            let mut res = if self.rx.is_empty() { Ok(None) } else { hs.handle_input(&mut self.rx) };
            if matches!(res, Ok(None)) {
                let waiting = self.zap.is_some();
                res = Self::zap_step(hs, &mut self.zap, &self.cfg.ctx, &self.stream, &self.waker);
                // An answer lets the handshake read what the peer sent meanwhile.
                if waiting && self.zap.is_none() && matches!(res, Ok(None)) && !self.rx.is_empty() {
                    res = hs.handle_input(&mut self.rx);
                }
            }
            let start = self.tx_buf.len();
            hs.poll_transmit(&mut self.tx_buf);
            let codec = if matches!(res, Ok(Some(_))) { hs.take_codec() } else { None };
            self.note_buf(start);
            match res {
                Ok(Some(peer)) => {
                    self.codec = codec;
                    self.zap = None;
                    self.peer_minor = peer.version.1;
                    if peer.version.0 == 1 {
                        self.zmtp10 = true;
                        self.decoder = FrameDecoder::zmtp10(self.cfg.options.maxmsgsize);
                        self.subscribe_all = self.is_pub && peer.filters_locally;
                    }
                    self.phase = Phase::Active;
                    self.hs_deadline = None;
                    let o = &self.cfg.options;
                    // ZMTP/2.0 has no commands, so no PINGs (issue 13: older peers).
                    self.heartbeat = (peer.version.0 >= 3).then(|| {
                        Heartbeat::new(
                            o.heartbeat_ivl,
                            o.heartbeat_ttl,
                            o.heartbeat_timeout.filter(|d| !d.is_zero()),
                            now,
                        )
                    });
                    return Ok(Step::Handshaken(Box::new(peer)));
                }
                Ok(None) => {}
                Err(e) => return Err(Fault::Handshake(e)),
            }
            if !self.readable {
                return Ok(Step::Idle);
            }
            self.rx.reserve(4096);
            match self.stream.read_into(&mut self.rx) {
                Ok(0) => return Err(Fault::PeerClosed),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.readable = false,
                Err(e) => return Err(Fault::Io(e)),
            }
        }
    }

    /// Sends a ZAP request the mechanism asked for, or feeds it the reply.
    fn zap_step(
        hs: &mut Handshake,
        zap: &mut Option<ZapClient>,
        ctx: &Weak<CtxInner>,
        stream: &Stream,
        waker: &Arc<dyn Wake>,
    ) -> Result<Option<PeerInfo>, HandshakeError> {
        if let Some(req) = hs.take_zap_request() {
            // libzmq sends the peer's IP address (no port); ipc peers have none.
            let address = match stream.tcp() {
                Some(t) => t.peer_addr().map(|a| a.ip().to_string()).unwrap_or_default(),
                None => String::new(),
            };
            match ZapClient::ask(ctx, &req, address.as_bytes(), waker.clone()) {
                Some(client) => *zap = Some(client),
                None => return hs.handle_zap_unavailable(),
            }
        }
        let Some(client) = zap else { return Ok(None) };
        match client.poll_reply() {
            None => Ok(None),
            Some(reply) => {
                *zap = None;
                hs.handle_zap_reply(reply?)
            }
        }
    }

    /// Reads and decodes until WouldBlock, the HWM, or the budget. Returns
    /// whether it stopped because of the budget.
    fn read_active(&mut self, now: Instant) -> Result<bool, Fault> {
        let Some(pipe) = &self.pipe else {
            return Ok(false);
        };
        if pipe.inn.is_reader_gone() {
            return Ok(false);
        }
        let res = if self.raw { self.raw_read_loop() } else { self.read_loop(now) };
        if self.in_dirty {
            if let Some(p) = &mut self.pipe {
                p.inn.flush();
            }
            self.in_dirty = false;
        }
        res
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
                if let Some(h) = self.decoder.pending_header(&self.rx) {
                    // Valid and incomplete (decode took every complete frame).
                    if h.body_len >= BIG_FRAME_MIN {
                        self.big = Some(BigFrame::start(&mut self.rx, h));
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
                    if n < room && !self.hangup {
                        // A short read drained the socket: skip the
                        // WouldBlock round trip; the next arrival is a new edge.
                        // Not after a hang-up: its EOF was announced by the
                        // edge we are serving, and only a read will show it.
                        self.readable = false;
                    }
                    if let Some(hb) = &mut self.heartbeat {
                        hb.on_traffic(now);
                    }
                    if self.big.as_ref().is_some_and(BigFrame::is_complete) {
                        if let Some(big) = self.big.take() {
                            self.stalled = Some(Self::unbox(&mut self.codec, big.into_frame())?);
                        }
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.readable = false,
                Err(e) => return Err(Fault::Io(e)),
            }
        }
    }

    /// STREAM: every read becomes one message, as libzmq's raw engine does.
    /// Returns false when stopped by the HWM or the socket running dry.
    fn raw_read_loop(&mut self) -> Result<bool, Fault> {
        let mut budget = READ_BUDGET;
        loop {
            if !self.rx.is_empty() {
                let Some(pipe) = &mut self.pipe else { return Ok(false) };
                if !pipe.inn.check_write() {
                    return Ok(false);
                }
                pipe.inn.write(Msg::from_bytes(self.rx.split().freeze()));
                self.in_dirty = true;
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
                    if n < room {
                        self.readable = false;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.readable = false,
                Err(e) => return Err(Fault::Io(e)),
            }
        }
    }

    /// Decodes buffered frames into the inbound pipe. Returns false when
    /// stopped by the HWM.
    fn decode_frames(&mut self, now: Instant) -> Result<bool, Fault> {
        loop {
            // `stalled` frames are already unboxed.
            let frame = match self.stalled.take() {
                Some(f) => f,
                None => match self.decoder.decode(&mut self.rx)? {
                    Some(f) => Self::unbox(&mut self.codec, f)?,
                    None => return Ok(true),
                },
            };
            if frame.command {
                self.on_command(&frame.body, now)?;
                continue;
            }
            let Some(pipe) = &mut self.pipe else {
                return Ok(true);
            };
            if self.parts.is_empty() {
                // First frame of a message: respect the socket's RCVHWM.
                if !pipe.inn.check_write() {
                    self.stalled = Some(frame);
                    return Ok(false);
                }
                if !frame.more {
                    let body = frame.body;
                    let msg = if self.is_pub && !body.is_empty() && body[0] <= 1 {
                        // Legacy (ZMTP 3.0) subscription message.
                        let flag = if body[0] == 1 { FLAG_SUBSCRIBE } else { FLAG_CANCEL };
                        Msg::from_bytes(body.slice(1..)).with_flags(flag)
                    } else {
                        Msg::from_bytes(body)
                    };
                    pipe.inn.write(msg);
                    self.in_dirty = true;
                    continue;
                }
            }
            let mut msg = Msg::from_bytes(frame.body);
            msg.set_more(frame.more);
            self.parts.push(msg);
            if !frame.more {
                for m in self.parts.drain(..) {
                    pipe.inn.write(m);
                }
                self.in_dirty = true;
            }
        }
    }

    fn on_command(&mut self, body: &Bytes, now: Instant) -> Result<(), Fault> {
        match Command::parse(body)? {
            Command::Ping { ttl_deciseconds, context } => {
                self.send_command(&Command::pong_for(&context));
                if let Some(hb) = &mut self.heartbeat {
                    hb.on_ping(ttl_deciseconds, now);
                }
            }
            Command::Subscribe(topic) if self.is_pub => self.push_subscription(topic, FLAG_SUBSCRIBE),
            Command::Cancel(topic) if self.is_pub => self.push_subscription(topic, FLAG_CANCEL),
            Command::Error { .. } => return Err(Fault::PeerError),
            // Draft RADIO/DISH: a DISH's JOIN/LEAVE reach the RADIO as subscriptions.
            Command::Unknown { name, data } if self.cfg.socket_type == SocketType::Radio => match &name[..] {
                b"JOIN" => self.push_subscription(data, FLAG_SUBSCRIBE),
                b"LEAVE" => self.push_subscription(data, FLAG_CANCEL),
                _ => {}
            },
            _ => {}
        }
        Ok(())
    }

    /// Queues a command frame, boxed under CURVE.
    fn send_command(&mut self, cmd: &Command) {
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

    /// Opens a CURVE box; without CURVE the frame is returned as it is.
    fn unbox(codec: &mut Option<CurveCodec>, frame: Frame) -> Result<Frame, Fault> {
        match codec {
            None => Ok(frame),
            Some(c) => {
                let u = c.decode(frame.body)?;
                Ok(Frame { more: u.more, command: u.command, body: u.body })
            }
        }
    }

    /// Subscriptions bypass the HWM: losing one would silently change
    /// what the peer receives.
    fn push_subscription(&mut self, topic: Bytes, flag: u8) {
        if let Some(p) = &mut self.pipe {
            p.inn.write(Msg::from_bytes(topic).with_flags(flag));
            self.in_dirty = true;
        }
    }

    /// Extend the last buffer segment (or start one) with `tx_buf[start..]`.
    fn note_buf(&mut self, start: usize) {
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
                // STREAM: the bytes alone (the socket already took the id frame).
                if msg.is_routing_id() {
                    continue;
                }
                if body.is_empty() {
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
            } else if body.len() >= ZERO_COPY_MIN && msg.shared().is_some() {
                encode_any_frame_header(&mut self.tx_buf, self.zmtp10, msg.more(), false, body.len());
                let end = self.tx_buf.len();
                note_seg(&mut self.segs, start, end);
                let big = msg.shared().cloned().unwrap_or_default();
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
    fn write_out(&mut self) -> Result<bool, Fault> {
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
