//! Socket-pattern behaviour over every transport (tcp, ipc path, ipc abstract,
//! inproc bind-first and connect-first), plus pattern options.

mod common;

use common::*;
use oxmq::{errno, opt, Context, Msg, SocketType, DONTWAIT, SNDMORE};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

// ---------------------------------------------------------------------------
// Cases, each parametrised by transport

fn pair(t: Transport) {
    let ctx = Context::new();
    let a = sock(&ctx, SocketType::Pair);
    let b = sock(&ctx, SocketType::Pair);
    link(t, &a, &b);
    send(&b, b"from b");
    assert_eq!(recv(&a), b"from b");
    send(&a, b"from a");
    assert_eq!(recv(&b), b"from a");
    for i in 0..100u32 {
        send(&a, &i.to_be_bytes());
    }
    for i in 0..100u32 {
        assert_eq!(recv(&b), i.to_be_bytes(), "PAIR preserves order");
    }
}

fn pub_sub_prefix_filter(t: Transport) {
    let ctx = Context::new();
    let publisher = sock(&ctx, SocketType::Pub);
    let sub = sock(&ctx, SocketType::Sub);
    sub.set_option_bytes(opt::SUBSCRIBE, b"A").unwrap();
    link(t, &publisher, &sub);
    sync_pub_sub(&publisher, &[&sub], b"Async");
    for m in [&b"B1"[..], b"Amatch", b"", b"xA", b"AB", b"Zend", b"A-end"] {
        publisher.send(Msg::from(m), 0).unwrap();
    }
    assert_eq!(recv_skipping(&sub, b"Async"), b"Amatch");
    assert_eq!(recv(&sub), b"AB");
    assert_eq!(recv(&sub), b"A-end");
    assert_nothing(&sub);
}

fn pub_sub_empty_subscription_and_multi(t: Transport) {
    let ctx = Context::new();
    let publisher = sock(&ctx, SocketType::Pub);
    let all = sock(&ctx, SocketType::Sub);
    let only_b = sock(&ctx, SocketType::Sub);
    let none = sock(&ctx, SocketType::Sub);
    all.set_option_bytes(opt::SUBSCRIBE, b"").unwrap();
    only_b.set_option_bytes(opt::SUBSCRIBE, b"B").unwrap();
    // `none` never subscribes.
    let ep = link(t, &publisher, &all);
    connect_to(&ep, &only_b);
    connect_to(&ep, &none);
    sync_pub_sub(&publisher, &[&all, &only_b], b"Bsync");
    for m in [&b"A1"[..], b"B1", b"", b"B2"] {
        publisher.send(Msg::from(m), 0).unwrap();
    }
    assert_eq!(recv_skipping(&all, b"Bsync"), b"A1");
    assert_eq!(recv(&all), b"B1");
    assert_eq!(recv(&all), b"");
    assert_eq!(recv(&all), b"B2");
    assert_eq!(recv_skipping(&only_b, b"Bsync"), b"B1");
    assert_eq!(recv(&only_b), b"B2");
    assert_nothing(&none);
    assert_nothing(&only_b);
}

/// A subscription that has reached the PUB's side (its mailbox has been
/// signalled) before a send is applied to that send, even right after an
/// earlier send (libzmq throttles command processing on send; pyzmq's
/// test_log.py::test_blank_root_topic relies on the subscription winning).
fn pub_applies_subscription_pending_at_send(t: Transport) {
    let ctx = Context::new();
    let publisher = sock(&ctx, SocketType::Pub);
    let sub = sock(&ctx, SocketType::Sub);
    sub.set_option_bytes(opt::SUBSCRIBE, b"A").unwrap();
    link(t, &publisher, &sub);
    sync_pub_sub(&publisher, &[&sub], b"Async");
    publisher.send(Msg::from(&b"A1"[..]), 0).unwrap();
    // EVENTS processes the PUB's commands, so its FD is quiet until the new
    // subscription's pipe activation arrives.
    publisher.get_option_int(opt::EVENTS).unwrap();
    sub.set_option_bytes(opt::SUBSCRIBE, b"").unwrap();
    let fd = publisher.get_option_int(opt::FD).unwrap() as std::os::fd::RawFd;
    let mut items = [oxmq::PollItem::from_fd(fd, oxmq::POLLIN)];
    assert_eq!(oxmq::poll(&mut items, BOUND.as_millis() as i64).unwrap(), 1, "the subscription never reached the PUB");
    publisher.send(Msg::from(&b"B1"[..]), 0).unwrap();
    assert_eq!(recv_skipping(&sub, b"Async"), b"A1");
    assert_eq!(recv(&sub), b"B1", "a subscription pending at the PUB applies to the next send");
    assert_nothing(&sub);
}

fn pub_sub_unsubscribe(t: Transport) {
    let ctx = Context::new();
    let publisher = sock(&ctx, SocketType::Pub);
    let sub = sock(&ctx, SocketType::Sub);
    sub.set_option_bytes(opt::SUBSCRIBE, b"A").unwrap();
    sub.set_option_bytes(opt::SUBSCRIBE, b"B").unwrap();
    link(t, &publisher, &sub);
    sync_pub_sub(&publisher, &[&sub], b"Async");
    sub.set_option_bytes(opt::UNSUBSCRIBE, b"A").unwrap();
    // The cancel travels on the same connection; keep publishing "A" until it stops
    // arriving, marked by a "B" that follows it.
    let deadline = std::time::Instant::now() + BOUND;
    let mut round = 0u32;
    loop {
        assert!(std::time::Instant::now() < deadline, "UNSUBSCRIBE never took effect");
        round += 1;
        publisher.send(Msg::from(&b"Aafter"[..]), 0).unwrap();
        let marker = format!("Bmark{round}");
        publisher.send(Msg::from(marker.as_bytes()), 0).unwrap();
        let mut saw_a = false;
        loop {
            let m = recv(&sub);
            if m == marker.as_bytes() {
                break;
            }
            if m.starts_with(b"A") {
                saw_a = true;
            }
        }
        if !saw_a {
            break;
        }
    }
    // Once cancelled, "A" stays cancelled.
    publisher.send(Msg::from(&b"Alate"[..]), 0).unwrap();
    publisher.send(Msg::from(&b"Bend"[..]), 0).unwrap();
    assert_eq!(recv(&sub), b"Bend");
}

fn xpub_xsub(t: Transport) {
    let ctx = Context::new();
    let xpub = sock(&ctx, SocketType::XPub);
    let xsub = sock(&ctx, SocketType::XSub);
    link(t, &xpub, &xsub);
    send(&xsub, b"\x01topic");
    assert_eq!(recv(&xpub), b"\x01topic", "XPUB sees the subscription");
    send(&xpub, b"topic-1");
    send(&xpub, b"other");
    send(&xpub, b"topic-2");
    assert_eq!(recv(&xsub), b"topic-1");
    assert_eq!(recv(&xsub), b"topic-2");
    assert_nothing(&xsub);
    send(&xsub, b"\x00topic");
    assert_eq!(recv(&xpub), b"\x00topic", "XPUB sees the cancel");
}

fn xpub_sub_visible_and_verbose(t: Transport) {
    for verbose in [false, true] {
        let ctx = Context::new();
        let xpub = sock(&ctx, SocketType::XPub);
        if verbose {
            xpub.set_option_int(opt::XPUB_VERBOSE, 1).unwrap();
        }
        let s1 = sock(&ctx, SocketType::Sub);
        let s2 = sock(&ctx, SocketType::Sub);
        let ep = link(t, &xpub, &s1);
        s1.set_option_bytes(opt::SUBSCRIBE, b"A").unwrap();
        assert_eq!(recv(&xpub), b"\x01A");
        connect_to(&ep, &s2);
        s2.set_option_bytes(opt::SUBSCRIBE, b"A").unwrap();
        s2.set_option_bytes(opt::SUBSCRIBE, b"B").unwrap();
        if verbose {
            assert_eq!(recv(&xpub), b"\x01A", "XPUB_VERBOSE passes duplicate subscriptions");
        }
        assert_eq!(recv(&xpub), b"\x01B", "verbose={verbose}");
        // Cancel of A by s1 alone is not visible (s2 still wants A) ...
        s1.set_option_bytes(opt::UNSUBSCRIBE, b"A").unwrap();
        s1.set_option_bytes(opt::SUBSCRIBE, b"C").unwrap();
        assert_eq!(recv(&xpub), b"\x01C");
        // ... the last one is.
        s2.set_option_bytes(opt::UNSUBSCRIBE, b"A").unwrap();
        assert_eq!(recv(&xpub), b"\x00A");
    }
}

fn push_pull_load_balance(t: Transport) {
    let ctx = Context::new();
    let push = sock(&ctx, SocketType::Push);
    let p1 = sock(&ctx, SocketType::Pull);
    let p2 = sock(&ctx, SocketType::Pull);
    // PUSH connects: libzmq creates the pipe at connect time, so both pullers
    // take part in round-robin from the first message.
    link(t, &p1, &push);
    link(t, &p2, &push);
    for i in 0..10u8 {
        push.send(Msg::from(&[i][..]), 0).unwrap();
    }
    let a: Vec<u8> = (0..5).map(|_| recv(&p1)[0]).collect();
    let b: Vec<u8> = (0..5).map(|_| recv(&p2)[0]).collect();
    let mut all: Vec<u8> = a.iter().chain(b.iter()).copied().collect();
    all.sort();
    assert_eq!(all, (0..10).collect::<Vec<_>>());
    assert!(a.windows(2).all(|w| w[1] == w[0] + 2), "round-robin: {a:?} {b:?}");
    assert!(b.windows(2).all(|w| w[1] == w[0] + 2), "round-robin: {a:?} {b:?}");
    assert_nothing(&p1);
    assert_nothing(&p2);
}

fn push_pull_fair_queue(t: Transport) {
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    let s1 = sock(&ctx, SocketType::Push);
    let s2 = sock(&ctx, SocketType::Push);
    let ep = link(t, &pull, &s1);
    connect_to(&ep, &s2);
    // Make sure both connections are attached.
    send(&s1, b"hello1");
    send(&s2, b"hello2");
    let mut hellos = vec![recv(&pull), recv(&pull)];
    hellos.sort();
    assert_eq!(hellos, vec![b"hello1".to_vec(), b"hello2".to_vec()]);
    const N: u8 = 20;
    for i in 0..N {
        s1.send(Msg::from(&[1, i][..]), 0).unwrap();
        s2.send(Msg::from(&[2, i][..]), 0).unwrap();
    }
    let got: Vec<Vec<u8>> = (0..2 * N).map(|_| recv(&pull)).collect();
    for who in [1u8, 2] {
        let seq: Vec<u8> = got.iter().filter(|m| m[0] == who).map(|m| m[1]).collect();
        assert_eq!(seq, (0..N).collect::<Vec<_>>(), "per-pusher order from pusher {who}");
    }
    if t.is_inproc() {
        // Everything was queued before the first receive: strict alternation.
        for pair in got.chunks(2) {
            assert_ne!(pair[0][0], pair[1][0], "fair-queueing alternates: {got:?}");
        }
    }
}

fn req_rep(t: Transport) {
    let ctx = Context::new();
    let rep = sock(&ctx, SocketType::Rep);
    let req = sock(&ctx, SocketType::Req);
    link(t, &rep, &req);
    for i in 0..5u8 {
        send(&req, &[b'q', i]);
        assert_eq!(recv_parts(&rep), vec![vec![b'q', i]], "REP hides the envelope");
        send(&rep, &[b'r', i]);
        assert_eq!(recv_parts(&req), vec![vec![b'r', i]]);
    }
    // Multipart request and reply.
    send_parts(&req, &[b"a", b"", b"c"]);
    assert_eq!(recv_parts(&rep), vec![b"a".to_vec(), vec![], b"c".to_vec()]);
    send_parts(&rep, &[b"x", b"y"]);
    assert_eq!(recv_parts(&req), vec![b"x".to_vec(), b"y".to_vec()]);
}

fn req_rep_multiple_reps_round_robin(t: Transport) {
    let ctx = Context::new();
    let req = sock(&ctx, SocketType::Req);
    let r1 = sock(&ctx, SocketType::Rep);
    let r2 = sock(&ctx, SocketType::Rep);
    link(t, &r1, &req);
    link(t, &r2, &req);
    let mut served = [0; 2];
    for i in 0..4u8 {
        send(&req, &[i]);
        // Exactly one REP gets it.
        let mut items =
            [oxmq::PollItem::from_socket(&r1, oxmq::POLLIN), oxmq::PollItem::from_socket(&r2, oxmq::POLLIN)];
        assert_eq!(oxmq::poll(&mut items, TIMEOUT_MS).unwrap(), 1);
        let which = if items[0].is_readable() { 0 } else { 1 };
        let r = if which == 0 { &r1 } else { &r2 };
        assert_eq!(recv(r), vec![i]);
        send(r, &[i, which as u8]);
        assert_eq!(recv(&req), vec![i, which as u8]);
        served[which] += 1;
    }
    assert_eq!(served, [2, 2], "REQ round-robins requests");
}

fn dealer_router(t: Transport) {
    let ctx = Context::new();
    let router = sock(&ctx, SocketType::Router);
    let named = sock(&ctx, SocketType::Dealer);
    let anon = sock(&ctx, SocketType::Dealer);
    named.set_option_bytes(opt::ROUTING_ID, b"dealer-1").unwrap();
    let ep = link(t, &router, &named);
    connect_to(&ep, &anon);
    send_parts(&named, &[b"hello", b"world"]);
    assert_eq!(recv_parts(&router), vec![b"dealer-1".to_vec(), b"hello".to_vec(), b"world".to_vec()]);
    send(&anon, b"anon");
    let parts = recv_parts(&router);
    assert_eq!(parts.len(), 2);
    let gen_id = parts[0].clone();
    assert_eq!(gen_id.len(), 5, "generated routing id is 5 bytes: {gen_id:?}");
    assert_eq!(gen_id[0], 0, "generated routing id starts with 0x00");
    assert_eq!(parts[1], b"anon");
    send_parts(&router, &[&gen_id, b"to-anon"]);
    send_parts(&router, &[b"dealer-1", b"to-named", b"2"]);
    assert_eq!(recv_parts(&anon), vec![b"to-anon".to_vec()]);
    assert_eq!(recv_parts(&named), vec![b"to-named".to_vec(), b"2".to_vec()]);
    // Unroutable without ROUTER_MANDATORY: silently dropped.
    send_parts(&router, &[b"nobody", b"lost"]);
    assert_nothing(&named);
    assert_nothing(&anon);
}

fn dealer_rep(t: Transport) {
    let ctx = Context::new();
    let rep = sock(&ctx, SocketType::Rep);
    let dealer = sock(&ctx, SocketType::Dealer);
    link(t, &rep, &dealer);
    send_parts(&dealer, &[b"", b"request"]);
    assert_eq!(recv_parts(&rep), vec![b"request".to_vec()]);
    send(&rep, b"reply");
    assert_eq!(recv_parts(&dealer), vec![vec![], b"reply".to_vec()]);
    // Envelope with extra hops is preserved.
    send_parts(&dealer, &[b"hop1", b"hop2", b"", b"r2"]);
    assert_eq!(recv_parts(&rep), vec![b"r2".to_vec()]);
    send(&rep, b"reply2");
    assert_eq!(recv_parts(&dealer), vec![b"hop1".to_vec(), b"hop2".to_vec(), vec![], b"reply2".to_vec()]);
}

fn req_router(t: Transport) {
    let ctx = Context::new();
    let router = sock(&ctx, SocketType::Router);
    let req = sock(&ctx, SocketType::Req);
    req.set_option_bytes(opt::ROUTING_ID, b"the-req").unwrap();
    link(t, &router, &req);
    send(&req, b"question");
    assert_eq!(recv_parts(&router), vec![b"the-req".to_vec(), vec![], b"question".to_vec()]);
    send_parts(&router, &[b"the-req", b"", b"answer"]);
    assert_eq!(recv_parts(&req), vec![b"answer".to_vec()]);
}

fn router_router(t: Transport) {
    let ctx = Context::new();
    let server = sock(&ctx, SocketType::Router);
    let client = sock(&ctx, SocketType::Router);
    server.set_option_bytes(opt::ROUTING_ID, b"server").unwrap();
    client.set_option_bytes(opt::ROUTING_ID, b"client").unwrap();
    client.set_option_int(opt::ROUTER_MANDATORY, 1).unwrap();
    link(t, &server, &client);
    // The client learns the server's id only after the handshake.
    let ok = eventually(BOUND, || match client.send_multipart([&b"server"[..], b"ping"], DONTWAIT) {
        Ok(()) => true,
        Err(e) if e.errno() == errno::EHOSTUNREACH || e.errno() == errno::EAGAIN => false,
        Err(e) => panic!("unexpected {e:?}"),
    });
    assert!(ok, "ROUTER never learned its peer's routing id");
    assert_eq!(recv_parts(&server), vec![b"client".to_vec(), b"ping".to_vec()]);
    send_parts(&server, &[b"client", b"pong"]);
    assert_eq!(recv_parts(&client), vec![b"server".to_vec(), b"pong".to_vec()]);
}

fn multipart_atomic(t: Transport) {
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    let push = sock(&ctx, SocketType::Push);
    link(t, &pull, &push);
    let big = vec![0xABu8; 300];
    for round in 0..3u8 {
        push.send(Msg::from(&[round][..]), SNDMORE).unwrap();
        push.send(Msg::from(&b""[..]), SNDMORE).unwrap();
        push.send(Msg::from(&big[..]), 0).unwrap();
    }
    for round in 0..3u8 {
        let m1 = pull.recv(0).unwrap();
        assert_eq!(m1.as_slice(), &[round]);
        assert!(m1.more() && pull.rcvmore());
        assert_eq!(pull.get_option_int(opt::RCVMORE).unwrap(), 1);
        let m2 = pull.recv(0).unwrap();
        assert!(m2.is_empty() && m2.more());
        let m3 = pull.recv(0).unwrap();
        assert_eq!(m3.as_slice(), &big[..]);
        assert!(!m3.more() && !pull.rcvmore());
        assert_eq!(pull.get_option_int(opt::RCVMORE).unwrap(), 0);
    }
    // A partly sent message is not visible until its last frame is sent.
    push.send(Msg::from(&b"part1"[..]), SNDMORE).unwrap();
    push.send(Msg::from(&b"part2"[..]), SNDMORE).unwrap();
    assert_nothing_within(&pull, 100);
    push.send(Msg::from(&b"part3"[..]), 0).unwrap();
    assert_eq!(recv_parts(&pull), vec![b"part1".to_vec(), b"part2".to_vec(), b"part3".to_vec()]);
}

fn large_frames(t: Transport) {
    let ctx = Context::new();
    let a = sock(&ctx, SocketType::Pair);
    let b = sock(&ctx, SocketType::Pair);
    link(t, &a, &b);
    let mib: Vec<u8> = (0..(1 << 20)).map(|i: u32| (i.wrapping_mul(2654435761) >> 24) as u8).collect();
    let mib2: Vec<u8> = mib.iter().rev().copied().collect();
    a.send_multipart([Msg::from(&mib[..]), Msg::from(&b""[..]), Msg::from(mib2.clone())], 0).unwrap();
    let parts = b.recv_multipart(0).unwrap();
    assert_eq!(parts.len(), 3);
    assert!(parts[0].as_slice() == &mib[..], "1 MiB frame intact");
    assert!(parts[1].is_empty());
    assert!(parts[2].as_slice() == &mib2[..], "second 1 MiB frame intact");
    // And back.
    b.send(Msg::from(mib.clone()), 0).unwrap();
    assert!(a.recv(0).unwrap().as_slice() == &mib[..]);
}

fn from_owner_dropped(t: Transport) {
    struct Tracked(Vec<u8>, Arc<AtomicBool>);
    impl AsRef<[u8]> for Tracked {
        fn as_ref(&self) -> &[u8] {
            &self.0
        }
    }
    impl Drop for Tracked {
        fn drop(&mut self) {
            self.1.store(true, Ordering::SeqCst);
        }
    }
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    let push = sock(&ctx, SocketType::Push);
    link(t, &pull, &push);
    let dropped = Arc::new(AtomicBool::new(false));
    let payload = vec![7u8; 4096];
    push.send(Msg::from_owner(Tracked(payload.clone(), dropped.clone())), 0).unwrap();
    let m = pull.recv(0).unwrap();
    assert_eq!(m.as_slice(), &payload[..]);
    drop(m);
    assert!(eventually(BOUND, || dropped.load(Ordering::SeqCst)), "from_owner's owner was never dropped");
}

macro_rules! transport_suite {
    ($($modname:ident => $t:expr),* $(,)?) => {$(
        mod $modname {
            use super::*;
            const T: Transport = $t;
            #[test] fn pair() { let _g = guard(); super::pair(T) }
            #[test] fn pub_sub_prefix_filter() { let _g = guard(); super::pub_sub_prefix_filter(T) }
            #[test] fn pub_sub_empty_subscription_and_multi() { let _g = guard(); super::pub_sub_empty_subscription_and_multi(T) }
            #[test] fn pub_sub_unsubscribe() { let _g = guard(); super::pub_sub_unsubscribe(T) }
            #[test] fn pub_applies_subscription_pending_at_send() { let _g = guard(); super::pub_applies_subscription_pending_at_send(T) }
            #[test] fn xpub_xsub() { let _g = guard(); super::xpub_xsub(T) }
            #[test] fn xpub_sub_visible_and_verbose() { let _g = guard(); super::xpub_sub_visible_and_verbose(T) }
            #[test] fn push_pull_load_balance() { let _g = guard(); super::push_pull_load_balance(T) }
            #[test] fn push_pull_fair_queue() { let _g = guard(); super::push_pull_fair_queue(T) }
            #[test] fn req_rep() { let _g = guard(); super::req_rep(T) }
            #[test] fn req_rep_multiple_reps_round_robin() { let _g = guard(); super::req_rep_multiple_reps_round_robin(T) }
            #[test] fn dealer_router() { let _g = guard(); super::dealer_router(T) }
            #[test] fn dealer_rep() { let _g = guard(); super::dealer_rep(T) }
            #[test] fn req_router() { let _g = guard(); super::req_router(T) }
            #[test] fn router_router() { let _g = guard(); super::router_router(T) }
            #[test] fn multipart_atomic() { let _g = guard(); super::multipart_atomic(T) }
            #[test] fn large_frames() { let _g = guard(); super::large_frames(T) }
            #[test] fn from_owner_dropped() { let _g = guard(); super::from_owner_dropped(T) }
        }
    )*};
}

transport_suite! {
    tcp => Transport::Tcp,
    ipc_path => Transport::IpcPath,
    ipc_abstract => Transport::IpcAbstract,
    inproc_bind_first => Transport::InprocBindFirst,
    inproc_connect_first => Transport::InprocConnectFirst,
}

// ---------------------------------------------------------------------------
// Pattern state machines and options (one transport is enough)

#[test]
fn req_efsm() {
    let _g = guard();
    let ctx = Context::new();
    let rep = sock(&ctx, SocketType::Rep);
    let req = sock(&ctx, SocketType::Req);
    link(Transport::InprocBindFirst, &rep, &req);
    // REQ: receive before send.
    assert_errno(req.recv(DONTWAIT), errno::EFSM);
    // REP: send before receive.
    assert_errno(rep.send("x", DONTWAIT), errno::EFSM);
    send(&req, b"one");
    // REQ: send twice.
    assert_errno(req.send("two", DONTWAIT), errno::EFSM);
    assert_eq!(recv(&rep), b"one");
    // REP: receive twice.
    assert_errno(rep.recv(DONTWAIT), errno::EFSM);
    send(&rep, b"reply");
    // REP: send twice.
    assert_errno(rep.send("again", DONTWAIT), errno::EFSM);
    assert_eq!(recv(&req), b"reply");
    // REQ: receive twice.
    assert_errno(req.recv(DONTWAIT), errno::EFSM);
    // The cycle continues normally.
    send(&req, b"next");
    assert_eq!(recv(&rep), b"next");
}

#[test]
fn send_or_keep_hands_back_the_message_on_every_failure() {
    let _g = guard();
    let ctx = Context::new();
    let body = bytes::Bytes::from(vec![b'k'; 4096]);
    let same_body = |m: &Msg| m.as_slice().as_ptr() == body.as_ptr() && m.len() == body.len();
    // EAGAIN: no peer yet.
    let lonely = sock(&ctx, SocketType::Push);
    let (m, e) = lonely.send_or_keep(Msg::from(body.clone()), DONTWAIT).unwrap_err();
    assert_eq!(e.errno(), errno::EAGAIN);
    assert!(same_body(&m), "the very same body comes back, not a copy");
    // EFSM: REQ sends twice.
    let rep = sock(&ctx, SocketType::Rep);
    let req = sock(&ctx, SocketType::Req);
    link(Transport::InprocBindFirst, &rep, &req);
    req.send_or_keep(m, 0).unwrap();
    let (m, e) = req.send_or_keep(Msg::from(body.clone()), DONTWAIT).unwrap_err();
    assert_eq!(e.errno(), errno::EFSM);
    assert!(same_body(&m));
    assert!(same_body(&rep.recv(0).unwrap()), "the sent body arrives by reference on inproc");
    // A thread-safe type takes its own path.
    let client = sock(&ctx, SocketType::Client);
    let (m, e) = client.send_or_keep(m, DONTWAIT).unwrap_err();
    assert_eq!(e.errno(), errno::EAGAIN);
    assert!(same_body(&m));
    // ETERM: a blocking send when the context shuts down.
    ctx.shutdown();
    let (m, e) = lonely.send_or_keep(m, 0).unwrap_err();
    assert_eq!(e.errno(), errno::ETERM);
    assert!(same_body(&m));
}

#[test]
fn send_from_keeps_the_frame_until_a_try_sends_it() {
    let _g = guard();
    let ctx = Context::new();
    let push = sock(&ctx, SocketType::Push);
    let mut pending = Some(Msg::from(&b"kept"[..]));
    assert_eq!(push.send_from(&mut pending, DONTWAIT).unwrap_err().errno(), errno::EAGAIN);
    assert_eq!(pending.as_ref().map(Msg::as_slice), Some(&b"kept"[..]), "a failed try leaves it");
    let pull = sock(&ctx, SocketType::Pull);
    link(Transport::InprocBindFirst, &pull, &push);
    push.send_from(&mut pending, 0).unwrap();
    assert!(pending.is_none(), "sent: taken");
    push.send_from(&mut pending, 0).unwrap(); // nothing left to send
    assert_eq!(recv(&pull), b"kept");
    assert_nothing_within(&pull, 50);
}

#[test]
fn req_relaxed_and_correlate() {
    let _g = guard();
    let ctx = Context::new();
    let router = sock(&ctx, SocketType::Router);
    let req = sock(&ctx, SocketType::Req);
    req.set_option_int(opt::REQ_RELAXED, 1).unwrap();
    req.set_option_int(opt::REQ_CORRELATE, 1).unwrap();
    req.set_option_bytes(opt::ROUTING_ID, b"R").unwrap();
    link(Transport::Tcp, &router, &req);
    send(&req, b"A");
    let a = recv_parts(&router);
    assert_eq!(a.len(), 4, "CORRELATE adds a request id: {a:?}");
    assert_eq!(a[0], b"R");
    assert_eq!(a[1].len(), 4, "request id is 4 bytes");
    assert!(a[2].is_empty());
    assert_eq!(a[3], b"A");
    // RELAXED: a second send without a reply is allowed.
    send(&req, b"B");
    let b = recv_parts(&router);
    assert_eq!(b[3], b"B");
    assert_ne!(a[1], b[1], "each request has a new id");
    // The stale reply to A is discarded; the reply to B is delivered.
    router.send_multipart([&a[0][..], &a[1], b"", b"reply-A"], 0).unwrap();
    router.send_multipart([&b[0][..], &b[1], b"", b"reply-B"], 0).unwrap();
    assert_eq!(recv_parts(&req), vec![b"reply-B".to_vec()]);
    assert_nothing_within(&req, 100);
}

#[test]
fn req_relaxed_off_by_default_then_on() {
    let _g = guard();
    let ctx = Context::new();
    let req = sock(&ctx, SocketType::Req);
    assert_eq!(req.get_option_int(opt::REQ_RELAXED).ok().unwrap_or(0), 0);
    let rep = sock(&ctx, SocketType::Rep);
    link(Transport::InprocBindFirst, &rep, &req);
    send(&req, b"1");
    assert_errno(req.send("2", DONTWAIT), errno::EFSM);
    req.set_option_int(opt::REQ_RELAXED, 1).unwrap();
    send(&req, b"2");
}

#[test]
fn router_mandatory_ehostunreach() {
    let _g = guard();
    let ctx = Context::new();
    let router = sock(&ctx, SocketType::Router);
    router.bind(&inproc_endpoint()).unwrap();
    // Without MANDATORY: silently dropped.
    router.send_multipart([&b"ghost"[..], b"x"], 0).unwrap();
    router.set_option_int(opt::ROUTER_MANDATORY, 1).unwrap();
    assert_errno(router.send_multipart([&b"ghost"[..], b"x"], 0), errno::EHOSTUNREACH);
    assert_errno(router.send(Msg::from(&b"ghost"[..]), SNDMORE), errno::EHOSTUNREACH);
    // Known peers still work.
    let dealer = sock(&ctx, SocketType::Dealer);
    dealer.set_option_bytes(opt::ROUTING_ID, b"known").unwrap();
    dealer.connect(&router.last_endpoint().unwrap()).unwrap();
    assert!(eventually(BOUND, || router.send_multipart([&b"known"[..], b"hi"], DONTWAIT).is_ok()));
    assert_eq!(recv(&dealer), b"hi");
}

#[test]
fn router_handover() {
    let _g = guard();
    let ctx = Context::new();
    let router = sock(&ctx, SocketType::Router);
    router.set_option_int(opt::ROUTER_HANDOVER, 1).unwrap();
    let ep = bind_fresh(Transport::Tcp, &router);
    let d1 = sock(&ctx, SocketType::Dealer);
    d1.set_option_bytes(opt::ROUTING_ID, b"X").unwrap();
    d1.connect(&ep).unwrap();
    send(&d1, b"one");
    assert_eq!(recv_parts(&router), vec![b"X".to_vec(), b"one".to_vec()]);
    let d2 = sock(&ctx, SocketType::Dealer);
    d2.set_option_bytes(opt::ROUTING_ID, b"X").unwrap();
    d2.connect(&ep).unwrap();
    send(&d2, b"two");
    assert_eq!(recv_parts(&router), vec![b"X".to_vec(), b"two".to_vec()]);
    send_parts(&router, &[b"X", b"to-new"]);
    assert_eq!(recv(&d2), b"to-new", "HANDOVER routes the id to the newest connection");
    assert_nothing_within(&d1, 100);
}

#[test]
fn router_generated_ids_are_distinct() {
    let _g = guard();
    let ctx = Context::new();
    let router = sock(&ctx, SocketType::Router);
    let ep = bind_fresh(Transport::Tcp, &router);
    let mut ids = Vec::new();
    let dealers: Vec<_> = (0..3).map(|_| sock(&ctx, SocketType::Dealer)).collect();
    for d in &dealers {
        d.connect(&ep).unwrap();
        send(d, b"hi");
        let p = recv_parts(&router);
        assert_eq!(p[0].len(), 5);
        assert_eq!(p[0][0], 0);
        ids.push(p[0].clone());
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 3, "generated ids are unique");
}

#[test]
fn connect_routing_id() {
    let _g = guard();
    let ctx = Context::new();
    let server = sock(&ctx, SocketType::Router);
    let ep = bind_fresh(Transport::Tcp, &server);
    let client = sock(&ctx, SocketType::Router);
    client.set_option_int(opt::ROUTER_MANDATORY, 1).unwrap();
    client.set_option_bytes(opt::CONNECT_ROUTING_ID, b"srv-alias").unwrap();
    client.set_option_bytes(opt::ROUTING_ID, b"cli").unwrap();
    client.connect(&ep).unwrap();
    assert!(eventually(BOUND, || client.send_multipart([&b"srv-alias"[..], b"m"], DONTWAIT).is_ok()));
    assert_eq!(recv_parts(&server), vec![b"cli".to_vec(), b"m".to_vec()]);
}

#[test]
fn sub_cannot_send_pub_cannot_recv() {
    let _g = guard();
    let ctx = Context::new();
    let publisher = sock(&ctx, SocketType::Pub);
    let sub = sock(&ctx, SocketType::Sub);
    let push = sock(&ctx, SocketType::Push);
    let pull = sock(&ctx, SocketType::Pull);
    assert_errno(sub.send("x", DONTWAIT), errno::ENOTSUP);
    assert_errno(publisher.recv(DONTWAIT), errno::ENOTSUP);
    assert_errno(push.recv(DONTWAIT), errno::ENOTSUP);
    assert_errno(pull.send("x", DONTWAIT), errno::ENOTSUP);
}
