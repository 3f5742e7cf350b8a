//! An eventfd that wakes a sleeping socket (Linux).
//!
//! `signal` adds 1 to the eventfd counter (making it readable), `drain` resets
//! it to 0 with one non-blocking read, and `wait` blocks in `poll(2)` until it
//! is readable. The fd can also be registered with an external poller via
//! [`Signaler::raw_fd`].
//!
//! `drain` skips its read when every `signal` so far has been read already:
//! a blocking receive drains once before it sleeps and once after it wakes,
//! and the first of those reads found nothing nearly always.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

use crate::wait::BusyPoll;

/// A spin on a connection ([`Signaler::wait_with`]) looks at it every this
/// many turns: a `recv` peek costs about as much as the turns between.
const FD_EVERY: u32 = 4;

pub(crate) struct Signaler {
    fd: OwnedFd,
    /// Signals not yet read back: each `signal` adds 1 before it writes 1,
    /// and each `drain` subtracts what its read returned (the eventfd sums
    /// the writes). So whenever the counter holds a write, this is positive
    /// and the next drain reads it: a poller never spins on a readable fd
    /// that drains skip. Positive with nothing written yet (a signal between
    /// its add and its write) costs one read that finds nothing.
    unread: AtomicI64,
    /// Whether the owner spins before it sleeps (see [`BusyPoll`]): a
    /// signal is visible in `unread` before its write, so a spin needs no
    /// syscall.
    busy: BusyPoll,
}

impl Signaler {
    pub(crate) fn new() -> io::Result<Signaler> {
        // SAFETY: plain syscall wrapper; no pointers involved.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a freshly created descriptor that nobody else owns.
        Ok(Signaler { fd: unsafe { OwnedFd::from_raw_fd(fd) }, unread: AtomicI64::new(0), busy: BusyPoll::default() })
    }

    /// Make the fd readable. Never blocks; a saturated counter (EAGAIN) is
    /// already readable, so that error is ignored.
    pub(crate) fn signal(&self) {
        let one: u64 = 1;
        self.unread.fetch_add(1, Ordering::SeqCst);
        loop {
            // SAFETY: writes 8 bytes from a live local `u64`.
            let n = unsafe { libc::write(self.fd.as_raw_fd(), (&one as *const u64).cast(), 8) };
            if n == 8 {
                return;
            }
            let err = io::Error::last_os_error();
            match err.raw_os_error() {
                Some(libc::EINTR) => continue,
                // Saturated (2^64 - 2 unread signals): already readable. This
                // signal stays counted, so drains keep reading, as before.
                Some(libc::EAGAIN) => return,
                _ => {
                    debug_assert!(false, "eventfd write failed: {err}");
                    return;
                }
            }
        }
    }

    /// Reset the counter to 0 (one non-blocking read; EAGAIN = already 0),
    /// or nothing when every signal has been read already. Called by the
    /// socket's owner only (one drain at a time). Returns whether it read a
    /// signal, which may have been meant for another thread sleeping on the
    /// fd (a thread-safe socket's leader): the caller passes it on.
    pub(crate) fn drain(&self) -> bool {
        let counted = self.unread.swap(0, Ordering::SeqCst);
        if counted <= 0 {
            self.unread.fetch_add(counted, Ordering::SeqCst);
            return false;
        }
        let mut buf: u64 = 0;
        let read = loop {
            // SAFETY: reads at most 8 bytes into a live local `u64`.
            let n = unsafe { libc::read(self.fd.as_raw_fd(), (&mut buf as *mut u64).cast(), 8) };
            if n == 8 {
                break buf.min(i64::MAX as u64) as i64;
            }
            if n >= 0 || io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                break 0;
            }
        };
        // Signals counted but not yet written stay counted; writes read
        // whose signals were counted after our swap are taken off.
        if counted != read {
            self.unread.fetch_add(counted - read, Ordering::SeqCst);
        }
        read > 0
    }

    /// Block until signalled (`Ok(true)`) or until `timeout` elapses
    /// (`Ok(false)`); `None` waits forever. Does not drain. An interrupting
    /// signal yields `Err(ErrorKind::Interrupted)`; the caller decides whether
    /// to retry (with the remaining time). May spin first (see [`BusyPoll`]).
    pub(crate) fn wait(&self, timeout: Option<Duration>) -> io::Result<bool> {
        if timeout == Some(Duration::ZERO) {
            return self.poll(timeout);
        }
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        let mut out = Ok(true);
        self.spin_then(deadline, || {
            // The spin used part of the time: sleep only for what is left.
            out = self.poll(deadline.map(|d| d.saturating_duration_since(Instant::now())));
            matches!(out, Ok(true))
        });
        out
    }

    /// Spin until signalled (see [`BusyPoll`]), then, if not signalled by
    /// then, run `block`, a sleep on this descriptor (perhaps among others)
    /// that says whether readiness ended it (not a timeout or a signal).
    /// Returns whether the wait ended signalled or ready.
    pub(crate) fn spin_then(&self, deadline: Option<Instant>, block: impl FnOnce() -> bool) -> bool {
        self.spin_then_ready(deadline, || self.unread.load(Ordering::Relaxed) > 0, block)
    }

    /// Wait for input on `fd` (a connection a receiving thread reads
    /// itself, `channel::direct_read`) or for this signaler or one of
    /// `also` (at most two: a binding's close and wake descriptors),
    /// spinning first as [`Signaler::wait`] does (the spin looks at `fd`
    /// every few turns, a syscall each; not at `also`). `Ok((fd_ready,
    /// woken))`, both false at the deadline; a signal interrupting the
    /// sleep is `Interrupted`. `probe` is the spin's look at `fd`: a peek,
    /// or the read itself (whose result the caller keeps), so that input
    /// found spinning costs no second syscall.
    pub(crate) fn wait_with(
        &self,
        fd: RawFd,
        also: &[RawFd],
        deadline: Option<Instant>,
        mut probe: impl FnMut() -> bool,
    ) -> io::Result<(bool, bool)> {
        let mut out = Ok((false, false));
        let mut turn = 0u32;
        let mut input = false;
        let ready = self.spin_then_ready(
            deadline,
            || {
                turn = turn.wrapping_add(1);
                if self.unread.load(Ordering::Relaxed) > 0 {
                    return true;
                }
                input = turn.is_multiple_of(FD_EVERY) && probe();
                input
            },
            || {
                let mut others = [self.fd.as_raw_fd(), -1, -1];
                let n = 1 + also.len().min(2);
                others[1..n].copy_from_slice(&also[..n - 1]);
                out = crate::fdio::wait_in_any(fd, &others[..n], deadline);
                matches!(out, Ok((true, _) | (_, true)))
            },
        );
        if ready && !matches!(out, Ok((true, _) | (_, true))) {
            // The spin saw it.
            return Ok((input, !input));
        }
        out
    }

    fn spin_then_ready(
        &self,
        deadline: Option<Instant>,
        ready: impl FnMut() -> bool,
        block: impl FnOnce() -> bool,
    ) -> bool {
        let Some(spin) = self.busy.begin(deadline) else { return block() };
        let spun = spin.run(ready);
        if spun.ready() {
            self.busy.end(spin, spun, true);
            return true;
        }
        let woken = block();
        self.busy.end(spin, spun, woken);
        woken
    }

    fn poll(&self, timeout: Option<Duration>) -> io::Result<bool> {
        // Rounded up, so a short positive timeout does not become a busy poll.
        let ms = timeout.map_or(-1, crate::wait::ceil_ms) as libc::c_int;
        let mut pfd = libc::pollfd { fd: self.fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: `pfd` is a live, properly initialized array of one pollfd.
        let rc = unsafe { libc::poll(&mut pfd, 1, ms) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(rc > 0 && pfd.revents & libc::POLLIN != 0)
    }

    pub(crate) fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

impl crate::pipe::Wake for Signaler {
    fn wake(&self) {
        self.signal()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Instant;

    #[test]
    fn signal_then_wait_is_ready() {
        let s = Signaler::new().unwrap();
        s.signal();
        assert!(s.wait(Some(Duration::from_millis(1000))).unwrap());
        // wait does not drain
        assert!(s.wait(Some(Duration::ZERO)).unwrap());
    }

    #[test]
    fn wait_times_out_when_not_signalled() {
        let s = Signaler::new().unwrap();
        let t = Instant::now();
        assert!(!s.wait(Some(Duration::from_millis(10))).unwrap());
        assert!(t.elapsed() >= Duration::from_millis(9));
    }

    #[test]
    fn drain_resets() {
        let s = Signaler::new().unwrap();
        s.signal();
        s.signal();
        s.drain();
        assert!(!s.wait(Some(Duration::ZERO)).unwrap());
        s.drain(); // draining an empty eventfd is fine
        s.signal();
        assert!(s.wait(Some(Duration::ZERO)).unwrap());
    }

    #[test]
    fn drain_after_racing_signals_never_leaves_the_fd_readable() {
        // Signals from another thread race drains; once both sides stop,
        // one more drain must leave the fd unreadable (a poller would
        // otherwise spin on it), and a signal must make it readable again.
        let s = Arc::new(Signaler::new().unwrap());
        let s2 = s.clone();
        let t = std::thread::spawn(move || {
            for _ in 0..20_000 {
                s2.signal();
            }
        });
        for _ in 0..20_000 {
            s.drain();
        }
        t.join().unwrap();
        s.drain();
        assert!(!s.wait(Some(Duration::ZERO)).unwrap());
        s.signal();
        assert!(s.wait(Some(Duration::ZERO)).unwrap());
        s.drain();
        assert!(!s.wait(Some(Duration::ZERO)).unwrap());
    }

    #[test]
    fn wakes_another_thread() {
        let s = Arc::new(Signaler::new().unwrap());
        let s2 = s.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            crate::pipe::Wake::wake(&*s2);
        });
        assert!(s.wait(None).unwrap());
        t.join().unwrap();
        assert!(s.raw_fd() >= 0);
    }
}
