//! Hostile and broken peers speaking (or failing to speak) ZMTP over raw TCP.
//! In every case oxmq must close the bad connection, not panic, and keep
//! serving well-behaved peers on the same socket.

mod common;

use common::*;
use oxmq::{opt, Context, Socket, SocketType};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

const CLOSE_BOUND: Duration = Duration::from_secs(5);

/// A bound PULL plus its context; `check_still_works` proves the socket survived.
struct Victim {
    ctx: Context,
    pull: Socket,
    ep: String,
}

fn victim_with(setup: impl FnOnce(&Socket)) -> Victim {
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    setup(&pull);
    let ep = bind_fresh(Transport::Tcp, &pull);
    Victim { ctx, pull, ep }
}

fn victim() -> Victim {
    victim_with(|_| {})
}

impl Victim {
    /// A normal oxmq PUSH and a raw good peer can both still deliver.
    fn check_still_works(&self) {
        let push = sock(&self.ctx, SocketType::Push);
        push.connect(&self.ep).unwrap();
        send(&push, b"still alive");
        assert_eq!(recv(&self.pull), b"still alive", "socket must keep working after a hostile peer");
        let mut good = RawPeer::connect(&self.ep);
        let props = good.handshake("PUSH", None).expect("good raw peer handshake");
        assert!(props.iter().any(|(k, v)| k == "Socket-Type" && v == b"PULL"), "READY advertises PULL: {props:?}");
        good.write(&frame(0x00, b"raw hello")).unwrap();
        assert_eq!(recv(&self.pull), b"raw hello");
    }
}

#[track_caller]
fn assert_closed(peer: &mut RawPeer, what: &str) {
    assert!(peer.wait_closed(CLOSE_BOUND), "oxmq did not close the connection after {what}");
}

/// Send our greeting, read theirs.
fn greet(peer: &mut RawPeer, mechanism: &str) {
    peer.write(&greeting(mechanism)).unwrap();
    let g = peer.read_greeting().expect("oxmq sends its greeting");
    assert_eq!(g[0], 0xFF);
    assert_eq!(g[9], 0x7F);
    assert_eq!(g[10], 3);
    assert_eq!(g[11], 1, "libzmq 4.3.5 speaks ZMTP 3.1");
    assert_eq!(&g[12..32], b"NULL\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0");
    assert_eq!(g[32], 0, "as-server is 0 for NULL");
    assert!(g[33..].iter().all(|&b| b == 0), "filler is zeros");
}

#[test]
fn good_raw_peer_full_exchange() {
    let _g = guard();
    let ctx = Context::new();
    let router = sock(&ctx, SocketType::Router);
    let ep = bind_fresh(Transport::Tcp, &router);
    let mut peer = RawPeer::connect(&ep);
    let props = peer.handshake("DEALER", Some(b"raw-id")).unwrap();
    assert!(props.iter().any(|(k, v)| k == "Socket-Type" && v == b"ROUTER"), "{props:?}");
    peer.write(&frame(0x01, b"part1")).unwrap();
    peer.write(&frame(0x00, &[9u8; 300])).unwrap();
    assert_eq!(recv_parts(&router), vec![b"raw-id".to_vec(), b"part1".to_vec(), vec![9u8; 300]]);
    send_parts(&router, &[b"raw-id", b"", &[7u8; 256]]);
    let f1 = peer.read_frame().unwrap();
    assert_eq!((f1.flags, f1.body.as_slice()), (0x01, &b""[..]));
    let f2 = peer.read_frame().unwrap();
    assert_eq!(f2.flags, 0x02, "LONG only for > 255 bytes, MORE clear on last");
    assert_eq!(f2.body, vec![7u8; 256]);
}

#[test]
fn oxmq_greeting_prefix_and_ready_properties() {
    let _g = guard();
    // oxmq's READY from a DEALER carries Socket-Type and Identity (libzmq sends
    // Identity from REQ/DEALER/ROUTER only).
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let ctx = Context::new();
    let dealer = sock(&ctx, SocketType::Dealer);
    dealer.set_option_bytes(opt::ROUTING_ID, b"dealer-x").unwrap();
    dealer.connect(&format!("tcp://127.0.0.1:{port}")).unwrap();
    let (stream, _) = listener.accept().unwrap();
    let mut peer = RawPeer::from_stream(stream);
    let props = peer.handshake("ROUTER", None).unwrap();
    assert!(props.iter().any(|(k, v)| k == "Socket-Type" && v == b"DEALER"), "{props:?}");
    assert!(props.iter().any(|(k, v)| k == "Identity" && v == b"dealer-x"), "{props:?}");
    send(&dealer, b"to raw");
    let f = peer.read_frame().unwrap();
    assert_eq!((f.flags, f.body.as_slice()), (0, &b"to raw"[..]));
    // PUSH sends no Identity.
    let push = sock(&ctx, SocketType::Push);
    push.connect(&format!("tcp://127.0.0.1:{port}")).unwrap();
    let (stream, _) = listener.accept().unwrap();
    let mut peer2 = RawPeer::from_stream(stream);
    let props = peer2.handshake("PULL", None).unwrap();
    assert!(!props.iter().any(|(k, _)| k == "Identity"), "PUSH must not send Identity: {props:?}");
}

#[test]
fn bad_signature() {
    let _g = guard();
    let v = victim();
    // Without 0xFF first, or with bit 0 of octet 9 clear, the bytes are a
    // ZMTP/1.0 identity frame to libzmq 4.3 and to oxmq (an HTTP request
    // reads as one, waiting for its body). Sizes of 0 are refused at once.
    let mut p = RawPeer::connect(&v.ep);
    let mut junk = b"\0GET / HTTP/1.1\r\nHost: example\r\n\r\n".to_vec();
    junk.resize(64, b'x');
    let _ = p.write(&junk);
    assert_closed(&mut p, "a 1.0 frame of size 0 instead of a greeting");
    let mut p2 = RawPeer::connect(&v.ep);
    let mut g = greeting("NULL");
    g[1..9].fill(0);
    g[9] = 0x7E; // signature end without bit 0: a long 1.0 frame, of size 0
    let _ = p2.write(&g);
    assert_closed(&mut p2, "a bad signature end octet with size 0");
    v.check_still_works();
}

#[test]
fn zmtp2_peer_is_answered_in_2_0_and_dropped_for_garbage() {
    let _g = guard();
    let v = victim();
    let mut p = RawPeer::connect(&v.ep);
    let _ = p.write(&greeting_v2(8)); // PUSH, empty identity
                                      // libzmq 4.3's answer: signature, major 3, then a 2.0 greeting's socket
                                      // type (PULL) and an empty identity frame; no 3.x octet.
    let answer = p.read_exact(14).unwrap();
    assert_eq!((answer[0], answer[9]), (0xFF, 0x7F));
    assert_eq!(&answer[10..], &[3, 7, 0x00, 0x00]);
    p.write(&frame(0x01, b"from")).unwrap();
    p.write(&frame(0x00, b"2.0")).unwrap();
    assert_eq!(recv_parts(&v.pull), vec![b"from".to_vec(), b"2.0".to_vec()]);
    // Garbage (reserved flag bits) drops this peer only.
    let _ = p.write(&[0xF0, 0x01, b'x']);
    assert_closed(&mut p, "garbage from a ZMTP 2.0 peer");
    v.check_still_works();
}

#[test]
fn zmtp2_greeting_refused_with_security() {
    let _g = guard();
    let v = victim_with(|s| s.set_option_bytes(opt::ZAP_DOMAIN, b"global").unwrap());
    let mut p = RawPeer::connect(&v.ep);
    let _ = p.write(&greeting_v2(8)); // PUSH
    assert_closed(&mut p, "a ZMTP 2.0 greeting while ZAP is asked for");
}

/// A ZMTP/1.0 frame (RFC 13): size counting the flags octet, flags, body.
fn frame_v1(more: bool, body: &[u8]) -> Vec<u8> {
    let mut out = vec![body.len() as u8 + 1, u8::from(more)];
    out.extend_from_slice(body);
    out
}

#[test]
fn zmtp1_peer_is_answered_in_1_0_and_dropped_for_garbage() {
    let _g = guard();
    let v = victim();
    for garbage in [&[0x00][..], &[0xFF; 9][..]] {
        let mut p = RawPeer::connect(&v.ep);
        // libzmq 2.x opens with its identity frame (empty here).
        p.write(&frame_v1(false, b"")).unwrap();
        // libzmq 4.3's answer: its signature, which is the header of its
        // identity frame (size 1, flags 0x7F); PULL's identity is empty.
        assert_eq!(p.read_exact(10).unwrap(), [0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F]);
        p.write(&frame_v1(true, b"from")).unwrap();
        p.write(&frame_v1(false, b"1.0")).unwrap();
        assert_eq!(recv_parts(&v.pull), vec![b"from".to_vec(), b"1.0".to_vec()]);
        // A size of 0, or of 2^64 - 1, drops this peer only.
        let _ = p.write(garbage);
        assert_closed(&mut p, "garbage from a ZMTP 1.0 peer");
    }
    v.check_still_works();
}

#[test]
fn zmtp1_peer_refused_with_security() {
    let _g = guard();
    let v = victim_with(|s| s.set_option_bytes(opt::ZAP_DOMAIN, b"global").unwrap());
    let mut p = RawPeer::connect(&v.ep);
    let _ = p.write(&frame_v1(false, b"old"));
    assert_closed(&mut p, "a ZMTP 1.0 identity frame while ZAP is asked for");
}

#[test]
fn zmtp1_subscriber_gets_everything_from_pub() {
    // A libzmq 2.x SUB filters locally and never subscribes: libzmq's PUB
    // sends it everything, and so must oxmq's.
    let _g = guard();
    let ctx = Context::new();
    let publ = sock(&ctx, SocketType::Pub);
    let ep = bind_fresh(Transport::Tcp, &publ);
    let mut p = RawPeer::connect(&ep);
    p.write(&frame_v1(false, b"")).unwrap();
    assert_eq!(p.read_exact(10).unwrap()[9], 0x7F);
    let mut got = None;
    for _ in 0..100 {
        send(&publ, b"abc");
        if let Ok(f) = p.read_exact(5) {
            got = Some(f);
            break;
        }
    }
    assert_eq!(got.as_deref(), Some(&frame_v1(false, b"abc")[..]));
}

#[test]
fn unknown_mechanism() {
    let _g = guard();
    for mech in ["PLAIN", "FOO", "CURVE", "NULLX"] {
        let v = victim();
        let mut p = RawPeer::connect(&v.ep);
        let _ = p.write(&greeting(mech));
        assert_closed(&mut p, &format!("mechanism {mech} where NULL is expected"));
        v.check_still_works();
    }
}

#[test]
fn incompatible_socket_type() {
    let _g = guard();
    for bad in ["PUB", "PULL", "REQ", "ROUTER", "PAIR", "XSUB", "push", "CLIENT", "NOPE"] {
        let v = victim();
        let mut p = RawPeer::connect(&v.ep);
        greet(&mut p, "NULL");
        let _ = p.write(&ready_for(bad));
        assert_closed(&mut p, &format!("READY with Socket-Type {bad} to a PULL"));
        // Nothing the bad peer sent afterwards is delivered.
        v.check_still_works();
    }
}

#[test]
fn ready_missing_socket_type() {
    let _g = guard();
    let v = victim();
    let mut p = RawPeer::connect(&v.ep);
    greet(&mut p, "NULL");
    let _ = p.write(&ready(&[("Identity", b"")]));
    let _ = p.write(&frame(0, b"must not arrive"));
    assert_closed(&mut p, "READY without Socket-Type");
    assert_nothing(&v.pull);
    v.check_still_works();
}

#[test]
fn malformed_ready_and_wrong_first_command() {
    let _g = guard();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        // property length runs past the end of the frame
        ("truncated property", frame(0x04, &[5, b'R', b'E', b'A', b'D', b'Y', 11, b'S', b'o', b'c'])),
        ("value length overflows", {
            let mut d = command_body("READY", &[]);
            d.push(11);
            d.extend_from_slice(b"Socket-Type");
            d.extend_from_slice(&0xFFFF_FFF0u32.to_be_bytes());
            d.extend_from_slice(b"PUSH");
            frame(0x04, &d)
        }),
        ("message before READY", frame(0x00, b"data first")),
        ("PING before READY", frame(0x04, &command_body("PING", &[0, 0]))),
        ("empty command", frame(0x04, &[])),
        ("command name longer than body", frame(0x04, &[200, b'R'])),
        ("ERROR from peer", frame(0x04, &command_body("ERROR", b"\x05nope!"))),
    ];
    for (what, bytes) in cases {
        let v = victim();
        let mut p = RawPeer::connect(&v.ep);
        greet(&mut p, "NULL");
        let _ = p.write(&bytes);
        assert_closed(&mut p, what);
        assert_nothing(&v.pull);
        v.check_still_works();
    }
}

#[test]
fn frame_larger_than_maxmsgsize() {
    let _g = guard();
    let v = victim_with(|s| s.set_option_int(opt::MAXMSGSIZE, 1000).unwrap());
    let mut p = RawPeer::connect(&v.ep);
    p.handshake("PUSH", None).unwrap();
    p.write(&frame(0, &[1u8; 1000])).unwrap();
    assert_eq!(recv(&v.pull).len(), 1000);
    let _ = p.write(&frame(0, &[2u8; 2000]));
    assert_closed(&mut p, "a 2000-byte frame with MAXMSGSIZE=1000");
    assert_nothing(&v.pull);
    // Only a header announcing a huge size (no body) is also refused.
    let mut p2 = RawPeer::connect(&v.ep);
    p2.handshake("PUSH", None).unwrap();
    let mut hdr = vec![0x02];
    hdr.extend_from_slice(&(1u64 << 62).to_be_bytes());
    let _ = p2.write(&hdr);
    assert_closed(&mut p2, "a frame header announcing 2^62 bytes");
    v.check_still_works();
}

#[test]
fn huge_frame_header_without_maxmsgsize() {
    let _g = guard();
    // Note: if the I/O thread dies here, dropping the context may hang; the
    // watchdog then aborts the process with this test's name.
    // No MAXMSGSIZE: a header claiming 2^63-1 bytes must not make oxmq allocate it.
    let v = victim();
    let mut p = RawPeer::connect(&v.ep);
    p.handshake("PUSH", None).unwrap();
    let mut hdr = vec![0x02];
    hdr.extend_from_slice(&(i64::MAX as u64).to_be_bytes());
    let _ = p.write(&hdr);
    let _ = p.write(&[0u8; 100]);
    drop(p); // close after a partial body
    let mut p2 = RawPeer::connect(&v.ep);
    let mut hdr = vec![0x02];
    hdr.extend_from_slice(&u64::MAX.to_be_bytes()); // > 2^63-1: invalid
    p2.handshake("PUSH", None).unwrap();
    let _ = p2.write(&hdr);
    assert_closed(&mut p2, "a frame length with the top bit set");
    v.check_still_works();
}

#[test]
fn reserved_flag_bits_after_handshake() {
    let _g = guard();
    for flags in [0x08u8, 0x10, 0x80, 0xFF, 0xF1] {
        let v = victim();
        let mut p = RawPeer::connect(&v.ep);
        p.handshake("PUSH", None).unwrap();
        p.write(&frame(0, b"good")).unwrap();
        assert_eq!(recv(&v.pull), b"good");
        let _ = p.write(&[flags, 4, b'b', b'a', b'd', b'!']);
        assert_closed(&mut p, &format!("a frame with reserved flag bits {flags:#04x}"));
        v.check_still_works();
    }
}

#[test]
fn random_garbage_after_handshake() {
    let _g = guard();
    let v = victim();
    // A deterministic pseudo-random stream.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let garbage: Vec<u8> = (0..4096)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 56) as u8 | 0x08 // ensure the first byte has a reserved bit
        })
        .collect();
    let mut p = RawPeer::connect(&v.ep);
    p.handshake("PUSH", None).unwrap();
    let _ = p.write(&garbage);
    assert_closed(&mut p, "random garbage");
    v.check_still_works();
}

#[test]
fn command_with_more_flag_or_unknown_command() {
    let _g = guard();
    // A command frame with MORE set is malformed.
    let v = victim();
    let mut p = RawPeer::connect(&v.ep);
    p.handshake("PUSH", None).unwrap();
    let _ = p.write(&frame(0x05, &command_body("PING", &[0, 0])));
    assert_closed(&mut p, "a command frame with MORE");
    v.check_still_works();
    // An unknown command after the handshake: libzmq ignores it; either way the
    // socket must keep working and no message may be delivered from it.
    let mut p2 = RawPeer::connect(&v.ep);
    p2.handshake("PUSH", None).unwrap();
    let _ = p2.write(&frame(0x04, &command_body("WHATEVER", b"data")));
    let _ = p2.write(&frame(0x00, b"after unknown command"));
    let mut items = [oxmq::PollItem::from_socket(&v.pull, oxmq::POLLIN)];
    if oxmq::poll(&mut items, 500).unwrap() > 0 {
        assert_eq!(recv(&v.pull), b"after unknown command", "a command must never surface as a message");
    }
    v.check_still_works();
}

#[test]
fn stalled_peer_closed_after_handshake_ivl() {
    let _g = guard();
    let v = victim_with(|s| s.set_option_int(opt::HANDSHAKE_IVL, 200).unwrap());
    // Sends nothing at all.
    let mut silent = RawPeer::connect(&v.ep);
    // Sends only the greeting, never READY.
    let mut half = RawPeer::connect(&v.ep);
    greet(&mut half, "NULL");
    // Sends 5 bytes of greeting.
    let mut partial = RawPeer::connect(&v.ep);
    partial.write(&greeting("NULL")[..5]).unwrap();
    let start = Instant::now();
    assert_closed(&mut silent, "a silent peer with HANDSHAKE_IVL=200");
    assert_closed(&mut half, "a peer that never sends READY with HANDSHAKE_IVL=200");
    assert_closed(&mut partial, "a peer stuck mid-greeting with HANDSHAKE_IVL=200");
    assert!(start.elapsed() < CLOSE_BOUND);
    v.check_still_works();
}

#[test]
fn handshake_ivl_zero_keeps_silent_peer() {
    let _g = guard();
    // HANDSHAKE_IVL=0 disables the timer: a silent peer is not closed (checked briefly).
    let v = victim_with(|s| s.set_option_int(opt::HANDSHAKE_IVL, 0).unwrap());
    let mut silent = RawPeer::connect(&v.ep);
    assert!(!silent.wait_closed(Duration::from_millis(400)), "closed although HANDSHAKE_IVL=0");
    v.check_still_works();
}

#[test]
fn half_greeting_then_close() {
    let _g = guard();
    let v = victim();
    for n in [1usize, 10, 11, 32, 63] {
        let mut p = RawPeer::connect(&v.ep);
        p.write(&greeting("NULL")[..n]).unwrap();
        drop(p);
    }
    // Also: full handshake then half a frame, then close.
    let mut p = RawPeer::connect(&v.ep);
    p.handshake("PUSH", None).unwrap();
    p.write(&[0x01, 10, b'a', b'b']).unwrap();
    drop(p);
    // A multipart message cut after its first frame is not delivered.
    let mut p = RawPeer::connect(&v.ep);
    p.handshake("PUSH", None).unwrap();
    p.write(&frame(0x01, b"first-of-two")).unwrap();
    drop(p);
    v.check_still_works();
    assert_nothing(&v.pull);
}

#[test]
fn many_hostile_connections_in_parallel() {
    let _g = guard();
    let v = victim_with(|s| s.set_option_int(opt::HANDSHAKE_IVL, 500).unwrap());
    let ep = v.ep.clone();
    let threads: Vec<_> = (0..8)
        .map(|i| {
            let ep = ep.clone();
            std::thread::spawn(move || {
                for j in 0..20u8 {
                    let addr = ep.strip_prefix("tcp://").unwrap();
                    let Ok(mut s) = TcpStream::connect(addr) else { continue };
                    let g = greeting("NULL");
                    let _ = match (i + j as usize) % 4 {
                        0 => s.write_all(&g),
                        1 => s.write_all(&[0xFF; 100]),
                        2 => s.write_all(&g[..j as usize % 64]),
                        _ => {
                            let _ = s.write_all(&g);
                            s.write_all(&ready_for("PUB"))
                        }
                    };
                    let _ = s.set_read_timeout(Some(Duration::from_millis(10)));
                    let mut buf = [0u8; 128];
                    let _ = s.read(&mut buf);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    v.check_still_works();
}

/// What a fake server does with the one connection it serves.
type Server = Box<dyn Fn(TcpStream)>;

/// Serve one connection of a DEALER (RECONNECT_IVL 20) with `serve`; then
/// count the connections it makes in the next 600 ms.
fn reconnects_after(serve: &dyn Fn(TcpStream)) -> usize {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let ctx = Context::new();
    let d = sock(&ctx, SocketType::Dealer);
    d.set_option_int(opt::RECONNECT_IVL, 20).unwrap();
    d.connect(&format!("tcp://127.0.0.1:{port}")).unwrap();
    let (s, _) = listener.accept().unwrap();
    serve(s);
    listener.set_nonblocking(true).unwrap();
    let mut n = 0;
    let end = Instant::now() + Duration::from_millis(600);
    while Instant::now() < end {
        match listener.accept() {
            Ok((s, _)) => {
                n += 1;
                drop(s);
            }
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    n
}

/// A server that commits a protocol error, in the handshake or after it,
/// loses the connection and is not tried again, as with libzmq 4.3.5
/// (pyzmq's libzmq made exactly 1 connection in 3 s at RECONNECT_IVL 50 to
/// each of these servers, where one that merely closes got 36). oxmq must
/// neither crash nor hang on them.
#[test]
fn connecting_to_garbage_server_stops_reconnecting() {
    let _g = guard();
    let cases: Vec<(&str, Server)> = vec![
        (
            "an HTTP answer",
            Box::new(|mut s: TcpStream| {
                // The leading 0 is a ZMTP/1.0 frame of size 0: refused, as by
                // libzmq (without it the reply would read as a 1.0 identity frame).
                let _ = s.write_all(b"\0HTTP/1.1 400 Bad Request\r\n\r\n garbage garbage garbage garbage garbage");
                let mut raw = RawPeer::from_stream(s);
                close_after_eof(&mut raw);
            }),
        ),
        (
            "a mechanism mismatch",
            Box::new(|s: TcpStream| {
                let mut raw = RawPeer::from_stream(s);
                raw.write(&greeting("PLAIN")).unwrap();
                close_after_eof(&mut raw);
            }),
        ),
        (
            "a message before READY",
            Box::new(|s: TcpStream| {
                let mut raw = RawPeer::from_stream(s);
                raw.write(&greeting("NULL")).unwrap();
                let _ = raw.read_greeting();
                let _ = raw.write(&frame(0x00, b"abc"));
                close_after_eof(&mut raw);
            }),
        ),
        (
            "an impossible frame size after the handshake",
            Box::new(|s: TcpStream| {
                let mut raw = RawPeer::from_stream(s);
                raw.handshake("ROUTER", None).unwrap();
                let _ = raw.write(&[0x02, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]);
                close_after_eof(&mut raw);
            }),
        ),
    ];
    for (what, serve) in &cases {
        assert_eq!(reconnects_after(serve.as_ref()), 0, "oxmq reconnected after {what}");
    }
    // The contrast: a server that only closes the connection is tried again.
    assert!(reconnects_after(&|s: TcpStream| drop(s)) >= 2, "a dropped connection is retried");
}

/// Wait until oxmq closes the connection (it must, after a protocol error).
fn close_after_eof(raw: &mut RawPeer) {
    assert_closed(raw, "a protocol error from the server");
}
