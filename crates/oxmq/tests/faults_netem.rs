//! A delayed, lossy link: the test makes a network namespace joined to ours
//! by a veth pair, puts `tc netem` (delay 30 ms ± 10 ms, 3% loss, 1%
//! reordering) on our end, runs a PULL inside the namespace (this binary run
//! again under `ip netns exec`), and pushes messages to it across the link.
//! Everything must arrive, whole and in order, and REQ/REP must answer.
//!
//! Needs root, iproute2 and netns support; without them the test prints why
//! and returns. Where the kernel lacks sch_netem (as on this project's CI
//! machine) it still runs the transfer over the plain veth and says that
//! the delay and loss were not applied.

mod common;

use common::*;
use oxmq::{opt, Context, SocketType};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Instant;

const N: u32 = 2000;

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip").args(args).output().map_err(|e| format!("ip: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("ip {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
    }
}

struct Netns {
    name: String,
    veth: String,
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = ip(&["link", "del", &self.veth]);
        let _ = ip(&["netns", "del", &self.name]);
    }
}

/// The child: PULL then REP inside the namespace.
#[test]
fn child_entry() {
    let Ok(bind) = std::env::var("OXMQ_NETEM_BIND") else { return };
    let ctx = Context::new();
    let pull = ctx.socket(SocketType::Pull).unwrap();
    pull.set_option_int(opt::RCVTIMEO, 60_000).unwrap();
    pull.bind(&format!("tcp://{bind}:5601")).unwrap();
    let rep = ctx.socket(SocketType::Rep).unwrap();
    rep.set_option_int(opt::RCVTIMEO, 60_000).unwrap();
    rep.bind(&format!("tcp://{bind}:5602")).unwrap();
    println!("bound");
    for i in 0..N {
        let parts = pull.recv_multipart(0).expect("PULL across the link");
        assert_eq!(parts.len(), 2, "torn message");
        assert_eq!(parts[0].as_slice(), i.to_le_bytes(), "lost or reordered");
        assert_eq!(parts[1].len(), (i as usize % 7) * 1000);
    }
    for _ in 0..20 {
        let m = rep.recv(0).expect("REQ across the link");
        rep.send(m, 0).unwrap();
    }
    // Let the last reply reach the wire (LINGER) before exiting.
    drop((pull, rep));
    ctx.term();
    println!("ok");
    std::process::exit(0);
}

#[test]
fn delayed_lossy_link_in_netns() {
    let _g = guard();
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        skip("delayed_lossy_link_in_netns", "needs root to create a network namespace");
        return;
    }
    let pid = std::process::id();
    let (a, b) = (200 + pid % 50, pid / 50 % 250);
    let ns = Netns { name: format!("oxmq-netem-{pid}"), veth: format!("oxq{}", pid % 100_000) };
    let peer = format!("oxp{}", pid % 100_000);
    let (ours, theirs) = (format!("10.{a}.{b}.1"), format!("10.{a}.{b}.2"));
    let setup = ip(&["netns", "add", &ns.name])
        .and_then(|_| ip(&["link", "add", &ns.veth, "type", "veth", "peer", "name", &peer]))
        .and_then(|_| ip(&["link", "set", &peer, "netns", &ns.name]))
        .and_then(|_| ip(&["addr", "add", &format!("{ours}/24"), "dev", &ns.veth]))
        .and_then(|_| ip(&["link", "set", &ns.veth, "up"]))
        .and_then(|_| ip(&["netns", "exec", &ns.name, "ip", "addr", "add", &format!("{theirs}/24"), "dev", &peer]))
        .and_then(|_| ip(&["netns", "exec", &ns.name, "ip", "link", "set", &peer, "up"]))
        .and_then(|_| ip(&["netns", "exec", &ns.name, "ip", "link", "set", "lo", "up"]));
    if let Err(e) = setup {
        skip("delayed_lossy_link_in_netns", &format!("cannot make a network namespace here: {e}"));
        return;
    }
    let netem = Command::new("tc")
        .args([
            "qdisc", "add", "dev", &ns.veth, "root", "netem", "delay", "30ms", "10ms", "loss", "3%", "reorder", "1%",
        ])
        .output();
    let netem_on = match netem {
        Ok(o) if o.status.success() => true,
        Ok(o) => {
            skip(
                "delayed_lossy_link_in_netns (netem part)",
                &format!(
                    "tc netem unavailable ({}: the kernel has no sch_netem); ran over the plain veth without delay or loss",
                    String::from_utf8_lossy(&o.stderr).trim()
                ),
            );
            false
        }
        Err(e) => {
            skip(
                "delayed_lossy_link_in_netns (netem part)",
                &format!("no tc ({e}); ran over the plain veth without delay or loss"),
            );
            false
        }
    };

    let exe = std::env::current_exe().unwrap();
    let mut child = Command::new("ip")
        .args(["netns", "exec", &ns.name])
        .arg(&exe)
        .args(["--exact", "child_entry", "--nocapture", "--test-threads=1", "-q"])
        .env("OXMQ_NETEM_BIND", &theirs)
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn child in the namespace");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while line.trim() != "bound" {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "child died before binding");
    }

    let ctx = Context::new();
    let push = sock(&ctx, SocketType::Push);
    push.set_option_int(opt::SNDTIMEO, 30_000).unwrap();
    push.connect(&format!("tcp://{theirs}:5601")).unwrap();
    let start = Instant::now();
    let body = vec![9u8; 6000];
    for i in 0..N {
        push.send_multipart([&i.to_le_bytes()[..], &body[..(i as usize % 7) * 1000]], 0).unwrap();
    }
    let req = sock(&ctx, SocketType::Req);
    req.set_option_int(opt::RCVTIMEO, 30_000).unwrap();
    req.connect(&format!("tcp://{theirs}:5602")).unwrap();
    for i in 0..20u32 {
        send(&req, &i.to_le_bytes());
        assert_eq!(recv(&req), i.to_le_bytes());
    }
    loop {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "child failed (see its output above)");
        if line.trim() == "ok" {
            break;
        }
    }
    assert!(child.wait().unwrap().success());
    println!(
        "netns link ({}): {N} messages and 20 round trips in {:?}",
        if netem_on { "netem delay 30±10 ms, 3% loss, 1% reorder" } else { "plain veth, no netem" },
        start.elapsed()
    );
}
