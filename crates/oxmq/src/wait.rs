//! How a thread of the core waits: `poll(2)`'s millisecond timeouts (for
//! every wait in the crate and for the bindings), the hook through which a
//! language runtime takes part in a wait, and the wait on a few descriptors
//! that blocking calls use. Below the socket layer: `poll` and the blocking
//! calls above it, and the signaler under it, share it.

use crate::error::{Error, Result};
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

/// A duration in whole milliseconds, rounded up so a wait never ends early
/// (and a short one never becomes a busy poll).
pub fn ceil_millis(d: Duration) -> u128 {
    d.as_nanos().div_ceil(1_000_000)
}

/// [`ceil_millis`] in poll's milliseconds: capped at `i32::MAX`.
pub fn ceil_ms(d: Duration) -> i64 {
    ceil_millis(d).min(i32::MAX as u128) as i64
}

/// `poll(2)`'s timeout for waiting until `deadline`: -1 for none, 0 once it
/// has passed, else [`ceil_ms`] of what is left.
pub fn timeout_ms_until(deadline: Option<Instant>) -> i64 {
    deadline.map_or(-1, |d| ceil_ms(d.saturating_duration_since(Instant::now())))
}

/// How a caller's runtime waits: the core does the waiting (in [`crate::poll_with`]
/// and [`crate::block_with`]), and the hook says what the runtime must do
/// around it. A language runtime that runs other threads while one blocks
/// (Python's GIL, Ruby's GVL) releases its lock in [`WaitHook::park`], and
/// runs its signal handlers or interrupts in [`WaitHook::check`]; each is a
/// few lines. [`CoreWait`] is libzmq's behaviour.
pub trait WaitHook {
    /// The longest a wait may last before [`WaitHook::check`] runs (`None`:
    /// only when a signal interrupts it or [`WaitHook::wake_fd`] fires).
    fn slice(&self) -> Option<Duration> {
        None
    }

    /// A descriptor the runtime makes readable when it wants this thread
    /// back (Ruby's unblocking function writes one): every wait includes it,
    /// and its firing ends the wait with a [`WaitHook::check`].
    fn wake_fd(&self) -> Option<RawFd> {
        None
    }

    /// Run `wait`, the core's blocking part, on this thread with whatever
    /// the runtime releases while a thread blocks. `wait` touches no runtime
    /// object (it is not `Send` only because a socket is not `Sync`; it
    /// never leaves this thread). Not running it (the runtime had an
    /// interrupt pending) is allowed: the core then calls
    /// [`WaitHook::check`] and waits again.
    fn park(&mut self, wait: &mut dyn FnMut()) {
        wait()
    }

    /// A wait was interrupted by a signal, by [`WaitHook::wake_fd`], or its
    /// slice ended; runs with the runtime's lock held. `Ok` waits again (to
    /// the caller's own deadline); an error ends the wait with it.
    fn check(&mut self) -> Result<()>;

    /// Whether the runtime waits on descriptors itself, because its thread
    /// must not block in the kernel (gevent: every greenlet runs on the
    /// hub's thread). Then the core never parks: between its attempts it
    /// calls [`WaitHook::wait_fds`], and everything runs with the runtime's
    /// lock held.
    fn cooperative(&self) -> bool {
        false
    }

    /// A cooperative runtime's wait: until one of `fds` is ready for its
    /// events ([`crate::POLLIN`], [`crate::POLLOUT`]), `until` passes, or the runtime
    /// wants its caller back (a spurious return is fine: the core checks
    /// and waits again). An error ends the call with it.
    fn wait_fds(&mut self, fds: &[(RawFd, i16)], until: Option<Instant>) -> Result<()> {
        let _ = (fds, until);
        Ok(())
    }
}

/// The earlier of a caller's deadline and the end of a runtime's slice.
pub(crate) fn slice_until(deadline: Option<Instant>, slice: Option<Duration>) -> Option<Instant> {
    match (deadline, slice.map(|s| Instant::now() + s)) {
        (Some(d), Some(s)) => Some(d.min(s)),
        (d, s) => d.or(s),
    }
}

/// libzmq's wait: a signal ends it with [`Error::Interrupted`] (EINTR).
pub struct CoreWait;

impl WaitHook for CoreWait {
    fn check(&mut self) -> Result<()> {
        Err(Error::Interrupted)
    }
}

/// Wait until one of `fds` is readable or `deadline` passes. `false` when a
/// signal interrupted the wait or `wake` fired.
pub(crate) fn wait_readable(fds: &[RawFd], wake: Option<RawFd>, deadline: Option<Instant>) -> bool {
    let mut pfds = [libc::pollfd { fd: -1, events: libc::POLLIN, revents: 0 }; 4];
    let all = fds.iter().chain(wake.as_ref());
    let mut n = 0;
    for (p, &fd) in pfds.iter_mut().zip(all) {
        p.fd = fd;
        n += 1;
    }
    let ms = timeout_ms_until(deadline) as libc::c_int;
    // SAFETY: `pfds` holds `n` initialised pollfd structs and lives across the call.
    let rc = unsafe { libc::poll(pfds.as_mut_ptr(), n as libc::nfds_t, ms) };
    if rc < 0 {
        return std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted;
    }
    !(wake.is_some() && pfds[n - 1].revents != 0)
}
