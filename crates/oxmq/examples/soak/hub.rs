//! The long-lived side of the soak: one PULL, REP, ROUTER and PUB socket, each
//! bound on tcp, ipc and inproc at once, served by one thread apiece. Every
//! message that arrives is checked (frame count, trailer, payload bytes,
//! per-peer order) and counted in a ledger the controller settles at the end.

use crate::wire;
use oxmq::{opt, Context, Msg, Socket, SocketType};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

#[derive(Default)]
pub(crate) struct Ledger {
    /// Per peer id: messages received (PULL, ROUTER: the next expected sequence
    /// number; REP: distinct requests, retries folded).
    pub received: Mutex<HashMap<u64, u64>>,
    pub errors: Mutex<Vec<String>>,
    /// Everything the hub received, retries and all.
    pub total: AtomicU64,
    pub published: AtomicU64,
    /// Per REQ peer: when the hub sent its last reply, the evidence printed
    /// beside a resent request (the reply was sent and lost on the way, or
    /// never sent because the request was lost).
    replied: Mutex<HashMap<u64, Instant>>,
}

impl Ledger {
    pub(crate) fn error(&self, e: String) {
        eprintln!("soak: ERROR {e}");
        let mut errs = self.errors.lock().unwrap();
        if errs.len() < 100 {
            errs.push(e);
        }
    }

    pub(crate) fn received_from(&self, peer: u64) -> u64 {
        self.received.lock().unwrap().get(&peer).copied().unwrap_or(0)
    }

    /// Strict order: each peer's messages arrive as a gap-free prefix.
    fn in_order(&self, what: &str, peer: u64, seq: u64) {
        let mut map = self.received.lock().unwrap();
        let next = map.entry(peer).or_insert(0);
        if seq != *next {
            let expected = *next;
            drop(map);
            self.error(format!("{what} peer {peer}: got seq {seq}, expected {expected}"));
            return;
        }
        *next += 1;
    }

    /// A retrying client may repeat its last request, never skip one.
    fn at_most_next(&self, peer: u64, seq: u64) {
        let mut map = self.received.lock().unwrap();
        let next = map.entry(peer).or_insert(0);
        if seq + 1 == *next {
            drop(map);
            let ago = self.replied.lock().unwrap().get(&peer).map(|t| t.elapsed());
            let replied = ago.map_or("had not replied yet".to_string(), |t| format!("sent its reply {t:?} ago"));
            eprintln!("soak: REP peer {peer}: seq {seq} resent; the hub had received it and {replied}, so the reply was lost or late");
            return;
        }
        if seq != *next {
            let expected = *next;
            drop(map);
            self.error(format!("REP peer {peer}: got seq {seq}, expected {expected} or a retry of the one before"));
            return;
        }
        *next += 1;
    }
}

pub(crate) struct Endpoints {
    pub tcp: String,
    pub ipc: String,
    pub inproc: String,
}

pub(crate) struct Hub {
    pub ctx: Context,
    pub pull: Endpoints,
    pub rep: Endpoints,
    pub router: Endpoints,
    pub publ: Endpoints,
    pub ledger: Arc<Ledger>,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

fn bind_all(s: &Socket, name: &str) -> Endpoints {
    s.bind("tcp://127.0.0.1:0").expect("bind tcp");
    let tcp = s.last_endpoint().expect("LAST_ENDPOINT");
    let ipc = format!("ipc:///tmp/oxmq-soak-{}-{name}.ipc", std::process::id());
    s.bind(&ipc).expect("bind ipc");
    let inproc = format!("inproc://soak-{name}");
    s.bind(&inproc).expect("bind inproc");
    Endpoints { tcp, ipc, inproc }
}

fn hub_socket(ctx: &Context, kind: SocketType) -> Socket {
    let s = ctx.socket(kind).expect("hub socket");
    // The hub's own close must not wait on peers that may be gone.
    s.set_option_int(opt::LINGER, 0).unwrap();
    s.set_option_int(opt::RCVTIMEO, 100).unwrap();
    s
}

impl Hub {
    pub(crate) fn start() -> Hub {
        let ctx = Context::new();
        let ledger = Arc::new(Ledger::default());
        let stop = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();

        let pull = hub_socket(&ctx, SocketType::Pull);
        let pull_ep = bind_all(&pull, "pull");
        let (l, st) = (ledger.clone(), stop.clone());
        threads.push(std::thread::spawn(move || serve_pull(pull, &l, &st)));

        let rep = hub_socket(&ctx, SocketType::Rep);
        let rep_ep = bind_all(&rep, "rep");
        let (l, st) = (ledger.clone(), stop.clone());
        threads.push(std::thread::spawn(move || serve_rep(rep, &l, &st)));

        let router = hub_socket(&ctx, SocketType::Router);
        let router_ep = bind_all(&router, "router");
        let (l, st) = (ledger.clone(), stop.clone());
        threads.push(std::thread::spawn(move || serve_router(router, &l, &st)));

        let publ = hub_socket(&ctx, SocketType::Pub);
        let pub_ep = bind_all(&publ, "pub");
        let (l, st) = (ledger.clone(), stop.clone());
        threads.push(std::thread::spawn(move || serve_pub(publ, &l, &st)));

        Hub { ctx, pull: pull_ep, rep: rep_ep, router: router_ep, publ: pub_ep, ledger, stop, threads }
    }

    /// Stop the serving threads (their sockets close as they return).
    pub(crate) fn stop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for t in self.threads.drain(..) {
            if t.join().is_err() {
                self.ledger.error("a hub thread panicked".into());
            }
        }
    }
}

fn recv_or_stop(s: &Socket, stop: &AtomicBool, ledger: &Ledger, what: &str) -> Option<Vec<Msg>> {
    loop {
        match s.recv_multipart(0) {
            Ok(parts) => {
                ledger.total.fetch_add(1, Ordering::Relaxed);
                return Some(parts);
            }
            Err(oxmq::Error::Again) => {
                if stop.load(Ordering::SeqCst) {
                    return None;
                }
            }
            Err(e) => {
                ledger.error(format!("{what}: recv: {e}"));
                return None;
            }
        }
    }
}

fn serve_pull(s: Socket, ledger: &Ledger, stop: &AtomicBool) {
    while let Some(parts) = recv_or_stop(&s, stop, ledger, "PULL") {
        match wire::check_message(&parts) {
            Ok((peer, seq)) => ledger.in_order("PULL", peer, seq),
            Err(e) => ledger.error(format!("PULL: {e}")),
        }
    }
}

fn serve_rep(s: Socket, ledger: &Ledger, stop: &AtomicBool) {
    while let Some(parts) = recv_or_stop(&s, stop, ledger, "REP") {
        match wire::check_message(&parts) {
            Ok((peer, seq)) => {
                ledger.at_most_next(peer, seq);
                if let Err(e) = s.send(Msg::from_slice(parts[0].as_slice()), 0) {
                    ledger.error(format!("REP: send: {e}"));
                }
                ledger.replied.lock().unwrap().insert(peer, Instant::now());
            }
            Err(e) => {
                ledger.error(format!("REP: {e}"));
                // Keep the REP state machine moving.
                let _ = s.send(Msg::new(), 0);
            }
        }
    }
}

fn serve_router(s: Socket, ledger: &Ledger, stop: &AtomicBool) {
    while let Some(parts) = recv_or_stop(&s, stop, ledger, "ROUTER") {
        if parts.len() < 2 {
            ledger.error(format!("ROUTER: {} frames", parts.len()));
            continue;
        }
        match wire::check_message(&parts[1..]) {
            Ok((peer, seq)) => {
                ledger.in_order("ROUTER", peer, seq);
                // Replies to a peer that has gone are dropped by ROUTER, as
                // they should be; a live DEALER gets every one (window < HWM).
                let reply = [Msg::from_slice(parts[0].as_slice()), Msg::from_slice(parts[1].as_slice())];
                if let Err(e) = s.send_multipart(reply, 0) {
                    ledger.error(format!("ROUTER: send: {e}"));
                }
            }
            Err(e) => ledger.error(format!("ROUTER: {e}")),
        }
    }
}

fn serve_pub(s: Socket, ledger: &Ledger, stop: &AtomicBool) {
    let mut seq = 0u64;
    while !stop.load(Ordering::SeqCst) {
        // A burst, then a pause: ~2000 publications a second.
        for _ in 0..10 {
            let mut body = [0u8; 32];
            body[..8].copy_from_slice(&seq.to_le_bytes());
            if let Err(e) = s.send(Msg::from_slice(&body), 0) {
                ledger.error(format!("PUB: send: {e}"));
                return;
            }
            seq += 1;
        }
        ledger.published.store(seq, Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(5));
    }
}
