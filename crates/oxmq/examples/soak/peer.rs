//! The short-lived peers: each runs one pattern's client side against the
//! hub, either as a child process (tcp/ipc; its fate may be SIGKILL) or as a
//! thread of the hub (inproc; its fate may be an abort between frames).
//!
//! A peer that finishes cleanly reports what it sent and what came back; the
//! hub holds those figures against what it received. A peer that is killed
//! reports nothing, and only the integrity of what did arrive is checked.

use crate::wire::{self, Rng};
use oxmq::{opt, poll, Context, PollItem, Socket, SocketType, POLLIN};
use std::time::{Duration, Instant};

/// LINGER on a clean close: long enough for any backlog here, short enough
/// that a linger bug shows up as loss rather than a hung soak.
const CLEAN_LINGER_MS: i64 = 10_000;
/// Lazy-pirate REQ client: wait this long for a reply, then reopen and resend.
/// The hub never dies and answers at once, so a reply that has not come in
/// 10 s (far above any stall of a loaded machine) was lost: each retry is
/// printed with what the hub saw and fails the soak.
const REQ_TIMEOUT_MS: i64 = 10_000;
const REQ_RETRIES: u32 = 10;
/// DEALER requests in flight (far under the HWM, so ROUTER never drops).
const DEALER_WINDOW: u64 = 32;

#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Report {
    /// Messages this peer sent (requests count once however often retried).
    pub sent: u64,
    /// Replies (REQ, DEALER) or publications (SUB) received.
    pub received: u64,
    /// Requests never answered, or publications missing between the first and
    /// the last one a subscriber saw.
    pub lost: u64,
    pub retries: u64,
}

impl Report {
    pub(crate) fn to_line(self) -> String {
        format!("report {} {} {} {}", self.sent, self.received, self.lost, self.retries)
    }

    pub(crate) fn parse(line: &str) -> Option<Report> {
        let mut it = line.strip_prefix("report ")?.split(' ').map(|v| v.parse::<u64>());
        let mut next = || it.next()?.ok();
        Some(Report { sent: next()?, received: next()?, lost: next()?, retries: next()? })
    }
}

/// Aborts between frames: `true` means stop now (inproc fate). Child
/// processes never abort themselves but sometimes stall mid-message so that
/// the parent's SIGKILL lands there.
pub(crate) type Between<'a> = &'a mut dyn FnMut() -> bool;

fn open(ctx: &Context, kind: SocketType, endpoint: &str) -> oxmq::Result<Socket> {
    let s = ctx.socket(kind)?;
    s.set_option_int(opt::LINGER, CLEAN_LINGER_MS)?;
    s.set_option_int(opt::RECONNECT_IVL, 20)?;
    s.connect(endpoint)?;
    Ok(s)
}

pub(crate) fn push(
    ctx: &Context,
    endpoint: &str,
    id: u64,
    n: u64,
    seed: u64,
    between: Between,
) -> oxmq::Result<Report> {
    let s = open(ctx, SocketType::Push, endpoint)?;
    let mut rng = Rng::new(seed);
    let mut rep = Report::default();
    for seq in 0..n {
        let len = wire::payload_len(&mut rng);
        if !wire::send_message(&s, id, seq, len, between)? {
            s.set_option_int(opt::LINGER, 0)?;
            return Ok(rep);
        }
        rep.sent += 1;
    }
    Ok(rep)
}

pub(crate) fn req(ctx: &Context, endpoint: &str, id: u64, n: u64, seed: u64, between: Between) -> oxmq::Result<Report> {
    let mut rng = Rng::new(seed);
    let mut rep = Report::default();
    let mut s = open(ctx, SocketType::Req, endpoint)?;
    for seq in 0..n {
        let len = wire::payload_len(&mut rng).min(4096);
        rep.sent += 1;
        let mut answered = false;
        for attempt in 0..=REQ_RETRIES {
            if attempt > 0 {
                rep.retries += 1;
                eprintln!("soak: REQ peer {id} ({endpoint}): no reply to seq {seq} in {REQ_TIMEOUT_MS} ms; resending (attempt {attempt})");
                // The lazy pirate: a REQ that lost its reply is stuck in its
                // state machine, so it is closed and a fresh one resends.
                s.set_option_int(opt::LINGER, 0)?;
                s = open(ctx, SocketType::Req, endpoint)?;
            }
            if !wire::send_message(&s, id, seq, len, between)? {
                s.set_option_int(opt::LINGER, 0)?;
                rep.sent -= 1;
                return Ok(rep);
            }
            let mut items = [PollItem::from_socket(&s, POLLIN)];
            if poll(&mut items, REQ_TIMEOUT_MS)? > 0 {
                let reply = s.recv_multipart(0)?;
                match wire::parse_header(reply.first().map(|m| m.as_slice()).unwrap_or(&[])) {
                    Some((p, q)) if p == id && q == seq && reply.len() == 1 => {}
                    _ => panic!("REQ {id}: reply to seq {seq} is not ours: {} frames", reply.len()),
                }
                rep.received += 1;
                answered = true;
                break;
            }
        }
        if !answered {
            rep.lost += 1;
        }
    }
    Ok(rep)
}

pub(crate) fn dealer(
    ctx: &Context,
    endpoint: &str,
    id: u64,
    n: u64,
    seed: u64,
    between: Between,
) -> oxmq::Result<Report> {
    let s = open(ctx, SocketType::Dealer, endpoint)?;
    s.set_option_int(opt::RCVTIMEO, 10_000)?;
    let mut rng = Rng::new(seed);
    let mut rep = Report::default();
    let mut next_reply = 0u64;
    let mut take_reply = |rep: &mut Report| -> oxmq::Result<bool> {
        match s.recv_multipart(0) {
            Ok(parts) => {
                let (p, q) = wire::parse_header(parts[0].as_slice()).expect("DEALER: reply header");
                assert!(p == id && q == next_reply, "DEALER {id}: reply {q} from {p}, expected {next_reply}");
                next_reply += 1;
                rep.received += 1;
                Ok(true)
            }
            Err(oxmq::Error::Again) => Ok(false),
            Err(e) => Err(e),
        }
    };
    for seq in 0..n {
        let len = wire::payload_len(&mut rng);
        if !wire::send_message(&s, id, seq, len, between)? {
            s.set_option_int(opt::LINGER, 0)?;
            return Ok(rep);
        }
        rep.sent += 1;
        while rep.sent - rep.received >= DEALER_WINDOW {
            if !take_reply(&mut rep)? {
                rep.lost = rep.sent - rep.received;
                return Ok(rep);
            }
        }
    }
    while rep.received < rep.sent {
        if !take_reply(&mut rep)? {
            break;
        }
    }
    rep.lost = rep.sent - rep.received;
    Ok(rep)
}

pub(crate) fn sub(ctx: &Context, endpoint: &str, millis: u64, between: Between) -> oxmq::Result<Report> {
    let s = open(ctx, SocketType::Sub, endpoint)?;
    s.set_option_bytes(opt::SUBSCRIBE, b"")?;
    s.set_option_int(opt::RCVTIMEO, 100)?;
    let mut rep = Report::default();
    let mut first: Option<u64> = None;
    let mut last = 0u64;
    let end = Instant::now() + Duration::from_millis(millis);
    while Instant::now() < end {
        if between() {
            break;
        }
        match s.recv(0) {
            Ok(m) => {
                let b = m.as_slice();
                let seq = u64::from_le_bytes(b[..8].try_into().expect("publication has a sequence"));
                assert!(first.is_none() || seq > last, "SUB: publication {seq} after {last}");
                first.get_or_insert(seq);
                last = seq;
                rep.received += 1;
            }
            Err(oxmq::Error::Again) => {}
            Err(e) => return Err(e),
        }
    }
    if let Some(f) = first {
        rep.lost = (last - f + 1) - rep.received;
    }
    Ok(rep)
}

/// Entry point of a child process: `soak peer <role> <endpoint> <id> <n> <seed>`.
pub(crate) fn child_main(args: &[String]) -> i32 {
    let [role, endpoint, id, n, seed] = args else {
        eprintln!("usage: soak peer <push|req|dealer|sub> <endpoint> <id> <n> <seed>");
        return 2;
    };
    let (id, n, seed): (u64, u64, u64) = match (id.parse(), n.parse(), seed.parse()) {
        (Ok(a), Ok(b), Ok(c)) => (a, b, c),
        _ => return 2,
    };
    let ctx = Context::new();
    let mut rng = Rng::new(seed ^ 0xabcdef);
    // Stall now and then between frames, so SIGKILL lands mid-message.
    let mut between = || {
        if rng.chance(64) {
            std::thread::sleep(Duration::from_millis(2));
        }
        false
    };
    let res = match role.as_str() {
        "push" => push(&ctx, endpoint, id, n, seed, &mut between),
        "req" => req(&ctx, endpoint, id, n, seed, &mut between),
        "dealer" => dealer(&ctx, endpoint, id, n, seed, &mut between),
        "sub" => sub(&ctx, endpoint, n, &mut between),
        _ => return 2,
    };
    // Report only once LINGER has flushed everything (or expired).
    ctx.term();
    match res {
        Ok(rep) => {
            println!("{}", rep.to_line());
            0
        }
        Err(e) => {
            eprintln!("soak peer {role} {id}: {e}");
            1
        }
    }
}
