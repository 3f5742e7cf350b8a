//! The connect side: a session connects (through SOCKS5 if asked),
//! reconnects with backoff after failures, keeps the socket's queue across
//! connections (IMMEDIATE off) and applies RECONNECT_STOP.

use super::link::{new_pipe_pair, push_farewell, push_peer_frames, Link};
use super::resolver::{self, Family, Lookup};
use super::shared::TokenWaker;
use super::Outcome;
use crate::channel::mailbox::SocketCommand;
use crate::channel::pipes::new_pipe_key;
use crate::io::engine::{Engine, Fault, Step};
use crate::io::stream::Stream;
use crate::io::EnginePipe;
use crate::monitor::monitor_event as ev;
use crate::msg::Msg;
use crate::transport::endpoint::Endpoint;
use crate::transport::endpoint::{TcpAddr, TcpHost};
use crate::transport::ipc;
use crate::transport::socks::{self, Socks5};
use crate::transport::tcp;
use crate::transport::ws::WsConnect;
use mio::{Registry, Token};
use oxmq_proto::PeerInfo;
use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const RECONNECT_STOP_CONN_REFUSED: i32 = 0x1;
const RECONNECT_STOP_HANDSHAKE_FAILED: i32 = 0x2;
const RECONNECT_STOP_AFTER_DISCONNECT: i32 = 0x4;

pub(super) enum SState {
    /// Connect (again) at this time; `None` = never (reconnect disabled).
    Waiting(Option<Instant>),
    /// Waiting for the resolver's answers for the endpoint's host names.
    Resolving(Box<Resolution>),
    /// tcp connects racing to the resolved addresses (RFC 8305).
    Racing(Box<Race>),
    Connecting {
        stream: Stream,
        deadline: Option<Instant>,
        /// SOCKS_PROXY: once the proxy is connected, the SOCKS5 exchange in progress.
        socks: Option<Box<Socks5>>,
    },
    Active(Box<Engine>),
}

/// RFC 8305's Connection Attempt Delay: the next address is tried this long
/// after the previous attempt began unless it connected (or at once if it
/// failed).
const ATTEMPT_DELAY: Duration = Duration::from_millis(250);

/// RFC 8305's Resolution Delay: with the A answer in and the AAAA one not,
/// the connect waits this long for it before it starts on IPv4 alone.
const RESOLUTION_DELAY: Duration = Duration::from_millis(50);

/// The lookups of one connect (RFC 8305 section 3): AAAA and A in parallel
/// (A alone without ZMQ_IPV6, as libzmq asks for AF_INET only then), and
/// the source part's host name, if it has one.
pub(super) struct Resolution {
    /// The AAAA and A lookups not answered yet.
    v6: Option<Arc<Lookup>>,
    v4: Option<Arc<Lookup>>,
    /// The source part's lookup, not answered yet.
    source: Option<Arc<Lookup>>,
    v6_addrs: Vec<SocketAddr>,
    v4_addrs: Vec<SocketAddr>,
    /// Where the connection is bound before it connects (empty: anywhere).
    sources: Vec<SocketAddr>,
    /// When the A answer came with addresses (the Resolution Delay runs from it).
    v4_at: Option<Instant>,
    /// Why a lookup failed: what the session reports if no address comes.
    failure: Option<io::Error>,
}

enum Resolved {
    Wait,
    /// Start connecting to these; the lookups still out go to the race.
    Start(Vec<SocketAddr>),
    Failed(io::Error),
}

impl Resolution {
    fn new(sources: Vec<SocketAddr>) -> Resolution {
        Resolution {
            v6: None,
            v4: None,
            source: None,
            v6_addrs: Vec::new(),
            v4_addrs: Vec::new(),
            sources,
            v4_at: None,
            failure: None,
        }
    }

    /// The Resolution Delay's end, while it is all the connect waits for.
    fn deadline(&self) -> Option<Instant> {
        let only_delay = self.source.is_none() && self.v6.is_some() && self.v6_addrs.is_empty();
        self.v4_at.filter(|_| only_delay && !self.v4_addrs.is_empty()).map(|t| t + RESOLUTION_DELAY)
    }

    fn note_failure(&mut self, e: io::Error) {
        // "No such name" from one family says less than a failing server.
        let vague = |e: &io::Error| matches!(resolver::failure_code(e), libc::EAI_NONAME | libc::EAI_NODATA);
        let replace = match &self.failure {
            None => true,
            Some(old) => vague(old) && !vague(&e),
        };
        if replace {
            self.failure = Some(e);
        }
    }

    fn poll(&mut self, now: Instant) -> Resolved {
        if let Some(answer) = self.v6.as_ref().and_then(|l| l.take()) {
            self.v6 = None;
            match answer {
                Ok(addrs) => self.v6_addrs = addrs,
                Err(e) => self.note_failure(e),
            }
        }
        if let Some(answer) = self.v4.as_ref().and_then(|l| l.take()) {
            self.v4 = None;
            match answer {
                Ok(addrs) => {
                    self.v4_at = Some(now).filter(|_| !addrs.is_empty());
                    self.v4_addrs = addrs;
                }
                Err(e) => self.note_failure(e),
            }
        }
        if let Some(answer) = self.source.as_ref().and_then(|l| l.take()) {
            self.source = None;
            match answer {
                Ok(addrs) if !addrs.is_empty() => self.sources = addrs,
                Ok(_) => return Resolved::Failed(io::Error::from_raw_os_error(libc::EADDRNOTAVAIL)),
                Err(e) => return Resolved::Failed(e),
            }
        }
        if self.source.is_some() {
            return Resolved::Wait;
        }
        let v4_ready =
            !self.v4_addrs.is_empty() && (self.v6.is_none() || self.v4_at.is_some_and(|t| now >= t + RESOLUTION_DELAY));
        if !self.v6_addrs.is_empty() || v4_ready {
            // IPv6 first, as RFC 6724's default policy prefers it.
            let mut addrs = std::mem::take(&mut self.v6_addrs);
            addrs.append(&mut self.v4_addrs);
            return Resolved::Start(addrs);
        }
        if self.v6.is_none() && self.v4.is_none() {
            let e = self.failure.take().unwrap_or_else(|| io::Error::from_raw_os_error(libc::EHOSTUNREACH));
            return Resolved::Failed(e);
        }
        Resolved::Wait
    }

    /// The destination lookups not answered yet.
    fn into_late(self) -> Vec<Arc<Lookup>> {
        self.v6.into_iter().chain(self.v4).collect()
    }
}

/// tcp connects to every address of a name until one connects.
pub(super) struct Race {
    /// Connects in progress, oldest first.
    pub(super) attempts: Vec<Stream>,
    /// Addresses not tried yet, in the order to try them.
    rest: VecDeque<SocketAddr>,
    /// When to start the next attempt.
    next_at: Instant,
    /// CONNECT_TIMEOUT, for the race as a whole.
    deadline: Option<Instant>,
    /// Why the last attempt failed: what the session reports if all do.
    last_err: Option<io::Error>,
    /// Where each attempt is bound before it connects (empty: anywhere).
    sources: Vec<SocketAddr>,
    /// The lookups of a family that has not answered yet: its addresses
    /// join the race when they come (RFC 8305 section 4).
    late: Vec<Arc<Lookup>>,
}

/// A connect-side session: connects, and reconnects after failures.
pub(super) struct Session {
    /// ws:// and wss://: what turns each connected tcp socket into a ws stream.
    pub(super) ws: Option<Arc<WsConnect>>,
    pub(super) link: Link,
    pub(super) endpoint: Endpoint,
    /// The socket's queue, kept across reconnects (IMMEDIATE off), while
    /// no engine holds it.
    pub(super) pipe: Option<EnginePipe>,
    /// Whether the socket gave us a queue (IMMEDIATE off).
    pub(super) queued: bool,
    /// The out pipe is in the middle of a message a dead connection began.
    pub(super) skip_partial: bool,
    pub(super) state: SState,
    /// Current reconnect interval (grows up to RECONNECT_IVL_MAX).
    pub(super) cur_ivl: Option<Duration>,
    pub(super) handshakes: u64,
    /// The socket closed (no more new connections unless data is lingering).
    pub(super) closing: bool,
    pub(super) linger: Option<Option<Instant>>,
    pub(super) waker: Arc<TokenWaker>,
    /// The socket's RECONNECT_STOP_AFTER_DISCONNECT mark.
    pub(super) disconnected: Arc<AtomicBool>,
}

impl Session {
    pub(super) fn deadline(&self) -> Option<Instant> {
        let own = match &self.state {
            SState::Waiting(at) => *at,
            SState::Connecting { deadline, .. } => *deadline,
            // Answers arrive through the waker.
            SState::Resolving(r) => r.deadline(),
            // next_at matters only while an address is left to try: once it
            // has passed with none left, waking at it would run the session
            // again at once, and again, a busy loop until the connect ends.
            SState::Racing(r) if r.rest.is_empty() => r.deadline,
            SState::Racing(r) => Some(r.deadline.map_or(r.next_at, |d| d.min(r.next_at))),
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

    // RECONNECT_STOP, bit by bit as libzmq 4.3.5 applies them.

    /// Whether this failed connect ends the endpoint instead of retrying.
    fn stops_on(&self, e: &io::Error) -> bool {
        self.link.cfg.options.reconnect_stop & RECONNECT_STOP_CONN_REFUSED != 0
            && e.raw_os_error() == Some(libc::ECONNREFUSED)
    }

    /// AFTER_DISCONNECT: once the socket has disconnected any endpoint, a
    /// refused ipc connect is not retried. Unlike the other bits the session
    /// and its queue stay (libzmq's ipc connecter just sets no timer).
    fn parks_on(&self, e: &io::Error) -> bool {
        matches!(self.endpoint, Endpoint::Ipc(_))
            && self.link.cfg.options.reconnect_stop & RECONNECT_STOP_AFTER_DISCONNECT != 0
            && e.raw_os_error() == Some(libc::ECONNREFUSED)
            && self.disconnected.load(Ordering::Relaxed)
    }

    /// HANDSHAKE_FAILED: whether a connection that failed before its
    /// handshake completed ends the endpoint. libzmq turns a dropped
    /// connection or a handshake timeout into a protocol error, which ends
    /// its session. (Without the bit a protocol error ends it too, see
    /// `protocol_fault`.)
    fn final_handshake_fault(&self, fault: &Fault) -> bool {
        self.link.cfg.options.reconnect_stop & RECONNECT_STOP_HANDSHAKE_FAILED != 0
            && !matches!(fault, Fault::HeartbeatDead | Fault::Linger)
    }

    /// libzmq 4.3.5 ends a connecting session for good on a protocol error,
    /// whatever the RECONNECT_STOP bits: a bad greeting, a mechanism or
    /// socket-type mismatch, an ERROR command, a malformed or oversize frame,
    /// in the handshake or after it (measured: one connection, no retry). A
    /// dropped connection, a handshake or heartbeat timeout are retried.
    fn protocol_fault(fault: &Fault) -> bool {
        matches!(fault, Fault::Handshake(_) | Fault::Protocol(_) | Fault::PeerError)
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
        self.link.monitor.counters.note_reconnect();
        self.link.emit(ev::CONNECT_RETRIED, wait.as_millis().min(u32::MAX as u128) as u32);
        Some(now + wait)
    }

    /// Where tcp and ws connect to: the endpoint's host, or the SOCKS proxy.
    fn tcp_target(&self) -> io::Result<TcpAddr> {
        let opts = &self.link.cfg.options;
        match &self.endpoint {
            // SOCKS_PROXY: connect to the proxy instead (a bad proxy address fails like a refused connect).
            Endpoint::Tcp(_) if !opts.socks_proxy.is_empty() => {
                socks::proxy_addr(&opts.socks_proxy).ok_or_else(|| io::Error::from_raw_os_error(libc::EINVAL))
            }
            Endpoint::Tcp(a) => Ok(a.clone()),
            Endpoint::Ws(w) => Ok(w.tcp.clone()),
            Endpoint::Ipc(_) | Endpoint::Inproc(_) => Err(io::Error::from_raw_os_error(libc::EINVAL)),
        }
    }

    /// Begins a connect. Host names are resolved anew each time (so a name
    /// that moves is followed, as libzmq resolves at every connect), off this
    /// thread.
    fn start_connect(&mut self, idx: usize, registry: &Registry, now: Instant, jitter: u64) {
        if let Endpoint::Ipc(a) = &self.endpoint {
            match ipc::start_connect(a).map(Stream::Unix) {
                Ok(mut stream) => {
                    if stream.register(registry, Token(idx)).is_ok() {
                        let deadline = self.link.cfg.options.connect_timeout.filter(|d| !d.is_zero()).map(|d| now + d);
                        self.state = SState::Connecting { stream, deadline, socks: None };
                        return;
                    }
                    self.link.emit(ev::CLOSED, stream.fd() as u32);
                    drop(stream);
                    self.state = SState::Waiting(self.retry_at(now, jitter));
                }
                Err(e) => {
                    // libzmq reports closing the socket of a refused ipc
                    // connect; ours is already closed, its fd unknown (-1).
                    self.link.emit(ev::CLOSED, u32::MAX);
                    self.connect_failed(e, now, jitter);
                }
            }
            return;
        }
        let target = match self.tcp_target() {
            Ok(t) => t,
            Err(e) => return self.connect_failed(e, now, jitter),
        };
        let ipv6 = self.link.cfg.options.ipv6;
        let source = self.source_part().cloned();
        let numeric_source = match &source {
            Some(src) if !matches!(src.host, TcpHost::Name(_)) => match tcp::source_addrs(src, ipv6) {
                Ok(addrs) => addrs,
                Err(e) => return self.connect_failed(e, now, jitter),
            },
            _ => Vec::new(),
        };
        let source_name = source.and_then(|src| match src.host {
            TcpHost::Name(name) => Some((name, src.port.unwrap_or(0))),
            _ => None,
        });
        if source_name.is_none() && !matches!(target.host, TcpHost::Name(_)) {
            // Numbers only: no lookup, no state in between.
            return match tcp::resolve(&target, ipv6, false) {
                Ok(sa) => self.start_race(vec![sa], numeric_source, Vec::new(), idx, registry, now, jitter),
                Err(e) => self.connect_failed(e, now, jitter),
            };
        }
        let wake: Arc<dyn crate::pipe::Wake> = self.waker.clone();
        let mut res = Resolution::new(numeric_source);
        if let Some((name, port)) = source_name {
            res.source = Some(if ipv6 {
                resolver::resolve(&name, port, wake.clone())
            } else {
                resolver::resolve_family(&name, port, Family::V4, wake.clone())
            });
        }
        match &target.host {
            TcpHost::Name(name) => {
                let port = target.port.unwrap_or(0);
                if ipv6 {
                    res.v6 = Some(resolver::resolve_family(name, port, Family::V6, wake.clone()));
                }
                res.v4 = Some(resolver::resolve_family(name, port, Family::V4, wake));
            }
            _ => match tcp::resolve(&target, ipv6, false) {
                Ok(sa) if sa.is_ipv6() => res.v6_addrs.push(sa),
                Ok(sa) => res.v4_addrs.push(sa),
                Err(e) => return self.connect_failed(e, now, jitter),
            },
        }
        self.state = SState::Resolving(Box::new(res));
    }

    /// The `src` of `tcp://src;dst` (not used through a SOCKS proxy).
    fn source_part(&self) -> Option<&TcpAddr> {
        match &self.endpoint {
            Endpoint::Tcp(a) if self.link.cfg.options.socks_proxy.is_empty() => a.source.as_deref(),
            _ => None,
        }
    }

    /// Moves a resolution on: waits, starts the race or gives up. A lookup
    /// that found nothing is reported as RESOLVE_FAILED (oxmq only; libzmq
    /// reports nothing of it) before the retry's CONNECT_RETRIED.
    fn step_resolution(
        &mut self,
        mut res: Box<Resolution>,
        idx: usize,
        registry: &Registry,
        now: Instant,
        jitter: u64,
    ) {
        match res.poll(now) {
            Resolved::Wait => self.state = SState::Resolving(res),
            Resolved::Start(addrs) => {
                let sources = std::mem::take(&mut res.sources);
                self.start_race(addrs, sources, res.into_late(), idx, registry, now, jitter)
            }
            Resolved::Failed(e) => {
                let code = resolver::failure_code(&e);
                self.link.emit_oxmq(ev::RESOLVE_FAILED, i64::from(code) as u64);
                self.connect_failed(e, now, jitter)
            }
        }
    }

    /// A connect could not even start, or every address failed.
    fn connect_failed(&mut self, e: io::Error, now: Instant, jitter: u64) {
        if self.stops_on(&e) {
            self.stop_reconnecting();
            return;
        }
        if self.parks_on(&e) {
            self.state = SState::Waiting(None);
            return;
        }
        self.state = SState::Waiting(self.retry_at(now, jitter))
    }

    #[allow(clippy::too_many_arguments)]
    fn start_race(
        &mut self,
        addrs: Vec<SocketAddr>,
        sources: Vec<SocketAddr>,
        late: Vec<Arc<Lookup>>,
        idx: usize,
        registry: &Registry,
        now: Instant,
        jitter: u64,
    ) {
        let rest = resolver::attempt_order(addrs, self.link.cfg.options.ipv6);
        if rest.is_empty() && late.is_empty() {
            // Nothing of a usable family (libzmq's AF_INET-only lookup fails alike).
            return self.connect_failed(io::Error::from_raw_os_error(libc::EHOSTUNREACH), now, jitter);
        }
        let deadline = self.link.cfg.options.connect_timeout.filter(|d| !d.is_zero()).map(|d| now + d);
        let race = Race { attempts: Vec::new(), rest, next_at: now, deadline, last_err: None, sources, late };
        self.step_race(race, idx, registry, now, jitter, false);
    }

    /// Advances a race: reaps finished attempts (only when the poller reported
    /// readiness: a connect ends with an edge, and a wake-up from the pipe or
    /// a timer would otherwise cost two syscalls per attempt for nothing),
    /// starts the next address when its time came, and moves on to the winner
    /// or to the retry.
    #[allow(clippy::too_many_arguments)]
    fn step_race(&mut self, mut race: Race, idx: usize, registry: &Registry, now: Instant, jitter: u64, ready: bool) {
        let opts = &self.link.cfg.options;
        if race.deadline.is_some_and(|d| now >= d) {
            for mut stream in race.attempts.drain(..) {
                stream.deregister(registry);
                self.link.emit(ev::CLOSED, stream.fd() as u32);
            }
            return self.connect_failed(io::Error::from_raw_os_error(libc::ETIMEDOUT), now, jitter);
        }
        if !race.late.is_empty() {
            let ipv6 = opts.ipv6;
            race.late.retain(|lookup| match lookup.take() {
                None => true,
                Some(Ok(addrs)) => {
                    race.rest = resolver::add_late(std::mem::take(&mut race.rest), addrs, ipv6);
                    false
                }
                Some(Err(_)) => false,
            });
        }
        let mut i = 0;
        while ready && i < race.attempts.len() {
            let status = match &race.attempts[i] {
                Stream::Tcp(t) => tcp::finish_connect(t),
                _ => Ok(true),
            };
            match status {
                Ok(true) => {
                    let winner = race.attempts.swap_remove(i);
                    // The others lost: closed quietly, as libzmq, which
                    // makes one attempt, would never have reported them.
                    for mut loser in race.attempts.drain(..) {
                        loser.deregister(registry);
                    }
                    self.state = SState::Connecting { stream: winner, deadline: race.deadline, socks: None };
                    return;
                }
                Ok(false) => i += 1,
                Err(e) => {
                    let mut stream = race.attempts.remove(i);
                    stream.deregister(registry);
                    self.link.emit(ev::CLOSED, stream.fd() as u32);
                    race.last_err = Some(e);
                    race.next_at = now;
                }
            }
        }
        while now >= race.next_at {
            let Some(sa) = race.rest.pop_front() else { break };
            let source = tcp::pick_source(&sa, &race.sources);
            match tcp::start_connect(sa, source, opts).map(Stream::Tcp) {
                Ok(mut stream) => {
                    if stream.register(registry, Token(idx)).is_ok() {
                        // A non-blocking tcp connect is in progress (libzmq
                        // reports this even when it completes quickly).
                        self.link.emit(ev::CONNECT_DELAYED, libc::EINPROGRESS as u32);
                        race.attempts.push(stream);
                        race.next_at = now + ATTEMPT_DELAY;
                    } else {
                        self.link.emit(ev::CLOSED, stream.fd() as u32);
                        race.last_err = Some(io::Error::from_raw_os_error(libc::ENOMEM));
                    }
                }
                Err(e) => race.last_err = Some(e),
            }
        }
        if race.attempts.is_empty() && race.rest.is_empty() && race.late.is_empty() {
            let e = race.last_err.take().unwrap_or_else(|| io::Error::from_raw_os_error(libc::ECONNREFUSED));
            return self.connect_failed(e, now, jitter);
        }
        if race.attempts.is_empty() && !race.rest.is_empty() {
            race.next_at = now;
            return self.step_race(race, idx, registry, now, jitter, false);
        }
        self.state = SState::Racing(Box::new(race));
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
            let ep = new_pipe_pair(&self.link, &mb, &self.waker, peer, &engine.stream, new_pipe_key());
            engine.attach(ep, false);
        } else {
            return false;
        }
        self.handshakes += 1;
        self.cur_ivl = None;
        true
    }

    /// After a connection ended: take the queue back and plan what's next
    /// (`last`: the endpoint ends, see `final_handshake_fault`).
    fn on_disconnect(
        &mut self,
        mut engine: Engine,
        registry: &Registry,
        now: Instant,
        jitter: u64,
        established: bool,
        last: bool,
    ) -> Outcome {
        engine.stream.deregister(registry);
        if self.linger.is_none() {
            // Keep the LINGER deadline the engine started counting.
            self.linger = engine.linger();
        }
        if let Some((mut p, mid)) = engine.take_pipe() {
            if established {
                push_farewell(&self.link.cfg, &mut p, false, &engine.stream);
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
        if last {
            self.stop_reconnecting();
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

pub(super) fn run_session(
    s: &mut Session,
    idx: usize,
    registry: &Registry,
    now: Instant,
    mut readable: bool,
    mut writable: bool,
    jitter: u64,
) -> Outcome {
    let mut won_race = false;
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
                        if let SState::Connecting { stream: Stream::Tcp(_), .. } = s.state {
                            // A tcp attempt already connected.
                            writable = true;
                            continue;
                        }
                        // Unix sockets usually connect at once; the
                        // writable event tells either way.
                        return Outcome::Keep;
                    }
                    _ => return Outcome::Keep,
                }
            }
            SState::Resolving(res) => {
                if s.idle_done(now) || (s.closing && s.pipe.is_none()) {
                    return Outcome::Remove;
                }
                // A failed lookup: libzmq's connecter fails before any
                // socket exists, so no CLOSED, only CONNECT_RETRIED.
                s.step_resolution(res, idx, registry, now, jitter);
                if s.closing && s.pipe.is_none() {
                    return Outcome::Remove; // RECONNECT_STOP
                }
                if let SState::Connecting { .. } = s.state {
                    writable = true;
                    continue;
                }
                return Outcome::Keep;
            }
            SState::Racing(mut race) => {
                if s.idle_done(now) {
                    for mut stream in race.attempts.drain(..) {
                        stream.deregister(registry);
                    }
                    return Outcome::Remove;
                }
                s.step_race(*race, idx, registry, now, jitter, readable || writable);
                if s.closing && s.pipe.is_none() {
                    return Outcome::Remove; // RECONNECT_STOP
                }
                if let SState::Connecting { .. } = s.state {
                    // The winner is connected (step_race just checked): on to
                    // SOCKS, ws and the handshake.
                    won_race = true;
                    continue;
                }
                return Outcome::Keep;
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
                } else if std::mem::take(&mut won_race) {
                    Ok(true)
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
                        match &stream {
                            Stream::Tcp(t) => tcp::tune_stream(t, &s.link.cfg.options),
                            Stream::Unix(u) => ipc::tune_stream(u, &s.link.cfg.options),
                            _ => {}
                        }
                        s.link.set_conn(Some(&stream));
                        s.link.emit(ev::CONNECTED, stream.fd() as u32);
                        let stream = match &s.ws {
                            Some(ws) => match stream.into_ws(ws) {
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
                // The socket closed while the handshake ran: once LINGER
                // allows, drop the connection at once, as libzmq's session
                // does (the engine has no pipe yet to count LINGER on, and the
                // peer should see the close now, not at HANDSHAKE_IVL).
                if engine.is_handshaking() && s.idle_done(now) {
                    engine.stream.deregister(registry);
                    return Outcome::Remove;
                }
                engine.set_ready(readable, writable);
                readable = false;
                writable = false;
                match engine.run_registered(now, registry, Token(idx)) {
                    Step::Idle => {
                        s.state = SState::Active(engine);
                        return Outcome::Keep;
                    }
                    Step::Again => {
                        s.state = SState::Active(engine);
                        return Outcome::Again;
                    }
                    Step::Handshaken(peer) => {
                        // libzmq reports a handshake only for ZMTP 3 peers: 1.0 and 2.0
                        // peers have no mechanism to complete, so no event.
                        s.link.set_peer(&peer, &engine.stream);
                        if peer.version.0 >= 3 {
                            s.link.emit(ev::HANDSHAKE_SUCCEEDED, 0);
                        }
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
                        s.link.set_conn(None);
                        let last = Session::protocol_fault(&fault) || (!established && s.final_handshake_fault(&fault));
                        return s.on_disconnect(*engine, registry, now, jitter, established, last);
                    }
                }
            }
        }
    }
}
