//! The RADIO's and the DISH's engines: what the I/O thread runs for a
//! udp:// endpoint.

use super::socket::{pump_in, Outbox, Sent, RECV_BUF};
use super::{decode, encode};
use crate::channel::pipes::EnginePipe;
use crate::msg::Msg;
use crate::pipe::PipeReader;
use crate::transport::packet::{PacketEngine, Step};
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::{AsRawFd, RawFd};

/// RADIO: each message the socket queues (a group frame, then a body
/// frame) becomes one datagram to `target`; one too large is dropped.
pub(crate) fn radio(sock: UdpSocket, target: SocketAddr, pipe: EnginePipe) -> Box<dyn PacketEngine> {
    Box::new(Radio { sock, target, outbox: Outbox::new(), pipe })
}

/// DISH: each well-formed datagram becomes a group frame and a body frame
/// in the pipe; malformed or oversized ones, and any that find the pipe at
/// its HWM, are dropped. Joins and leaves from the socket are dropped
/// (libzmq's `restart_output` for a receive-only udp engine).
pub(crate) fn dish(sock: UdpSocket, pipe: EnginePipe) -> Box<dyn PacketEngine> {
    Box::new(Dish { sock, buf: vec![0; RECV_BUF], pipe })
}

struct Radio {
    sock: UdpSocket,
    target: SocketAddr,
    outbox: Outbox,
    // The whole pipe, though only `out` is read: dropping `inn` would tell
    // the socket this peer is gone.
    pipe: EnginePipe,
}

/// The next message of a RADIO's pipe as a datagram; internal frames and
/// messages that do not fit are skipped.
fn next_datagram(out: &mut PipeReader) -> Option<Msg> {
    while let Some(group) = out.read() {
        if group.is_internal() || !group.more() {
            continue;
        }
        // Messages are published whole, so the body is there.
        let body = out.read()?;
        if let Some(d) = encode(group.as_slice(), body.as_slice()) {
            return Some(Msg::from(d));
        }
    }
    None
}

impl PacketEngine for Radio {
    fn fds(&self) -> Vec<(RawFd, bool)> {
        vec![(self.sock.as_raw_fd(), false)]
    }

    fn pipe(&mut self) -> &mut EnginePipe {
        &mut self.pipe
    }

    fn step(&mut self) -> Step {
        let (out, target) = (&mut self.pipe.out, self.target);
        match self.outbox.pump(&self.sock, || next_datagram(out).map(|d| (target, d))) {
            Sent::More => Step::Again,
            Sent::Blocked => Step::WaitWritable,
            // What the socket queued before it closed has been sent.
            Sent::All if self.pipe.out.is_terminated() => Step::Done,
            Sent::All => Step::Wait(None),
        }
    }
}

struct Dish {
    sock: UdpSocket,
    buf: Vec<u8>,
    pipe: EnginePipe,
}

impl PacketEngine for Dish {
    fn fds(&self) -> Vec<(RawFd, bool)> {
        vec![(self.sock.as_raw_fd(), false)]
    }

    fn pipe(&mut self) -> &mut EnginePipe {
        &mut self.pipe
    }

    fn step(&mut self) -> Step {
        while self.pipe.out.read().is_some() {}
        if self.pipe.inn.is_reader_gone() || self.pipe.out.is_terminated() {
            return Step::Done;
        }
        let inn = &mut self.pipe.inn;
        let more = pump_in(&self.sock, &mut self.buf, |d, _| {
            let Some((group, body)) = decode(d) else { return };
            if inn.check_write() {
                inn.write(Msg::from_slice(group).with_more(true));
                inn.write(Msg::from_slice(body));
                inn.flush();
            }
        });
        if more {
            Step::Again
        } else {
            Step::Wait(None)
        }
    }
}
