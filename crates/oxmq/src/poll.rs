//! `poll` over sockets and raw descriptors (libzmq `zmq_poll`).
//!
//! A socket is ready when its pattern says so; while none is, we sleep in
//! `poll(2)` on the sockets' readiness descriptors and the raw ones. Reading a
//! socket's readiness drains its descriptor first, so a wake-up that races
//! with the check re-arms it and is never lost.

use crate::blocking::SocketAccess;
use crate::error::{Error, Result};
use crate::options::{POLLERR, POLLIN, POLLOUT};
use crate::socket::Socket;
use crate::wait::{ceil_ms, slice_until, timeout_ms_until, WaitHook};
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

/// What [`poll`] asks of a socket: its readiness descriptor, and its
/// events once that fired. Every [`SocketAccess`] is one, so a binding polls
/// its sockets through its own access, reaching each only for a check and
/// never while parked.
pub trait PollSource {
    /// The descriptor that fires when the socket's events may have changed.
    fn readiness_fd(&self) -> Result<RawFd>;
    /// The socket's events, after handling what other threads queued for it
    /// (ETERM once its context is terminated).
    fn poll_events(&self) -> Result<i16>;
}

impl<A: SocketAccess + ?Sized> PollSource for A {
    fn readiness_fd(&self) -> Result<RawFd> {
        self.enter(|s| s.readiness_fd())
    }

    fn poll_events(&self) -> Result<i16> {
        self.enter(|s| s.poll_events())
    }
}

/// One entry of a [`poll`] set.
pub struct PollItem<'a> {
    socket: Option<&'a dyn PollSource>,
    fd: RawFd,
    events: i16,
    revents: i16,
}

impl<'a> PollItem<'a> {
    /// Watch a socket for `events` ([`POLLIN`] | [`POLLOUT`]).
    pub fn from_socket(socket: &'a Socket, events: i16) -> PollItem<'a> {
        PollItem { socket: Some(socket), fd: -1, events, revents: 0 }
    }

    /// Watch a socket that a binding reaches through its own access.
    pub fn from_source(source: &'a dyn PollSource, events: i16) -> PollItem<'a> {
        PollItem { socket: Some(source), fd: -1, events, revents: 0 }
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

/// [`poll`], with `hook` deciding what a signal means, how often it is asked,
/// and what the runtime releases while this waits. `timeout_ms` as for
/// [`poll`]; the slices do not extend it. A first look runs before any
/// release, so a ready item costs the runtime nothing.
pub fn poll_with(items: &mut [PollItem<'_>], timeout_ms: i64, hook: &mut dyn WaitHook) -> Result<usize> {
    let deadline = (timeout_ms > 0).then(|| Instant::now() + Duration::from_millis(timeout_ms as u64));
    let wake = hook.wake_fd();
    let (ready, _) = poll_fds(items, wake, 0)?;
    if ready > 0 || timeout_ms == 0 {
        return Ok(ready);
    }
    if hook.cooperative() {
        return poll_cooperative(items, deadline, hook);
    }
    loop {
        let left_ms = timeout_ms_until(deadline);
        if left_ms == 0 {
            return Ok(0);
        }
        let (wait_ms, sliced) = match hook.slice().map(ceil_ms) {
            Some(s) if left_ms < 0 || s < left_ms => (s, true),
            _ => (left_ms, false),
        };
        let mut out = None;
        hook.park(&mut || out = Some(poll_fds(items, wake, wait_ms)));
        match out {
            Some(Ok((n, _))) if n > 0 => return Ok(n),
            Some(Ok((_, woken))) if woken || sliced => hook.check()?,
            Some(Ok(_)) => {}
            Some(Err(Error::Interrupted)) | None => hook.check()?,
            Some(Err(e)) => return Err(e),
        }
    }
}

/// [`poll_with`] for a cooperative runtime: the runtime waits on the items'
/// descriptors (a socket's readiness descriptor for reading, whatever it
/// asks of it), then a zero-timeout pass reads the items.
fn poll_cooperative(items: &mut [PollItem<'_>], deadline: Option<Instant>, hook: &mut dyn WaitHook) -> Result<usize> {
    let fds = items
        .iter()
        .map(|item| match item.socket {
            Some(s) => Ok((s.readiness_fd()?, POLLIN)),
            None => Ok((item.fd, item.events & (POLLIN | POLLOUT))),
        })
        .collect::<Result<Vec<_>>>()?;
    loop {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Ok(0);
        }
        hook.wait_fds(&fds, slice_until(deadline, hook.slice()))?;
        let (ready, _) = poll_fds(items, None, 0)?;
        if ready > 0 {
            return Ok(ready);
        }
    }
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
    poll_fds(items, None, timeout_ms).map(|(ready, _)| ready)
}

/// [`poll`], also ending (with `true`) when `wake` becomes readable.
fn poll_fds(items: &mut [PollItem<'_>], wake: Option<RawFd>, timeout_ms: i64) -> Result<(usize, bool)> {
    let mut fds: Vec<libc::pollfd> = Vec::with_capacity(items.len() + 1);
    for item in items.iter() {
        fds.push(match item.socket {
            Some(s) => libc::pollfd { fd: s.readiness_fd()?, events: libc::POLLIN, revents: 0 },
            None => libc::pollfd { fd: item.fd, events: to_os_events(item.events), revents: 0 },
        });
    }
    if let Some(fd) = wake {
        fds.push(libc::pollfd { fd, events: libc::POLLIN, revents: 0 });
    }
    let mut deadline: Option<Instant> = None;
    let mut first = true;
    loop {
        let wait_ms: libc::c_int = if first || timeout_ms == 0 {
            0
        } else if timeout_ms < 0 {
            -1
        } else {
            timeout_ms_until(Some(deadline.unwrap_or_else(Instant::now))) as libc::c_int
        };
        if !first && timeout_ms > 0 && wait_ms == 0 {
            return Ok((0, false));
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
        let woken = wake.is_some() && fds.last().is_some_and(|p| p.revents != 0);
        if ready > 0 || woken || timeout_ms == 0 {
            return Ok((ready, woken));
        }
        if first && timeout_ms > 0 {
            deadline = Some(Instant::now() + Duration::from_millis(timeout_ms as u64));
        }
        first = false;
    }
}
