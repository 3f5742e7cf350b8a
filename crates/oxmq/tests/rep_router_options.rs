//! REP is a ROUTER underneath (as in libzmq 4.3.5), so ROUTER's options act on
//! it. Each case mirrors a measurement against real libzmq (pyzmq's bundled
//! 4.3.5): duplicate routing ids are refused unless ROUTER_HANDOVER, which
//! gives the id to the newest connection; PROBE_ROUTER sends an empty message
//! to a new peer; ROUTER_MANDATORY does not make a reply to a vanished peer
//! fail (libzmq routes the envelope while receiving the request).

mod common;

use common::*;
use oxmq::{errno, opt, Context, SocketType};

fn req_with_id(ctx: &Context, ep: &str, id: &[u8]) -> oxmq::Socket {
    let s = sock(ctx, SocketType::Req);
    s.set_option_bytes(opt::ROUTING_ID, id).unwrap();
    s.connect(ep).unwrap();
    s
}

#[test]
fn rep_refuses_duplicate_routing_id_without_handover() {
    let _g = guard();
    let ctx = Context::new();
    let rep = sock(&ctx, SocketType::Rep);
    let ep = bind_fresh(Transport::Tcp, &rep);
    let a = req_with_id(&ctx, &ep, b"X");
    send(&a, b"from a");
    assert_eq!(recv(&rep), b"from a");
    send(&rep, b"to a");
    assert_eq!(recv(&a), b"to a");
    let b = req_with_id(&ctx, &ep, b"X");
    send(&b, b"from b");
    assert_nothing_within(&rep, 300);
    send(&a, b"from a again");
    assert_eq!(recv(&rep), b"from a again", "the first holder of the id keeps it");
    send(&rep, b"to a again");
    assert_eq!(recv(&a), b"to a again");
}

#[test]
fn rep_handover_gives_id_to_newest_connection() {
    let _g = guard();
    let ctx = Context::new();
    let rep = sock(&ctx, SocketType::Rep);
    rep.set_option_int(opt::ROUTER_HANDOVER, 1).unwrap();
    let ep = bind_fresh(Transport::Tcp, &rep);
    let a = req_with_id(&ctx, &ep, b"X");
    send(&a, b"from a");
    assert_eq!(recv(&rep), b"from a");
    send(&rep, b"to a");
    assert_eq!(recv(&a), b"to a");
    let b = req_with_id(&ctx, &ep, b"X");
    send(&b, b"from b");
    assert_eq!(recv(&rep), b"from b");
    send(&rep, b"to b");
    assert_eq!(recv(&b), b"to b");
}

#[test]
fn rep_probe_router_sends_empty_message_to_new_peer() {
    let _g = guard();
    let ctx = Context::new();
    for probe in [0, 1] {
        let dealer = sock(&ctx, SocketType::Dealer);
        let ep = bind_fresh(Transport::Tcp, &dealer);
        let rep = sock(&ctx, SocketType::Rep);
        rep.set_option_int(opt::PROBE_ROUTER, probe).unwrap();
        rep.connect(&ep).unwrap();
        if probe == 1 {
            assert_eq!(recv_parts(&dealer), vec![Vec::<u8>::new()], "the probe");
        } else {
            assert_nothing_within(&dealer, 200);
        }
        send_parts(&dealer, &[b"", b"q"]);
        assert_eq!(recv(&rep), b"q");
        send(&rep, b"a");
        assert_eq!(recv_parts(&dealer), vec![b"".to_vec(), b"a".to_vec()]);
    }
}

#[test]
fn rep_mandatory_reply_to_gone_peer_is_dropped() {
    let _g = guard();
    let ctx = Context::new();
    let rep = sock(&ctx, SocketType::Rep);
    rep.set_option_int(opt::ROUTER_MANDATORY, 1).unwrap();
    let ep = bind_fresh(Transport::Tcp, &rep);
    let req = req_with_id(&ctx, &ep, b"gone");
    send(&req, b"hi");
    assert_eq!(recv(&rep), b"hi");
    drop(req);
    // Let the disconnection reach the REP before it replies.
    std::thread::sleep(std::time::Duration::from_millis(300));
    send(&rep, b"reply");
    assert_errno(rep.send("again", 0), errno::EFSM);
    assert_nothing_within(&rep, 100);
}

/// As libzmq's REP, a REP holding only malformed requests polls readable
/// until a receive finds and drops them (measured: EVENTS 1, recv EAGAIN,
/// EVENTS 0).
fn drain_malformed(rep: &oxmq::Socket) {
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_errno(rep.recv(oxmq::DONTWAIT), errno::EAGAIN);
    assert_nothing_within(rep, 100);
}

/// libzmq 4.3.5 accepts ROUTER_RAW on a REP (-1 is EINVAL): its connections
/// become raw, and as raw data never carries a delimiter frame, the REP
/// receives nothing, neither from a plain TCP client nor from a ZMTP peer.
#[test]
fn rep_router_raw_is_accepted_and_receives_nothing() {
    let _g = guard();
    let ctx = Context::new();
    let rep = sock(&ctx, SocketType::Rep);
    assert_errno(rep.set_option_int(opt::ROUTER_RAW, -1), errno::EINVAL);
    rep.set_option_int(opt::ROUTER_RAW, 0).unwrap();
    rep.set_option_int(opt::ROUTER_RAW, 1).unwrap();
    let ep = bind_fresh(Transport::Tcp, &rep);
    let mut raw = std::net::TcpStream::connect(("127.0.0.1", tcp_port(&ep))).unwrap();
    raw.set_read_timeout(Some(std::time::Duration::from_millis(200))).unwrap();
    let mut buf = [0u8; 64];
    use std::io::{Read, Write};
    assert!(raw.read(&mut buf).is_err(), "a raw socket sends no greeting");
    raw.write_all(b"hello").unwrap();
    drain_malformed(&rep);
    let dealer = sock(&ctx, SocketType::Dealer);
    dealer.connect(&ep).unwrap();
    send_parts(&dealer, &[b"", b"q"]);
    drain_malformed(&rep);
    assert_errno(rep.send("x", 0), errno::EFSM);
}
