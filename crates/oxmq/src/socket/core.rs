//! A socket's state machine, driven by the caller's thread: the pattern and
//! its pipes, the send/receive paths and their waits, the commands other
//! threads queue (attached pipes, activations), reaping, and close.

use super::endpoints::EndpointRecord;
use super::{DONTWAIT, SNDMORE, THROTTLED_VIEW};
use crate::channel::direct::DirectPort;
use crate::channel::direct::{DirectHead, DIRECT_MIN, PACE_WAIT};
use crate::channel::direct_read::{FrameAt, ReadEnd, WokenBy, DIRECT_READ_MAX};
use crate::channel::mailbox::{Inbox, Mailbox, PipeActivator, SocketCommand};
use crate::channel::pipes::{DirectSend, SendThrottle};
use crate::channel::pipes::{EndpointId, PipeId, Pipes, SocketPipe};
use crate::ctx::{Context, CtxInner};
use crate::error::{Error, Result};
use crate::monitor::Monitor;
use crate::msg::Msg;
use crate::options::{Options, POLLIN, POLLOUT};
use crate::patterns::{new_pattern, Pattern};
use crate::transport::inproc;
use oxmq_proto::SocketType;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The pipe a direct read is for: its slot, and its key (unique in the
/// process), which says whether the slot still holds that pipe.
pub(super) type DirectPipe = (PipeId, u64);

/// A direct read's message buffer and the frames found in it.
pub(super) type DirectBuffers = (Vec<u8>, Vec<FrameAt>);

/// What a blocking receive's wait on its connection came to
/// (`Core::end_direct`).
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub(crate) enum DirectWait {
    /// A message is queued at its pipe's front: receive again.
    Queued,
    /// The wait did not happen (no connection to read, or the engine
    /// reads it): wait on the socket as usual.
    NotTaken,
    /// Something else woke the wait (the socket's descriptor, a binding's
    /// close or wake descriptor), or the engine took the read side: wait
    /// on the socket as usual, which returns at once if that is ready.
    Woken,
    /// The deadline the wait was given passed.
    TimedOut,
    /// A signal interrupted the wait.
    Interrupted,
}

pub(crate) struct Core {
    pub(crate) id: u64,
    pub(super) kind: SocketType,
    pub(super) ctx: Arc<CtxInner>,
    pub(super) mailbox: Arc<Mailbox>,
    pub(super) pattern: Box<dyn Pattern>,
    /// The sizes of single-frame sends that may go direct (`send_direct`):
    /// large ones, or on round-trip types small ones (see `direct_sizes`).
    direct_sizes: std::ops::Range<usize>,
    /// The frames the pattern puts before a direct send (reused).
    direct_head: DirectHead,
    /// A blocking receive's buffer for reading its connection itself
    /// (`recv_direct`; allocated at first use), and the frames found in it.
    direct_rx: Vec<u8>,
    direct_frames: Vec<FrameAt>,
    pub(super) pipes: Pipes,
    pub(super) options: Options,
    pub(super) linger_ms: Arc<AtomicI64>,
    pub(super) inbox: Inbox,
    pub(super) key_to_pipe: HashMap<u64, PipeId>,
    pub(super) endpoints: Vec<EndpointRecord>,
    pub(super) next_endpoint: EndpointId,
    pub(super) last_endpoint: String,
    pub(super) rcvmore: bool,
    pub(super) closed: bool,
    /// Commands, activations and eventfd signals taken so far (thread-safe
    /// sockets wake their other waiters when a call consumed some).
    pub(super) commands_seen: u64,
    /// `THROTTLED_VIEW` sends: the socket's writing ends then see their
    /// readers as libzmq's sender does (`SocketWriter::check_write`).
    throttle: Arc<SendThrottle>,
    /// Throttled sends so far: every 64th (and the first) reads the clock.
    throttled_sends: u32,
    /// Whether `throttle.active` is set (the last send was throttled).
    throttle_armed: bool,
    /// Monitor slot, shared with this socket's listeners and sessions.
    pub(super) monitor: Arc<Monitor>,
    // ROUTER_RAW: a ROUTER whose new connections are raw, as STREAM's.
    pub(super) router_raw: bool,
    // RECONNECT_STOP_AFTER_DISCONNECT: set by the first successful disconnect.
    pub(super) disconnected: Arc<AtomicBool>,
}

impl Core {
    pub(super) fn new(ctx: &Context, kind: SocketType, id: u64, mailbox: Arc<Mailbox>, options: Options) -> Core {
        let pattern = new_pattern(kind, &options);
        let direct_sizes = direct_sizes(kind.is_round_trip());
        let monitor = Monitor::new();
        let linger_ms = Arc::new(AtomicI64::new(crate::options::opt_to_ms(options.linger)));
        Core {
            id,
            kind,
            ctx: ctx.inner.clone(),
            mailbox,
            pattern,
            direct_sizes,
            pipes: {
                let mut pipes = Pipes::default();
                pipes.events = crate::channel::events::SocketEvents::new(monitor.clone());
                pipes
            },
            options,
            linger_ms,
            inbox: Inbox::default(),
            key_to_pipe: HashMap::new(),
            endpoints: Vec::new(),
            next_endpoint: 1,
            last_endpoint: String::new(),
            rcvmore: false,
            closed: false,
            commands_seen: 0,
            throttle: Default::default(),
            throttled_sends: 0,
            throttle_armed: false,
            monitor,
            router_raw: false,
            disconnected: Default::default(),
            direct_head: Default::default(),
            direct_rx: Vec::new(),
            direct_frames: Vec::new(),
        }
    }

    /// Draft RADIO/DISH.
    pub(super) fn join_leave(&mut self, group: &[u8], join: bool) -> Result<()> {
        self.check_term()?;
        self.process_commands()?;
        let r =
            if join { self.pattern.join(group, &mut self.pipes) } else { self.pattern.leave(group, &mut self.pipes) };
        self.reap();
        r
    }

    #[inline]
    pub(super) fn check_term(&self) -> Result<()> {
        if self.ctx.is_terminated() {
            Err(Error::Terminated)
        } else {
            Ok(())
        }
    }

    #[inline]
    pub(super) fn send(&mut self, msg: Msg, flags: i32) -> Result<()> {
        self.send_or_keep(msg, flags).map_err(|(_, e)| e)
    }

    /// `send`, handing the message back when it fails (libzmq leaves a
    /// failed message with its caller), so a caller that must keep it needs
    /// no copy up front.
    #[inline]
    pub(super) fn send_or_keep(&mut self, msg: Msg, flags: i32) -> std::result::Result<(), (Msg, Error)> {
        self.note_send_kind(flags);
        if flags & SNDMORE == 0 && self.direct_sizes.contains(&msg.len()) {
            return self.send_last_direct(msg, flags);
        }
        self.send_fresh(msg, flags)
    }

    /// A message's last frame that may go direct (`direct_sizes`) is
    /// written from its body by this thread when its connection is idle,
    /// as `send_slice` writes a caller's buffer, and released once
    /// written: no hand-off to the I/O thread.
    #[inline(never)]
    fn send_last_direct(&mut self, msg: Msg, flags: i32) -> std::result::Result<(), (Msg, Error)> {
        if !msg.is_internal() {
            match self.send_direct(msg.as_slice(), flags) {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(e) => return Err((msg, e)),
            }
        }
        self.send_fresh(msg, flags)
    }

    /// `send` of a copy of `data`. A large single-frame message whose
    /// connection has nothing queued is written from `data` itself, by this
    /// thread (`channel::direct`): no copy into a message, no hand-off.
    pub(super) fn send_slice(&mut self, data: &[u8], flags: i32) -> Result<()> {
        self.note_send_kind(flags);
        if self.try_send_direct(data, flags)? {
            return Ok(());
        }
        self.send_fresh(Msg::from_slice(data), flags).map_err(|(_, e)| e)
    }

    pub(super) fn direct_send_sizes(&self) -> std::ops::Range<usize> {
        self.direct_sizes.clone()
    }

    /// The direct half of `send_slice`: `Ok(false)` when the message was
    /// not sent and must go the usual way.
    pub(super) fn try_send_direct(&mut self, data: &[u8], flags: i32) -> Result<bool> {
        if !self.direct_sizes.contains(&data.len()) || flags & SNDMORE != 0 {
            return Ok(false);
        }
        self.send_direct(data, flags)
    }

    /// A send that may block, to a connection still writing earlier
    /// messages, waits (up to `PACE_WAIT`) for it to finish and then
    /// writes itself, as a plain socket's blocking write waits for the
    /// kernel: otherwise the copy-mode sender, whose copy is cheaper than
    /// the kernel's, stays ahead of the connection once a message is
    /// queued, and every later message is copied into a fresh buffer
    /// (issue 21; bench/TRAILING.md section 3). A wait that runs out (a
    /// peer that stopped reading) leaves that pipe to queue as libzmq's
    /// does until its connection next catches up.
    fn send_direct(&mut self, data: &[u8], flags: i32) -> Result<bool> {
        // A non-blocking send only queues, as libzmq's: written here it
        // would fill the kernel's buffers as fast as the caller loops, and
        // a DONTWAIT sender to a peer that stopped reading would see EAGAIN
        // only after those buffers' worth of messages instead of after
        // about the HWM (libzmq's test_router_mandatory_hwm).
        let blocking = flags & DONTWAIT == 0 && self.options.sndtimeo != Some(Duration::ZERO);
        if !blocking {
            return Ok(false);
        }
        let mut pace_until: Option<Instant> = None;
        loop {
            if self.mailbox.has_pending() {
                self.process_commands()?;
            }
            self.direct_head.clear();
            let Some(id) = self.pattern.direct_target(&mut self.pipes, &mut self.direct_head) else { return Ok(false) };
            let out = &mut self.pipes.get_mut(id).out;
            let pace = !out.direct_stalled();
            match out.try_direct(&mut self.direct_head, data, pace) {
                DirectSend::Sent => {
                    self.pattern.direct_sent(id, &mut self.pipes);
                    if self.pipes.after_send {
                        self.after_send();
                    }
                    return Ok(true);
                }
                DirectSend::No => return Ok(false),
                DirectSend::Pacing => {}
            }
            let sndtimeo = self.options.sndtimeo;
            let until =
                *pace_until.get_or_insert_with(|| Instant::now() + sndtimeo.map_or(PACE_WAIT, |t| t.min(PACE_WAIT)));
            match self.wait(Some(until)) {
                Ok(()) => {}
                Err(Error::Again) => {
                    self.pipes.get_mut(id).out.set_direct_stalled();
                    return Ok(false);
                }
                Err(e) => return Err(e),
            }
        }
    }

    #[inline(always)]
    fn note_send_kind(&mut self, flags: i32) {
        if flags & (DONTWAIT | THROTTLED_VIEW) == DONTWAIT | THROTTLED_VIEW {
            self.begin_throttled_send();
        } else if self.throttle_armed {
            self.disarm_throttle();
        }
    }

    /// A `THROTTLED_VIEW` send: the pipes' writing ends look at their
    /// readers' progress as libzmq's do (see `SocketWriter::check_write`).
    /// The ends stay throttled after it (one store per run of such sends,
    /// not two per send) until a call that must see the readers as they are:
    /// another send, or `events` (poll, ZMQ_EVENTS).
    #[inline]
    fn begin_throttled_send(&mut self) {
        // libzmq looks at its readers (takes its commands) on such a send
        // once a millisecond has passed since its last look, which costs it
        // a TSC read per send; the clock is read here on every 64th send,
        // and by a writing end whose view says full.
        if self.throttled_sends.is_multiple_of(64) {
            self.look_at_readers();
        }
        self.throttled_sends = self.throttled_sends.wrapping_add(1);
        if !self.throttle_armed {
            self.throttle_armed = true;
            self.throttle.active.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }

    #[cold]
    fn disarm_throttle(&mut self) {
        self.throttle_armed = false;
        self.throttle.active.store(false, std::sync::atomic::Ordering::Relaxed);
    }

    #[cold]
    fn look_at_readers(&mut self) {
        let now = Instant::now();
        if self.throttle.look_due(now) {
            self.throttle.looked(now);
            for id in self.pipes.ids() {
                self.pipes.get_mut(id).out.refresh_view();
            }
        }
    }

    #[inline(always)]
    fn send_fresh(&mut self, mut msg: Msg, flags: i32) -> std::result::Result<(), (Msg, Error)> {
        msg.set_more(flags & SNDMORE != 0);
        if self.mailbox.has_pending() {
            if let Err(e) = self.process_commands() {
                return Err((msg, e));
            }
        }
        let msg = match self.pattern.send(msg, &mut self.pipes) {
            Ok(()) => {
                if self.pipes.after_send {
                    self.after_send();
                }
                return Ok(());
            }
            Err((m, Error::Again)) => m,
            Err(failed) => {
                self.reap();
                return Err(failed);
            }
        };
        self.send_slow(msg, flags)
    }

    #[cold]
    pub(super) fn send_slow(&mut self, mut msg: Msg, flags: i32) -> std::result::Result<(), (Msg, Error)> {
        let timeout = if flags & DONTWAIT != 0 { Some(Duration::ZERO) } else { self.options.sndtimeo };
        let deadline = timeout.map(|t| Instant::now() + t);
        loop {
            if let Err(e) = self.check_term().and_then(|()| self.process_commands()) {
                return Err((msg, e));
            }
            match self.pattern.send(msg, &mut self.pipes) {
                Ok(()) => {
                    self.after_send();
                    return Ok(());
                }
                Err((m, Error::Again)) => msg = m,
                Err(failed) => {
                    self.reap();
                    return Err(failed);
                }
            }
            self.reap();
            if let Err(e) = self.wait(deadline) {
                return Err((msg, e));
            }
        }
    }

    #[inline]
    pub(super) fn recv(&mut self, flags: i32) -> Result<Msg> {
        if self.mailbox.has_pending() {
            self.process_commands()?;
        }
        if self.options.conflate {
            return self.recv_conflated(flags);
        }
        match self.pattern.recv(&mut self.pipes) {
            Ok(m) => {
                self.rcvmore = m.more();
                if !self.pipes.dead.is_empty() {
                    self.reap();
                }
                Ok(m)
            }
            Err(Error::Again) => self.recv_slow(flags),
            Err(e) => Err(e),
        }
    }

    #[cold]
    pub(super) fn recv_slow(&mut self, flags: i32) -> Result<Msg> {
        let timeout = if flags & DONTWAIT != 0 { Some(Duration::ZERO) } else { self.options.rcvtimeo };
        let deadline = timeout.map(|t| Instant::now() + t);
        loop {
            self.check_term()?;
            self.process_commands()?;
            match self.pattern.recv(&mut self.pipes) {
                Ok(m) => {
                    self.rcvmore = m.more();
                    self.reap();
                    return Ok(m);
                }
                Err(Error::Again) => {}
                Err(e) => return Err(e),
            }
            // Detaching a pipe can itself produce a message (STREAM's
            // disconnect notice): look again before sleeping.
            if !self.pipes.dead.is_empty() {
                self.reap();
                continue;
            }
            if flags & DONTWAIT == 0 && self.recv_direct(deadline)? {
                continue;
            }
            self.wait(deadline)?;
        }
    }

    /// A blocking receive on a round-trip socket waits on the connection
    /// its next message comes from and reads that message itself
    /// (`channel::direct_read`), when the engine left the connection's read
    /// side idle: no hand-off from the I/O thread. `Ok(true)`: look again
    /// (a message was queued ahead of the pipe); `Ok(false)`: wait as
    /// usual (the socket's descriptor fired, or the engine has the half).
    fn recv_direct(&mut self, deadline: Option<Instant>) -> Result<bool> {
        let Some((pipe, port)) = self.direct_target() else { return Ok(false) };
        let Some(held) = port.read.take() else { return Ok(false) };
        if self.direct_queued_before(pipe) {
            return Ok(true);
        }
        let mut rx = self.take_direct_buffers();
        let read =
            held.read_message(&mut rx.0, &mut rx.1, WokenBy { signaler: self.mailbox.signaler(), also: &[] }, deadline);
        match self.end_direct(pipe, rx, read)? {
            DirectWait::Queued => Ok(true),
            DirectWait::NotTaken | DirectWait::Woken => Ok(false),
            DirectWait::TimedOut => Err(Error::Again),
            DirectWait::Interrupted => Err(Error::Interrupted),
        }
    }

    /// The pipe a blocking receive may read the connection of itself (its
    /// slot and key), and that connection's port (`recv_direct`).
    pub(super) fn direct_target(&self) -> Option<(DirectPipe, Arc<DirectPort>)> {
        let id = self.pattern.direct_source(&self.pipes)?;
        let pipe = self.pipes.get(id);
        Some(((id, pipe.key), pipe.out.direct_port()?))
    }

    /// With the read side taken: whether the engine queued a message
    /// before it left the side (then the receive looks again).
    pub(super) fn direct_queued_before(&mut self, (id, _): DirectPipe) -> bool {
        if !self.pipes.get_mut(id).check_read() {
            return false;
        }
        self.pattern.read_activated(id, &mut self.pipes);
        true
    }

    /// The buffers a direct read fills (kept between receives; the
    /// message buffer is allocated at first use).
    pub(super) fn take_direct_buffers(&mut self) -> DirectBuffers {
        let mut rx = std::mem::take(&mut self.direct_rx);
        if rx.is_empty() {
            rx = vec![0; DIRECT_READ_MAX];
        }
        (rx, std::mem::take(&mut self.direct_frames))
    }

    /// After a direct read of `pipe`'s connection: queue the message read
    /// if the socket still has the pipe (a binding's wait runs without the
    /// socket, which may have dropped it meanwhile, and a message of a
    /// dropped pipe is dropped with it, as a queued one is). Not checked by
    /// the connection's port: a connection clears it as it closes, and a
    /// message read whole just before the peer left is the peer's last.
    /// Then keep the buffers, and say what the wait came to.
    pub(super) fn end_direct(
        &mut self,
        (id, key): DirectPipe,
        (rx, mut frames): DirectBuffers,
        read: std::result::Result<Option<crate::bufpool::Placed>, ReadEnd>,
    ) -> Result<DirectWait> {
        let out = match read {
            Ok(big) if self.pipes.contains(id) && self.pipes.get(id).key == key => {
                let msgs = frames
                    .iter()
                    .map(|f| Msg::from_slice(&rx[f.start..f.start + f.len]).with_more(f.more))
                    .chain(big.map(|b| Msg::from_bytes(b.freeze())));
                self.pipes.get_mut(id).push_direct(msgs);
                self.pattern.read_activated(id, &mut self.pipes);
                Ok(DirectWait::Queued)
            }
            Ok(_) => Ok(DirectWait::Woken),
            Err(ReadEnd::Woken | ReadEnd::HandedOver) => Ok(DirectWait::Woken),
            Err(ReadEnd::TimedOut) => Ok(DirectWait::TimedOut),
            Err(ReadEnd::Interrupted) => Ok(DirectWait::Interrupted),
        };
        frames.clear();
        self.direct_rx = rx;
        self.direct_frames = frames;
        out
    }

    /// CONFLATE: keep only the newest complete single-frame message.
    pub(super) fn recv_conflated(&mut self, flags: i32) -> Result<Msg> {
        let mut newest = match self.pattern.recv(&mut self.pipes) {
            Ok(m) => m,
            Err(Error::Again) => self.recv_slow(flags)?,
            Err(e) => return Err(e),
        };
        let mut from = self.pipes.last_read;
        loop {
            self.process_commands()?;
            match self.pattern.recv(&mut self.pipes) {
                Ok(m) => {
                    self.pipes.note_conflated(from);
                    newest = m;
                    from = self.pipes.last_read;
                }
                Err(_) => break,
            }
        }
        self.reap();
        self.rcvmore = newest.more();
        Ok(newest)
    }

    /// Sleep until something may have changed, or the deadline.
    pub(super) fn wait(&mut self, deadline: Option<Instant>) -> Result<()> {
        let timeout = match deadline {
            None => None,
            Some(d) => {
                let now = Instant::now();
                if now >= d {
                    return Err(Error::Again);
                }
                Some(d - now)
            }
        };
        match self.mailbox.signaler().wait(timeout) {
            Ok(_) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Err(Error::Interrupted),
            Err(e) => Err(Error::Io(e)),
        }
    }

    /// Handle everything other threads queued for this socket.
    pub(crate) fn process_commands(&mut self) -> Result<()> {
        let mut inbox = std::mem::take(&mut self.inbox);
        let drained = self.mailbox.take(&mut inbox);
        // A drained signal counts even without a command: on a thread-safe
        // socket it may be the re-arm another call made for the thread
        // asleep on the eventfd (`SharedWait::wake_sleepers`), and taking it
        // silently would leave that thread asleep until its timeout.
        self.commands_seen +=
            (inbox.commands.len() + inbox.read_activated.len() + inbox.write_activated.len()) as u64 + drained as u64;
        for cmd in inbox.commands.drain(..) {
            match cmd {
                SocketCommand::Attach(pipe) => self.attach(pipe),
                SocketCommand::Hiccup { key } => {
                    if let Some(&id) = self.key_to_pipe.get(&key) {
                        self.pattern.hiccuped(id, &mut self.pipes);
                    }
                }
                SocketCommand::EndpointClosed { endpoint } => {
                    // Monitors hear of it from the I/O thread; nothing to do here.
                    let _ = endpoint;
                }
            }
        }
        for id in inbox.read_activated.drain(..) {
            if self.pipes.contains(id) {
                self.pattern.read_activated(id, &mut self.pipes);
                if self.pipes.get(id).is_terminated() {
                    self.pipes.mark_dead(id);
                }
            }
        }
        for id in inbox.write_activated.drain(..) {
            if self.pipes.contains(id) {
                self.pipes.note_room(id);
                self.pattern.write_activated(id, &mut self.pipes);
                let p = self.pipes.get(id);
                if p.out.is_reader_gone() && p.is_terminated() {
                    self.pipes.mark_dead(id);
                }
            }
        }
        self.inbox = inbox;
        self.reap();
        self.check_term()
    }

    pub(crate) fn attach(&mut self, pipe: SocketPipe) {
        let key = pipe.key;
        let mut pipe = pipe;
        pipe.out.set_throttle(self.throttle.clone());
        let id = self.pipes.insert(pipe);
        let p = self.pipes.get(id);
        p.inn.reader_wake().set(Arc::new(PipeActivator { mailbox: self.mailbox.clone(), id, write: false }));
        p.out.writer_wake().set(Arc::new(PipeActivator { mailbox: self.mailbox.clone(), id, write: true }));
        self.key_to_pipe.insert(key, id);
        self.pattern.attach(id, &mut self.pipes);
        if let Some(rid) = self.pattern.take_generated_routing_id() {
            self.options.routing_id = rid.to_vec();
        }
        self.reap();
    }

    /// Detach the pipes patterns (or commands) found dead.
    pub(super) fn reap(&mut self) {
        while let Some(id) = self.pipes.dead.pop() {
            if !self.pipes.contains(id) {
                continue;
            }
            self.pattern.detach(id, &mut self.pipes);
            if let Some(p) = self.pipes.remove(id) {
                self.forget(p);
            }
        }
        self.pipes.after_send = self.pipes.conflating;
    }

    /// What a successful send leaves to do (`Pipes::after_send`): report
    /// what conflating writers replaced, detach dead pipes.
    #[cold]
    fn after_send(&mut self) {
        if self.pipes.conflating {
            self.pipes.note_conflated_sends();
        }
        self.reap();
    }

    pub(super) fn forget(&mut self, mut p: SocketPipe) {
        p.send_disconnect_msg();
        p.inn.reader_wake().clear();
        p.out.writer_wake().clear();
        self.key_to_pipe.remove(&p.key);
        // Dropping our ends tells the peer (engine or inproc socket).
    }

    pub(super) fn events(&mut self) -> i16 {
        if self.throttle_armed {
            // Readiness is the readers' progress as it is, as libzmq's
            // ZMQ_EVENTS takes every pending command.
            self.disarm_throttle();
        }
        let _ = self.process_commands();
        let mut ev = 0;
        let mut has_in = self.pattern.has_in(&mut self.pipes);
        if !has_in && !self.pipes.dead.is_empty() {
            // As in recv_slow: a detach may have queued a message.
            self.reap();
            has_in = self.pattern.has_in(&mut self.pipes);
        }
        if has_in {
            ev |= POLLIN;
        }
        if self.pattern.has_out(&mut self.pipes) {
            ev |= POLLOUT;
        }
        self.reap();
        ev
    }

    /// Readiness for `poll`; fails with ETERM once the context is terminating.
    pub(crate) fn poll_events(&mut self) -> Result<i16> {
        self.process_commands()?;
        Ok(self.events())
    }

    /// Close: stop accepting and reconnecting, hand queued messages to the
    /// engines (which linger), and leave the context.
    pub(super) fn close(&mut self) {
        if self.closed {
            return;
        }
        self.closed = true;
        // As libzmq: the listeners' CLOSED, then MONITOR_STOPPED. (The I/O
        // thread closes them just after; the monitor is gone by then.)
        for rec in &self.endpoints {
            if let Some(fd) = rec.listener_fd {
                self.monitor.emit(crate::monitor::monitor_event::CLOSED, fd as u32, &rec.resolved);
            }
        }
        self.monitor.stop();
        // Pipes on their way to us (and any that come later) are dropped, so
        // their engines or inproc peers see them close.
        self.mailbox.close();
        for rec in self.endpoints.drain(..) {
            if let Some(name) = &rec.inproc_name {
                inproc::unbind(&self.ctx.inproc, name, self.id);
            }
        }
        if let Some(io) = self.ctx.io_if_started() {
            io.socket_closed(self.id);
        }
        for id in self.pipes.ids() {
            self.pattern.detach(id, &mut self.pipes);
            if let Some(mut p) = self.pipes.remove(id) {
                p.send_disconnect_msg();
                p.inn.reader_wake().clear();
                p.out.writer_wake().clear();
            }
        }
        self.ctx.socket_closed(self.id);
    }
}

/// Which single-frame sends a thread writes itself. Large ones save a copy
/// and a hand-off, while small ones are worth more batched by the I/O
/// thread (many per `sendmsg`). A round-trip type (REQ, REP) has one
/// message in flight, so nothing batches behind a small one: written by
/// the caller it saves two thread hand-offs per round trip (C ABI ipc 4 KiB
/// p50 42 -> 25 us). Its large ones too, now that its receives read the
/// connection themselves (`channel::direct_read`): an I/O thread that no
/// longer reads the replies sleeps between requests, and waking it for
/// each large request cost more than the write (C ABI ipc 256 KiB p50 74
/// us through the I/O thread, 134 with only the reads direct, 54 with
/// both; bench/TRAILING.md section 5).
fn direct_sizes(round_trip: bool) -> std::ops::Range<usize> {
    if round_trip {
        0..usize::MAX
    } else {
        DIRECT_MIN..usize::MAX
    }
}
