//! Thread-safe sockets (libzmq's `ZMQ_THREAD_SAFE` types: SERVER, CLIENT,
//! SCATTER, GATHER, PEER, CHANNEL): any number of threads may send, receive
//! and poll at once.
//!
//! Each call holds the socket's cell only for one non-blocking attempt. A call
//! that must wait lets go of it and sleeps here: one thread (the *leader*)
//! sleeps on the socket's eventfd, the others on a condition variable. Every
//! attempt that changed something (a message taken or sent, or mailbox
//! commands consumed, which may have drained the eventfd another thread
//! needed) bumps an epoch and wakes the sleepers, who try again. That is
//! libzmq's broadcast on its thread-safe mailbox, and no wake-up is lost: a
//! sleeper compares the epoch it saw before its attempt.

use super::cell::CoreGuard;
use super::{Core, Socket};
use crate::channel::mailbox::Mailbox;
use crate::error::{Error, Result};
use crate::msg::Msg;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

#[derive(Default)]
struct WaitState {
    leader: bool,
}

pub(crate) struct SharedWait {
    /// Moves on every change a sleeper may care about. Read and bumped
    /// without the mutex: the hot path pays two atomics, not a lock.
    epoch: AtomicU64,
    /// Threads inside `sleep`. A bump notifies only when there are some;
    /// SeqCst on both sides (epoch then sleepers, sleepers then epoch) means
    /// a sleeper either sees the new epoch or is seen by the bumper.
    sleepers: AtomicUsize,
    state: Mutex<WaitState>,
    cv: Condvar,
    /// The socket's mailbox: its eventfd is where the leader sleeps.
    mailbox: Arc<Mailbox>,
}

impl SharedWait {
    pub(crate) fn new(mailbox: Arc<Mailbox>) -> SharedWait {
        SharedWait {
            epoch: AtomicU64::new(0),
            sleepers: AtomicUsize::new(0),
            state: Mutex::default(),
            cv: Condvar::new(),
            mailbox,
        }
    }

    fn lock(&self) -> MutexGuard<'_, WaitState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    #[inline]
    fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::SeqCst)
    }

    /// Something changed: every sleeper should look again.
    #[inline]
    pub(crate) fn bump(&self) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
        if self.sleepers.load(Ordering::SeqCst) != 0 {
            self.wake_sleepers();
        }
    }

    #[cold]
    fn wake_sleepers(&self) {
        let st = self.lock();
        if st.leader {
            // The leader sleeps on the eventfd, which this change may have
            // drained (another thread consumed its commands): re-arm it.
            self.mailbox.signaler().signal();
        }
        drop(st);
        self.cv.notify_all();
    }

    /// Sleep until the epoch moves past `seen`, the eventfd fires, or the
    /// deadline passes (`Error::Again`).
    fn sleep(&self, seen: u64, deadline: Option<Instant>) -> Result<()> {
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        let r = self.sleep_counted(seen, deadline);
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
        r
    }

    fn sleep_counted(&self, seen: u64, deadline: Option<Instant>) -> Result<()> {
        let mut st = self.lock();
        loop {
            if self.epoch() != seen {
                return Ok(());
            }
            let left = match deadline {
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        return Err(Error::Again);
                    }
                    Some(d - now)
                }
                None => None,
            };
            if !st.leader {
                st.leader = true;
                drop(st);
                let woke = self.mailbox.signaler().wait(left);
                // Whatever woke us may concern the followers too; one of them
                // leads next. (Bumped before taking the mutex, so a follower
                // between its epoch check and its wait cannot miss the notify.)
                self.epoch.fetch_add(1, Ordering::SeqCst);
                self.lock().leader = false;
                self.cv.notify_all();
                return match woke {
                    Ok(_) => Ok(()),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Err(Error::Interrupted),
                    Err(e) => Err(Error::Io(e)),
                };
            }
            st = match left {
                None => self.cv.wait(st).unwrap_or_else(|e| e.into_inner()),
                Some(t) => self.cv.wait_timeout(st, t).unwrap_or_else(|e| e.into_inner()).0,
            };
        }
    }
}

/// The socket's state while a call holds it. On a thread-safe socket, a call
/// that consumed mailbox commands (any call: send, recv, EVENTS, poll) may
/// have drained the eventfd a sleeping thread waits on: letting go wakes the
/// sleepers then, so none misses its message.
pub(crate) struct CoreRef<'a> {
    guard: CoreGuard<'a, Core>,
    seen: u64,
    shared: Option<&'a SharedWait>,
}

impl<'a> CoreRef<'a> {
    pub(crate) fn plain(guard: CoreGuard<'a, Core>) -> CoreRef<'a> {
        CoreRef { guard, seen: 0, shared: None }
    }

    pub(crate) fn shared(guard: CoreGuard<'a, Core>, shared: &'a SharedWait) -> CoreRef<'a> {
        let seen = guard.commands_seen;
        CoreRef { guard, seen, shared: Some(shared) }
    }
}

impl std::ops::Deref for CoreRef<'_> {
    type Target = Core;
    #[inline]
    fn deref(&self) -> &Core {
        &self.guard
    }
}

impl std::ops::DerefMut for CoreRef<'_> {
    #[inline]
    fn deref_mut(&mut self) -> &mut Core {
        &mut self.guard
    }
}

impl Drop for CoreRef<'_> {
    #[inline]
    fn drop(&mut self) {
        if let Some(shared) = self.shared {
            if self.guard.commands_seen != self.seen {
                shared.bump();
            }
        }
    }
}

/// Lets a binding that blocks in its own loop (Python's, which must wake for
/// signals) sleep the way thread-safe sockets do, without holding the socket.
pub struct SharedWaiter {
    shared: Arc<SharedWait>,
}

impl SharedWaiter {
    /// Read before an attempt; pass to [`SharedWaiter::sleep`] after it failed.
    pub fn epoch(&self) -> u64 {
        self.shared.epoch()
    }

    /// Sleep until another call on the socket changed something since `seen`,
    /// the socket is signalled, or `deadline` (`Error::Again`).
    pub fn sleep(&self, seen: u64, deadline: Option<Instant>) -> Result<()> {
        self.shared.sleep(seen, deadline)
    }
}

impl Core {
    /// One non-blocking send attempt; the message comes back on failure.
    fn try_send(&mut self, mut msg: Msg) -> std::result::Result<(), (Msg, Error)> {
        // As the classic fast path: the mailbox only when something is queued;
        // before giving up, take it (which also drains the eventfd) and retry.
        let mut drained = false;
        if self.mailbox.has_pending() {
            if let Err(e) = self.process_commands() {
                return Err((msg, e));
            }
            drained = true;
        }
        loop {
            match self.pattern.send(msg, &mut self.pipes) {
                Err((m, Error::Again)) if !drained => {
                    msg = m;
                    if let Err(e) = self.process_commands() {
                        return Err((msg, e));
                    }
                    drained = true;
                }
                r => {
                    self.reap();
                    return r;
                }
            }
        }
    }

    /// One non-blocking receive attempt.
    fn try_recv(&mut self) -> Result<Msg> {
        let mut drained = false;
        if self.mailbox.has_pending() {
            self.process_commands()?;
            drained = true;
        }
        loop {
            match self.pattern.recv(&mut self.pipes) {
                Ok(m) => {
                    self.rcvmore = m.more();
                    self.reap();
                    return Ok(m);
                }
                // Detaching can queue a message (as in recv_slow): look again.
                Err(Error::Again) if !self.pipes.dead.is_empty() => self.reap(),
                Err(Error::Again) if !drained => {
                    self.process_commands()?;
                    drained = true;
                }
                Err(e) => {
                    self.reap();
                    return Err(e);
                }
            }
        }
    }
}

impl Socket {
    /// PEER only (libzmq `zmq_connect_peer`): connect, and return the
    /// routing id that addresses this connection's peer. ENOTSUP on other
    /// types; EFAULT with IMMEDIATE set (no pipe exists until the peer answers).
    pub fn connect_peer(&self, endpoint: &str) -> Result<u32> {
        if self.kind != oxmq_proto::SocketType::Peer {
            return Err(Error::NotSupported);
        }
        let mut core = self.core()?;
        if core.options.immediate {
            return Err(Error::Io(std::io::Error::from_raw_os_error(libc::EFAULT)));
        }
        core.connect(endpoint)?;
        Ok(core.pattern.last_peer_routing_id())
    }

    pub(super) fn send_shared(&self, shared: &SharedWait, msg: Msg, flags: i32) -> Result<()> {
        self.send_shared_or_keep(shared, msg, flags).map_err(|(_, e)| e)
    }

    /// `send_shared`, handing the message back when it fails.
    pub(super) fn send_shared_or_keep(
        &self,
        shared: &SharedWait,
        mut msg: Msg,
        flags: i32,
    ) -> std::result::Result<(), (Msg, Error)> {
        msg.set_more(flags & super::SNDMORE != 0);
        let mut deadline = None;
        loop {
            let seen = shared.epoch();
            let (result, timeout) = {
                let mut core = match self.core() {
                    Ok(core) => core,
                    Err(e) => return Err((msg, e)),
                };
                let r = core.try_send(msg);
                (r, core.options.sndtimeo)
            };
            match result {
                Ok(()) => {
                    shared.bump();
                    return Ok(());
                }
                Err((m, Error::Again)) => msg = m,
                Err(failed) => return Err(failed),
            }
            let d = *deadline.get_or_insert_with(|| wait_deadline(flags, timeout));
            if let Err(e) = self.sleep_shared(shared, seen, d) {
                return Err((msg, e));
            }
        }
    }

    pub(super) fn recv_shared(&self, shared: &SharedWait, flags: i32) -> Result<Msg> {
        let mut deadline = None;
        loop {
            let seen = shared.epoch();
            let (result, timeout) = {
                let mut core = self.core()?;
                let r = core.try_recv();
                (r, core.options.rcvtimeo)
            };
            match result {
                Ok(m) => {
                    shared.bump();
                    return Ok(m);
                }
                Err(Error::Again) => {}
                Err(e) => return Err(e),
            }
            let d = *deadline.get_or_insert_with(|| wait_deadline(flags, timeout));
            self.sleep_shared(shared, seen, d)?;
        }
    }

    fn sleep_shared(&self, shared: &SharedWait, seen: u64, deadline: Option<Instant>) -> Result<()> {
        shared.sleep(seen, deadline)
    }

    /// Readiness for `poll` (waking sleepers is `CoreRef`'s job).
    pub(crate) fn poll_events(&self) -> Result<i16> {
        self.core()?.poll_events()
    }

    /// For thread-safe sockets: a handle to sleep on between non-blocking
    /// attempts made by the caller's own loop (`None` for other types).
    pub fn shared_waiter(&self) -> Result<Option<SharedWaiter>> {
        self.core()?;
        Ok(self.shared.as_ref().map(|s| SharedWaiter { shared: s.clone() }))
    }

    /// The eventfd that signals a possible change of readiness, for pollers
    /// (`zmq_poller_fd`). On thread-safe sockets it is not handed out as
    /// `ZMQ_FD`: another thread's call may consume its signal, so a poller
    /// must re-check `events()` after a timeout, as `crate::poll` does.
    pub fn readiness_fd(&self) -> Result<std::os::fd::RawFd> {
        Ok(self.core()?.mailbox.signaler().raw_fd())
    }

    /// The mailbox whose eventfd [`Socket::readiness_fd`] is: a blocked call
    /// spins on its signaler before it sleeps on the descriptor.
    pub(crate) fn mailbox(&self) -> Result<Arc<Mailbox>> {
        Ok(self.core()?.mailbox.clone())
    }
}

/// `Some(deadline)`, or `None` to wait forever; DONTWAIT is a zero timeout.
fn wait_deadline(flags: i32, timeout: Option<Duration>) -> Option<Instant> {
    let timeout = if flags & super::DONTWAIT != 0 { Some(Duration::ZERO) } else { timeout };
    timeout.map(|t| Instant::now() + t)
}

/// A socket of a thread-safe type, shareable between threads (`Arc<ThreadSafeSocket>`).
/// Every [`Socket`] method is available through `Deref`.
pub struct ThreadSafeSocket(Socket);

// SAFETY: a `Socket` is `!Sync` only by design (libzmq's one-thread rule for
// classic types). Its state sits in a `CoreCell`, which is `Sync` and admits
// one guard at a time; the other fields are a `Copy` enum, a marker, and the
// `Mutex`/`Condvar` of `SharedWait`. Thread-safe types never block while
// holding the cell, so sharing them is sound and does not deadlock.
unsafe impl Sync for ThreadSafeSocket {}

impl Socket {
    /// Make a socket of a thread-safe type (SERVER, CLIENT, SCATTER, GATHER,
    /// PEER, CHANNEL) shareable between threads; other types are handed back
    /// (boxed: a `Socket` is large).
    pub fn into_thread_safe(self) -> std::result::Result<ThreadSafeSocket, Box<Socket>> {
        if self.shared.is_some() {
            Ok(ThreadSafeSocket(self))
        } else {
            Err(Box::new(self))
        }
    }
}

impl std::ops::Deref for ThreadSafeSocket {
    type Target = Socket;
    fn deref(&self) -> &Socket {
        &self.0
    }
}

impl ThreadSafeSocket {
    /// The socket itself (to close it, or pass it where a `Socket` is wanted).
    pub fn into_inner(self) -> Socket {
        self.0
    }
}
