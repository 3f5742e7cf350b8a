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

mod read;
mod write;

use self::read::BigFrame;
use self::write::Seg;
use crate::io::stream::Stream;
use crate::io::zap::{ZapClient, ZapRoute};
use crate::io::EnginePipe;
use crate::msg::{Msg, FLAG_SUBSCRIBE};
use crate::options::Options;
use crate::pipe::Wake;
use bytes::{Bytes, BytesMut};
use oxmq_proto::{
    encode_any_frame_header, Frame, FrameDecoder, Handshake, HandshakeConfig, HandshakeError, Heartbeat,
    HeartbeatAction, PeerInfo, ProtocolError, SocketType, TrafficCodec,
};
use std::collections::VecDeque;
use std::io;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// Smallest free space kept in the receive buffer before a read.
const RX_CHUNK: usize = 64 * 1024;

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
    pub(crate) zap: Weak<dyn ZapRoute>,
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
    /// A short read does not show the socket drained: read on until
    /// WouldBlock or EOF. Set when the poller reports the peer's hang-up (the
    /// EOF behind the data has no edge of its own) and for a new engine,
    /// whose socket's earlier edges (a hang-up among them) were consumed by
    /// the connect that made it.
    drain: bool,
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
    codec: Option<TrafficCodec>,
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
        // STREAM, and draft DGRAM over tcp/ipc (libzmq's raw engine).
        let raw = stream.runs_raw(cfg.socket_type);
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
            drain: true,
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

    /// Record that the poller reported the peer's hang-up (see `drain`).
    pub(crate) fn note_hangup(&mut self) {
        self.drain = true;
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
        if let Phase::Handshake(hs) = &self.phase {
            if self.hs_deadline.is_some_and(|d| now >= d) {
                // A GSSAPI failure stalls the handshake until now, as in libzmq.
                return Err(hs.local_failure().map_or(Fault::HandshakeTimeout, Fault::Handshake));
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
                res = Self::zap_step(hs, &mut self.zap, &self.cfg.zap, &self.stream, &self.waker);
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
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.readable = false;
                    self.drain = false;
                }
                Err(e) => return Err(Fault::Io(e)),
            }
        }
    }

    /// Sends a ZAP request the mechanism asked for, or feeds it the reply.
    fn zap_step(
        hs: &mut Handshake,
        zap: &mut Option<ZapClient>,
        route: &Weak<dyn ZapRoute>,
        stream: &Stream,
        waker: &Arc<dyn Wake>,
    ) -> Result<Option<PeerInfo>, HandshakeError> {
        if let Some(req) = hs.take_zap_request() {
            // libzmq sends the peer's IP address (no port); ipc peers have none.
            let address = match stream.tcp() {
                Some(t) => t.peer_addr().map(|a| a.ip().to_string()).unwrap_or_default(),
                None => String::new(),
            };
            match ZapClient::ask(route, &req, address.as_bytes(), waker.clone()) {
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

    /// Subscriptions bypass the HWM: losing one would silently change
    /// what the peer receives.
    fn push_subscription(&mut self, topic: Bytes, flag: u8) {
        if let Some(p) = &mut self.pipe {
            p.inn.write(Msg::from_bytes(topic).with_flags(flag));
            self.in_dirty = true;
        }
    }
}
