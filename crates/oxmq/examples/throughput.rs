//! A first benchmark (the full suite is `bench/`): PUSH/PULL throughput
//! between two threads over inproc, ipc and tcp, and the cost of a
//! non-blocking send on a PUB socket with no subscriber.
//!
//! Run: `cargo run --release --example throughput -p oxmq [count] [size]`

use oxmq::{opt, Context, SocketType, DONTWAIT};
use std::time::Instant;

fn push_pull(ctx: &Context, endpoint: &str, count: usize, size: usize) -> f64 {
    let pull = ctx.socket(SocketType::Pull).unwrap();
    pull.set_option_int(opt::LINGER, 0).unwrap();
    pull.bind(endpoint).unwrap();
    let ep = pull.last_endpoint().unwrap();
    let push = ctx.socket(SocketType::Push).unwrap();
    push.set_option_int(opt::LINGER, 0).unwrap();
    push.connect(&ep).unwrap();
    let sender = std::thread::spawn(move || {
        let body = vec![7u8; size];
        for _ in 0..count {
            push.send(&body[..], 0).unwrap();
        }
        push
    });
    // Time from the first message, like libzmq's local_thr.
    let first = pull.recv(0).unwrap();
    assert_eq!(first.len(), size);
    let start = Instant::now();
    for _ in 1..count {
        pull.recv(0).unwrap();
    }
    let secs = start.elapsed().as_secs_f64();
    drop(sender.join().unwrap());
    (count - 1) as f64 / secs
}

fn send_cost(ctx: &Context, n: usize) -> f64 {
    let publisher = ctx.socket(SocketType::Pub).unwrap();
    publisher.set_option_int(opt::LINGER, 0).unwrap();
    publisher.bind("ipc://@oxmq-example-send-cost").unwrap();
    let start = Instant::now();
    for _ in 0..n {
        publisher.send(&b"hello"[..], DONTWAIT).unwrap();
    }
    start.elapsed().as_nanos() as f64 / n as f64
}

fn main() {
    let mut args = std::env::args().skip(1);
    let count: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1_000_000);
    let size: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(100);
    let ctx = Context::new();
    println!("oxmq PUSH/PULL, {count} messages of {size} B, two threads");
    for (name, ep) in [("inproc", "inproc://thr"), ("ipc", "ipc://@oxmq-example-thr"), ("tcp", "tcp://127.0.0.1:*")] {
        let rate = push_pull(&ctx, ep, count, size);
        println!("  {name:7} {:>12.0} msg/s {:>10.1} MB/s", rate, rate * size as f64 / 1e6);
    }
    println!("PUB send of 5 B, no subscriber: {:.1} ns/call", send_cost(&ctx, 10_000_000));
    ctx.term();
}
