//! The I/O thread's poll loop and the objects it owns: listeners, accepted
//! connections, connect-side sessions and packet engines (udp, DGRAM,
//! pgm/epgm, norm).
//!
//! Every object lives in a slab; its index is its `mio::Token`. An object is
//! "run" whenever its socket is ready, a pipe wakes it, its timer expires or
//! it asked to run again (fairness budget). Running an object that has
//! nothing to do is harmless, so spurious runs are never a problem.
//!
//! This file is the loop and the slab; `shared` is how other threads reach
//! it, `listener` the accept side, `session` the connect side and `link`
//! what they share about their socket and an engine's pipes.

mod link;
mod listener;
mod resolver;
mod session;
mod shared;

use link::Link;
pub(in crate::io) use listener::ListenSock;
use listener::{run_conn, run_listener, Conn, Listener};
use session::{run_session, SState, Session};
use shared::{lock, Inbox, TokenWaker, AWAKE, SLEEPING, SPINNING};
pub(in crate::io) use shared::{Cmd, Shared};

use crate::channel::mailbox::SocketCommand;
use crate::channel::pipes::new_pipe_key;
use crate::io::engine::Engine;
use crate::io::stream::Stream;
use crate::monitor::monitor_event as ev;
use crate::pipe::Wake;
use crate::transport::endpoint::Endpoint;
use crate::transport::packet::{PacketEngine, Step};
use crate::transport::ws::WsConnect;
use crate::wait::{BusyPoll, Spin, Spun};
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Registry, Token};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

const WAKER_TOKEN: Token = Token(usize::MAX);

/// Accepted connections set up (registered, greeted) per loop iteration.
/// Accepting is cheap and setting up is not: in a connection storm the
/// listener empties the kernel's accept queue every iteration and the setups
/// follow at this pace, so the queue never fills and the kernel never drops a
/// SYN (which costs the peer a 1 s retransmission timeout, then 2 s...).
const SETUP_BUDGET: usize = 256;

/// A spinning loop calls `epoll_wait(0)` once per this many looks at its
/// notifier flag (about a microsecond apart).
const EPOLL_EVERY: u32 = 16;

enum Obj {
    Listener(Listener),
    Conn(Box<Conn>),
    Session(Box<Session>),
    Packet(Box<Packet>),
}

/// A udp, DGRAM, pgm/epgm or norm endpoint (`transport::packet`): its
/// engine, the fds registered for it, and when it asked to run again.
struct Packet {
    engine: Box<dyn PacketEngine>,
    /// Each with whether it is always watched for writing.
    fds: Vec<(RawFd, bool)>,
    /// The others are watched for writing too (`Step::WaitWritable`).
    writable_armed: bool,
    waker: Arc<TokenWaker>,
    deadline: Option<Instant>,
}

impl Packet {
    fn arm_writable(&mut self, registry: &Registry, token: Token, on: bool) {
        for &(fd, always) in &self.fds {
            if !always {
                let interest = if on { Interest::READABLE | Interest::WRITABLE } else { Interest::READABLE };
                // Modifying a registration reports a readiness that is
                // already there, so no edge is lost in between.
                let _ = registry.reregister(&mut SourceFd(&fd), token, interest);
            }
        }
        self.writable_armed = on;
    }
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
    /// Accepted streams not set up yet, oldest first (see [`SETUP_BUDGET`]).
    fresh: VecDeque<(Stream, Link)>,
    next_uid: u64,
    rng: u64,
    live: usize,
    /// Whether the loop spins in `epoll_wait(0)` before it sleeps.
    busy: BusyPoll,
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
            state: AtomicU8::new(AWAKE),
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
            fresh: VecDeque::new(),
            next_uid: 1,
            rng: seed | 1,
            live: 0,
            busy: BusyPoll::default(),
        };
        Ok((poller, shared))
    }

    pub(super) fn run(mut self) {
        let mut events = Events::with_capacity(1024);
        let mut woken = Vec::new();
        let mut again = Vec::new();
        loop {
            let now = Instant::now();
            let mut timeout = if self.again.is_empty() && self.fresh.is_empty() {
                self.timers.peek().map(|Reverse((t, _, _))| t.saturating_duration_since(now))
            } else {
                Some(Duration::ZERO)
            };
            let spin = match timeout {
                Some(t) if t.is_zero() => None,
                _ => self.busy.begin(timeout.map(|t| now + t)),
            };
            let spun = spin.as_ref().map_or(Spun::No, |spin| self.spin(spin, &mut events));
            let mut queued = false;
            if !spun.ready() {
                self.shared.state.store(SLEEPING, Ordering::SeqCst);
                if !lock(&self.shared.woken).is_empty() || !lock(&self.shared.inbox).cmds.is_empty() {
                    queued = true;
                    timeout = Some(Duration::ZERO);
                } else if let (Some(t), Some(spin)) = (timeout, &spin) {
                    timeout = Some(t.saturating_sub(spin.start().elapsed()));
                }
                if let Err(e) = self.poll.poll(&mut events, timeout) {
                    if e.kind() != io::ErrorKind::Interrupted {
                        // Nothing sensible to do but retry; avoid a hot loop.
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    events.clear();
                }
            }
            let notified = self.shared.state.swap(AWAKE, Ordering::SeqCst) == AWAKE;
            if let Some(spin) = spin {
                // A timer's expiry is no wake-up: it says nothing of how soon work comes.
                let woken = spun.ready() || notified || queued || !events.is_empty();
                self.busy.end(spin, spun, woken);
            }
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

            for _ in 0..SETUP_BUDGET {
                let Some((stream, link)) = self.fresh.pop_front() else { break };
                self.add_conn(stream, link, now);
            }

            std::mem::swap(&mut woken, &mut *lock(&self.shared.woken));
            for t in woken.drain(..) {
                if let Some(Some(e)) = self.slab.get(t) {
                    match &e.obj {
                        Obj::Conn(c) => c.waker.queued.store(false, Ordering::Release),
                        Obj::Session(s) => s.waker.queued.store(false, Ordering::Release),
                        Obj::Packet(p) => p.waker.queued.store(false, Ordering::Release),
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
            st.live = self.live + self.fresh.len();
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

    /// Busy-poll (see [`BusyPoll`]) for readiness or a notifier before the
    /// loop sleeps: ready when either came, with the ready events in `events`.
    fn spin(&mut self, spin: &Spin, events: &mut Events) -> Spun {
        if !spin.allowed() {
            return Spun::No;
        }
        self.shared.state.store(SPINNING, Ordering::SeqCst);
        if !lock(&self.shared.woken).is_empty() || !lock(&self.shared.inbox).cmds.is_empty() {
            return Spun::Paid;
        }
        let (poll, state) = (&mut self.poll, &self.shared.state);
        let mut n = 0u32;
        spin.run(|| {
            if state.load(Ordering::SeqCst) == AWAKE {
                return true;
            }
            // epoll_wait every ~microsecond, the atomic in between.
            n += 1;
            if !n.is_multiple_of(EPOLL_EVERY) {
                return false;
            }
            if poll.poll(events, Some(Duration::ZERO)).is_err() {
                events.clear();
            }
            !events.is_empty()
        })
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
                    Obj::Listener(Listener {
                        sock,
                        link: Link { bind_side: true, ..Link::from(link) },
                        _cleanup: cleanup,
                        wildcard,
                        retry_at: None,
                    }),
                );
                // Connections may already be queued.
                self.run_obj(idx, now, true, false);
            }
            Cmd::Connect { endpoint, link, pipe } => {
                let pipe = pipe.map(|p| *p);
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
                    disconnected: link.disconnected.clone(),
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
            Cmd::Packet(mut engine) => {
                let idx = self.vacant();
                let waker = self.new_waker(idx);
                engine.set_waker(waker.clone());
                let mut fds: Vec<(RawFd, bool)> = Vec::new();
                for (fd, write) in engine.fds() {
                    if fd < 0 || fds.iter().any(|&(f, _)| f == fd) {
                        continue;
                    }
                    let interest = if write { Interest::READABLE | Interest::WRITABLE } else { Interest::READABLE };
                    if self.poll.registry().register(&mut SourceFd(&fd), Token(idx), interest).is_ok() {
                        fds.push((fd, write));
                    }
                }
                let packet = Packet { engine, fds, writable_armed: false, waker, deadline: None };
                self.insert(idx, Obj::Packet(Box::new(packet)));
                self.run_obj(idx, now, true, true);
            }
            Cmd::CloseEndpoint { socket_id, endpoint_id } => {
                self.fresh.retain(|(_, l)| !(l.socket_id == socket_id && l.endpoint_id == endpoint_id));
                let mut mailbox = None;
                for idx in 0..self.slab.len() {
                    let matches = match self.slab[idx].as_ref().map(|e| &e.obj) {
                        Some(Obj::Listener(l)) => l.link.socket_id == socket_id && l.link.endpoint_id == endpoint_id,
                        Some(Obj::Conn(c)) => c.link.socket_id == socket_id && c.link.endpoint_id == endpoint_id,
                        Some(Obj::Session(s)) => s.link.socket_id == socket_id && s.link.endpoint_id == endpoint_id,
                        // Ends when the socket lets go of its pipe.
                        Some(Obj::Packet(_)) => false,
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
                                Obj::Conn(_) | Obj::Packet(_) => None,
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
                // Never attached, so nothing to deliver: closed as unattached connections are below.
                self.fresh.retain(|(_, l)| l.socket_id != socket_id);
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
                run_conn(c, now, registry, Token(idx))
            }
            Obj::Session(s) => run_session(s, idx, registry, now, readable, writable, jitter),
            Obj::Packet(p) => {
                let (outcome, deadline, arm) = match p.engine.step() {
                    Step::Done => (Outcome::Remove, None, None),
                    Step::Again => (Outcome::Again, None, None),
                    Step::Wait(d) => (Outcome::Keep, d.and_then(|d| now.checked_add(d)), Some(false)),
                    Step::WaitWritable => (Outcome::Keep, None, Some(true)),
                };
                p.deadline = deadline;
                if let Some(on) = arm.filter(|&on| on != p.writable_armed) {
                    p.arm_writable(registry, Token(idx), on);
                }
                outcome
            }
        };
        let deadline = match &entry.obj {
            Obj::Listener(l) => l.retry_at,
            Obj::Conn(c) => c.engine.deadline(),
            Obj::Session(s) => s.deadline(),
            Obj::Packet(p) => p.deadline,
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
        self.fresh.extend(new_conns);
    }

    fn add_conn(&mut self, mut stream: Stream, mut link: Link, now: Instant) {
        link.set_conn(Some(&stream));
        let idx = self.vacant();
        if stream.register(self.poll.registry(), Token(idx)).is_err() {
            self.free.push(idx);
            return;
        }
        let waker = self.new_waker(idx);
        let engine = Engine::new(stream, link.cfg.clone(), now, waker.clone());
        let key = new_pipe_key();
        self.insert(idx, Obj::Conn(Box::new(Conn { engine, link, waker, attached: false, key })));
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
            SState::Racing(r) => r.attempts.iter_mut().for_each(|s| s.deregister(registry)),
            SState::Waiting(_) | SState::Resolving(_) => {}
        },
        // Deregistered before the engine (and the library's fds) go.
        Obj::Packet(p) => {
            for (fd, _) in &p.fds {
                let _ = registry.deregister(&mut SourceFd(fd));
            }
        }
    }
}
