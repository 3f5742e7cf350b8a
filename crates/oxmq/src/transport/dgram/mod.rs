//! Draft DGRAM over `udp://` (libzmq 4.3.5's udp engine in raw mode).
//!
//! A DGRAM binds one UDP socket that both receives and sends, so a peer's
//! reply to the address it saw reaches the same socket. Datagrams carry no
//! framing: a received one becomes `[sender "a.b.c.d:port\0"][payload]` (the
//! address frame ends in a NUL byte, as libzmq's does), and a message sent
//! as `[address][body]` becomes one datagram of `body` sent to `address`.
//!
//! libzmq resolves that address frame with `inet_addr` and `atoi` (IPv4
//! only, no names; `addr`); a message whose address does not resolve is
//! dropped, as libzmq drops it. Datagrams larger than libzmq's 8192-byte
//! buffer are dropped whole both ways: libzmq truncates received ones to
//! 8192 bytes, which would hand the application a corrupted payload.
//!
//! The socket is opened and bound as a DISH's (`transport::udp`), and one
//! packet engine in the I/O thread both sends and receives on it, run on
//! the socket's edges and on its pipe's wake-ups.

mod addr;

use crate::channel::pipes::EnginePipe;
use crate::msg::Msg;
use crate::pipe::PipeReader;
use crate::transport::packet::{PacketEngine, Step};
use crate::transport::udp::{pump_in, Outbox, Sent, MAX_UDP_MSG, RECV_BUF};
use addr::{address_frame, destination};
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::{AsRawFd, RawFd};

/// The engine of a bound DGRAM socket: sends what the socket queues,
/// delivers what arrives; done when the socket lets go of the pipe.
pub(crate) fn engine(sock: UdpSocket, pipe: EnginePipe) -> Box<dyn PacketEngine> {
    Box::new(Dgram { sock, buf: vec![0; RECV_BUF], outbox: Outbox::new(), pipe })
}

struct Dgram {
    sock: UdpSocket,
    buf: Vec<u8>,
    outbox: Outbox,
    pipe: EnginePipe,
}

/// The next `[address][body]` message of the pipe as a datagram and where
/// it goes; one whose address does not resolve, or too large, is skipped.
fn next_datagram(out: &mut PipeReader) -> Option<(SocketAddr, Msg)> {
    while let Some(addr) = out.read() {
        if addr.is_internal() || !addr.more() {
            continue;
        }
        // Messages are published whole, so the body is there.
        let body = out.read()?;
        match destination(addr.as_slice()) {
            Some(to) if body.len() <= MAX_UDP_MSG => return Some((SocketAddr::V4(to), body)),
            _ => {}
        }
    }
    None
}

impl PacketEngine for Dgram {
    fn fds(&self) -> Vec<(RawFd, bool)> {
        vec![(self.sock.as_raw_fd(), false)]
    }

    fn pipe(&mut self) -> &mut EnginePipe {
        &mut self.pipe
    }

    fn step(&mut self) -> Step {
        let out = &mut self.pipe.out;
        let sent = self.outbox.pump(&self.sock, || next_datagram(out));
        let inn = &mut self.pipe.inn;
        let more_in = !inn.is_reader_gone()
            && pump_in(&self.sock, &mut self.buf, |d, from| {
                let Some(addr) = address_frame(from) else { return };
                // A datagram that finds the pipe at its HWM is dropped whole.
                if inn.check_write() {
                    inn.write(Msg::from_slice(&addr).with_more(true));
                    inn.write(Msg::from_slice(d));
                    inn.flush();
                }
            });
        match sent {
            Sent::More => Step::Again,
            _ if more_in => Step::Again,
            Sent::Blocked => Step::WaitWritable,
            // What the socket queued before it closed has been sent.
            Sent::All if self.pipe.out.is_terminated() && inn.is_reader_gone() => Step::Done,
            Sent::All => Step::Wait(None),
        }
    }
}
