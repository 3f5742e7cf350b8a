//! A blocking REQ or REP receive that reads its connection itself
//! (`channel::direct_read`): what arrives, in what order, around bytes it
//! must leave to the engine (a second message, a command, a frame too large
//! or malformed, a half frame), a peer that goes away, timeouts and
//! context termination.

mod common;

use common::*;
use oxmq::{
    block_recv_with, errno, monitor_event as ev, opt, Context, CoreWait, Socket, SocketSlot, SocketType, DONTWAIT,
};
use std::time::Duration;

/// Message `i` of `len` bytes: its index, then a fill that depends on it.
fn body(i: u64, len: usize) -> Vec<u8> {
    let mut b = vec![(i % 251) as u8; len.max(8)];
    b[..8].copy_from_slice(&i.to_le_bytes());
    b
}

#[track_caller]
fn check(got: &[u8], i: u64, len: usize) {
    assert_eq!(got.len(), len.max(8), "message {i}: length");
    assert_eq!(u64::from_le_bytes(got[..8].try_into().unwrap()), i, "message {i}: out of order");
    assert!(got[8..].iter().all(|&b| b == (i % 251) as u8), "message {i}: body corrupted");
}

fn direct_in(s: &Socket) -> u64 {
    s.stats().unwrap().msgs_in_direct
}

/// REQ and REP in contexts of their own (an I/O thread each, as across
/// processes), small messages and multipart replies: every reply and
/// request arrives whole and in turn, and the waiting threads read some
/// of them themselves.
fn round_trips(t: Transport) {
    let (ctx_rep, ctx_req) = (Context::new(), Context::new());
    let rep = sock(&ctx_rep, SocketType::Rep);
    let req = sock(&ctx_req, SocketType::Req);
    link(t, &rep, &req);
    const N: u64 = 400;
    let len = |i: u64| (i as usize * 37) % 3000;
    let server = std::thread::spawn(move || {
        for i in 0..N {
            check(&recv(&rep), i, len(i));
            if i % 5 == 0 {
                send_parts(&rep, &[&body(i, 20), &body(i, len(i))]);
            } else {
                rep.send_slice(&body(i, len(i) + 1), 0).unwrap();
            }
        }
        rep
    });
    for i in 0..N {
        req.send_slice(&body(i, len(i)), 0).unwrap();
        if i % 5 == 0 {
            let parts = recv_parts(&req);
            assert_eq!(parts.len(), 2, "{t:?}: reply {i} has its two frames");
            check(&parts[0], i, 20);
            check(&parts[1], i, len(i));
        } else {
            check(&recv(&req), i, len(i) + 1);
        }
    }
    let rep = server.join().unwrap();
    let (rs, ps) = (req.stats().unwrap(), rep.stats().unwrap());
    assert_eq!((rs.msgs_in, ps.msgs_in), (N, N), "{t:?}: every message counted once");
    eprintln!("{t:?}: read by the waiting thread: REQ {} REP {} of {N}", rs.msgs_in_direct, ps.msgs_in_direct);
    assert!(rs.msgs_in_direct > 0, "{t:?}: no reply was read by the REQ's thread: the test did not test the path");
    assert!(ps.msgs_in_direct > 0, "{t:?}: no request was read by the REP's thread");
}

#[test]
fn round_trips_tcp() {
    let _g = guard();
    round_trips(Transport::Tcp);
}

#[test]
fn round_trips_ipc() {
    let _g = guard();
    round_trips(Transport::IpcPath);
}

/// A REP bound on tcp, a raw ZMTP peer connected to it as a REQ, and the
/// REP's thread already waiting in `recv` (so it, not the engine, reads
/// what the peer writes next). The thread answers each request with its
/// body reversed, `n` times.
struct Waiting {
    peer: RawPeer,
    ep: String,
    server: std::thread::JoinHandle<Socket>,
    _ctx: Context,
}

fn waiting_rep(n: usize, setup: impl FnOnce(&Socket)) -> Waiting {
    let ctx = Context::new();
    let rep = sock(&ctx, SocketType::Rep);
    setup(&rep);
    let ep = bind_fresh(Transport::Tcp, &rep);
    let mut peer = RawPeer::connect(&ep);
    peer.handshake("REQ", None).expect("handshake");
    let server = std::thread::spawn(move || {
        for _ in 0..n {
            let mut got = recv(&rep);
            got.reverse();
            rep.send_slice(&got, 0).unwrap();
        }
        rep
    });
    // Long enough for the thread to be waiting on the connection.
    std::thread::sleep(Duration::from_millis(100));
    Waiting { peer, ep, server, _ctx: ctx }
}

fn request(body: &[u8]) -> Vec<u8> {
    let mut r = frame(0x01, b"");
    r.extend(frame(0x00, body));
    r
}

/// The reply's body (after the empty delimiter), from the raw peer.
fn reply(peer: &mut RawPeer) -> Vec<u8> {
    let delimiter = peer.read_frame().unwrap();
    assert!(delimiter.more() && delimiter.body.is_empty(), "reply starts with the delimiter");
    let f = peer.read_frame().unwrap();
    assert!(!f.more());
    f.body
}

#[test]
fn two_requests_in_one_write_are_both_answered_in_order() {
    let _g = guard();
    let mut w = waiting_rep(2, |_| {});
    let mut bytes = request(b"first");
    bytes.extend(request(b"second"));
    w.peer.write(&bytes).unwrap();
    assert_eq!(reply(&mut w.peer), b"tsrif");
    assert_eq!(reply(&mut w.peer), b"dnoces");
    let rep = w.server.join().unwrap();
    assert!(direct_in(&rep) >= 1, "the waiting thread read the first request itself");
}

#[test]
fn a_command_before_the_request_goes_to_the_engine() {
    let _g = guard();
    let mut w = waiting_rep(1, |_| {});
    let mut bytes = frame(0x04, &command_body("PING", b"\x00\x0aping-ctx"));
    bytes.extend(request(b"after ping"));
    w.peer.write(&bytes).unwrap();
    // The PONG and the reply in either order: the engine queues the PONG,
    // and the REP's thread may write its reply first.
    let (mut pong, mut answer) = (None, None);
    while pong.is_none() || answer.is_none() {
        let f = w.peer.read_frame().unwrap();
        if f.is_command() {
            assert_eq!(f.command_name(), b"PONG");
            pong = Some(f.command_data().to_vec());
        } else {
            assert!(f.more() && f.body.is_empty(), "reply starts with the delimiter");
            let last = w.peer.read_frame().unwrap();
            answer = Some(last.body);
        }
    }
    assert_eq!(pong.unwrap(), b"ping-ctx");
    assert_eq!(answer.unwrap(), b"gnip retfa");
    w.server.join().unwrap();
}

/// A small request in four writes, then a large one in two, answered by a
/// REP waiting for each; how many the waiting thread read itself.
fn split_requests() -> u64 {
    let mut w = waiting_rep(2, |_| {});
    let body: Vec<u8> = (0..3000u32).map(|i| i as u8).collect();
    let bytes = request(&body);
    for piece in [&bytes[..1], &bytes[1..5], &bytes[5..1000], &bytes[1000..]] {
        w.peer.write(piece).unwrap();
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut want = body.clone();
    want.reverse();
    assert_eq!(reply(&mut w.peer), want);
    // A large one: more than the waiting thread buffers, its body read
    // into a buffer of its own.
    let big: Vec<u8> = (0..300_000u32).map(|i| (i % 253) as u8).collect();
    let bytes = request(&big);
    w.peer.write(&bytes[..40_000]).unwrap();
    std::thread::sleep(Duration::from_millis(20));
    w.peer.write(&bytes[40_000..]).unwrap();
    let mut want = big.clone();
    want.reverse();
    assert_eq!(reply(&mut w.peer), want);
    direct_in(&w.server.join().unwrap())
}

#[test]
fn a_request_split_across_writes_arrives_whole() {
    let _g = guard();
    // Whole and in order every time; read by the waiting thread in at
    // least one of three tries (an arrival between its reply and its next
    // wait, or a wake-up of its socket mid-request, leaves one to the
    // engine, which is as correct).
    let direct: Vec<u64> = (0..3).map(|_| split_requests()).collect();
    assert!(direct.iter().any(|&d| d >= 1), "no split request was read by the waiting thread: {direct:?}");
}

#[track_caller]
fn assert_dropped_then_serves_another(w: Waiting, what: &str) {
    let mut peer = w.peer;
    assert!(peer.wait_closed(Duration::from_secs(5)), "oxmq did not close the connection after {what}");
    // The REP thread still waits; a good peer is served.
    let mut good = RawPeer::connect(&w.ep);
    good.handshake("REQ", None).unwrap();
    good.write(&request(b"ok")).unwrap();
    assert_eq!(reply(&mut good), b"ko");
    w.server.join().unwrap();
}

#[test]
fn a_malformed_frame_while_waiting_drops_the_connection() {
    let _g = guard();
    let mut w = waiting_rep(1, |_| {});
    // Reserved flag bits set.
    w.peer.write(&[0x40, 0x01, b'x']).unwrap();
    assert_dropped_then_serves_another(w, "reserved flag bits");
}

#[test]
fn a_frame_over_maxmsgsize_while_waiting_drops_the_connection() {
    let _g = guard();
    let mut w = waiting_rep(1, |s| s.set_option_int(opt::MAXMSGSIZE, 100).unwrap());
    w.peer.write(&request(&[7u8; 101])).unwrap();
    assert_dropped_then_serves_another(w, "a frame over MAXMSGSIZE");
}

/// A raw ZMTP peer speaking REP, which `req` connects to over tcp.
fn raw_rep_for(req: &Socket) -> RawPeer {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    req.connect(&format!("tcp://127.0.0.1:{port}")).unwrap();
    let mut peer = RawPeer::from_stream(listener.accept().unwrap().0);
    peer.handshake("REP", None).unwrap();
    peer
}

/// `req` connected to a raw REP peer that has read `request` (its
/// delimiter and body) and not answered it.
fn asked_raw_rep(req: &Socket, request: &[u8]) -> RawPeer {
    let mut peer = raw_rep_for(req);
    req.send_slice(request, 0).unwrap();
    assert!(peer.read_frame().unwrap().more(), "the delimiter first");
    assert_eq!(peer.read_frame().unwrap().body, request);
    peer
}

#[test]
fn a_peer_that_leaves_while_a_req_waits_is_noticed() {
    let _g = guard();
    let ctx = Context::new();
    let req = sock(&ctx, SocketType::Req);
    req.set_option_int(opt::RCVTIMEO, 300).unwrap();
    let mon = monitor(&ctx, &req, ev::DISCONNECTED as u32);
    let peer = asked_raw_rep(&req, b"anyone?");
    let leaver = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        drop(peer);
    });
    assert_errno(req.recv(0), errno::EAGAIN);
    leaver.join().unwrap();
    wait_for(&mon, ev::DISCONNECTED);
}

#[test]
fn a_timeout_while_waiting_leaves_the_reply_for_the_next_receive() {
    let _g = guard();
    let ctx = Context::new();
    let req = sock(&ctx, SocketType::Req);
    req.set_option_int(opt::RCVTIMEO, 100).unwrap();
    let mut peer = asked_raw_rep(&req, b"slow");
    assert_errno(req.recv(0), errno::EAGAIN);
    peer.write(&request(b"late")).unwrap();
    assert_eq!(recv(&req), b"late");
}

#[test]
fn terminating_the_context_ends_a_direct_wait() {
    let _g = guard();
    let ctx = Context::new();
    let req = sock(&ctx, SocketType::Req);
    req.set_option_int(opt::LINGER, 0).unwrap();
    let peer = asked_raw_rep(&req, b"never answered");
    let waiter = std::thread::spawn(move || {
        let r = req.recv(0);
        drop(req);
        r
    });
    std::thread::sleep(Duration::from_millis(100));
    ctx.term();
    assert_errno(waiter.join().unwrap(), errno::ETERM);
    drop(peer);
}

// ---- a binding's blocking receive (`block_recv_with`: Python, Ruby) ----

/// A binding's receive through its slot, blocking as Python's does.
fn binding_recv(slot: &SocketSlot) -> oxmq::Result<oxmq::Msg> {
    let g = slot.enter()?;
    block_recv_with(&g, -1, &mut CoreWait, |s| s.recv(DONTWAIT))
}

/// A binding's blocking receive reads its connection itself, as the C
/// ABI's does, but leaves the socket free while it waits: another thread's
/// calls on it go through (held, they would fail "in use" after 5 ms).
#[test]
fn a_bindings_receive_reads_directly_and_leaves_the_socket_free() {
    let _g = guard();
    let (ctx_rep, ctx_req) = (Context::new(), Context::new());
    let rep = sock(&ctx_rep, SocketType::Rep);
    let req = sock(&ctx_req, SocketType::Req);
    link(Transport::Tcp, &rep, &req);
    const N: u64 = 60;
    let server = std::thread::spawn(move || {
        for i in 0..N {
            check(&recv(&rep), i, 100);
            // Some replies come late, so the other thread's calls land
            // inside the wait.
            if i % 3 == 0 {
                std::thread::sleep(Duration::from_millis(15));
            }
            rep.send_slice(&body(i, 200), 0).unwrap();
        }
        rep
    });
    let slot = std::sync::Arc::new(SocketSlot::new(req).unwrap());
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let other = {
        let (slot, done) = (slot.clone(), done.clone());
        std::thread::spawn(move || {
            let mut calls = 0u32;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                let g = slot.enter().unwrap();
                if let Err(e) = g.get_option_int(opt::RCVTIMEO) {
                    panic!("call {calls} while a receive waits: {e}");
                }
                drop(g);
                calls += 1;
                std::thread::sleep(Duration::from_millis(1));
            }
            calls
        })
    };
    for i in 0..N {
        slot.enter().unwrap().send_slice(&body(i, 100), 0).unwrap();
        check(binding_recv(&slot).unwrap().as_slice(), i, 200);
    }
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let calls = other.join().unwrap();
    let stats = slot.enter().unwrap().stats().unwrap();
    drop(server.join().unwrap());
    assert_eq!(stats.msgs_in, N, "every reply counted once");
    eprintln!(
        "binding receive: {} of {N} replies read by the waiting thread; {calls} calls beside",
        stats.msgs_in_direct
    );
    assert!(stats.msgs_in_direct > 0, "no reply was read by the waiting thread: the test did not test the path");
    assert!(calls > 100, "the other thread made {calls} calls");
}

/// Closing the socket from another thread ends a binding's direct wait
/// (through the slot's close descriptor, which the wait includes: nothing
/// else would wake it) with ENOTSOCK.
#[test]
fn closing_the_slot_ends_a_bindings_direct_wait() {
    let _g = guard();
    let ctx = Context::new();
    let req = sock(&ctx, SocketType::Req);
    req.set_option_int(opt::LINGER, 0).unwrap();
    let peer = asked_raw_rep(&req, b"never answered");
    let slot = std::sync::Arc::new(SocketSlot::new(req).unwrap());
    let closer = {
        let slot = slot.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            slot.close();
        })
    };
    assert!(matches!(binding_recv(&slot), Err(oxmq::Error::NotSocket)));
    closer.join().unwrap();
    drop(peer);
}

/// A binding's direct wait honours RCVTIMEO, and a reply arriving during
/// the next call's wait is read by that call.
#[test]
fn a_bindings_direct_wait_times_out_and_keeps_the_late_reply() {
    let _g = guard();
    let ctx = Context::new();
    let req = sock(&ctx, SocketType::Req);
    let mut peer = asked_raw_rep(&req, b"slow");
    let slot = SocketSlot::new(req).unwrap();
    let g = slot.enter().unwrap();
    let t0 = std::time::Instant::now();
    let r = block_recv_with(&g, 100, &mut CoreWait, |s| s.recv(DONTWAIT));
    assert!(matches!(r, Err(oxmq::Error::Again)), "{r:?}");
    assert!(t0.elapsed() >= Duration::from_millis(100));
    let late = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        peer.write(&request(b"late")).unwrap();
        peer
    });
    let m = block_recv_with(&g, 5_000, &mut CoreWait, |s| s.recv(DONTWAIT)).unwrap();
    assert_eq!(m.as_slice(), b"late");
    assert_eq!(g.stats().unwrap().msgs_in_direct, 1, "the late reply was read by the waiting call");
    drop(late.join().unwrap());
}

/// A lent message (a binding's `Frame` sent on) goes direct on a REQ or
/// REP, and is left to the usual queue on other types.
#[test]
fn a_lent_message_goes_direct_on_req_and_rep_only() {
    let _g = guard();
    let (ctx_a, ctx_b) = (Context::new(), Context::new());
    let rep = sock(&ctx_a, SocketType::Rep);
    let req = sock(&ctx_b, SocketType::Req);
    link(Transport::Tcp, &rep, &req);
    // A first round trip, so the connection is up.
    req.send_slice(&body(0, 10), 0).unwrap();
    check(&recv(&rep), 0, 10);
    rep.send_slice(&body(0, 10), 0).unwrap();
    check(&recv(&req), 0, 10);
    let before = (req.stats().unwrap().msgs_out_direct, rep.stats().unwrap().msgs_out_direct);
    let lent = oxmq::Msg::from(&body(1, 300)[..]);
    assert!(req.try_send_lent_direct(&lent, 0).unwrap(), "REQ: an idle connection is written directly");
    check(&recv(&rep), 1, 300);
    assert!(rep.try_send_lent_direct(&lent, 0).unwrap(), "REP: the reply too");
    check(&recv(&req), 1, 300);
    let after = (req.stats().unwrap().msgs_out_direct, rep.stats().unwrap().msgs_out_direct);
    assert_eq!((after.0 - before.0, after.1 - before.1), (1, 1));
    let pull = sock(&ctx_a, SocketType::Pull);
    let push = sock(&ctx_b, SocketType::Push);
    link(Transport::Tcp, &pull, &push);
    push.send_slice(b"up", 0).unwrap();
    assert_eq!(recv(&pull), b"up");
    let big = oxmq::Msg::from(&body(2, 1 << 20)[..]);
    assert!(!push.try_send_lent_direct(&big, 0).unwrap(), "PUSH queues what is lent");
    assert_eq!(push.stats().unwrap().msgs_out_direct, 0);
}

/// A reply the peer sends just before it closes reaches the REQ waiting
/// for it, read directly or not (the connection clears its port as it
/// closes, which must not make the waiting thread drop what it read).
#[test]
fn a_reply_followed_by_the_peers_close_is_received() {
    let _g = guard();
    let ctx = Context::new();
    for i in 0..800u64 {
        let req = sock(&ctx, SocketType::Req);
        req.set_option_int(opt::LINGER, 0).unwrap();
        let mut peer = asked_raw_rep(&req, b"last?");
        let len = if i % 2 == 0 { 100 } else { 200_000 };
        let closer = std::thread::spawn(move || {
            peer.write(&request(&body(i, len))).unwrap();
            drop(peer);
        });
        check(&recv(&req), i, len);
        closer.join().unwrap();
    }
}

/// A binding's REQ under stress: replies late and on time, receives that
/// time out and retry, and the socket closed by another thread at a
/// different moment each round. Every reply that arrives is the one asked
/// for, in turn, and the receiving thread always ends (ENOTSOCK once
/// closed), never hangs.
#[test]
fn a_bindings_receives_survive_timeouts_late_replies_and_a_close() {
    let _g = guard();
    for round in 0..12u64 {
        let (ctx_rep, ctx_req) = (Context::new(), Context::new());
        let rep = sock(&ctx_rep, SocketType::Rep);
        let req = sock(&ctx_req, SocketType::Req);
        req.set_option_int(opt::LINGER, 0).unwrap();
        rep.set_option_int(opt::LINGER, 0).unwrap();
        rep.set_option_int(opt::RCVTIMEO, 200).unwrap();
        link(Transport::Tcp, &rep, &req);
        let server = std::thread::spawn(move || {
            let mut i = 0u64;
            while let Ok(m) = rep.recv(0) {
                check(m.as_slice(), i, 50);
                if i % 3 == round % 3 {
                    std::thread::sleep(Duration::from_millis(4 + i % 5));
                }
                if rep.send_slice(&body(i, 60), 0).is_err() {
                    break;
                }
                i += 1;
            }
            rep
        });
        let slot = std::sync::Arc::new(SocketSlot::new(req).unwrap());
        let closer = {
            let slot = slot.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20 + round * 7));
                slot.close();
            })
        };
        let t0 = std::time::Instant::now();
        let mut got = 0u64;
        'calls: loop {
            let Ok(g) = slot.enter() else { break };
            if g.send_slice(&body(got, 50), 0).is_err() {
                break;
            }
            loop {
                match block_recv_with(&g, 3, &mut CoreWait, |s| s.recv(DONTWAIT)) {
                    Ok(m) => {
                        check(m.as_slice(), got, 60);
                        got += 1;
                        break;
                    }
                    Err(oxmq::Error::Again) => continue,
                    Err(oxmq::Error::NotSocket) => break 'calls,
                    Err(e) => panic!("round {round}, reply {got}: {e}"),
                }
            }
        }
        assert!(t0.elapsed() < Duration::from_secs(5), "round {round}: the receiving thread took {:?}", t0.elapsed());
        closer.join().unwrap();
        drop(server.join().unwrap());
        assert!(got > 0, "round {round}: no reply before the close");
    }
}
