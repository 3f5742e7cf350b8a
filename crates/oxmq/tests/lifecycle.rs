//! Linger, context termination, reconnection.

mod common;

use common::*;
use oxmq::{errno, opt, Context, Msg, SocketType, DONTWAIT};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// PUSH connects to an endpoint nobody listens on yet, sends, and is dropped;
/// a PULL bound afterwards (in another context) still gets the message.
fn linger_delivers_after_close(linger: i64, ep: String) {
    let push_ctx = Context::new();
    let push = sock(&push_ctx, SocketType::Push);
    push.set_option_int(opt::LINGER, linger).unwrap();
    push.set_option_int(opt::RECONNECT_IVL, 20).unwrap();
    push.connect(&ep).unwrap();
    send(&push, b"lingering-1");
    send(&push, b"lingering-2");
    drop(push);
    let pull_ctx = Context::new();
    let pull = sock(&pull_ctx, SocketType::Pull);
    pull.bind(&ep).unwrap_or_else(|e| panic!("bind {ep}: {e:?}"));
    assert_eq!(recv(&pull), b"lingering-1");
    assert_eq!(recv(&pull), b"lingering-2");
    // term returns once the lingering messages are out.
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        push_ctx.term();
        tx.send(()).unwrap();
    });
    rx.recv_timeout(BOUND).expect("ctx.term() should return once lingering messages are delivered");
}

#[test]
fn linger_infinite_tcp() {
    let _g = guard();
    linger_delivers_after_close(-1, format!("tcp://127.0.0.1:{}", free_tcp_port()));
}

#[test]
fn linger_1000_tcp() {
    let _g = guard();
    linger_delivers_after_close(1000, format!("tcp://127.0.0.1:{}", free_tcp_port()));
}

#[test]
fn linger_infinite_ipc() {
    let _g = guard();
    linger_delivers_after_close(-1, ipc_path_endpoint());
}

#[test]
fn linger_to_slow_reader_tcp() {
    let _g = guard();
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    pull.set_option_int(opt::RCVHWM, 10).unwrap();
    let ep = bind_fresh(Transport::Tcp, &pull);
    let push_ctx = Context::new();
    let push = sock(&push_ctx, SocketType::Push);
    push.set_option_int(opt::LINGER, -1).unwrap();
    push.set_option_int(opt::SNDHWM, 10).unwrap();
    push.connect(&ep).unwrap();
    const N: u32 = 500;
    for i in 0..N {
        push.send(Msg::from(&i.to_be_bytes()[..]), 0).unwrap();
    }
    drop(push);
    for i in 0..N {
        assert_eq!(recv(&pull), i.to_be_bytes(), "message {i} after the sender closed");
    }
}

#[test]
fn linger_zero_close_is_immediate_and_discards() {
    let _g = guard();
    let ep = format!("tcp://127.0.0.1:{}", free_tcp_port());
    let push_ctx = Context::new();
    let push = sock(&push_ctx, SocketType::Push);
    push.set_option_int(opt::LINGER, 0).unwrap();
    push.connect(&ep).unwrap();
    send(&push, b"discard me");
    drop(push);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        push_ctx.term();
        tx.send(()).unwrap();
    });
    rx.recv_timeout(BOUND).expect("ctx.term() with LINGER=0 must not wait");
    let pull_ctx = Context::new();
    let pull = sock(&pull_ctx, SocketType::Pull);
    pull.bind(&ep).unwrap();
    assert_nothing_within(&pull, 300);
}

#[test]
fn term_waits_for_sockets_to_be_dropped() {
    let _g = guard();
    let ctx = Context::new();
    let s = sock(&ctx, SocketType::Pull);
    s.bind("tcp://127.0.0.1:*").unwrap();
    let (tx, rx) = mpsc::channel();
    let c2 = ctx.clone();
    std::thread::spawn(move || {
        c2.term();
        tx.send(()).unwrap();
    });
    assert!(rx.recv_timeout(Duration::from_millis(200)).is_err(), "term returned while a socket is open");
    // The open socket now fails with ETERM ...
    assert!(eventually(BOUND, || ctx.is_terminated()));
    assert_errno(s.recv(0), errno::ETERM);
    // ... and once dropped, term returns.
    drop(s);
    rx.recv_timeout(BOUND).expect("term returns after the last socket is dropped");
}

#[test]
fn blocked_recv_gets_eterm_on_shutdown() {
    let _g = guard();
    let ctx = Context::new();
    let (tx, rx) = mpsc::channel();
    let c2 = ctx.clone();
    let (ready_tx, ready_rx) = mpsc::channel();
    let t = std::thread::spawn(move || {
        let s = c2.socket(SocketType::Pull).unwrap();
        s.set_option_int(opt::LINGER, 0).unwrap();
        s.bind(&inproc_endpoint()).unwrap();
        ready_tx.send(()).unwrap();
        let r = s.recv(0); // RCVTIMEO -1: blocks until ETERM
        tx.send(r.map(|m| m.to_vec()).map_err(|e| e.errno())).unwrap();
    });
    ready_rx.recv().unwrap();
    std::thread::sleep(Duration::from_millis(50)); // let it block (not synchronisation of the result)
    ctx.shutdown();
    let r = rx.recv_timeout(BOUND).expect("blocked recv must wake on shutdown");
    assert_eq!(r, Err(errno::ETERM));
    t.join().unwrap();
    ctx.term();
}

#[test]
fn blocked_recv_gets_eterm_on_term() {
    let _g = guard();
    let ctx = Context::new();
    let c2 = ctx.clone();
    let (ready_tx, ready_rx) = mpsc::channel();
    let t = std::thread::spawn(move || {
        let s = c2.socket(SocketType::Rep).unwrap();
        s.set_option_int(opt::LINGER, 0).unwrap();
        s.bind("tcp://127.0.0.1:*").unwrap();
        ready_tx.send(()).unwrap();
        let r = s.recv(0).map(|m| m.to_vec()).map_err(|e| e.errno());
        drop(s);
        r
    });
    ready_rx.recv().unwrap();
    let (tx, rx) = mpsc::channel();
    let c3 = ctx.clone();
    std::thread::spawn(move || {
        c3.term();
        tx.send(()).unwrap();
    });
    rx.recv_timeout(BOUND).expect("term returns once the blocked thread closes its socket");
    assert_eq!(t.join().unwrap(), Err(errno::ETERM));
}

#[test]
fn blocked_send_gets_eterm_on_shutdown() {
    let _g = guard();
    let ctx = Context::new();
    let c2 = ctx.clone();
    let (ready_tx, ready_rx) = mpsc::channel();
    let t = std::thread::spawn(move || {
        let s = c2.socket(SocketType::Push).unwrap();
        s.set_option_int(opt::LINGER, 0).unwrap();
        s.bind(&inproc_endpoint()).unwrap();
        ready_tx.send(()).unwrap();
        s.send("no peer", 0).map_err(|e| e.errno())
    });
    ready_rx.recv().unwrap();
    ctx.shutdown();
    assert_eq!(t.join().unwrap(), Err(errno::ETERM));
}

#[test]
fn poll_gets_eterm_on_shutdown() {
    let _g = guard();
    let ctx = Context::new();
    let c2 = ctx.clone();
    let (ready_tx, ready_rx) = mpsc::channel();
    let t = std::thread::spawn(move || {
        let s = c2.socket(SocketType::Pull).unwrap();
        s.set_option_int(opt::LINGER, 0).unwrap();
        ready_tx.send(()).unwrap();
        let mut items = [oxmq::PollItem::from_socket(&s, oxmq::POLLIN)];
        oxmq::poll(&mut items, 8_000).map_err(|e| e.errno())
    });
    ready_rx.recv().unwrap();
    std::thread::sleep(Duration::from_millis(50));
    ctx.shutdown();
    let r = t.join().unwrap();
    assert_eq!(r, Err(errno::ETERM), "zmq_poll returns ETERM after shutdown");
}

#[test]
fn calls_after_term_give_eterm() {
    let _g = guard();
    let ctx = Context::new();
    let s = sock(&ctx, SocketType::Pair);
    ctx.shutdown();
    assert_errno(s.send("x", DONTWAIT), errno::ETERM);
    assert_errno(s.recv(DONTWAIT), errno::ETERM);
    assert_errno(s.bind("tcp://127.0.0.1:*"), errno::ETERM);
    assert_errno(s.connect("inproc://x"), errno::ETERM);
    assert_errno(ctx.socket(SocketType::Pair).map(|_| ()), errno::ETERM);
    drop(s);
    ctx.term();
    assert_errno(ctx.socket(SocketType::Push).map(|_| ()), errno::ETERM);
}

#[test]
fn term_with_no_sockets_returns() {
    let _g = guard();
    let ctx = Context::new();
    {
        let s = sock(&ctx, SocketType::Pull);
        s.bind("tcp://127.0.0.1:*").unwrap();
        s.bind(&ipc_path_endpoint()).unwrap();
    }
    ctx.term();
    Context::new().term();
}

#[test]
fn context_dropped_with_open_connections() {
    let _g = guard();
    // Dropping sockets and the context in any order must not hang or panic.
    for _ in 0..20 {
        let ctx = Context::new();
        let a = sock(&ctx, SocketType::Dealer);
        let b = sock(&ctx, SocketType::Router);
        link(Transport::Tcp, &b, &a);
        send(&a, b"x");
        drop(ctx);
        drop(b);
        drop(a);
    }
}

/// Bind, retrying while the port is briefly unavailable.
fn bind_retry(s: &oxmq::Socket, ep: &str) {
    let deadline = Instant::now() + BOUND;
    loop {
        match s.bind(ep) {
            Ok(()) => return,
            Err(e) if e.errno() == errno::EADDRINUSE && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20))
            }
            Err(e) => panic!("rebind {ep}: {e:?}"),
        }
    }
}

#[test]
fn push_reconnects_to_restarted_pull() {
    let _g = guard();
    let ctx = Context::new();
    let push = sock(&ctx, SocketType::Push);
    push.set_option_int(opt::RECONNECT_IVL, 20).unwrap();
    let pull = sock(&ctx, SocketType::Pull);
    let mon_ep = inproc_endpoint();
    push.monitor(Some(&mon_ep), u32::from(oxmq::monitor_event::DISCONNECTED)).unwrap();
    let mon = sock(&ctx, SocketType::Pair);
    mon.connect(&mon_ep).unwrap();
    let ep = bind_fresh(Transport::Tcp, &pull);
    push.connect(&ep).unwrap();
    send(&push, b"before");
    assert_eq!(recv(&pull), b"before");
    drop(pull);
    // Wait until the PUSH has seen the disconnect, so the next messages are
    // queued in the pipe rather than written into a dead socket (a fixed
    // sleep assumed the I/O thread ran within it, which a loaded machine
    // does not promise).
    let event = recv_parts(&mon);
    assert_eq!(u16::from_ne_bytes([event[0][0], event[0][1]]), oxmq::monitor_event::DISCONNECTED);
    send(&push, b"queued-1");
    send(&push, b"queued-2");
    let pull2 = sock(&ctx, SocketType::Pull);
    bind_retry(&pull2, &ep);
    assert_eq!(recv(&pull2), b"queued-1", "messages queued while disconnected arrive");
    assert_eq!(recv(&pull2), b"queued-2");
    send(&push, b"after");
    assert_eq!(recv(&pull2), b"after");
}

/// libzmq's test_rebind_ipc: a PUSH bound on an ipc path is closed and a
/// second PUSH binds the same path at once; the connected PULL reconnects to
/// it. The first listener closes in the I/O thread after the second bind
/// replaced the socket file, so it must not remove that file (libzmq removes
/// only `ipc://*` files).
#[test]
fn pull_reconnects_to_a_rebound_ipc_path() {
    let _g = guard();
    let ctx = Context::new();
    let ep = ipc_path_endpoint();
    let path = ep.strip_prefix("ipc://").unwrap().to_string();
    let first = sock(&ctx, SocketType::Push);
    first.bind(&ep).unwrap();
    let pull = sock(&ctx, SocketType::Pull);
    pull.connect(&ep).unwrap();
    send(&first, b"42");
    assert_eq!(recv(&pull), b"42");
    drop(first);
    let second = sock(&ctx, SocketType::Push);
    second.bind(&ep).unwrap();
    send(&second, b"43");
    assert_eq!(recv(&pull), b"43");
    // The same with an unbind, the first socket closing after the rebind.
    second.unbind(&ep).unwrap();
    let third = sock(&ctx, SocketType::Push);
    third.bind(&ep).unwrap();
    drop(second);
    send(&third, b"44");
    assert_eq!(recv(&pull), b"44");
    drop(third);
    // libzmq leaves a named path's file behind; the next bind replaces it.
    assert!(eventually(BOUND, || std::path::Path::new(&path).exists()));
    std::fs::remove_file(&path).unwrap();
}

/// An `ipc://*` listener's file and directory go with it, as in libzmq.
#[test]
fn wildcard_ipc_file_is_removed_on_close() {
    let _g = guard();
    let ctx = Context::new();
    let s = sock(&ctx, SocketType::Pull);
    s.bind("ipc://*").unwrap();
    let ep = s.last_endpoint().unwrap();
    let path = std::path::PathBuf::from(ep.strip_prefix("ipc://").unwrap());
    assert!(path.exists());
    drop(s);
    ctx.term();
    assert!(!path.exists() && !path.parent().unwrap().exists(), "{ep}");
}

#[test]
fn sub_resubscribes_after_pub_restart() {
    let _g = guard();
    let ctx = Context::new();
    let sub = sock(&ctx, SocketType::Sub);
    sub.set_option_int(opt::RECONNECT_IVL, 20).unwrap();
    sub.set_option_bytes(opt::SUBSCRIBE, b"t").unwrap();
    let pub1 = sock(&ctx, SocketType::Pub);
    let ep = bind_fresh(Transport::Tcp, &pub1);
    sub.connect(&ep).unwrap();
    sync_pub_sub(&pub1, &[&sub], b"t-sync");
    drop(pub1);
    while sub.recv(DONTWAIT).is_ok() {}
    let pub2 = sock(&ctx, SocketType::Pub);
    bind_retry(&pub2, &ep);
    // Only a resubscription makes this arrive; the filter must still be "t".
    sync_pub_sub(&pub2, &[&sub], b"t-again");
    pub2.send(Msg::from(&b"x-filtered"[..]), 0).unwrap();
    pub2.send(Msg::from(&b"t-end"[..]), 0).unwrap();
    assert_eq!(recv_skipping(&sub, b"t-again"), b"t-end");
}

#[test]
fn reconnect_options_accepted() {
    let _g = guard();
    let ctx = Context::new();
    let s = sock(&ctx, SocketType::Dealer);
    assert_eq!(s.get_option_int(opt::RECONNECT_IVL).unwrap(), 100);
    assert_eq!(s.get_option_int(opt::RECONNECT_IVL_MAX).unwrap(), 0);
    s.set_option_int(opt::RECONNECT_IVL, 250).unwrap();
    s.set_option_int(opt::RECONNECT_IVL_MAX, 5000).unwrap();
    assert_eq!(s.get_option_int(opt::RECONNECT_IVL).unwrap(), 250);
    assert_eq!(s.get_option_int(opt::RECONNECT_IVL_MAX).unwrap(), 5000);
    s.set_option_int(opt::RECONNECT_IVL, -1).unwrap(); // -1: no reconnection
    assert_eq!(s.get_option_int(opt::RECONNECT_IVL).unwrap(), -1);
    // A connection with backoff still works.
    s.set_option_int(opt::RECONNECT_IVL, 10).unwrap();
    let r = sock(&ctx, SocketType::Router);
    link(Transport::Tcp, &r, &s);
    send(&s, b"x");
    assert_eq!(recv_parts(&r)[1], b"x");
}

#[test]
fn connect_before_bind_tcp() {
    let _g = guard();
    let ctx = Context::new();
    let ep = format!("tcp://127.0.0.1:{}", free_tcp_port());
    let push = sock(&ctx, SocketType::Push);
    push.set_option_int(opt::RECONNECT_IVL, 20).unwrap();
    push.connect(&ep).unwrap();
    send(&push, b"early");
    std::thread::sleep(Duration::from_millis(100)); // a few failed connection attempts
    let pull = sock(&ctx, SocketType::Pull);
    pull.bind(&ep).unwrap();
    assert_eq!(recv(&pull), b"early");
}

#[test]
fn disconnect_and_unbind_stop_traffic() {
    let _g = guard();
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    let ep = bind_fresh(Transport::Tcp, &pull);
    let push = sock(&ctx, SocketType::Push);
    push.connect(&ep).unwrap();
    send(&push, b"1");
    assert_eq!(recv(&pull), b"1");
    push.disconnect(&ep).unwrap();
    // No peer any more: a non-blocking send has nowhere to go.
    assert!(eventually(BOUND, || push.send("x", DONTWAIT).is_err()));
    assert_errno(push.send("x", DONTWAIT), errno::EAGAIN);
    pull.unbind(&ep).unwrap();
    // The port is free again.
    let other = sock(&ctx, SocketType::Pull);
    bind_retry(&other, &ep);
}

#[test]
fn many_sockets_open_close() {
    let _g = guard();
    let ctx = Context::new();
    for i in 0..200 {
        let a = sock(&ctx, SocketType::Pair);
        let b = sock(&ctx, SocketType::Pair);
        let t = if i % 2 == 0 { Transport::InprocBindFirst } else { Transport::Tcp };
        link(t, &a, &b);
        send(&a, b"x");
        assert_eq!(recv(&b), b"x");
    }
    ctx.term();
}
