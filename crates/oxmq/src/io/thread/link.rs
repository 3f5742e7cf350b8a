//! What each listener, connection and session knows about its socket, and
//! the bookkeeping around an engine's pipes: creating them, the frames the
//! socket reads first (peer properties, routing id) and last (farewells).

use super::shared::TokenWaker;
use crate::channel::mailbox::{Mailbox, SocketCommand};
use crate::channel::pipes::{EndpointId, SocketPipe};
use crate::io::engine::{EngineConfig, Fault};
use crate::io::stream::Stream;
use crate::io::{EnginePipe, SocketLink};
use crate::monitor::{drop_reason, monitor_event as ev, Monitor, Source};
use crate::msg::{Msg, FLAG_PEER_PROPERTIES, FLAG_ROUTING_ID};
use crate::options::notify;
use crate::pipe::{pipe, pipe_conflate, Wake, WakeSlot};
use crate::stats::HandshakeCause;
use bytes::Bytes;
use oxmq_proto::{HandshakeError, Metadata, PeerInfo, ProtocolError, SocketType};
use std::os::fd::RawFd;
use std::sync::Arc;

/// What a listener/session/connection knows about its socket.
pub(super) struct Link {
    pub(super) socket_id: u64,
    pub(super) endpoint_id: EndpointId,
    /// Dropped once no longer needed (after attach, or when the socket
    /// closed), so that nothing here keeps a dead socket's mailbox alive.
    pub(super) mailbox: Option<Arc<Mailbox>>,
    pub(super) cfg: EngineConfig,
    /// How monitor events name this endpoint.
    pub(super) endpoint: Arc<str>,
    pub(super) monitor: Arc<Monitor>,
    /// A listener or a connection it accepted (libzmq's bind side), not a session.
    pub(super) bind_side: bool,
    /// The current connection, as version-2 monitor events name it.
    pub(super) conn: Option<Box<ConnNames>>,
}

/// Both ends of a connection and the peer's routing id, learnt only while
/// a monitor is attached (two syscalls per connection, none per message).
pub(super) struct ConnNames {
    local: String,
    remote: String,
    /// Known once the handshake is done.
    routing_id: Option<Bytes>,
}

impl From<SocketLink> for Link {
    fn from(l: SocketLink) -> Link {
        Link {
            socket_id: l.socket_id,
            endpoint_id: l.endpoint_id,
            mailbox: Some(l.mailbox),
            cfg: EngineConfig { socket_type: l.socket_type, options: l.options, linger_ms: l.linger_ms, zap: l.zap },
            endpoint: l.endpoint,
            monitor: l.monitor,
            bind_side: false,
            conn: None,
        }
    }
}

impl Link {
    pub(super) fn clone_for_conn(&self) -> Link {
        Link {
            socket_id: self.socket_id,
            endpoint_id: self.endpoint_id,
            mailbox: self.mailbox.clone(),
            cfg: self.cfg.clone(),
            endpoint: self.endpoint.clone(),
            monitor: self.monitor.clone(),
            bind_side: self.bind_side,
            conn: None,
        }
    }

    #[inline]
    pub(super) fn emit(&self, event: u16, value: u32) {
        if self.monitor.wants(event) {
            self.emit_slow(u64::from(event), u64::from(value));
        }
    }

    /// An oxmq-only event (version 2, above libzmq's 32 bits).
    pub(super) fn emit_oxmq(&self, event: u64, value: u64) {
        if self.monitor.wants(event) {
            self.emit_slow(event, value);
        }
    }

    #[cold]
    fn emit_slow(&self, event: u64, value: u64) {
        let src = match &self.conn {
            Some(c) => Source {
                endpoint: &self.endpoint,
                local: &c.local,
                remote: &c.remote,
                routing_id: c.routing_id.as_deref(),
            },
            None if self.bind_side => Source::bound(&self.endpoint),
            None => Source::connecting(&self.endpoint),
        };
        self.monitor.emit_at(event, value, &src);
    }

    /// A connection is up on `stream` (its events name its ends from now
    /// on), or gone (`None`: the session's events name the endpoint again).
    pub(super) fn set_conn(&mut self, stream: Option<&Stream>) {
        self.conn = match stream {
            Some(s) if self.monitor.wants(u64::MAX) => Some(Box::new(self.names(s))),
            _ => None,
        };
    }

    /// The handshake is done: the peer's routing id, as the socket will
    /// know it, goes with the connection's events from now on.
    pub(super) fn set_peer(&mut self, peer: &PeerInfo, stream: &Stream) {
        if !self.monitor.wants(u64::MAX) {
            return;
        }
        let alias = if self.bind_side { None } else { self.cfg.options.connect_routing_id.as_deref() };
        let id = match alias {
            Some(a) => Bytes::copy_from_slice(a),
            None => peer.identity.clone().unwrap_or_default(),
        };
        // A monitor attached after the connection came up: name it now.
        let mut names = self.conn.take().unwrap_or_else(|| Box::new(self.names(stream)));
        names.routing_id = Some(id);
        self.conn = Some(names);
    }

    #[cold]
    fn names(&self, stream: &Stream) -> ConnNames {
        let scheme = self.endpoint.split("://").next().unwrap_or("tcp");
        let (local, peer) = stream_names(stream, scheme);
        // libzmq names the connect side's remote end by the address it was given.
        let remote = if self.bind_side { peer } else { self.endpoint.to_string() };
        ConnNames { local, remote, routing_id: None }
    }

    /// Monitor events for a connection that ended: why the handshake failed
    /// (if it had not finished), then DISCONNECTED, as libzmq reports them.
    pub(super) fn report_closed(&self, fd: RawFd, handshaking: bool, fault: &Fault) {
        const WANTED: u64 = (ev::DISCONNECTED
            | ev::HANDSHAKE_FAILED_NO_DETAIL
            | ev::HANDSHAKE_FAILED_PROTOCOL
            | ev::HANDSHAKE_FAILED_AUTH) as u64
            | ev::MSG_DROPPED;
        self.count_closed(handshaking, fault);
        if matches!(fault, Fault::Linger) || !self.monitor.wants(WANTED) {
            return; // closed by our own socket, or nobody listens
        }
        if is_oversize(fault) {
            // The message is lost with the connection, as in libzmq.
            self.emit_slow(ev::MSG_DROPPED, drop_reason::OVERSIZE);
        }
        if handshaking {
            match fault {
                Fault::Handshake(HandshakeError::PeerError { reason }) => {
                    // A ZAP-style status ("300", "400", "500") is an auth failure.
                    if let [d @ b'3'..=b'5', b'0', b'0'] = reason.as_slice() {
                        self.emit(ev::HANDSHAKE_FAILED_AUTH, u32::from(d - b'0') * 100);
                    }
                }
                // libzmq 4.3.5 refuses a peer's socket type without an event.
                Fault::Handshake(
                    HandshakeError::IncompatibleSocketType { .. } | HandshakeError::UnknownSocketType { .. },
                ) => {}
                Fault::Handshake(HandshakeError::AuthFailed { status }) => {
                    self.emit(ev::HANDSHAKE_FAILED_AUTH, u32::from(*status))
                }
                Fault::Handshake(HandshakeError::ZapUnavailable) => {
                    self.emit(ev::HANDSHAKE_FAILED_NO_DETAIL, libc::EFAULT as u32)
                }
                // libzmq's GSSAPI mechanism stalls on a failed GSS-API call and
                // its handshake timer reports it, with the errno its I/O thread
                // last left: EAGAIN, as measured against Debian's libzmq5.
                Fault::Handshake(HandshakeError::Gssapi { .. }) => {
                    self.emit(ev::HANDSHAKE_FAILED_NO_DETAIL, libc::EAGAIN as u32)
                }
                Fault::Handshake(e) => self.emit(ev::HANDSHAKE_FAILED_PROTOCOL, e.zmq_protocol_error_code()),
                Fault::Protocol(e) => self.emit(ev::HANDSHAKE_FAILED_PROTOCOL, e.zmq_protocol_error_code()),
                // ws: a bad upgrade or frame, as libzmq's ws engine reports it.
                Fault::Io(e) if e.get_ref().is_some_and(|i| i.is::<oxmq_proto::ws::WsError>()) => {
                    self.emit(ev::HANDSHAKE_FAILED_PROTOCOL, 0x3000_0000)
                }
                Fault::Io(e) => self.emit(ev::HANDSHAKE_FAILED_NO_DETAIL, e.raw_os_error().unwrap_or(0) as u32),
                Fault::PeerClosed => self.emit(ev::HANDSHAKE_FAILED_NO_DETAIL, libc::EPIPE as u32),
                Fault::HandshakeTimeout => self.emit(ev::HANDSHAKE_FAILED_NO_DETAIL, libc::ETIMEDOUT as u32),
                Fault::HeartbeatDead | Fault::PeerError | Fault::Linger => {}
            }
        }
        self.emit(ev::DISCONNECTED, fd as u32);
    }
}

impl Link {
    /// The socket's statistics of a connection that ended (`crate::stats`):
    /// an oversize frame, and a failed handshake by cause, sorted as the
    /// monitor events above sort them.
    fn count_closed(&self, handshaking: bool, fault: &Fault) {
        let counters = &self.monitor.counters;
        if is_oversize(fault) {
            counters.note_oversize();
        }
        if !handshaking {
            return;
        }
        let cause = match fault {
            Fault::Linger | Fault::HeartbeatDead | Fault::PeerError => return,
            Fault::Handshake(HandshakeError::PeerError { reason })
                if matches!(reason.as_slice(), [b'3'..=b'5', b'0', b'0']) =>
            {
                HandshakeCause::Auth
            }
            Fault::Handshake(HandshakeError::AuthFailed { .. }) => HandshakeCause::Auth,
            Fault::Handshake(HandshakeError::ZapUnavailable | HandshakeError::Gssapi { .. }) => HandshakeCause::Other,
            Fault::Handshake(_) | Fault::Protocol(_) => HandshakeCause::Protocol,
            Fault::HandshakeTimeout => HandshakeCause::Timeout,
            Fault::Io(_) | Fault::PeerClosed => HandshakeCause::Other,
        };
        counters.note_handshake_failed(cause);
    }
}

/// A frame over MAXMSGSIZE ended the connection (also when it came with
/// the handshake's last bytes, which then failed the handshake too).
fn is_oversize(fault: &Fault) -> bool {
    matches!(
        fault,
        Fault::Protocol(ProtocolError::MessageTooLarge { .. })
            | Fault::Handshake(HandshakeError::Protocol(ProtocolError::MessageTooLarge { .. }))
    )
}

/// Creates the pipe pair for a fresh connection, with the peer frames first
/// (see `push_peer_frames`), and sends the socket its end. Returns the engine's end.
/// `key`: from `new_pipe_key` when the connection was made.
pub(super) fn new_pipe_pair(
    link: &Link,
    mailbox: &Mailbox,
    waker: &Arc<TokenWaker>,
    peer: &PeerInfo,
    stream: &Stream,
    key: u64,
) -> EnginePipe {
    let opts = &link.cfg.options;
    let w: Arc<dyn Wake> = waker.clone();
    let (inn_w, inn_r) = pipe(opts.rcvhwm_limit(), WakeSlot::new(), WakeSlot::with(w.clone()));
    let (out_w, out_r) = if opts.conflates_sending(link.cfg.socket_type) {
        pipe_conflate(WakeSlot::with(w), WakeSlot::new())
    } else {
        pipe(opts.sndhwm_limit(), WakeSlot::with(w), WakeSlot::new())
    };
    let mut ep = EnginePipe::new(out_r, inn_w, key);
    push_peer_frames(link, &mut ep, peer, stream);
    let mut sp = SocketPipe::new(out_w, inn_r, link.endpoint_id, key);
    sp.out.set_direct(ep.direct.clone());
    // Known when a monitor was attached as the connection came up (see
    // `ConnNames`); zmq_socket_monitor_pipes_stats names the pipe by them.
    sp.names = link.conn.as_ref().map(|c| Box::new((c.local.clone(), c.remote.clone())));
    if link.cfg.socket_type == SocketType::Stream {
        // STREAM pipes exist per connection only: the alias travels with the link.
        sp.connect_routing_id = opts.connect_routing_id.clone().map(Into::into);
    }
    mailbox.send(SocketCommand::Attach(sp));
    ep
}

/// Tell the socket who the peer is, ahead of its messages: its connection
/// properties (for `zmq_msg_gets`) and, for ROUTER, its routing id.
///
/// The properties go in libzmq's order of precedence, which the first match
/// of a name follows: what this side knows (Peer-Address, `__fd`), then what
/// ZAP said (User-Id and the handler's metadata), then what the peer
/// announced in READY, so a peer cannot pass itself off as another address
/// or user by naming those properties itself.
pub(super) fn push_peer_frames(link: &Link, ep: &mut EnginePipe, peer: &PeerInfo, stream: &Stream) {
    let mut props = Metadata::new();
    if let Some(address) = peer_address(stream) {
        props.insert("Peer-Address", address.as_bytes());
        // libzmq's private property behind the deprecated ZMQ_SRCFD, set
        // with Peer-Address: a few bytes per connection, nothing per message
        // (every message already carries its connection's properties).
        props.insert("__fd", stream.fd().to_string().as_bytes());
    }
    if let Some(user_id) = &peer.user_id {
        props.insert("User-Id", user_id);
    }
    for (name, value) in peer.zap_properties.iter().chain(peer.metadata.iter()) {
        props.insert(name, value);
    }
    let mut encoded = Vec::with_capacity(64);
    props.encode(&mut encoded);
    ep.inn.write(Msg::from_vec(encoded).with_flags(FLAG_PEER_PROPERTIES));
    // REP is a ROUTER underneath (libzmq): it needs the peer's routing id too.
    if matches!(link.cfg.socket_type, SocketType::Router | SocketType::Rep) {
        let id = peer.identity.clone().unwrap_or_default();
        ep.inn.write(Msg::from_bytes(id).with_flags(FLAG_ROUTING_ID));
    }
    if link.cfg.socket_type == SocketType::Router {
        // ROUTER_NOTIFY (draft): the ROUTER reads [routing id][empty].
        if link.cfg.options.router_notify & notify::CONNECT != 0 {
            ep.inn.write(Msg::new());
        }
    }
    // Draft DGRAM over tcp/ipc: libzmq's raw engine announces a connection
    // with an empty message (a raw read is never empty, so it is unambiguous).
    if link.cfg.socket_type == SocketType::Dgram && stream.runs_raw(SocketType::Dgram) {
        ep.inn.write(Msg::new());
    }
    // STREAM (and ROUTER_RAW): the same notice, behind the properties, so
    // its routing-id frame carries "Peer-Address" as libzmq's does.
    if link.cfg.socket_type == SocketType::Stream && link.cfg.options.raw_notify {
        ep.inn.write(Msg::new());
    }
    ep.inn.flush();
}

/// The peer's address as libzmq's metadata names it: the IP address over
/// tcp and ws, `localhost:UID:GID:PID` over ipc (SO_PEERCRED).
fn peer_address(stream: &Stream) -> Option<String> {
    match stream.tcp() {
        Some(t) => t.peer_addr().ok().map(|a| a.ip().to_string()),
        None => {
            let cred = crate::transport::filter::peer_cred(stream.fd())?;
            Some(format!("localhost:{}:{}:{}", cred.uid, cred.gid, cred.pid))
        }
    }
}

/// A connection that completed its handshake ended: what the socket reads
/// from that peer last (draft options, libzmq's order). ROUTER_NOTIFY's
/// empty message, and DISCONNECT_MSG as if the peer had sent it (see
/// `Options::receives_disconnect_msg`), the latter only on an accepted
/// connection as in libzmq (a connecting socket hears HICCUP_MSG instead).
/// They bypass the HWM like libzmq's, which writes them from the session.
pub(super) fn push_farewell(cfg: &EngineConfig, ep: &mut EnginePipe, accepted: bool, stream: &Stream) {
    let o = &cfg.options;
    if cfg.socket_type == SocketType::Router && o.router_notify & notify::DISCONNECT != 0 {
        ep.inn.write(Msg::new());
    }
    if accepted && o.receives_disconnect_msg(cfg.socket_type) {
        ep.inn.write(Msg::from_vec(o.disconnect_msg.clone()));
    }
    // Draft DGRAM over tcp/ipc, STREAM: the raw engine's empty disconnect notice.
    if (cfg.socket_type == SocketType::Dgram && stream.runs_raw(SocketType::Dgram))
        || (cfg.socket_type == SocketType::Stream && o.raw_notify)
    {
        ep.inn.write(Msg::new());
    }
    ep.inn.flush();
}

/// A stream's (local, remote) names as libzmq's monitor prints them:
/// `tcp://ip:port` (`ws://` over WebSocket), `ipc://path`, `ipc://@name`,
/// and `ipc://` for an unnamed end.
/// `scheme` is the endpoint's (tcp, ws, wss), for a stream over tcp.
pub(super) fn stream_names(stream: &Stream, scheme: &str) -> (String, String) {
    match stream.tcp() {
        Some(t) => (tcp_name(t.local_addr(), scheme), tcp_name(t.peer_addr(), scheme)),
        None => match stream {
            Stream::Unix(u) => (unix_name(u.local_addr()), unix_name(u.peer_addr())),
            _ => (String::new(), String::new()),
        },
    }
}

fn tcp_name(addr: std::io::Result<std::net::SocketAddr>, scheme: &str) -> String {
    let Ok(a) = addr else { return String::new() };
    let name = crate::transport::tcp::format_endpoint(&a);
    match scheme {
        "tcp" => name,
        s => format!("{s}://{}", name.strip_prefix("tcp://").unwrap_or(&name)),
    }
}

fn unix_name(addr: std::io::Result<std::os::unix::net::SocketAddr>) -> String {
    use std::os::linux::net::SocketAddrExt;
    match addr {
        Ok(a) => match (a.as_pathname(), a.as_abstract_name()) {
            (Some(p), _) => format!("ipc://{}", p.display()),
            (None, Some(n)) => format!("ipc://@{}", String::from_utf8_lossy(n)),
            _ => "ipc://".to_string(),
        },
        Err(_) => "ipc://".to_string(),
    }
}
