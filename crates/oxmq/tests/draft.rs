//! The draft thread-safe socket types (CLIENT/SERVER, SCATTER/GATHER,
//! PEER/CHANNEL) over every transport, their libzmq errors, and threads
//! racing on one socket.

mod common;

use common::*;
use oxmq::{errno, opt, Context, Msg, SocketType, ThreadSafeSocket, DONTWAIT, SNDMORE};
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

const TRANSPORTS: [Transport; 5] = [
    Transport::Tcp,
    Transport::IpcPath,
    Transport::IpcAbstract,
    Transport::InprocBindFirst,
    Transport::InprocConnectFirst,
];

fn to(rid: u32, body: &[u8]) -> Msg {
    let mut m = Msg::from_slice(body);
    m.set_routing_id(rid);
    m
}

#[test]
fn client_server_every_transport() {
    let _g = guard();
    for t in TRANSPORTS {
        let ctx = Context::new();
        let server = sock(&ctx, SocketType::Server);
        let a = sock(&ctx, SocketType::Client);
        let ep = link(t, &server, &a);
        let b = sock(&ctx, SocketType::Client);
        connect_to(&ep, &b);
        a.send("from a", 0).unwrap();
        b.send("from b", 0).unwrap();
        let mut rids = Vec::new();
        for _ in 0..2 {
            let m = server.recv(0).unwrap();
            assert_ne!(m.routing_id(), 0, "{t:?}");
            rids.push((m.to_vec(), m.routing_id()));
        }
        rids.sort();
        assert_ne!(rids[0].1, rids[1].1, "{t:?}: one routing id per peer");
        server.send(to(rids[1].1, b"to b"), 0).unwrap();
        server.send(to(rids[0].1, b"to a"), 0).unwrap();
        assert_eq!(recv(&a), b"to a", "{t:?}");
        assert_eq!(recv(&b), b"to b", "{t:?}");
        // What a CLIENT receives carries no routing id.
        server.send(to(rids[0].1, b"again"), 0).unwrap();
        assert_eq!(a.recv(0).unwrap().routing_id(), 0);
    }
}

#[test]
fn server_errors_are_libzmqs() {
    let _g = guard();
    let ctx = Context::new();
    let server = sock(&ctx, SocketType::Server);
    let client = sock(&ctx, SocketType::Client);
    link(Transport::Tcp, &server, &client);
    // Unknown routing id, and none at all: EHOSTUNREACH.
    assert_errno(server.send(to(12345, b"x"), 0), errno::EHOSTUNREACH);
    assert_errno(server.send("x", 0), errno::EHOSTUNREACH);
    // Multipart: EINVAL on every draft type that sends.
    assert_errno(server.send(to(1, b"x"), SNDMORE), errno::EINVAL);
    assert_errno(client.send("x", SNDMORE), errno::EINVAL);
    for kind in [SocketType::Scatter, SocketType::Channel, SocketType::Peer] {
        assert_errno(sock(&ctx, kind).send("x", SNDMORE | DONTWAIT), errno::EINVAL);
    }
    // The refused frame did not start a message: a single frame still goes through.
    client.send("whole", 0).unwrap();
    assert_eq!(recv(&server), b"whole");
}

#[test]
fn thread_safe_option_and_no_fd() {
    let _g = guard();
    let ctx = Context::new();
    for kind in SocketType::DRAFT {
        let s = ctx.socket(kind).unwrap();
        assert_eq!(s.get_option_int(opt::THREAD_SAFE).unwrap(), 1, "{kind:?}");
        assert_errno(s.get_option_int(opt::FD), errno::EINVAL);
        assert_errno(s.fd(), errno::EINVAL);
    }
    for kind in SocketType::ALL {
        let s = ctx.socket(kind).unwrap();
        assert_eq!(s.get_option_int(opt::THREAD_SAFE).unwrap(), 0, "{kind:?}");
        assert!(s.into_thread_safe().is_err());
    }
}

#[test]
fn scatter_gather_every_transport() {
    let _g = guard();
    for t in TRANSPORTS {
        let ctx = Context::new();
        let gather = sock(&ctx, SocketType::Gather);
        let scatter = sock(&ctx, SocketType::Scatter);
        link(t, &gather, &scatter);
        for i in 0..10u8 {
            scatter.send(Msg::from_slice(&[i]), 0).unwrap();
        }
        for i in 0..10u8 {
            assert_eq!(recv(&gather), [i], "{t:?}");
        }
        assert_errno(gather.send("x", DONTWAIT), errno::ENOTSUP);
        assert_errno(scatter.recv(DONTWAIT), errno::ENOTSUP);
    }
}

#[test]
fn scatter_load_balances_between_gathers() {
    let _g = guard();
    let ctx = Context::new();
    let scatter = sock(&ctx, SocketType::Scatter);
    let g1 = sock(&ctx, SocketType::Gather);
    let g2 = sock(&ctx, SocketType::Gather);
    let e1 = inproc_endpoint();
    let e2 = inproc_endpoint();
    g1.bind(&e1).unwrap();
    g2.bind(&e2).unwrap();
    scatter.connect(&e1).unwrap();
    scatter.connect(&e2).unwrap();
    for i in 0..4u8 {
        scatter.send(Msg::from_slice(&[i]), 0).unwrap();
    }
    assert_eq!((recv(&g1), recv(&g1)), (vec![0], vec![2]));
    assert_eq!((recv(&g2), recv(&g2)), (vec![1], vec![3]));
}

#[test]
fn peer_to_peer_with_connect_peer() {
    let _g = guard();
    for t in TRANSPORTS {
        if t == Transport::InprocConnectFirst {
            continue; // `link` would connect with plain `connect`.
        }
        let ctx = Context::new();
        let a = sock(&ctx, SocketType::Peer);
        let b = sock(&ctx, SocketType::Peer);
        let ep = bind_fresh(t, &a);
        let rid = b.connect_peer(&ep).unwrap();
        assert_ne!(rid, 0);
        b.send(to(rid, b"hello a"), 0).unwrap();
        let m = a.recv(0).unwrap();
        assert_eq!(m.as_slice(), b"hello a", "{t:?}");
        a.send(to(m.routing_id(), b"hello b"), 0).unwrap();
        let back = b.recv(0).unwrap();
        assert_eq!((back.as_slice(), back.routing_id()), (&b"hello b"[..], rid), "{t:?}");
    }
    let ctx = Context::new();
    assert_errno(sock(&ctx, SocketType::Server).connect_peer("tcp://127.0.0.1:1"), errno::ENOTSUP);
    let p = sock(&ctx, SocketType::Peer);
    p.set_option_int(opt::IMMEDIATE, 1).unwrap();
    assert_errno(p.connect_peer("tcp://127.0.0.1:1"), errno::EFAULT);
}

#[test]
fn channel_every_transport() {
    let _g = guard();
    for t in TRANSPORTS {
        let ctx = Context::new();
        let a = sock(&ctx, SocketType::Channel);
        let b = sock(&ctx, SocketType::Channel);
        link(t, &a, &b);
        b.send("ping", 0).unwrap();
        assert_eq!(recv(&a), b"ping", "{t:?}");
        a.send("pong", 0).unwrap();
        assert_eq!(recv(&b), b"pong", "{t:?}");
    }
}

#[test]
fn incompatible_types_exchange_nothing() {
    let _g = guard();
    let ctx = Context::new();
    for (x, y) in [
        (SocketType::Server, SocketType::Dealer),
        (SocketType::Gather, SocketType::Push),
        (SocketType::Channel, SocketType::Pair),
        (SocketType::Server, SocketType::Scatter),
    ] {
        let bound = sock(&ctx, x);
        let other = sock(&ctx, y);
        link(Transport::Tcp, &bound, &other);
        let _ = other.send("x", DONTWAIT);
        assert_nothing_within(&bound, 200);
    }
}

/// Several threads receive from one SERVER and answer through it while
/// several CLIENTs send: every request is received exactly once and answered.
#[test]
fn threads_racing_on_one_server() {
    let _g = guard();
    const CLIENTS: usize = 4;
    const PER_CLIENT: usize = 500;
    const WORKERS: usize = 4;
    let ctx = Context::new();
    let server = Arc::new(sock(&ctx, SocketType::Server).into_thread_safe().ok().unwrap());
    server.set_option_int(opt::RCVTIMEO, -1).unwrap();
    server.bind("tcp://127.0.0.1:*").unwrap();
    let ep = server.last_endpoint().unwrap();
    let seen = Arc::new(std::sync::Mutex::new(HashSet::new()));
    let handled = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..WORKERS)
        .map(|_| {
            let (server, seen, handled) = (server.clone(), seen.clone(), handled.clone());
            std::thread::spawn(move || loop {
                let m = match server.recv(0) {
                    Ok(m) => m,
                    Err(e) => panic!("worker recv: {e:?}"),
                };
                if m.as_slice() == b"stop" {
                    return;
                }
                assert!(seen.lock().unwrap().insert(m.to_vec()), "a message was received twice");
                // Counted before the answer, which may reach its client at once.
                handled.fetch_add(1, Ordering::Relaxed);
                server.send(to(m.routing_id(), m.as_slice()), 0).unwrap();
            })
        })
        .collect();
    let clients: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let ctx = ctx.clone();
            let ep = ep.clone();
            std::thread::spawn(move || {
                let client = sock(&ctx, SocketType::Client);
                client.connect(&ep).unwrap();
                for i in 0..PER_CLIENT {
                    client.send(format!("{c}-{i}"), 0).unwrap();
                }
                let mut got = HashSet::new();
                for _ in 0..PER_CLIENT {
                    got.insert(recv(&client));
                }
                assert_eq!(got.len(), PER_CLIENT, "client {c}: every request answered once");
                client
            })
        })
        .collect();
    let clients: Vec<_> = clients.into_iter().map(|t| t.join().unwrap()).collect();
    assert_eq!(handled.load(Ordering::Relaxed), CLIENTS * PER_CLIENT);
    for _ in 0..WORKERS {
        clients[0].send("stop", 0).unwrap();
    }
    for w in workers {
        w.join().unwrap();
    }
    assert_eq!(seen.lock().unwrap().len(), CLIENTS * PER_CLIENT);
}

/// Several threads send on one CLIENT and several receive on it at once.
#[test]
fn threads_racing_on_one_client() {
    let _g = guard();
    const THREADS: usize = 4;
    const EACH: usize = 500;
    let ctx = Context::new();
    let server = sock(&ctx, SocketType::Server);
    let ep = bind_fresh(Transport::InprocBindFirst, &server);
    let client: Arc<ThreadSafeSocket> = Arc::new(sock(&ctx, SocketType::Client).into_thread_safe().ok().unwrap());
    client.connect(&ep).unwrap();
    let senders: Vec<_> = (0..THREADS)
        .map(|t| {
            let client = client.clone();
            std::thread::spawn(move || {
                for i in 0..EACH {
                    client.send(format!("{t}-{i}"), 0).unwrap();
                }
            })
        })
        .collect();
    let receivers: Vec<_> = (0..THREADS)
        .map(|_| {
            let client = client.clone();
            std::thread::spawn(move || (0..EACH).map(|_| client.recv(0).unwrap().to_vec()).collect::<Vec<_>>())
        })
        .collect();
    let mut got = HashSet::new();
    for _ in 0..THREADS * EACH {
        let m = server.recv(0).unwrap();
        assert!(got.insert(m.to_vec()));
        server.send(to(m.routing_id(), m.as_slice()), 0).unwrap();
    }
    for s in senders {
        s.join().unwrap();
    }
    let mut echoed = HashSet::new();
    for r in receivers {
        for m in r.join().unwrap() {
            assert!(echoed.insert(m), "an echo was received twice");
        }
    }
    assert_eq!(echoed, got);
    assert_errno(client.recv(DONTWAIT), errno::EAGAIN);
}

/// A blocked receiver is woken by a message even while another thread keeps
/// polling and sending on the same socket (no wake-up is lost to them).
/// The receiver waits without a timeout: a lost wake-up used to end only at
/// RCVTIMEO (each `recv` then returned late, but returned), so a hang here
/// (the watchdog's failure) is what a lost one looks like. The poller used
/// to drain the eventfd signal re-armed for the sleeping receiver.
#[test]
fn blocked_receiver_is_not_starved_by_a_poller() {
    let _g = guard();
    let ctx = Context::new();
    let server = sock(&ctx, SocketType::Server);
    let ep = bind_fresh(Transport::Tcp, &server);
    let client = sock(&ctx, SocketType::Client);
    client.set_option_int(opt::RCVTIMEO, -1).unwrap();
    let client = Arc::new(client.into_thread_safe().ok().unwrap());
    client.connect(&ep).unwrap();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let poller = {
        let (client, stop) = (client.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let mut items = [oxmq::PollItem::from_socket(&client, oxmq::POLLOUT)];
                let _ = oxmq::poll(&mut items, 1);
            }
        })
    };
    client.send("hi", 0).unwrap();
    let m = server.recv(0).unwrap();
    for i in 0..50u8 {
        server.send(to(m.routing_id(), &[i]), 0).unwrap();
        assert_eq!(client.recv(0).unwrap().as_slice(), [i]);
    }
    stop.store(true, Ordering::Relaxed);
    poller.join().unwrap();
}

/// Threads blocked on one thread-safe socket (one on its eventfd, the others
/// behind it) all return ETERM when the context shuts down.
#[test]
fn shutdown_wakes_every_blocked_thread() {
    let _g = guard();
    let ctx = Context::new();
    let server = Arc::new(sock(&ctx, SocketType::Server).into_thread_safe().ok().unwrap());
    server.set_option_int(opt::RCVTIMEO, -1).unwrap();
    server.bind("inproc://draft-shutdown").unwrap();
    let blocked: Vec<_> = (0..3)
        .map(|_| {
            let server = server.clone();
            std::thread::spawn(move || server.recv(0).map(|_| ()))
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(100));
    ctx.shutdown();
    for t in blocked {
        assert_errno(t.join().unwrap(), errno::ETERM);
    }
}
