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
