//! Endpoint strings: `transport://address`, parsed once at bind/connect time.
//!
//! Syntax errors are the caller's fault and come back as [`Error::Invalid`];
//! an unknown (or not built-in) transport is [`Error::ProtocolNotSupported`].
//! Name resolution is not done here: hostnames are resolved when a
//! listener is created or a connection is attempted.

use crate::error::Error;
use std::fmt;
use std::net::{IpAddr, Ipv6Addr};
use std::path::PathBuf;

/// The host part of a tcp endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum TcpHost {
    /// `*`: every interface (bind only).
    Any,
    /// A numeric IPv4 or IPv6 address.
    Ip(IpAddr),
    /// A name to resolve (e.g. `localhost`).
    Name(String),
}

/// A parsed `tcp://host:port`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TcpAddr {
    pub(crate) host: TcpHost,
    /// `None` for `*` or `0` (an ephemeral port; bind only).
    pub(crate) port: Option<u16>,
    /// libzmq's `tcp://src[:port];dst:port` connect form: the local address
    /// the connection is bound to before it connects.
    pub(crate) source: Option<Box<TcpAddr>>,
}

/// A parsed `ipc://...`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum IpcAddr {
    /// A filesystem path.
    Path(PathBuf),
    /// `ipc://@name`: the Linux abstract namespace (the name without the `@`).
    Abstract(Vec<u8>),
    /// `ipc://*`: a fresh unique path (bind only).
    Wildcard,
}

/// A parsed endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Endpoint {
    Tcp(TcpAddr),
    Ipc(IpcAddr),
    Inproc(String),
    /// ws:// and wss:// (ZWS 2.0).
    Ws(WsAddr),
}

/// A parsed `ws://host:port/path` or `wss://...`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct WsAddr {
    pub(crate) tls: bool,
    pub(crate) tcp: TcpAddr,
    /// The host as written, for the `Host` header and the TLS server name.
    pub(crate) host: String,
    /// The request path (`/` when none is given).
    pub(crate) path: String,
}

/// Transports libzmq knows but oxmq does not provide.
/// (pgm, epgm and norm are handled before this parser: `transport::multicast`.)
const UNSUPPORTED_KNOWN: &[&str] = &["pgm", "epgm", "norm", "tipc", "vmci", "vsock", "udp", "ws", "wss"];

pub(crate) fn parse_endpoint(s: &str) -> Result<Endpoint, Error> {
    let Some((proto, addr)) = s.split_once("://") else {
        return Err(Error::Invalid("endpoint must look like transport://address"));
    };
    match proto {
        "tcp" => Ok(Endpoint::Tcp(parse_tcp(addr)?)),
        "ipc" => Ok(Endpoint::Ipc(parse_ipc(addr)?)),
        "inproc" => {
            if addr.is_empty() {
                return Err(Error::Invalid("inproc endpoint needs a name"));
            }
            Ok(Endpoint::Inproc(addr.to_string()))
        }
        "ws" | "wss" => Ok(Endpoint::Ws(parse_ws(addr, proto == "wss")?)),
        "" => Err(Error::Invalid("endpoint has an empty transport")),
        p if UNSUPPORTED_KNOWN.contains(&p) => Err(Error::ProtocolNotSupported),
        _ => Err(Error::ProtocolNotSupported),
    }
}

/// The transport of an endpoint given to unbind/disconnect, checked as
/// libzmq's `term_endpoint` checks it before looking the name up: no `://`,
/// or an empty transport or address, is EINVAL; a transport oxmq does not
/// provide is EPROTONOSUPPORT. The address itself is not parsed there.
pub(crate) fn term_transport(s: &str) -> Result<&str, Error> {
    match s.split_once("://") {
        Some((proto, addr)) if !proto.is_empty() && !addr.is_empty() => match proto {
            "tcp" | "ipc" | "inproc" | "ws" | "wss" | "udp" | "pgm" | "epgm" | "norm" => Ok(proto),
            _ => Err(Error::ProtocolNotSupported),
        },
        _ => Err(Error::Invalid("endpoint must look like transport://address")),
    }
}

fn parse_tcp(addr: &str) -> Result<TcpAddr, Error> {
    if addr.is_empty() {
        return Err(Error::Invalid("tcp endpoint needs host:port"));
    }
    if let Some((src, dst)) = addr.split_once(';') {
        let mut dst = parse_tcp(dst)?;
        if dst.source.is_some() {
            return Err(Error::Invalid("tcp endpoint has more than one source address"));
        }
        dst.source = Some(Box::new(parse_source(src)?));
        return Ok(dst);
    }
    let Some(colon) = addr.rfind(':') else {
        return Err(Error::Invalid("tcp endpoint needs a port (host:port)"));
    };
    let (host, port) = (&addr[..colon], &addr[colon + 1..]);
    let port = match port {
        "*" | "0" => None,
        p if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => match p.parse::<u16>() {
            Ok(0) => None,
            Ok(n) => Some(n),
            Err(_) => return Err(Error::Invalid("tcp port out of range")),
        },
        _ => return Err(Error::Invalid("tcp port must be a number or *")),
    };
    let host = if host == "*" {
        TcpHost::Any
    } else if let Some(inner) = host.strip_prefix('[') {
        let Some(inner) = inner.strip_suffix(']') else {
            return Err(Error::Invalid("unterminated [ in tcp IPv6 address"));
        };
        // Drop a zone id ("%eth0"): link-local scopes are not supported.
        let inner = inner.split('%').next().unwrap_or(inner);
        match inner.parse::<Ipv6Addr>() {
            Ok(ip) => TcpHost::Ip(IpAddr::V6(ip)),
            Err(_) => return Err(Error::Invalid("bad IPv6 address in tcp endpoint")),
        }
    } else if host.is_empty() {
        return Err(Error::Invalid("tcp endpoint has an empty host"));
    } else if let Ok(ip) = host.parse::<IpAddr>() {
        TcpHost::Ip(ip)
    } else {
        let ok = host.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b'_');
        if !ok || host.starts_with('-') || host.starts_with('.') {
            return Err(Error::Invalid("bad host name in tcp endpoint"));
        }
        TcpHost::Name(host.to_string())
    };
    Ok(TcpAddr { host, port, source: None })
}

/// The source part of `src;dst`, whose port is optional (libzmq).
fn parse_source(src: &str) -> Result<TcpAddr, Error> {
    let has_port = src.rfind(':').is_some_and(|i| {
        let host = &src[..i];
        !host.is_empty() && if host.starts_with('[') { host.ends_with(']') } else { !host.contains(':') }
    });
    if has_port {
        parse_tcp(src)
    } else {
        parse_tcp(&format!("{src}:0"))
    }
}

/// `sockaddr_un`'s `sun_path` size on Linux; libzmq refuses paths that do
/// not fit with their NUL (ENAMETOOLONG).
const SUN_PATH_LEN: usize = 108;

/// `host:port` then an optional path. libzmq cuts the path at the last `/`,
/// so only one-segment paths work there; here the path starts at the first
/// `/` after the port, which gives the same result for those.
fn parse_ws(addr: &str, tls: bool) -> Result<WsAddr, Error> {
    let (hostport, path) = match addr.find('/') {
        Some(i) => (&addr[..i], &addr[i..]),
        None => (addr, "/"),
    };
    if path.bytes().any(|b| b <= b' ' || b == 0x7F) {
        return Err(Error::Invalid("ws path must be printable with no spaces"));
    }
    let tcp = parse_tcp(hostport)?;
    let host = hostport[..hostport.rfind(':').unwrap_or(hostport.len())].to_string();
    Ok(WsAddr { tls, tcp, host, path: path.to_string() })
}

fn parse_ipc(addr: &str) -> Result<IpcAddr, Error> {
    if addr.is_empty() {
        return Err(Error::Invalid("ipc endpoint needs a path"));
    }
    if addr == "*" {
        return Ok(IpcAddr::Wildcard);
    }
    if addr.len() >= SUN_PATH_LEN {
        return Err(Error::Io(std::io::Error::from_raw_os_error(libc::ENAMETOOLONG)));
    }
    if let Some(name) = addr.strip_prefix('@') {
        if name.is_empty() {
            return Err(Error::Invalid("ipc abstract name is empty"));
        }
        if !cfg!(target_os = "linux") && !cfg!(target_os = "android") {
            return Err(Error::Invalid("ipc abstract names need Linux"));
        }
        return Ok(IpcAddr::Abstract(name.as_bytes().to_vec()));
    }
    if addr.contains('\0') {
        return Err(Error::Invalid("ipc path contains a NUL byte"));
    }
    Ok(IpcAddr::Path(PathBuf::from(addr)))
}

impl Endpoint {
    /// Whether this endpoint can be connected to (no wildcard host/port/path).
    pub(crate) fn check_connectable(&self) -> Result<(), Error> {
        match self {
            Endpoint::Tcp(a) => {
                if a.port.is_none() {
                    return Err(Error::Invalid("cannot connect to port 0 or *"));
                }
                if a.host == TcpHost::Any {
                    return Err(Error::Invalid("cannot connect to host *"));
                }
                Ok(())
            }
            Endpoint::Ipc(IpcAddr::Wildcard) => Err(Error::Invalid("cannot connect to ipc://*")),
            Endpoint::Ws(w) => Endpoint::Tcp(w.tcp.clone()).check_connectable(),
            _ => Ok(()),
        }
    }
}

impl fmt::Display for TcpHost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TcpHost::Any => f.write_str("*"),
            TcpHost::Ip(IpAddr::V4(ip)) => write!(f, "{ip}"),
            TcpHost::Ip(IpAddr::V6(ip)) => write!(f, "[{ip}]"),
            TcpHost::Name(n) => f.write_str(n),
        }
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Endpoint::Tcp(a) => match a.port {
                Some(p) => write!(f, "tcp://{}:{p}", a.host),
                None => write!(f, "tcp://{}:*", a.host),
            },
            Endpoint::Ipc(IpcAddr::Path(p)) => write!(f, "ipc://{}", p.display()),
            Endpoint::Ipc(IpcAddr::Abstract(n)) => {
                write!(f, "ipc://@{}", String::from_utf8_lossy(n))
            }
            Endpoint::Ipc(IpcAddr::Wildcard) => f.write_str("ipc://*"),
            Endpoint::Inproc(n) => write!(f, "inproc://{n}"),
            Endpoint::Ws(w) => {
                let scheme = if w.tls { "wss" } else { "ws" };
                match w.tcp.port {
                    Some(p) => write!(f, "{scheme}://{}:{p}{}", w.tcp.host, w.path),
                    None => write!(f, "{scheme}://{}:*{}", w.tcp.host, w.path),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn tcp(host: TcpHost, port: Option<u16>) -> Endpoint {
        Endpoint::Tcp(TcpAddr { host, port, source: None })
    }

    #[test]
    fn parses_good_tcp_endpoints() {
        assert_eq!(
            parse_endpoint("tcp://127.0.0.1:5555").unwrap(),
            tcp(TcpHost::Ip(Ipv4Addr::LOCALHOST.into()), Some(5555))
        );
        assert_eq!(parse_endpoint("tcp://*:5555").unwrap(), tcp(TcpHost::Any, Some(5555)));
        assert_eq!(parse_endpoint("tcp://*:*").unwrap(), tcp(TcpHost::Any, None));
        assert_eq!(parse_endpoint("tcp://*:0").unwrap(), tcp(TcpHost::Any, None));
        assert_eq!(parse_endpoint("tcp://[::1]:80").unwrap(), tcp(TcpHost::Ip(Ipv6Addr::LOCALHOST.into()), Some(80)));
        assert_eq!(parse_endpoint("tcp://::1:80").unwrap(), tcp(TcpHost::Ip(Ipv6Addr::LOCALHOST.into()), Some(80)));
        assert_eq!(parse_endpoint("tcp://localhost:1").unwrap(), tcp(TcpHost::Name("localhost".into()), Some(1)));
        assert_eq!(
            parse_endpoint("tcp://my-host.example.com:65535").unwrap(),
            tcp(TcpHost::Name("my-host.example.com".into()), Some(65535))
        );
    }

    #[test]
    fn refuses_bad_tcp_endpoints() {
        for bad in [
            "tcp://",
            "tcp://127.0.0.1",
            "tcp://127.0.0.1:",
            "tcp://127.0.0.1:abc",
            "tcp://127.0.0.1:65536",
            "tcp://127.0.0.1:-1",
            "tcp://:5555",
            "tcp://[::1:5555",
            "tcp://[zz]:5555",
            "tcp://bad host:5555",
            "tcp://;127.0.0.1:5555",
            "tcp://a;b;c:5555",
        ] {
            assert!(matches!(parse_endpoint(bad), Err(Error::Invalid(_))), "{bad}");
        }
    }

    #[test]
    fn parses_source_addresses() {
        let Endpoint::Tcp(a) = parse_endpoint("tcp://127.0.0.1:0;127.0.0.1:5555").unwrap() else { panic!() };
        assert_eq!(a.port, Some(5555));
        let src = a.source.unwrap();
        assert_eq!((src.host, src.port), (TcpHost::Ip(Ipv4Addr::LOCALHOST.into()), None));
        let Endpoint::Tcp(a) = parse_endpoint("tcp://10.0.0.1;localhost:5555").unwrap() else { panic!() };
        assert_eq!(a.source.unwrap().host, TcpHost::Ip(Ipv4Addr::new(10, 0, 0, 1).into()));
        let Endpoint::Tcp(a) = parse_endpoint("tcp://[::1]:7;[::1]:5555").unwrap() else { panic!() };
        assert_eq!(a.source.unwrap().port, Some(7));
    }

    #[test]
    fn overlong_ipc_path_is_enametoolong() {
        let long = format!("ipc:///tmp/{}", "x".repeat(200));
        assert_eq!(parse_endpoint(&long).unwrap_err().errno(), libc::ENAMETOOLONG);
        let fits = format!("ipc:///{}", "x".repeat(106));
        assert!(parse_endpoint(&fits).is_ok());
        assert_eq!(parse_endpoint(&format!("ipc:///{}", "x".repeat(107))).unwrap_err().errno(), libc::ENAMETOOLONG);
    }

    #[test]
    fn parses_ipc_and_inproc() {
        assert_eq!(parse_endpoint("ipc:///tmp/x").unwrap(), Endpoint::Ipc(IpcAddr::Path("/tmp/x".into())));
        assert_eq!(parse_endpoint("ipc://rel.ipc").unwrap(), Endpoint::Ipc(IpcAddr::Path("rel.ipc".into())));
        assert_eq!(parse_endpoint("ipc://*").unwrap(), Endpoint::Ipc(IpcAddr::Wildcard));
        assert_eq!(parse_endpoint("ipc://@abs").unwrap(), Endpoint::Ipc(IpcAddr::Abstract(b"abs".to_vec())));
        assert_eq!(parse_endpoint("inproc://a").unwrap(), Endpoint::Inproc("a".into()));
        assert!(matches!(parse_endpoint("ipc://"), Err(Error::Invalid(_))));
        assert!(matches!(parse_endpoint("ipc://@"), Err(Error::Invalid(_))));
        assert!(matches!(parse_endpoint("inproc://"), Err(Error::Invalid(_))));
    }

    #[test]
    fn unknown_transports_and_missing_scheme() {
        assert!(matches!(parse_endpoint("udp://127.0.0.1:5555"), Err(Error::ProtocolNotSupported)));
        assert!(matches!(parse_endpoint("foo://bar"), Err(Error::ProtocolNotSupported)));
        assert!(matches!(parse_endpoint("tipc://{5560,0,0}"), Err(Error::ProtocolNotSupported)));
        assert!(matches!(parse_endpoint("127.0.0.1:5555"), Err(Error::Invalid(_))));
        assert!(matches!(parse_endpoint("tcp:/127.0.0.1:5555"), Err(Error::Invalid(_))));
        assert!(matches!(parse_endpoint(""), Err(Error::Invalid(_))));
        assert!(matches!(parse_endpoint("://x"), Err(Error::Invalid(_))));
    }

    #[test]
    fn parses_ws_endpoints() {
        let Endpoint::Ws(w) = parse_endpoint("ws://127.0.0.1:5555/zeromq").unwrap() else { panic!() };
        assert_eq!((w.tls, w.host.as_str(), w.path.as_str()), (false, "127.0.0.1", "/zeromq"));
        assert_eq!(w.tcp, TcpAddr { host: TcpHost::Ip(Ipv4Addr::LOCALHOST.into()), port: Some(5555), source: None });
        let Endpoint::Ws(w) = parse_endpoint("wss://example.com:443").unwrap() else { panic!() };
        assert_eq!((w.tls, w.host.as_str(), w.path.as_str()), (true, "example.com", "/"));
        let Endpoint::Ws(w) = parse_endpoint("ws://*:*/p").unwrap() else { panic!() };
        assert_eq!(w.tcp, TcpAddr { host: TcpHost::Any, port: None, source: None });
        assert!(parse_endpoint("ws://*:*/p").unwrap().check_connectable().is_err());
        for bad in ["ws://", "ws://host/p", "ws://host:x/p", "ws://h:1/a b", "wss://:80/"] {
            assert!(matches!(parse_endpoint(bad), Err(Error::Invalid(_))), "{bad}");
        }
        assert_eq!(parse_endpoint("ws://[::1]:80/x").unwrap().to_string(), "ws://[::1]:80/x");
    }

    #[test]
    fn connectability() {
        assert!(parse_endpoint("tcp://*:5555").unwrap().check_connectable().is_err());
        assert!(parse_endpoint("tcp://127.0.0.1:*").unwrap().check_connectable().is_err());
        assert!(parse_endpoint("tcp://127.0.0.1:0").unwrap().check_connectable().is_err());
        assert!(parse_endpoint("ipc://*").unwrap().check_connectable().is_err());
        assert!(parse_endpoint("tcp://localhost:5").unwrap().check_connectable().is_ok());
    }

    #[test]
    fn displays_round_trip() {
        for s in ["tcp://127.0.0.1:5555", "tcp://[::1]:5", "tcp://*:*", "ipc:///tmp/x", "ipc://@n", "inproc://q"] {
            assert_eq!(parse_endpoint(s).unwrap().to_string(), s);
        }
    }
}
