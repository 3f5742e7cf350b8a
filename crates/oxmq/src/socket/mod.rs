//! The public `Socket`: the caller's thread drives its pattern directly; other
//! threads reach it only through its [`Mailbox`].
//!
//! Hot path of a send or receive: one `RefCell` borrow, one relaxed check of
//! the mailbox flag, the pattern's pipe operation. The mailbox (a mutex and an
//! eventfd) is visited only when the pattern cannot proceed, or when another
//! thread has queued something.

mod cell;
mod endpoints;
// zmq_socket_monitor's PAIR, the sink of the socket's monitor slot.
mod monitor;
use endpoints::EndpointRecord;
pub(crate) mod options_codec;
// Draft thread-safe socket types: several threads at once.
mod shared;
pub use shared::{SharedWaiter, ThreadSafeSocket};

use crate::channel::mailbox::{Inbox, Mailbox, PipeActivator, SocketCommand};
use crate::channel::peer::PeerProperties;
use crate::channel::pipes::{new_pipe_key, EndpointId, PipeId, Pipes, SocketPipe};
use crate::ctx::{Context, CtxInner};
use crate::error::{Error, Result};
use crate::io::{EnginePipe, SocketLink};
use crate::monitor::Monitor;
use crate::msg::Msg;
use crate::option_table::{GetSize, Kind};
use crate::options::{opt, Options, POLLIN, POLLOUT};
use crate::patterns::{new_pattern, Pattern};
use crate::pipe::{pipe, pipe_conflate, WakeSlot};
use crate::transport::endpoint::{parse_endpoint, term_transport, Endpoint};
use crate::transport::inproc;
use cell::CoreCell;
use options_codec::{decode_int, encode_int, get_generic, set_generic, OptionValue};
use oxmq_proto::SocketType;
use std::collections::HashMap;
use std::mem::ManuallyDrop;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Send/receive flag: do not block (libzmq `ZMQ_DONTWAIT`).
pub const DONTWAIT: i32 = 1;
/// Send flag: more frames of this message follow (libzmq `ZMQ_SNDMORE`).
pub const SNDMORE: i32 = 2;

/// A ZeroMQ socket. Not `Sync`: like libzmq, one thread uses it at a time;
/// it may move between threads. Dropping it closes it (honouring LINGER).
pub struct Socket {
    /// Dropped by `Drop for Socket` (never, in a fork child: see there).
    core: ManuallyDrop<CoreCell<Core>>,
    kind: SocketType,
    /// Thread-safe types (SERVER, CLIENT, ...): where blocked callers sleep
    /// without holding the socket.
    shared: Option<Arc<shared::SharedWait>>,
    /// Not `Sync` for Rust callers (libzmq's one-thread-at-a-time rule);
    /// `CoreCell` keeps raw-handle callers (C, Python) sound regardless.
    _not_sync: std::marker::PhantomData<std::cell::Cell<()>>,
}

pub(crate) struct Core {
    pub(crate) id: u64,
    kind: SocketType,
    ctx: Arc<CtxInner>,
    mailbox: Arc<Mailbox>,
    pattern: Box<dyn Pattern>,
    pipes: Pipes,
    options: Options,
    linger_ms: Arc<AtomicI64>,
    inbox: Inbox,
    key_to_pipe: HashMap<u64, PipeId>,
    endpoints: Vec<EndpointRecord>,
    next_endpoint: EndpointId,
    last_endpoint: String,
    rcvmore: bool,
    closed: bool,
    /// Commands and activations handled so far (thread-safe sockets wake
    /// their other waiters when a call consumed some).
    commands_seen: u64,
    /// Monitor slot, shared with this socket's listeners and sessions.
    monitor: Arc<Monitor>,
    // ROUTER_RAW: a ROUTER whose new connections are raw, as STREAM's.
    router_raw: bool,
    // RECONNECT_STOP_AFTER_DISCONNECT: set by the first successful disconnect.
    disconnected: Arc<AtomicBool>,
}

impl Socket {
    pub(crate) fn new(ctx: &Context, kind: SocketType, id: u64, mailbox: Arc<Mailbox>, options: Options) -> Socket {
        let pattern = new_pattern(kind, &options);
        let monitor = Monitor::new();
        let linger_ms = Arc::new(AtomicI64::new(crate::options::opt_to_ms(options.linger)));
        Socket {
            kind,
            shared: kind.is_thread_safe().then(|| Arc::new(shared::SharedWait::new(mailbox.clone()))),
            _not_sync: std::marker::PhantomData,
            core: ManuallyDrop::new(CoreCell::new(Core {
                id,
                kind,
                ctx: ctx.inner.clone(),
                mailbox,
                pattern,
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
                monitor,
                router_raw: false,
                disconnected: Default::default(),
            })),
        }
    }

    #[inline]
    fn core(&self) -> Result<shared::CoreRef<'_>> {
        let core = self.any_core()?;
        if core.closed {
            return Err(Error::NotSocket);
        }
        Ok(core)
    }

    /// The state, even of a closed socket (thread-safe types wait their turn).
    fn any_core(&self) -> Result<shared::CoreRef<'_>> {
        Ok(match &self.shared {
            Some(shared) => shared::CoreRef::shared(self.core.lock_blocking(), shared),
            None => shared::CoreRef::plain(self.core.lock()?),
        })
    }

    /// The socket type.
    pub fn socket_type(&self) -> SocketType {
        self.kind
    }

    /// Draft DISH: receive the messages of `group` (libzmq `zmq_join`).
    /// EINVAL when already joined or longer than 255 bytes; ENOTSUP on
    /// other socket types.
    pub fn join(&self, group: &[u8]) -> Result<()> {
        self.core()?.join_leave(group, true)
    }

    /// Draft DISH: stop receiving `group` (libzmq `zmq_leave`). EINVAL when
    /// not joined.
    pub fn leave(&self, group: &[u8]) -> Result<()> {
        self.core()?.join_leave(group, false)
    }

    /// Accept connections on `endpoint` (`tcp://`, `ipc://`, `inproc://`).
    pub fn bind(&self, endpoint: &str) -> Result<()> {
        self.core()?.bind(endpoint)
    }

    /// Connect to `endpoint`; the connection is made (and remade) in the background.
    pub fn connect(&self, endpoint: &str) -> Result<()> {
        self.core()?.connect(endpoint)
    }

    /// Stop accepting on an endpoint given to `bind` (or its resolved LAST_ENDPOINT form).
    /// As in libzmq 4.3.5, no name finds a udp bind (ENOENT): closing frees it.
    pub fn unbind(&self, endpoint: &str) -> Result<()> {
        self.core()?.remove_endpoint(endpoint, true)
    }

    /// Drop the connection made by `connect(endpoint)`.
    pub fn disconnect(&self, endpoint: &str) -> Result<()> {
        self.core()?.remove_endpoint(endpoint, false)
    }

    /// Send one frame; `flags` may hold [`DONTWAIT`] and [`SNDMORE`].
    #[inline]
    pub fn send(&self, msg: impl Into<Msg>, flags: i32) -> Result<()> {
        if let Some(shared) = &self.shared {
            return self.send_shared(shared, msg.into(), flags);
        }
        self.core()?.send(msg.into(), flags)
    }

    /// Send one frame, handing it back with the error when the send fails
    /// (as libzmq's `zmq_msg_send` leaves a failed message with its caller).
    /// A caller that must keep its message on failure needs no copy of it.
    #[inline]
    pub fn send_or_keep(&self, msg: Msg, flags: i32) -> std::result::Result<(), (Msg, Error)> {
        if let Some(shared) = &self.shared {
            return self.send_shared_or_keep(shared, msg, flags);
        }
        match self.core() {
            Ok(mut core) => core.send_or_keep(msg, flags),
            Err(e) => Err((msg, e)),
        }
    }

    /// Send the frame in `pending`, leaving it there when the send fails:
    /// a caller that retries (a binding's non-blocking try, then its own
    /// wait) needs no copy per try. `Ok` with nothing to send when an
    /// earlier try already sent it.
    #[inline]
    pub fn send_from(&self, pending: &mut Option<Msg>, flags: i32) -> Result<()> {
        let Some(msg) = pending.take() else {
            return Ok(());
        };
        self.send_or_keep(msg, flags).map_err(|(msg, e)| {
            *pending = Some(msg);
            e
        })
    }

    /// Send all frames of a message.
    pub fn send_multipart<I, M>(&self, parts: I, flags: i32) -> Result<()>
    where
        I: IntoIterator<Item = M>,
        M: Into<Msg>,
    {
        if self.shared.is_some() {
            // No multipart on these types: the second part fails with EINVAL.
            let mut iter = parts.into_iter().peekable();
            while let Some(part) = iter.next() {
                let more = if iter.peek().is_some() { SNDMORE } else { 0 };
                self.send(part, (flags & DONTWAIT) | more)?;
            }
            return Ok(());
        }
        let mut core = self.core()?;
        let mut iter = parts.into_iter().peekable();
        while let Some(part) = iter.next() {
            let more = if iter.peek().is_some() { SNDMORE } else { 0 };
            core.send(part.into(), (flags & DONTWAIT) | more)?;
        }
        Ok(())
    }

    /// Receive one frame.
    #[inline]
    pub fn recv(&self, flags: i32) -> Result<Msg> {
        if let Some(shared) = &self.shared {
            return self.recv_shared(shared, flags);
        }
        self.core()?.recv(flags)
    }

    /// Receive one frame as a vector.
    pub fn recv_bytes(&self, flags: i32) -> Result<Vec<u8>> {
        Ok(self.recv(flags)?.to_vec())
    }

    /// Receive all frames of one message.
    pub fn recv_multipart(&self, flags: i32) -> Result<Vec<Msg>> {
        if self.shared.is_some() {
            return Ok(vec![self.recv(flags)?]);
        }
        let mut core = self.core()?;
        let first = core.recv(flags)?;
        let mut more = first.more();
        let mut parts = vec![first];
        while more {
            // The rest of a message is already queued: it arrived atomically.
            let m = core.recv(flags & !DONTWAIT)?;
            more = m.more();
            parts.push(m);
        }
        Ok(parts)
    }

    /// Set an integer option by libzmq number.
    pub fn set_option_int(&self, option: i32, value: i64) -> Result<()> {
        if crate::option_table::takes_bytes(option) {
            return Err(Error::Invalid("this option takes a byte string"));
        }
        let bytes = encode_int(option, value)?;
        self.core()?.set_option(option, &bytes, false)
    }

    /// Set an option by libzmq number from its raw bytes (as `zmq_setsockopt`).
    pub fn set_option_bytes(&self, option: i32, value: &[u8]) -> Result<()> {
        self.core()?.set_option(option, value, false)
    }

    /// `zmq_setsockopt(s, option, NULL, 0)`: clears a string option where
    /// libzmq allows it (PLAIN_USERNAME/PASSWORD back to NULL, ZAP_DOMAIN), even
    /// where an empty non-NULL value is refused.
    pub fn clear_option(&self, option: i32) -> Result<()> {
        self.core()?.set_option(option, &[], true)
    }

    /// Read an integer option.
    pub fn get_option_int(&self, option: i32) -> Result<i64> {
        match self.get_option(option)? {
            OptionValue::Int(v) => Ok(v),
            OptionValue::Bytes(_) => Err(Error::Invalid("this option is a byte string")),
        }
    }

    /// Read a byte-string option (integer options come back as native-endian bytes).
    pub fn get_option_bytes(&self, option: i32) -> Result<Vec<u8>> {
        match self.get_option(option)? {
            OptionValue::Bytes(b) => Ok(b),
            OptionValue::Int(v) => encode_int(option, v),
        }
    }

    /// Read an option by libzmq number.
    pub fn get_option(&self, option: i32) -> Result<OptionValue> {
        self.core()?.get_option(option)
    }

    /// The endpoint last bound or connected, resolved (e.g. the ephemeral port).
    pub fn last_endpoint(&self) -> Result<String> {
        Ok(self.core()?.last_endpoint.clone())
    }

    /// Whether the last frame received has more frames after it.
    pub fn rcvmore(&self) -> bool {
        self.any_core().map(|c| c.rcvmore).unwrap_or(false)
    }

    /// A connection property of the peer that sent the last frame received
    /// (libzmq `zmq_msg_gets`): "Socket-Type", "Identity", "Peer-Address", or
    /// any other property it announced in READY. `None` for inproc peers and
    /// unknown names. Names compare case-insensitively, as ZMTP says.
    pub fn peer_property(&self, name: &str) -> Option<Vec<u8>> {
        self.peer_properties()?.get(name).map(<[u8]>::to_vec)
    }

    /// All connection properties of the peer that sent the last frame received.
    pub fn peer_properties(&self) -> Option<Arc<PeerProperties>> {
        self.any_core().ok()?.pipes.last_read_properties().cloned()
    }

    /// Receive one frame and leave in `props` the connection properties of
    /// the peer that sent it, under one lock. The C ABI keeps them on every
    /// `zmq_msg_t` for `zmq_msg_gets`; `props` is left alone when it already
    /// holds them, so a stream of frames from one peer costs no refcount
    /// traffic. On error `props` is unchanged.
    pub fn recv_with_properties(&self, flags: i32, props: &mut Option<Arc<PeerProperties>>) -> Result<Msg> {
        if let Some(shared) = &self.shared {
            let msg = self.recv_shared(shared, flags)?;
            *props = self.peer_properties();
            return Ok(msg);
        }
        let mut core = self.core()?;
        let msg = core.recv(flags)?;
        let now = core.pipes.last_read_properties();
        let same = match (now, props.as_ref()) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        if !same {
            *props = now.cloned();
        }
        Ok(msg)
    }

    /// `POLLIN | POLLOUT` readiness now (libzmq `ZMQ_EVENTS`).
    pub fn events(&self) -> Result<i16> {
        Ok(self.core()?.events())
    }

    /// The readiness descriptor (libzmq `ZMQ_FD`).
    ///
    /// Contract (the same as libzmq's): the descriptor becomes readable when
    /// the socket's state *may* have changed since the socket last ran out of
    /// work: a message arrived on a connection it had drained, room appeared
    /// after a send hit the HWM, or a peer came or went. It is edge-like: it
    /// is cleared by any `events()`, `send`, `recv` or `poll` that finds no
    /// work. So after the descriptor fires, read `events()` and receive until
    /// EAGAIN (or send until EAGAIN) before waiting on it again. Wake-ups may
    /// be spurious; none is lost if the caller follows the rule above.
    ///
    /// Thread-safe socket types have none (EINVAL), as in libzmq: poll them
    /// with [`crate::poll`] (the C ABI's `zmq_poller_*`).
    pub fn fd(&self) -> Result<RawFd> {
        if self.shared.is_some() {
            return Err(Error::Invalid("thread-safe sockets have no FD"));
        }
        Ok(self.core()?.mailbox.signaler().raw_fd())
    }

    /// Publish this socket's events (libzmq `zmq_socket_monitor`) on a PAIR
    /// socket bound at the `inproc://` `endpoint`; connect a PAIR to it to
    /// read them. Each event is two frames: 6 bytes (`u16` event id from
    /// [`crate::monitor_event`], `u32` value, native endianness) and the
    /// endpoint string. `events` is a mask of event ids (`monitor_event::ALL`
    /// for all). `None` stops monitoring; a new endpoint replaces the current
    /// monitor. Either way the old monitor gets MONITOR_STOPPED (if in its
    /// mask) before it closes; closing the socket does the same.
    ///
    /// Events are sent without blocking: if the reader does not keep up
    /// (or has not connected yet) they are dropped. Non-inproc endpoints fail
    /// with EPROTONOSUPPORT.
    pub fn monitor(&self, endpoint: Option<&str>, events: u32) -> Result<()> {
        let core = self.core()?;
        let (ctx, monitor) = (core.ctx.clone(), core.monitor.clone());
        // Not borrowed while the monitor PAIR is created and bound.
        drop(core);
        monitor::start(&monitor, &ctx, endpoint, u64::from(events), 1, SocketType::Pair)
    }

    /// Close the socket (the same as dropping it): queued messages are
    /// handed to the I/O thread, which keeps sending them for up to LINGER.
    pub fn close(self) {}
}

impl Drop for Socket {
    fn drop(&mut self) {
        let core = self.core.get_mut();
        if core.ctx.is_forked_copy() {
            // A fork child's copy of its parent's socket: closing it would
            // signal eventfds and an I/O thread that belong to the parent,
            // and its pipes wake them when dropped. Left as it is, as
            // libzmq's child leaves it.
            return;
        }
        core.close();
        // SAFETY: dropped once, here, and `self.core` is not used after.
        unsafe { ManuallyDrop::drop(&mut self.core) };
    }
}

impl Core {
    /// Draft RADIO/DISH.
    fn join_leave(&mut self, group: &[u8], join: bool) -> Result<()> {
        self.check_term()?;
        self.process_commands()?;
        let r =
            if join { self.pattern.join(group, &mut self.pipes) } else { self.pattern.leave(group, &mut self.pipes) };
        self.reap();
        r
    }

    #[inline]
    fn check_term(&self) -> Result<()> {
        if self.ctx.is_terminated() {
            Err(Error::Terminated)
        } else {
            Ok(())
        }
    }

    #[inline]
    fn send(&mut self, msg: Msg, flags: i32) -> Result<()> {
        self.send_or_keep(msg, flags).map_err(|(_, e)| e)
    }

    /// `send`, handing the message back when it fails (libzmq leaves a
    /// failed message with its caller), so a caller that must keep it needs
    /// no copy up front.
    #[inline]
    fn send_or_keep(&mut self, mut msg: Msg, flags: i32) -> std::result::Result<(), (Msg, Error)> {
        msg.set_more(flags & SNDMORE != 0);
        if self.mailbox.has_pending() {
            if let Err(e) = self.process_commands() {
                return Err((msg, e));
            }
        }
        let msg = match self.pattern.send(msg, &mut self.pipes) {
            Ok(()) => {
                if !self.pipes.dead.is_empty() {
                    self.reap();
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
    fn send_slow(&mut self, mut msg: Msg, flags: i32) -> std::result::Result<(), (Msg, Error)> {
        let timeout = if flags & DONTWAIT != 0 { Some(Duration::ZERO) } else { self.options.sndtimeo };
        let deadline = timeout.map(|t| Instant::now() + t);
        loop {
            if let Err(e) = self.check_term().and_then(|()| self.process_commands()) {
                return Err((msg, e));
            }
            match self.pattern.send(msg, &mut self.pipes) {
                Ok(()) => {
                    self.reap();
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
    fn recv(&mut self, flags: i32) -> Result<Msg> {
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
    fn recv_slow(&mut self, flags: i32) -> Result<Msg> {
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
            self.wait(deadline)?;
        }
    }

    /// CONFLATE: keep only the newest complete single-frame message.
    fn recv_conflated(&mut self, flags: i32) -> Result<Msg> {
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
    fn wait(&mut self, deadline: Option<Instant>) -> Result<()> {
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
        self.mailbox.take(&mut inbox);
        self.commands_seen += (inbox.commands.len() + inbox.read_activated.len() + inbox.write_activated.len()) as u64;
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
    fn reap(&mut self) {
        while let Some(id) = self.pipes.dead.pop() {
            if !self.pipes.contains(id) {
                continue;
            }
            self.pattern.detach(id, &mut self.pipes);
            if let Some(p) = self.pipes.remove(id) {
                self.forget(p);
            }
        }
    }

    fn forget(&mut self, mut p: SocketPipe) {
        p.send_disconnect_msg();
        p.inn.reader_wake().clear();
        p.out.writer_wake().clear();
        self.key_to_pipe.remove(&p.key);
        // Dropping our ends tells the peer (engine or inproc socket).
    }

    fn events(&mut self) -> i16 {
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

    /// libzmq applies a changed SNDHWM/RCVHWM to the pipes that already
    /// exist. On inproc it adds the RCVHWMs both sides had when the pipe was
    /// made: to SNDHWM the peer's, and (through the peer's end) to RCVHWM
    /// our own, so both directions follow libzmq's numbers.
    fn update_pipe_hwms(&mut self) {
        let (snd, rcv) = (self.options.sndhwm_limit(), self.options.rcvhwm_limit());
        for id in self.pipes.ids() {
            let p = self.pipes.get_mut(id);
            let (out, inn) = match p.hwm_boost {
                Some((peer_rcv, own_rcv)) => (inproc::combined_hwm(snd, peer_rcv), inproc::combined_hwm(rcv, own_rcv)),
                None => (snd, rcv),
            };
            p.out.set_hwm(out);
            p.inn.set_hwm(inn);
        }
    }

    fn set_option(&mut self, option: i32, value: &[u8], null_ok: bool) -> Result<()> {
        self.check_term()?;
        // The table decides which options this socket type takes at all.
        let spec = crate::option_table::lookup_for(option, self.kind)
            .filter(|s| s.set)
            .ok_or(Error::Invalid("unknown or read-only option for this socket type"))?;
        if null_ok && value.is_empty() {
            // libzmq: a NULL value clears the accept filters.
            let o = &mut self.options;
            match option {
                opt::TCP_ACCEPT_FILTER => o.tcp_accept_filters.clear(),
                opt::IPC_FILTER_PID => o.ipc_filter_pids.clear(),
                opt::IPC_FILTER_UID => o.ipc_filter_uids.clear(),
                opt::IPC_FILTER_GID => o.ipc_filter_gids.clear(),
                _ => {}
            }
            if matches!(
                option,
                opt::TCP_ACCEPT_FILTER | opt::IPC_FILTER_PID | opt::IPC_FILTER_UID | opt::IPC_FILTER_GID
            ) {
                return Ok(());
            }
        }
        // libzmq: a NULL value clears these strings (PLAIN's switch back to
        // the NULL mechanism); ZAP_DOMAIN refuses it like any empty value.
        let null_clears = null_ok
            && matches!(
                option,
                opt::PLAIN_USERNAME
                    | opt::PLAIN_PASSWORD
                    | opt::SOCKS_PROXY
                    | opt::SOCKS_USERNAME
                    | opt::SOCKS_PASSWORD
                    | opt::BINDTODEVICE
            );
        if matches!(spec.kind, Kind::Bytes | Kind::Str) && value.is_empty() && !spec.empty_ok && !null_clears {
            return Err(Error::Invalid("this option needs a non-empty value"));
        }
        // libzmq's router_t takes it (REP is one); other types only read it.
        if option == opt::ROUTER_NOTIFY && !matches!(self.kind, SocketType::Router | SocketType::Rep) {
            return Err(Error::Invalid("ROUTER_NOTIFY is a ROUTER option"));
        }
        if option == opt::ROUTER_RAW && matches!(self.kind, SocketType::Router | SocketType::Rep) && !self.router_raw {
            // libzmq: turning it on makes later connections raw; off is a no-op.
            if crate::patterns::bool_value(value)? {
                self.router_raw = true;
                self.pattern = if self.kind == SocketType::Rep {
                    crate::patterns::new_raw_rep()
                } else {
                    crate::patterns::new_raw_router()
                };
            }
            return Ok(());
        }
        if self.pattern.set_option(option, value, &mut self.pipes)? {
            if option == opt::STREAM_NOTIFY {
                self.options.raw_notify = crate::patterns::bool_value(value)?;
            }
            self.reap();
            return Ok(());
        }
        if set_generic(&mut self.options, option, value)? {
            if option == opt::LINGER {
                self.linger_ms.store(decode_int(option, value)?, Ordering::Relaxed);
            }
            if option == opt::SNDHWM || option == opt::RCVHWM {
                self.update_pipe_hwms();
            }
            return Ok(());
        }
        Err(Error::Invalid("unknown or read-only option"))
    }

    fn get_option(&mut self, option: i32) -> Result<OptionValue> {
        self.check_term()?;
        crate::option_table::lookup_for(option, self.kind)
            .filter(|s| s.get != GetSize::None)
            .ok_or(Error::Invalid("unknown or write-only option for this socket type"))?;
        match option {
            opt::TYPE => return Ok(OptionValue::Int(self.kind.as_raw() as i64)),
            opt::RCVMORE => return Ok(OptionValue::Int(self.rcvmore as i64)),
            opt::EVENTS => return Ok(OptionValue::Int(self.events() as i64)),
            opt::FD if self.kind.is_thread_safe() => return Err(Error::Invalid("thread-safe sockets have no FD")),
            opt::FD => return Ok(OptionValue::Int(self.mailbox.signaler().raw_fd() as i64)),
            opt::THREAD_SAFE => return Ok(OptionValue::Int(self.kind.is_thread_safe() as i64)),
            opt::LAST_ENDPOINT => return Ok(OptionValue::Bytes(self.last_endpoint.as_bytes().to_vec())),
            _ => {}
        }
        if let Some(v) = self.pattern.get_option_int(option) {
            return Ok(OptionValue::Int(v));
        }
        get_generic(&self.options, option).ok_or(Error::Invalid("unknown or write-only option"))
    }

    /// Close: stop accepting and reconnecting, hand queued messages to the
    /// engines (which linger), and leave the context.
    fn close(&mut self) {
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
