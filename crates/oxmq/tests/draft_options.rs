//! libzmq's draft socket options: ROUTER_NOTIFY, HELLO_MSG, DISCONNECT_MSG,
//! HICCUP_MSG and METADATA, as libzmq 4.3.5 built with ZMQ_BUILD_DRAFT_API
//! documents them (zmq_setsockopt(3), its test_router_notify /
//! test_hello_msg / test_disconnect_msg / test_hiccup_msg). The libzmq on
//! this machine has no draft API, so these check oxmq alone.

mod common;

use common::*;
use oxmq::{errno, opt, Context, SocketType};
use std::time::Duration;

const NOTIFY_CONNECT: i64 = 1;
const NOTIFY_DISCONNECT: i64 = 2;

#[test]
fn router_notify_is_read_everywhere_and_set_on_routers_only() {
    let _g = guard();
    let ctx = Context::new();
    for kind in [SocketType::Pub, SocketType::Dealer, SocketType::Router, SocketType::Rep] {
        assert_eq!(sock(&ctx, kind).get_option_int(opt::ROUTER_NOTIFY).unwrap(), 0, "{kind:?}");
    }
    let dealer = sock(&ctx, SocketType::Dealer);
    assert_errno(dealer.set_option_int(opt::ROUTER_NOTIFY, 1), errno::EINVAL);
    let router = sock(&ctx, SocketType::Router);
    assert_errno(router.set_option_int(opt::ROUTER_NOTIFY, 4), errno::EINVAL);
    assert_errno(router.set_option_int(opt::ROUTER_NOTIFY, -1), errno::EINVAL);
    router.set_option_int(opt::ROUTER_NOTIFY, 3).unwrap();
    assert_eq!(router.get_option_int(opt::ROUTER_NOTIFY).unwrap(), 3);
    sock(&ctx, SocketType::Rep).set_option_int(opt::ROUTER_NOTIFY, 2).unwrap();
}

fn notify_round(t: Transport, bits: i64) {
    let ctx = Context::new();
    let router = sock(&ctx, SocketType::Router);
    router.set_option_int(opt::ROUTER_NOTIFY, bits).unwrap();
    let dealer = sock(&ctx, SocketType::Dealer);
    dealer.set_option_bytes(opt::ROUTING_ID, b"d1").unwrap();
    link(t, &router, &dealer);
    if bits & NOTIFY_CONNECT != 0 {
        assert_eq!(recv_parts(&router), vec![b"d1".to_vec(), Vec::new()], "connect notice");
    }
    send(&dealer, b"hi");
    assert_eq!(recv_parts(&router), vec![b"d1".to_vec(), b"hi".to_vec()]);
    drop(dealer);
    if bits & NOTIFY_DISCONNECT != 0 {
        assert_eq!(recv_parts(&router), vec![b"d1".to_vec(), Vec::new()], "disconnect notice");
    }
    assert_nothing_within(&router, 200);
}

#[test]
fn router_notify_connect_and_disconnect_over_tcp_and_ipc() {
    let _g = guard();
    for t in [Transport::Tcp, Transport::IpcPath] {
        notify_round(t, NOTIFY_CONNECT | NOTIFY_DISCONNECT);
    }
}

#[test]
fn router_notify_bits_are_separate() {
    let _g = guard();
    notify_round(Transport::Tcp, NOTIFY_CONNECT);
    notify_round(Transport::Tcp, NOTIFY_DISCONNECT);
    notify_round(Transport::Tcp, 0);
}

#[test]
fn router_notify_on_the_connecting_router() {
    let _g = guard();
    let ctx = Context::new();
    let dealer = sock(&ctx, SocketType::Dealer);
    dealer.set_option_bytes(opt::ROUTING_ID, b"srv").unwrap();
    let router = sock(&ctx, SocketType::Router);
    router.set_option_int(opt::ROUTER_NOTIFY, 3).unwrap();
    link(Transport::Tcp, &dealer, &router);
    assert_eq!(recv_parts(&router), vec![b"srv".to_vec(), Vec::new()]);
    drop(dealer);
    assert_eq!(recv_parts(&router), vec![b"srv".to_vec(), Vec::new()]);
}

#[test]
fn message_options_take_any_bytes_and_are_not_readable() {
    let _g = guard();
    let ctx = Context::new();
    let s = sock(&ctx, SocketType::Pull);
    for o in [opt::HELLO_MSG, opt::DISCONNECT_MSG, opt::HICCUP_MSG] {
        s.set_option_bytes(o, b"x").unwrap();
        s.set_option_bytes(o, b"").unwrap();
        assert_errno(s.get_option_bytes(o), errno::EINVAL);
    }
}

#[test]
fn hello_msg_reaches_each_new_peer_first() {
    let _g = guard();
    let ctx = Context::new();
    // From a bound ROUTER to connecting DEALERs...
    let router = sock(&ctx, SocketType::Router);
    router.set_option_bytes(opt::HELLO_MSG, b"H").unwrap();
    let ep = bind_fresh(Transport::Tcp, &router);
    for _ in 0..2 {
        let d = sock(&ctx, SocketType::Dealer);
        connect_to(&ep, &d);
        assert_eq!(recv(&d), b"H");
    }
    // ...and from a connecting DEALER, ahead of what it queued before.
    let r2 = sock(&ctx, SocketType::Router);
    let ep2 = bind_fresh(Transport::Tcp, &r2);
    let d = sock(&ctx, SocketType::Dealer);
    d.set_option_bytes(opt::ROUTING_ID, b"d").unwrap();
    d.set_option_bytes(opt::HELLO_MSG, b"HELLO").unwrap();
    connect_to(&ep2, &d);
    send(&d, b"queued");
    assert_eq!(recv_parts(&r2), vec![b"d".to_vec(), b"HELLO".to_vec()]);
    assert_eq!(recv_parts(&r2), vec![b"d".to_vec(), b"queued".to_vec()]);
    // An empty value clears it.
    let d2 = sock(&ctx, SocketType::Dealer);
    d2.set_option_bytes(opt::ROUTING_ID, b"e").unwrap();
    d2.set_option_bytes(opt::HELLO_MSG, b"HELLO").unwrap();
    d2.set_option_bytes(opt::HELLO_MSG, b"").unwrap();
    connect_to(&ep2, &d2);
    send(&d2, b"first");
    assert_eq!(recv_parts(&r2), vec![b"e".to_vec(), b"first".to_vec()]);
    // Only the types libzmq lets send one (ROUTER, DEALER here): not a PUSH.
    let pull = sock(&ctx, SocketType::Pull);
    let ep3 = bind_fresh(Transport::Tcp, &pull);
    let push = sock(&ctx, SocketType::Push);
    push.set_option_bytes(opt::HELLO_MSG, b"HELLO").unwrap();
    connect_to(&ep3, &push);
    send(&push, b"data");
    assert_eq!(recv(&pull), b"data");
}

#[test]
fn hello_msg_under_curve() {
    let _g = guard();
    let ctx = Context::new();
    let (spub, ssec) = oxmq::security::curve_keypair().unwrap();
    let (cpub, csec) = oxmq::security::curve_keypair().unwrap();
    let router = sock(&ctx, SocketType::Router);
    router.set_option_int(opt::CURVE_SERVER, 1).unwrap();
    router.set_option_bytes(opt::CURVE_SECRETKEY, &ssec[..]).unwrap();
    router.set_option_bytes(opt::HELLO_MSG, b"boxed hello").unwrap();
    let ep = bind_fresh(Transport::Tcp, &router);
    let d = sock(&ctx, SocketType::Dealer);
    d.set_option_bytes(opt::CURVE_SERVERKEY, &spub).unwrap();
    d.set_option_bytes(opt::CURVE_PUBLICKEY, &cpub).unwrap();
    d.set_option_bytes(opt::CURVE_SECRETKEY, &csec[..]).unwrap();
    connect_to(&ep, &d);
    assert_eq!(recv(&d), b"boxed hello");
}

#[test]
fn disconnect_msg_is_the_last_message_of_a_departed_peer() {
    let _g = guard();
    let ctx = Context::new();
    let router = sock(&ctx, SocketType::Router);
    router.set_option_bytes(opt::DISCONNECT_MSG, b"BYE").unwrap();
    let ep = bind_fresh(Transport::Tcp, &router);
    let d = sock(&ctx, SocketType::Dealer);
    d.set_option_bytes(opt::ROUTING_ID, b"d").unwrap();
    connect_to(&ep, &d);
    send(&d, b"x");
    assert_eq!(recv_parts(&router), vec![b"d".to_vec(), b"x".to_vec()]);
    drop(d);
    assert_eq!(recv_parts(&router), vec![b"d".to_vec(), b"BYE".to_vec()]);
    assert_nothing_within(&router, 200);
    // With ROUTER_NOTIFY as well: the notice, then the message.
    router.set_option_int(opt::ROUTER_NOTIFY, NOTIFY_DISCONNECT).unwrap();
    let ep2 = bind_fresh(Transport::Tcp, &router);
    let d = sock(&ctx, SocketType::Dealer);
    d.set_option_bytes(opt::ROUTING_ID, b"d2").unwrap();
    connect_to(&ep2, &d);
    send(&d, b"y");
    assert_eq!(recv_parts(&router), vec![b"d2".to_vec(), b"y".to_vec()]);
    drop(d);
    assert_eq!(recv_parts(&router), vec![b"d2".to_vec(), Vec::new()]);
    assert_eq!(recv_parts(&router), vec![b"d2".to_vec(), b"BYE".to_vec()]);
}

#[test]
fn disconnect_msg_is_not_for_a_dealer() {
    let _g = guard();
    let ctx = Context::new();
    let router = sock(&ctx, SocketType::Router);
    let ep = bind_fresh(Transport::Tcp, &router);
    let d = sock(&ctx, SocketType::Dealer);
    d.set_option_bytes(opt::DISCONNECT_MSG, b"BYE").unwrap();
    connect_to(&ep, &d);
    send(&d, b"x");
    let _ = recv_parts(&router);
    drop(router);
    assert_nothing_within(&d, 300);
}

#[test]
fn hiccup_msg_tells_a_dealer_its_connection_dropped() {
    let _g = guard();
    let ctx = Context::new();
    let port = free_tcp_port();
    let ep = format!("tcp://127.0.0.1:{port}");
    let server = sock(&ctx, SocketType::Router);
    server.bind(&ep).unwrap();
    let client = sock(&ctx, SocketType::Dealer);
    client.set_option_bytes(opt::HELLO_MSG, b"HELLO").unwrap();
    client.set_option_bytes(opt::HICCUP_MSG, b"HICCUP").unwrap();
    client.set_option_int(opt::RECONNECT_IVL, 50).unwrap();
    client.connect(&ep).unwrap();
    assert_eq!(recv_parts(&server)[1], b"HELLO");
    drop(server);
    assert_eq!(recv(&client), b"HICCUP");
    // It reconnects; the new server hears HELLO again.
    let server = sock(&ctx, SocketType::Router);
    assert!(eventually(Duration::from_secs(5), || server.bind(&ep).is_ok()));
    assert_eq!(recv_parts(&server)[1], b"HELLO");
    assert_nothing_within(&client, 100);
}

#[test]
fn hiccup_msg_is_not_for_a_router() {
    let _g = guard();
    let ctx = Context::new();
    let server = sock(&ctx, SocketType::Dealer);
    server.set_option_bytes(opt::ROUTING_ID, b"s").unwrap();
    let ep = bind_fresh(Transport::Tcp, &server);
    let client = sock(&ctx, SocketType::Router);
    client.set_option_bytes(opt::HICCUP_MSG, b"HICCUP").unwrap();
    connect_to(&ep, &client);
    send(&server, b"up");
    assert_eq!(recv_parts(&client), vec![b"s".to_vec(), b"up".to_vec()]);
    drop(server);
    assert_nothing_within(&client, 300);
}

#[test]
fn metadata_values_are_checked_as_libzmq_checks_them() {
    let _g = guard();
    let ctx = Context::new();
    let s = sock(&ctx, SocketType::Dealer);
    s.set_option_bytes(opt::METADATA, b"X-foo:bar").unwrap();
    s.set_option_bytes(opt::METADATA, b"X-empty-is-not-ok:v").unwrap();
    for bad in [&b""[..], b"foo:bar", b"X-foo", b"X-foo:", b":bar", b"X-a:"] {
        assert_errno(s.set_option_bytes(opt::METADATA, bad), errno::EINVAL);
    }
    // Four bytes is an int to libzmq's option code, which refuses it.
    assert_errno(s.set_option_bytes(opt::METADATA, b"X-:b"), errno::EINVAL);
    assert_errno(s.get_option_bytes(opt::METADATA), errno::EINVAL);
}

#[test]
fn metadata_travels_in_ready_and_reads_back_as_a_property() {
    let _g = guard();
    let ctx = Context::new();
    let router = sock(&ctx, SocketType::Router);
    let ep = bind_fresh(Transport::Tcp, &router);
    let d = sock(&ctx, SocketType::Dealer);
    d.set_option_bytes(opt::METADATA, b"X-foo:bar").unwrap();
    d.set_option_bytes(opt::METADATA, b"X-foo:second value is ignored").unwrap();
    d.set_option_bytes(opt::METADATA, b"X-Hello:World:with colon").unwrap();
    connect_to(&ep, &d);
    send(&d, b"m");
    assert_eq!(recv_parts(&router)[1], b"m");
    assert_eq!(router.peer_property("X-foo").as_deref(), Some(&b"bar"[..]));
    assert_eq!(router.peer_property("X-Hello").as_deref(), Some(&b"World:with colon"[..]));

    // On the wire: READY carries them after the basic properties.
    let pull = sock(&ctx, SocketType::Pull);
    pull.set_option_bytes(opt::METADATA, b"X-svc:pull").unwrap();
    let ep = bind_fresh(Transport::Tcp, &pull);
    let mut raw = RawPeer::connect(&ep);
    let props = raw.handshake("PUSH", None).unwrap();
    assert_eq!(props[0].0, "Socket-Type");
    assert!(props.contains(&("X-svc".to_string(), b"pull".to_vec())), "{props:?}");
}

#[test]
fn metadata_under_curve_goes_in_initiate() {
    let _g = guard();
    let ctx = Context::new();
    let (spub, ssec) = oxmq::security::curve_keypair().unwrap();
    let (cpub, csec) = oxmq::security::curve_keypair().unwrap();
    let server = sock(&ctx, SocketType::Pull);
    server.set_option_int(opt::CURVE_SERVER, 1).unwrap();
    server.set_option_bytes(opt::CURVE_SECRETKEY, &ssec[..]).unwrap();
    let ep = bind_fresh(Transport::Tcp, &server);
    let client = sock(&ctx, SocketType::Push);
    client.set_option_bytes(opt::CURVE_SERVERKEY, &spub).unwrap();
    client.set_option_bytes(opt::CURVE_PUBLICKEY, &cpub).unwrap();
    client.set_option_bytes(opt::CURVE_SECRETKEY, &csec[..]).unwrap();
    client.set_option_bytes(opt::METADATA, b"X-tenant:blue").unwrap();
    connect_to(&ep, &client);
    send(&client, b"p");
    assert_eq!(recv(&server), b"p");
    assert_eq!(server.peer_property("X-tenant").as_deref(), Some(&b"blue"[..]));
}

#[test]
fn hello_msg_over_inproc_both_orders_and_both_ways() {
    let _g = guard();
    let ctx = Context::new();
    for t in [Transport::InprocBindFirst, Transport::InprocConnectFirst] {
        let router = sock(&ctx, SocketType::Router);
        router.set_option_bytes(opt::HELLO_MSG, b"from router").unwrap();
        let dealer = sock(&ctx, SocketType::Dealer);
        dealer.set_option_bytes(opt::ROUTING_ID, b"d").unwrap();
        dealer.set_option_bytes(opt::HELLO_MSG, b"from dealer").unwrap();
        link(t, &router, &dealer);
        assert_eq!(recv(&dealer), b"from router", "{t:?}");
        assert_eq!(recv_parts(&router), vec![b"d".to_vec(), b"from dealer".to_vec()], "{t:?}");
        send(&dealer, b"after");
        assert_eq!(recv_parts(&router), vec![b"d".to_vec(), b"after".to_vec()], "{t:?}");
    }
}

#[test]
fn client_and_server_take_the_message_options_as_libzmq_does() {
    let _g = guard();
    let ctx = Context::new();
    let port = free_tcp_port();
    let ep = format!("tcp://127.0.0.1:{port}");
    let server = sock(&ctx, SocketType::Server);
    server.set_option_bytes(opt::HELLO_MSG, b"server hello").unwrap();
    server.set_option_bytes(opt::DISCONNECT_MSG, b"client gone").unwrap();
    server.bind(&ep).unwrap();
    let client = sock(&ctx, SocketType::Client);
    client.set_option_bytes(opt::HELLO_MSG, b"client hello").unwrap();
    client.set_option_bytes(opt::HICCUP_MSG, b"server gone").unwrap();
    client.connect(&ep).unwrap();
    assert_eq!(recv(&client), b"server hello");
    let m = server.recv(0).unwrap();
    assert_eq!(m.to_vec(), b"client hello");
    let rid = m.routing_id();
    assert_ne!(rid, 0);
    // A second client goes away: the SERVER hears it from that peer.
    let other = sock(&ctx, SocketType::Client);
    other.connect(&ep).unwrap();
    assert_eq!(recv(&other), b"server hello");
    other.send("o", 0).unwrap();
    let o = server.recv(0).unwrap();
    assert_eq!(o.to_vec(), b"o");
    drop(other);
    let gone = server.recv(0).unwrap();
    assert_eq!((gone.to_vec(), gone.routing_id()), (b"client gone".to_vec(), o.routing_id()));
    // The server goes away: the CLIENT hears its hiccup.
    drop(server);
    assert_eq!(recv(&client), b"server gone");
}

/// DISCONNECT_MSG over inproc, as libzmq delivers it: the binder's message is
/// set on each connecter's pipe (whichever of bind and connect came first), and
/// the connecter leaves it as its last message when it closes or disconnects.
#[test]
fn disconnect_msg_over_inproc_when_the_connecter_goes() {
    let _g = guard();
    let ctx = Context::new();
    for t in [Transport::InprocBindFirst, Transport::InprocConnectFirst] {
        for by_disconnect in [false, true] {
            let router = sock(&ctx, SocketType::Router);
            router.set_option_bytes(opt::DISCONNECT_MSG, b"BYE").unwrap();
            let d = sock(&ctx, SocketType::Dealer);
            d.set_option_bytes(opt::ROUTING_ID, b"d").unwrap();
            let ep = link(t, &router, &d);
            send(&d, b"x");
            assert_eq!(recv_parts(&router), vec![b"d".to_vec(), b"x".to_vec()], "{t:?}");
            if by_disconnect {
                d.disconnect(&ep).unwrap();
            } else {
                drop(d);
            }
            assert_eq!(recv_parts(&router), vec![b"d".to_vec(), b"BYE".to_vec()], "{t:?} {by_disconnect}");
            assert_nothing_within(&router, 100);
        }
    }
}

/// Only the binder hears it over inproc (the message lives on the connecter's
/// pipe), and a binder type that takes no DISCONNECT_MSG hears nothing.
#[test]
fn disconnect_msg_over_inproc_is_for_the_binder_only() {
    let _g = guard();
    let ctx = Context::new();
    // The connecting ROUTER has the option; the binding DEALER goes away.
    let dealer = sock(&ctx, SocketType::Dealer);
    let router = sock(&ctx, SocketType::Router);
    router.set_option_bytes(opt::DISCONNECT_MSG, b"BYE").unwrap();
    let ep = inproc_endpoint();
    dealer.bind(&ep).unwrap();
    router.connect(&ep).unwrap();
    send(&dealer, b"hi");
    assert_eq!(recv_parts(&router).len(), 2);
    drop(dealer);
    assert_nothing_within(&router, 200);
}

/// Over tcp libzmq writes DISCONNECT_MSG on accepted connections only: a
/// ROUTER that connected does not get it when its peer goes away.
#[test]
fn disconnect_msg_over_tcp_is_for_accepted_connections_only() {
    let _g = guard();
    let ctx = Context::new();
    let d = sock(&ctx, SocketType::Dealer);
    let ep = bind_fresh(Transport::Tcp, &d);
    let router = sock(&ctx, SocketType::Router);
    router.set_option_bytes(opt::DISCONNECT_MSG, b"BYE").unwrap();
    router.set_option_int(opt::RECONNECT_IVL, -1).unwrap();
    connect_to(&ep, &router);
    send(&d, b"hi");
    assert_eq!(recv_parts(&router).len(), 2);
    drop(d);
    assert_nothing_within(&router, 300);
}

/// The thread-safe SERVER hears an inproc CLIENT leave the same way.
#[test]
fn disconnect_msg_over_inproc_reaches_a_server() {
    let _g = guard();
    let ctx = Context::new();
    let server = sock(&ctx, SocketType::Server);
    server.set_option_bytes(opt::DISCONNECT_MSG, b"client gone").unwrap();
    let ep = inproc_endpoint();
    server.bind(&ep).unwrap();
    let client = sock(&ctx, SocketType::Client);
    client.connect(&ep).unwrap();
    client.send("c", 0).unwrap();
    let m = server.recv(0).unwrap();
    assert_eq!(m.to_vec(), b"c");
    drop(client);
    let gone = server.recv(0).unwrap();
    assert_eq!((gone.to_vec(), gone.routing_id()), (b"client gone".to_vec(), m.routing_id()));
}
