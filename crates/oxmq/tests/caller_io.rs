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

/// A lent buffer's release: counts its call (the test keeps the buffer).
unsafe extern "C" fn release_lent(_data: *mut std::ffi::c_void, hint: *mut std::ffi::c_void) {
    // SAFETY: `hint` is the `&'static AtomicUsize` the test lends with.
    let released = unsafe { &*(hint as *const std::sync::atomic::AtomicUsize) };
    released.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
}

/// Zero-copy messages (lent as C's `zmq_msg_init_data` lends, and shared
/// `Bytes`) take the direct path too: they arrive whole and in order among
/// small and multipart ones, and each lent buffer is released exactly once.
#[test]
fn lent_and_shared_messages_are_written_directly_and_released() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let _g = guard();
    static RELEASED: AtomicUsize = AtomicUsize::new(0);
    // The lent buffers outlive every send (kept to the end of the test).
    let mut kept: Vec<Box<[u8]>> = Vec::new();
    let mut lent = |i: u64, len: usize| -> Msg {
        let buf = body(i, len).into_boxed_slice();
        let ptr = buf.as_ptr();
        kept.push(buf);
        // SAFETY: `kept` holds the buffer past the context's end, and
        // `release_lent` only counts (from any thread).
        unsafe { Msg::from_lent(ptr, len, Some(release_lent), &RELEASED as *const AtomicUsize as *mut _) }
    };
    for t in [Transport::Tcp, Transport::IpcPath] {
        RELEASED.store(0, Ordering::SeqCst);
        let ctx = Context::new();
        let (push, pull) = pair(&ctx, t);
        const N: u64 = 240;
        let rx = std::thread::spawn(move || {
            for i in 0..N {
                let len = if i % 4 == 2 { 64 } else { 200 * 1024 + i as usize };
                if i % 4 == 3 {
                    let parts = recv_parts(&pull);
                    assert_eq!(parts.len(), 2, "message {i}: parts");
                    check(&parts[0], i, len);
                } else {
                    check(&recv(&pull), i, len);
                }
            }
        });
        let mut lent_count = 0;
        for i in 0..N {
            let len = if i % 4 == 2 { 64 } else { 200 * 1024 + i as usize };
            match i % 4 {
                0 => {
                    push.send(lent(i, len), 0).unwrap();
                    lent_count += 1;
                }
                1 => push.send(Msg::from_bytes(body(i, len).into()), 0).unwrap(),
                2 => push.send(Msg::from(body(i, len)), 0).unwrap(),
                _ => {
                    push.send(lent(i, len), oxmq::SNDMORE).unwrap();
                    lent_count += 1;
                    push.send(&b"tail"[..], 0).unwrap();
                }
            }
        }
        rx.join().unwrap();
        assert!(direct_count(&push) > 0, "{t:?}: no send went direct");
        assert!(direct_count(&push) <= N / 2, "{t:?}: a multipart or small message went direct");
        drop(push);
        drop(ctx);
        assert_eq!(RELEASED.load(Ordering::SeqCst), lent_count, "{t:?}: lent buffers released");
    }
}

/// Length of round trip `i`'s request (the reply is one byte longer):
/// small and medium ones go direct on REQ and REP, large ones through
/// the I/O thread, in between.
fn trip_len(i: u64) -> usize {
    [10, 5000, 300 * 1024][(i % 3) as usize] + i as usize
}

/// REQ and REP write their small messages themselves (one in flight per
/// round trip, nothing to batch): the REQ's delimiter and the REP's
/// envelope go in front of them, and strict alternation still holds.
fn req_rep_round_trips(t: Transport) {
    let ctx = Context::new();
    let rep = sock(&ctx, SocketType::Rep);
    let req = sock(&ctx, SocketType::Req);
    link(t, &rep, &req);
    const N: u64 = 150;
    let server = std::thread::spawn(move || {
        for i in 0..N {
            let got = recv(&rep);
            check(&got, i, trip_len(i));
            rep.send_slice(&body(i, trip_len(i) + 1), 0).unwrap();
        }
        rep
    });
    for i in 0..N {
        req.send_slice(&body(i, trip_len(i)), 0).unwrap();
        // A second request before the reply is refused, as ever.
        assert_errno(req.send_slice(b"again", DONTWAIT), errno::EFSM);
        check(&recv(&req), i, trip_len(i) + 1);
    }
    let rep = server.join().unwrap();
    assert!(direct_count(&req) > 0, "{t:?}: no request went direct");
    assert!(direct_count(&rep) > 0, "{t:?}: no reply went direct");
    assert_eq!(req.stats().unwrap().msgs_out, N);
    assert_eq!(rep.stats().unwrap().msgs_out, N);
    let (rs, ps) = (req.stats().unwrap(), rep.stats().unwrap());
    eprintln!("{t:?}: in direct req {} rep {}", rs.msgs_in_direct, ps.msgs_in_direct);
    assert!(rs.msgs_in_direct > 0, "{t:?}: no reply was read by the REQ's thread");
    assert!(rep.stats().unwrap().msgs_in_direct > 0, "{t:?}: no request was read by the REP's thread");
    assert_eq!((rs.msgs_in, ps.msgs_in), (N, N));
}

#[test]
fn req_rep_round_trips_go_direct_tcp() {
    let _g = guard();
    req_rep_round_trips(Transport::Tcp);
}

#[test]
fn req_rep_round_trips_go_direct_ipc() {
    let _g = guard();
    req_rep_round_trips(Transport::IpcPath);
}

/// A REP behind a ROUTER/DEALER proxy gets envelopes of several frames
/// (the proxy's routing id, then the delimiter): its direct replies carry
/// them all, and each reply reaches the REQ that asked. Multipart replies
/// take the pipe.
#[test]
fn rep_behind_a_proxy_keeps_the_whole_envelope() {
    let _g = guard();
    let ctx = Context::new();
    let front = sock(&ctx, SocketType::Router);
    let back = sock(&ctx, SocketType::Dealer);
    let front_ep = bind_fresh(Transport::Tcp, &front);
    let back_ep = bind_fresh(Transport::Tcp, &back);
    let proxy = std::thread::spawn(move || {
        let r = oxmq::Proxy::new(&front, &back).run();
        drop((front, back));
        r
    });
    let rep = sock(&ctx, SocketType::Rep);
    connect_to(&back_ep, &rep);
    let reqs: Vec<Socket> = (0..2).map(|_| sock(&ctx, SocketType::Req)).collect();
    for r in &reqs {
        connect_to(&front_ep, r);
    }
    for i in 0..60u64 {
        let who = (i % 2) as usize;
        let mut ask = body(i, trip_len(i));
        ask[8] = who as u8;
        reqs[who].send_slice(&ask, 0).unwrap();
        let got = recv(&rep);
        assert_eq!(got[8], who as u8);
        if i % 5 == 4 {
            send_parts(&rep, &[b"part", &body(i, trip_len(i))]);
            let parts = recv_parts(&reqs[who]);
            assert_eq!(parts.len(), 2);
            check(&parts[1], i, trip_len(i));
        } else {
            let mut reply = body(i, trip_len(i));
            reply[8] = who as u8;
            rep.send_slice(&reply, 0).unwrap();
            let back = recv(&reqs[who]);
            assert_eq!(back.len(), trip_len(i));
            assert_eq!(back[8], who as u8, "reply {i} reached the wrong REQ");
        }
    }
    assert!(direct_count(&rep) > 0, "no reply went direct");
    drop((rep, reqs));
    ctx.term();
    let _ = proxy.join().unwrap();
}

/// ROUTER: a large last frame right after the routing-id frame goes
/// direct; one after other frames of its message stays behind them.
#[test]
fn router_writes_a_large_frame_after_the_routing_id_directly() {
    let _g = guard();
    let ctx = Context::new();
    let router = sock(&ctx, SocketType::Router);
    let dealer = sock(&ctx, SocketType::Dealer);
    dealer.set_option_bytes(opt::ROUTING_ID, b"d1").unwrap();
    link(Transport::Tcp, &router, &dealer);
    dealer.send_slice(b"hi", 0).unwrap();
    assert_eq!(recv_parts(&router), vec![b"d1".to_vec(), b"hi".to_vec()]);
    for i in 0..40u64 {
        router.send_slice(b"d1", oxmq::SNDMORE).unwrap();
        if i % 2 == 0 {
            router.send_slice(&body(i, 200 * 1024), 0).unwrap();
            check(&recv(&dealer), i, 200 * 1024);
        } else {
            router.send_slice(b"head", oxmq::SNDMORE).unwrap();
            router.send_slice(&body(i, 200 * 1024), 0).unwrap();
            let parts = recv_parts(&dealer);
            assert_eq!(parts[0], b"head");
            check(&parts[1], i, 200 * 1024);
        }
    }
    let direct = direct_count(&router);
    assert!(direct > 0 && direct <= 20, "{direct} direct sends of 20 possible");
}
