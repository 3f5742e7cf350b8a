//! ws:// (ZWS 2.0) between oxmq sockets and against hand-made WebSocket
//! peers: endpoints and LAST_ENDPOINT, the socket patterns, NULL/PLAIN/CURVE
//! over WebSocket, and bad peers (HTTP, frames) losing only their connection.

mod common;

use common::*;
use oxmq::security::{curve_keypair, z85_encode};
use oxmq::{opt, Context, Socket, SocketType};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

fn bind_ws(s: &Socket) -> String {
    s.bind("ws://127.0.0.1:*/zmq").unwrap();
    s.last_endpoint().unwrap()
}

fn port_of(endpoint: &str) -> u16 {
    endpoint.rsplit(':').next().unwrap().parse().unwrap()
}

#[test]
fn last_endpoint_names_the_chosen_port_without_the_path() {
    let _g = guard();
    let ctx = Context::new();
    let s = sock(&ctx, SocketType::Pull);
    let ep = bind_ws(&s);
    assert!(ep.starts_with("ws://127.0.0.1:"), "{ep}");
    assert!(port_of(&ep) > 0);
    assert!(s.bind("ws://*:*").is_ok());
    assert!(s.last_endpoint().unwrap().starts_with("ws://0.0.0.0:"));
    assert_errno(s.connect("ws://127.0.0.1:*/x"), libc::EINVAL);
    // wss:// without a certificate cannot be bound.
    assert_errno(s.bind("wss://127.0.0.1:*/x"), libc::EINVAL);
}

#[test]
fn push_pull_multipart_and_large_frames() {
    let _g = guard();
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    let push = sock(&ctx, SocketType::Push);
    let ep = bind_ws(&pull);
    push.connect(&format!("{ep}/zmq")).unwrap();
    let big = vec![0xA5u8; 300_000];
    for i in 0..50u32 {
        push.send_multipart([&i.to_le_bytes()[..], b"", &big[..(i as usize * 6000)]], 0).unwrap();
    }
    for i in 0..50u32 {
        let parts = pull.recv_multipart(0).unwrap();
        assert_eq!(parts.len(), 3);
        assert_eq!(parts[0].as_slice(), i.to_le_bytes());
        assert!(parts[1].as_slice().is_empty());
        assert_eq!(parts[2].as_slice(), &big[..(i as usize * 6000)]);
    }
    push.send(&big[..], 0).unwrap();
    assert_eq!(pull.recv_bytes(0).unwrap(), big);
}

#[test]
fn req_rep_and_router_ids_both_ways() {
    let _g = guard();
    let ctx = Context::new();
    let rep = sock(&ctx, SocketType::Rep);
    let req = sock(&ctx, SocketType::Req);
    // The client side binds this time.
    let ep = bind_ws(&req);
    rep.connect(&ep).unwrap();
    for i in 0..20u8 {
        req.send(&[i][..], 0).unwrap();
        assert_eq!(rep.recv_bytes(0).unwrap(), [i]);
        rep.send(&[i, i][..], 0).unwrap();
        assert_eq!(req.recv_bytes(0).unwrap(), [i, i]);
    }
    let router = sock(&ctx, SocketType::Router);
    let dealer = sock(&ctx, SocketType::Dealer);
    dealer.set_option_bytes(opt::ROUTING_ID, b"dealer-1").unwrap();
    let ep = bind_ws(&router);
    dealer.connect(&ep).unwrap();
    dealer.send(&b"hi"[..], 0).unwrap();
    let parts = router.recv_multipart(0).unwrap();
    assert_eq!(parts[0].as_slice(), b"dealer-1");
    assert_eq!(parts[1].as_slice(), b"hi");
    router.send_multipart([&b"dealer-1"[..], b"back"], 0).unwrap();
    assert_eq!(dealer.recv_bytes(0).unwrap(), b"back");
}

#[test]
fn pub_sub_filters_at_the_publisher() {
    let _g = guard();
    let ctx = Context::new();
    let publ = sock(&ctx, SocketType::Pub);
    let sub = sock(&ctx, SocketType::Sub);
    let ep = bind_ws(&publ);
    sub.set_option_bytes(opt::SUBSCRIBE, b"a").unwrap();
    sub.connect(&ep).unwrap();
    // Until the subscription has arrived, messages are dropped.
    let got = eventually(|| {
        publ.send(&b"b-no"[..], 0).unwrap();
        publ.send(&b"a-yes"[..], 0).unwrap();
        sub.recv_bytes(oxmq::DONTWAIT).ok()
    });
    assert_eq!(got, b"a-yes");
    sub.set_option_bytes(opt::UNSUBSCRIBE, b"a").unwrap();
    sub.set_option_bytes(opt::SUBSCRIBE, b"c").unwrap();
    let got = eventually(|| {
        publ.send(&b"a-no"[..], 0).unwrap();
        publ.send(&b"c-yes"[..], 0).unwrap();
        sub.recv_bytes(oxmq::DONTWAIT).ok().filter(|m| m == b"c-yes")
    });
    assert_eq!(got, b"c-yes");
}

/// Polls `f` every few ms until it returns Some, within BOUND.
fn eventually<T>(mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = std::time::Instant::now() + BOUND;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(std::time::Instant::now() < deadline, "condition not met in time");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A ZAP handler answering 200 to `n` requests; returns what it saw.
fn zap_allow(ctx: &Context, n: usize) -> std::thread::JoinHandle<Vec<Vec<Vec<u8>>>> {
    let rep = sock(ctx, SocketType::Rep);
    rep.set_option_int(opt::RCVTIMEO, 10_000).unwrap();
    rep.bind("inproc://zeromq.zap.01").unwrap();
    std::thread::spawn(move || {
        let mut seen = Vec::new();
        for _ in 0..n {
            let Ok(req) = rep.recv_multipart(0) else { break };
            let req: Vec<Vec<u8>> = req.iter().map(|m| m.to_vec()).collect();
            rep.send_multipart([&b"1.0"[..], &req[1], b"200", b"OK", b"user", b""], 0).unwrap();
            seen.push(req);
        }
        seen
    })
}

#[test]
fn plain_and_curve_run_over_websocket() {
    let _g = guard();
    let ctx = Context::new();
    let zap = zap_allow(&ctx, 2);
    let server = sock(&ctx, SocketType::Rep);
    let client = sock(&ctx, SocketType::Req);
    server.set_option_int(opt::PLAIN_SERVER, 1).unwrap();
    client.set_option_bytes(opt::PLAIN_USERNAME, b"admin").unwrap();
    client.set_option_bytes(opt::PLAIN_PASSWORD, b"secret").unwrap();
    let ep = bind_ws(&server);
    client.connect(&ep).unwrap();
    client.send(&b"plain"[..], 0).unwrap();
    assert_eq!(server.recv_bytes(0).unwrap(), b"plain");
    server.send(&b"ok"[..], 0).unwrap();
    assert_eq!(client.recv_bytes(0).unwrap(), b"ok");

    let (spub, ssec) = curve_keypair().unwrap();
    let (cpub, csec) = curve_keypair().unwrap();
    let server = sock(&ctx, SocketType::Pub);
    let client = sock(&ctx, SocketType::Sub);
    server.set_option_int(opt::CURVE_SERVER, 1).unwrap();
    server.set_option_bytes(opt::CURVE_SECRETKEY, &ssec[..]).unwrap();
    client.set_option_bytes(opt::CURVE_SERVERKEY, z85_encode(&spub).unwrap().as_bytes()).unwrap();
    client.set_option_bytes(opt::CURVE_PUBLICKEY, &cpub).unwrap();
    client.set_option_bytes(opt::CURVE_SECRETKEY, &csec[..]).unwrap();
    client.set_option_bytes(opt::SUBSCRIBE, b"").unwrap();
    let ep = bind_ws(&server);
    client.connect(&ep).unwrap();
    let got = eventually(|| {
        server.send(&b"boxed"[..], 0).unwrap();
        client.recv_bytes(oxmq::DONTWAIT).ok()
    });
    assert_eq!(got, b"boxed");
    let seen = zap.join().unwrap();
    // ZAP sees the mechanism, the peer's address and the credentials.
    assert_eq!(seen[0][3], b"127.0.0.1");
    assert_eq!(seen[0][5], b"PLAIN");
    assert_eq!(&seen[0][6..], [b"admin".to_vec(), b"secret".to_vec()]);
    assert_eq!(seen[1][5], b"CURVE");
    assert_eq!(seen[1][6], cpub);
}

#[test]
fn mechanism_mismatch_never_connects() {
    let _g = guard();
    let ctx = Context::new();
    let server = sock(&ctx, SocketType::Pull);
    let client = sock(&ctx, SocketType::Push);
    server.set_option_int(opt::PLAIN_SERVER, 1).unwrap();
    server.set_option_int(opt::RCVTIMEO, 300).unwrap();
    let ep = bind_ws(&server);
    client.connect(&ep).unwrap(); // NULL client, PLAIN server
    client.set_option_int(opt::SNDTIMEO, 0).unwrap();
    let _ = client.send(&b"x"[..], 0);
    assert_errno(server.recv_bytes(0), libc::EAGAIN);
}

/// Sends `request` on a raw tcp connection and returns what comes back
/// until the server closes (or 2 s pass).
fn raw_exchange(port: u16, request: &[u8]) -> Vec<u8> {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    c.write_all(request).unwrap();
    let mut got = Vec::new();
    let _ = c.read_to_end(&mut got);
    got
}

fn upgrade(protocol: &str) -> Vec<u8> {
    format!(
        "GET /zmq HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: {protocol}\r\n\
         Sec-WebSocket-Version: 13\r\n\r\n"
    )
    .into_bytes()
}

/// A masked client frame.
fn masked(first: u8, payload: &[u8]) -> Vec<u8> {
    let key = [1u8, 2, 3, 4];
    let mut v = vec![first, 0x80 | payload.len() as u8];
    v.extend_from_slice(&key);
    v.extend(payload.iter().enumerate().map(|(i, b)| b ^ key[i % 4]));
    v
}

#[test]
fn bad_peers_lose_their_connection_only() {
    let _g = guard();
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    let ep = bind_ws(&pull);
    let port = port_of(&ep);

    // Not HTTP at all, then an upgrade with no ZWS protocol: 400 and closed.
    let got = raw_exchange(port, b"\xff\x00\x00\x00\x00\x00\x00\x00\x01\x7f\x03\x01NULL\r\n\r\n");
    assert!(got.starts_with(b"HTTP/1.1 400"), "{:?}", String::from_utf8_lossy(&got));
    let got = raw_exchange(port, &upgrade("chat"));
    assert!(got.starts_with(b"HTTP/1.1 400"), "{:?}", String::from_utf8_lossy(&got));

    // A good upgrade gets 101 with ZWS2.0/NULL, then READY; then the peer
    // sends a fragmented frame, an unmasked one, a text one, an oversized
    // length: each connection is dropped.
    let ready = b"\x02\x05READY\x0bSocket-Type\x00\x00\x00\x04PUSH";
    for bad in [
        masked(0x02, b"\x00x"),                                  // not FIN
        vec![0x82, 0x02, 0x00, b'x'],                            // unmasked
        masked(0x81, b"\x00x"),                                  // text
        vec![0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4], // length top bit
    ] {
        let mut req = upgrade("ZWS2.0/NULL,ZWS2.0");
        req.extend(masked(0x82, ready));
        req.extend(bad);
        let got = raw_exchange(port, &req);
        let text = String::from_utf8_lossy(&got);
        assert!(text.starts_with("HTTP/1.1 101 Switching Protocols\r\n"), "{text}");
        assert!(text.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"), "{text}");
        assert!(text.contains("Sec-WebSocket-Protocol: ZWS2.0/NULL\r\n"), "{text}");
    }

    // A well-behaved raw ZWS client still gets through afterwards.
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut req = upgrade("ZWS2.0/NULL");
    req.extend(masked(0x82, ready));
    req.extend(masked(0x82, b"\x01part1"));
    req.extend(masked(0x82, b"\x00part2"));
    c.write_all(&req).unwrap();
    let parts = pull.recv_multipart(0).unwrap();
    assert_eq!(parts.iter().map(|m| m.as_slice().to_vec()).collect::<Vec<_>>(), [b"part1".to_vec(), b"part2".to_vec()]);

    // MAXMSGSIZE applies to WebSocket messages.
    let small = sock(&ctx, SocketType::Pull);
    small.set_option_int(opt::MAXMSGSIZE, 10).unwrap();
    small.set_option_int(opt::RCVTIMEO, 300).unwrap();
    let sp = port_of(&bind_ws(&small));
    let mut req = upgrade("ZWS2.0/NULL");
    req.extend(masked(0x82, ready));
    req.extend(masked(0x82, b"\x00this is more than ten"));
    req.extend(masked(0x82, b"\x00short"));
    let _ = raw_exchange(sp, &req);
    assert_errno(small.recv_bytes(0), libc::EAGAIN);
}

// ---------------------------------------------------------------------------
// wss:// (TLS through rustls). tests/wss/: a test CA and a server certificate
// for localhost and 127.0.0.1 (made with openssl for these tests only).

const CA_PEM: &[u8] = include_bytes!("wss/ca.pem");
const SERVER_PEM: &[u8] = include_bytes!("wss/server.pem");
const SERVER_KEY: &[u8] = include_bytes!("wss/server.key");

fn wss_server(ctx: &Context, kind: SocketType) -> (Socket, u16) {
    let s = sock(ctx, kind);
    s.set_option_bytes(opt::WSS_CERT_PEM, SERVER_PEM).unwrap();
    s.set_option_bytes(opt::WSS_KEY_PEM, SERVER_KEY).unwrap();
    s.bind("wss://127.0.0.1:*/zmq").unwrap();
    let ep = s.last_endpoint().unwrap();
    assert!(ep.starts_with("wss://127.0.0.1:"), "{ep}");
    (s, port_of(&ep))
}

#[test]
fn wss_carries_messages_with_a_trusted_certificate() {
    let _g = guard();
    let ctx = Context::new();
    let (rep, port) = wss_server(&ctx, SocketType::Rep);
    for host in ["localhost", "127.0.0.1"] {
        let req = sock(&ctx, SocketType::Req);
        req.set_option_bytes(opt::WSS_TRUST_PEM, CA_PEM).unwrap();
        req.connect(&format!("wss://{host}:{port}/zmq")).unwrap();
        let big = vec![7u8; 200_000];
        for _ in 0..3 {
            req.send_multipart([&b"x"[..], &big[..]], 0).unwrap();
            let parts = rep.recv_multipart(0).unwrap();
            assert_eq!((parts[0].as_slice(), parts[1].len()), (&b"x"[..], big.len()));
            rep.send(&b"y"[..], 0).unwrap();
            assert_eq!(req.recv_bytes(0).unwrap(), b"y");
        }
    }
    // WSS_HOSTNAME names the certificate to expect when the host differs.
    let req = sock(&ctx, SocketType::Req);
    req.set_option_bytes(opt::WSS_TRUST_PEM, CA_PEM).unwrap();
    req.set_option_bytes(opt::WSS_HOSTNAME, b"localhost").unwrap();
    req.connect(&format!("wss://127.0.0.1:{port}/zmq")).unwrap();
    req.send(&b"named"[..], 0).unwrap();
    assert_eq!(rep.recv_bytes(0).unwrap(), b"named");
    rep.send(&b"ok"[..], 0).unwrap();
    assert_eq!(req.recv_bytes(0).unwrap(), b"ok");
}

#[test]
fn wss_refuses_an_untrusted_or_misnamed_server() {
    let _g = guard();
    let ctx = Context::new();
    let (pull, port) = wss_server(&ctx, SocketType::Pull);
    pull.set_option_int(opt::RCVTIMEO, 500).unwrap();
    // Not trusted: nothing gets through.
    let push = sock(&ctx, SocketType::Push);
    push.set_option_int(opt::SNDTIMEO, 0).unwrap();
    push.connect(&format!("wss://localhost:{port}/zmq")).unwrap();
    let _ = push.send(&b"untrusted"[..], 0);
    // Trusted CA but the wrong name.
    let push2 = sock(&ctx, SocketType::Push);
    push2.set_option_int(opt::SNDTIMEO, 0).unwrap();
    push2.set_option_bytes(opt::WSS_TRUST_PEM, CA_PEM).unwrap();
    push2.set_option_bytes(opt::WSS_HOSTNAME, b"example.com").unwrap();
    push2.connect(&format!("wss://127.0.0.1:{port}/zmq")).unwrap();
    let _ = push2.send(&b"misnamed"[..], 0);
    assert_errno(pull.recv_bytes(0), libc::EAGAIN);
    // Plain ws:// to a wss listener is not TLS: refused too, listener unharmed.
    let push3 = sock(&ctx, SocketType::Push);
    push3.set_option_int(opt::SNDTIMEO, 0).unwrap();
    push3.connect(&format!("ws://127.0.0.1:{port}/zmq")).unwrap();
    let _ = push3.send(&b"cleartext"[..], 0);
    assert_errno(pull.recv_bytes(0), libc::EAGAIN);
    let good = sock(&ctx, SocketType::Push);
    good.set_option_bytes(opt::WSS_TRUST_PEM, CA_PEM).unwrap();
    good.connect(&format!("wss://localhost:{port}/zmq")).unwrap();
    good.send(&b"good"[..], 0).unwrap();
    pull.set_option_int(opt::RCVTIMEO, 5000).unwrap();
    assert_eq!(pull.recv_bytes(0).unwrap(), b"good");
}

#[test]
fn wss_options_are_set_only_and_checked_at_bind_and_connect() {
    let _g = guard();
    let ctx = Context::new();
    let s = sock(&ctx, SocketType::Dealer);
    for o in [opt::WSS_KEY_PEM, opt::WSS_CERT_PEM, opt::WSS_TRUST_PEM, opt::WSS_HOSTNAME, opt::WSS_TRUST_SYSTEM] {
        assert_errno(s.get_option(o), libc::EINVAL);
    }
    s.set_option_int(opt::WSS_TRUST_SYSTEM, 1).unwrap();
    assert_errno(s.set_option_int(opt::WSS_TRUST_SYSTEM, 2), libc::EINVAL);
    s.set_option_bytes(opt::WSS_CERT_PEM, b"not pem").unwrap();
    assert_errno(s.bind("wss://127.0.0.1:*"), libc::EINVAL);
    s.set_option_bytes(opt::WSS_CERT_PEM, SERVER_PEM).unwrap();
    s.set_option_bytes(opt::WSS_KEY_PEM, CA_PEM).unwrap(); // a certificate, not a key
    assert_errno(s.bind("wss://127.0.0.1:*"), libc::EINVAL);
    s.set_option_bytes(opt::WSS_TRUST_PEM, b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n").unwrap();
    assert_errno(s.connect("wss://localhost:5555"), libc::EINVAL);
}

#[test]
fn a_bad_upgrade_is_reported_as_a_ws_protocol_error() {
    let _g = guard();
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    let ep = bind_ws(&pull);
    let mon_ep = inproc_endpoint();
    pull.monitor(Some(&mon_ep), oxmq::monitor_event::ALL as u32).unwrap();
    let mon = sock(&ctx, SocketType::Pair);
    mon.connect(&mon_ep).unwrap();
    let _ = raw_exchange(port_of(&ep), b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    loop {
        let parts = mon.recv_multipart(0).expect("no HANDSHAKE_FAILED_PROTOCOL event");
        let head = parts[0].to_vec();
        let id = u16::from_ne_bytes([head[0], head[1]]);
        if id == oxmq::monitor_event::HANDSHAKE_FAILED_PROTOCOL {
            let value = u32::from_ne_bytes([head[2], head[3], head[4], head[5]]);
            assert_eq!(value, 0x3000_0000, "ZMQ_PROTOCOL_ERROR_WS_UNSPECIFIED");
            break;
        }
    }
}

#[test]
fn heartbeats_travel_as_websocket_pings_and_keep_the_connection() {
    let _g = guard();
    let ctx = Context::new();
    let a = sock(&ctx, SocketType::Pair);
    let b = sock(&ctx, SocketType::Pair);
    for s in [&a, &b] {
        s.set_option_int(opt::HEARTBEAT_IVL, 50).unwrap();
        s.set_option_int(opt::HEARTBEAT_TIMEOUT, 250).unwrap();
    }
    let ep = bind_ws(&a);
    let mon_ep = inproc_endpoint();
    b.monitor(Some(&mon_ep), oxmq::monitor_event::ALL as u32).unwrap();
    let mon = sock(&ctx, SocketType::Pair);
    mon.connect(&mon_ep).unwrap();
    b.connect(&ep).unwrap();
    b.send(&b"first"[..], 0).unwrap();
    assert_eq!(a.recv_bytes(0).unwrap(), b"first");
    // Quiet for 1.5 s (six heartbeat timeouts): no disconnect may happen.
    let mut events = Vec::new();
    let quiet_until = std::time::Instant::now() + Duration::from_millis(1500);
    mon.set_option_int(opt::RCVTIMEO, 100).unwrap();
    while std::time::Instant::now() < quiet_until {
        if let Ok(parts) = mon.recv_multipart(0) {
            let head = parts[0].to_vec();
            events.push(u16::from_ne_bytes([head[0], head[1]]));
        }
    }
    assert!(events.contains(&oxmq::monitor_event::HANDSHAKE_SUCCEEDED), "{events:x?}");
    assert!(!events.contains(&oxmq::monitor_event::DISCONNECTED), "{events:x?}");
    a.send(&b"still"[..], 0).unwrap();
    assert_eq!(b.recv_bytes(0).unwrap(), b"still");
}

#[test]
fn bare_zws2_client_sends_its_routing_id_first() {
    let _g = guard();
    let ctx = Context::new();
    let router = sock(&ctx, SocketType::Router);
    let port = port_of(&bind_ws(&router));
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut req = upgrade("ZWS2.0");
    req.extend(masked(0x82, b"\x00bare-peer"));
    req.extend(masked(0x82, b"\x01a"));
    req.extend(masked(0x82, b"\x00b"));
    c.write_all(&req).unwrap();
    let parts = router.recv_multipart(0).unwrap();
    let parts: Vec<Vec<u8>> = parts.iter().map(|m| m.to_vec()).collect();
    assert_eq!(parts, [b"bare-peer".to_vec(), b"a".to_vec(), b"b".to_vec()]);
    router.send_multipart([&b"bare-peer"[..], b"reply"], 0).unwrap();
    // 101 (choosing ZWS2.0), our routing id (empty: a ROUTER has none), then the reply.
    let mut got = Vec::new();
    let want_tail = [0x82, 0x01, 0x00, 0x82, 0x06, 0x00, b'r', b'e', b'p', b'l', b'y'];
    while !got.ends_with(&want_tail) {
        let mut buf = [0u8; 512];
        let n = c.read(&mut buf).unwrap();
        assert!(n > 0, "closed early: {:?}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&got);
    assert!(text.contains("Sec-WebSocket-Protocol: ZWS2.0\r\n"), "{text}");
}
