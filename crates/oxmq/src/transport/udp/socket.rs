//! The UDP socket under a udp:// endpoint: opened as libzmq sets it up, in
//! the caller's thread (so errors reach bind/connect), non-blocking, and
//! pumped by the I/O thread without blocking in either direction.

use super::addr::UdpAddr;
use super::MAX_UDP_MSG;
use crate::error::Error;
use crate::msg::Msg;
use crate::options::Options;
use socket2::{Domain, Protocol, SockAddr, Socket, Type};
use std::io::ErrorKind;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};

/// Datagrams sent, or read, per run of an engine: one busy endpoint cannot
/// hold the I/O thread from the others.
const BUDGET: usize = 256;

/// Room for any UDP payload, so that an oversized datagram is seen whole
/// (and dropped) rather than truncated.
pub(crate) const RECV_BUF: usize = 65536;

fn domain(ip: IpAddr) -> Domain {
    if ip.is_ipv4() {
        Domain::IPV4
    } else {
        Domain::IPV6
    }
}

/// The RADIO side: a socket that sends to `addr.target`. It is left
/// unconnected and each datagram goes out with sendto, as libzmq's do, so a
/// target without a route yet fails no zmq_connect.
pub(crate) fn open_sender(addr: &UdpAddr, options: &Options) -> Result<UdpSocket, Error> {
    let s = Socket::new(domain(addr.target.ip()), Type::DGRAM, Some(Protocol::UDP))?;
    s.set_nonblocking(true)?;
    if addr.is_multicast() {
        let hops = options.multicast_hops;
        match addr.target.ip() {
            IpAddr::V4(_) => {
                s.set_multicast_loop_v4(options.multicast_loop)?;
                if hops > 0 {
                    s.set_multicast_ttl_v4(hops as u32)?;
                }
                if let Some(IpAddr::V4(i)) = addr.iface.filter(|i| !i.is_unspecified()) {
                    s.set_multicast_if_v4(&i)?;
                }
            }
            IpAddr::V6(_) => {
                s.set_multicast_loop_v6(options.multicast_loop)?;
                if hops > 0 {
                    s.set_multicast_hops_v6(hops as u32)?;
                }
            }
        }
    }
    Ok(s.into())
}

/// The DISH (and DGRAM) side: bound, and a member of the group when `addr`
/// is multicast.
pub(crate) fn open_receiver(addr: &UdpAddr) -> Result<UdpSocket, Error> {
    let ip = addr.target.ip();
    let s = Socket::new(domain(ip), Type::DGRAM, Some(Protocol::UDP))?;
    s.set_nonblocking(true)?;
    s.set_reuse_address(true)?;
    let bind_ip = if addr.is_multicast() {
        // Every socket of the group on this port receives each datagram.
        s.set_reuse_port(true)?;
        if ip.is_ipv4() {
            IpAddr::V4(Ipv4Addr::UNSPECIFIED)
        } else {
            IpAddr::V6(Ipv6Addr::UNSPECIFIED)
        }
    } else {
        ip
    };
    s.bind(&SockAddr::from(SocketAddr::new(bind_ip, addr.target.port())))?;
    match ip {
        IpAddr::V4(group) if group.is_multicast() => {
            let iface = match addr.iface {
                Some(IpAddr::V4(i)) => i,
                _ => Ipv4Addr::UNSPECIFIED,
            };
            s.join_multicast_v4(&group, &iface)?;
        }
        IpAddr::V6(group) if group.is_multicast() => s.join_multicast_v6(&group, 0)?,
        _ => {}
    }
    Ok(s.into())
}

/// How far an [`Outbox`] got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sent {
    /// Everything the pipe had.
    All,
    /// The kernel had no room: a datagram waits for the writable edge.
    Blocked,
    /// The budget ran out with more to send.
    More,
}

/// The sending half of an engine: datagrams taken from the socket's pipe go
/// out through the UDP socket; one the kernel has no room for waits here
/// for the socket's writable edge, and the pipe is not read meanwhile (so
/// SNDHWM holds back the application, as a blocking send did before).
pub(crate) struct Outbox {
    pending: Option<(SocketAddr, Msg)>,
}

impl Outbox {
    pub(crate) fn new() -> Outbox {
        Outbox { pending: None }
    }

    /// Sends datagrams from `next` until it has none, the kernel has no
    /// room or the budget runs out.
    pub(crate) fn pump(&mut self, sock: &UdpSocket, mut next: impl FnMut() -> Option<(SocketAddr, Msg)>) -> Sent {
        for _ in 0..BUDGET {
            if self.pending.is_none() {
                self.pending = next();
            }
            let Some((to, d)) = &self.pending else { return Sent::All };
            match sock.send_to(d.as_slice(), *to) {
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Sent::Blocked,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                // Sent, or refused (no route, an ICMP error from an earlier
                // datagram): UDP is lossy, and libzmq drops it too.
                _ => self.pending = None,
            }
        }
        Sent::More
    }
}

/// Reads datagrams until the kernel has none; each of at most
/// `MAX_UDP_MSG` bytes goes to `deliver` with its sender, larger ones are
/// dropped whole (libzmq reads into an 8192-byte buffer). Returns `true`
/// when the budget ran out with more perhaps waiting.
pub(crate) fn pump_in(sock: &UdpSocket, buf: &mut [u8], mut deliver: impl FnMut(&[u8], SocketAddr)) -> bool {
    for _ in 0..BUDGET {
        match sock.recv_from(buf) {
            Ok((n, from)) if n <= MAX_UDP_MSG => deliver(&buf[..n], from),
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => return false,
            // EINTR, or a socket error the kernel reports once: read on.
            Err(_) => {}
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::super::addr::parse;
    use super::*;

    #[test]
    fn multicast_options_reach_the_sending_socket() {
        let mut o = Options { multicast_loop: false, multicast_hops: 7, ..Default::default() };
        let a = parse("127.0.0.1;239.193.7.9:5555", false, false).unwrap();
        let s = open_sender(&a, &o).unwrap();
        assert!(!s.multicast_loop_v4().unwrap());
        assert_eq!(s.multicast_ttl_v4().unwrap(), 7);
        o.multicast_loop = true;
        let s = open_sender(&a, &o).unwrap();
        assert!(s.multicast_loop_v4().unwrap());
    }
}
