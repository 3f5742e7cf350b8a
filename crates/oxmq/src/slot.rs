//! A socket shared by a binding's objects without a lock: who may touch it,
//! and who frees it.
//!
//! A binding's socket object and its context's registry both hold the slot
//! (`Arc`), and a garbage collector, a context's destruction or another
//! thread may close it while a call runs. Every call *enters* the slot (one
//! atomic add), uses the socket, and *leaves* (one atomic sub); `close` sets
//! a flag. Whoever brings the slot to "closed and nobody inside" frees the
//! socket, exactly once (a compare-and-swap decides). So a close only makes
//! later calls fail with ENOTSOCK; a running call finishes on a live socket,
//! and one blocked in [`crate::block_with`] wakes (the close descriptor is in
//! its wait) and fails with ENOTSOCK. No mutex on the send/recv path.

use crate::blocking::SocketAccess;
use crate::error::{Error, Result};
use crate::socket::Socket;
use std::cell::UnsafeCell;
use std::mem::ManuallyDrop;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicUsize, Ordering};

/// `state` bit: `close` was called (no new callers get in).
const CLOSED: usize = 1;
/// `state` bit: the socket has been dropped.
const DROPPED: usize = 2;
/// `state` unit: one caller inside.
const USER: usize = 4;

/// A socket entered by one atomic per call; see the module docs.
pub struct SocketSlot {
    /// `CLOSED | DROPPED | users * USER`. Acquire on enter and Release on
    /// leave order every use of `socket` before its drop.
    state: AtomicUsize,
    socket: UnsafeCell<ManuallyDrop<Socket>>,
    /// An eventfd written by `close`, so that a thread blocked on this
    /// socket wakes up and sees it closed.
    closed_wake: OwnedFd,
}

// SAFETY: `socket` is reached only between `enter` and `leave` (through a
// `SlotGuard`) or by the single winner of the drop CAS, after every guard is
// gone; `Socket` serialises its own callers with its one-flag lock
// (`CoreCell`, which the C ABI relies on too), so shared access from several
// threads cannot race.
unsafe impl Sync for SocketSlot {}
// SAFETY: `Socket` is `Send`; the eventfd and the counter are plain data.
unsafe impl Send for SocketSlot {}

/// Proof of being inside the slot; the socket cannot be freed while it lives.
pub struct SlotGuard<'a> {
    slot: &'a SocketSlot,
}

impl SocketSlot {
    /// Put `socket` in a slot (one eventfd for its close signal).
    pub fn new(socket: Socket) -> Result<SocketSlot> {
        // SAFETY: plain syscall; the result is checked before use.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            return Err(Error::Io(std::io::Error::last_os_error()));
        }
        Ok(SocketSlot {
            state: AtomicUsize::new(0),
            socket: UnsafeCell::new(ManuallyDrop::new(socket)),
            // SAFETY: `fd` is a fresh descriptor that nothing else owns.
            closed_wake: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    /// Enter, or [`Error::NotSocket`] once closed.
    #[inline]
    pub fn enter(&self) -> Result<SlotGuard<'_>> {
        let prev = self.state.fetch_add(USER, Ordering::Acquire);
        if prev & CLOSED != 0 {
            self.leave();
            return Err(Error::NotSocket);
        }
        Ok(SlotGuard { slot: self })
    }

    #[inline]
    fn leave(&self) {
        let prev = self.state.fetch_sub(USER, Ordering::Release);
        if prev == CLOSED | USER {
            self.try_drop();
        }
    }

    /// Whether `close` was called.
    pub fn is_closed(&self) -> bool {
        self.state.load(Ordering::Relaxed) & CLOSED != 0
    }

    /// Readable once the slot is closed: put it in a wait that must end then.
    pub fn closed_fd(&self) -> RawFd {
        self.closed_wake.as_raw_fd()
    }

    /// Close: later calls fail with ENOTSOCK; the socket is dropped now if
    /// nobody is inside, else by the last one to leave. Idempotent.
    pub fn close(&self) {
        let prev = self.state.fetch_or(CLOSED, Ordering::AcqRel);
        if prev & CLOSED != 0 {
            return;
        }
        if prev < USER {
            self.try_drop();
        } else {
            // Someone may be blocked on this socket: let them see the flag.
            let one = 1u64;
            // SAFETY: writes 8 bytes from a local u64 to our eventfd; a full
            // counter (EAGAIN) still leaves it readable, which is all we need.
            unsafe { libc::write(self.closed_fd(), (&one as *const u64).cast(), 8) };
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

impl Drop for SocketSlot {
    fn drop(&mut self) {
        // The last owner is going: nobody can be inside.
        self.close();
    }
}

impl std::ops::Deref for SlotGuard<'_> {
    type Target = Socket;

    #[inline]
    fn deref(&self) -> &Socket {
        // SAFETY: while a guard lives the socket is not dropped (see `SocketSlot`).
        unsafe { &*self.slot.socket.get() }
    }
}

impl Drop for SlotGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        self.slot.leave();
    }
}

/// A blocked call keeps its guard (so a context termination still reports
/// ETERM on a live socket); `close` wakes it through the close descriptor.
impl SocketAccess for SlotGuard<'_> {
    #[inline]
    fn enter<R>(&self, f: impl FnOnce(&Socket) -> Result<R>) -> Result<R> {
        f(self)
    }

    fn closed_fd(&self) -> Option<RawFd> {
        Some(self.slot.closed_fd())
    }

    fn is_closed(&self) -> bool {
        self.slot.is_closed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{block_with, Context, CoreWait, SocketType, DONTWAIT};
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn close_while_inside_drops_on_leave_and_refuses_new_callers() {
        let ctx = Context::new();
        let slot = SocketSlot::new(ctx.socket(SocketType::Pair).unwrap()).unwrap();
        let g = slot.enter().unwrap();
        slot.close();
        assert!(slot.is_closed());
        assert!(matches!(slot.enter(), Err(Error::NotSocket)));
        g.bind("inproc://slot-live").unwrap();
        drop(g);
        slot.close();
    }

    #[test]
    fn a_close_from_another_thread_wakes_a_blocked_receive() {
        let ctx = Context::new();
        let slot = Arc::new(SocketSlot::new(ctx.socket(SocketType::Pull).unwrap()).unwrap());
        let closer = {
            let slot = Arc::clone(&slot);
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(30));
                slot.close();
            })
        };
        let g = slot.enter().unwrap();
        let r = block_with(&g, 10_000, &mut CoreWait, |s| s.recv(DONTWAIT));
        assert!(matches!(r, Err(Error::NotSocket)), "{r:?}");
        drop(g);
        closer.join().unwrap();
    }
}
