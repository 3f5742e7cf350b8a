//! `Socket::stats`: traffic per socket and per peer, each kind of drop
//! forced and counted (PUB at HWM, ROUTER to an unknown id, CONFLATE on
//! either side, MAXMSGSIZE) and reported to the monitor as it is counted,
//! reconnects, handshake failures by cause, and libzmq's draft
//! `zmq_socket_monitor_pipes_stats` (`Socket::monitor_pipes_stats`).

mod common;

use common::*;
use oxmq::security::curve_keypair;
use oxmq::{opt, Context, Error, Msg, Socket, SocketType, DONTWAIT, SNDMORE};
use std::time::Duration;

fn drain(s: &Socket) -> usize {
    let mut n = 0;
    while s.recv(DONTWAIT).is_ok() {
        n += 1;
    }
    n
}

fn traffic_over(t: Transport) {
    let _g = guard();
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    let push = sock(&ctx, SocketType::Push);
    let ep = link(t, &pull, &push);
    for _ in 0..10 {
        send(&push, b"hello");
    }
    send_parts(&push, &[b"abc", b"defg"]);
    for _ in 0..10 {
        assert_eq!(recv(&pull), b"hello");
    }
    assert_eq!(recv_parts(&pull), vec![b"abc".to_vec(), b"defg".to_vec()]);

    let out = push.stats().unwrap();
    assert_eq!((out.msgs_out, out.bytes_out, out.msgs_in, out.bytes_in), (11, 57, 0, 0), "{t:?}: {out:?}");
    assert_eq!(out.peers.len(), 1);
    let peer = &out.peers[0];
    assert_eq!((peer.msgs_out, peer.bytes_out), (11, 57), "{t:?}: {peer:?}");
    assert_eq!(peer.endpoint, ep, "{t:?}");
    assert_eq!(peer.drops.total(), 0);

    let inn = pull.stats().unwrap();
    assert_eq!((inn.msgs_in, inn.bytes_in, inn.msgs_out), (11, 57, 0), "{t:?}: {inn:?}");
    assert_eq!(inn.peers.len(), 1);
    assert_eq!((inn.peers[0].msgs_in, inn.peers[0].bytes_in, inn.peers[0].queued_in), (11, 57, 0), "{t:?}");
    assert_eq!(inn.peers[0].remote_address.is_some(), !t.is_inproc(), "{t:?}: {:?}", inn.peers[0]);
    assert_eq!(inn.drops.total() + inn.reconnects + inn.handshake_failures.total(), 0);
}

#[test]
fn traffic_is_counted_per_socket_and_per_peer() {
    for t in [Transport::Tcp, Transport::IpcAbstract, Transport::InprocBindFirst, Transport::InprocConnectFirst] {
        traffic_over(t);
    }
}

/// Only what left counts: a multipart message under way has sent nothing
/// yet, and frames taken back unsent (abandoned half-written when the
/// connection is dropped, or written as the peer vanished) count as neither
/// messages nor bytes out.
#[test]
fn frames_taken_back_unsent_are_not_counted_as_sent() {
    let _g = guard();
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    let push = sock(&ctx, SocketType::Push);
    let ep = link(Transport::InprocBindFirst, &pull, &push);
    send(&push, b"whole");
    assert_eq!(recv(&pull), b"whole");
    push.send(&b"head"[..], SNDMORE).unwrap();
    let s = push.stats().unwrap();
    assert_eq!((s.msgs_out, s.bytes_out), (1, 5), "a message under way has not left: {s:?}");
    assert_eq!((s.peers[0].msgs_out, s.peers[0].bytes_out), (1, 5), "{s:?}");
    push.disconnect(&ep).unwrap();
    // The rest of the abandoned message goes nowhere.
    push.send(&b"tail"[..], 0).unwrap();
    let s = push.stats().unwrap();
    assert_eq!((s.msgs_out, s.bytes_out, s.peers.len()), (1, 5, 0), "the abandoned frames never left: {s:?}");

    let pull = sock(&ctx, SocketType::Pull);
    let push = sock(&ctx, SocketType::Push);
    link(Transport::InprocBindFirst, &pull, &push);
    send(&push, b"whole");
    assert_eq!(recv(&pull), b"whole");
    push.send(&b"head"[..], SNDMORE).unwrap();
    drop(pull);
    // Taken back, whether the pipe is found gone before this frame or at its flush.
    push.send(&b"tail"[..], 0).unwrap();
    assert!(eventually(BOUND, || push.stats().unwrap().peers.is_empty()), "the pipe to the closed peer stayed");
    let s = push.stats().unwrap();
    assert_eq!((s.msgs_out, s.bytes_out), (1, 5), "nothing of the message the peer never got counts: {s:?}");
}

#[test]
fn queue_depths_show_unread_messages() {
    let _g = guard();
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    let push = sock(&ctx, SocketType::Push);
    link(Transport::InprocBindFirst, &pull, &push);
    for _ in 0..7 {
        send(&push, b"x");
    }
    let s = pull.stats().unwrap();
    assert_eq!((s.queued_in, s.peers[0].queued_in), (7, 7), "{s:?}");
    // The peer has read none: all 7 are still out.
    assert_eq!(push.stats().unwrap().queued_out, 7);
    // Each read counts at once, not only when the reader acknowledges
    // (every LWM messages, or when it runs dry).
    for _ in 0..3 {
        assert_eq!(recv(&pull), b"x");
    }
    assert_eq!((push.stats().unwrap().queued_out, pull.stats().unwrap().queued_in), (4, 4));
    assert_eq!(drain(&pull), 4);
    assert_eq!(pull.stats().unwrap().queued_in, 0);
    assert_eq!(push.stats().unwrap().queued_out, 0);
}

/// Nothing is queued once the peer has read everything, though a reader
/// that never ran dry (REQ/REP in one thread) has acknowledged nothing to
/// the writer (that is what the pipes-stats event, libzmq's, reports).
#[test]
fn nothing_is_queued_out_once_the_peer_read_everything() {
    for t in [Transport::Tcp, Transport::IpcAbstract, Transport::InprocBindFirst, Transport::InprocConnectFirst] {
        let _g = guard();
        let ctx = Context::new();
        let rep = sock(&ctx, SocketType::Rep);
        let req = sock(&ctx, SocketType::Req);
        link(t, &rep, &req);
        for _ in 0..200 {
            send(&req, b"ping");
            assert_eq!(recv(&rep), b"ping");
            send(&rep, b"pong");
            assert_eq!(recv(&req), b"pong");
        }
        for (name, s) in [("REQ", &req), ("REP", &rep)] {
            let st = s.stats().unwrap();
            assert_eq!((st.msgs_out, st.msgs_in), (200, 200), "{t:?} {name}: {st:?}");
            assert_eq!(st.peers.len(), 1, "{t:?} {name}");
            let p = &st.peers[0];
            assert_eq!((p.queued_out, p.queued_in, st.queued_out, st.queued_in), (0, 0, 0, 0), "{t:?} {name}: {st:?}");
        }
        // One unread request is one queued, on both sides.
        send(&req, b"ping");
        assert!(eventually(BOUND, || rep.stats().unwrap().queued_in == 1), "{t:?}: {:?}", rep.stats());
        if t.is_inproc() {
            // Over tcp and ipc the connection took it.
            assert_eq!(req.stats().unwrap().queued_out, 1, "{t:?}");
        }
        assert_eq!(recv(&rep), b"ping");
        assert_eq!(req.stats().unwrap().queued_out, 0, "{t:?}");
    }
}

/// HELLO_MSG (draft) is sent by the transport on the socket's behalf:
/// over every transport the receiving peer counts it in, and the sending
/// socket counts it neither as a message nor as bytes out.
#[test]
fn hello_msg_counts_alike_over_every_transport() {
    for t in [Transport::Tcp, Transport::IpcAbstract, Transport::InprocBindFirst, Transport::InprocConnectFirst] {
        let _g = guard();
        let ctx = Context::new();
        let router = sock(&ctx, SocketType::Router);
        router.set_option_bytes(opt::HELLO_MSG, b"hello!").unwrap();
        let dealer = sock(&ctx, SocketType::Dealer);
        dealer.set_option_bytes(opt::ROUTING_ID, b"d").unwrap();
        dealer.set_option_bytes(opt::HELLO_MSG, b"hi").unwrap();
        link(t, &router, &dealer);
        assert_eq!(recv(&dealer), b"hello!", "{t:?}");
        assert_eq!(recv_parts(&router), vec![b"d".to_vec(), b"hi".to_vec()], "{t:?}");
        let traffic = |s: &Socket| {
            let st = s.stats().unwrap();
            assert_eq!(st.peers.len(), 1, "{t:?}: {st:?}");
            let p = &st.peers[0];
            assert_eq!(
                (p.msgs_in, p.bytes_in, p.msgs_out, p.bytes_out),
                (st.msgs_in, st.bytes_in, st.msgs_out, st.bytes_out)
            );
            assert_eq!((p.queued_in, p.queued_out), (0, 0), "{t:?}: {st:?}");
            (st.msgs_in, st.bytes_in, st.msgs_out, st.bytes_out)
        };
        assert_eq!(traffic(&router), (1, 2, 0, 0), "{t:?}: the router's HELLO is not its traffic");
        assert_eq!(traffic(&dealer), (1, 6, 0, 0), "{t:?}: the dealer's HELLO is not its traffic");
        send_parts(&router, &[b"d", b"abc"]);
        assert_eq!(recv(&dealer), b"abc", "{t:?}");
        send(&dealer, b"wxyz");
        assert_eq!(recv_parts(&router), vec![b"d".to_vec(), b"wxyz".to_vec()], "{t:?}");
        assert_eq!(traffic(&router), (2, 6, 1, 3), "{t:?}");
        assert_eq!(traffic(&dealer), (2, 9, 1, 4), "{t:?}");
    }
}

#[test]
fn pub_at_hwm_counts_each_dropped_message_against_its_subscriber() {
    let _g = guard();
    let ctx = Context::new();
    let publisher = sock(&ctx, SocketType::Pub);
    publisher.set_option_int(opt::SNDHWM, 4).unwrap();
    let sub = sock(&ctx, SocketType::Sub);
    sub.set_option_int(opt::RCVHWM, 4).unwrap();
    sub.set_option_bytes(opt::SUBSCRIBE, b"").unwrap();
    link(Transport::InprocBindFirst, &publisher, &sub);
    sync_pub_sub(&publisher, &[&sub], b"probe");
    drain(&sub);
    let before = publisher.stats().unwrap();
    assert_eq!(before.drops.hwm, 0, "{before:?}");
    const N: u64 = 100;
    for _ in 0..N {
        publisher.send(Msg::from(&b"m"[..]), DONTWAIT).unwrap();
    }
    let got = drain(&sub) as u64;
    assert!(got > 0 && got < N, "received {got} of {N}");
    let after = publisher.stats().unwrap();
    assert_eq!(after.drops.hwm, N - got, "{after:?}");
    assert_eq!(after.peers[0].drops.hwm, N - got);
    assert_eq!(after.msgs_out - before.msgs_out, got, "what reached the subscriber's pipe, drops not");
    assert_eq!(after.drops.no_route + after.drops.conflate + after.drops.oversize, 0);
}

#[test]
fn router_to_unknown_id_is_a_no_route_drop_unless_mandatory() {
    let _g = guard();
    let ctx = Context::new();
    let router = sock(&ctx, SocketType::Router);
    router.bind(&inproc_endpoint()).unwrap();
    send_parts(&router, &[b"nobody", b"x"]);
    send_parts(&router, &[b"nobody", b"y", b"z"]);
    let s = router.stats().unwrap();
    assert_eq!(s.drops.no_route, 2, "{s:?}");
    assert_eq!(s.drops.hwm, 0);
    router.set_option_int(opt::ROUTER_MANDATORY, 1).unwrap();
    assert_errno(router.send(Msg::from(&b"nobody"[..]), SNDMORE), oxmq::errno::EHOSTUNREACH);
    assert_eq!(router.stats().unwrap().drops.no_route, 2, "a refused send is no drop");
}

#[test]
fn router_peers_carry_their_routing_ids() {
    let _g = guard();
    let ctx = Context::new();
    let router = sock(&ctx, SocketType::Router);
    let dealer = sock(&ctx, SocketType::Dealer);
    dealer.set_option_bytes(opt::ROUTING_ID, b"alice").unwrap();
    link(Transport::Tcp, &router, &dealer);
    send(&dealer, b"hi");
    assert_eq!(recv_parts(&router), vec![b"alice".to_vec(), b"hi".to_vec()]);
    let s = router.stats().unwrap();
    assert_eq!(s.peers.len(), 1);
    assert_eq!(s.peers[0].routing_id.as_deref(), Some(&b"alice"[..]));
    assert_eq!((s.msgs_in, s.bytes_in), (1, 2), "the routing-id frame is envelope, not traffic");
    // Bound, no monitor as it connected: libzmq's unconnected pair.
    assert_eq!((s.peers[0].local.as_str(), s.peers[0].remote.as_str()), (s.peers[0].endpoint.as_str(), ""));
}

#[test]
fn conflate_on_the_receiving_side_counts_replaced_messages() {
    let _g = guard();
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    pull.set_option_int(opt::CONFLATE, 1).unwrap();
    let push = sock(&ctx, SocketType::Push);
    link(Transport::InprocBindFirst, &pull, &push);
    for i in 0..5u8 {
        send(&push, &[i]);
    }
    assert_eq!(recv(&pull), [4]);
    let s = pull.stats().unwrap();
    assert_eq!(s.drops.conflate, 4, "{s:?}");
    assert_eq!(s.peers[0].drops.conflate, 4);
    assert_eq!(s.msgs_in, 5, "all five came in; four were then replaced");
}

#[test]
fn conflate_on_the_sending_side_counts_replaced_messages() {
    let _g = guard();
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    let push = sock(&ctx, SocketType::Push);
    push.set_option_int(opt::CONFLATE, 1).unwrap();
    link(Transport::InprocConnectFirst, &pull, &push);
    for i in 0..5u8 {
        send(&push, &[i]);
    }
    assert_eq!(recv(&pull), [4]);
    let s = push.stats().unwrap();
    assert_eq!(s.drops.conflate, 4, "{s:?}");
    assert_eq!(s.peers[0].drops.conflate, 4);
    assert_eq!(s.msgs_out, 5, "written to the pipe, replaced or not");
    // Kept after the peer is gone, with its traffic.
    drop(pull);
    assert!(eventually(BOUND, || push.stats().unwrap().peers.is_empty()));
    let s = push.stats().unwrap();
    assert_eq!((s.drops.conflate, s.msgs_out, s.bytes_out), (4, 5, 5), "{s:?}");
}

#[test]
fn oversize_message_is_a_drop() {
    let _g = guard();
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    pull.set_option_int(opt::MAXMSGSIZE, 10).unwrap();
    let push = sock(&ctx, SocketType::Push);
    push.set_option_int(opt::RECONNECT_IVL, 1000).unwrap();
    link(Transport::Tcp, &pull, &push);
    send(&push, &[7u8; 100]);
    assert!(
        // The sender reconnects and tries again: each try is one more.
        eventually(BOUND, || pull.stats().unwrap().drops.oversize >= 1),
        "{:?}",
        pull.stats().unwrap()
    );
    assert_errno(pull.recv(DONTWAIT), oxmq::errno::EAGAIN);
}

#[test]
fn reconnects_are_counted() {
    let _g = guard();
    let ctx = Context::new();
    let dealer = sock(&ctx, SocketType::Dealer);
    dealer.set_option_int(opt::RECONNECT_IVL, 10).unwrap();
    dealer.connect(&format!("tcp://127.0.0.1:{}", free_tcp_port())).unwrap();
    assert!(eventually(BOUND, || dealer.stats().unwrap().reconnects >= 3), "{:?}", dealer.stats());
    assert_eq!(dealer.stats().unwrap().handshake_failures.total(), 0);
}

/// A ZAP handler that answers `status` to every request until the context ends.
fn zap_refusing(ctx: &Context, status: &'static str) -> std::thread::JoinHandle<()> {
    let rep = sock(ctx, SocketType::Rep);
    rep.set_option_int(opt::RCVTIMEO, 200).unwrap();
    rep.bind("inproc://zeromq.zap.01").unwrap();
    std::thread::spawn(move || loop {
        match rep.recv_multipart(0) {
            Ok(req) => {
                let id = req[1].to_vec();
                let reply: [&[u8]; 6] = [b"1.0", &id, status.as_bytes(), b"no", b"", b""];
                send_parts(&rep, &reply);
            }
            Err(Error::Again) => {}
            Err(_) => return,
        }
    })
}

#[test]
fn plain_refused_by_zap_is_an_auth_failure_on_both_sides() {
    let _g = guard();
    let ctx = Context::new();
    let zap = zap_refusing(&ctx, "400");
    let server = sock(&ctx, SocketType::Pull);
    server.set_option_int(opt::PLAIN_SERVER, 1).unwrap();
    let client = sock(&ctx, SocketType::Push);
    client.set_option_bytes(opt::PLAIN_USERNAME, b"u").unwrap();
    client.set_option_bytes(opt::PLAIN_PASSWORD, b"wrong").unwrap();
    link(Transport::Tcp, &server, &client);
    assert!(eventually(BOUND, || server.stats().unwrap().handshake_failures.auth >= 1), "{:?}", server.stats());
    assert!(eventually(BOUND, || client.stats().unwrap().handshake_failures.auth >= 1), "{:?}", client.stats());
    let s = server.stats().unwrap();
    assert_eq!((s.handshake_failures.protocol, s.handshake_failures.timeout), (0, 0), "{s:?}");
    drop((server, client));
    ctx.term();
    zap.join().unwrap();
}

#[test]
fn curve_with_the_wrong_server_key_is_a_protocol_failure() {
    let _g = guard();
    let ctx = Context::new();
    let (_server_public, server_secret) = curve_keypair().unwrap();
    let (wrong_public, _) = curve_keypair().unwrap();
    let (client_public, client_secret) = curve_keypair().unwrap();
    let server = sock(&ctx, SocketType::Pull);
    server.set_option_int(opt::CURVE_SERVER, 1).unwrap();
    server.set_option_bytes(opt::CURVE_SECRETKEY, &server_secret[..]).unwrap();
    let client = sock(&ctx, SocketType::Push);
    client.set_option_int(opt::RECONNECT_IVL, 50).unwrap();
    client.set_option_bytes(opt::CURVE_SERVERKEY, &wrong_public).unwrap();
    client.set_option_bytes(opt::CURVE_PUBLICKEY, &client_public).unwrap();
    client.set_option_bytes(opt::CURVE_SECRETKEY, &client_secret[..]).unwrap();
    link(Transport::Tcp, &server, &client);
    assert!(eventually(BOUND, || server.stats().unwrap().handshake_failures.protocol >= 1), "{:?}", server.stats());
    assert_eq!(server.stats().unwrap().handshake_failures.auth, 0);
    assert!(server.stats().unwrap().peers.is_empty(), "a failed handshake makes no peer");
    std::thread::sleep(Duration::from_millis(20));
}

#[test]
fn stats_options_read_the_same_counters() {
    let _g = guard();
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    let push = sock(&ctx, SocketType::Push);
    link(Transport::InprocBindFirst, &pull, &push);
    for _ in 0..3 {
        send(&push, b"abcd");
    }
    recv(&pull);
    assert_eq!(pull.get_option_int(opt::STATS_MSGS_IN).unwrap(), 1);
    assert_eq!(pull.get_option_int(opt::STATS_BYTES_IN).unwrap(), 4);
    assert_eq!(pull.get_option_int(opt::STATS_QUEUED_IN).unwrap(), 2);
    assert_eq!(pull.get_option_int(opt::STATS_PEERS).unwrap(), 1);
    assert_eq!(push.get_option_int(opt::STATS_BYTES_OUT).unwrap(), 12);
    assert_eq!(push.get_option_int(opt::STATS_DROPS_HWM).unwrap(), 0);
    for o in oxmq::option_table::OXMQ_ONLY {
        let v = pull.get_option_int(o).unwrap();
        assert_eq!(v as u64, pull.stats().unwrap().by_option(o).unwrap(), "option {o}");
        assert_errno(pull.set_option_int(o, 0), oxmq::errno::EINVAL);
    }
    assert_errno(pull.get_option_int(*oxmq::option_table::OXMQ_ONLY.end() + 1), oxmq::errno::EINVAL);
}

#[test]
fn each_counted_drop_is_also_a_monitor_event() {
    let _g = guard();
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    let push = sock(&ctx, SocketType::Push);
    push.set_option_int(opt::CONFLATE, 1).unwrap();
    let mon = monitor_v2(&ctx, &push, oxmq::monitor_event::MSG_DROPPED);
    link(Transport::InprocConnectFirst, &pull, &push);
    for i in 0..3u8 {
        send(&push, &[i]);
    }
    for _ in 0..2 {
        let e = next_event_v2(&mon);
        assert_eq!((e.id, e.values[0]), (oxmq::monitor_event::MSG_DROPPED, oxmq::drop_reason::CONFLATE));
    }
    assert_nothing_within(&mon, 50);
    assert_eq!(push.stats().unwrap().drops.conflate, 2);
    assert_eq!(recv(&pull), [2]);
}

#[test]
fn traffic_of_peers_that_left_is_kept() {
    let _g = guard();
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    let ep = bind_fresh(Transport::Tcp, &pull);
    for round in 1..=3u64 {
        let push = sock(&ctx, SocketType::Push);
        connect_to(&ep, &push);
        send(&push, b"abc");
        assert_eq!(recv(&pull), b"abc");
        drop(push);
        assert!(eventually(BOUND, || pull.stats().unwrap().peers.is_empty()), "round {round}");
        let s = pull.stats().unwrap();
        assert_eq!((s.msgs_in, s.bytes_in), (round, 3 * round), "{s:?}");
    }
}

#[test]
fn monitor_pipes_stats_reports_each_pipes_queues() {
    let _g = guard();
    let ctx = Context::new();
    let push = sock(&ctx, SocketType::Push);
    // Not asked for by the monitor (or no monitor): EINVAL.
    assert_errno(push.monitor_pipes_stats(), oxmq::errno::EINVAL);
    let mon = monitor_v2(&ctx, &push, oxmq::monitor_event::PIPES_STATS);
    // No pipes: EAGAIN.
    assert_errno(push.monitor_pipes_stats(), oxmq::errno::EAGAIN);
    let pull = sock(&ctx, SocketType::Pull);
    // As libzmq's test: small kernel buffers, so that little is in flight.
    for (s, hwm) in [(&push, opt::SNDHWM), (&pull, opt::RCVHWM)] {
        s.set_option_int(hwm, 4).unwrap();
        s.set_option_int(opt::SNDBUF, 4096).unwrap();
        s.set_option_int(opt::RCVBUF, 4096).unwrap();
    }
    let ep = bind_fresh(Transport::Tcp, &push);
    connect_to(&ep, &pull);
    send(&push, b"first");
    assert_eq!(recv(&pull), b"first");
    // Fill both pipes and the connection (the pull reads nothing), until
    // nothing moves any more.
    let big = vec![0u8; 8192];
    let mut sent = 0;
    loop {
        while push.send(&big[..], DONTWAIT).is_ok() {
            sent += 1;
            assert!(sent < 1000, "the sends never blocked");
        }
        std::thread::sleep(Duration::from_millis(100));
        if push.send(&big[..], DONTWAIT).is_err() {
            break;
        }
        sent += 1;
    }
    push.monitor_pipes_stats().unwrap();
    let EventV2 { id, values, local, remote } = next_event_v2(&mon);
    assert_eq!(id, oxmq::monitor_event::PIPES_STATS);
    assert_eq!(values.len(), 2, "{values:?}");
    assert_eq!(values[0], 4, "outbound: the writer's view of a full pipe, as libzmq's");
    assert_eq!(values[1], 0, "a PUSH receives nothing");
    assert_eq!(local, ep);
    assert!(remote.starts_with("tcp://127.0.0.1:") && remote != ep, "{remote}");
    // The statistics count what the connection has not taken: it may have
    // taken one more than it acknowledged (it acknowledges every LWM, 2).
    let queued = push.stats().unwrap().queued_out;
    assert!(queued <= values[0] && values[0] - queued < 2, "{queued} against {values:?}");
    // The receiving side: its queue of unread messages.
    let mon2 = monitor_v2(&ctx, &pull, oxmq::monitor_event::PIPES_STATS);
    // RCVHWM 4 still holds "first": the reader publishes its count when it
    // next runs dry, so the engine stopped at 3 more.
    assert!(eventually(BOUND, || pull.stats().unwrap().queued_in == 3), "{:?}", pull.stats());
    pull.monitor_pipes_stats().unwrap();
    let EventV2 { values, local, remote, .. } = next_event_v2(&mon2);
    assert_eq!(values, vec![0, 3]);
    // Monitored after the connection came up: only the endpoint it was given.
    assert_eq!((local.as_str(), remote.as_str()), ("", ep.as_str()));
}

/// `make test` runs the workspace's tests, where oxmq-capi's default feature
/// turns `prometheus` on for this crate too.
#[cfg(feature = "prometheus")]
#[test]
fn prometheus_text_carries_the_counters() {
    let _g = guard();
    let ctx = Context::new();
    let router = sock(&ctx, SocketType::Router);
    let dealer = sock(&ctx, SocketType::Dealer);
    dealer.set_option_bytes(opt::ROUTING_ID, b"A").unwrap();
    link(Transport::InprocBindFirst, &router, &dealer);
    send(&dealer, b"hey");
    assert_eq!(recv_parts(&router), vec![b"A".to_vec(), b"hey".to_vec()]);
    send_parts(&router, &[b"nobody", b"x"]);
    let (r, d) = (router.stats().unwrap(), dealer.stats().unwrap());
    let text = oxmq::prometheus_text(&[("router", &r), ("dealer", &d)]);
    for line in [
        "# TYPE oxmq_messages counter",
        "oxmq_messages_total{socket=\"router\",direction=\"in\"} 1",
        "oxmq_bytes_total{socket=\"router\",direction=\"in\"} 3",
        "oxmq_dropped_messages_total{socket=\"router\",reason=\"no_route\"} 1",
        "oxmq_messages_total{socket=\"dealer\",direction=\"out\"} 1",
        "oxmq_peers{socket=\"router\"} 1",
        "oxmq_peer_messages_total{socket=\"router\",endpoint=\"",
        "peer=\"41\",direction=\"in\"} 1",
        "# EOF",
    ] {
        assert!(text.contains(line), "no {line:?} in:\n{text}");
    }
}
