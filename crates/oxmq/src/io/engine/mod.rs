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
//! The engine is a pump: readiness, buffers and pipes. What the bytes
//! mean after the handshake (framing, commands, subscriptions, heartbeats,
//! CURVE boxes, raw STREAM bytes) is decided by its [`Session`]
//! (`oxmq-proto`), which is tested without sockets.
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
use crate::channel::direct::DirectPort;
use crate::io::stream::Stream;
use crate::io::zap::{ZapClient, ZapRoute};
use crate::io::EnginePipe;
use crate::msg::{Msg, FLAG_SUBSCRIBE};
use crate::options::Options;
use crate::pipe::Wake;
use bytes::{Bytes, BytesMut};
use mio::{Registry, Token};
use oxmq_proto::{
    Handshake, HandshakeConfig, HandshakeError, Inbound, PeerInfo, ProtocolError, Session, SessionConfig, SessionError,
    SocketType,
};
use std::collections::VecDeque;
use std::io;
use std::os::fd::AsRawFd;
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

impl From<SessionError> for Fault {
    fn from(e: SessionError) -> Self {
        match e {
            SessionError::Protocol(e) => Fault::Protocol(e),
            SessionError::PeerSilent => Fault::HeartbeatDead,
            // The peer's ERROR, and any end the session adds later: the
            // peer's doing, reported as its error.
            _ => Fault::PeerError,
        }
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
// `Engine::session` is `Some` exactly when the phase is not `Handshake`.

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
    /// The traffic phase's protocol; `None` during the handshake.
    session: Option<Session>,
    tx_buf: Vec<u8>,
    segs: VecDeque<Seg>,
    readable: bool,
    /// No write has hit EAGAIN (or a short write) since the last writable
    /// edge. Writes are simply tried while it holds.
    writable: bool,
    /// The stream is registered for writable readiness. Only while a write
    /// is blocked (`!writable`), as libzmq does: otherwise every read by the
    /// peer (on AF_UNIX) or ACK (tcp) would wake the I/O thread for nothing.
    write_armed: bool,
    /// A short read does not show the socket drained: read on until
    /// WouldBlock or EOF. Set when the poller reports the peer's hang-up (the
    /// EOF behind the data has no edge of its own) and for a new engine,
    /// whose socket's earlier edges (a hang-up among them) were consumed by
    /// the connect that made it.
    drain: bool,
    pipe: Option<EnginePipe>,
    /// What to deliver before anything in `rx`: a message's first frame
    /// held while the inbound pipe is full, or a just completed big frame.
    stalled: Option<Inbound>,
    /// A large frame whose body is being read; `rx` is empty meanwhile.
    big: Option<BigFrame>,
    /// Bytes read from the stream so far (wrapping), and where in it the
    /// current message began: a large body is placed by its distance from
    /// its message's start (`bufpool::Placed`), since a peer's kernel most
    /// likely began a page with the message.
    stream_pos: usize,
    msg_start: usize,
    /// Frames of an inbound multipart message not yet complete.
    parts: Vec<Msg>,
    in_dirty: bool,
    /// The last outbound frame taken from the pipe had MORE (or frames are
    /// being skipped up to the end of a message begun on an earlier connection).
    out_mid: bool,
    out_skip: bool,
    /// Set when the socket went away: `Some(None)` = wait forever.
    linger: Option<Option<Instant>>,
    /// A ZAP request waiting for the handler's reply.
    zap: Option<ZapClient>,
    /// Wakes this engine (ZAP replies arrive on a pipe like any other).
    waker: Arc<dyn Wake>,
    /// STREAM: the socket sent an empty frame; close once the output is written.
    raw_close: bool,
    /// The write half shared with the socket's large sends (plain ZMTP 3.x
    /// over tcp and ipc, from `attach`); see `channel::direct`.
    direct: Option<Arc<DirectPort>>,
    /// `direct`'s read side knows the poller registration.
    poller_bound: bool,
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
        // STREAM, and draft DGRAM over tcp/ipc (libzmq's raw engine).
        let raw = stream.runs_raw(cfg.socket_type);
        let mut e = Engine {
            stream,
            hs_deadline: opts.handshake_ivl.filter(|d| !d.is_zero()).map(|d| now + d),
            session: None,
            cfg,
            phase: Phase::Active,
            rx: BytesMut::with_capacity(RX_CHUNK),
            tx_buf: Vec::with_capacity(16 * 1024),
            segs: VecDeque::new(),
            readable: true,
            writable: true,
            // `Stream::register` asks for both.
            write_armed: true,
            drain: true,
            pipe: None,
            stalled: None,
            big: None,
            stream_pos: 0,
            msg_start: 0,
            parts: Vec::new(),
            in_dirty: false,
            out_mid: false,
            out_skip: false,
            linger: None,
            zap: None,
            waker,
            raw_close: false,
            direct: None,
            poller_bound: false,
        };
        if raw {
            e.session = Some(Session::raw(e.cfg.socket_type));
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
        if let (Some(fd), true) = (self.stream.direct_fd(), self.session.as_ref().is_some_and(Session::frames_in_clear))
        {
            let max = self.cfg.options.maxmsgsize;
            let port = DirectPort::new(fd, max, self.waker.clone(), pipe.out.writer_wake().clone());
            pipe.direct.set(port.clone());
            self.direct = Some(port);
        }
        self.pipe = Some(pipe);
        self.out_skip = skip_partial;
        self.out_mid = skip_partial;
        if self.session.as_ref().is_some_and(Session::subscribe_peer_to_all) {
            self.push_subscription(Bytes::new(), FLAG_SUBSCRIBE);
        }
        self.send_hello();
    }

    /// HELLO_MSG (draft): the first message every new peer receives, ahead
    /// of anything queued (see `Options::sends_hello`).
    fn send_hello(&mut self) {
        let o = &self.cfg.options;
        let Some(session) = &mut self.session else { return };
        if !o.sends_hello(self.cfg.socket_type) {
            return;
        }
        let start = self.tx_buf.len();
        session.encode_frame(false, &o.hello_msg, &mut self.tx_buf);
        self.note_buf(start);
    }

    /// Take the pipe back after the connection closed. The bool says whether
    /// the out pipe is in the middle of a message (see [`Engine::attach`]).
    /// Complete inbound messages have been flushed; a partial one is dropped.
    pub(crate) fn take_pipe(&mut self) -> Option<(EnginePipe, bool)> {
        self.close_direct();
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

    /// No sender writes to this connection any more (one inside a write
    /// is waited for): its fd is about to close.
    fn close_direct(&mut self) {
        if let Some(port) = self.direct.take() {
            port.close();
            if let Some(p) = &self.pipe {
                p.direct.clear(&port);
            }
        }
    }

    /// LINGER state: `None` = the socket has not gone; `Some(None)` = wait
    /// forever; `Some(Some(t))` = give up at `t`.
    pub(crate) fn linger(&self) -> Option<Option<Instant>> {
        self.linger
    }

    /// The earliest time [`Engine::run`] must be called again.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        let hb = match self.phase {
            Phase::Active => self.session.as_ref().and_then(Session::poll_timeout),
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

    /// [`Engine::run`], then writable interest brought in line with whether
    /// a write is blocked (see `write_armed`).
    pub(crate) fn run_registered(&mut self, now: Instant, registry: &Registry, token: Token) -> Step {
        let step = self.run(now);
        if matches!(step, Step::Closed(_)) {
            return step;
        }
        let want = !self.writable;
        // A connection whose read side a receiving thread may take changes
        // its registration through that side (see `direct_read::Interest`).
        let port = self.direct.as_ref().map(|p| &p.read);
        if let Some(read) = port.filter(|_| !self.poller_bound) {
            read.bind_poller(registry.as_raw_fd(), token.0 as u64, self.write_armed);
            self.poller_bound = true;
        }
        if want != self.write_armed {
            let changed = match port {
                Some(read) => read.set_writable(want),
                None => self.stream.reregister(registry, token, want),
            };
            if let Err(e) = changed {
                return Step::Closed(Fault::Io(e));
            }
            self.write_armed = want;
        }
        step
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
        if let Some(session) = &mut self.session {
            session.handle_timeout(now)?;
        }
        self.check_linger(now)?;
        let read_again = self.read_active(now)?;
        // PINGs due and PONGs for the peer's PINGs.
        self.queue_session_output();
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
                    self.zap = None;
                    let o = &self.cfg.options;
                    let config = SessionConfig {
                        socket_type: self.cfg.socket_type,
                        max_msg_size: o.maxmsgsize,
                        heartbeat_ivl: o.heartbeat_ivl,
                        heartbeat_ttl: o.heartbeat_ttl,
                        heartbeat_timeout: o.heartbeat_timeout,
                    };
                    self.session = Some(Session::new(&config, &peer, codec, now));
                    self.phase = Phase::Active;
                    self.hs_deadline = None;
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

    /// Moves the command frames the session wants sent into the write
    /// buffer, unless the buffer ends inside a message: then `pull` writes
    /// them after the message's last frame (RFC 37 has commands only
    /// between messages).
    fn queue_session_output(&mut self) {
        let mid_message = self.mid_message();
        let Some(session) = &mut self.session else { return };
        if session.has_transmit() && !mid_message {
            let start = self.tx_buf.len();
            session.poll_transmit(&mut self.tx_buf);
            self.note_buf(start);
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

impl Drop for Engine {
    fn drop(&mut self) {
        // Before the stream's fd closes (fields drop after this).
        self.close_direct();
    }
}
