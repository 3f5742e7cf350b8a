//! `udp://` endpoints as libzmq 4.3.5 resolves them (`udp_address.cpp`):
//! `[iface;]host:port`, where `iface` is an address, `*` or an interface
//! name. A RADIO connects to a unicast or multicast `host:port`; a DISH (or
//! a DGRAM) binds `*:port`, `ip:port` or a multicast `group:port` (joining
//! the group on `iface`, or on the kernel's default interface when none is
//! given). An `iface;` part is only valid before a multicast address.
//!
//! As in libzmq, a host name is resolved here, in the thread that calls
//! bind or connect (libzmq's `socket_base_t` resolves udp there too, unlike
//! tcp), so a name that does not resolve fails that call.

use crate::error::Error;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};

/// A resolved `udp://` address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UdpAddr {
    /// Where datagrams go (RADIO) or the group joined / address bound (DISH).
    pub(crate) target: SocketAddr,
    /// The `iface;` part: for multicast, the interface's address.
    pub(crate) iface: Option<IpAddr>,
}

impl UdpAddr {
    pub(crate) fn is_multicast(&self) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

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
