//! tcp transport: listeners, non-blocking connects and per-connection tuning.
//!
//! Everything here is plain socket setup; the I/O thread drives the sockets.

use crate::error::Error;
use crate::options::Options;
use crate::transport::endpoint::{TcpAddr, TcpHost};
use socket2::{Domain, Protocol, SockAddr, SockRef, Socket, Type};
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::os::fd::AsRawFd;

/// Resolves `addr` to one socket address. `ipv6` is `ZMQ_IPV6`: without it
/// only IPv4 addresses are used, as libzmq does.
pub(crate) fn resolve(addr: &TcpAddr, ipv6: bool, bind: bool) -> io::Result<SocketAddr> {
    let port = addr.port.unwrap_or(0);
    let ip = match &addr.host {
        TcpHost::Any => {
            if ipv6 {
                IpAddr::V6(Ipv6Addr::UNSPECIFIED)
            } else {
                IpAddr::V4(Ipv4Addr::UNSPECIFIED)
            }
        }
        TcpHost::Ip(ip) => {
            if ip.is_ipv6() && !ipv6 {
                // libzmq resolves with AF_INET only unless ZMQ_IPV6 is set.
                let errno = if bind { libc::ENODEV } else { libc::EINVAL };
                return Err(io::Error::from_raw_os_error(errno));
            }
            *ip
        }
        TcpHost::Name(name) => {
            let addrs: Vec<SocketAddr> = (name.as_str(), port).to_socket_addrs()?.collect();
            let pick = if ipv6 {
                // Prefer what the resolver lists first, as getaddrinfo would.
                addrs.first().copied()
            } else {
                addrs.iter().find(|a| a.is_ipv4()).copied()
            };
            return pick
                .ok_or_else(|| io::Error::from_raw_os_error(if bind { libc::ENODEV } else { libc::EHOSTUNREACH }));
        }
    };
    Ok(SocketAddr::new(ip, port))
}

fn setsockopt_int(fd: i32, level: i32, name: i32, value: i32) -> io::Result<()> {
    // SAFETY: `value` lives for the call and its size is passed exactly.
    let rc = unsafe {
        libc::setsockopt(fd, level, name, (&value as *const i32).cast(), std::mem::size_of::<i32>() as libc::socklen_t)
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Options applied before bind/connect (libzmq sets these on the raw socket).
fn pre_options(sock: &Socket, opts: &Options, v6: bool) -> io::Result<()> {
    if opts.tos != 0 {
        if v6 {
            let _ = setsockopt_int(sock.as_raw_fd(), libc::IPPROTO_IPV6, libc::IPV6_TCLASS, opts.tos);
        } else {
            sock.set_tos(opts.tos as u32)?;
        }
    }
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if !opts.bindtodevice.is_empty() {
        sock.bind_device(Some(&opts.bindtodevice))?;
    }
    if opts.sndbuf >= 0 {
        sock.set_send_buffer_size(opts.sndbuf as usize)?;
    }
    if opts.rcvbuf >= 0 {
        sock.set_recv_buffer_size(opts.rcvbuf as usize)?;
    }
    Ok(())
}

/// Tunes a connected stream (accepted or connected): TCP_NODELAY always, then
/// keepalives as configured. Failures are ignored: a connection that cannot
/// be tuned still works.
pub(crate) fn tune_stream(stream: &(impl AsRawFd + std::os::fd::AsFd), opts: &Options) {
    let fd = stream.as_raw_fd();
    let _ = setsockopt_int(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, 1);
    if opts.tcp_keepalive != -1 {
        let _ = setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_KEEPALIVE, i32::from(opts.tcp_keepalive == 1));
        if opts.tcp_keepalive == 1 {
            if opts.tcp_keepalive_cnt != -1 {
                let _ = setsockopt_int(fd, libc::IPPROTO_TCP, libc::TCP_KEEPCNT, opts.tcp_keepalive_cnt);
            }
            if opts.tcp_keepalive_idle != -1 {
                let _ = setsockopt_int(fd, libc::IPPROTO_TCP, libc::TCP_KEEPIDLE, opts.tcp_keepalive_idle);
            }
            if opts.tcp_keepalive_intvl != -1 {
                let _ = setsockopt_int(fd, libc::IPPROTO_TCP, libc::TCP_KEEPINTVL, opts.tcp_keepalive_intvl);
            }
        }
    }
    if opts.tcp_maxrt > 0 {
        let _ = setsockopt_int(fd, libc::IPPROTO_TCP, libc::TCP_USER_TIMEOUT, opts.tcp_maxrt);
    }
    let sock = SockRef::from(stream);
    if opts.sndbuf >= 0 {
        let _ = sock.set_send_buffer_size(opts.sndbuf as usize);
    }
    if opts.rcvbuf >= 0 {
        let _ = sock.set_recv_buffer_size(opts.rcvbuf as usize);
    }
}

/// libzmq's spelling of a bound address for `ZMQ_LAST_ENDPOINT`.
pub(crate) fn format_endpoint(sa: &SocketAddr) -> String {
    match sa {
        SocketAddr::V4(a) => format!("tcp://{}:{}", a.ip(), a.port()),
        SocketAddr::V6(a) => match a.ip().to_ipv4_mapped() {
            Some(v4) if !a.ip().is_unspecified() => format!("tcp://{}:{}", v4, a.port()),
            _ => format!("tcp://[{}]:{}", a.ip(), a.port()),
        },
    }
}

fn listen_on(sa: SocketAddr, opts: &Options) -> io::Result<Socket> {
    let domain = Domain::for_address(sa);
    let sock = Socket::new(domain, Type::STREAM, Some(Protocol::TCP))?;
    sock.set_reuse_address(true)?;
    if sa.is_ipv6() {
        // Dual stack: an IPv6 listener also takes IPv4 clients.
        let _ = sock.set_only_v6(false);
    }
    pre_options(&sock, opts, sa.is_ipv6())?;
    sock.bind(&SockAddr::from(sa))?;
    sock.listen(opts.backlog.max(1))?;
    sock.set_nonblocking(true)?;
    Ok(sock)
}

/// Creates a listening socket for `addr` in the caller's thread. Returns the
/// listener and the resolved endpoint for `ZMQ_LAST_ENDPOINT`.
pub(crate) fn bind(addr: &TcpAddr, opts: &Options) -> Result<(mio::net::TcpListener, String), Error> {
    if addr.source.is_some() {
        // libzmq takes `src;dst` as one host name when binding, which no
        // interface has.
        return Err(io::Error::from_raw_os_error(libc::ENODEV).into());
    }
    if opts.use_fd >= 0 {
        let sock = adopt_listener(opts.use_fd)?;
        let local = match sock.local_addr().map(|a| a.as_socket()) {
            Ok(Some(a)) => a,
            _ => return Err(disown(sock, libc::EINVAL)),
        };
        return Ok((mio::net::TcpListener::from_std(sock.into()), format_endpoint(&local)));
    }
    let sa = resolve(addr, opts.ipv6, true)?;
    let sock = match listen_on(sa, opts) {
        Ok(s) => s,
        // No IPv6 on this host: `*` falls back to IPv4, as libzmq does.
        Err(e) if addr.host == TcpHost::Any && sa.is_ipv6() && e.raw_os_error() == Some(libc::EAFNOSUPPORT) => {
            listen_on(SocketAddr::new(Ipv4Addr::UNSPECIFIED.into(), sa.port()), opts)?
        }
        Err(e) => return Err(e.into()),
    };
    let local = sock.local_addr()?.as_socket().ok_or_else(|| io::Error::from_raw_os_error(libc::EINVAL))?;
    let std_listener: std::net::TcpListener = sock.into();
    Ok((mio::net::TcpListener::from_std(std_listener), format_endpoint(&local)))
}

// ZMQ_USE_FD: bind adopts a listening socket the application made.

/// Take over `fd` (libzmq ignores the endpoint's address then, and closes
/// the descriptor when the endpoint goes, as this listener will).
pub(crate) fn adopt_listener(fd: i32) -> Result<Socket, Error> {
    // SAFETY: ZMQ_USE_FD hands the descriptor to the socket; the caller
    // promised a listening socket and leaves it to us from now on.
    let sock = unsafe { <Socket as std::os::fd::FromRawFd>::from_raw_fd(fd) };
    match sock.set_nonblocking(true) {
        Ok(()) => Ok(sock),
        Err(e) => Err(disown(sock, e.raw_os_error().unwrap_or(libc::EBADF))),
    }
}

/// Give an adopted descriptor back unclosed when the bind fails.
pub(crate) fn disown(sock: Socket, errno: i32) -> Error {
    let _ = std::os::fd::IntoRawFd::into_raw_fd(sock);
    io::Error::from_raw_os_error(errno).into()
}

/// The local addresses a numeric or `*` source part (`tcp://src;dst`) may
/// bind to, one per family allowed; host names go through the resolver.
pub(crate) fn source_addrs(src: &TcpAddr, ipv6: bool) -> io::Result<Vec<SocketAddr>> {
    match &src.host {
        TcpHost::Any if ipv6 => {
            let port = src.port.unwrap_or(0);
            Ok(vec![
                SocketAddr::new(Ipv6Addr::UNSPECIFIED.into(), port),
                SocketAddr::new(Ipv4Addr::UNSPECIFIED.into(), port),
            ])
        }
        TcpHost::Name(_) => Err(io::Error::from_raw_os_error(libc::EINVAL)),
        _ => resolve(src, ipv6, true).map(|a| vec![a]),
    }
}

/// The source address for a connect to `dst`: the first of its family, else
/// an IPv4 one in its mapped form for an IPv6 destination (a dual-stack
/// socket takes it), else the first (whose bind then fails the attempt).
pub(crate) fn pick_source(dst: &SocketAddr, sources: &[SocketAddr]) -> Option<SocketAddr> {
    if let Some(same) = sources.iter().find(|s| s.is_ipv6() == dst.is_ipv6()) {
        return Some(*same);
    }
    match (dst, sources.first()?) {
        (SocketAddr::V6(_), SocketAddr::V4(v4)) => {
            Some(SocketAddr::new(IpAddr::V6(v4.ip().to_ipv6_mapped()), v4.port()))
        }
        (_, first) => Some(*first),
    }
}

/// Starts a non-blocking connect, from `source` if given (see
/// [`pick_source`]). Completion is signalled by writability; then
/// [`finish_connect`] tells success from failure.
pub(crate) fn start_connect(
    sa: SocketAddr,
    source: Option<SocketAddr>,
    opts: &Options,
) -> io::Result<mio::net::TcpStream> {
    let sock = Socket::new(Domain::for_address(sa), Type::STREAM, Some(Protocol::TCP))?;
    pre_options(&sock, opts, sa.is_ipv6())?;
    if let Some(local) = source {
        if local.port() != 0 {
            sock.set_reuse_address(true)?;
        }
        sock.bind(&SockAddr::from(local))?;
    }
    sock.set_nonblocking(true)?;
    match sock.connect(&SockAddr::from(sa)) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) || e.kind() == io::ErrorKind::WouldBlock => {}
        Err(e) => return Err(e),
    }
    let std_stream: std::net::TcpStream = sock.into();
    Ok(mio::net::TcpStream::from_std(std_stream))
}

/// After a writable event on a connecting socket: `Ok(true)` connected,
/// `Ok(false)` still in progress, `Err` failed.
pub(crate) fn finish_connect(stream: &mio::net::TcpStream) -> io::Result<bool> {
    if let Some(e) = stream.take_error()? {
        return Err(e);
    }
    match stream.peer_addr() {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotConnected => Ok(false),
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_libzmq() {
        assert_eq!(format_endpoint(&"127.0.0.1:5555".parse().unwrap()), "tcp://127.0.0.1:5555");
        assert_eq!(format_endpoint(&"[::1]:5555".parse().unwrap()), "tcp://[::1]:5555");
        assert_eq!(format_endpoint(&"[::]:5555".parse().unwrap()), "tcp://[::]:5555");
        assert_eq!(format_endpoint(&"0.0.0.0:1".parse().unwrap()), "tcp://0.0.0.0:1");
    }

    #[test]
    fn binds_wildcard_port_and_reports_it() {
        let addr = TcpAddr { host: TcpHost::Ip(Ipv4Addr::LOCALHOST.into()), port: None, source: None };
        let (_l, ep) = bind(&addr, &Options::default()).unwrap();
        assert!(ep.starts_with("tcp://127.0.0.1:"), "{ep}");
        assert_ne!(ep, "tcp://127.0.0.1:0");
        let any = TcpAddr { host: TcpHost::Any, port: None, source: None };
        let (_l2, ep2) = bind(&any, &Options::default()).unwrap();
        assert!(ep2.starts_with("tcp://0.0.0.0:"), "{ep2}");
    }

    #[test]
    fn address_in_use_is_reported() {
        let addr = TcpAddr { host: TcpHost::Ip(Ipv4Addr::LOCALHOST.into()), port: None, source: None };
        let (_l, ep) = bind(&addr, &Options::default()).unwrap();
        let port: u16 = ep.rsplit(':').next().unwrap().parse().unwrap();
        let again = TcpAddr { host: TcpHost::Ip(Ipv4Addr::LOCALHOST.into()), port: Some(port), source: None };
        let err = bind(&again, &Options::default()).unwrap_err();
        assert_eq!(err.errno(), libc::EADDRINUSE);
    }

    #[test]
    fn a_source_of_the_destination_family() {
        let sa = |s: &str| s.parse::<SocketAddr>().unwrap();
        let both = [sa("[::2]:0"), sa("10.0.0.1:7")];
        assert_eq!(pick_source(&sa("10.0.0.9:1"), &both), Some(sa("10.0.0.1:7")));
        assert_eq!(pick_source(&sa("[::9]:1"), &both), Some(sa("[::2]:0")));
        assert_eq!(pick_source(&sa("[::9]:1"), &both[1..]), Some(sa("[::ffff:10.0.0.1]:7")));
        assert_eq!(pick_source(&sa("10.0.0.9:1"), &both[..1]), Some(sa("[::2]:0")));
        assert_eq!(pick_source(&sa("10.0.0.9:1"), &[]), None);
        let any = TcpAddr { host: TcpHost::Any, port: None, source: None };
        assert_eq!(source_addrs(&any, true).unwrap(), [sa("[::]:0"), sa("0.0.0.0:0")]);
        assert_eq!(source_addrs(&any, false).unwrap(), [sa("0.0.0.0:0")]);
    }

    #[test]
    fn ipv6_literal_needs_the_option() {
        let addr = TcpAddr { host: TcpHost::Ip(Ipv6Addr::LOCALHOST.into()), port: None, source: None };
        assert!(bind(&addr, &Options::default()).is_err());
    }
}
