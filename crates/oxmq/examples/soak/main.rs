//! Soak: peers churn against one long-lived hub for a while; every message is
//! counted end to end, and the hub's memory and descriptors are sampled at
//! the start and the end.
//!
//!   soak [--seconds N] [--procs P] [--inproc Q]
//!
//! P slots keep a child process each alive (tcp or ipc; PUSH, retrying REQ,
//! DEALER or SUB); about 40% of them are SIGKILLed at a random moment, often
//! in the middle of a large multipart message. Q threads of the hub do the
//! same over inproc, aborting between frames instead of being killed.
//!
//! Exit status 0 only if nothing was lost where the pattern promises delivery
//! (PUSH/PULL, REQ/REP with retries, DEALER/ROUTER, while both ends live and
//! on a clean close with LINGER), nothing arrived torn, corrupt or out of
//! order, no peer hung, and the hub's descriptors and memory came back within
//! the bounds below. PUB/SUB loss is counted and reported, not failed. The
//! last line is `soak: <N> messages, <L> lost, rss <a> -> <b> KiB, fds <c> -> <d>`.

mod hub;
mod peer;
mod wire;

use hub::Hub;
use peer::Report;
use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use wire::Rng;

/// RSS the hub may gain over the run, measured from the sample taken once the
/// first round of peers has come and gone (allocator warm-up excluded), and
/// from the very start (what the last line shows).
const RSS_GROWTH_AFTER_WARMUP_KIB: u64 = 16 * 1024;
const RSS_GROWTH_TOTAL_KIB: u64 = 64 * 1024;
/// A clean peer that has not finished by then is reported as hung.
const PEER_DEADLINE: Duration = Duration::from_secs(60);

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Role {
    Push,
    Req,
    Dealer,
    Sub,
}

impl Role {
    fn name(self) -> &'static str {
        match self {
            Role::Push => "push",
            Role::Req => "req",
            Role::Dealer => "dealer",
            Role::Sub => "sub",
        }
    }

    fn pick(rng: &mut Rng) -> Role {
        match rng.range(0, 100) {
            0..=34 => Role::Push,
            35..=54 => Role::Req,
            55..=79 => Role::Dealer,
            _ => Role::Sub,
        }
    }

    /// Messages (or SUB milliseconds) for a peer that is left to finish.
    fn clean_amount(self, rng: &mut Rng) -> u64 {
        match self {
            Role::Push => rng.range(50, 3000),
            Role::Req => rng.range(10, 300),
            Role::Dealer => rng.range(50, 2000),
            Role::Sub => rng.range(200, 3000),
        }
    }
}

#[derive(Default)]
struct Tally {
    peers_clean: u64,
    peers_killed: u64,
    peers_aborted: u64,
    /// (peer id, messages it sent) of PUSH and DEALER peers that closed cleanly.
    owed: Vec<(u64, u64)>,
    /// Replies, publications received by peers that finished.
    peer_received: u64,
    req_lost: u64,
    dealer_lost: u64,
    req_retries: u64,
    sub_received: u64,
    sub_lost: u64,
}

struct Shared {
    hub: Hub,
    tally: Mutex<Tally>,
    next_id: AtomicU64,
    deadline: Instant,
}

impl Shared {
    fn settle(&self, role: Role, id: u64, rep: Report) {
        let mut t = self.tally.lock().unwrap();
        t.peer_received += rep.received;
        match role {
            Role::Push => t.owed.push((id, rep.sent)),
            Role::Dealer => {
                t.owed.push((id, rep.sent));
                t.dealer_lost += rep.lost;
            }
            Role::Req => {
                t.req_lost += rep.lost;
                t.req_retries += rep.retries;
            }
            Role::Sub => {
                t.sub_received += rep.received;
                t.sub_lost += rep.lost;
            }
        }
    }

    fn endpoint(&self, role: Role, transport: usize) -> &str {
        let eps = match role {
            Role::Push => &self.hub.pull,
            Role::Req => &self.hub.rep,
            Role::Dealer => &self.hub.router,
            Role::Sub => &self.hub.publ,
        };
        match transport {
            0 => &eps.tcp,
            1 => &eps.ipc,
            _ => &eps.inproc,
        }
    }
}

/// One child process at a time, until the deadline.
fn process_slot(sh: Arc<Shared>, seed: u64) {
    let exe = std::env::current_exe().expect("current_exe");
    let mut rng = Rng::new(seed);
    while Instant::now() < sh.deadline {
        let role = Role::pick(&mut rng);
        let kill = rng.chance(5) || rng.chance(3);
        let amount = if kill { 1 << 40 } else { role.clean_amount(&mut rng) };
        let id = sh.next_id.fetch_add(1, Ordering::Relaxed);
        let ep = sh.endpoint(role, rng.range(0, 2) as usize).to_string();
        let child = Command::new(&exe)
            .args(["peer", role.name(), &ep, &id.to_string(), &amount.to_string(), &rng.next().to_string()])
            .stdout(Stdio::piped())
            .spawn();
        let mut child = match child {
            Ok(c) => c,
            Err(e) => {
                sh.hub.ledger.error(format!("spawn peer: {e}"));
                std::thread::sleep(Duration::from_millis(100));
                continue;
            }
        };
        if kill {
            std::thread::sleep(Duration::from_millis(rng.range(10, 1500)));
            let _ = child.kill(); // SIGKILL
            let _ = child.wait();
            sh.tally.lock().unwrap().peers_killed += 1;
            continue;
        }
        match wait_clean(&mut child) {
            Ok(out) => match out.lines().find_map(Report::parse) {
                Some(rep) => {
                    sh.settle(role, id, rep);
                    sh.tally.lock().unwrap().peers_clean += 1;
                }
                None => sh.hub.ledger.error(format!("{} peer {id} ({ep}) reported nothing", role.name())),
            },
            Err(e) => sh.hub.ledger.error(format!("{} peer {id} ({ep}): {e}", role.name())),
        }
    }
}

fn wait_clean(child: &mut Child) -> Result<String, String> {
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                let mut out = String::new();
                if let Some(mut o) = child.stdout.take() {
                    let _ = o.read_to_string(&mut out);
                }
                return if status.success() { Ok(out) } else { Err(format!("exited with {status}")) };
            }
            Ok(None) if start.elapsed() > PEER_DEADLINE => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("hung for {PEER_DEADLINE:?}; killed"));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// One inproc peer at a time on the hub's own context, until the deadline.
fn inproc_slot(sh: Arc<Shared>, seed: u64) {
    let mut rng = Rng::new(seed);
    while Instant::now() < sh.deadline {
        let role = Role::pick(&mut rng);
        let abort = rng.chance(5) || rng.chance(3);
        let amount = if abort { 1 << 40 } else { role.clean_amount(&mut rng) };
        let abort_at = Instant::now() + Duration::from_millis(rng.range(10, 1500));
        let id = sh.next_id.fetch_add(1, Ordering::Relaxed);
        let ep = sh.endpoint(role, 2).to_string();
        let mut between = || abort && Instant::now() >= abort_at;
        let pseed = rng.next();
        let ctx = &sh.hub.ctx;
        let res = match role {
            Role::Push => peer::push(ctx, &ep, id, amount, pseed, &mut between),
            Role::Req => peer::req(ctx, &ep, id, amount, pseed, &mut between),
            Role::Dealer => peer::dealer(ctx, &ep, id, amount, pseed, &mut between),
            Role::Sub => peer::sub(ctx, &ep, amount.min(3000), &mut between),
        };
        match res {
            Ok(_) if abort => sh.tally.lock().unwrap().peers_aborted += 1,
            Ok(rep) => {
                sh.settle(role, id, rep);
                sh.tally.lock().unwrap().peers_clean += 1;
            }
            Err(e) => sh.hub.ledger.error(format!("inproc {} peer {id}: {e}", role.name())),
        }
    }
}

fn arg(args: &[String], name: &str, default: u64) -> u64 {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| v.parse().unwrap_or_else(|_| panic!("{name} wants a number")))
        .unwrap_or(default)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("peer") {
        std::process::exit(peer::child_main(&args[1..]));
    }
    let seconds = arg(&args, "--seconds", 60);
    let procs = arg(&args, "--procs", 6);
    let inprocs = arg(&args, "--inproc", 2);
    let seed = arg(&args, "--seed", std::process::id() as u64);

    let hub = Hub::start();
    std::thread::sleep(Duration::from_millis(100));
    let (rss0, fds0) = (wire::rss_kib(), wire::fd_count());
    let fds_at_start = wire::fd_list();
    println!(
        "soak: {seconds} s, {procs} process peers, {inprocs} inproc peers, seed {seed}; hub pid {}",
        std::process::id()
    );
    let started = Instant::now();
    let sh = Arc::new(Shared {
        hub,
        tally: Mutex::new(Tally::default()),
        next_id: AtomicU64::new(1),
        deadline: started + Duration::from_secs(seconds),
    });
    let mut slots = Vec::new();
    for i in 0..procs {
        let sh = sh.clone();
        slots.push(std::thread::spawn(move || process_slot(sh, seed.wrapping_add(i * 7919))));
    }
    for i in 0..inprocs {
        let sh = sh.clone();
        slots.push(std::thread::spawn(move || inproc_slot(sh, seed.wrapping_add(1_000_003 + i * 7919))));
    }

    // The warm sample: after a tenth of the run (at least 3 s), when the
    // allocator has seen every message size and many peers have come and gone.
    let warm_at = Duration::from_secs((seconds / 10).max(3)).min(Duration::from_secs(seconds));
    let mut rss_warm = None;
    let mut next_report = Duration::from_secs(10);
    while slots.iter().any(|t| !t.is_finished()) {
        std::thread::sleep(Duration::from_millis(100));
        let el = started.elapsed();
        if rss_warm.is_none() && el >= warm_at {
            rss_warm = Some(wire::rss_kib());
        }
        if el >= next_report {
            next_report += Duration::from_secs(10);
            let t = sh.tally.lock().unwrap();
            println!(
                "soak: t={:>4}s hub received {}, peers {} clean / {} killed / {} aborted, rss {} KiB, fds {}",
                el.as_secs(),
                sh.hub.ledger.total.load(Ordering::Relaxed),
                t.peers_clean,
                t.peers_killed,
                t.peers_aborted,
                wire::rss_kib(),
                wire::fd_count()
            );
        }
    }
    for t in slots {
        if t.join().is_err() {
            sh.hub.ledger.error("a peer slot panicked".into());
        }
    }

    // Everything a clean peer sent must reach the hub; give stragglers a moment.
    let owed = std::mem::take(&mut sh.tally.lock().unwrap().owed);
    let drain_until = Instant::now() + Duration::from_secs(15);
    let missing = |owed: &[(u64, u64)]| -> u64 {
        owed.iter().map(|&(id, sent)| sent.saturating_sub(sh.hub.ledger.received_from(id))).sum()
    };
    while missing(&owed) > 0 && Instant::now() < drain_until {
        std::thread::sleep(Duration::from_millis(50));
    }
    let push_dealer_lost = missing(&owed);
    // Connections of dead peers are torn down asynchronously; wait for the
    // descriptor count to settle before the end sample.
    let settle_until = Instant::now() + Duration::from_secs(5);
    while wire::fd_count() > fds0 && Instant::now() < settle_until {
        std::thread::sleep(Duration::from_millis(50));
    }
    let (rss1, fds1) = (wire::rss_kib(), wire::fd_count());
    let fds_at_end = wire::fd_list();

    let sh = match Arc::try_unwrap(sh) {
        Ok(sh) => sh,
        Err(_) => panic!("slots still hold the hub"),
    };
    let mut hub = sh.hub;
    hub.stop();
    let term_start = Instant::now();
    hub.ctx.term();
    let term_took = term_start.elapsed();

    let t = sh.tally.into_inner().unwrap();
    let errors = hub.ledger.errors.lock().unwrap().clone();
    let hub_received = hub.ledger.total.load(Ordering::Relaxed);
    let messages = hub_received + t.peer_received;
    let promised_lost = push_dealer_lost + t.req_lost + t.dealer_lost;
    let lost = promised_lost + t.sub_lost;
    let rss_warm = rss_warm.unwrap_or(rss0);

    println!(
        "soak: peers {} clean, {} killed (SIGKILL), {} aborted (inproc); REQ retries {}",
        t.peers_clean, t.peers_killed, t.peers_aborted, t.req_retries
    );
    println!(
        "soak: delivery promised (PUSH/PULL, REQ/REP, DEALER/ROUTER): {} lost (PUSH+ROUTER side {}, REQ gave up {}, DEALER replies {})",
        promised_lost, push_dealer_lost, t.req_lost, t.dealer_lost
    );
    println!(
        "soak: PUB/SUB: {} published, {} received by subscribers that finished, {} lost in their windows (allowed)",
        hub.ledger.published.load(Ordering::Relaxed),
        t.sub_received,
        t.sub_lost
    );
    println!("soak: rss warm sample {rss_warm} KiB; context term took {term_took:?}");

    let mut failures = errors;
    if promised_lost > 0 {
        failures.push(format!("{promised_lost} messages lost where delivery is promised"));
    }
    if t.req_retries > 0 {
        // A resend whose REP line above says the hub had replied: the reply was
        // lost; without one: the request was.
        failures.push(format!(
            "{} REQ retries: the hub never dies, so each is a request or reply lost (see the REQ/REP lines above)",
            t.req_retries
        ));
    }
    if fds1 > fds0 {
        for (fd, what) in fds_at_start.iter().map(|f| ("start", f)).chain(fds_at_end.iter().map(|f| ("end", f))) {
            println!("soak: fd at {fd}: {what}");
        }
        failures.push(format!("descriptor leak: {fds0} -> {fds1}"));
    }
    if rss1 > rss_warm + RSS_GROWTH_AFTER_WARMUP_KIB {
        failures.push(format!("rss grew {} KiB after warm-up (bound {RSS_GROWTH_AFTER_WARMUP_KIB})", rss1 - rss_warm));
    }
    if rss1 > rss0 + RSS_GROWTH_TOTAL_KIB {
        failures.push(format!("rss grew {} KiB in all (bound {RSS_GROWTH_TOTAL_KIB})", rss1 - rss0));
    }
    if term_took > Duration::from_secs(2) {
        failures.push(format!("context term took {term_took:?} with LINGER 0"));
    }
    if t.peers_clean == 0 || t.peers_killed + t.peers_aborted == 0 {
        failures.push("no churn: not enough peers ran (run longer)".into());
    }
    for f in &failures {
        println!("soak: FAIL {f}");
    }
    println!("soak: {messages} messages, {lost} lost, rss {rss0} -> {rss1} KiB, fds {fds0} -> {fds1}");
    std::process::exit(if failures.is_empty() { 0 } else { 1 });
}
