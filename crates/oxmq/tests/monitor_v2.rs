//! Version-2 socket monitors (libzmq's draft `zmq_socket_monitor_versioned`,
//! oxmq's `Socket::monitor_versioned`): the multi-frame layout, both
//! endpoints and the peer's routing id on connection events over tcp and
//! ipc, the sink types, and the oxmq-only events for drops (HWM, no route,
//! oversize) and a pipe reaching its HWM.

mod common;

use common::*;
use oxmq::{drop_reason, errno, monitor_event as ev, opt, Context, SocketType, DONTWAIT};
use std::time::Duration;

/// Time for a subscription to reach an inproc PUB.
const SETTLE: Duration = Duration::from_millis(100);

const CLIENT_ID: &[u8] = b"client-with-a-long-id\x00\xff";
const SERVER_ID: &[u8] = b"srv";

/// Connect, accept, handshake and disconnect, each with both ends named
/// and (after the handshake) the peer's routing id.
fn connection_events(t: Transport, prefix: &str) {
    let _g = guard();
    let ctx = Context::new();
    let server = sock(&ctx, SocketType::Router);
    let client = sock(&ctx, SocketType::Dealer);
    server.set_option_bytes(opt::ROUTING_ID, SERVER_ID).unwrap();
    client.set_option_bytes(opt::ROUTING_ID, CLIENT_ID).unwrap();
    let server_mon = monitor_v2(&ctx, &server, ev::ALL_V2);
    let client_mon = monitor_v2(&ctx, &client, ev::ALL_V2);
    let ep = link(t, &server, &client);
    send(&client, b"hello");
    assert_eq!(recv_parts(&server), vec![CLIENT_ID.to_vec(), b"hello".to_vec()]);

    let (listening, _) = wait_for_v2(&server_mon, ev::LISTENING.into());
    assert_eq!((listening.local.as_str(), listening.remote.as_str()), (ep.as_str(), ""));
    assert_eq!(listening.values.len(), 1, "no peer, no routing id: {listening:?}");

    let (connected, _) = wait_for_v2(&client_mon, ev::CONNECTED.into());
    assert_eq!(connected.remote, ep);
    assert!(connected.local.starts_with(prefix), "{connected:?}");
    assert_ne!(connected.local, connected.remote);
    assert_eq!(connected.values.len(), 1, "before the handshake no id: {connected:?}");
    assert!(connected.values[0] > 2, "value 1 is the fd: {connected:?}");

    let (accepted, _) = wait_for_v2(&server_mon, ev::ACCEPTED.into());
    assert_eq!((accepted.local.as_str(), accepted.remote.as_str()), (ep.as_str(), connected.local.as_str()));

    let (client_hs, _) = wait_for_v2(&client_mon, ev::HANDSHAKE_SUCCEEDED.into());
    assert_eq!((client_hs.local.as_str(), client_hs.remote.as_str()), (connected.local.as_str(), ep.as_str()));
    assert_eq!(client_hs.values[0], 0);
    assert_eq!(client_hs.routing_id().as_deref(), Some(SERVER_ID));

    let (server_hs, _) = wait_for_v2(&server_mon, ev::HANDSHAKE_SUCCEEDED.into());
    assert_eq!((server_hs.local.as_str(), server_hs.remote.as_str()), (ep.as_str(), connected.local.as_str()));
    assert_eq!(server_hs.routing_id().as_deref(), Some(CLIENT_ID));

    drop(client);
    let (gone, _) = wait_for_v2(&server_mon, ev::DISCONNECTED.into());
    assert_eq!((gone.local.as_str(), gone.remote.as_str()), (ep.as_str(), connected.local.as_str()));
    assert_eq!(gone.routing_id().as_deref(), Some(CLIENT_ID));
    assert_eq!(gone.values[0], accepted.values[0], "the fd, as ACCEPTED said");
}

#[test]
fn tcp_connection_events_name_both_ends_and_the_peer() {
    connection_events(Transport::Tcp, "tcp://127.0.0.1:");
}

#[test]
fn ipc_connection_events_name_both_ends_and_the_peer() {
    connection_events(Transport::IpcPath, "ipc://");
}

#[test]
fn a_peer_without_an_id_has_an_empty_one() {
    let _g = guard();
    let ctx = Context::new();
    let server = sock(&ctx, SocketType::Pull);
    let client = sock(&ctx, SocketType::Push);
    let mon = monitor_v2(&ctx, &server, ev::HANDSHAKE_SUCCEEDED.into());
    link(Transport::Tcp, &server, &client);
    let hs = next_event_v2(&mon);
    assert_eq!(hs.id, u64::from(ev::HANDSHAKE_SUCCEEDED));
    assert_eq!(hs.values, vec![0, 0], "length 0, no id values");
    assert_eq!(hs.routing_id(), Some(Vec::new()));
}

#[test]
fn monitor_stopped_has_no_ends_and_v1_is_unchanged() {
    let _g = guard();
    let ctx = Context::new();
    let s = sock(&ctx, SocketType::Dealer);
    let mon = monitor_v2(&ctx, &s, ev::ALL_V2);
    s.monitor_versioned(None, 0, 2, SocketType::Pair).unwrap();
    let stopped = next_event_v2(&mon);
    assert_eq!(
        stopped,
        EventV2 { id: ev::MONITOR_STOPPED.into(), values: vec![0], local: "".into(), remote: "".into() }
    );

    // Version 1 through monitor_versioned: libzmq's two frames.
    let ep = inproc_endpoint();
    s.monitor_versioned(Some(&ep), ev::ALL_V1, 1, SocketType::Pair).unwrap();
    let reader = sock(&ctx, SocketType::Pair);
    reader.connect(&ep).unwrap();
    s.bind("tcp://127.0.0.1:*").unwrap();
    let parts = recv_parts(&reader);
    assert_eq!(parts.len(), 2);
    assert_eq!(parts[0].len(), 6);
    assert_eq!(u16::from_ne_bytes([parts[0][0], parts[0][1]]), ev::LISTENING);
    assert_eq!(parts[1], s.last_endpoint().unwrap().into_bytes());
}

#[test]
fn sink_types_and_bad_arguments() {
    let _g = guard();
    let ctx = Context::new();
    let s = sock(&ctx, SocketType::Dealer);
    // libzmq: only PAIR, PUB and PUSH can carry events; EINVAL otherwise.
    assert_errno(s.monitor_versioned(Some(&inproc_endpoint()), ev::ALL_V2, 2, SocketType::Dealer), errno::EINVAL);
    // Version 1 has 16 event bits.
    assert_errno(s.monitor_versioned(Some(&inproc_endpoint()), ev::ALL_V2, 1, SocketType::Pair), errno::EINVAL);
    assert_errno(
        s.monitor_versioned(Some("tcp://127.0.0.1:0"), ev::ALL_V2, 2, SocketType::Pair),
        errno::EPROTONOSUPPORT,
    );
    for (sink, reader_type) in [(SocketType::Push, SocketType::Pull), (SocketType::Pub, SocketType::Sub)] {
        let ep = inproc_endpoint();
        s.monitor_versioned(Some(&ep), ev::LISTENING.into(), 2, sink).unwrap();
        let reader = sock(&ctx, reader_type);
        if reader_type == SocketType::Sub {
            reader.set_option_bytes(opt::SUBSCRIBE, b"").unwrap();
        }
        reader.connect(&ep).unwrap();
        // A SUB's subscription must reach the PUB before the event is sent.
        std::thread::sleep(SETTLE);
        s.bind("tcp://127.0.0.1:*").unwrap();
        let e = next_event_v2(&reader);
        assert_eq!((e.id, e.local), (u64::from(ev::LISTENING), s.last_endpoint().unwrap()));
    }
}

#[test]
fn router_drop_without_a_route_names_the_id() {
    let _g = guard();
    let ctx = Context::new();
    let router = sock(&ctx, SocketType::Router);
    let mon = monitor_v2(&ctx, &router, ev::ALL_OXMQ);
    send_parts(&router, &[b"nobody-here", b"lost"]);
    let e = next_event_v2(&mon);
    assert_eq!(e.id, ev::MSG_DROPPED);
    assert_eq!(e.values[0], drop_reason::NO_ROUTE);
    assert_eq!(e.routing_id().as_deref(), Some(&b"nobody-here"[..]));
    assert_eq!((e.local.as_str(), e.remote.as_str()), ("", ""));
}

#[test]
fn oxmq_events_only_when_asked() {
    let _g = guard();
    let ctx = Context::new();
    let router = sock(&ctx, SocketType::Router);
    // ALL_V2 is libzmq's set: a libzmq consumer never sees oxmq's events.
    let mon = monitor_v2(&ctx, &router, ev::ALL_V2);
    send_parts(&router, &[b"nobody-here", b"lost"]);
    assert_nothing_within(&mon, 200);
}

#[test]
fn router_drop_at_hwm_and_hwm_reached() {
    let _g = guard();
    let ctx = Context::new();
    let router = sock(&ctx, SocketType::Router);
    let dealer = sock(&ctx, SocketType::Dealer);
    router.set_option_int(opt::SNDHWM, 2).unwrap();
    dealer.set_option_int(opt::RCVHWM, 2).unwrap();
    dealer.set_option_bytes(opt::ROUTING_ID, b"D").unwrap();
    let mon = monitor_v2(&ctx, &router, ev::MSG_DROPPED | ev::HWM_REACHED);
    link(Transport::InprocBindFirst, &router, &dealer);
    send(&dealer, b"hi");
    assert_eq!(recv_parts(&router)[0], b"D");
    // inproc: the pipe holds SNDHWM + the peer's RCVHWM, as in libzmq.
    for _ in 0..4 {
        send_parts(&router, &[b"D", b"kept"]);
    }
    assert_nothing_within(&mon, 50);
    send_parts(&router, &[b"D", b"dropped"]);
    let full = next_event_v2(&mon);
    assert_eq!((full.id, full.values[0]), (ev::HWM_REACHED, 4));
    assert_eq!(full.routing_id().as_deref(), Some(&b"D"[..]));
    let dropped = next_event_v2(&mon);
    assert_eq!((dropped.id, dropped.values[0]), (ev::MSG_DROPPED, drop_reason::HWM));
    assert_eq!(dropped.routing_id().as_deref(), Some(&b"D"[..]));
    // Full still: another drop, but no second HWM_REACHED until it drained.
    send_parts(&router, &[b"D", b"dropped"]);
    assert_eq!(next_event_v2(&mon).id, ev::MSG_DROPPED);
    assert_nothing_within(&mon, 50);
    for _ in 0..4 {
        assert_eq!(recv(&dealer), b"kept");
    }
    assert_nothing(&dealer);
}

#[test]
fn pub_drop_at_hwm() {
    let _g = guard();
    let ctx = Context::new();
    let publisher = sock(&ctx, SocketType::Pub);
    let sub = sock(&ctx, SocketType::Sub);
    publisher.set_option_int(opt::SNDHWM, 1).unwrap();
    sub.set_option_int(opt::RCVHWM, 1).unwrap();
    sub.set_option_bytes(opt::SUBSCRIBE, b"").unwrap();
    link(Transport::InprocBindFirst, &publisher, &sub);
    sync_pub_sub(&publisher, &[&sub], b"probe");
    while sub.recv(DONTWAIT).is_ok() {}
    std::thread::sleep(SETTLE);
    let mon = monitor_v2(&ctx, &publisher, ev::MSG_DROPPED | ev::HWM_REACHED);
    // PUB never blocks: send until the monitor says the pipe filled.
    let mut sent = 0;
    while publisher.send(&b"m"[..], 0).is_ok() && sent < 10 {
        sent += 1;
    }
    let full = next_event_v2(&mon);
    assert_eq!((full.id, full.values[0]), (ev::HWM_REACHED, 2));
    let dropped = next_event_v2(&mon);
    assert_eq!((dropped.id, dropped.values[0]), (ev::MSG_DROPPED, drop_reason::HWM));
    // A SUB has no routing id: none or an empty one is reported.
    assert_eq!(dropped.routing_id().unwrap_or_default(), b"", "{dropped:?}");
    let mut got = 0;
    while sub.recv(DONTWAIT).is_ok() {
        got += 1;
    }
    assert_eq!(got, 2, "the pipe kept its HWM's worth");
}

#[test]
fn push_reaching_its_hwm_is_reported_once() {
    let _g = guard();
    let ctx = Context::new();
    let push = sock(&ctx, SocketType::Push);
    let pull = sock(&ctx, SocketType::Pull);
    push.set_option_int(opt::SNDHWM, 3).unwrap();
    pull.set_option_int(opt::RCVHWM, 2).unwrap();
    let mon = monitor_v2(&ctx, &push, ev::ALL_OXMQ);
    link(Transport::InprocBindFirst, &push, &pull);
    let mut sent = 0;
    while push.send(&b"m"[..], DONTWAIT).is_ok() {
        sent += 1;
        assert!(sent < 100, "the pipe never filled");
    }
    assert_errno(push.send(&b"m"[..], DONTWAIT), errno::EAGAIN);
    let (full, _) = wait_for_v2(&mon, ev::HWM_REACHED);
    assert_eq!(full.values[0], sent, "value 1 is the HWM, what the pipe took");
    // PUSH blocks rather than drops: no MSG_DROPPED, no second HWM_REACHED.
    assert_nothing_within(&mon, 100);
    for _ in 0..sent {
        recv(&pull);
    }
}

#[test]
fn an_oversized_message_is_reported_dropped() {
    let _g = guard();
    let ctx = Context::new();
    let server = sock(&ctx, SocketType::Pull);
    let client = sock(&ctx, SocketType::Push);
    server.set_option_int(opt::MAXMSGSIZE, 64).unwrap();
    let mon = monitor_v2(&ctx, &server, ev::MSG_DROPPED | u64::from(ev::DISCONNECTED));
    link(Transport::Tcp, &server, &client);
    client.send(&[0u8; 65][..], 0).unwrap();
    let dropped = next_event_v2(&mon);
    assert_eq!((dropped.id, dropped.values[0]), (ev::MSG_DROPPED, drop_reason::OVERSIZE));
    assert!(dropped.remote.starts_with("tcp://127.0.0.1:"), "{dropped:?}");
    assert_eq!(next_event_v2(&mon).id, u64::from(ev::DISCONNECTED));
}

#[test]
fn conflate_replacing_a_message_is_reported_dropped() {
    let _g = guard();
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    let push = sock(&ctx, SocketType::Push);
    pull.set_option_int(opt::CONFLATE, 1).unwrap();
    push.set_option_bytes(opt::ROUTING_ID, b"P").unwrap();
    let mon = monitor_v2(&ctx, &pull, ev::MSG_DROPPED);
    link(Transport::InprocBindFirst, &pull, &push);
    for m in [&b"1"[..], b"2", b"3"] {
        push.send(m, 0).unwrap();
    }
    // The three are queued before the receive, which keeps the newest.
    std::thread::sleep(SETTLE);
    assert_eq!(recv(&pull), b"3");
    for _ in 0..2 {
        let e = next_event_v2(&mon);
        assert_eq!((e.id, e.values[0]), (ev::MSG_DROPPED, drop_reason::CONFLATE));
        assert_eq!(e.routing_id().as_deref(), Some(&b"P"[..]));
    }
    assert_nothing_within(&mon, 50);
}
