//! ZMTP 3.1 heartbeats (PING/PONG, HEARTBEAT_IVL/TIMEOUT/TTL).

mod common;

use common::*;
use oxmq::{opt, Context, SocketType};
use std::time::{Duration, Instant};

fn ping_frame(ttl_ds: u16, context: &[u8]) -> Vec<u8> {
    let mut d = ttl_ds.to_be_bytes().to_vec();
    d.extend_from_slice(context);
    frame(0x04, &command_body("PING", &d))
}

#[test]
fn idle_connection_with_heartbeats_stays_up() {
    let _g = guard();
    let ctx = Context::new();
    let router = sock(&ctx, SocketType::Router);
    let dealer = sock(&ctx, SocketType::Dealer);
    for s in [&router, &dealer] {
        s.set_option_int(opt::HEARTBEAT_IVL, 100).unwrap();
        s.set_option_int(opt::HEARTBEAT_TIMEOUT, 300).unwrap();
    }
    link(Transport::Tcp, &router, &dealer);
    send(&dealer, b"before idle");
    let first = recv_parts(&router);
    let id = first[0].clone();
    assert_eq!(id.len(), 5, "generated id");
    // Idle for several timeouts: heartbeats keep it alive. (The sleep is the
    // behaviour under test, not synchronisation.)
    std::thread::sleep(Duration::from_millis(1200));
    send(&dealer, b"after idle");
    let second = recv_parts(&router);
    assert_eq!(second[1], b"after idle");
    assert_eq!(second[0], id, "same connection (a reconnect would get a new generated routing id)");
    send_parts(&router, &[&id, b"reply"]);
    assert_eq!(recv(&dealer), b"reply");
}

#[test]
fn silent_raw_peer_disconnected_by_heartbeat_timeout() {
    let _g = guard();
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    pull.set_option_int(opt::HEARTBEAT_IVL, 100).unwrap();
    pull.set_option_int(opt::HEARTBEAT_TIMEOUT, 300).unwrap();
    let ep = bind_fresh(Transport::Tcp, &pull);
    let mut peer = RawPeer::connect(&ep);
    peer.handshake("PUSH", None).unwrap();
    // Read PINGs (never answering) until the server hangs up.
    peer.stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let start = Instant::now();
    let mut pings = 0;
    while let Ok(f) = peer.read_frame() {
        assert!(f.is_command(), "only commands expected, got {f:?}");
        assert_eq!(f.command_name(), b"PING", "unexpected command {f:?}");
        let data = f.command_data();
        assert!(data.len() >= 2 && data.len() <= 18, "PING has TTL + context(0..16)");
        pings += 1;
        assert!(start.elapsed() < Duration::from_secs(5), "a silent peer was not disconnected");
    }
    assert!(pings >= 1, "the server should have sent PING before timing out");
    assert!(start.elapsed() < Duration::from_secs(5));
    // The socket still works.
    let push = sock(&ctx, SocketType::Push);
    push.connect(&ep).unwrap();
    send(&push, b"ok");
    assert_eq!(recv(&pull), b"ok");
}

#[test]
fn raw_peer_answering_pongs_stays_connected() {
    let _g = guard();
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    pull.set_option_int(opt::HEARTBEAT_IVL, 100).unwrap();
    pull.set_option_int(opt::HEARTBEAT_TIMEOUT, 300).unwrap();
    let ep = bind_fresh(Transport::Tcp, &pull);
    let mut peer = RawPeer::connect(&ep);
    peer.handshake("PUSH", None).unwrap();
    peer.stream.set_read_timeout(Some(Duration::from_millis(1000))).unwrap();
    let start = Instant::now();
    let mut pongs = 0;
    while start.elapsed() < Duration::from_millis(1500) {
        let f = peer.read_frame().expect("connection must stay up while we answer PINGs");
        if f.is_command() && f.command_name() == b"PING" {
            let ctx_bytes = &f.command_data()[2..];
            peer.write(&frame(0x04, &command_body("PONG", ctx_bytes))).unwrap();
            pongs += 1;
        }
    }
    assert!(pongs >= 3, "expected regular PINGs every ~100 ms, answered {pongs}");
    peer.write(&frame(0, b"still here")).unwrap();
    assert_eq!(recv(&pull), b"still here");
}

#[test]
fn oxmq_answers_ping_with_pong_echoing_context() {
    let _g = guard();
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull); // no heartbeat options at all
    let ep = bind_fresh(Transport::Tcp, &pull);
    let mut peer = RawPeer::connect(&ep);
    peer.handshake("PUSH", None).unwrap();
    peer.write(&ping_frame(0, b"ctx-123")).unwrap();
    let f = peer.read_frame().unwrap();
    assert!(f.is_command());
    assert_eq!(f.command_name(), b"PONG");
    assert_eq!(f.command_data(), b"ctx-123");
    // Empty context.
    peer.write(&ping_frame(0, b"")).unwrap();
    let f = peer.read_frame().unwrap();
    assert_eq!((f.command_name(), f.command_data()), (&b"PONG"[..], &b""[..]));
    // PING/PONG never surface as messages.
    peer.write(&frame(0, b"data")).unwrap();
    assert_eq!(recv(&pull), b"data");
    assert_nothing(&pull);
}

#[test]
fn peer_ttl_closes_connection_when_peer_goes_silent() {
    let _g = guard();
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull); // no heartbeat options: TTL comes from the peer
    let ep = bind_fresh(Transport::Tcp, &pull);
    let mut peer = RawPeer::connect(&ep);
    peer.handshake("PUSH", None).unwrap();
    peer.write(&ping_frame(3, b"")).unwrap(); // TTL 300 ms
    let f = peer.read_frame().unwrap();
    assert_eq!(f.command_name(), b"PONG");
    assert!(peer.wait_closed(Duration::from_secs(5)), "peer's PING TTL expired but the connection stayed open");
}

#[test]
fn heartbeat_ttl_is_advertised_in_ping() {
    let _g = guard();
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    pull.set_option_int(opt::HEARTBEAT_IVL, 100).unwrap();
    pull.set_option_int(opt::HEARTBEAT_TTL, 2000).unwrap();
    let ep = bind_fresh(Transport::Tcp, &pull);
    let mut peer = RawPeer::connect(&ep);
    peer.handshake("PUSH", None).unwrap();
    let f = peer.read_frame().unwrap();
    assert_eq!(f.command_name(), b"PING");
    assert_eq!(&f.command_data()[..2], &20u16.to_be_bytes(), "TTL in deciseconds");
}

#[test]
fn heartbeats_with_oxmq_peer_over_ipc() {
    let _g = guard();
    let ctx = Context::new();
    let a = sock(&ctx, SocketType::Pair);
    let b = sock(&ctx, SocketType::Pair);
    for s in [&a, &b] {
        s.set_option_int(opt::HEARTBEAT_IVL, 50).unwrap();
        s.set_option_int(opt::HEARTBEAT_TIMEOUT, 200).unwrap();
    }
    link(Transport::IpcPath, &a, &b);
    for i in 0..5u8 {
        send(&a, &[i]);
        assert_eq!(recv(&b), vec![i]);
        std::thread::sleep(Duration::from_millis(150));
    }
}
