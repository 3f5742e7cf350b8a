//! Shared helpers for oxmq's integration tests: a per-test watchdog, socket
//! factories with bounded timeouts, transports, deadline-bounded waiting,
//! monitor readers and their events, and hand-built ZMTP 3.1 bytes for
//! raw-TCP peers.
#![allow(dead_code)]

use oxmq::{opt, Context, Error, Msg, Socket, SocketType, DONTWAIT};
use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Per-operation timeout used for RCVTIMEO/SNDTIMEO on test sockets.
pub(crate) const TIMEOUT_MS: i64 = 5000;
/// Upper bound for "eventually" conditions.
pub(crate) const BOUND: Duration = Duration::from_secs(10);
/// Per-test watchdog limit: the whole process aborts if a test runs longer.
pub(crate) const WATCHDOG: Duration = Duration::from_secs(60);

// ---------------------------------------------------------------------------
// Watchdog

struct Watch {
    entries: Mutex<HashMap<u64, (String, Instant)>>,
}

fn watch() -> &'static Watch {
    static W: OnceLock<Watch> = OnceLock::new();
    W.get_or_init(|| {
        std::thread::Builder::new()
            .name("test-watchdog".into())
            .spawn(|| loop {
                std::thread::sleep(Duration::from_millis(200));
                let w = watch();
                let now = Instant::now();
                let entries = w.entries.lock().unwrap_or_else(|e| e.into_inner());
                for (name, deadline) in entries.values() {
                    if now >= *deadline {
                        eprintln!("\n*** WATCHDOG: test `{name}` exceeded {WATCHDOG:?}; aborting the process ***");
                        std::process::abort();
                    }
                }
            })
            .expect("spawn watchdog");
        Watch { entries: Mutex::new(HashMap::new()) }
    })
}

/// Keeps a test under the watchdog while alive.
pub(crate) struct Guard(u64);

impl Drop for Guard {
    fn drop(&mut self) {
        watch().entries.lock().unwrap_or_else(|e| e.into_inner()).remove(&self.0);
    }
}

/// Put the calling test under the watchdog: `let _g = common::guard();`.
pub(crate) fn guard() -> Guard {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    let name = std::thread::current().name().unwrap_or("<unnamed>").to_string();
    watch().entries.lock().unwrap_or_else(|e| e.into_inner()).insert(id, (name, Instant::now() + WATCHDOG));
    Guard(id)
}

// ---------------------------------------------------------------------------
// Sockets

/// A socket with LINGER 0 and 5 s send/receive timeouts, so bugs fail rather than hang.
pub(crate) fn sock(ctx: &Context, kind: SocketType) -> Socket {
    let s = ctx.socket(kind).expect("create socket");
    s.set_option_int(opt::LINGER, 0).expect("LINGER");
    s.set_option_int(opt::RCVTIMEO, TIMEOUT_MS).expect("RCVTIMEO");
    s.set_option_int(opt::SNDTIMEO, TIMEOUT_MS).expect("SNDTIMEO");
    s
}

pub(crate) fn errno_of<T: std::fmt::Debug>(r: Result<T, Error>) -> i32 {
    match r {
        Ok(v) => panic!("expected an error, got Ok({v:?})"),
        Err(e) => e.errno(),
    }
}

#[track_caller]
pub(crate) fn assert_errno<T: std::fmt::Debug>(r: Result<T, Error>, want: i32) {
    match r {
        Ok(v) => panic!("expected errno {want} ({}), got Ok({v:?})", Error::strerror(want)),
        Err(e) => assert_eq!(e.errno(), want, "expected errno {want} ({}), got {e:?} ({e})", Error::strerror(want)),
    }
}

/// Receive one frame (bounded by RCVTIMEO) as bytes.
#[track_caller]
pub(crate) fn recv(s: &Socket) -> Vec<u8> {
    match s.recv(0) {
        Ok(m) => m.to_vec(),
        Err(e) => panic!("recv failed: {e:?} ({e})"),
    }
}

/// Receive a whole message as byte vectors.
#[track_caller]
pub(crate) fn recv_parts(s: &Socket) -> Vec<Vec<u8>> {
    match s.recv_multipart(0) {
        Ok(parts) => parts.iter().map(|m| m.to_vec()).collect(),
        Err(e) => panic!("recv_multipart failed: {e:?} ({e})"),
    }
}

#[track_caller]
pub(crate) fn send(s: &Socket, data: &[u8]) {
    if let Err(e) = s.send(Msg::from(data), 0) {
        panic!("send failed: {e:?} ({e})");
    }
}

#[track_caller]
pub(crate) fn send_parts(s: &Socket, parts: &[&[u8]]) {
    if let Err(e) = s.send_multipart(parts.iter().map(|p| Msg::from(*p)), 0) {
        panic!("send_multipart failed: {e:?} ({e})");
    }
}

/// Assert nothing is waiting right now.
#[track_caller]
pub(crate) fn assert_nothing(s: &Socket) {
    match s.recv(DONTWAIT) {
        Err(e) if e.errno() == oxmq::errno::EAGAIN => {}
        Err(e) => panic!("expected EAGAIN, got {e:?}"),
        Ok(m) => panic!("expected no message, got {:?}", m.as_slice()),
    }
}

/// Assert no message arrives within `ms` (absence check; bounded).
#[track_caller]
pub(crate) fn assert_nothing_within(s: &Socket, ms: i64) {
    let mut items = [oxmq::PollItem::from_socket(s, oxmq::POLLIN)];
    let n = oxmq::poll(&mut items, ms).expect("poll");
    if n != 0 {
        let m = s.recv(DONTWAIT);
        panic!("expected no message within {ms} ms, got {:?}", m.map(|m| m.to_vec()));
    }
}

/// Poll until `cond` holds or `bound` passes; returns whether it held.
pub(crate) fn eventually(bound: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + bound;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

// ---------------------------------------------------------------------------
// Endpoints and transports

static COUNTER: AtomicU64 = AtomicU64::new(0);

pub(crate) fn unique(prefix: &str) -> String {
    format!("{prefix}-{}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed))
}

/// A fresh filesystem ipc endpoint (the path does not exist yet).
pub(crate) fn ipc_path_endpoint() -> String {
    let dir = std::env::temp_dir();
    let p = dir.join(format!("{}.sock", unique("oxmq-t")));
    let _ = std::fs::remove_file(&p);
    format!("ipc://{}", p.display())
}

pub(crate) fn ipc_abstract_endpoint() -> String {
    format!("ipc://@{}", unique("oxmq-abstract"))
}

pub(crate) fn inproc_endpoint() -> String {
    format!("inproc://{}", unique("oxmq-inproc"))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Transport {
    Tcp,
    IpcPath,
    IpcAbstract,
    /// inproc, bind before connect.
    InprocBindFirst,
    /// inproc, connect before bind.
    InprocConnectFirst,
}

impl Transport {
    pub(crate) fn is_inproc(self) -> bool {
        matches!(self, Transport::InprocBindFirst | Transport::InprocConnectFirst)
    }
}

/// Bind `binder` and connect `connector` over transport `t` (in the order the
/// transport variant says); returns the endpoint string the connector used.
#[track_caller]
pub(crate) fn link(t: Transport, binder: &Socket, connector: &Socket) -> String {
    match t {
        Transport::Tcp => {
            binder.bind("tcp://127.0.0.1:*").expect("bind tcp");
            let ep = binder.last_endpoint().expect("last_endpoint");
            connector.connect(&ep).expect("connect tcp");
            ep
        }
        Transport::IpcPath | Transport::IpcAbstract | Transport::InprocBindFirst => {
            let ep = match t {
                Transport::IpcPath => ipc_path_endpoint(),
                Transport::IpcAbstract => ipc_abstract_endpoint(),
                _ => inproc_endpoint(),
            };
            binder.bind(&ep).unwrap_or_else(|e| panic!("bind {ep}: {e:?}"));
            connector.connect(&ep).unwrap_or_else(|e| panic!("connect {ep}: {e:?}"));
            ep
        }
        Transport::InprocConnectFirst => {
            let ep = inproc_endpoint();
            connector.connect(&ep).unwrap_or_else(|e| panic!("connect {ep}: {e:?}"));
            binder.bind(&ep).unwrap_or_else(|e| panic!("bind {ep}: {e:?}"));
            ep
        }
    }
}

/// Connect `connector` to an endpoint that `binder` already bound (multiple connectors).
#[track_caller]
pub(crate) fn connect_to(binder_ep: &str, connector: &Socket) {
    connector.connect(binder_ep).unwrap_or_else(|e| panic!("connect {binder_ep}: {e:?}"));
}

/// Bind `s` on a fresh endpoint of transport `t`; returns the resolved endpoint.
/// For InprocConnectFirst this is the same as bind-first (use `link` for order).
#[track_caller]
pub(crate) fn bind_fresh(t: Transport, s: &Socket) -> String {
    let ep = match t {
        Transport::Tcp => "tcp://127.0.0.1:*".to_string(),
        Transport::IpcPath => ipc_path_endpoint(),
        Transport::IpcAbstract => ipc_abstract_endpoint(),
        _ => inproc_endpoint(),
    };
    s.bind(&ep).unwrap_or_else(|e| panic!("bind {ep}: {e:?}"));
    if t == Transport::Tcp {
        s.last_endpoint().expect("last_endpoint")
    } else {
        ep
    }
}

/// Port of a resolved `tcp://host:port` endpoint.
pub(crate) fn tcp_port(ep: &str) -> u16 {
    ep.rsplit(':').next().unwrap().parse().expect("port in endpoint")
}

/// A tcp port that was free a moment ago (for connect-before-bind over tcp).
pub(crate) fn free_tcp_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// Make sure a PUB→SUB path is live: publish `probe` until every SUB receives it,
/// then drain further probes. SUBs must be subscribed to a prefix of `probe`.
pub(crate) fn sync_pub_sub(publisher: &Socket, subs: &[&Socket], probe: &[u8]) {
    let deadline = Instant::now() + BOUND;
    let mut got = vec![false; subs.len()];
    while got.iter().any(|g| !g) {
        assert!(Instant::now() < deadline, "subscription never took effect (slow joiner beyond {BOUND:?})");
        publisher.send(Msg::from(probe), DONTWAIT).expect("pub send never fails");
        for (i, s) in subs.iter().enumerate() {
            let mut items = [oxmq::PollItem::from_socket(s, oxmq::POLLIN)];
            if oxmq::poll(&mut items, if got[i] { 0 } else { 20 }).expect("poll") > 0 {
                while let Ok(m) = s.recv(DONTWAIT) {
                    assert_eq!(m.as_slice(), probe, "unexpected message while syncing");
                    got[i] = true;
                }
            }
        }
    }
}

/// Receive, skipping any frames equal to `skip` (leftover sync probes).
#[track_caller]
pub(crate) fn recv_skipping(s: &Socket, skip: &[u8]) -> Vec<u8> {
    loop {
        let m = recv(s);
        if m != skip {
            return m;
        }
    }
}

// ---------------------------------------------------------------------------
// Socket monitors

/// One version-1 monitor event (`Socket::monitor`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Event {
    pub(crate) id: u16,
    pub(crate) value: u32,
    pub(crate) endpoint: String,
}

/// One version-2 monitor event (`Socket::monitor_versioned`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EventV2 {
    pub(crate) id: u64,
    pub(crate) values: Vec<u64>,
    pub(crate) local: String,
    pub(crate) remote: String,
}

impl EventV2 {
    /// The routing id appended after libzmq's value (see crates/oxmq/src/monitor.rs), if any.
    pub(crate) fn routing_id(&self) -> Option<Vec<u8>> {
        let len = *self.values.get(1)? as usize;
        let bytes: Vec<u8> = self.values[2..].iter().flat_map(|v| v.to_ne_bytes()).collect();
        assert_eq!(self.values.len(), 2 + len.div_ceil(8), "id values: {self:?}");
        assert!(bytes[len..].iter().all(|&b| b == 0), "padding is zero: {self:?}");
        Some(bytes[..len].to_vec())
    }
}

/// The PAIR (with RCVTIMEO) that reads the monitor on `ep`.
fn monitor_reader(ctx: &Context, ep: &str) -> Socket {
    let reader = sock(ctx, SocketType::Pair);
    reader.connect(ep).expect("connect monitor reader");
    reader
}

/// Start a version-1 monitor of `s` for `events`; returns its reader.
pub(crate) fn monitor(ctx: &Context, s: &Socket, events: u32) -> Socket {
    let ep = inproc_endpoint();
    s.monitor(Some(&ep), events).expect("monitor");
    monitor_reader(ctx, &ep)
}

/// Start a version-2 monitor of `s` for `events`, sent on a PAIR; returns its reader.
pub(crate) fn monitor_v2(ctx: &Context, s: &Socket, events: u64) -> Socket {
    let ep = inproc_endpoint();
    s.monitor_versioned(Some(&ep), events, 2, SocketType::Pair).expect("monitor_versioned");
    monitor_reader(ctx, &ep)
}

/// Receive and decode one version-1 event, checking the frame layout.
#[track_caller]
pub(crate) fn next_event(reader: &Socket) -> Event {
    let parts = recv_parts(reader);
    assert_eq!(parts.len(), 2, "an event is two frames: {parts:?}");
    let head = &parts[0];
    assert_eq!(head.len(), 6, "first frame is u16 id + u32 value");
    Event {
        id: u16::from_ne_bytes([head[0], head[1]]),
        value: u32::from_ne_bytes([head[2], head[3], head[4], head[5]]),
        endpoint: String::from_utf8(parts[1].clone()).expect("endpoint is utf-8"),
    }
}

/// Receive one version-2 event, checking the frame layout as libzmq's own
/// test reader does: 8-byte id and count, count 8-byte values, two strings,
/// the last frame without MORE.
#[track_caller]
pub(crate) fn next_event_v2(reader: &Socket) -> EventV2 {
    let parts = recv_parts(reader);
    assert!(parts.len() >= 4, "at least id, count, local, remote: {parts:?}");
    let u64_of = |b: &Vec<u8>| u64::from_ne_bytes(b.as_slice().try_into().expect("an 8-byte frame"));
    let count = u64_of(&parts[1]) as usize;
    assert_eq!(parts.len(), 4 + count, "count {count} values between count and the endpoints: {parts:?}");
    EventV2 {
        id: u64_of(&parts[0]),
        values: parts[2..2 + count].iter().map(u64_of).collect(),
        local: String::from_utf8(parts[2 + count].clone()).expect("local endpoint is utf-8"),
        remote: String::from_utf8(parts[3 + count].clone()).expect("remote endpoint is utf-8"),
    }
}

/// Receive events with `next` until one `is_it` (bounded: each receive has
/// RCVTIMEO, and the whole search has BOUND). Returns it and those skipped.
#[track_caller]
fn wait_until<E: std::fmt::Debug>(
    reader: &Socket,
    next: fn(&Socket) -> E,
    is_it: impl Fn(&E) -> bool,
    what: std::fmt::Arguments<'_>,
) -> (E, Vec<E>) {
    let deadline = Instant::now() + BOUND;
    let mut skipped = Vec::new();
    loop {
        assert!(Instant::now() < deadline, "{what} never came; got {skipped:?}");
        let e = next(reader);
        if is_it(&e) {
            return (e, skipped);
        }
        skipped.push(e);
    }
}

/// Receive version-1 events until one with `id`; returns it and those skipped.
#[track_caller]
pub(crate) fn wait_for(reader: &Socket, id: u16) -> (Event, Vec<Event>) {
    wait_until(reader, next_event, |e| e.id == id, format_args!("event {id:#06x}"))
}

/// Receive version-2 events until one with `id`; returns it and those skipped.
#[track_caller]
pub(crate) fn wait_for_v2(reader: &Socket, id: u64) -> (EventV2, Vec<EventV2>) {
    wait_until(reader, next_event_v2, |e| e.id == id, format_args!("event {id:#x}"))
}

// ---------------------------------------------------------------------------
// Raw ZMTP 3.1 bytes

/// A 64-byte ZMTP 3.1 greeting with the given mechanism name.
pub(crate) fn greeting(mechanism: &str) -> Vec<u8> {
    let mut g = vec![0u8; 64];
    g[0] = 0xFF;
    g[8] = 0x01;
    g[9] = 0x7F;
    g[10] = 3;
    g[11] = 1;
    g[12..12 + mechanism.len()].copy_from_slice(mechanism.as_bytes());
    g[32] = 0;
    g
}

/// A ZMTP 2.0 greeting: FF 00x8 7F, revision 01, socket type, empty identity.
pub(crate) fn greeting_v2(socket_type: u8) -> Vec<u8> {
    let mut g = vec![0xFF, 0, 0, 0, 0, 0, 0, 0, 0, 0x7F, 0x01, socket_type];
    g.extend_from_slice(&[0x00, 0x00]);
    g
}

/// Encode one frame: flags (MORE=1, COMMAND=4; LONG chosen automatically).
pub(crate) fn frame(flags: u8, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + 9);
    if body.len() > 255 {
        out.push(flags | 0x02);
        out.extend_from_slice(&(body.len() as u64).to_be_bytes());
    } else {
        out.push(flags);
        out.push(body.len() as u8);
    }
    out.extend_from_slice(body);
    out
}

/// A command body: name-length, name, data.
pub(crate) fn command_body(name: &str, data: &[u8]) -> Vec<u8> {
    let mut b = vec![name.len() as u8];
    b.extend_from_slice(name.as_bytes());
    b.extend_from_slice(data);
    b
}

/// READY command frame with the given properties.
pub(crate) fn ready(props: &[(&str, &[u8])]) -> Vec<u8> {
    let mut data = Vec::new();
    for (name, value) in props {
        data.push(name.len() as u8);
        data.extend_from_slice(name.as_bytes());
        data.extend_from_slice(&(value.len() as u32).to_be_bytes());
        data.extend_from_slice(value);
    }
    frame(0x04, &command_body("READY", &data))
}

/// READY carrying only Socket-Type.
pub(crate) fn ready_for(socket_type: &str) -> Vec<u8> {
    ready(&[("Socket-Type", socket_type.as_bytes())])
}

/// One decoded frame.
#[derive(Debug, Clone)]
pub(crate) struct Frame {
    pub flags: u8,
    pub body: Vec<u8>,
}

impl Frame {
    pub(crate) fn is_command(&self) -> bool {
        self.flags & 0x04 != 0
    }
    pub(crate) fn more(&self) -> bool {
        self.flags & 0x01 != 0
    }
    /// For a command: its name.
    pub(crate) fn command_name(&self) -> &[u8] {
        let n = self.body[0] as usize;
        &self.body[1..1 + n]
    }
    pub(crate) fn command_data(&self) -> &[u8] {
        let n = self.body[0] as usize;
        &self.body[1 + n..]
    }
}

/// Parse READY properties (name -> value).
pub(crate) fn parse_props(mut data: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    while !data.is_empty() {
        let nl = data[0] as usize;
        let name = String::from_utf8_lossy(&data[1..1 + nl]).to_string();
        let vl = u32::from_be_bytes(data[1 + nl..5 + nl].try_into().unwrap()) as usize;
        let value = data[5 + nl..5 + nl + vl].to_vec();
        out.push((name, value));
        data = &data[5 + nl + vl..];
    }
    out
}

/// A raw TCP peer speaking hand-built ZMTP.
pub(crate) struct RawPeer {
    pub stream: TcpStream,
}

impl RawPeer {
    /// Connect to a resolved `tcp://127.0.0.1:port` endpoint.
    pub(crate) fn connect(ep: &str) -> RawPeer {
        let addr = ep.strip_prefix("tcp://").expect("tcp endpoint");
        let stream = TcpStream::connect(addr).expect("raw connect");
        stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        stream.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
        stream.set_nodelay(true).unwrap();
        RawPeer { stream }
    }

    pub(crate) fn from_stream(stream: TcpStream) -> RawPeer {
        stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        stream.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
        stream.set_nodelay(true).unwrap();
        RawPeer { stream }
    }

    /// Write; errors are ignored (the peer may have closed already).
    pub(crate) fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.stream.write_all(bytes)
    }

    pub(crate) fn read_exact(&mut self, n: usize) -> std::io::Result<Vec<u8>> {
        let mut buf = vec![0u8; n];
        self.stream.read_exact(&mut buf)?;
        Ok(buf)
    }

    /// Read the peer's 64-byte greeting.
    pub(crate) fn read_greeting(&mut self) -> std::io::Result<Vec<u8>> {
        self.read_exact(64)
    }

    pub(crate) fn read_frame(&mut self) -> std::io::Result<Frame> {
        let flags = self.read_exact(1)?[0];
        let len = if flags & 0x02 != 0 {
            u64::from_be_bytes(self.read_exact(8)?.try_into().unwrap()) as usize
        } else {
            self.read_exact(1)?[0] as usize
        };
        let body = self.read_exact(len)?;
        Ok(Frame { flags, body })
    }

    /// Full NULL handshake as `socket_type` (with optional Identity): send our
    /// greeting, read theirs, send READY, read their READY. Returns their READY properties.
    pub(crate) fn handshake(
        &mut self,
        socket_type: &str,
        identity: Option<&[u8]>,
    ) -> std::io::Result<Vec<(String, Vec<u8>)>> {
        self.write(&greeting("NULL"))?;
        let g = self.read_greeting()?;
        assert_eq!(g[0], 0xFF, "greeting signature start");
        assert_eq!(g[9] & 1, 1, "greeting signature end");
        assert_eq!(g[10], 3, "major version");
        assert_eq!(&g[12..16], b"NULL", "mechanism");
        let mut props: Vec<(&str, &[u8])> = vec![("Socket-Type", socket_type.as_bytes())];
        if let Some(id) = identity {
            props.push(("Identity", id));
        }
        self.write(&ready(&props))?;
        let f = self.read_frame()?;
        assert!(f.is_command(), "expected READY command, got {f:?}");
        assert_eq!(f.command_name(), b"READY");
        Ok(parse_props(f.command_data()))
    }

    /// Wait until the other side closes the connection (read returns 0 or an
    /// error other than a timeout); data that arrives meanwhile is discarded.
    /// Returns whether it closed within `bound`.
    pub(crate) fn wait_closed(&mut self, bound: Duration) -> bool {
        let deadline = Instant::now() + bound;
        self.stream.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
        let mut buf = [0u8; 4096];
        loop {
            match self.stream.read(&mut buf) {
                Ok(0) => return true,
                Ok(_) => {}
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => {}
                Err(_) => return true,
            }
            if Instant::now() >= deadline {
                return false;
            }
        }
    }
}

/// A test (or part of one) that cannot run here: says so, and appends a line
/// to the file in `OXMQ_SKIP_LOG` (set by `make test`, which prints every
/// skip with its reason at the end), so that cargo's "ok" for a test that
/// returned early is never read as a pass.
pub(crate) fn skip(test: &str, reason: &str) {
    println!("SKIP {test}: {reason}");
    if let Some(path) = std::env::var_os("OXMQ_SKIP_LOG") {
        let exe = std::env::current_exe().ok();
        let binary = exe.as_deref().and_then(|p| p.file_name()).map(|n| n.to_string_lossy()).unwrap_or_default();
        let line = format!("cargo test {binary}: {test}: {reason}\n");
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| f.write_all(line.as_bytes()));
        if let Err(e) = appended {
            panic!("cannot record the skip in {}: {e}", path.to_string_lossy());
        }
    }
}
