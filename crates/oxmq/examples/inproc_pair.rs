//! The classic inproc hand-off: 1,048,576 four-byte messages over inproc PAIR
//! from one thread to another (compare libzmq's figure on the same machine).
//!
//! Run: `cargo run --release --example inproc_pair -p oxmq`

use oxmq::{Context, SocketType};
use std::time::Instant;

const N: u32 = 1 << 20;

fn main() {
    let ctx = Context::new();
    let tx = ctx.socket(SocketType::Pair).unwrap();
    tx.bind("inproc://pair").unwrap();
    let start = Instant::now();
    let rx_ctx = ctx.clone();
    let receiver = std::thread::spawn(move || {
        let rx = rx_ctx.socket(SocketType::Pair).unwrap();
        rx.connect("inproc://pair").unwrap();
        for i in 0..N {
            let m = rx.recv(0).unwrap();
            debug_assert_eq!(m.as_slice(), i.to_le_bytes());
        }
    });
    for i in 0..N {
        tx.send(&i.to_le_bytes()[..], 0).unwrap();
    }
    receiver.join().unwrap();
    let secs = start.elapsed().as_secs_f64();
    println!("oxmq inproc PAIR {N} x 4B: {secs:.3} s ({:.1} M msg/s)", N as f64 / secs / 1e6);
}
