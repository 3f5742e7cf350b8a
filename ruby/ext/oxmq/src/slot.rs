//! Who may touch a core socket, and who frees it.
//!
//! rbczmq's hardest bugs were a socket freed twice (GC and context
//! termination racing) or used after free (another thread closing it). Here
//! a socket lives in a [`Slot`] shared (`Arc`) by its Ruby object and its
//! context's registry. Every call *enters* the slot (one atomic add), uses
//! the socket, and *leaves* (one atomic sub); `close` sets a flag. Whoever
//! brings the slot to "closed and nobody inside" frees the socket, exactly
//! once (a compare-and-swap decides). So closing by GC, by
//! `Context#destroy` or by another thread while a call is running only
//! makes later calls fail with ENOTSOCK; the running call finishes on a live
//! socket. No mutex on the send/recv path: two uncontended atomics.

use crate::wait::EventFd;
use oxmq::errno;
use std::cell::UnsafeCell;
use std::mem::ManuallyDrop;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `state` bit: `close` was called (no new callers get in).
const CLOSED: usize = 1;
/// `state` bit: the socket has been dropped.
const DROPPED: usize = 2;
/// `state` unit: one caller inside.
const USER: usize = 4;

pub(crate) struct Slot {
    /// `CLOSED | DROPPED | users * USER`. Acquire on enter and Release on
    /// leave order every use of `socket` before its drop.
    state: AtomicUsize,
    socket: UnsafeCell<ManuallyDrop<oxmq::Socket>>,
    /// Written by `close`, so that a thread blocked on this socket wakes up
    /// and sees it closed.
    pub(crate) closed_wake: EventFd,
    pub(crate) kind: oxmq::SocketType,
    /// Keeps the context alive until the slot goes, so that the socket's own
    /// drop never releases the last reference (see `reaper`).
    _ctx: oxmq::Context,
}

// SAFETY: `socket` is reached only between `enter` and `leave` (through a
// `Guard`) or by the single winner of the drop CAS, after every guard is
// gone; `oxmq::Socket` serialises its own callers with its one-flag lock
// (the C and Python bindings rely on the same property), so shared access
// from several threads cannot race.
unsafe impl Sync for Slot {}
unsafe impl Send for Slot {}

/// Proof of being inside the slot; the socket cannot be freed while it lives.
pub(crate) struct Guard<'a> {
    slot: &'a Slot,
}

impl Slot {
    pub(crate) fn new(ctx: oxmq::Context, socket: oxmq::Socket, closed_wake: EventFd) -> Slot {
        let kind = socket.socket_type();
        Slot {
            state: AtomicUsize::new(0),
            socket: UnsafeCell::new(ManuallyDrop::new(socket)),
            closed_wake,
            kind,
            _ctx: ctx,
        }
    }

    /// Enter, or ENOTSOCK once closed.
    #[inline]
    pub(crate) fn enter(&self) -> Result<Guard<'_>, i32> {
        let prev = self.state.fetch_add(USER, Ordering::Acquire);
        if prev & CLOSED != 0 {
            self.leave();
            return Err(errno::ENOTSOCK);
        }
        Ok(Guard { slot: self })
    }

    #[inline]
    fn leave(&self) {
        let prev = self.state.fetch_sub(USER, Ordering::Release);
        if prev == CLOSED | USER {
            self.try_drop();
        }
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.state.load(Ordering::Relaxed) & CLOSED != 0
    }

    /// Close: later calls fail with ENOTSOCK; the socket is dropped now if
    /// nobody is inside, else by the last one to leave. Idempotent.
    pub(crate) fn close(&self) {
        let prev = self.state.fetch_or(CLOSED, Ordering::AcqRel);
        if prev & CLOSED != 0 {
            return;
        }
        if prev < USER {
            self.try_drop();
        } else {
            // Someone may be blocked on this socket: let them see the flag.
            self.closed_wake.notify();
        }
    }

    fn try_drop(&self) {
        if self.state.compare_exchange(CLOSED, CLOSED | DROPPED, Ordering::Acquire, Ordering::Relaxed).is_ok() {
            // SAFETY: the CAS succeeded only with CLOSED set (no new guard can
            // be created) and no user inside; DROPPED makes it happen once.
            unsafe { ManuallyDrop::drop(&mut *self.socket.get()) };
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        // The last `Arc` is going: nobody can be inside.
        self.close();
    }
}

impl std::ops::Deref for Guard<'_> {
    type Target = oxmq::Socket;

    #[inline]
    fn deref(&self) -> &oxmq::Socket {
        // SAFETY: while a guard lives the socket is not dropped (see `Slot`).
        unsafe { &*self.slot.socket.get() }
    }
}

impl Drop for Guard<'_> {
    #[inline]
    fn drop(&mut self) {
        self.slot.leave();
    }
}

/// A blocked call keeps its guard (so a context termination still reports
/// ETERM on a live socket); `close` wakes it through `closed_wake`.
impl oxmq::SocketAccess for Guard<'_> {
    #[inline]
    fn enter<R>(&self, f: impl FnOnce(&oxmq::Socket) -> oxmq::Result<R>) -> oxmq::Result<R> {
        f(self)
    }

    fn closed_fd(&self) -> Option<RawFd> {
        Some(self.slot.closed_wake.raw())
    }

    fn is_closed(&self) -> bool {
        self.slot.is_closed()
    }
}
