//! Context termination with sockets in every state at once: bound idle on
//! each transport, connecting to nothing, mid-handshake with a silent peer,
//! mid-multipart send, messages queued to a peer that reads nothing (LINGER),
//! unread inproc messages, a monitor, and threads blocked in recv, in send at
//! the HWM, and in poll. Blocked calls must fail with ETERM, and term must
//! return within the linger time. (The C ABI's zmq_ctx_term and the Python
//! package's Context.term() are driven the same way by tests/reliability/faults/.)

mod common;

use common::*;
use oxmq::{errno, opt, poll, Context, Error, PollItem, SocketType, POLLIN, SNDMORE};
use std::time::{Duration, Instant};

const LINGER_MS: i64 = 300;

#[test]
fn term_with_sockets_in_every_state_returns_within_linger() {
    let _g = guard();
    let ctx = Context::new();
    let mk = |kind| {
        let s = ctx.socket(kind).unwrap();
        s.set_option_int(opt::LINGER, LINGER_MS).unwrap();
        s
    };

    // Bound, idle, on each transport.
    let bound_tcp = mk(SocketType::Rep);
    bound_tcp.bind("tcp://127.0.0.1:*").unwrap();
    let bound_ipc = mk(SocketType::Router);
    bound_ipc.bind(&ipc_path_endpoint()).unwrap();
    let bound_inproc = mk(SocketType::Pull);
    bound_inproc.bind(&inproc_endpoint()).unwrap();

    // Connecting to an endpoint nobody listens on (reconnect timer running),
    // with a message waiting for a peer that never comes.
    let nowhere = mk(SocketType::Dealer);
    nowhere.connect(&format!("tcp://127.0.0.1:{}", free_tcp_port())).unwrap();
    nowhere.send(&b"queued"[..], oxmq::DONTWAIT).unwrap();

    // Mid-handshake: a raw peer that connected and says nothing.
    let handshaking = mk(SocketType::Pull);
    let hs_ep = bind_fresh(Transport::Tcp, &handshaking);
    let silent = std::net::TcpStream::connect(hs_ep.strip_prefix("tcp://").unwrap()).unwrap();

    // Mid-multipart: first frame sent with SNDMORE, the rest never.
    let partial = mk(SocketType::Push);
    let sink = mk(SocketType::Pull);
    let sink_ep = bind_fresh(Transport::Tcp, &sink);
    partial.connect(&sink_ep).unwrap();
    partial.send(&b"first"[..], SNDMORE).unwrap();

    // Messages queued to a peer that handshakes and then reads nothing.
    let stuck = mk(SocketType::Push);
    stuck.set_option_int(opt::SNDHWM, 10).unwrap();
    let stuck_ep = bind_fresh(Transport::Tcp, &stuck);
    let mut deaf = RawPeer::connect(&stuck_ep);
    deaf.handshake("PULL", None).unwrap();
    let big = vec![0u8; 256 * 1024];
    for _ in 0..10 {
        if stuck.send(&big[..], oxmq::DONTWAIT).is_err() {
            break;
        }
    }

    // Unread inproc messages, and a monitor.
    let inproc_a = mk(SocketType::Pair);
    let inproc_b = mk(SocketType::Pair);
    link(Transport::InprocBindFirst, &inproc_a, &inproc_b);
    for _ in 0..5 {
        inproc_b.send(&b"unread"[..], 0).unwrap();
    }
    bound_tcp.monitor(Some(&inproc_endpoint()), 0xFFFF).unwrap();

    // Threads blocked in recv, in send at the HWM, and in poll.
    let blocked_recv = mk(SocketType::Pull);
    blocked_recv.bind(&inproc_endpoint()).unwrap();
    let blocked_send = mk(SocketType::Push);
    blocked_send.set_option_int(opt::SNDHWM, 1).unwrap();
    let full_ep = inproc_endpoint();
    let full_peer = mk(SocketType::Pull);
    full_peer.set_option_int(opt::RCVHWM, 1).unwrap();
    full_peer.bind(&full_ep).unwrap();
    blocked_send.connect(&full_ep).unwrap();
    let blocked_poll = mk(SocketType::Sub);
    blocked_poll.connect(&format!("tcp://127.0.0.1:{}", free_tcp_port())).unwrap();

    let t_recv = std::thread::spawn(move || {
        let r = blocked_recv.recv(0).map(|_| ());
        assert!(matches!(r, Err(Error::Terminated)), "blocked recv: {r:?}");
    });
    let t_send = std::thread::spawn(move || loop {
        match blocked_send.send(&b"x"[..], 0) {
            Ok(()) => continue,
            Err(e) => {
                assert_eq!(e.errno(), errno::ETERM, "blocked send: {e:?}");
                return;
            }
        }
    });
    let t_poll = std::thread::spawn(move || {
        let mut items = [PollItem::from_socket(&blocked_poll, POLLIN)];
        let r = poll(&mut items, -1);
        assert!(matches!(r, Err(Error::Terminated)), "blocked poll: {r:?}");
    });
    std::thread::sleep(Duration::from_millis(200));

    // The owner closes what it holds (as a program's shutdown would), then
    // terminates; the blocked threads close theirs on ETERM.
    let start = Instant::now();
    for s in
        [bound_tcp, bound_ipc, bound_inproc, nowhere, handshaking, partial, sink, stuck, inproc_a, inproc_b, full_peer]
    {
        drop(s);
    }
    ctx.term();
    let took = start.elapsed();
    for t in [t_recv, t_send, t_poll] {
        t.join().expect("a blocked thread failed");
    }
    assert!(took < Duration::from_millis(LINGER_MS as u64 + 1500), "term took {took:?} with LINGER {LINGER_MS} ms");
    assert!(ctx.socket(SocketType::Pair).is_err(), "a terminated context makes no sockets");
    drop((silent, deaf));
}

/// LINGER -1 with nothing pending, and LINGER 0 with plenty pending: both
/// terminate promptly.
#[test]
fn term_prompt_with_linger_zero_or_nothing_pending() {
    let _g = guard();
    for linger in [0i64, -1] {
        let ctx = Context::new();
        let push = ctx.socket(SocketType::Push).unwrap();
        push.set_option_int(opt::LINGER, linger).unwrap();
        let ep = bind_fresh(Transport::Tcp, &push);
        let mut deaf = RawPeer::connect(&ep);
        deaf.handshake("PULL", None).unwrap();
        if linger == 0 {
            for _ in 0..100 {
                let _ = push.send(&vec![0u8; 100_000][..], oxmq::DONTWAIT);
            }
        }
        let start = Instant::now();
        drop(push);
        ctx.term();
        assert!(start.elapsed() < Duration::from_millis(1000), "LINGER {linger}: term took {:?}", start.elapsed());
    }
}
