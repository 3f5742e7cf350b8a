//! The multicast transports Debian's libzmq5 has: `pgm://` and `epgm://`
//! (OpenPGM, raw IP and UDP-encapsulated) and `norm://` (NRL NORM), on
//! the system libraries (`libpgm-5.3`, `libnorm1`). As in libzmq, only
//! PUB/XPUB (sending) and SUB/XSUB (receiving) take them, bind and connect
//! mean the same, and a publisher's pipe takes every message (there is no
//! upstream for subscriptions; a SUB filters what arrives).
//!
//! Each endpoint is served by a thread of its own that polls the
//! library's descriptors and an eventfd its pipe wakes (as the udp
//! transport has a thread per endpoint), not by an I/O thread.
//! Differences from libzmq: a message that finds the receiving socket at
//! its RCVHWM is dropped whole (libzmq stops reading the source, which
//! the library then may drop from its window anyway), and an endpoint the
//! library refuses (a `pgm://` without CAP_NET_RAW, an interface NORM
//! cannot use) fails the bind/connect where libzmq's I/O thread asserts.

mod codec;
mod norm;
mod pgm;
mod sys;

use crate::error::Error;
use crate::io::EnginePipe;
use crate::msg::Msg;
use crate::options::Options;
use crate::pipe::Wake;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Proto {
    Pgm,
    Epgm,
    Norm,
}

impl Proto {
    pub(crate) fn from_scheme(s: &str) -> Option<Proto> {
        match s {
            "pgm" => Some(Proto::Pgm),
            "epgm" => Some(Proto::Epgm),
            "norm" => Some(Proto::Norm),
            _ => None,
        }
    }
}

/// Validates the address as libzmq does at connect time (EINVAL).
pub(crate) fn check(proto: Proto, addr: &str) -> Result<(), Error> {
    match proto {
        Proto::Pgm | Proto::Epgm => pgm::check(addr),
        Proto::Norm => norm::check(addr),
    }
}

/// Opens the endpoint and starts its thread: a sender for PUB/XPUB, a receiver for SUB/XSUB.
pub(crate) fn spawn(proto: Proto, addr: &str, sender: bool, o: &Options, pipe: EnginePipe) -> Result<(), Error> {
    match proto {
        Proto::Pgm => pgm::spawn(false, addr, sender, o, pipe),
        Proto::Epgm => pgm::spawn(true, addr, sender, o, pipe),
        Proto::Norm => norm::spawn(addr, sender, o, pipe),
    }
}

/// Hands a whole message to the socket, or drops it whole at the RCVHWM.
fn push_message(pipe: &mut EnginePipe, frames: Vec<Msg>) {
    if !pipe.inn.check_write() {
        return;
    }
    for f in frames {
        pipe.inn.write(f);
    }
    pipe.inn.flush();
}

/// C's `atoi` (wrapping instead of undefined on overflow).
fn atoi(s: &str) -> i32 {
    let t = s.trim_start_matches([' ', '\t', '\n', '\x0b', '\x0c', '\r']);
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let mut v: i32 = 0;
    for d in digits.bytes().take_while(u8::is_ascii_digit) {
        v = v.wrapping_mul(10).wrapping_add(i32::from(d - b'0'));
    }
    if neg {
        v.wrapping_neg()
    } else {
        v
    }
}

/// Wakes an endpoint thread blocked in poll when its pipe has news.
pub(crate) struct EventFd(OwnedFd);

impl EventFd {
    fn new() -> Result<EventFd, Error> {
        // SAFETY: plain syscall; the fd is owned at once.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(Error::Io(std::io::Error::last_os_error()));
        }
        // SAFETY: fd is a fresh descriptor nobody else owns.
        Ok(EventFd(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    fn fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }

    fn drain(&self) {
        let mut v = 0u64;
        // SAFETY: an 8-byte read into a live u64 from our nonblocking eventfd.
        unsafe { libc::read(self.fd(), (&mut v as *mut u64).cast(), 8) };
    }
}

impl Wake for EventFd {
    fn wake(&self) {
        let v = 1u64;
        // SAFETY: an 8-byte write from a live u64 to our eventfd; a full counter only means a wake is pending.
        unsafe { libc::write(self.fd(), (&v as *const u64).cast(), 8) };
    }
}

fn poll_fds(fds: &mut [libc::pollfd], timeout_ms: i32) {
    // SAFETY: fds is a live slice of pollfd of the length given.
    unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
}
