//! Check that idle connections cost no CPU: connect a few socket pairs with
//! heartbeats on, sleep, and print the process's CPU time.
//!
//! Run: `cargo run --release --example idle_cpu -p oxmq`

use oxmq::{opt, Context, SocketType};
use std::time::Duration;

fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let fields: Vec<&str> = stat.rsplit(')').next().unwrap().split_whitespace().collect();
    // utime and stime are fields 14 and 15 (1-based) of the whole line.
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    ticks / 100.0
}

fn main() {
    let ctx = Context::new();
    let mut keep = Vec::new();
    for _ in 0..4 {
        let pull = ctx.socket(SocketType::Pull).unwrap();
        pull.set_option_int(opt::HEARTBEAT_IVL, 100).unwrap();
        pull.bind("tcp://127.0.0.1:*").unwrap();
        let push = ctx.socket(SocketType::Push).unwrap();
        push.connect(&pull.last_endpoint().unwrap()).unwrap();
        push.send("hi", 0).unwrap();
        pull.recv(0).unwrap();
        keep.push((pull, push));
    }
    let before = cpu_seconds();
    std::thread::sleep(Duration::from_secs(3));
    println!("CPU while idle for 3 s with 4 connections: {:.2} s", cpu_seconds() - before);
    for (a, b) in keep {
        a.set_option_int(opt::LINGER, 0).unwrap();
        b.set_option_int(opt::LINGER, 0).unwrap();
    }
}
