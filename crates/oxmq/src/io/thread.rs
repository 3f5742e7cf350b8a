//! The I/O thread's poll loop and the objects it owns: listeners, accepted
//! connections and connect-side sessions.
//!
//! Every object lives in a slab; its index is its `mio::Token`. An object is
//! "run" whenever its socket is ready, a pipe wakes it, its timer expires or
//! it asked to run again (fairness budget). Running an object that has
//! nothing to do is harmless, so spurious runs are never a problem.

use crate::io::engine::{Engine, EngineConfig, Fault, Step};
use crate::io::stream::Stream;
use crate::io::ws::{WsConnect, WsListen};
use crate::io::{EnginePipe, SocketLink};
use crate::monitor::{monitor_event as ev, Monitor};
use crate::msg::{Msg, FLAG_PEER_PROPERTIES, FLAG_ROUTING_ID};
use crate::options::notify;
use crate::pipe::{pipe, pipe_conflate, Wake, WakeSlot};
use crate::socket::mailbox::{Mailbox, SocketCommand};
use crate::socket::pipes::{new_pipe_key, EndpointId, SocketPipe};
use crate::transport::endpoint::Endpoint;
use crate::transport::filter;
use crate::transport::ipc::{self, IpcCleanup};
use crate::transport::socks::{self, Socks5};
use crate::transport::tcp;
use mio::{Events, Interest, Poll, Registry, Token};
use oxmq_proto::{HandshakeError, PeerInfo, SocketType};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

const WAKER_TOKEN: Token = Token(usize::MAX);
/// Connections accepted per run of a listener before yielding.
const ACCEPT_BUDGET: usize = 64;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Requests from other threads.
pub(super) enum Cmd {
    Listen { sock: ListenSock, link: SocketLink, cleanup: Option<IpcCleanup> },
    Connect { endpoint: Endpoint, link: SocketLink, pipe: Option<EnginePipe> },
    CloseEndpoint { socket_id: u64, endpoint_id: EndpointId },
    SocketClosed { socket_id: u64 },
    Stop,
}

pub(super) enum ListenSock {
    Tcp(mio::net::TcpListener),
    Unix(mio::net::UnixListener),
    /// ws:// and wss://: tcp, each connection wrapped in a WebSocket stage.
    Ws(mio::net::TcpListener, Arc<WsListen>),
}

impl ListenSock {
    pub(super) fn fd(&self) -> RawFd {
        match self {
            ListenSock::Tcp(l) => l.as_raw_fd(),
            ListenSock::Unix(l) => l.as_raw_fd(),
            ListenSock::Ws(l, _) => l.as_raw_fd(),
        }
    }
}

#[derive(Default)]
struct Inbox {
    cmds: Vec<Cmd>,
    /// The loop took commands and has not yet accounted for their effects.
    busy: bool,
    /// Listeners, sessions and connections alive at the end of the last iteration.
    live: usize,
    stopped: bool,
}

/// State shared between the I/O thread and everything that talks to it.
pub(super) struct Shared {
    waker: mio::Waker,
    inbox: Mutex<Inbox>,
    idle: Condvar,
    woken: Mutex<Vec<usize>>,
    /// The loop is (about to be) blocked in `poll`: wakers must use the
    /// `mio::Waker`. Otherwise queuing the token is enough.
    sleeping: AtomicBool,
}

impl Shared {
    fn notify(&self) {
        // Pairs with the loop's `sleeping.store(true)` followed by checking
        // the queues under their mutexes: either the loop sees what we
        // queued, or we see it sleeping and wake it.
        if self.sleeping.swap(false, Ordering::SeqCst) {
            let _ = self.waker.wake();
        }
    }

    pub(super) fn command(&self, cmd: Cmd) {
        lock(&self.inbox).cmds.push(cmd);
        self.notify();
    }

    pub(super) fn wait_idle(&self) {
        let mut st = lock(&self.inbox);
        while !(st.stopped || (st.cmds.is_empty() && !st.busy && st.live == 0)) {
            st = self.idle.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// Installed in the engine-side ends of pipes: queues the object's token.
pub(super) struct TokenWaker {
    token: usize,
    queued: AtomicBool,
    shared: Arc<Shared>,
}

impl Wake for TokenWaker {
    fn wake(&self) {
        if self.queued.swap(true, Ordering::AcqRel) {
            return; // already queued, not yet run
        }
        lock(&self.shared.woken).push(self.token);
        self.shared.notify();
    }
}

/// What a listener/session/connection knows about its socket.
struct Link {
    socket_id: u64,
    endpoint_id: EndpointId,
    /// Dropped once no longer needed (after attach, or when the socket
    /// closed), so that nothing here keeps a dead socket's mailbox alive.
    mailbox: Option<Arc<Mailbox>>,
    cfg: EngineConfig,
    /// How monitor events name this endpoint.
    endpoint: Arc<str>,
    monitor: Arc<Monitor>,
}

impl From<SocketLink> for Link {
    fn from(l: SocketLink) -> Link {
        Link {
            socket_id: l.socket_id,
            endpoint_id: l.endpoint_id,
            mailbox: Some(l.mailbox),
            cfg: EngineConfig { socket_type: l.socket_type, options: l.options, linger_ms: l.linger_ms, ctx: l.ctx },
            endpoint: l.endpoint,
            monitor: l.monitor,
        }
    }
}

impl Link {
    fn clone_for_conn(&self) -> Link {
        Link {
            socket_id: self.socket_id,
            endpoint_id: self.endpoint_id,
            mailbox: self.mailbox.clone(),
            cfg: self.cfg.clone(),
            endpoint: self.endpoint.clone(),
            monitor: self.monitor.clone(),
        }
    }

    #[inline]
    fn emit(&self, event: u16, value: u32) {
        self.monitor.emit(event, value, &self.endpoint);
    }

    /// Monitor events for a connection that ended: why the handshake failed
    /// (if it had not finished), then DISCONNECTED, as libzmq reports them.
    fn report_closed(&self, fd: RawFd, handshaking: bool, fault: &Fault) {
        const WANTED: u16 = ev::DISCONNECTED
            | ev::HANDSHAKE_FAILED_NO_DETAIL
            | ev::HANDSHAKE_FAILED_PROTOCOL
            | ev::HANDSHAKE_FAILED_AUTH;
        if matches!(fault, Fault::Linger) || !self.monitor.wants(WANTED) {
            return; // closed by our own socket, or nobody listens
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

/// Creates the pipe pair for a fresh connection, with the peer frames first
/// (see `push_peer_frames`), and sends the socket its end. Returns the engine's end.
fn new_pipe_pair(
    link: &Link,
    mailbox: &Mailbox,
    waker: &Arc<TokenWaker>,
    peer: &PeerInfo,
    stream: &Stream,
) -> EnginePipe {
    let opts = &link.cfg.options;
    let w: Arc<dyn Wake> = waker.clone();
    let (inn_w, inn_r) = pipe(opts.rcvhwm_limit(), WakeSlot::new(), WakeSlot::with(w.clone()));
    let (out_w, out_r) = if opts.conflates_sending(link.cfg.socket_type) {
        pipe_conflate(WakeSlot::with(w), WakeSlot::new())
    } else {
        pipe(opts.sndhwm_limit(), WakeSlot::with(w), WakeSlot::new())
    };
    let key = new_pipe_key();
    let mut ep = EnginePipe { out: out_r, inn: inn_w, key };
    push_peer_frames(link, &mut ep, peer, stream);
    let mut sp = SocketPipe::new(out_w, inn_r, link.endpoint_id, key);
    if link.cfg.socket_type == SocketType::Stream {
        // STREAM pipes exist per connection only: the alias travels with the link.
        sp.connect_routing_id = opts.connect_routing_id.clone().map(Into::into);
    }
    mailbox.send(SocketCommand::Attach(sp));
    ep
}

/// Tell the socket who the peer is, ahead of its messages: its connection
/// properties (READY metadata plus "Peer-Address", for `zmq_msg_gets`) and,
/// for ROUTER, its routing id.
fn push_peer_frames(link: &Link, ep: &mut EnginePipe, peer: &PeerInfo, stream: &Stream) {
    let mut props = peer.metadata.clone();
    if let Some(user_id) = &peer.user_id {
        props.insert("User-Id", user_id);
    }
    for (name, value) in peer.zap_properties.iter() {
        props.insert(name, value);
    }
    if let Some(t) = stream.tcp() {
        if let Ok(addr) = t.peer_addr() {
            props.insert("Peer-Address", addr.ip().to_string().as_bytes());
        }
    }
    let mut encoded = Vec::with_capacity(64);
    props.encode(&mut encoded);
    ep.inn.write(Msg::from_vec(encoded).with_flags(FLAG_PEER_PROPERTIES));
    if link.cfg.socket_type == SocketType::Router {
        let id = peer.identity.clone().unwrap_or_default();
        ep.inn.write(Msg::from_bytes(id).with_flags(FLAG_ROUTING_ID));
        // ROUTER_NOTIFY (draft): the ROUTER reads [routing id][empty].
        if link.cfg.options.router_notify & notify::CONNECT != 0 {
            ep.inn.write(Msg::new());
        }
    }
    ep.inn.flush();
}

/// A connection that completed its handshake ended: what the socket reads
/// from that peer last (draft options, libzmq's order). ROUTER_NOTIFY's
/// empty message, and DISCONNECT_MSG as if the peer had sent it (see
/// `Options::receives_disconnect_msg`). They bypass the HWM like libzmq's,
/// which writes them from the session.
fn push_farewell(cfg: &EngineConfig, ep: &mut EnginePipe) {
    let o = &cfg.options;
    if cfg.socket_type == SocketType::Router && o.router_notify & notify::DISCONNECT != 0 {
        ep.inn.write(Msg::new());
    }
    if o.receives_disconnect_msg(cfg.socket_type) {
        ep.inn.write(Msg::from_vec(o.disconnect_msg.clone()));
    }
    ep.inn.flush();
}

struct Listener {
    sock: ListenSock,
    link: Link,
    _cleanup: Option<IpcCleanup>,
    /// Bound to a wildcard address: monitor events of its connections name
    /// each connection's local address instead (as libzmq does).
    wildcard: bool,
    /// accept() failed for want of resources (EMFILE...): the waiting
    /// connections raise no new edge, so try again at this time.
    retry_at: Option<Instant>,
}

/// How long a listener waits before accepting again after EMFILE and friends.
const ACCEPT_RETRY: Duration = Duration::from_millis(100);

/// An accepted connection.
struct Conn {
    engine: Engine,
    link: Link,
    waker: Arc<TokenWaker>,
    attached: bool,
}

enum SState {
    /// Connect (again) at this time; `None` = never (reconnect disabled).
    Waiting(Option<Instant>),
    Connecting {
        stream: Stream,
        deadline: Option<Instant>,
        /// SOCKS_PROXY: once the proxy is connected, the SOCKS5 exchange in progress.
        socks: Option<Box<Socks5>>,
    },
    Active(Box<Engine>),
}

/// A connect-side session: connects, and reconnects after failures.
struct Session {
    /// ws:// and wss://: what turns each connected tcp socket into a ws stream.
    ws: Option<Arc<WsConnect>>,
    link: Link,
    endpoint: Endpoint,
    /// The socket's queue, kept across reconnects (IMMEDIATE off), while
    /// no engine holds it.
    pipe: Option<EnginePipe>,
    /// Whether the socket gave us a queue (IMMEDIATE off).
    queued: bool,
    /// The out pipe is in the middle of a message a dead connection began.
    skip_partial: bool,
    state: SState,
    /// Current reconnect interval (grows up to RECONNECT_IVL_MAX).
    cur_ivl: Option<Duration>,
    handshakes: u64,
    /// The socket closed (no more new connections unless data is lingering).
    closing: bool,
    linger: Option<Option<Instant>>,
    waker: Arc<TokenWaker>,
}

enum Obj {
    Listener(Listener),
    Conn(Box<Conn>),
    Session(Box<Session>),
}

struct Entry {
    uid: u64,
    scheduled: Option<Instant>,
    obj: Obj,
}

enum Outcome {
    Keep,
    Again,
    Remove,
}

pub(super) struct Poller {
    poll: Poll,
    shared: Arc<Shared>,
    slab: Vec<Option<Entry>>,
    free: Vec<usize>,
    timers: BinaryHeap<Reverse<(Instant, usize, u64)>>,
    again: Vec<usize>,
    next_uid: u64,
    rng: u64,
    live: usize,
}

impl Poller {
    pub(super) fn new() -> io::Result<(Poller, Arc<Shared>)> {
        let poll = Poll::new()?;
        let waker = mio::Waker::new(poll.registry(), WAKER_TOKEN)?;
        let shared = Arc::new(Shared {
            waker,
            inbox: Mutex::new(Inbox::default()),
            idle: Condvar::new(),
            woken: Mutex::new(Vec::new()),
            sleeping: AtomicBool::new(false),
        });
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0x9E37_79B9_7F4A_7C15);
        let poller = Poller {
            poll,
            shared: shared.clone(),
            slab: Vec::new(),
            free: Vec::new(),
            timers: BinaryHeap::new(),
            again: Vec::new(),
            next_uid: 1,
            rng: seed | 1,
            live: 0,
        };
        Ok((poller, shared))
    }

    pub(super) fn run(mut self) {
        let mut events = Events::with_capacity(1024);
        let mut woken = Vec::new();
        let mut again = Vec::new();
        loop {
            let now = Instant::now();
            let mut timeout = if self.again.is_empty() {
                self.timers.peek().map(|Reverse((t, _, _))| t.saturating_duration_since(now))
            } else {
                Some(Duration::ZERO)
            };
            self.shared.sleeping.store(true, Ordering::SeqCst);
            if !lock(&self.shared.woken).is_empty() || !lock(&self.shared.inbox).cmds.is_empty() {
                timeout = Some(Duration::ZERO);
            }
            if let Err(e) = self.poll.poll(&mut events, timeout) {
                if e.kind() != io::ErrorKind::Interrupted {
                    // Nothing sensible to do but retry; avoid a hot loop.
                    std::thread::sleep(Duration::from_millis(1));
                }
                events.clear();
            }
            self.shared.sleeping.store(false, Ordering::SeqCst);
            let now = Instant::now();

            let cmds = {
                let mut st = lock(&self.shared.inbox);
                st.busy = true;
                std::mem::take(&mut st.cmds)
            };
            let mut stop = false;
            for cmd in cmds {
                match cmd {
                    Cmd::Stop => stop = true,
                    cmd => self.handle_cmd(cmd, now),
                }
            }
            if stop {
                break;
            }

            for ev in events.iter() {
                if ev.token() == WAKER_TOKEN {
                    continue;
                }
                let r = ev.is_readable() || ev.is_read_closed() || ev.is_error();
                let w = ev.is_writable() || ev.is_write_closed() || ev.is_error();
                if ev.is_read_closed() || ev.is_error() {
                    self.note_hangup(ev.token().0);
                }
                self.run_obj(ev.token().0, now, r, w);
            }

            std::mem::swap(&mut woken, &mut *lock(&self.shared.woken));
            for t in woken.drain(..) {
                if let Some(Some(e)) = self.slab.get(t) {
                    match &e.obj {
                        Obj::Conn(c) => c.waker.queued.store(false, Ordering::Release),
                        Obj::Session(s) => s.waker.queued.store(false, Ordering::Release),
                        Obj::Listener(_) => {}
                    }
                    self.run_obj(t, now, false, false);
                }
            }

            std::mem::swap(&mut again, &mut self.again);
            again.sort_unstable();
            again.dedup();
            for t in again.drain(..) {
                self.run_obj(t, now, false, false);
            }

            while let Some(&Reverse((at, t, uid))) = self.timers.peek() {
                if at > now {
                    break;
                }
                self.timers.pop();
                let due = match self.slab.get_mut(t) {
                    Some(Some(e)) if e.uid == uid && e.scheduled == Some(at) => {
                        e.scheduled = None;
                        true
                    }
                    _ => false,
                };
                if due {
                    self.run_obj(t, now, false, false);
                }
            }

            let mut st = lock(&self.shared.inbox);
            st.busy = false;
            st.live = self.live;
            if st.cmds.is_empty() && st.live == 0 {
                self.shared.idle.notify_all();
            }
        }
        // Stopping: close everything (ipc files are unlinked by their cleanup).
        let registry = self.poll.registry();
        for e in self.slab.iter_mut().filter_map(|e| e.take()) {
            deregister_obj(registry, e.obj);
        }
        let mut st = lock(&self.shared.inbox);
        st.stopped = true;
        st.live = 0;
        st.cmds.clear();
        self.shared.idle.notify_all();
    }

    fn new_waker(&self, token: usize) -> Arc<TokenWaker> {
        Arc::new(TokenWaker { token, queued: AtomicBool::new(false), shared: self.shared.clone() })
    }

    fn vacant(&mut self) -> usize {
        match self.free.pop() {
            Some(i) => i,
            None => {
                self.slab.push(None);
                self.slab.len() - 1
            }
        }
    }

    fn insert(&mut self, idx: usize, obj: Obj) {
        let uid = self.next_uid;
        self.next_uid += 1;
        self.slab[idx] = Some(Entry { uid, scheduled: None, obj });
        self.live += 1;
    }

    fn remove(&mut self, idx: usize) {
        if let Some(e) = self.slab.get_mut(idx).and_then(|e| e.take()) {
            deregister_obj(self.poll.registry(), e.obj);
            self.free.push(idx);
            self.live -= 1;
        }
    }

    fn handle_cmd(&mut self, cmd: Cmd, now: Instant) {
        match cmd {
            Cmd::Listen { mut sock, link, cleanup } => {
                let idx = self.vacant();
                let reg = self.poll.registry();
                let res = match &mut sock {
                    ListenSock::Tcp(l) => reg.register(l, Token(idx), Interest::READABLE),
                    ListenSock::Unix(l) => reg.register(l, Token(idx), Interest::READABLE),
                    ListenSock::Ws(l, _) => reg.register(l, Token(idx), Interest::READABLE),
                };
                if res.is_err() {
                    self.free.push(idx);
                    return;
                }
                let wildcard = link.endpoint.starts_with("tcp://0.0.0.0:") || link.endpoint.starts_with("tcp://[::]:");
                self.insert(
                    idx,
                    Obj::Listener(Listener { sock, link: link.into(), _cleanup: cleanup, wildcard, retry_at: None }),
                );
                // Connections may already be queued.
                self.run_obj(idx, now, true, false);
            }
            Cmd::Connect { endpoint, link, pipe } => {
                let idx = self.vacant();
                let waker = self.new_waker(idx);
                let queued = pipe.is_some();
                if let Some(p) = &pipe {
                    let w: Arc<dyn Wake> = waker.clone();
                    p.out.reader_wake().set(w.clone());
                    p.inn.writer_wake().set(w);
                }
                let ws = match &endpoint {
                    // Validated by `IoThread::connect`.
                    Endpoint::Ws(w) => WsConnect::new(w, &link.options, link.socket_type).ok().map(Arc::new),
                    _ => None,
                };
                let session = Session {
                    ws,
                    link: link.into(),
                    endpoint,
                    pipe,
                    queued,
                    skip_partial: false,
                    state: SState::Waiting(Some(now)),
                    cur_ivl: None,
                    handshakes: 0,
                    closing: false,
                    linger: None,
                    waker,
                };
                self.insert(idx, Obj::Session(Box::new(session)));
                self.run_obj(idx, now, false, false);
            }
            Cmd::CloseEndpoint { socket_id, endpoint_id } => {
                let mut mailbox = None;
                for idx in 0..self.slab.len() {
                    let matches = match self.slab[idx].as_ref().map(|e| &e.obj) {
                        Some(Obj::Listener(l)) => l.link.socket_id == socket_id && l.link.endpoint_id == endpoint_id,
                        Some(Obj::Conn(c)) => c.link.socket_id == socket_id && c.link.endpoint_id == endpoint_id,
                        Some(Obj::Session(s)) => s.link.socket_id == socket_id && s.link.endpoint_id == endpoint_id,
                        None => false,
                    };
                    if matches {
                        if let Some(Some(Entry { obj: Obj::Listener(l), .. })) = self.slab.get(idx) {
                            l.link.emit(ev::CLOSED, l.sock.fd() as u32);
                        }
                        if let Some(Some(e)) = self.slab.get(idx) {
                            let mb = match &e.obj {
                                Obj::Listener(l) => l.link.mailbox.clone(),
                                Obj::Session(s) => s.link.mailbox.clone(),
                                Obj::Conn(_) => None,
                            };
                            if mb.is_some() {
                                mailbox = mb;
                            }
                        }
                        self.remove(idx);
                    }
                }
                if let Some(mb) = mailbox {
                    mb.send(SocketCommand::EndpointClosed { endpoint: endpoint_id });
                }
            }
            Cmd::SocketClosed { socket_id } => {
                for idx in 0..self.slab.len() {
                    let mut run = false;
                    let remove = match self.slab[idx].as_mut().map(|e| &mut e.obj) {
                        Some(Obj::Listener(l)) => l.link.socket_id == socket_id,
                        Some(Obj::Conn(c)) if c.link.socket_id == socket_id => {
                            c.link.mailbox = None;
                            !c.attached
                        }
                        Some(Obj::Session(s)) if s.link.socket_id == socket_id => {
                            s.link.mailbox = None;
                            s.closing = true;
                            run = true;
                            false
                        }
                        _ => false,
                    };
                    if remove {
                        self.remove(idx);
                    } else if run {
                        self.run_obj(idx, now, false, false);
                    }
                }
            }
            Cmd::Stop => {}
        }
    }

    fn next_random(&mut self) -> u64 {
        // xorshift64: reconnect jitter only.
        let mut x = self.rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng = x;
        x
    }

    /// The peer hung up: its EOF is already queued and no later edge will
    /// announce it, so the engine must read until it sees it.
    fn note_hangup(&mut self, idx: usize) {
        match self.slab.get_mut(idx) {
            Some(Some(Entry { obj: Obj::Conn(c), .. })) => c.engine.note_hangup(),
            Some(Some(Entry { obj: Obj::Session(s), .. })) => {
                if let SState::Active(engine) = &mut s.state {
                    engine.note_hangup();
                }
            }
            _ => {}
        }
    }

    /// Runs one object and files its follow-ups (again, timer, removal).
    fn run_obj(&mut self, idx: usize, now: Instant, readable: bool, writable: bool) {
        let jitter = self.next_random();
        let registry = self.poll.registry();
        let Some(Some(entry)) = self.slab.get_mut(idx) else {
            return;
        };
        let mut accepted = Vec::new();
        let outcome = match &mut entry.obj {
            Obj::Listener(l) => run_listener(l, &mut accepted, now),
            Obj::Conn(c) => {
                c.engine.set_ready(readable, writable);
                run_conn(c, now)
            }
            Obj::Session(s) => run_session(s, idx, registry, now, readable, writable, jitter),
        };
        let deadline = match &entry.obj {
            Obj::Listener(l) => l.retry_at,
            Obj::Conn(c) => c.engine.deadline(),
            Obj::Session(s) => s.deadline(),
        };
        let mut new_conns = Vec::new();
        if !accepted.is_empty() {
            if let Obj::Listener(l) = &entry.obj {
                for (s, local) in accepted {
                    let mut link = l.link.clone_for_conn();
                    if let Some(ep) = local {
                        link.endpoint = ep;
                    }
                    new_conns.push((s, link));
                }
            }
        }
        match outcome {
            Outcome::Remove => {
                self.remove(idx);
            }
            Outcome::Again | Outcome::Keep => {
                if matches!(outcome, Outcome::Again) {
                    self.again.push(idx);
                }
                if let Some(d) = deadline {
                    if !matches!(entry.scheduled, Some(s) if s <= d) {
                        entry.scheduled = Some(d);
                        self.timers.push(Reverse((d, idx, entry.uid)));
                    }
                }
            }
        }
        for (stream, link) in new_conns {
            self.add_conn(stream, link, now);
        }
    }

    fn add_conn(&mut self, mut stream: Stream, link: Link, now: Instant) {
        let idx = self.vacant();
        if stream.register(self.poll.registry(), Token(idx)).is_err() {
            self.free.push(idx);
            return;
        }
        let waker = self.new_waker(idx);
        let engine = Engine::new(stream, link.cfg.clone(), now, waker.clone());
        self.insert(idx, Obj::Conn(Box::new(Conn { engine, link, waker, attached: false })));
        self.run_obj(idx, now, true, true);
    }
}

fn deregister_obj(registry: &Registry, obj: Obj) {
    match obj {
        Obj::Listener(mut l) => {
            let _ = match &mut l.sock {
                ListenSock::Tcp(s) => registry.deregister(s),
                ListenSock::Unix(s) => registry.deregister(s),
                ListenSock::Ws(s, _) => registry.deregister(s),
            };
        }
        Obj::Conn(mut c) => c.engine.stream.deregister(registry),
        Obj::Session(mut s) => match &mut s.state {
            SState::Active(e) => e.stream.deregister(registry),
            SState::Connecting { stream, .. } => stream.deregister(registry),
            SState::Waiting(_) => {}
        },
    }
}

/// Accepts what is queued: each stream, with the endpoint its monitor events
/// name if not the listener's.
fn run_listener(l: &mut Listener, accepted: &mut Vec<(Stream, Option<Arc<str>>)>, now: Instant) -> Outcome {
    l.retry_at = None;
    for _ in 0..ACCEPT_BUDGET {
        let opts = &l.link.cfg.options;
        let res = match &l.sock {
            ListenSock::Tcp(s) => s.accept().map(|(s, peer)| {
                tcp::tune_stream(&s, opts);
                (filter::tcp_peer_allowed(opts, &peer), Stream::Tcp(s))
            }),
            ListenSock::Unix(s) => {
                s.accept().map(|(s, _)| (filter::ipc_peer_allowed(opts, s.as_raw_fd()), Stream::Unix(s)))
            }
            ListenSock::Ws(s, ws) => s.accept().and_then(|(s, peer)| {
                tcp::tune_stream(&s, opts);
                Ok((filter::tcp_peer_allowed(opts, &peer), ws.wrap(s)?))
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
                l.link.monitor.emit(ev::ACCEPTED, s.fd() as u32, local.as_deref().unwrap_or(&l.link.endpoint));
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

fn run_conn(c: &mut Conn, now: Instant) -> Outcome {
    loop {
        match c.engine.run(now) {
            Step::Idle => return Outcome::Keep,
            Step::Again => return Outcome::Again,
            Step::Closed(fault) => {
                c.link.report_closed(c.engine.stream.fd(), c.engine.is_handshaking(), &fault);
                if c.attached {
                    if let Some((mut p, _)) = c.engine.take_pipe() {
                        push_farewell(&c.link.cfg, &mut p);
                    }
                }
                return Outcome::Remove;
            }
            Step::Handshaken(peer) => {
                c.link.emit(ev::HANDSHAKE_SUCCEEDED, 0);
                let Some(mb) = c.link.mailbox.take() else {
                    return Outcome::Remove;
                };
                let ep = new_pipe_pair(&c.link, &mb, &c.waker, &peer, &c.engine.stream);
                c.engine.attach(ep, false);
                c.attached = true;
            }
        }
    }
}

impl Session {
    fn deadline(&self) -> Option<Instant> {
        let own = match &self.state {
            SState::Waiting(at) => *at,
            SState::Connecting { deadline, .. } => *deadline,
            SState::Active(e) => e.deadline(),
        };
        [own, self.linger.flatten()].into_iter().flatten().min()
    }

    /// While not connected: whether the session is finished (its socket is
    /// gone and nothing is left to deliver, or LINGER ran out).
    fn idle_done(&mut self, now: Instant) -> bool {
        let Some(p) = &self.pipe else {
            // IMMEDIATE on: nothing queues here; stop once the socket closed.
            return self.closing || self.queued;
        };
        if !p.out.is_writer_gone() {
            return false;
        }
        if p.out.is_terminated() {
            return true;
        }
        if self.linger.is_none() {
            let ms = self.link.cfg.linger_ms.load(Ordering::Relaxed);
            self.linger = Some(if ms < 0 { None } else { Some(now + Duration::from_millis(ms as u64)) });
        }
        matches!(self.linger, Some(Some(d)) if now >= d)
    }

    // RECONNECT_STOP (libzmq 4.3.5 acts on CONN_REFUSED only; its other
    // bits are kept and read back).

    /// Whether this failed connect ends the endpoint instead of retrying.
    fn stops_on(&self, e: &io::Error) -> bool {
        const RECONNECT_STOP_CONN_REFUSED: i32 = 0x1;
        self.link.cfg.options.reconnect_stop & RECONNECT_STOP_CONN_REFUSED != 0
            && e.raw_os_error() == Some(libc::ECONNREFUSED)
    }

    /// Give up on the endpoint: its queue goes (the socket sees the pipe
    /// end, as libzmq's session terminates it) and nothing retries.
    fn stop_reconnecting(&mut self) {
        if let Some(mb) = &self.link.mailbox {
            mb.send(SocketCommand::EndpointClosed { endpoint: self.link.endpoint_id });
        }
        self.pipe = None;
        self.closing = true;
        self.state = SState::Waiting(None);
    }

    fn retry_at(&mut self, now: Instant, jitter: u64) -> Option<Instant> {
        let opts = &self.link.cfg.options;
        let base = opts.reconnect_ivl.filter(|d| !d.is_zero())?;
        let cur = self.cur_ivl.unwrap_or(base);
        let base_ms = base.as_millis().max(1) as u64;
        let wait = cur + Duration::from_millis(jitter % base_ms);
        if let Some(max) = opts.reconnect_ivl_max.filter(|m| *m > base) {
            self.cur_ivl = Some((cur * 2).min(max));
        }
        self.link.emit(ev::CONNECT_RETRIED, wait.as_millis().min(u32::MAX as u128) as u32);
        Some(now + wait)
    }

    fn start_connect(&mut self, idx: usize, registry: &Registry, now: Instant, jitter: u64) {
        let opts = &self.link.cfg.options;
        let res = match &self.endpoint {
            // SOCKS_PROXY: connect to the proxy instead (a bad proxy address fails like a refused connect).
            Endpoint::Tcp(_) if !opts.socks_proxy.is_empty() => socks::proxy_addr(&opts.socks_proxy)
                .ok_or_else(|| io::Error::from_raw_os_error(libc::EINVAL))
                .and_then(|pa| tcp::resolve(&pa, opts.ipv6, false))
                .and_then(|sa| tcp::start_connect(sa, None, opts))
                .map(Stream::Tcp),
            Endpoint::Tcp(a) => tcp::resolve(a, opts.ipv6, false)
                .and_then(|sa| tcp::start_connect(sa, a.source.as_deref(), opts))
                .map(Stream::Tcp),
            Endpoint::Ipc(a) => ipc::start_connect(a).map(Stream::Unix),
            Endpoint::Inproc(_) => Err(io::Error::from_raw_os_error(libc::EINVAL)),
            Endpoint::Ws(w) => tcp::resolve(&w.tcp, opts.ipv6, false)
                .and_then(|sa| tcp::start_connect(sa, None, opts))
                .map(Stream::Tcp),
        };
        let deadline = opts.connect_timeout.filter(|d| !d.is_zero()).map(|d| now + d);
        match res {
            Ok(mut stream) => {
                if stream.register(registry, Token(idx)).is_ok() {
                    if let Stream::Tcp(_) = stream {
                        // A non-blocking tcp connect is in progress (libzmq
                        // reports this even when it completes quickly).
                        self.link.emit(ev::CONNECT_DELAYED, libc::EINPROGRESS as u32);
                    }
                    self.state = SState::Connecting { stream, deadline, socks: None };
                    return;
                }
                self.link.emit(ev::CLOSED, stream.fd() as u32);
                drop(stream);
                self.state = SState::Waiting(self.retry_at(now, jitter));
            }
            Err(e) => {
                if let Endpoint::Ipc(_) = self.endpoint {
                    // libzmq reports closing the socket of a refused ipc
                    // connect; ours is already closed, its fd unknown (-1).
                    self.link.emit(ev::CLOSED, u32::MAX);
                }
                if self.stops_on(&e) {
                    self.stop_reconnecting();
                    return;
                }
                self.state = SState::Waiting(self.retry_at(now, jitter))
            }
        }
    }

    /// A handshake completed: hand the engine its pipe. Returns false if the
    /// connection is not wanted any more.
    fn on_handshake(&mut self, engine: &mut Engine, peer: &PeerInfo) -> bool {
        if let Some(mut p) = self.pipe.take() {
            if self.handshakes > 0 {
                if let Some(mb) = &self.link.mailbox {
                    mb.send(SocketCommand::Hiccup { key: p.key });
                }
            }
            push_peer_frames(&self.link, &mut p, peer, &engine.stream);
            engine.attach(p, self.skip_partial);
            self.skip_partial = false;
        } else if !self.queued {
            let Some(mb) = self.link.mailbox.clone() else {
                return false;
            };
            let ep = new_pipe_pair(&self.link, &mb, &self.waker, peer, &engine.stream);
            engine.attach(ep, false);
        } else {
            return false;
        }
        self.handshakes += 1;
        self.cur_ivl = None;
        true
    }

    /// After a connection ended: take the queue back and plan what's next.
    fn on_disconnect(
        &mut self,
        mut engine: Engine,
        registry: &Registry,
        now: Instant,
        jitter: u64,
        established: bool,
    ) -> Outcome {
        engine.stream.deregister(registry);
        if self.linger.is_none() {
            // Keep the LINGER deadline the engine started counting.
            self.linger = engine.linger();
        }
        if let Some((mut p, mid)) = engine.take_pipe() {
            if established {
                push_farewell(&self.link.cfg, &mut p);
                // HICCUP_MSG (draft): the socket hears that its connection
                // dropped, as if the peer said so.
                let o = &self.link.cfg.options;
                if self.queued && o.receives_hiccup_msg(self.link.cfg.socket_type) {
                    p.inn.write(Msg::from_vec(o.hiccup_msg.clone()));
                    p.inn.flush();
                }
            }
            if self.queued {
                self.pipe = Some(p);
                self.skip_partial = mid;
            }
            // IMMEDIATE on: dropping the pipe tells the socket the peer left.
        }
        drop(engine);
        if self.idle_done(now) {
            return Outcome::Remove;
        }
        let at = self.retry_at(now, jitter);
        if at.is_none() && established {
            // RECONNECT_IVL -1/0: libzmq ends the endpoint after a disconnect.
            if let Some(mb) = &self.link.mailbox {
                mb.send(SocketCommand::EndpointClosed { endpoint: self.link.endpoint_id });
            }
            return Outcome::Remove;
        }
        self.state = SState::Waiting(at);
        Outcome::Keep
    }
}

/// Advance a SOCKS5 exchange on a connected proxy stream as far as the
/// socket allows: `Ok(true)` once the proxy has connected us.
fn socks_step(stream: &Stream, client: &mut Socks5) -> io::Result<bool> {
    use std::io::{Read, Write};
    let Stream::Tcp(t) = stream else {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    };
    loop {
        if client.is_done() {
            return Ok(true);
        }
        while !client.pending().is_empty() {
            match (&mut &*t).write(client.pending()) {
                Ok(n) => client.consumed(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        // Exactly what the reply still lacks: what follows belongs to ZMTP.
        let mut buf = [0u8; 64];
        let want = client.want().min(buf.len());
        match (&mut &*t).read(&mut buf[..want]) {
            Ok(0) => return Err(io::Error::from_raw_os_error(libc::ECONNRESET)),
            Ok(n) => client.feed(&buf[..n]).map_err(|_| io::Error::from_raw_os_error(libc::ECONNREFUSED))?,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

fn run_session(
    s: &mut Session,
    idx: usize,
    registry: &Registry,
    now: Instant,
    mut readable: bool,
    mut writable: bool,
    jitter: u64,
) -> Outcome {
    loop {
        match std::mem::replace(&mut s.state, SState::Waiting(None)) {
            SState::Waiting(at) => {
                s.state = SState::Waiting(at);
                if s.idle_done(now) {
                    return Outcome::Remove;
                }
                if s.closing && s.pipe.is_none() {
                    return Outcome::Remove;
                }
                match at {
                    Some(t) if now >= t => {
                        s.start_connect(idx, registry, now, jitter);
                        if s.closing && s.pipe.is_none() {
                            return Outcome::Remove; // RECONNECT_STOP
                        }
                        if let SState::Connecting { .. } = s.state {
                            // Unix sockets usually connect at once; the
                            // writable event tells either way.
                            return Outcome::Keep;
                        }
                        return Outcome::Keep;
                    }
                    _ => return Outcome::Keep,
                }
            }
            SState::Connecting { mut stream, deadline, mut socks } => {
                if s.idle_done(now) {
                    stream.deregister(registry);
                    return Outcome::Remove;
                }
                let timed_out = deadline.is_some_and(|d| now >= d);
                let status = if timed_out {
                    Err(io::Error::from_raw_os_error(libc::ETIMEDOUT))
                } else if let Some(client) = &mut socks {
                    socks_step(&stream, client)
                } else if readable || writable {
                    match &stream {
                        Stream::Tcp(t) => tcp::finish_connect(t),
                        Stream::Unix(u) => ipc::finish_connect(u),
                        Stream::Ws(_) => Ok(true),
                    }
                } else {
                    Ok(false)
                };
                let status = match (status, &s.endpoint) {
                    // The proxy is connected: ask it for the endpoint.
                    (Ok(true), Endpoint::Tcp(target))
                        if socks.is_none() && !s.link.cfg.options.socks_proxy.is_empty() =>
                    {
                        let o = &s.link.cfg.options;
                        match Socks5::new(target, &o.socks_username, &o.socks_password) {
                            Some(client) => {
                                let mut client = Box::new(client);
                                let st = socks_step(&stream, &mut client);
                                socks = Some(client);
                                st
                            }
                            None => Err(io::Error::from_raw_os_error(libc::EINVAL)),
                        }
                    }
                    (st, _) => st,
                };
                match status {
                    Ok(true) => {
                        if let Stream::Tcp(t) = &stream {
                            tcp::tune_stream(t, &s.link.cfg.options);
                        }
                        s.link.emit(ev::CONNECTED, stream.fd() as u32);
                        let stream = match &s.ws {
                            Some(ws) => match ws.wrap(stream) {
                                Ok(w) => w,
                                Err(_) => {
                                    // Unreachable in practice: the TLS config was checked at connect.
                                    s.state = SState::Waiting(s.retry_at(now, jitter));
                                    return Outcome::Keep;
                                }
                            },
                            None => stream,
                        };
                        let mut engine = Engine::new(stream, s.link.cfg.clone(), now, s.waker.clone());
                        engine.set_ready(true, true);
                        s.state = SState::Active(Box::new(engine));
                        readable = false;
                        writable = false;
                    }
                    Ok(false) => {
                        s.state = SState::Connecting { stream, deadline, socks };
                        return Outcome::Keep;
                    }
                    Err(e) => {
                        stream.deregister(registry);
                        s.link.emit(ev::CLOSED, stream.fd() as u32);
                        drop(stream);
                        if s.stops_on(&e) {
                            s.stop_reconnecting();
                            return Outcome::Remove;
                        }
                        s.state = SState::Waiting(s.retry_at(now, jitter));
                        return Outcome::Keep;
                    }
                }
            }
            SState::Active(mut engine) => {
                engine.set_ready(readable, writable);
                readable = false;
                writable = false;
                match engine.run(now) {
                    Step::Idle => {
                        s.state = SState::Active(engine);
                        return Outcome::Keep;
                    }
                    Step::Again => {
                        s.state = SState::Active(engine);
                        return Outcome::Again;
                    }
                    Step::Handshaken(peer) => {
                        s.link.emit(ev::HANDSHAKE_SUCCEEDED, 0);
                        if s.on_handshake(&mut engine, &peer) {
                            s.state = SState::Active(engine);
                            continue;
                        }
                        engine.stream.deregister(registry);
                        return Outcome::Remove;
                    }
                    Step::Closed(fault) => {
                        let established = !engine.is_handshaking();
                        s.link.report_closed(engine.stream.fd(), !established, &fault);
                        return s.on_disconnect(*engine, registry, now, jitter, established);
                    }
                }
            }
        }
    }
}
