//! The accept side: listeners and the connections they accept.

use super::link::{new_pipe_pair, push_farewell, stream_names, Link};
use super::shared::TokenWaker;
use super::Outcome;
use crate::io::engine::{Engine, Step};
use crate::io::stream::Stream;
use crate::monitor::{monitor_event as ev, Source};
use crate::transport::filter;
use crate::transport::ipc::{self, IpcCleanup};
use crate::transport::tcp;
use crate::transport::ws::WsListen;
use mio::{Registry, Token};
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Connections accepted per run of a listener before yielding. Large: an
/// accept costs a few microseconds and the setup that follows is deferred
/// (the I/O thread's `SETUP_BUDGET`), so one run can empty a kernel accept
/// queue of the default somaxconn (4096).
const ACCEPT_BUDGET: usize = 4096;

pub(in crate::io) enum ListenSock {
    Tcp(mio::net::TcpListener),
    Unix(mio::net::UnixListener),
    /// ws:// and wss://: tcp, each connection wrapped in a WebSocket stage.
    Ws(mio::net::TcpListener, Arc<WsListen>),
}

impl ListenSock {
    pub(in crate::io) fn fd(&self) -> RawFd {
        match self {
            ListenSock::Tcp(l) => l.as_raw_fd(),
            ListenSock::Unix(l) => l.as_raw_fd(),
            ListenSock::Ws(l, _) => l.as_raw_fd(),
        }
    }
}

pub(super) struct Listener {
    pub(super) sock: ListenSock,
    pub(super) link: Link,
    pub(super) _cleanup: Option<IpcCleanup>,
    /// Bound to a wildcard address: monitor events of its connections name
    /// each connection's local address instead (as libzmq does).
    pub(super) wildcard: bool,
    /// accept() failed for want of resources (EMFILE...): the waiting
    /// connections raise no new edge, so try again at this time.
    pub(super) retry_at: Option<Instant>,
}

/// How long a listener waits before accepting again after EMFILE and friends.
const ACCEPT_RETRY: Duration = Duration::from_millis(100);

/// An accepted connection.
pub(super) struct Conn {
    pub(super) engine: Engine,
    pub(super) link: Link,
    pub(super) waker: Arc<TokenWaker>,
    pub(super) attached: bool,
    /// Its pipe's key, taken as it was set up (in the order the listener
    /// accepted), not at the end of its handshake: see `new_pipe_key`.
    pub(super) key: u64,
}

/// Accepts what is queued: each stream, with the endpoint its monitor events
/// name if not the listener's.
pub(super) fn run_listener(l: &mut Listener, accepted: &mut Vec<(Stream, Option<Arc<str>>)>, now: Instant) -> Outcome {
    l.retry_at = None;
    for _ in 0..ACCEPT_BUDGET {
        let opts = &l.link.cfg.options;
        let res = match &l.sock {
            ListenSock::Tcp(s) => s.accept().map(|(s, peer)| {
                tcp::tune_stream(&s, opts);
                (filter::tcp_peer_allowed(opts, &peer), Stream::Tcp(s))
            }),
            ListenSock::Unix(s) => s.accept().map(|(s, _)| {
                ipc::tune_stream(&s, opts);
                (filter::ipc_peer_allowed(opts, s.as_raw_fd()), Stream::Unix(s))
            }),
            ListenSock::Ws(s, ws) => s.accept().and_then(|(s, peer)| {
                tcp::tune_stream(&s, opts);
                Ok((filter::tcp_peer_allowed(opts, &peer), Stream::Ws(Box::new(ws.wrap(s)?))))
            }),
        };
        match res {
            Ok((false, s)) => {
                // Refused by an accept filter: closed unread, as libzmq does.
                drop(s);
                l.link.emit(ev::ACCEPT_FAILED, 0);
            }
            Ok((true, s)) => {
                let local = match &s {
                    Stream::Tcp(t) if l.wildcard => t.local_addr().ok().map(|a| tcp::format_endpoint(&a).into()),
                    _ => None,
                };
                let endpoint: &str = local.as_deref().unwrap_or(&l.link.endpoint);
                if l.link.monitor.wants(ev::ACCEPTED) {
                    // Version 2 names both ends of the new connection, as libzmq's.
                    let scheme = endpoint.split("://").next().unwrap_or("tcp");
                    let (local, remote) = stream_names(&s, scheme);
                    let src = Source { endpoint, local: &local, remote: &remote, routing_id: None };
                    l.link.monitor.emit_at(ev::ACCEPTED, s.fd() as u64, &src);
                }
                accepted.push((s, local))
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Outcome::Keep,
            Err(e) if e.kind() == io::ErrorKind::Interrupted || e.kind() == io::ErrorKind::ConnectionAborted => {
                l.link.emit(ev::ACCEPT_FAILED, e.raw_os_error().unwrap_or(0) as u32);
            }
            // EMFILE and friends: the connection stays in the backlog. Try
            // again shortly (no edge will say when descriptors are free).
            Err(e) => {
                l.link.emit(ev::ACCEPT_FAILED, e.raw_os_error().unwrap_or(0) as u32);
                l.retry_at = Some(now + ACCEPT_RETRY);
                return Outcome::Keep;
            }
        }
    }
    Outcome::Again
}

pub(super) fn run_conn(c: &mut Conn, now: Instant, registry: &Registry, token: Token) -> Outcome {
    loop {
        match c.engine.run_registered(now, registry, token) {
            Step::Idle => return Outcome::Keep,
            Step::Again => return Outcome::Again,
            Step::Closed(fault) => {
                c.link.report_closed(c.engine.stream.fd(), c.engine.is_handshaking(), &fault);
                if c.attached {
                    if let Some((mut p, _)) = c.engine.take_pipe() {
                        push_farewell(&c.link.cfg, &mut p, true, &c.engine.stream);
                    }
                }
                return Outcome::Remove;
            }
            Step::Handshaken(peer) => {
                // libzmq reports a handshake only for ZMTP 3 peers: 1.0 and 2.0
                // peers have no mechanism to complete, so no event.
                c.link.set_peer(&peer, &c.engine.stream);
                if peer.version.0 >= 3 {
                    c.link.emit(ev::HANDSHAKE_SUCCEEDED, 0);
                }
                let Some(mb) = c.link.mailbox.take() else {
                    return Outcome::Remove;
                };
                let ep = new_pipe_pair(&c.link, &mb, &c.waker, &peer, &c.engine.stream, c.key);
                c.engine.attach(ep, false);
                c.attached = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::SocketLink;
    use crate::options::Options;
    use crate::transport::endpoint::{TcpAddr, TcpHost};
    use oxmq_proto::SocketType;
    use std::net::{Ipv4Addr, TcpStream};
    use std::sync::atomic::AtomicI64;

    /// Connections waiting in the kernel's accept queue of a listening tcp
    /// socket (Linux reports it as `tcpi_unacked` of a LISTEN socket).
    fn accept_queue_len(fd: RawFd) -> u32 {
        // SAFETY: tcp_info is a plain C struct; all-zero is a valid value.
        let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
        // SAFETY: `info` and `len` are valid for writes of the sizes given.
        let rc = unsafe {
            libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_INFO, (&mut info as *mut libc::tcp_info).cast(), &mut len)
        };
        assert_eq!(rc, 0, "getsockopt(TCP_INFO): {}", io::Error::last_os_error());
        info.tcpi_unacked
    }

    /// A connection storm: one run of the listener takes every connection the
    /// kernel queued (far more than the setups one loop iteration does), so
    /// the kernel's queue is empty again and it need not drop the next SYNs.
    #[test]
    fn one_run_empties_the_accept_queue() {
        // More than the 64 a run took before; few enough for a 1024-descriptor limit shared with other tests.
        const STORM: usize = 150;
        let opts = Options { backlog: 1000, ..Options::default() };
        let addr = TcpAddr { host: TcpHost::Ip(Ipv4Addr::LOCALHOST.into()), port: None, source: None };
        let (sock, ep) = tcp::bind(&addr, &opts).unwrap();
        let link = SocketLink {
            socket_id: 1,
            socket_type: SocketType::Router,
            mailbox: crate::channel::mailbox::Mailbox::new().unwrap(),
            options: Arc::new(opts),
            linger_ms: Arc::new(AtomicI64::new(-1)),
            disconnected: Default::default(),
            endpoint_id: 1,
            endpoint: ep.clone().into(),
            monitor: crate::monitor::Monitor::new(),
            zap: std::sync::Weak::<crate::ctx::CtxInner>::new(),
        };
        let mut l = Listener {
            sock: ListenSock::Tcp(sock),
            link: link.into(),
            _cleanup: None,
            wildcard: false,
            retry_at: None,
        };
        let port: u16 = ep.rsplit(':').next().unwrap().parse().unwrap();
        // Each connect returns once the kernel completed the handshake and queued the connection.
        let peers: Vec<TcpStream> =
            (0..STORM).map(|_| TcpStream::connect((Ipv4Addr::LOCALHOST, port)).unwrap()).collect();
        assert_eq!(accept_queue_len(l.sock.fd()) as usize, STORM);
        let mut accepted = Vec::new();
        run_listener(&mut l, &mut accepted, Instant::now());
        assert_eq!(accepted.len(), STORM);
        assert_eq!(accept_queue_len(l.sock.fd()), 0);
        drop(peers);
    }
}
