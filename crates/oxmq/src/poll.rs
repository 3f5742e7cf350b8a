//! `poll` over sockets and raw descriptors (libzmq `zmq_poll`).
//!
//! A socket is ready when its pattern says so; while none is, we sleep in
//! `poll(2)` on the sockets' readiness descriptors and the raw ones. Reading a
//! socket's readiness drains its descriptor first, so a wake-up that races
//! with the check re-arms it and is never lost.

use crate::error::{Error, Result};
use crate::options::{POLLERR, POLLIN, POLLOUT};
use crate::socket::Socket;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

/// One entry of a [`poll`] set.
pub struct PollItem<'a> {
    socket: Option<&'a Socket>,
    fd: RawFd,
    events: i16,
    revents: i16,
}

impl<'a> PollItem<'a> {
    /// Watch a socket for `events` ([`POLLIN`] | [`POLLOUT`]).
    pub fn from_socket(socket: &'a Socket, events: i16) -> PollItem<'a> {
        PollItem { socket: Some(socket), fd: -1, events, revents: 0 }
    }

    /// Watch a raw file descriptor for `events`.
    pub fn from_fd(fd: RawFd, events: i16) -> PollItem<'a> {
        PollItem { socket: None, fd, events, revents: 0 }
    }

    /// The events that were ready.
    pub fn revents(&self) -> i16 {
        self.revents
    }

    /// Ready for reading.
    pub fn is_readable(&self) -> bool {
        self.revents & POLLIN != 0
    }

    /// Ready for writing.
    pub fn is_writable(&self) -> bool {
        self.revents & POLLOUT != 0
    }
}

fn to_os_events(ev: i16) -> libc::c_short {
    let mut os = 0;
    if ev & POLLIN != 0 {
        os |= libc::POLLIN;
    }
    if ev & POLLOUT != 0 {
        os |= libc::POLLOUT;
    }
    os
}

fn from_os_events(os: libc::c_short) -> i16 {
    let mut ev = 0;
    if os & libc::POLLIN != 0 {
        ev |= POLLIN;
    }
    if os & libc::POLLOUT != 0 {
        ev |= POLLOUT;
    }
    if os & (libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0 {
        ev |= POLLERR;
    }
    ev
}

/// How a caller's runtime waits: the core's [`poll`] does the waiting, and
/// the hook decides what a signal (or the end of a slice) means. A language
/// runtime that must run signal handlers while a call blocks (Python's
/// `check_signals`, with its lock re-taken) implements it in a few lines;
/// [`CoreWait`] is libzmq's behaviour.
pub trait WaitHook {
    /// The longest a wait may last before [`WaitHook::check`] runs (`None`:
    /// only when a signal interrupts it).
    fn slice(&self) -> Option<Duration> {
        None
    }

    /// A wait was interrupted by a signal or its slice ended. `Ok` waits
    /// again (to the caller's own deadline); an error ends the wait with it.
    fn check(&mut self) -> Result<()>;
}

/// libzmq's wait: a signal ends it with [`Error::Interrupted`] (EINTR).
pub struct CoreWait;

impl WaitHook for CoreWait {
    fn check(&mut self) -> Result<()> {
        Err(Error::Interrupted)
    }
}

/// [`poll`], with `hook` deciding what a signal means and how often it is
/// asked. `timeout_ms` as for [`poll`]; the slices do not extend it.
pub fn poll_with(items: &mut [PollItem<'_>], timeout_ms: i64, hook: &mut dyn WaitHook) -> Result<usize> {
    let deadline = (timeout_ms > 0).then(|| Instant::now() + Duration::from_millis(timeout_ms as u64));
    loop {
        let left_ms = match deadline {
            Some(d) => ceil_ms(d.saturating_duration_since(Instant::now())),
            None => timeout_ms,
        };
        let (wait_ms, sliced) = match hook.slice().map(ceil_ms) {
            Some(s) if left_ms < 0 || s < left_ms => (s, true),
            _ => (left_ms, false),
        };
        match poll(items, wait_ms) {
            Ok(0) if sliced => hook.check()?,
            Err(Error::Interrupted) => hook.check()?,
            other => return other,
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Ok(0);
        }
    }
}

/// A duration in poll's milliseconds, rounded up so a wait never ends early.
fn ceil_ms(d: Duration) -> i64 {
    d.as_millis().min(i32::MAX as u128) as i64 + (!d.subsec_nanos().is_multiple_of(1_000_000)) as i64
}

/// Wait until at least one item is ready or `timeout_ms` passes (-1: forever,
/// 0: just check). Returns how many items are ready; see [`PollItem::revents`].
///
/// Like libzmq's `zmq_poll`, each pass calls `poll(2)` first (the first pass
/// with a zero timeout) and reads the sockets' readiness after it. So a raw
/// item holding a socket's own `ZMQ_FD` sees that descriptor as it was
/// before this call drained it (CZMQ's zpoller and binding event loops rely
/// on that), and a wake-up racing with the readiness check re-arms the
/// descriptor for the next pass, so none is lost.
pub fn poll(items: &mut [PollItem<'_>], timeout_ms: i64) -> Result<usize> {
    let mut fds: Vec<libc::pollfd> = Vec::with_capacity(items.len());
    for item in items.iter() {
        fds.push(match item.socket {
            Some(s) => libc::pollfd { fd: s.readiness_fd()?, events: libc::POLLIN, revents: 0 },
            None => libc::pollfd { fd: item.fd, events: to_os_events(item.events), revents: 0 },
        });
    }
    let mut deadline: Option<Instant> = None;
    let mut first = true;
    loop {
        let wait_ms: libc::c_int = if first || timeout_ms == 0 {
            0
        } else if timeout_ms < 0 {
            -1
        } else {
            let d = deadline.unwrap_or_else(Instant::now);
            let left = d.saturating_duration_since(Instant::now());
            left.as_millis().min(i32::MAX as u128) as libc::c_int
                + (!left.subsec_nanos().is_multiple_of(1_000_000)) as libc::c_int
        };
        if !first && timeout_ms > 0 && wait_ms == 0 {
            return Ok(0);
        }
        // SAFETY: `fds` is a valid, initialised array of `fds.len()` pollfd structs
        // that lives across the call.
        let rc = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, wait_ms) };
        if rc < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                return Err(Error::Interrupted);
            }
            return Err(Error::Io(e));
        }
        let mut ready = 0;
        for (item, pfd) in items.iter_mut().zip(fds.iter_mut()) {
            item.revents = match item.socket {
                Some(s) => s.poll_events()? & item.events,
                None => from_os_events(pfd.revents) & (item.events | POLLERR),
            };
            pfd.revents = 0;
            if item.revents != 0 {
                ready += 1;
            }
        }
        if ready > 0 || timeout_ms == 0 {
            return Ok(ready);
        }
        if first && timeout_ms > 0 {
            deadline = Some(Instant::now() + Duration::from_millis(timeout_ms as u64));
        }
        first = false;
    }
}
