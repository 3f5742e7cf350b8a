//! The socket's side of its connections: one `SocketPipe` per peer.

use crate::channel::direct::{DirectHead, DirectPort, DirectSlot, Take};
use crate::channel::peer::PeerProperties;
use crate::monitor::{drop_reason, monitor_event as ev};
use crate::msg::{Msg, FLAGS_UNCOUNTED};
use crate::pipe::{PipeReader, PipeWriter};
use crate::stats::{DropReason, Drops, Retired};
use bytes::Bytes;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// Index of a pipe in a socket's [`Pipes`] slab. Valid from `Pattern::attach`
/// until `Pattern::detach` returns; then it may be reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct PipeId(pub(crate) u32);

/// Identifies the bind/connect call a connection came from, so that
/// `unbind`/`disconnect` can close exactly its connections.
pub(crate) type EndpointId = u64;

static NEXT_KEY: AtomicU64 = AtomicU64::new(1);

/// A process-wide unique key for a pipe pair, used by I/O-thread commands
/// (hiccup) that must name a pipe without knowing the socket's slab layout.
/// Increasing: a connection's key is taken when it is made (connected, or
/// accepted), so keys also order a socket's connections (pipes-stats).
pub(crate) fn new_pipe_key() -> u64 {
    NEXT_KEY.fetch_add(1, Ordering::Relaxed)
}

/// The socket's writing end of a pipe: the pipe's own end, plus the bytes
/// written, which only the socket's thread touches. Counting here, not in
/// the pipe, keeps the I/O thread's ends (never read for statistics) free of
/// it. Reads go through `Deref`; every mutation is one of these methods.
pub(crate) struct SocketWriter {
    pipe: PipeWriter,
    /// Body bytes of the frames written through `write` (the transport's
    /// own frames go through `write_joining`, which leaves this alone),
    /// including frames that then never left: those the pipe counts apart
    /// (`WriterCounts::bytes_unsent`: a message abandoned half-written when
    /// the pipe is let go, one written as its peer vanished, frames not
    /// flushed yet), where they are dropped, so a send pays for no second
    /// count.
    bytes: u64,
    /// What the pipe counted of the frames the transport wrote on the
    /// socket's behalf (inproc's HELLO_MSG; anything in the pipe before it
    /// was wrapped too): whole messages, and body bytes taken back. They
    /// are in the pipe, where the HWM counts them as libzmq's does, but not
    /// the socket's traffic, as over tcp and ipc, where the engine sends
    /// HELLO_MSG without the pipe.
    joined: (u64, u64),
    /// The socket's throttled-send state (`THROTTLED_VIEW`); `None` until
    /// the socket attaches the pipe.
    throttle: Option<Arc<SendThrottle>>,
    /// When a throttled send last refreshed this end's view at a full one.
    view_refreshed: Option<Instant>,
    /// The connection's write half for large sends (tcp and ipc pipes).
    direct: Option<Arc<DirectSlot>>,
    /// Messages written to the connection without the pipe.
    direct_msgs: u64,
    /// A paced send waited for this connection in vain: no more waits
    /// until a message goes direct again (see `Core::send_direct`).
    direct_stalled: bool,
}

/// How often libzmq's sender looks at its readers' progress on a send that
/// does not wait (socket_base_t::process_commands: at most once per
/// `max_command_delay`, 3 million TSC ticks, about 1 ms).
pub(crate) const VIEW_REFRESH: Duration = Duration::from_millis(1);

/// A socket's sends with `THROTTLED_VIEW`, shared with its writing ends
/// (atomics only because ends move between threads before they attach:
/// only the socket's own thread touches them after).
#[derive(Default)]
pub(crate) struct SendThrottle {
    /// Set from a throttled send until the socket's next call that must see
    /// the readers as they are (`Core::begin_throttled_send`).
    pub(crate) active: AtomicBool,
    /// When the socket last looked at every reader's progress: nanoseconds
    /// after `clock_base()`, plus one (0: never).
    last_look: AtomicU64,
}

fn clock_base() -> Instant {
    static BASE: OnceLock<Instant> = OnceLock::new();
    *BASE.get_or_init(Instant::now)
}

impl SendThrottle {
    /// Whether libzmq's socket would look at its readers now: it has not
    /// for a millisecond or more.
    pub(crate) fn look_due(&self, now: Instant) -> bool {
        match self.last_look.load(Ordering::Relaxed) {
            0 => true,
            at => {
                now.saturating_duration_since(clock_base()).as_nanos() as u64 + 1 - at >= VIEW_REFRESH.as_nanos() as u64
            }
        }
    }

    pub(crate) fn looked(&self, now: Instant) {
        self.last_look.store(now.saturating_duration_since(clock_base()).as_nanos() as u64 + 1, Ordering::Relaxed);
    }
}

impl SocketWriter {
    pub(crate) fn new(pipe: PipeWriter) -> SocketWriter {
        let c = pipe.counts();
        SocketWriter {
            pipe,
            bytes: 0,
            joined: (c.msgs, c.bytes_unsent),
            throttle: None,
            view_refreshed: None,
            direct: None,
            direct_msgs: 0,
            direct_stalled: false,
        }
    }

    pub(crate) fn set_throttle(&mut self, throttle: Arc<SendThrottle>) {
        self.throttle = Some(throttle);
    }

    /// Share the connection's write half with an engine's end of the pipe.
    pub(crate) fn set_direct(&mut self, slot: Arc<DirectSlot>) {
        self.direct = Some(slot);
    }

    /// Write a message's last frame to the connection from `data` itself,
    /// after `head` (the frames the socket type puts before it), if the
    /// connection has nothing queued (`channel::direct`). A blocking send's:
    /// it may wait a moment for the rest of a frame the kernel took part
    /// of. `pace`: if the connection is busy, ask to be woken (a
    /// `write_activated`) when it is done.
    pub(crate) fn try_direct(&mut self, head: &mut DirectHead, data: &[u8], pace: bool) -> DirectSend {
        if self.pipe.is_conflating() {
            return DirectSend::No;
        }
        let Some(port) = self.direct.as_ref().and_then(|s| s.get()) else { return DirectSend::No };
        let mut held = match port.take(pace) {
            Take::Held(h) => h,
            Take::Busy if pace => return DirectSend::Pacing,
            Take::Busy | Take::Closed => return DirectSend::No,
        };
        // A message queued since the engine went idle goes first. Exact
        // here: the engine's last read happened-before it left the half.
        if self.pipe.unread() != 0 {
            if pace {
                held.hand_back_for_pacing();
                return DirectSend::Pacing;
            }
            return DirectSend::No;
        }
        head.push_last_header(data.len());
        if !held.write_frame(head.as_bytes(), data, true) {
            return DirectSend::No;
        }
        self.bytes += head.body_bytes() + data.len() as u64;
        self.direct_msgs += 1;
        self.direct_stalled = false;
        DirectSend::Sent
    }

    pub(crate) fn direct_stalled(&self) -> bool {
        self.direct_stalled
    }

    /// The connection's halves, if it shares them (`channel::direct`).
    pub(crate) fn direct_port(&self) -> Option<Arc<DirectPort>> {
        self.direct.as_ref().and_then(|s| s.get())
    }

    pub(crate) fn set_direct_stalled(&mut self) {
        self.direct_stalled = true;
    }

    /// Take the reader's latest published count into this end's view (the
    /// socket's throttled look).
    pub(crate) fn refresh_view(&mut self) {
        self.pipe.refresh_view();
    }

    /// Write and flush frames the transport sends on the socket's behalf as
    /// the pipe is joined (inproc's routing id and HELLO_MSG), leaving them
    /// out of the socket's counts.
    pub(crate) fn write_joining(&mut self, frames: impl IntoIterator<Item = Msg>) {
        let before = self.pipe.counts();
        for m in frames {
            self.pipe.write(m);
        }
        self.pipe.flush();
        let after = self.pipe.counts();
        self.joined.0 += after.msgs.saturating_sub(before.msgs);
        self.joined.1 += after.bytes_unsent.saturating_sub(before.bytes_unsent);
    }

    // Always inlined, as the pipe's own `write` is where it is called: out of
    // line, the message would be moved once more on every send.
    #[inline(always)]
    pub(crate) fn write(&mut self, msg: Msg) {
        self.bytes += msg.len() as u64;
        self.pipe.write(msg);
    }

    #[inline(always)]
    pub(crate) fn flush(&mut self) {
        self.pipe.flush();
    }

    pub(crate) fn rollback(&mut self) {
        self.pipe.rollback();
    }

    #[inline]
    pub(crate) fn check_write(&mut self) -> bool {
        match self.pipe.check_write_in_view() {
            Some(room) => room,
            None => self.check_write_past_view(),
        }
    }

    /// The writer's view says full. libzmq's sender learns of its readers'
    /// progress only from commands, which a send that does not wait takes
    /// at most once a millisecond; so such a send (`THROTTLED_VIEW`) sees
    /// its readers as of the socket's last look (`Core::begin_throttled_send`
    /// looks every millisecond, sampled), and a full view fails as libzmq's
    /// would (its test_hwm_pubsub counts on the EAGAIN) unless a look is due
    /// now.
    #[cold]
    fn check_write_past_view(&mut self) -> bool {
        if let Some(throttle) = self.throttle.as_ref().filter(|t| t.active.load(Ordering::Relaxed)) {
            let now = Instant::now();
            let due =
                throttle.look_due(now) && self.view_refreshed.is_none_or(|t| now.duration_since(t) >= VIEW_REFRESH);
            if !due {
                // The pattern deactivates the pipe on this refusal and only a
                // wake puts it back: if the reader has made room already it
                // will send none, so queue one here. The view itself stays as
                // it was, so a retry fails too until a look is due, as
                // libzmq's does until its next look.
                let stale = self.pipe.view();
                if self.pipe.check_write_refreshed() {
                    self.pipe.set_view(stale);
                    self.pipe.writer_wake().wake();
                }
                return false;
            }
            self.view_refreshed = Some(now);
        }
        self.pipe.check_write_refreshed()
    }

    pub(crate) fn set_hwm(&mut self, hwm: usize) {
        self.pipe.set_hwm(hwm);
    }

    /// What this end wrote, for statistics.
    pub(crate) fn counts(&self) -> EndCounts {
        let c = self.pipe.counts();
        let (joined_msgs, joined_unsent) = self.joined;
        // Neither count goes below what was joined (a rollback returns the
        // pipe's message count to its last flush, and the joining frames
        // were flushed, or taken back and counted apart, at once), nor the
        // socket's bytes below what it wrote and never sent: saturating only
        // so that a broken invariant cannot panic here.
        let unsent = c.bytes_unsent.saturating_sub(joined_unsent);
        EndCounts {
            msgs: c.msgs.saturating_sub(joined_msgs) + self.direct_msgs,
            bytes: self.bytes.saturating_sub(unsent),
            conflated: c.conflated,
            direct: self.direct_msgs,
        }
    }
}

impl std::ops::Deref for SocketWriter {
    type Target = PipeWriter;
    fn deref(&self) -> &PipeWriter {
        &self.pipe
    }
}

/// What became of a large send offered to the connection (`SocketWriter::try_direct`).
pub(crate) enum DirectSend {
    /// Written (or begun, the engine finishing it).
    Sent,
    /// The connection is writing earlier messages; the socket is woken
    /// when it is done.
    Pacing,
    /// Not sent: it goes through the pipe.
    No,
}

/// A socket-side pipe end's counts (see `SocketWriter::counts`,
/// `SocketPipe::counts_in`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct EndCounts {
    /// Whole messages.
    pub(crate) msgs: u64,
    pub(crate) bytes: u64,
    /// CONFLATE (writer only): messages replaced before the reader took them.
    pub(crate) conflated: u64,
    /// Writer only: of `msgs`, those written to the connection directly.
    pub(crate) direct: u64,
}

/// One peer as the socket sees it: frames out, frames in.
pub(crate) struct SocketPipe {
    pub(crate) out: SocketWriter,
    pub(crate) inn: PipeReader,
    /// Body bytes of the frames taken off `inn` (bookkeeping frames
    /// excluded); only the socket's thread touches it.
    bytes_in: u64,
    /// The peer's routing id, learnt from the ROUTING_ID frame at the head of `inn`.
    pub(crate) peer_routing_id: Option<Bytes>,
    /// The peer's connection properties, from the PEER_PROPERTIES frame an
    /// engine writes after each handshake.
    pub(crate) peer_properties: Option<Arc<PeerProperties>>,
    /// ZMQ_CONNECT_ROUTING_ID: for a pipe made by `connect`, the id a ROUTER
    /// socket uses for this peer instead of the one the peer announces.
    pub(crate) connect_routing_id: Option<Bytes>,
    pub(crate) endpoint: EndpointId,
    pub(crate) key: u64,
    /// inproc only: (the peer's RCVHWM, this socket's RCVHWM) when the pipe
    /// was made. libzmq adds them to this side's SNDHWM and RCVHWM when
    /// either changes later.
    pub(crate) hwm_boost: Option<(usize, usize)>,
    /// libzmq's `subscribe_to_all`: a udp:// pipe of a RADIO takes every
    /// group, a pgm/epgm/norm pipe of a PUB/XPUB every message (neither
    /// can carry joins or subscriptions).
    pub(crate) all_groups: bool,
    /// A frame taken off `inn` by `check_read` and not yet handed out.
    head: Option<Msg>,
    /// A message the socket's thread read from the connection itself
    /// (`channel::direct_read`), ahead of anything the pipe holds.
    front: VecDeque<Msg>,
    /// Of the messages read, those read that way.
    direct_in: u64,
    /// DISCONNECT_MSG over inproc (draft): on a connecter's pipe, the
    /// binder's message, filled in once the binder is known. This side
    /// writes it as its last message when it drops the pipe.
    pub(crate) disconnect_msg: Option<Arc<OnceLock<Vec<u8>>>>,
    /// Drops accounted to this peer (see `Pipes::note_*`).
    pub(crate) drops: Drops,
    /// The connection's (local, remote) names as version-2 monitor events
    /// give them, when the I/O thread knew them as it made the pipe.
    pub(crate) names: Option<Box<(String, String)>>,
    /// Send-side CONFLATE: the writer's replacements reported so far.
    conflated_seen: u64,
}

impl SocketPipe {
    pub(crate) fn new(out: PipeWriter, mut inn: PipeReader, endpoint: EndpointId, key: u64) -> SocketPipe {
        // The socket's end is read by an application thread, whose sleep
        // costs its writer a wake-up: it waits a moment when it runs dry,
        // where the busy-poll rule lets threads spin at all (not with one
        // CPU, nor with OXMQ_BUSY_POLL_US=0).
        inn.set_dry_wait(!crate::wait::busy_poll_cap().is_zero());
        SocketPipe {
            out: SocketWriter::new(out),
            inn,
            bytes_in: 0,
            peer_routing_id: None,
            peer_properties: None,
            connect_routing_id: None,
            endpoint,
            key,
            hwm_boost: None,
            all_groups: false,
            head: None,
            front: VecDeque::new(),
            direct_in: 0,
            disconnect_msg: None,
            drops: Drops::default(),
            names: None,
            conflated_seen: 0,
        }
    }

    /// Messages queued from the peer and not read yet (a frame taken off
    /// `inn` ahead of time included).
    pub(crate) fn queued_in(&self) -> u64 {
        let head = self.head.as_ref().map_or(0, |m| u64::from(!m.more()));
        let front = self.front.iter().filter(|m| !m.more()).count() as u64;
        self.inn.queued() + head + front
    }

    /// What this side read, for statistics (`conflated` stays 0).
    pub(crate) fn counts_in(&self) -> EndCounts {
        EndCounts {
            msgs: self.inn.msgs_read() + self.direct_in,
            bytes: self.bytes_in,
            conflated: 0,
            direct: self.direct_in,
        }
    }

    /// This side lets the pipe go: as libzmq's inproc pipe does, drop a
    /// half-written message and leave the peer its DISCONNECT_MSG, if any
    /// (past the HWM, like libzmq's).
    pub(crate) fn send_disconnect_msg(&mut self) {
        if let Some(m) = self.disconnect_msg.take().as_deref().and_then(OnceLock::get) {
            self.out.rollback();
            self.out.write(Msg::from_slice(m));
            self.out.flush();
        }
    }

    /// Read the next user-visible frame, absorbing routing-id frames on the way.
    /// Subscription frames are returned (PUB/XPUB consume them).
    #[inline]
    pub(crate) fn read(&mut self) -> Option<Msg> {
        if let Some(msg) = self.head.take() {
            return Some(msg);
        }
        if !self.front.is_empty() {
            return self.front.pop_front();
        }
        loop {
            let msg = self.inn.read()?;
            if msg.flags() & FLAGS_UNCOUNTED != 0 {
                self.absorb(msg);
                continue;
            }
            self.bytes_in += msg.len() as u64;
            return Some(msg);
        }
    }

    /// Whether a frame can be read now (marks the reader asleep when not).
    /// Absorbs a routing-id frame at the head, so ROUTER can learn a peer's id
    /// before any data from it arrives.
    pub(crate) fn check_read(&mut self) -> bool {
        if self.head.is_some() || !self.front.is_empty() {
            return true;
        }
        loop {
            if !self.inn.check_read() {
                return false;
            }
            // A routing-id frame is only ever at the head of a message.
            match self.inn.read() {
                Some(msg) if msg.flags() & FLAGS_UNCOUNTED != 0 => self.absorb(msg),
                Some(msg) => {
                    self.bytes_in += msg.len() as u64;
                    self.head = Some(msg);
                    return true;
                }
                None => return false,
            }
        }
    }

    /// Keep what a bookkeeping frame says about the peer.
    #[cold]
    fn absorb(&mut self, msg: Msg) {
        if msg.is_routing_id() {
            self.peer_routing_id = Some(msg.into_bytes());
        } else {
            self.peer_properties = PeerProperties::decode(msg.as_slice()).map(Arc::new);
        }
    }

    /// The peer has gone and everything it sent has been read.
    pub(crate) fn is_terminated(&self) -> bool {
        self.head.is_none() && self.front.is_empty() && self.inn.is_terminated()
    }

    /// Queue the frames of one message the socket's thread read from the
    /// connection itself, while the pipe was empty and the engine could not
    /// write to it (`channel::direct_read`): they come before anything the
    /// engine queues after.
    pub(crate) fn push_direct(&mut self, frames: impl Iterator<Item = Msg>) {
        for m in frames {
            self.bytes_in += m.len() as u64;
            self.front.push_back(m);
        }
        self.direct_in += 1;
    }
}

/// The I/O thread's ends of a pipe pair (an engine's, or a udp or multicast
/// endpoint's).
pub(crate) struct EnginePipe {
    /// Frames from the socket, to be written to the peer.
    pub(crate) out: PipeReader,
    /// Frames from the peer, to the socket.
    pub(crate) inn: PipeWriter,
    pub(crate) key: u64,
    /// Where the engine puts its connection's write half for the socket's
    /// large sends (`channel::direct`).
    pub(crate) direct: Arc<DirectSlot>,
}

impl EnginePipe {
    pub(crate) fn new(mut out: PipeReader, inn: PipeWriter, key: u64) -> EnginePipe {
        // libzmq's session acknowledges the socket's messages at multiples
        // of the LWM only, so a connection's writer sees libzmq's counts
        // (see `PipeReader::set_acks_at_lwm`).
        out.set_acks_at_lwm(true);
        EnginePipe { out, inn, key, direct: Arc::default() }
    }
}

/// The pipes of one socket, in a slab so patterns can hold cheap `PipeId`s.
#[derive(Default)]
pub(crate) struct Pipes {
    slots: Vec<Option<SocketPipe>>,
    free: Vec<u32>,
    /// Pipes a pattern found terminated; the socket detaches them after the call.
    pub(crate) dead: Vec<PipeId>,
    /// Work for the socket after a send: `dead` has pipes, or a conflating
    /// writer is attached (its replacements are reported at the send that
    /// made them). One flag, so that a send tests one thing either way.
    pub(crate) after_send: bool,
    /// A CONFLATE writer has been attached (send-side CONFLATE).
    pub(crate) conflating: bool,
    /// The pipe the last frame handed to the user came from (for its peer's properties).
    pub(crate) last_read: Option<PipeId>,
    /// Where drops and full pipes are reported (`events.rs`).
    pub(crate) events: super::events::SocketEvents,
    /// Pipes reported full and not yet writable again, so that a pipe
    /// a pattern keeps finding full (ROUTER) is reported once per filling.
    reported_full: std::collections::HashSet<PipeId>,
    /// Every drop the socket's thread accounted (`note_*`), peers gone included.
    pub(crate) drops: Drops,
    /// The traffic of pipes removed so far (their ends counted it).
    pub(crate) retired: Retired,
}

impl Pipes {
    pub(crate) fn insert(&mut self, pipe: SocketPipe) -> PipeId {
        if pipe.out.is_conflating() {
            self.conflating = true;
            self.after_send = true;
        }
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some(pipe);
                PipeId(i)
            }
            None => {
                self.slots.push(Some(pipe));
                PipeId(self.slots.len() as u32 - 1)
            }
        }
    }

    /// The connection properties of the peer the last frame handed to the user came from.
    pub(crate) fn last_read_properties(&self) -> Option<&Arc<PeerProperties>> {
        let id = self.last_read.filter(|id| self.contains(*id))?;
        self.get(id).peer_properties.as_ref()
    }

    pub(crate) fn remove(&mut self, id: PipeId) -> Option<SocketPipe> {
        if self.last_read == Some(id) {
            self.last_read = None;
        }
        self.note_room(id);
        let p = self.slots.get_mut(id.0 as usize)?.take();
        if let Some(p) = &p {
            self.free.push(id.0);
            let (w, r) = (p.out.counts(), p.counts_in());
            let t = &mut self.retired;
            t.msgs_out += w.msgs;
            t.bytes_out += w.bytes;
            t.msgs_out_direct += w.direct;
            t.msgs_in_direct += r.direct;
            t.msgs_in += r.msgs;
            t.bytes_in += r.bytes;
        }
        p
    }

    #[inline]
    pub(crate) fn get(&self, id: PipeId) -> &SocketPipe {
        self.slots[id.0 as usize].as_ref().expect("pattern used a detached pipe")
    }

    #[inline]
    pub(crate) fn get_mut(&mut self, id: PipeId) -> &mut SocketPipe {
        self.slots[id.0 as usize].as_mut().expect("pattern used a detached pipe")
    }

    /// The pipe, when there is exactly one.
    pub(crate) fn only(&self) -> Option<PipeId> {
        if self.slots.len() - self.free.len() != 1 {
            return None;
        }
        self.slots.iter().position(Option::is_some).map(|i| PipeId(i as u32))
    }

    pub(crate) fn contains(&self, id: PipeId) -> bool {
        matches!(self.slots.get(id.0 as usize), Some(Some(_)))
    }

    pub(crate) fn ids(&self) -> Vec<PipeId> {
        self.slots.iter().enumerate().filter(|(_, p)| p.is_some()).map(|(i, _)| PipeId(i as u32)).collect()
    }

    /// Record that a pattern saw `id` terminate (deduplicated).
    pub(crate) fn mark_dead(&mut self, id: PipeId) {
        if !self.dead.contains(&id) {
            self.dead.push(id);
        }
        self.after_send = true;
    }
}

// Drop and full-pipe reports (see `events.rs`): one place per kind, where
// each drop is also counted (the socket's statistics, `crate::stats`).
impl Pipes {
    /// [`super::events::SocketEvents::dropped`] for a message meant for pipe `id`.
    #[inline]
    pub(crate) fn note_dropped(&mut self, reason: u64, id: PipeId) {
        self.count_drop(reason, Some(id));
        if self.events.wants(ev::MSG_DROPPED).is_some() {
            self.events.dropped(reason, self.peer_id(id));
        }
    }

    /// A ROUTER message for `routing_id` dropped: no pipe has that id
    /// (`peer` is `None`), or pipe `peer` cannot take it.
    #[cold]
    pub(crate) fn note_unrouted(&mut self, reason: u64, peer: Option<PipeId>, routing_id: &[u8]) {
        self.count_drop(reason, peer);
        self.events.dropped(reason, Some(routing_id));
    }

    /// CONFLATE (receive side): a newer message replaced one from pipe
    /// `from` (if it is still there; else no routing id).
    #[inline]
    pub(crate) fn note_conflated(&mut self, from: Option<PipeId>) {
        let from = from.filter(|&id| self.contains(id));
        self.count_drop(drop_reason::CONFLATE, from);
        if self.events.wants(ev::MSG_DROPPED).is_some() {
            self.events.dropped(drop_reason::CONFLATE, from.and_then(|id| self.peer_id(id)));
        }
    }

    /// CONFLATE (send side): report the messages the socket's conflating
    /// writers replaced before their readers took them, since last asked.
    #[cold]
    pub(crate) fn note_conflated_sends(&mut self) {
        for i in 0..self.slots.len() {
            let Some(p) = self.slots[i].as_mut() else { continue };
            let replaced = p.out.counts().conflated;
            let new = replaced - p.conflated_seen;
            p.conflated_seen = replaced;
            for _ in 0..new {
                self.note_dropped(drop_reason::CONFLATE, PipeId(i as u32));
            }
        }
    }

    /// The one place a drop the socket's thread sees is counted.
    #[inline]
    fn count_drop(&mut self, reason: u64, peer: Option<PipeId>) {
        let reason = match reason {
            drop_reason::HWM => DropReason::Hwm,
            drop_reason::NO_ROUTE => DropReason::NoRoute,
            drop_reason::CONFLATE => DropReason::Conflate,
            drop_reason::OVERSIZE => DropReason::Oversize,
            _ => return,
        };
        *self.drops.slot(reason) += 1;
        if let Some(id) = peer {
            *self.get_mut(id).drops.slot(reason) += 1;
        }
    }

    /// [`super::events::SocketEvents::hwm_reached`] for pipe `id`, once until it has room again.
    #[inline]
    pub(crate) fn note_full(&mut self, id: PipeId) {
        if self.events.wants(ev::HWM_REACHED).is_some() && self.reported_full.insert(id) {
            let p = self.get(id);
            self.events.hwm_reached(p.out.hwm() as u64, self.peer_id(id));
        }
    }

    /// Pipe `id` has room again (or is gone): its next filling is reported.
    #[inline]
    pub(crate) fn note_room(&mut self, id: PipeId) {
        if !self.reported_full.is_empty() {
            self.reported_full.remove(&id);
        }
    }

    /// The routing id of pipe `id`'s peer, where the socket knows one.
    #[cold]
    pub(crate) fn peer_id(&self, id: PipeId) -> Option<&[u8]> {
        let p = self.get(id);
        // The id a ROUTER routes by, else the one the peer announced in READY.
        let announced = || p.peer_properties.as_deref().and_then(|props| props.get("Identity"));
        p.connect_routing_id.as_deref().or(p.peer_routing_id.as_deref()).or_else(announced)
    }
}
