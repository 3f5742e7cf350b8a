//! Wire-level behaviour against hand-driven peers: ZMTP 3.0 (legacy
//! subscriptions) versus 3.1 (SUBSCRIBE/CANCEL commands), and what oxmq
//! writes on the wire for each.

mod common;
use common::*;
use oxmq::{opt, Context, SocketType};
use std::net::TcpListener;
use std::time::Duration;

/// A greeting announcing ZMTP 3.`minor`.
fn greeting_minor(minor: u8) -> Vec<u8> {
    let mut g = greeting("NULL");
    g[11] = minor;
    g
}

/// Accept one connection from `sock` (which connects to a raw listener),
/// do the NULL handshake as `peer_type` announcing ZMTP 3.`minor`.
fn raw_server(sock: &oxmq::Socket, minor: u8, peer_type: &str) -> RawPeer {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    sock.connect(&format!("tcp://127.0.0.1:{port}")).unwrap();
    let (stream, _) = listener.accept().unwrap();
    let mut peer = RawPeer::from_stream(stream);
    peer.write(&greeting_minor(minor)).unwrap();
    let g = peer.read_greeting().unwrap();
    assert_eq!(g[10..12], [3, 1], "oxmq announces ZMTP 3.1");
    peer.write(&ready(&[("Socket-Type", peer_type.as_bytes())])).unwrap();
    let f = peer.read_frame().unwrap();
    assert_eq!(f.command_name(), b"READY");
    peer
}

#[test]
fn sub_sends_subscribe_command_to_zmtp31_publisher() {
    let _g = guard();
    let ctx = Context::new();
    let sub = sock(&ctx, SocketType::Sub);
    sub.set_option_bytes(opt::SUBSCRIBE, b"weather").unwrap();
    let mut peer = raw_server(&sub, 1, "PUB");
    let f = peer.read_frame().unwrap();
    assert!(f.is_command(), "3.1 peers get a command, got {f:?}");
    assert_eq!(f.command_name(), b"SUBSCRIBE");
    assert_eq!(f.command_data(), b"weather");
    sub.set_option_bytes(opt::UNSUBSCRIBE, b"weather").unwrap();
    let f = peer.read_frame().unwrap();
    assert_eq!(f.command_name(), b"CANCEL");
    assert_eq!(f.command_data(), b"weather");
}

#[test]
fn sub_sends_legacy_subscription_to_zmtp30_publisher() {
    let _g = guard();
    let ctx = Context::new();
    let sub = sock(&ctx, SocketType::Sub);
    sub.set_option_bytes(opt::SUBSCRIBE, b"weather").unwrap();
    let mut peer = raw_server(&sub, 0, "PUB");
    let f = peer.read_frame().unwrap();
    assert!(!f.is_command(), "3.0 peers get a message, got {f:?}");
    assert_eq!(f.body, b"\x01weather");
    // The data path works with a 3.0 publisher.
    peer.write(&frame(0, b"weather 22C")).unwrap();
    assert_eq!(recv(&sub), b"weather 22C");
    sub.set_option_bytes(opt::UNSUBSCRIBE, b"weather").unwrap();
    let f = peer.read_frame().unwrap();
    assert_eq!(f.body, b"\x00weather");
}

/// A PUB accepts both subscription forms, from 3.0 and 3.1 peers alike.
fn pub_filters_for_raw_subscriber(minor: u8, legacy: bool) {
    let ctx = Context::new();
    let publisher = sock(&ctx, SocketType::Pub);
    let ep = bind_fresh(Transport::Tcp, &publisher);
    let mut peer = RawPeer::connect(&ep);
    peer.write(&greeting_minor(minor)).unwrap();
    peer.read_greeting().unwrap();
    peer.write(&ready(&[("Socket-Type", b"SUB")])).unwrap();
    assert_eq!(peer.read_frame().unwrap().command_name(), b"READY");
    if legacy {
        peer.write(&frame(0, b"\x01A")).unwrap();
    } else {
        peer.write(&frame(4, &command_body("SUBSCRIBE", b"A"))).unwrap();
    }
    // Publish until the subscription has taken effect, then check filtering.
    let mut got = None;
    assert!(eventually(Duration::from_secs(5), || {
        publisher.send(&b"B-ignored"[..], 0).unwrap();
        publisher.send(&b"A-1"[..], 0).unwrap();
        peer.stream.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
        match peer.read_frame() {
            Ok(f) => {
                got = Some(f.body);
                true
            }
            Err(_) => false,
        }
    }));
    assert_eq!(got.unwrap(), b"A-1", "only matching messages reach the subscriber");
}

#[test]
fn pub_accepts_legacy_subscription_from_zmtp30_peer() {
    let _g = guard();
    pub_filters_for_raw_subscriber(0, true);
}

#[test]
fn pub_accepts_subscribe_command_from_zmtp31_peer() {
    let _g = guard();
    pub_filters_for_raw_subscriber(1, false);
}

#[test]
fn pub_accepts_legacy_subscription_from_zmtp31_peer() {
    let _g = guard();
    pub_filters_for_raw_subscriber(1, true);
}

#[test]
fn dealer_ready_carries_socket_type_and_empty_identity() {
    let _g = guard();
    let ctx = Context::new();
    let dealer = sock(&ctx, SocketType::Dealer);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    dealer.connect(&format!("tcp://127.0.0.1:{port}")).unwrap();
    let (stream, _) = listener.accept().unwrap();
    let mut peer = RawPeer::from_stream(stream);
    let props = peer.handshake("ROUTER", None).unwrap();
    assert_eq!(props, vec![("Socket-Type".to_string(), b"DEALER".to_vec()), ("Identity".to_string(), Vec::new())]);
}

#[test]
fn push_ready_has_no_identity_and_messages_use_short_and_long_frames() {
    let _g = guard();
    let ctx = Context::new();
    let push = sock(&ctx, SocketType::Push);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    push.connect(&format!("tcp://127.0.0.1:{port}")).unwrap();
    let (stream, _) = listener.accept().unwrap();
    let mut peer = RawPeer::from_stream(stream);
    let props = peer.handshake("PULL", None).unwrap();
    assert_eq!(props, vec![("Socket-Type".to_string(), b"PUSH".to_vec())]);
    let long = vec![b'x'; 256];
    push.send_multipart([&b"short"[..], &long[..]], 0).unwrap();
    let f1 = peer.read_frame().unwrap();
    assert_eq!(f1.flags, 0x01, "short frame with MORE");
    assert_eq!(f1.body, b"short");
    let f2 = peer.read_frame().unwrap();
    assert_eq!(f2.flags, 0x02, "long frame, last");
    assert_eq!(f2.body, long);
}

#[test]
fn peer_error_command_closes_the_connection() {
    let _g = guard();
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    let ep = bind_fresh(Transport::Tcp, &pull);
    let mut peer = RawPeer::connect(&ep);
    peer.handshake("PUSH", None).unwrap();
    peer.write(&frame(4, &command_body("ERROR", b"\x0bgoing away."))).unwrap();
    assert!(peer.wait_closed(Duration::from_secs(5)), "ERROR is fatal to the connection");
    // The socket still serves others.
    let push = sock(&ctx, SocketType::Push);
    push.connect(&ep).unwrap();
    send(&push, b"still here");
    assert_eq!(recv(&pull), b"still here");
}

#[test]
fn received_messages_know_their_peers_ready_properties() {
    let _g = guard();
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    let ep = bind_fresh(Transport::Tcp, &pull);
    let mut peer = RawPeer::connect(&ep);
    peer.write(&greeting("NULL")).unwrap();
    peer.read_greeting().unwrap();
    peer.write(&ready(&[("Socket-Type", b"PUSH"), ("X-Hello", b"world")])).unwrap();
    peer.read_frame().unwrap();
    peer.write(&frame(0, b"m")).unwrap();
    assert_eq!(recv(&pull), b"m");
    assert_eq!(pull.peer_property("Socket-Type").as_deref(), Some(&b"PUSH"[..]));
    assert_eq!(pull.peer_property("x-hello").as_deref(), Some(&b"world"[..]), "names are case-insensitive");
    assert_eq!(pull.peer_property("Peer-Address").as_deref(), Some(&b"127.0.0.1"[..]));
    assert_eq!(pull.peer_property("Nope"), None);
}

#[test]
fn inproc_messages_have_no_peer_properties() {
    let _g = guard();
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    let push = sock(&ctx, SocketType::Push);
    link(Transport::InprocBindFirst, &pull, &push);
    send(&push, b"m");
    assert_eq!(recv(&pull), b"m");
    assert_eq!(pull.peer_property("Socket-Type"), None);
}

/// RFC 37: `traffic = *(command / message)`, so a command never comes
/// between two frames of one message. Multipart messages of 50 frames of
/// 64 KiB cross many write batches while PINGs (HEARTBEAT_IVL 1 ms) and
/// PONGs (for the peer's PINGs, sent every few frames) fall due.
#[test]
fn heartbeat_commands_never_split_a_multipart_message() {
    const MESSAGES: usize = 16;
    const FRAMES: usize = 50;
    const FRAME: usize = 64 * 1024;
    let _g = guard();
    let ctx = Context::new();
    let push = sock(&ctx, SocketType::Push);
    push.set_option_int(opt::HEARTBEAT_IVL, 1).unwrap();
    // The peer answers, but not within the interval it would default to.
    push.set_option_int(opt::HEARTBEAT_TIMEOUT, 30_000).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    push.connect(&format!("tcp://127.0.0.1:{port}")).unwrap();
    let (stream, _) = listener.accept().unwrap();
    let mut peer = RawPeer::from_stream(stream);
    peer.handshake("PULL", None).unwrap();
    for m in 0..MESSAGES {
        let parts: Vec<Vec<u8>> = (0..FRAMES).map(|f| vec![(m * FRAMES + f) as u8; FRAME]).collect();
        push.send_multipart(parts, 0).unwrap();
    }
    let (mut m, mut f) = (0, 0);
    let (mut between, mut pongs, mut pings_sent) = (0, 0, 0u32);
    let mut split = Vec::new();
    while m < MESSAGES {
        let fr = peer.read_frame().expect("the connection stays up");
        if fr.is_command() {
            if f > 0 {
                split.push(format!(
                    "{} inside message {m} after frame {}",
                    String::from_utf8_lossy(fr.command_name()),
                    f - 1
                ));
            } else if m > 0 {
                between += 1;
            }
            match fr.command_name() {
                b"PING" => peer.write(&frame(0x04, &command_body("PONG", &fr.command_data()[2..]))).unwrap(),
                b"PONG" => {
                    assert!(fr.command_data().starts_with(b"ctx"), "a PONG echoes our context: {fr:?}");
                    pongs += 1;
                }
                other => panic!("unexpected command {}", String::from_utf8_lossy(other)),
            }
            continue;
        }
        assert_eq!(fr.body.len(), FRAME, "message {m} frame {f}");
        assert!(fr.body.iter().all(|&b| b == (m * FRAMES + f) as u8), "message {m} frame {f}: wrong bytes");
        assert_eq!(fr.more(), f + 1 < FRAMES, "MORE on message {m} frame {f}");
        f += 1;
        if f % 10 == 5 {
            // A PING of ours, for a PONG that falls due mid-message.
            pings_sent += 1;
            let mut data = 0u16.to_be_bytes().to_vec();
            data.extend_from_slice(format!("ctx{pings_sent}").as_bytes());
            peer.write(&frame(0x04, &command_body("PING", &data))).unwrap();
        }
        if f == FRAMES {
            (m, f) = (m + 1, 0);
        }
    }
    assert!(split.is_empty(), "{} commands split a message; first: {}", split.len(), split[0]);
    // Else nothing fell due during the transfer and this test proved nothing.
    assert!(between > 0, "no command came between two messages (PONGs seen: {pongs})");
}
