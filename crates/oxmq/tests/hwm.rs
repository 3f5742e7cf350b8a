//! High-water marks: blocking, dropping, ROUTER drops, CONFLATE.

mod common;

use common::*;
use oxmq::{errno, opt, Context, Msg, Socket, SocketType, DONTWAIT};
use std::time::{Duration, Instant};

/// Send with DONTWAIT until EAGAIN; returns how many were accepted (bounded).
fn send_until_eagain(s: &Socket, payload: &[u8], cap: usize) -> usize {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut n = 0;
    loop {
        match s.send(Msg::from(payload), DONTWAIT) {
            Ok(()) => n += 1,
            Err(e) if e.errno() == errno::EAGAIN => return n,
            Err(e) => panic!("send #{n} failed with {e:?}"),
        }
        assert!(n <= cap, "sent {n} messages without reaching the HWM");
        assert!(Instant::now() < deadline, "HWM never reached after {n} sends");
    }
}

#[test]
fn push_without_peer_eagain_immediately() {
    let _g = guard();
    let ctx = Context::new();
    let push = sock(&ctx, SocketType::Push);
    push.bind(&inproc_endpoint()).unwrap();
    assert_errno(push.send("x", DONTWAIT), errno::EAGAIN);
    // A blocking send with a timeout times out with EAGAIN too.
    push.set_option_int(opt::SNDTIMEO, 50).unwrap();
    assert_errno(push.send("x", 0), errno::EAGAIN);
}

fn inproc_hwm_case(connect_first: bool, sndhwm: i64, rcvhwm: i64) -> usize {
    let ctx = Context::new();
    let push = sock(&ctx, SocketType::Push);
    let pull = sock(&ctx, SocketType::Pull);
    push.set_option_int(opt::SNDHWM, sndhwm).unwrap();
    pull.set_option_int(opt::RCVHWM, rcvhwm).unwrap();
    let t = if connect_first { Transport::InprocConnectFirst } else { Transport::InprocBindFirst };
    link(t, &pull, &push);
    let n = send_until_eagain(&push, b"m", 1_000_000);
    // Every accepted message is delivered, in order, and then room reappears.
    for _ in 0..n {
        assert_eq!(recv(&pull), b"m");
    }
    assert_nothing(&pull);
    send(&push, b"after");
    assert_eq!(recv(&pull), b"after");
    n
}

#[test]
fn inproc_hwm_bind_first_is_sum() {
    let _g = guard();
    assert_eq!(inproc_hwm_case(false, 1000, 1000), 2000, "default HWMs over inproc");
    assert_eq!(inproc_hwm_case(false, 2, 3), 5);
    assert_eq!(inproc_hwm_case(false, 10, 1), 11);
}

#[test]
fn inproc_hwm_connect_first_is_sum() {
    let _g = guard();
    assert_eq!(inproc_hwm_case(true, 1000, 1000), 2000, "default HWMs over inproc");
    assert_eq!(inproc_hwm_case(true, 2, 3), 5);
    assert_eq!(inproc_hwm_case(true, 1, 10), 11);
}

/// Before the bind, a connecter's inproc pipe holds its own SNDHWM alone (the
/// binder's RCVHWM is not known yet), as libzmq's test_hwm
/// `test_infinite_recv_connect_and_close_first` checks: SNDHWM 1, connect,
/// send until EAGAIN, close; a binder with RCVHWM 0 then gets exactly that one.
#[test]
fn inproc_connect_before_bind_queues_own_sndhwm_only() {
    let _g = guard();
    for (sndhwm, rcvhwm, expected) in [(1, 0, 1), (3, 1000, 3), (2, 5, 2)] {
        let ctx = Context::new();
        let ep = inproc_endpoint();
        // libzmq's test keeps the default LINGER: the queued messages outlive the close.
        let push = ctx.socket(SocketType::Push).unwrap();
        push.set_option_int(opt::SNDHWM, sndhwm).unwrap();
        push.connect(&ep).unwrap();
        let n = send_until_eagain(&push, b"", 100_000);
        assert_eq!(n, expected, "SNDHWM {sndhwm} before any bind");
        drop(push);
        let pull = sock(&ctx, SocketType::Pull);
        pull.set_option_int(opt::RCVHWM, rcvhwm).unwrap();
        pull.bind(&ep).unwrap();
        let mut got = 0;
        while pull.recv(DONTWAIT).is_ok() {
            got += 1;
        }
        assert_eq!(got, expected, "every queued message reaches the binder");
    }
}

#[test]
fn tcp_connect_without_listener_queues_up_to_sndhwm() {
    let _g = guard();
    let ctx = Context::new();
    let push = sock(&ctx, SocketType::Push);
    push.set_option_int(opt::SNDHWM, 5).unwrap();
    push.connect(&format!("tcp://127.0.0.1:{}", free_tcp_port())).unwrap();
    let n = send_until_eagain(&push, b"queued", 1000);
    assert!((1..=5).contains(&n), "a pending connection queues up to SNDHWM, got {n}");
}

fn non_reading_peer_eventually_eagain(t: Transport) {
    let ctx = Context::new();
    let push = sock(&ctx, SocketType::Push);
    let pull = sock(&ctx, SocketType::Pull);
    push.set_option_int(opt::SNDHWM, 10).unwrap();
    pull.set_option_int(opt::RCVHWM, 10).unwrap();
    link(t, &pull, &push);
    // Wait until connected, so we test the full path and not just the pending pipe.
    send(&push, b"first");
    assert_eq!(recv(&pull), b"first");
    let payload = vec![0x55u8; 1024];
    let n = send_until_eagain(&push, &payload, 2_000_000);
    // SNDHWM less the messages the connection read and has not acknowledged
    // yet: over tcp and ipc it acknowledges at multiples of the LWM (5) only,
    // as libzmq's session does, so "first" may still count.
    assert!(n >= 9, "at least SNDHWM - 1 messages fit, got {n}");
    // Now read everything; all must arrive intact and the pipe drains.
    for i in 0..n {
        let m = push_pull_recv(&pull);
        assert_eq!(m.len(), 1024, "message {i}");
    }
    send(&push, b"after");
    assert_eq!(recv(&pull), b"after");
}

fn push_pull_recv(pull: &Socket) -> Vec<u8> {
    recv(pull)
}

#[test]
fn tcp_non_reading_peer_eventually_eagain() {
    let _g = guard();
    non_reading_peer_eventually_eagain(Transport::Tcp);
}

#[test]
fn ipc_non_reading_peer_eventually_eagain() {
    let _g = guard();
    non_reading_peer_eventually_eagain(Transport::IpcPath);
}

#[test]
fn blocking_send_unblocks_when_reader_catches_up() {
    let _g = guard();
    let ctx = Context::new();
    let push = sock(&ctx, SocketType::Push);
    let pull = sock(&ctx, SocketType::Pull);
    push.set_option_int(opt::SNDHWM, 2).unwrap();
    pull.set_option_int(opt::RCVHWM, 2).unwrap();
    link(Transport::InprocBindFirst, &pull, &push);
    let n = send_until_eagain(&push, b"x", 100);
    assert!((2..=4).contains(&n), "HWMs 2+2 over inproc, accepted {n}");
    let reader = std::thread::spawn(move || {
        let mut got = 0;
        while got < n + 50 {
            let m = pull.recv(0).expect("reader recv");
            assert_eq!(m.as_slice(), b"x");
            got += 1;
        }
        got
    });
    // Blocking sends (SNDTIMEO 5 s) succeed as the reader drains.
    for _ in 0..50 {
        push.send("x", 0).expect("blocking send unblocks");
    }
    assert_eq!(reader.join().unwrap(), n + 50);
}

fn pub_drops_at_hwm(t: Transport) {
    let ctx = Context::new();
    let publisher = sock(&ctx, SocketType::Pub);
    let sub = sock(&ctx, SocketType::Sub);
    publisher.set_option_int(opt::SNDHWM, 10).unwrap();
    sub.set_option_int(opt::RCVHWM, 10).unwrap();
    sub.set_option_bytes(opt::SUBSCRIBE, b"").unwrap();
    link(t, &publisher, &sub);
    sync_pub_sub(&publisher, &[&sub], b"sync");
    while sub.recv(DONTWAIT).is_ok() {}
    const N: u32 = 20_000;
    for i in 0..N {
        // Never EAGAIN, never blocks.
        publisher.send(Msg::from(&i.to_be_bytes()[..]), DONTWAIT).unwrap_or_else(|e| panic!("PUB send {i}: {e:?}"));
    }
    publisher.send(Msg::from(&b"end"[..]), 0).unwrap();
    // Drain: whatever arrives is in increasing order, and fewer than N arrive.
    let mut got = 0u32;
    let mut last: Option<u32> = None;
    loop {
        match sub.recv(0) {
            Ok(m) if m.as_slice() == b"end" => break,
            Ok(m) if m.as_slice() == b"sync" => {}
            Ok(m) => {
                let v = u32::from_be_bytes(m.as_slice().try_into().unwrap());
                assert!(last.is_none_or(|l| v > l), "out of order {v} after {last:?}");
                last = Some(v);
                got += 1;
            }
            Err(e) if e.errno() == errno::EAGAIN => break, // "end" itself was dropped
            Err(e) => panic!("{e:?}"),
        }
    }
    assert!(got < N, "PUB should have dropped at HWM, but all {N} arrived");
    if t.is_inproc() {
        assert!(got <= 20, "over inproc at most SNDHWM+RCVHWM arrive, got {got}");
    }
}

#[test]
fn pub_drops_at_hwm_inproc() {
    let _g = guard();
    pub_drops_at_hwm(Transport::InprocBindFirst);
}

#[test]
fn pub_drops_at_hwm_tcp() {
    let _g = guard();
    pub_drops_at_hwm(Transport::Tcp);
}

#[test]
fn router_drops_at_hwm_and_mandatory_eagain() {
    let _g = guard();
    let ctx = Context::new();
    let router = sock(&ctx, SocketType::Router);
    let dealer = sock(&ctx, SocketType::Dealer);
    router.set_option_int(opt::SNDHWM, 5).unwrap();
    dealer.set_option_int(opt::RCVHWM, 5).unwrap();
    dealer.set_option_bytes(opt::ROUTING_ID, b"D").unwrap();
    link(Transport::InprocBindFirst, &router, &dealer);
    send(&dealer, b"hi");
    assert_eq!(recv_parts(&router), vec![b"D".to_vec(), b"hi".to_vec()]);
    // Non-mandatory: never fails, excess dropped.
    for i in 0..1000u32 {
        router
            .send_multipart([&b"D"[..], &i.to_be_bytes()], DONTWAIT)
            .unwrap_or_else(|e| panic!("ROUTER send {i}: {e:?}"));
    }
    let mut got = 0;
    while dealer.recv(DONTWAIT).is_ok() {
        got += 1;
    }
    assert!(got > 0 && got <= 10, "ROUTER delivers up to the HWMs and drops the rest, got {got}");
    // Mandatory: at HWM, EAGAIN instead of dropping.
    router.set_option_int(opt::ROUTER_MANDATORY, 1).unwrap();
    let deadline = Instant::now() + BOUND;
    let mut sent = 0;
    loop {
        assert!(Instant::now() < deadline);
        match router.send_multipart([&b"D"[..], b"m"], DONTWAIT) {
            Ok(()) => sent += 1,
            Err(e) if e.errno() == errno::EAGAIN => break,
            Err(e) => panic!("{e:?}"),
        }
        assert!(sent <= 10, "ROUTER_MANDATORY never hit HWM");
    }
    assert!(sent >= 1);
}

#[test]
fn conflate_keeps_newest_tcp() {
    let _g = guard();
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    pull.set_option_int(opt::CONFLATE, 1).unwrap();
    let push = sock(&ctx, SocketType::Push);
    link(Transport::Tcp, &pull, &push);
    for i in 1..=50u8 {
        push.send(Msg::from(&[i][..]), 0).unwrap();
    }
    // What we receive is increasing and ends with the newest; older ones are gone.
    let mut last = 0u8;
    let mut receives = 0;
    while last != 50 {
        let m = recv(&pull);
        assert!(m[0] > last, "conflated values must increase: {} after {last}", m[0]);
        last = m[0];
        receives += 1;
    }
    assert!(receives < 50, "CONFLATE should skip older messages");
    assert_nothing(&pull);
}

#[test]
fn conflate_keeps_newest_inproc_connecting() {
    let _g = guard();
    let ctx = Context::new();
    let push = sock(&ctx, SocketType::Push);
    let pull = sock(&ctx, SocketType::Pull);
    pull.set_option_int(opt::CONFLATE, 1).unwrap();
    link(Transport::InprocBindFirst, &push, &pull);
    for i in 1..=10u8 {
        push.send(Msg::from(&[i][..]), 0).unwrap();
    }
    assert_eq!(recv(&pull), vec![10]);
    assert_nothing(&pull);
    push.send(Msg::from(&b"z"[..]), 0).unwrap();
    assert_eq!(recv(&pull), b"z");
}

#[test]
fn hwm_zero_is_unlimited() {
    let _g = guard();
    let ctx = Context::new();
    let push = sock(&ctx, SocketType::Push);
    let pull = sock(&ctx, SocketType::Pull);
    push.set_option_int(opt::SNDHWM, 0).unwrap();
    pull.set_option_int(opt::RCVHWM, 0).unwrap();
    link(Transport::InprocBindFirst, &pull, &push);
    for i in 0..20_000u32 {
        push.send(Msg::from(&i.to_be_bytes()[..]), DONTWAIT).unwrap_or_else(|e| panic!("send {i}: {e:?}"));
    }
    for i in 0..20_000u32 {
        assert_eq!(recv(&pull), i.to_be_bytes());
    }
}

/// `THROTTLED_VIEW` (set by the C ABI on `ZMQ_DONTWAIT` sends): the writer
/// sees its reader's progress as libzmq's does, as of the socket's last look
/// (at most once a millisecond), so right after the reader drains a full pipe
/// sends may still find it full and fail with EAGAIN. Those refusals must end
/// with no further help from the reader (which sent its one wake-up when it
/// drained): the pattern dropped the pipe at the first refusal, and the
/// next look must find it back. Without the flag a send sees the room at
/// once. Counts are exact either way: a view is never ahead of the reader.
#[test]
fn throttled_view_refusals_end_without_the_reader() {
    let _g = guard();
    for throttled in [false, true] {
        let flags = DONTWAIT | if throttled { oxmq::THROTTLED_VIEW } else { 0 };
        let ctx = Context::new();
        let push = sock(&ctx, SocketType::Push);
        let pull = sock(&ctx, SocketType::Pull);
        push.set_option_int(opt::SNDHWM, 4).unwrap();
        pull.set_option_int(opt::RCVHWM, 4).unwrap();
        link(Transport::InprocBindFirst, &pull, &push);
        let mut refused_rounds = 0;
        for round in 0..200 {
            let mut sent = 0;
            let mut refusals = 0u64;
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                match push.send(Msg::from(&b"m"[..]), flags) {
                    Ok(()) => sent += 1,
                    Err(e) if e.errno() == errno::EAGAIN => {
                        if sent == 8 {
                            break;
                        }
                        // Only the stale view right after a drain may refuse.
                        assert_eq!(sent, 0, "round {round}: a refusal after {sent} sends, before the HWM");
                        refusals += 1;
                        assert!(Instant::now() < deadline, "round {round}: still refused after 10 s");
                    }
                    Err(e) => panic!("send failed with {e:?}"),
                }
                assert!(sent <= 8, "round {round}: more than SNDHWM + RCVHWM accepted");
            }
            if !throttled {
                assert_eq!(refusals, 0, "round {round}: an unthrottled send saw a stale view");
            }
            refused_rounds += (refusals > 0) as u32;
            for _ in 0..8 {
                assert_eq!(recv(&pull), b"m");
            }
            assert_nothing(&pull);
        }
        eprintln!("throttled {throttled}: {refused_rounds} of 200 drains followed by refusals");
    }
}
