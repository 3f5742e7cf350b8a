//! The multicast transports Debian's libzmq5 has: `pgm://` and `epgm://`
//! (OpenPGM, raw IP and UDP-encapsulated) and `norm://` (NRL NORM), on
//! the system libraries (`libpgm-5.3`, `libnorm1`), loaded at run time on
//! first use (`sys`), so nothing built on oxmq needs them to load; without
//! them the transports are unknown (EPROTONOSUPPORT, `zmq_has` 0), as in a
//! libzmq built without them. As in libzmq, only
//! PUB/XPUB (sending) and SUB/XSUB (receiving) take them, bind and connect
//! mean the same, and a publisher's pipe takes every message (there is no
//! upstream for subscriptions; a SUB filters what arrives).
//!
//! Each endpoint is an engine (`transport::packet`) in one of the
//! context's I/O threads, which polls the library's descriptors (OpenPGM's
//! PGM_SEND/RECV/REPAIR/PENDING_SOCK, NORM's NormGetDescriptor) next to tcp
//! and ipc connections, and runs it on their edges, on its pipe's wake-ups
//! and on the library's timers.
//! Differences from libzmq: a message that finds the receiving socket at
//! its RCVHWM is dropped whole (libzmq stops reading the source, which
//! the library then may drop from its window anyway), and an endpoint the
//! library refuses (a `pgm://` without CAP_NET_RAW, an interface NORM
//! cannot use) fails the bind/connect where libzmq's I/O thread asserts.

mod codec;
mod norm;
mod pgm;
mod sys;

use crate::channel::pipes::EnginePipe;
use crate::error::Error;
use crate::msg::Msg;
use crate::options::Options;
use crate::transport::packet::PacketEngine;

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

/// Loads the transport's library if it is not yet loaded; a library that
/// cannot be loaded makes the transport unknown (EPROTONOSUPPORT).
pub(crate) fn load(proto: Proto) -> Result<(), Error> {
    match proto {
        Proto::Pgm | Proto::Epgm => sys::pgm_api().map(drop),
        Proto::Norm => sys::norm_api().map(drop),
    }
}

/// `zmq_has` for "pgm" (pgm:// and epgm://) and "norm": whether the
/// library loads.
pub(crate) fn available(capability: &str) -> bool {
    match capability {
        "pgm" => load(Proto::Pgm).is_ok(),
        "norm" => load(Proto::Norm).is_ok(),
        _ => false,
    }
}

/// Validates the address as libzmq does at connect time (EINVAL).
pub(crate) fn check(proto: Proto, addr: &str) -> Result<(), Error> {
    load(proto)?;
    match proto {
        Proto::Pgm | Proto::Epgm => pgm::check(addr),
        Proto::Norm => norm::check(addr),
    }
}

pub(crate) fn engine(
    proto: Proto,
    addr: &str,
    sender: bool,
    o: &Options,
    pipe: EnginePipe,
) -> Result<Box<dyn PacketEngine>, Error> {
    load(proto)?;
    match proto {
        Proto::Pgm => pgm::engine(false, addr, sender, o, pipe),
        Proto::Epgm => pgm::engine(true, addr, sender, o, pipe),
        Proto::Norm => norm::engine(addr, sender, o, pipe),
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
