//! The public `Socket`: the caller's thread drives its pattern directly; other
//! threads reach it only through its [`Mailbox`].
//!
//! Hot path of a send or receive: one `RefCell` borrow, one relaxed check of
//! the mailbox flag, the pattern's pipe operation. The mailbox (a mutex and an
//! eventfd) is visited only when the pattern cannot proceed, or when another
//! thread has queued something.

mod cell;
mod core;
mod sockopt;
use self::core::Core;
pub(crate) use self::core::DirectWait;
use crate::channel::direct_read::WokenBy;
mod endpoints;
// zmq_socket_monitor's sink socket, installed in the socket's monitor slot.
mod monitor;
pub(crate) mod options_codec;
// The Prometheus text exposition of the statistics (cargo feature).
#[cfg(feature = "prometheus")]
pub(crate) mod prometheus;
// Socket::stats and zmq_socket_monitor_pipes_stats.
mod stats;
// Draft thread-safe socket types: several threads at once.
mod shared;
pub use shared::{SharedWaiter, ThreadSafeSocket};

use crate::channel::mailbox::Mailbox;
use crate::channel::peer::PeerProperties;
use crate::ctx::Context;
use crate::error::{Error, Result};
use crate::msg::Msg;
use crate::options::Options;
use cell::CoreCell;
use options_codec::{encode_int, OptionValue};
use oxmq_proto::SocketType;
use std::mem::ManuallyDrop;
use std::os::fd::RawFd;
use std::sync::Arc;
use std::time::Instant;

/// Send/receive flag: do not block (libzmq `ZMQ_DONTWAIT`).
pub const DONTWAIT: i32 = 1;
/// Send flag: more frames of this message follow (libzmq `ZMQ_SNDMORE`).
pub const SNDMORE: i32 = 2;
/// Send flag, with [`DONTWAIT`]: see the readers' progress as libzmq's
/// sender does. libzmq's socket learns that a peer's pipe drained only from
/// commands it takes at most once a millisecond on such a send, so a burst
/// of non-blocking sends fails with EAGAIN at the HWM even while the I/O
/// thread keeps pace; without this flag oxmq looks at the reader's count
/// whenever its own view says full, and that burst may never fail. The C
/// ABI sets it on every `ZMQ_DONTWAIT` send (libzmq's test_hwm_pubsub
/// counts on the EAGAIN); a blocking send always looks.
pub const THROTTLED_VIEW: i32 = 1 << 16;

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

impl Socket {
    pub(crate) fn new(ctx: &Context, kind: SocketType, id: u64, mailbox: Arc<Mailbox>, options: Options) -> Socket {
        Socket {
            kind,
            shared: kind.is_thread_safe().then(|| Arc::new(shared::SharedWait::new(mailbox.clone()))),
            _not_sync: std::marker::PhantomData,
            core: ManuallyDrop::new(CoreCell::new(Core::new(ctx, kind, id, mailbox, options))),
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

    /// The state of a socket that is not a thread-safe type, for the
    /// per-message calls: the cell's guard itself, with no `CoreRef` (whose
    /// drop only matters to thread-safe types) and no `Result` of it to
    /// build and unpack, so the whole entry inlines into the caller (about
    /// 20 instructions less per send and per receive).
    #[inline(always)]
    fn plain_core(&self) -> Result<cell::CoreGuard<'_, Core>> {
        let core = self.core.lock()?;
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
        self.plain_core()?.send(msg.into(), flags)
    }

    /// Send a copy of `data` as one frame; `flags` as for [`send`](Self::send).
    /// Cheaper than `send(data)` for large messages: when the connection
    /// the message goes to (tcp or ipc, no CURVE or GSSAPI) has nothing
    /// queued, it is written from `data` itself, without a copy into a
    /// message or a hand-off to the I/O thread. A blocking send may then
    /// wait up to 10 ms for the kernel to take the rest of a message it took
    /// part of, before the I/O thread finishes it.
    pub fn send_slice(&self, data: &[u8], flags: i32) -> Result<()> {
        if let Some(shared) = &self.shared {
            return self.send_shared(shared, Msg::from_slice(data), flags);
        }
        self.plain_core()?.send_slice(data, flags)
    }

    /// Only the direct path of [`send_slice`](Self::send_slice): `Ok(true)`
    /// when `data` was written to its connection by this thread, `Ok(false)`
    /// when not (too small, multipart, no idle tcp/ipc connection, a
    /// thread-safe socket type), and the caller sends it some other way.
    /// For a binding that waits on its own terms and only wants the
    /// copy-free write (it may block up to about 20 ms without DONTWAIT).
    pub fn try_send_direct(&self, data: &[u8], flags: i32) -> Result<bool> {
        if self.shared.is_some() {
            return Ok(false);
        }
        self.plain_core()?.try_send_direct(data, flags)
    }

    /// [`try_send_direct`](Self::try_send_direct) of a message a binding
    /// built without a copy (a lent buffer, a received frame sent on), on
    /// REQ and REP only: a binding's first send attempt is non-blocking and
    /// only queues, which on a round trip wakes the I/O thread for every
    /// message; other types queue what is lent, since with no copy to save
    /// a stream of large lent frames runs faster handed to the I/O thread
    /// (Python tcp 1 MiB zero-copy PUSH: 3.5k msg/s written by the caller,
    /// 4.8k queued).
    pub fn try_send_lent_direct(&self, msg: &Msg, flags: i32) -> Result<bool> {
        if !self.lends_direct() {
            return Ok(false);
        }
        self.try_send_direct(msg.as_slice(), flags)
    }

    /// Whether [`try_send_lent_direct`](Self::try_send_lent_direct) may
    /// write on this socket type: a binding asks once, so that other types
    /// do not release their runtime's lock for nothing on every lent send.
    pub fn lends_direct(&self) -> bool {
        self.kind.is_round_trip()
    }

    /// The sizes of single-frame blocking sends that
    /// [`try_send_direct`](Self::try_send_direct) may write itself: from
    /// [`DIRECT_SEND_MIN`](crate::DIRECT_SEND_MIN) up, or for REQ and REP
    /// (one message in flight per round trip: nothing would batch behind
    /// it) every size; none for thread-safe types. A binding that must
    /// release a lock around a direct send asks this once.
    pub fn direct_send_sizes(&self) -> Result<std::ops::Range<usize>> {
        if self.shared.is_some() {
            return Ok(0..0);
        }
        Ok(self.plain_core()?.direct_send_sizes())
    }

    /// Send one frame, handing it back with the error when the send fails
    /// (as libzmq's `zmq_msg_send` leaves a failed message with its caller).
    /// A caller that must keep its message on failure needs no copy of it.
    #[inline]
    pub fn send_or_keep(&self, msg: Msg, flags: i32) -> std::result::Result<(), (Msg, Error)> {
        if let Some(shared) = &self.shared {
            return self.send_shared_or_keep(shared, msg, flags);
        }
        match self.plain_core() {
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
        self.plain_core()?.recv(flags)
    }

    /// A binding's blocking receive (`crate::blocking`), between two
    /// non-blocking attempts: wait on the connection the next message comes
    /// from and read it, as a blocking [`Socket::recv`] does (`recv_direct`),
    /// but with the socket free while it waits, since the binding lets its
    /// other threads call the socket meanwhile (Python's threads, with the
    /// GIL released). The read side is taken and the message queued with the
    /// socket held; `also` (a close and a wake descriptor) end the wait.
    pub(crate) fn recv_direct_unlocked(&self, deadline: Option<Instant>, also: &[RawFd]) -> Result<DirectWait> {
        if self.shared.is_some() {
            return Ok(DirectWait::NotTaken);
        }
        let mut core = self.plain_core()?;
        let Some((pipe, port)) = core.direct_target() else { return Ok(DirectWait::NotTaken) };
        let Some(held) = port.read.take() else { return Ok(DirectWait::NotTaken) };
        if core.direct_queued_before(pipe) {
            return Ok(DirectWait::Queued);
        }
        let mut rx = core.take_direct_buffers();
        let mailbox = core.mailbox.clone();
        drop(core);
        let read = held.read_message(&mut rx.0, &mut rx.1, WokenBy { signaler: mailbox.signaler(), also }, deadline);
        // Another thread's call holds the socket briefly at most (none
        // blocks holding it), and what was read must not be lost.
        let mut core = self.core.lock_blocking();
        core.end_direct(pipe, rx, read)
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
