//! Draft RADIO/DISH: the `udp://` transport, as libzmq 4.3.5 does it
//! (`udp_address.cpp`, `udp_engine.cpp`).
//!
//! Endpoints: `udp://[iface;]host:port` (`iface`: an address, `*` or an
//! interface name). A RADIO connects to a unicast or
//! multicast `host:port`; a DISH binds `*:port`, `ip:port` or a multicast
//! `group:port` (joining the group on `iface`, or on the kernel's default
//! interface when none is given). An `iface;` part is only valid before a
//! multicast address.
//!
//! Each message is one datagram: `[group length: u8][group][body]`. There is
//! no handshake: a RADIO's udp pipe takes every group (it cannot hear
//! joins), and the DISH filters by its own joins.
//!
//! Each udp endpoint is served by its own thread rather than by an I/O
//! thread: a RADIO's waits on its pipe, a DISH's in `recv` with a short
//! timeout so that it notices when the socket lets go of the pipe.

use crate::error::Error;
use crate::io::EnginePipe;
use crate::msg::Msg;
use crate::options::Options;
use crate::pipe::Wake;
use socket2::{Domain, Protocol, SockAddr, Socket, Type};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs, UdpSocket};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// libzmq's `MAX_UDP_MSG`: the largest datagram it reads (and the size of
/// its send buffer). Larger datagrams are dropped here, on both sides.
pub(crate) const MAX_UDP_MSG: usize = 8192;

/// How often a DISH's thread looks whether its socket is still there.
const RECV_POLL: Duration = Duration::from_millis(50);

/// A resolved `udp://` address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UdpAddr {
    /// Where datagrams go (RADIO) or the group joined / address bound (DISH).
    pub(crate) target: SocketAddr,
    /// The `iface;` part: for multicast, the interface's address.
    pub(crate) iface: Option<IpAddr>,
}

impl UdpAddr {
    fn is_multicast(&self) -> bool {
        self.target.ip().is_multicast()
    }
}

fn literal_ip(host: &str) -> Option<IpAddr> {
    let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    host.parse().ok()
}

/// A udp port as libzmq 4.3.5's resolver reads it (measured): `*` on the
/// binding side and `0` are port 0; anything else goes through C's `atoi`
/// and is cut to 16 bits (`70000` is 4464, `-1` 65535, `5555x` 5555), and
/// what comes out as 0 is EINVAL.
fn parse_port(p: &str, bind: bool) -> Result<u16, Error> {
    match p {
        "*" if bind => return Ok(0),
        "0" => return Ok(0),
        _ => {}
    }
    let t = p.trim_start_matches([' ', '\t', '\n', '\x0b', '\x0c', '\r']);
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    // strtol's value, saturated to a 64-bit long as glibc's is.
    let mut v: i128 = 0;
    for d in digits.bytes().take_while(u8::is_ascii_digit) {
        v = (v * 10 + i128::from(d - b'0')).min(i128::from(i64::MAX) + 1);
    }
    let v = if neg { (-v).max(i128::from(i64::MIN)) } else { v.min(i128::from(i64::MAX)) };
    match v as i64 as u16 {
        0 => Err(Error::Invalid("bad udp port")),
        port => Ok(port),
    }
}

/// Parse the part after `udp://`. `bind` is the DISH side: a `*` host and a
/// `*` port are allowed there only (port 0 on either side), names are not
/// resolved (libzmq's resolver options for udp: DNS for the sending side
/// only).
pub(crate) fn parse(addr: &str, bind: bool, ipv6: bool) -> Result<UdpAddr, Error> {
    let (iface, rest) = match addr.rsplit_once(';') {
        Some((i, r)) => (Some(i), r),
        None => (None, addr),
    };
    // libzmq resolves the `iface;` part first: a name that is no interface
    // (or an empty one) is ENODEV whatever follows.
    if let Some(i) = iface.filter(|&i| i != "*" && literal_ip(i).is_none()) {
        nic_address(i, true).or_else(|_| nic_address(i, false))?;
    }
    let (host, port) = rest.rsplit_once(':').ok_or(Error::Invalid("udp endpoint needs host:port"))?;
    let port = parse_port(port, bind)?;
    let any = if ipv6 { IpAddr::V6(Ipv6Addr::UNSPECIFIED) } else { IpAddr::V4(Ipv4Addr::UNSPECIFIED) };
    let ip = if host == "*" && bind {
        any
    } else if let Some(ip) = literal_ip(host) {
        ip
    } else if !bind && !host.is_empty() {
        (host, port)
            .to_socket_addrs()
            .map_err(|_| Error::Invalid("udp host does not resolve"))?
            .map(|a| a.ip())
            .find(|ip| ipv6 || ip.is_ipv4())
            .ok_or(Error::Invalid("udp host does not resolve"))?
    } else if bind {
        // libzmq binds an interface name (allow_nic_name): its address, or
        // ENODEV when there is no such interface (an empty name included).
        nic_address(host, !ipv6)
            .or_else(|e| if ipv6 { nic_address(host, true) } else { Err(e) })
            // Failing that, a name the resolver knows (libzmq 4.3.5 binds
            // `localhost` or the host's name from /etc/hosts); else ENODEV.
            .or_else(|e| resolve_name(host, port, ipv6).ok_or(e))?
    } else {
        return Err(Error::Invalid("udp host must be an IP address or *"));
    };
    if ip.is_ipv6() && !ipv6 {
        // libzmq's bind, failing the address, tries it as an interface name.
        if bind {
            return Err(std::io::Error::from_raw_os_error(libc::ENODEV).into());
        }
        return Err(Error::Invalid("IPv6 addresses need the IPV6 socket option"));
    }
    let iface = match iface {
        None => None,
        Some("*") => Some(any),
        Some(i) => match literal_ip(i) {
            Some(ip) => Some(ip),
            // libzmq also takes an interface name here (allow_nic_name).
            None => Some(nic_address(i, ip.is_ipv4())?),
        },
    };
    let a = UdpAddr { target: SocketAddr::new(ip, port), iface };
    if let Some(i) = a.iface {
        // libzmq: a source only makes sense before a multicast target, and
        // it cannot itself be multicast or of the other family.
        if !a.is_multicast() || i.is_multicast() || i.is_ipv4() != ip.is_ipv4() {
            return Err(Error::Invalid("udp interface needs a multicast address of its family"));
        }
    }
    Ok(a)
}

/// The first address of network interface `name` in the wanted family;
/// ENODEV when there is none, as libzmq's resolver answers.
fn nic_address(name: &str, v4: bool) -> Result<IpAddr, Error> {
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: `head` is a valid out-pointer; on success the list is ours
    // until freeifaddrs below.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    let mut found = None;
    let mut cur = head;
    while !cur.is_null() && found.is_none() {
        // SAFETY: `cur` is a node of the list getifaddrs returned, not yet freed.
        let ifa = unsafe { &*cur };
        cur = ifa.ifa_next;
        if ifa.ifa_addr.is_null() || ifa.ifa_name.is_null() {
            continue;
        }
        // SAFETY: ifa_name is a NUL-terminated string owned by the list.
        if unsafe { std::ffi::CStr::from_ptr(ifa.ifa_name) }.to_bytes() != name.as_bytes() {
            continue;
        }
        // SAFETY: ifa_addr is non-NULL and points at a sockaddr of the
        // family it names; we read the variant that family says it is.
        found = unsafe {
            match i32::from((*ifa.ifa_addr).sa_family) {
                libc::AF_INET if v4 => {
                    let a = &*(ifa.ifa_addr as *const libc::sockaddr_in);
                    Some(IpAddr::V4(Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr))))
                }
                libc::AF_INET6 if !v4 => {
                    let a = &*(ifa.ifa_addr as *const libc::sockaddr_in6);
                    Some(IpAddr::V6(Ipv6Addr::from(a.sin6_addr.s6_addr)))
                }
                _ => None,
            }
        };
    }
    // SAFETY: `head` came from a successful getifaddrs and is freed once.
    unsafe { libc::freeifaddrs(head) };
    found.ok_or_else(|| std::io::Error::from_raw_os_error(libc::ENODEV).into())
}

/// The first address `host` resolves to, IPv4 unless `ipv6`.
fn resolve_name(host: &str, port: u16, ipv6: bool) -> Option<IpAddr> {
    (host, port).to_socket_addrs().ok()?.map(|a| a.ip()).find(|ip| ipv6 || ip.is_ipv4())
}

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

/// The DISH side: bound, and a member of the group when `addr` is multicast.
pub(crate) fn open_receiver(addr: &UdpAddr) -> Result<UdpSocket, Error> {
    let ip = addr.target.ip();
    let s = Socket::new(domain(ip), Type::DGRAM, Some(Protocol::UDP))?;
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

/// One datagram in libzmq's layout, or `None` when it would be too large.
pub(crate) fn encode(group: &[u8], body: &[u8]) -> Option<Vec<u8>> {
    let len = 1 + group.len() + body.len();
    if group.len() > usize::from(u8::MAX) || len > MAX_UDP_MSG {
        return None;
    }
    let mut d = Vec::with_capacity(len);
    d.push(group.len() as u8);
    d.extend_from_slice(group);
    d.extend_from_slice(body);
    Some(d)
}

/// Group and body of a datagram; `None` for a malformed one.
pub(crate) fn decode(d: &[u8]) -> Option<(&[u8], &[u8])> {
    let (&glen, rest) = d.split_first()?;
    let glen = usize::from(glen);
    (rest.len() >= glen).then(|| rest.split_at(glen))
}

/// Wakes a udp thread blocked on its pipe.
#[derive(Default)]
struct Waiter {
    woken: Mutex<bool>,
    cv: Condvar,
}

impl Wake for Waiter {
    fn wake(&self) {
        *self.woken.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.cv.notify_one();
    }
}

impl Waiter {
    fn wait(&self, timeout: Duration) {
        let g = self.woken.lock().unwrap_or_else(|e| e.into_inner());
        let (mut g, _) = self.cv.wait_timeout_while(g, timeout, |w| !*w).unwrap_or_else(|e| e.into_inner());
        *g = false;
    }
}

/// RADIO: send what the socket queues, one datagram per message, until the
/// socket lets go of the pipe.
pub(crate) fn spawn_sender(sock: UdpSocket, target: SocketAddr, mut pipe: EnginePipe) -> std::io::Result<()> {
    let waiter = Arc::new(Waiter::default());
    pipe.out.reader_wake().set(waiter.clone());
    std::thread::Builder::new().name("oxmq-udp-radio".into()).spawn(move || loop {
        // Hold the whole pipe (not just `out`, as the closure would capture):
        // dropping `inn` would tell the socket this peer is gone.
        let pipe = &mut pipe;
        while let Some(group) = pipe.out.read() {
            if group.is_internal() || !group.more() {
                continue;
            }
            let Some(body) = pipe.out.read() else { break };
            if let Some(d) = encode(group.as_slice(), body.as_slice()) {
                // UDP is lossy: a refused datagram (no listener, buffer
                // full) is dropped as libzmq's would be.
                let _ = sock.send_to(&d, target);
            }
        }
        if pipe.out.is_terminated() {
            return;
        }
        waiter.wait(RECV_POLL);
    })?;
    Ok(())
}

/// DISH: each well-formed datagram becomes a group frame and a body frame in
/// the pipe; malformed or oversized ones, and any that find the pipe at its
/// HWM, are dropped. Joins and leaves from the socket are dropped (libzmq's
/// `restart_output` for a receive-only udp engine).
pub(crate) fn spawn_receiver(sock: UdpSocket, mut pipe: EnginePipe) -> std::io::Result<()> {
    sock.set_read_timeout(Some(RECV_POLL))?;
    std::thread::Builder::new().name("oxmq-udp-dish".into()).spawn(move || {
        // Room for any UDP payload, so an oversized datagram is seen whole
        // (and dropped) rather than truncated.
        let mut buf = vec![0u8; 65536];
        loop {
            while pipe.out.read().is_some() {}
            if pipe.inn.is_reader_gone() || pipe.out.is_terminated() {
                return;
            }
            let n = match sock.recv(&mut buf) {
                Ok(n) => n,
                Err(_) => continue,
            };
            if n > MAX_UDP_MSG {
                continue;
            }
            let Some((group, body)) = decode(&buf[..n]) else { continue };
            if pipe.inn.check_write() {
                pipe.inn.write(Msg::from_slice(group).with_more(true));
                pipe.inn.write(Msg::from_slice(body));
                pipe.inn.flush();
            }
        }
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datagram_layout_is_libzmqs() {
        assert_eq!(encode(b"TV", b"Friends").unwrap(), b"\x02TVFriends");
        assert_eq!(decode(b"\x02TVFriends"), Some((&b"TV"[..], &b"Friends"[..])));
        assert_eq!(decode(b"\x00"), Some((&b""[..], &b""[..])));
        assert_eq!(decode(b""), None);
        assert_eq!(decode(b"\x05abc"), None, "group longer than the datagram");
        assert!(encode(b"g", &vec![0; MAX_UDP_MSG]).is_none());
        assert!(encode(b"g", &vec![0; MAX_UDP_MSG - 2]).is_some());
    }

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

    #[test]
    fn endpoints_parse_as_libzmq_resolves_them() {
        let a = parse("127.0.0.1:5556", false, false).unwrap();
        assert_eq!((a.target, a.iface), ("127.0.0.1:5556".parse().unwrap(), None));
        assert_eq!(parse("*:5556", true, false).unwrap().target, "0.0.0.0:5556".parse().unwrap());
        assert!(parse("*:5556", false, false).is_err());
        // libzmq 4.3.5 connects a RADIO to port 0 (measured); `*` it refuses.
        assert_eq!(parse("127.0.0.1:0", false, false).unwrap().target.port(), 0);
        assert!(parse("127.0.0.1:*", false, false).is_err());
        let m = parse("127.0.0.1;239.0.0.1:5555", true, false).unwrap();
        assert_eq!(m.iface, Some("127.0.0.1".parse().unwrap()));
        assert!(parse("127.0.0.1;127.0.0.2:5555", true, false).is_err(), "iface needs multicast");
        assert!(parse("[::1]:5556", false, false).is_err(), "IPv6 needs the option");
        assert_eq!(parse("[::1]:5556", true, false).unwrap_err().errno(), libc::ENODEV, "as libzmq's bind");
        assert_eq!(parse("[::1]:5556", false, true).unwrap().target, "[::1]:5556".parse().unwrap());
        assert!(parse("nocolon", false, false).is_err());
        let lo = parse("lo;239.0.0.1:5555", true, false).unwrap();
        assert_eq!(lo.iface, Some("127.0.0.1".parse().unwrap()), "an interface name, as libzmq takes");
        assert_eq!(parse("nosuchif0;239.0.0.1:5555", true, false).unwrap_err().errno(), libc::ENODEV);
        // A bind to an interface name, as libzmq's resolver allows (DGRAM, DISH).
        assert_eq!(parse("lo:5555", true, false).unwrap().target, "127.0.0.1:5555".parse().unwrap());
        assert_eq!(parse("nosuchif0:5555", true, false).unwrap_err().errno(), libc::ENODEV);
        // Measured on libzmq 4.3.5: the iface part is resolved first, an
        // empty host is an interface name on bind only.
        for (addr, bind, errno) in [
            ("127.0.0.1:5555;x", true, libc::ENODEV),
            (";:1", false, libc::ENODEV),
            ("127.0.0.1;:5555", true, libc::ENODEV),
            ("127.0.0.1;:5555", false, libc::EINVAL),
            (":5555", true, libc::ENODEV),
            (":5555", false, libc::EINVAL),
        ] {
            assert_eq!(parse(addr, bind, false).unwrap_err().errno(), errno, "{addr} bind {bind}");
        }
    }

    #[test]
    fn ports_read_as_libzmqs_atoi_cut_to_16_bits() {
        for (p, want) in [
            ("5555", Some(5555)),
            ("0", Some(0)),
            ("70000", Some(4464)),
            ("-1", Some(65535)),
            ("5555x", Some(5555)),
            (" 12", Some(12)),
            ("+12", Some(12)),
            ("1e3", Some(1)),
            ("99999999999", Some(59391)),
            ("4294967297", Some(1)),
            ("99999999999999999999999", Some(65535)),
            ("65536", None),
            ("00", None),
            ("-0", None),
            ("0x10", None),
            ("abc", None),
            ("", None),
        ] {
            assert_eq!(parse_port(p, false).ok(), want, "port {p:?}");
        }
        assert_eq!(parse_port("*", true).unwrap(), 0);
        assert!(parse_port("*", false).is_err());
    }
}
