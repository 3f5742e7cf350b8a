//! Large copy-mode sends written by the sending thread (`Socket::send_slice`,
//! `channel::direct`): what arrives, in what order, around partial writes,
//! heartbeats, reconnects and peers that stop reading.

mod common;

use common::*;
use oxmq::security::{curve_keypair, z85_encode};
use oxmq::{errno, opt, Context, Msg, Socket, SocketType, DONTWAIT};
use std::time::{Duration, Instant};

/// Message `i` of `len` bytes: its index, then a fill that depends on it.
fn body(i: u64, len: usize) -> Vec<u8> {
    let mut b = vec![(i % 251) as u8; len];
    b[..8].copy_from_slice(&i.to_le_bytes());
    b
}

#[track_caller]
fn check(got: &[u8], i: u64, len: usize) {
    assert_eq!(got.len(), len, "message {i}: length");
    assert_eq!(u64::from_le_bytes(got[..8].try_into().unwrap()), i, "message {i}: out of order");
    assert!(got[8..].iter().all(|&b| b == (i % 251) as u8), "message {i}: body corrupted");
}

/// PUSH connected to PULL over `t` after `setup(push, pull)`, the
/// connection up (one message across).
fn pair_with(ctx: &Context, t: Transport, setup: impl Fn(&Socket, &Socket)) -> (Socket, Socket) {
    let push = sock(ctx, SocketType::Push);
    let pull = sock(ctx, SocketType::Pull);
    setup(&push, &pull);
    link(t, &pull, &push);
    push.send_slice(b"hello", 0).unwrap();
    assert_eq!(recv(&pull), b"hello");
    (push, pull)
}

fn pair(ctx: &Context, t: Transport) -> (Socket, Socket) {
    pair_with(ctx, t, |_, _| {})
}

fn direct_count(s: &Socket) -> u64 {
    s.stats().unwrap().msgs_out_direct
}

fn order_across_paths(t: Transport) {
    let ctx = Context::new();
    let (push, pull) = pair(&ctx, t);
    let rx = std::thread::spawn(move || {
        for i in 0..300u64 {
            match i % 3 {
                0 => check(&recv(&pull), i, 256 * 1024 + i as usize),
                1 => check(&recv(&pull), i, 100),
                _ => {
                    let parts = recv_parts(&pull);
                    assert_eq!(parts.len(), 2, "message {i}: parts");
                    check(&parts[0], i, 128 * 1024);
                    assert_eq!(parts[1], b"tail");
                }
            }
        }
    });
    for i in 0..300u64 {
        match i % 3 {
            // Large: direct when the connection has nothing queued.
            0 => push.send_slice(&body(i, 256 * 1024 + i as usize), 0).unwrap(),
            // Small: through the pipe.
            1 => push.send_slice(&body(i, 100), 0).unwrap(),
            // Multipart: through the pipe, whatever the size.
            _ => push.send_multipart([Msg::from(body(i, 128 * 1024)), Msg::from(&b"tail"[..])], 0).unwrap(),
        }
    }
    rx.join().unwrap();
    let stats = push.stats().unwrap();
    assert_eq!(stats.msgs_out, 301);
    assert!(stats.msgs_out_direct > 0, "no large send went direct: the test did not test the path");
    assert!(stats.msgs_out_direct <= 100);
}

#[test]
fn order_is_kept_across_direct_and_queued_messages_tcp() {
    let _g = guard();
    order_across_paths(Transport::Tcp);
}

#[test]
fn order_is_kept_across_direct_and_queued_messages_ipc() {
    let _g = guard();
    order_across_paths(Transport::IpcPath);
}

/// Small kernel buffers and a reader that pauses: direct writes end part
/// way through, the I/O thread finishes them, and messages queued behind
/// them follow in order. Non-blocking sends never wait for the kernel.
#[test]
fn partial_direct_writes_are_finished_in_order() {
    let _g = guard();
    let ctx = Context::new();
    let (push, pull) = pair_with(&ctx, Transport::Tcp, |push, pull| {
        push.set_option_int(opt::SNDBUF, 8192).unwrap();
        pull.set_option_int(opt::RCVBUF, 8192).unwrap();
    });
    const N: u64 = 60;
    const LEN: usize = 1 << 20;
    let rx = std::thread::spawn(move || {
        for i in 0..N {
            if i % 7 == 0 {
                std::thread::sleep(Duration::from_millis(20));
            }
            check(&recv(&pull), i, LEN + i as usize);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    for i in 0..N {
        let m = body(i, LEN + i as usize);
        let flags = if i % 2 == 0 { DONTWAIT } else { 0 };
        loop {
            match push.send_slice(&m, flags) {
                Ok(()) => break,
                Err(e) if e.errno() == errno::EAGAIN && flags == DONTWAIT => {
                    assert!(Instant::now() < deadline, "message {i}: EAGAIN for 30 s");
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(e) => panic!("message {i}: {e:?}"),
            }
        }
    }
    rx.join().unwrap();
    assert!(direct_count(&push) > 0, "no send went direct");
}

/// PINGs every millisecond both ways while large messages go direct: a
/// command never lands inside a frame (the peer would drop the connection,
/// and a message would be lost).
#[test]
fn heartbeats_stay_between_direct_frames() {
    let _g = guard();
    let ctx = Context::new();
    let (push, pull) = pair_with(&ctx, Transport::Tcp, |push, pull| {
        for s in [push, pull] {
            s.set_option_int(opt::HEARTBEAT_IVL, 1).unwrap();
            s.set_option_int(opt::HEARTBEAT_TIMEOUT, 2000).unwrap();
        }
        push.set_option_int(opt::SNDBUF, 16384).unwrap();
    });
    const N: u64 = 200;
    let rx = std::thread::spawn(move || {
        for i in 0..N {
            if i % 20 == 0 {
                std::thread::sleep(Duration::from_millis(5));
            }
            check(&recv(&pull), i, 512 * 1024);
        }
        pull
    });
    for i in 0..N {
        push.send_slice(&body(i, 512 * 1024), 0).unwrap();
    }
    let pull = rx.join().unwrap();
    assert!(direct_count(&push) > 0, "no send went direct");
    assert_eq!(push.stats().unwrap().reconnects, 0);
    assert_eq!(pull.stats().unwrap().msgs_in, N + 1);
}

/// A peer that stops reading: blocking sends wait a bounded time for it,
/// then queue as libzmq's do until the HWM, where they time out (EAGAIN),
/// as non-blocking ones fail.
#[test]
fn a_peer_that_stops_reading_fills_the_hwm_as_before() {
    let _g = guard();
    let ctx = Context::new();
    let (push, pull) = pair_with(&ctx, Transport::Tcp, |push, pull| {
        push.set_option_int(opt::SNDHWM, 4).unwrap();
        pull.set_option_int(opt::RCVHWM, 4).unwrap();
        push.set_option_int(opt::SNDTIMEO, 300).unwrap();
    });
    let m = body(1, 1 << 20);
    let mut sent = 0;
    loop {
        match push.send_slice(&m, 0) {
            Ok(()) => sent += 1,
            Err(e) if e.errno() == errno::EAGAIN => break,
            Err(e) => panic!("send {sent}: {e:?}"),
        }
        assert!(sent < 1000, "{sent} MiB accepted by a peer that does not read");
    }
    assert!(sent >= 4, "the HWM should take 4 messages besides what the kernels hold, took {sent}");
    assert_errno(push.send_slice(&m, DONTWAIT), errno::EAGAIN);
    // Everything accepted arrives once the peer reads again.
    for _ in 0..sent {
        check(&recv(&pull), 1, 1 << 20);
    }
}

/// The peer goes away and comes back while large messages are being sent:
/// no send hangs or fails, and what the new peer gets is whole.
#[test]
fn reconnect_while_sending_directly() {
    let _g = guard();
    let ctx = Context::new();
    let push = sock(&ctx, SocketType::Push);
    push.set_option_int(opt::RECONNECT_IVL, 10).unwrap();
    let first = sock(&ctx, SocketType::Pull);
    first.bind("tcp://127.0.0.1:*").unwrap();
    let ep = first.last_endpoint().unwrap();
    push.connect(&ep).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sender = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut i = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                match push.send_slice(&body(i, 300 * 1024), 0) {
                    Ok(()) => i += 1,
                    Err(e) if e.errno() == errno::EAGAIN => {}
                    Err(e) => panic!("send {i}: {e:?}"),
                }
            }
            push
        })
    };
    for _ in 0..5 {
        let m = recv(&first);
        assert_eq!(m.len(), 300 * 1024);
    }
    drop(first);
    let second = sock(&ctx, SocketType::Pull);
    // The port may stay in TIME_WAIT-free reuse on loopback; retry briefly.
    assert!(eventually(Duration::from_secs(5), || second.bind(&ep).is_ok()), "rebind {ep}");
    let mut last = None;
    for _ in 0..20 {
        let m = recv(&second);
        assert_eq!(m.len(), 300 * 1024);
        let i = u64::from_le_bytes(m[..8].try_into().unwrap());
        check(&m, i, 300 * 1024);
        if let Some(prev) = last {
            assert!(i > prev, "message {i} after {prev}");
        }
        last = Some(i);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let push = sender.join().unwrap();
    assert!(direct_count(&push) > 0, "no send went direct");
}

/// CURVE boxes every frame: its connections never take direct writes.
#[test]
fn curve_connections_are_never_written_directly() {
    let _g = guard();
    let ctx = Context::new();
    let (server_public, server_secret) = curve_keypair().unwrap();
    let (client_public, client_secret) = curve_keypair().unwrap();
    let (push, pull) = pair_with(&ctx, Transport::Tcp, |push, pull| {
        pull.set_option_int(opt::CURVE_SERVER, 1).unwrap();
        pull.set_option_bytes(opt::CURVE_SECRETKEY, &*server_secret).unwrap();
        push.set_option_bytes(opt::CURVE_SERVERKEY, z85_encode(&server_public).unwrap().as_bytes()).unwrap();
        push.set_option_bytes(opt::CURVE_PUBLICKEY, &client_public).unwrap();
        push.set_option_bytes(opt::CURVE_SECRETKEY, &*client_secret).unwrap();
    });
    for i in 0..10 {
        push.send_slice(&body(i, 1 << 20), 0).unwrap();
        check(&recv(&pull), i, 1 << 20);
    }
    assert_eq!(direct_count(&push), 0);
}
