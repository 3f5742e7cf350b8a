//! Writes to a connection's fd shared by the I/O thread (`io::stream`) and
//! a sending thread that writes a large message itself (`channel::direct`):
//! below both, so neither layer imports the other for it.

use std::io::{self, IoSlice};
use std::os::fd::RawFd;

/// One `sendmsg` of all `bufs` that never blocks (MSG_DONTWAIT, whatever
/// the fd's mode), for a sender writing a connection's fd on the engine's
/// behalf (`channel::direct`).
pub(crate) fn send_nonblocking(fd: RawFd, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
    sendmsg(fd, bufs, libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT)
}

pub(crate) fn sendmsg(fd: RawFd, bufs: &[IoSlice<'_>], flags: libc::c_int) -> io::Result<usize> {
    // SAFETY: a zeroed msghdr is a valid "no address, no control" header.
    let mut hdr: libc::msghdr = unsafe { std::mem::zeroed() };
    // IoSlice is ABI-compatible with iovec on Unix (documented guarantee).
    hdr.msg_iov = bufs.as_ptr() as *mut libc::iovec;
    hdr.msg_iovlen = bufs.len() as _;
    loop {
        // SAFETY: `hdr` points at `bufs`, which outlive the call and are
        // only read by the kernel.
        let n = unsafe { libc::sendmsg(fd, &hdr, flags) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Wait up to `timeout` for `fd` to take writes; also `true` on an error
/// or hang-up, which the next write reports.
pub(crate) fn wait_writable(fd: RawFd, timeout: std::time::Duration) -> bool {
    let mut pfd = libc::pollfd { fd, events: libc::POLLOUT, revents: 0 };
    let ms = timeout.as_millis().clamp(1, i32::MAX as u128) as libc::c_int;
    // SAFETY: one valid pollfd for the duration of the call.
    let rc = unsafe { libc::poll(&mut pfd, 1, ms) };
    rc > 0
}

/// One `recv` into `buf` that never blocks, for a receiving thread reading
/// a connection's fd on the engine's behalf (`channel::direct_read`).
pub(crate) fn recv_nonblocking(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        // SAFETY: the kernel writes at most `buf.len()` bytes into `buf`,
        // which is borrowed mutably for the call.
        let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Wait until `fd` or one of `others` (at most three) is readable (an
/// error or hang-up counts for `fd`: the next read reports it) or
/// `deadline` passes: whether `fd` fired and whether any of `others` did,
/// `(false, false)` at the deadline. A signal ends the wait with
/// `Interrupted`.
pub(crate) fn wait_in_any(
    fd: RawFd,
    others: &[RawFd],
    deadline: Option<std::time::Instant>,
) -> io::Result<(bool, bool)> {
    let mut pfds = [libc::pollfd { fd: -1, events: libc::POLLIN, revents: 0 }; 4];
    pfds[0].fd = fd;
    let n = 1 + others.len().min(3);
    for (p, &o) in pfds[1..n].iter_mut().zip(others) {
        p.fd = o;
    }
    let ms = crate::wait::timeout_ms_until(deadline) as libc::c_int;
    // SAFETY: `pfds` holds `n` initialised pollfd structs and outlives the call.
    let rc = unsafe { libc::poll(pfds.as_mut_ptr(), n as libc::nfds_t, ms) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((pfds[0].revents != 0, pfds[1..n].iter().any(|p| p.revents != 0)))
}

/// Whether a read of `fd` would not block: bytes are there, or the EOF or
/// an error the read would report (one `recv` with MSG_PEEK, which takes
/// nothing).
pub(crate) fn has_input(fd: RawFd) -> bool {
    let mut byte = 0u8;
    // SAFETY: the kernel writes at most one byte into `byte`, a live local.
    let n = unsafe { libc::recv(fd, (&mut byte as *mut u8).cast(), 1, libc::MSG_PEEK | libc::MSG_DONTWAIT) };
    n >= 0 || io::Error::last_os_error().kind() != io::ErrorKind::WouldBlock
}

/// `epoll_ctl(EPOLL_CTL_MOD)` of `fd`'s registration in `epfd`: `events`,
/// and `data` as the registration's token (mio's layout: the token in the
/// event's `u64`).
pub(crate) fn epoll_modify(epfd: RawFd, fd: RawFd, events: u32, data: u64) -> io::Result<()> {
    let mut ev = libc::epoll_event { events, u64: data };
    // SAFETY: `ev` is a live, initialised epoll_event for the call.
    if unsafe { libc::epoll_ctl(epfd, libc::EPOLL_CTL_MOD, fd, &mut ev) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// One `recv` of at most `limit` bytes into `buf`'s spare capacity that
/// never blocks (a large body a receiving thread reads itself).
pub(crate) fn recv_into_spare(fd: RawFd, buf: &mut Vec<u8>, limit: usize) -> io::Result<usize> {
    let spare = buf.spare_capacity_mut();
    let take = limit.min(spare.len());
    let n = loop {
        // SAFETY: `spare` is writable memory of at least `take` bytes; the
        // kernel writes at most that many into it.
        let n = unsafe { libc::recv(fd, spare.as_mut_ptr().cast(), take, libc::MSG_DONTWAIT) };
        if n >= 0 {
            break n as usize;
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    };
    // SAFETY: the kernel initialised the first `n` spare bytes.
    unsafe { buf.set_len(buf.len() + n) };
    Ok(n)
}
