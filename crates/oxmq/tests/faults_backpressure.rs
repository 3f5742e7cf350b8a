//! Back-pressure faults: EAGAIN storms (non-blocking senders and receivers
//! hammering full and empty pipes; kernel buffers shrunk so every write hits
//! EAGAIN), and a peer that reads nothing (HWM stops the sender, LINGER
//! bounds the close, PUB drops instead of blocking).

mod common;

use common::*;
use oxmq::{opt, Context, Error, PollItem, SocketType, DONTWAIT, POLLIN, POLLOUT};
use std::time::{Duration, Instant};

/// A DONTWAIT sender and a DONTWAIT receiver hammering a full and an empty
/// pipe (small HWMs; for tcp and ipc, small kernel buffers): every message
/// that was accepted arrives exactly once, in order, and after an EAGAIN the
/// socket says when to try again (POLLOUT, POLLIN), so neither side is left
/// waiting.
///
/// Nothing here depends on how the threads are scheduled: the first EAGAIN
/// of each side is forced (the receiver tries before anything is sent, the
/// sender fills the pipe before anyone reads), and a side spins a little on
/// EAGAIN and then waits for readiness, not for a deadline: at a load
/// average of 18, two spinners that each move a pipe of ten messages per
/// time slice took longer than the 10 s the loops had for 20,000.
fn eagain_storm(t: Transport) {
    /// EAGAINs in a row before a side waits for readiness.
    const SPIN: u32 = 64;
    const N: u32 = 20_000;
    let _g = guard();
    let ctx = Context::new();
    let push = sock(&ctx, SocketType::Push);
    let pull = sock(&ctx, SocketType::Pull);
    push.set_option_int(opt::SNDHWM, 5).unwrap();
    pull.set_option_int(opt::RCVHWM, 5).unwrap();
    if !t.is_inproc() {
        // So that a sender with no reader meets EAGAIN long before N.
        for s in [&push, &pull] {
            s.set_option_int(opt::SNDBUF, 4096).unwrap();
            s.set_option_int(opt::RCVBUF, 4096).unwrap();
        }
    }
    link(t, &pull, &push);
    assert!(matches!(pull.recv(DONTWAIT), Err(Error::Again)), "a message before any was sent");
    let mut sent = 0u32;
    // Nobody reads yet: the HWMs (and the kernel buffers) stop the sender.
    loop {
        match push.send(&sent.to_le_bytes()[..], DONTWAIT) {
            Ok(()) => sent += 1,
            Err(Error::Again) => break,
            Err(e) => panic!("send: {e}"),
        }
        assert!(sent < N, "{sent} messages taken with nobody reading: no back-pressure");
    }
    let receiver = std::thread::spawn(move || {
        let mut next = 0u32;
        let mut streak = 0;
        while next < N {
            match pull.recv(DONTWAIT) {
                Ok(m) => {
                    assert_eq!(m.as_slice(), next.to_le_bytes(), "lost, duplicated or reordered");
                    next += 1;
                    streak = 0;
                }
                Err(Error::Again) => {
                    streak += 1;
                    if streak == SPIN {
                        wait_ready(&pull, POLLIN);
                        streak = 0;
                    }
                }
                Err(e) => panic!("recv: {e}"),
            }
        }
    });
    let mut streak = 0;
    while sent < N {
        match push.send(&sent.to_le_bytes()[..], DONTWAIT) {
            Ok(()) => {
                sent += 1;
                streak = 0;
            }
            Err(Error::Again) => {
                streak += 1;
                if streak == SPIN {
                    wait_ready(&push, POLLOUT);
                    streak = 0;
                }
            }
            Err(e) => panic!("send: {e}"),
        }
    }
    receiver.join().unwrap();
}

/// Waits until `s` is ready for `events`, for as long as that takes: the
/// other side is still at work (it has messages to send, or room to make),
/// so readiness must come; a lost wake-up hangs here until the test's
/// watchdog aborts the run, naming the test.
fn wait_ready(s: &oxmq::Socket, events: i16) {
    let mut items = [PollItem::from_socket(s, events)];
    assert_eq!(oxmq::poll(&mut items, -1).expect("poll"), 1);
}

#[test]
fn eagain_storm_tcp() {
    eagain_storm(Transport::Tcp);
}

#[test]
fn eagain_storm_ipc() {
    eagain_storm(Transport::IpcPath);
}

#[test]
fn eagain_storm_inproc() {
    eagain_storm(Transport::InprocBindFirst);
}

/// Kernel buffers at their minimum: the I/O thread's writes and reads hit
/// EAGAIN constantly. Large multipart messages still arrive whole and in order.
#[test]
fn tiny_kernel_buffers_deliver_everything() {
    let _g = guard();
    let ctx = Context::new();
    let push = sock(&ctx, SocketType::Push);
    let pull = sock(&ctx, SocketType::Pull);
    for s in [&push, &pull] {
        s.set_option_int(opt::SNDBUF, 4096).unwrap();
        s.set_option_int(opt::RCVBUF, 4096).unwrap();
    }
    link(Transport::Tcp, &pull, &push);
    let body: Vec<u8> = (0..200_000u32).map(|i| i as u8).collect();
    let sender = std::thread::spawn(move || {
        for i in 0..30u32 {
            push.send_multipart([&i.to_le_bytes()[..], &body[..(i as usize * 6000)], b"end"], 0).unwrap();
        }
        push
    });
    for i in 0..30u32 {
        let parts = recv_parts(&pull);
        assert_eq!(parts.len(), 3);
        assert_eq!(parts[0], i.to_le_bytes());
        assert_eq!(parts[1].len(), i as usize * 6000);
        assert!(parts[1].iter().enumerate().all(|(k, &b)| b == k as u8), "payload {i} corrupt");
        assert_eq!(parts[2], b"end");
    }
    drop(sender.join().unwrap());
}

/// A peer that completes the handshake and then never reads: the sender's
/// HWM (plus what the kernel buffers) stops it with EAGAIN; a close with
/// LINGER returns at once and the context terminates within the linger.
#[test]
fn peer_reading_nothing_hwm_and_linger() {
    let _g = guard();
    let ctx = Context::new();
    let push = ctx.socket(SocketType::Push).unwrap();
    push.set_option_int(opt::SNDHWM, 100).unwrap();
    push.set_option_int(opt::SNDBUF, 8192).unwrap();
    push.set_option_int(opt::SNDTIMEO, 200).unwrap();
    push.set_option_int(opt::LINGER, 300).unwrap();
    let ep = bind_fresh(Transport::Tcp, &push);
    let mut raw = RawPeer::connect(&ep);
    socket2::SockRef::from(&raw.stream).set_recv_buffer_size(4096).unwrap();
    raw.handshake("PULL", None).unwrap();
    let body = vec![0u8; 1000];
    let mut sent = 0usize;
    let deadline = Instant::now() + BOUND;
    loop {
        assert!(Instant::now() < deadline, "the sender was never stopped ({sent} sent)");
        match push.send(&body[..], 0) {
            Ok(()) => sent += 1,
            Err(Error::Again) => break,
            Err(e) => panic!("send: {e}"),
        }
    }
    // HWM 100 messages of 1000 bytes, plus what the two kernel buffers and the
    // engine's batch hold: a few hundred KiB at most, never unbounded.
    assert!(sent >= 100, "stopped before the HWM: {sent}");
    assert!(sent < 100 + 1000, "the HWM did not hold: {sent} messages queued");
    let start = Instant::now();
    drop(push);
    // A close that waited out the linger would take its 300 ms; anything
    // shorter is the scheduler, not the close.
    assert!(start.elapsed() < Duration::from_millis(300), "close blocked for the linger");
    ctx.term();
    let took = start.elapsed();
    assert!(took >= Duration::from_millis(250), "term returned before the linger ran out: {took:?}");
    assert!(took < Duration::from_millis(2000), "term outlived LINGER 300 ms: {took:?}");
    drop(raw);
}

/// PUB never blocks on a subscriber that reads nothing: it drops at the HWM.
#[test]
fn pub_to_subscriber_reading_nothing_drops_without_blocking() {
    let _g = guard();
    let ctx = Context::new();
    let publ = sock(&ctx, SocketType::Pub);
    publ.set_option_int(opt::SNDHWM, 50).unwrap();
    let ep = bind_fresh(Transport::Tcp, &publ);
    let mut raw = RawPeer::connect(&ep);
    socket2::SockRef::from(&raw.stream).set_recv_buffer_size(4096).unwrap();
    raw.handshake("SUB", None).unwrap();
    raw.write(&frame(0x00, b"\x01")).unwrap(); // subscribe to everything
    std::thread::sleep(Duration::from_millis(100));
    let body = vec![1u8; 1000];
    let start = Instant::now();
    for _ in 0..100_000 {
        publ.send(&body[..], 0).expect("PUB send never fails for HWM");
    }
    assert!(start.elapsed() < BOUND, "PUB blocked on a subscriber that reads nothing");
    drop(raw);
}
