//! Engine, listener and session tests against raw std-socket peers speaking
//! hand-written ZMTP bytes: readiness, pipes, HWM, linger and reconnect.
//! What the traffic bytes mean (PING/PONG, heartbeat timers, subscription
//! forms) is the proto `Session`'s, tested without sockets in
//! `crates/oxmq-proto/tests/session.rs`. The "socket" side is played by the test through
//! the mailbox and pipe ends an I/O thread hands out.
#![allow(clippy::field_reassign_with_default)]

use super::*;
use crate::channel::mailbox::{Inbox, SocketCommand};
use crate::channel::pipes::{new_pipe_key, SocketPipe};
use crate::msg::Msg;
use crate::pipe::{pipe, WakeSlot};
use crate::transport::endpoint::{parse_endpoint, Endpoint};
use crate::transport::tcp;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(5);

fn greeting() -> Vec<u8> {
    let mut g = vec![0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 3, 1];
    let mut mech = b"NULL".to_vec();
    mech.resize(20, 0);
    g.extend_from_slice(&mech);
    g.push(0);
    g.resize(64, 0);
    g
}

fn ready(socket_type: &str) -> Vec<u8> {
    let mut body = vec![5];
    body.extend_from_slice(b"READY");
    body.push(11);
    body.extend_from_slice(b"Socket-Type");
    body.extend_from_slice(&(socket_type.len() as u32).to_be_bytes());
    body.extend_from_slice(socket_type.as_bytes());
    let mut f = vec![0x04, body.len() as u8];
    f.extend_from_slice(&body);
    f
}

fn frame(more: bool, body: &[u8]) -> Vec<u8> {
    let mut f = Vec::new();
    oxmq_proto::encode_frame_header(&mut f, more, false, body.len());
    f.extend_from_slice(body);
    f
}

fn command(name: &str, data: &[u8]) -> Vec<u8> {
    let mut body = vec![name.len() as u8];
    body.extend_from_slice(name.as_bytes());
    body.extend_from_slice(data);
    let mut f = Vec::new();
    oxmq_proto::encode_frame_header(&mut f, false, true, body.len());
    f.extend_from_slice(&body);
    f
}

struct FakeSocket {
    io: IoThread,
    mailbox: Arc<Mailbox>,
    link: SocketLink,
    inbox: Inbox,
}

impl FakeSocket {
    fn new(socket_type: SocketType, opts: Options) -> FakeSocket {
        let io = IoThread::start(0, crate::io::ThreadTuning::default()).unwrap();
        let mailbox = Mailbox::new().unwrap();
        let link = SocketLink {
            socket_id: 1,
            socket_type,
            mailbox: mailbox.clone(),
            options: Arc::new(opts),
            linger_ms: Arc::new(AtomicI64::new(-1)),
            disconnected: Default::default(),
            endpoint_id: 7,
            endpoint: "tcp://test".into(),
            monitor: crate::monitor::Monitor::new(),
            zap: std::sync::Weak::<crate::ctx::CtxInner>::new(),
        };
        FakeSocket { io, mailbox, link, inbox: Inbox::default() }
    }

    fn bind(&self, ep: &str) -> String {
        self.io.bind(&parse_endpoint(ep).unwrap(), ep, self.link.clone()).unwrap().0
    }

    fn next_command(&mut self) -> SocketCommand {
        let deadline = Instant::now() + WAIT;
        loop {
            if !self.inbox.commands.is_empty() {
                return self.inbox.commands.remove(0);
            }
            assert!(Instant::now() < deadline, "no command from the I/O thread");
            let mut fresh = Inbox::default();
            self.mailbox.take(&mut fresh);
            self.inbox.commands.append(&mut fresh.commands);
            if self.inbox.commands.is_empty() {
                let _ = self.mailbox.signaler().wait(Some(Duration::from_millis(20)));
            }
        }
    }

    fn attached(&mut self) -> SocketPipe {
        match self.next_command() {
            SocketCommand::Attach(p) => p,
            _ => panic!("expected Attach"),
        }
    }

    fn no_command_for(&mut self, d: Duration) {
        std::thread::sleep(d);
        let mut fresh = Inbox::default();
        self.mailbox.take(&mut fresh);
        assert!(fresh.commands.is_empty() && self.inbox.commands.is_empty(), "unexpected command");
    }
}

fn recv_msg(p: &mut SocketPipe) -> Msg {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(m) = p.read() {
            return m;
        }
        assert!(!p.is_terminated(), "pipe terminated while waiting for a message");
        assert!(Instant::now() < deadline, "no message");
        std::thread::sleep(Duration::from_micros(20));
    }
}

fn wait_terminated(p: &mut SocketPipe) {
    let deadline = Instant::now() + WAIT;
    loop {
        while p.read().is_some() {}
        if p.is_terminated() {
            return;
        }
        assert!(Instant::now() < deadline, "pipe did not terminate");
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn send_msg(p: &mut SocketPipe, parts: &[&[u8]]) {
    for (i, b) in parts.iter().enumerate() {
        p.out.write(Msg::from_slice(b).with_more(i + 1 < parts.len()));
    }
    p.out.flush();
}

fn port_of(ep: &str) -> u16 {
    ep.rsplit(':').next().unwrap().parse().unwrap()
}

/// Reads exactly `n` bytes (with a timeout).
fn read_n(s: &mut impl Read, n: usize) -> Vec<u8> {
    let mut buf = vec![0; n];
    s.read_exact(&mut buf).unwrap();
    buf
}

/// Reads our greeting and READY; returns the READY body.
fn read_handshake(s: &mut TcpStream) -> Vec<u8> {
    let g = read_n(s, 64);
    assert_eq!(g[0], 0xFF);
    assert_eq!(g[9], 0x7F);
    assert_eq!(g[10], 3);
    assert_eq!(g[11], 1);
    assert_eq!(&g[12..16], b"NULL");
    let hdr = read_n(s, 2);
    assert_eq!(hdr[0], 0x04);
    read_n(s, hdr[1] as usize)
}

fn read_frame(s: &mut impl Read) -> (u8, Vec<u8>) {
    let flags = read_n(s, 1)[0];
    let len = if flags & 0x02 != 0 {
        u64::from_be_bytes(read_n(s, 8).try_into().unwrap()) as usize
    } else {
        read_n(s, 1)[0] as usize
    };
    (flags, read_n(s, len))
}

fn raw_peer(port: u16) -> TcpStream {
    let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(WAIT)).unwrap();
    s
}

/// The peer sees EOF (or a reset) within the timeout.
fn expect_closed(s: &mut TcpStream) {
    let mut buf = [0u8; 4096];
    let deadline = Instant::now() + WAIT;
    loop {
        match s.read(&mut buf) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock || e.kind() == std::io::ErrorKind::TimedOut => {
                panic!("connection not closed")
            }
            Err(_) => return,
        }
        assert!(Instant::now() < deadline, "connection not closed");
    }
}

fn handshaken_peer(port: u16, peer_type: &str) -> TcpStream {
    let mut s = raw_peer(port);
    s.write_all(&greeting()).unwrap();
    s.write_all(&ready(peer_type)).unwrap();
    let body = read_handshake(&mut s);
    assert_eq!(&body[..6], b"\x05READY");
    s
}

#[test]
fn bind_handshake_and_data_both_ways() {
    let mut sock = FakeSocket::new(SocketType::Dealer, Options::default());
    let ep = sock.bind("tcp://127.0.0.1:*");
    assert!(ep.starts_with("tcp://127.0.0.1:"));
    let mut peer = handshaken_peer(port_of(&ep), "DEALER");
    let mut p = sock.attached();
    assert_eq!(p.endpoint, 7);

    peer.write_all(&frame(true, b"hello")).unwrap();
    peer.write_all(&frame(false, &[7u8; 300])).unwrap();
    let a = recv_msg(&mut p);
    assert_eq!(a.as_slice(), b"hello");
    assert!(a.more());
    let b = recv_msg(&mut p);
    assert_eq!(b.as_slice(), &[7u8; 300][..]);
    assert!(!b.more());

    send_msg(&mut p, &[b"x", b"yz"]);
    assert_eq!(read_frame(&mut peer), (0x01, b"x".to_vec()));
    assert_eq!(read_frame(&mut peer), (0x00, b"yz".to_vec()));

    // Large bodies (zero-copy write path, large read reservation).
    let big = vec![0xABu8; 3 * 1024 * 1024 + 17];
    p.out.write(Msg::from_vec(big.clone()));
    p.out.flush();
    let (flags, body) = read_frame(&mut peer);
    assert_eq!(flags, 0x02);
    assert!(body == big);
    peer.write_all(&frame(false, &big)).unwrap();
    assert!(recv_msg(&mut p).as_slice() == &big[..]);

    // The peer leaving terminates the pipe.
    drop(peer);
    wait_terminated(&mut p);
}

#[test]
fn a_batch_cut_after_its_first_8_kib_arrives_whole_and_in_order() {
    // A batch that starts a large body is written as 8 KiB, then the rest on
    // the engine's next run. Small frames ahead of the body move the cut into
    // the small frames, the body's header, or the body itself.
    let mut sock = FakeSocket::new(SocketType::Dealer, Options::default());
    let ep = sock.bind("tcp://127.0.0.1:*");
    let mut peer = handshaken_peer(port_of(&ep), "DEALER");
    let mut p = sock.attached();
    let big: Vec<u8> = (0..300 * 1024 + 5).map(|i| (i % 251) as u8).collect();
    // Each small frame is 2 + 8 bytes on the wire; the big one has a 9-byte header.
    for small in [0usize, 10, 818, 819, 820, 1000] {
        for i in 0..small {
            p.out.write(Msg::from_slice(&(i as u64).to_be_bytes()));
        }
        p.out.write(Msg::from_slice(&big));
        p.out.write(Msg::from_slice(b"after"));
        p.out.flush();
        for i in 0..small {
            assert_eq!(read_frame(&mut peer), (0x00, (i as u64).to_be_bytes().to_vec()), "small frame {i} of {small}");
        }
        let (flags, body) = read_frame(&mut peer);
        assert_eq!(flags, 0x02, "after {small} small frames");
        assert!(body == big, "large body after {small} small frames");
        assert_eq!(read_frame(&mut peer), (0x00, b"after".to_vec()));
    }
}

#[test]
fn router_gets_routing_id_first() {
    let mut sock = FakeSocket::new(SocketType::Router, Options::default());
    let ep = sock.bind("tcp://127.0.0.1:*");
    let mut peer = raw_peer(port_of(&ep));
    peer.write_all(&greeting()).unwrap();
    // DEALER READY with Identity "abc".
    let mut body = vec![5];
    body.extend_from_slice(b"READY");
    body.push(11);
    body.extend_from_slice(b"Socket-Type");
    body.extend_from_slice(&6u32.to_be_bytes());
    body.extend_from_slice(b"DEALER");
    body.push(8);
    body.extend_from_slice(b"Identity");
    body.extend_from_slice(&3u32.to_be_bytes());
    body.extend_from_slice(b"abc");
    peer.write_all(&[0x04, body.len() as u8]).unwrap();
    peer.write_all(&body).unwrap();
    read_handshake(&mut peer);
    let mut p = sock.attached();
    peer.write_all(&frame(false, b"data")).unwrap();
    let m = recv_msg(&mut p);
    assert_eq!(m.as_slice(), b"data");
    assert_eq!(p.peer_routing_id.as_deref(), Some(&b"abc"[..]));
}

#[test]
fn bad_peers_lose_their_connection_and_others_are_unaffected() {
    let mut opts = Options::default();
    opts.maxmsgsize = Some(100);
    let mut sock = FakeSocket::new(SocketType::Pull, opts);
    let ep = sock.bind("tcp://127.0.0.1:*");
    let port = port_of(&ep);

    // A good connection first.
    let mut good = handshaken_peer(port, "PUSH");
    let mut p = sock.attached();

    // Garbage instead of a greeting. (Without the leading 0, a size-0
    // ZMTP/1.0 frame, it would read as a 1.0 identity frame of 70 octets,
    // and wait for them, as in libzmq.)
    let mut g = raw_peer(port);
    g.write_all(b"\0GET / HTTP/1.1\r\n\r\n").unwrap();
    expect_closed(&mut g);

    // Unknown mechanism.
    let mut m = raw_peer(port);
    let mut bad = greeting();
    bad[12..17].copy_from_slice(b"CURVE");
    m.write_all(&bad).unwrap();
    expect_closed(&mut m);

    // Incompatible socket type (PULL <-> PULL).
    let mut t = raw_peer(port);
    t.write_all(&greeting()).unwrap();
    t.write_all(&ready("PULL")).unwrap();
    expect_closed(&mut t);

    // A frame over MAXMSGSIZE after a good handshake.
    let mut o = handshaken_peer(port, "PUSH");
    let mut p2 = sock.attached();
    o.write_all(&frame(false, &[1u8; 101])).unwrap();
    expect_closed(&mut o);
    wait_terminated(&mut p2);

    // Reserved flag bits.
    let mut r = handshaken_peer(port, "PUSH");
    let mut p3 = sock.attached();
    r.write_all(&[0x08, 1, 0]).unwrap();
    expect_closed(&mut r);
    wait_terminated(&mut p3);

    // A peer that sends ERROR.
    let mut e = handshaken_peer(port, "PUSH");
    let mut p4 = sock.attached();
    e.write_all(&command("ERROR", b"\x03bad")).unwrap();
    expect_closed(&mut e);
    wait_terminated(&mut p4);

    // The good one still works.
    good.write_all(&frame(false, b"still here")).unwrap();
    assert_eq!(recv_msg(&mut p).as_slice(), b"still here");
    sock.no_command_for(Duration::from_millis(50));
}

#[test]
fn stalled_handshake_times_out() {
    let mut opts = Options::default();
    opts.handshake_ivl = Some(Duration::from_millis(150));
    let sock = FakeSocket::new(SocketType::Pull, opts);
    let ep = sock.bind("tcp://127.0.0.1:*");
    let mut s = raw_peer(port_of(&ep));
    let t0 = Instant::now();
    // Send half a greeting and stall.
    s.write_all(&greeting()[..20]).unwrap();
    read_n(&mut s, 64);
    expect_closed(&mut s);
    assert!(t0.elapsed() >= Duration::from_millis(100));
}

#[test]
fn rcvhwm_applies_backpressure_without_loss() {
    let mut opts = Options::default();
    opts.rcvhwm = 10;
    let mut sock = FakeSocket::new(SocketType::Pull, opts);
    let ep = sock.bind("tcp://127.0.0.1:*");
    let mut peer = handshaken_peer(port_of(&ep), "PUSH");
    let mut p = sock.attached();
    // Far more than kernel buffers hold: the writer can only finish if we
    // read, because the engine stops reading at the HWM.
    let n = 50_000u32;
    let writer = std::thread::spawn(move || {
        let mut buf = Vec::new();
        for i in 0..n {
            buf.extend_from_slice(&frame(true, b"part"));
            let mut body = i.to_be_bytes().to_vec();
            body.resize(1024, 0);
            buf.extend_from_slice(&frame(false, &body));
        }
        peer.write_all(&buf).unwrap();
        peer
    });
    std::thread::sleep(Duration::from_millis(300));
    assert!(!writer.is_finished(), "the engine kept reading past the HWM");
    for i in 0..n {
        let a = recv_msg(&mut p);
        assert_eq!(a.as_slice(), b"part");
        assert!(a.more());
        let b = recv_msg(&mut p);
        assert_eq!(&b.as_slice()[..4], &i.to_be_bytes());
    }
    let _peer = writer.join().unwrap();
}

#[test]
fn linger_flushes_queued_messages_after_the_socket_goes() {
    let mut sock = FakeSocket::new(SocketType::Push, Options::default());
    let ep = sock.bind("tcp://127.0.0.1:*");
    let mut peer = handshaken_peer(port_of(&ep), "PULL");
    let mut p = sock.attached();
    for i in 0..100u8 {
        send_msg(&mut p, &[&[i]]);
    }
    sock.io.socket_closed(1);
    drop(p);
    for i in 0..100u8 {
        assert_eq!(read_frame(&mut peer), (0, vec![i]));
    }
    expect_closed(&mut peer);
    sock.io.wait_idle();
}

#[test]
fn linger_zero_discards() {
    let mut sock = FakeSocket::new(SocketType::Push, Options::default());
    sock.link.linger_ms.store(0, Ordering::Relaxed);
    let ep = sock.bind("tcp://127.0.0.1:*");
    let mut peer = raw_peer(port_of(&ep));
    peer.write_all(&greeting()).unwrap();
    peer.write_all(&ready("PULL")).unwrap();
    let p = sock.attached();
    sock.io.socket_closed(1);
    drop(p.inn);
    drop(p.out);
    sock.io.wait_idle();
    expect_closed(&mut peer);
}

fn engine_pipe_pair(endpoint: u64) -> (SocketPipe, EnginePipe) {
    let key = new_pipe_key();
    let (out_w, out_r) = pipe(1000, WakeSlot::new(), WakeSlot::new());
    let (in_w, in_r) = pipe(1000, WakeSlot::new(), WakeSlot::new());
    (SocketPipe::new(out_w, in_r, endpoint, key), EnginePipe::new(out_r, in_w, key))
}

#[test]
fn connect_queues_before_connecting_and_reconnects_with_hiccup() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener); // nothing listens yet: connects are refused at first
    let mut opts = Options::default();
    opts.reconnect_ivl = Some(Duration::from_millis(20));
    let mut sock = FakeSocket::new(SocketType::Dealer, opts);
    let (mut sp, ep) = engine_pipe_pair(7);
    let key = ep.key;
    sock.io.connect(&parse_endpoint(&format!("tcp://127.0.0.1:{port}")).unwrap(), sock.link.clone(), Some(ep)).unwrap();
    send_msg(&mut sp, &[b"early"]);
    std::thread::sleep(Duration::from_millis(60));

    let listener = TcpListener::bind(("127.0.0.1", port)).unwrap();
    let (mut peer, _) = listener.accept().unwrap();
    peer.set_read_timeout(Some(WAIT)).unwrap();
    peer.write_all(&greeting()).unwrap();
    peer.write_all(&ready("DEALER")).unwrap();
    read_handshake(&mut peer);
    assert_eq!(read_frame(&mut peer), (0, b"early".to_vec()));
    peer.write_all(&frame(false, b"reply")).unwrap();
    assert_eq!(recv_msg(&mut sp).as_slice(), b"reply");

    // Drop the connection: the session reconnects and says Hiccup.
    drop(peer);
    let (mut peer2, _) = listener.accept().unwrap();
    peer2.set_read_timeout(Some(WAIT)).unwrap();
    peer2.write_all(&greeting()).unwrap();
    peer2.write_all(&ready("DEALER")).unwrap();
    read_handshake(&mut peer2);
    match sock.next_command() {
        SocketCommand::Hiccup { key: k } => assert_eq!(k, key),
        _ => panic!("expected Hiccup"),
    }
    send_msg(&mut sp, &[b"again"]);
    assert_eq!(read_frame(&mut peer2), (0, b"again".to_vec()));

    // disconnect: the session and its connection go.
    sock.io.close_endpoint(1, 7);
    expect_closed(&mut peer2);
    wait_terminated(&mut sp);
    sock.io.wait_idle();
}

#[test]
fn immediate_connect_attaches_per_connection() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut opts = Options::default();
    opts.immediate = true;
    opts.reconnect_ivl = Some(Duration::from_millis(20));
    let mut sock = FakeSocket::new(SocketType::Dealer, opts);
    sock.io.connect(&parse_endpoint(&format!("tcp://localhost:{port}")).unwrap(), sock.link.clone(), None).unwrap();
    for round in 0..2 {
        let (mut peer, _) = listener.accept().unwrap();
        peer.set_read_timeout(Some(WAIT)).unwrap();
        peer.write_all(&greeting()).unwrap();
        peer.write_all(&ready("DEALER")).unwrap();
        read_handshake(&mut peer);
        let mut p = sock.attached();
        send_msg(&mut p, &[format!("r{round}").as_bytes()]);
        assert_eq!(read_frame(&mut peer).1, format!("r{round}").into_bytes());
        drop(peer);
        wait_terminated(&mut p);
    }
    sock.io.socket_closed(1);
    sock.io.wait_idle();
}

#[test]
fn connect_validation() {
    let sock = FakeSocket::new(SocketType::Dealer, Options::default());
    for bad in ["tcp://127.0.0.1:*", "tcp://*:5555", "ipc://*"] {
        let e = sock.io.connect(&parse_endpoint(bad).unwrap(), sock.link.clone(), None);
        assert!(matches!(e, Err(Error::Invalid(_))), "{bad}");
    }
}

#[test]
fn ipc_wildcard_end_to_end() {
    let mut sock = FakeSocket::new(SocketType::Pull, Options::default());
    let ep = sock.bind("ipc://*");
    let path = ep.strip_prefix("ipc://").unwrap().to_string();
    let mut peer = std::os::unix::net::UnixStream::connect(&path).unwrap();
    peer.set_read_timeout(Some(WAIT)).unwrap();
    peer.write_all(&greeting()).unwrap();
    peer.write_all(&ready("PUSH")).unwrap();
    let g = read_n(&mut peer, 64);
    assert_eq!(g[0], 0xFF);
    let mut p = sock.attached();
    peer.write_all(&frame(false, b"over ipc")).unwrap();
    assert_eq!(recv_msg(&mut p).as_slice(), b"over ipc");
    // unbind removes the file.
    sock.io.close_endpoint(1, 7);
    wait_terminated(&mut p);
    sock.io.wait_idle();
    assert!(!std::path::Path::new(&path).exists());
}

#[test]
fn tcp_connect_between_two_io_threads() {
    let mut server = FakeSocket::new(SocketType::Pull, Options::default());
    let ep = server.bind("tcp://127.0.0.1:*");
    let mut client = FakeSocket::new(SocketType::Push, Options::default());
    client.link.socket_id = 2;
    let (mut sp, engine_side) = engine_pipe_pair(7);
    client.io.connect(&parse_endpoint(&ep).unwrap(), client.link.clone(), Some(engine_side)).unwrap();
    let mut p = server.attached();
    let n = 100_000u32;
    let sender = std::thread::spawn(move || {
        let mut i = 0;
        while i < n {
            if sp.out.check_write() {
                sp.out.write(Msg::from_slice(&i.to_be_bytes()));
                sp.out.flush();
                i += 1;
            } else {
                std::thread::sleep(Duration::from_micros(50));
            }
        }
        sp
    });
    for i in 0..n {
        assert_eq!(recv_msg(&mut p).as_slice(), &i.to_be_bytes());
    }
    let sp = sender.join().unwrap();
    client.io.socket_closed(2);
    drop(sp);
    client.io.wait_idle();
    wait_terminated(&mut p);
}

#[test]
fn ipv6_bind_and_connect() {
    let mut opts = Options::default();
    opts.ipv6 = true;
    let mut server = FakeSocket::new(SocketType::Pull, opts.clone());
    let ep = match server.io.bind(&parse_endpoint("tcp://[::1]:*").unwrap(), "tcp://[::1]:*", server.link.clone()) {
        Ok((ep, _)) => ep,
        Err(_) => return, // no IPv6 loopback on this host
    };
    assert!(ep.starts_with("tcp://[::1]:"), "{ep}");
    let mut client = FakeSocket::new(SocketType::Push, opts);
    client.link.socket_id = 2;
    client.io.connect(&parse_endpoint(&ep).unwrap(), client.link.clone(), None).unwrap();
    let mut cp = client.attached();
    let mut sp = server.attached();
    send_msg(&mut cp, &[b"v6"]);
    assert_eq!(recv_msg(&mut sp).as_slice(), b"v6");

    // Without the option, libzmq accepts an IPv6 literal at connect and
    // never resolves it (tcp resolution is deferred to the attempt).
    let plain = FakeSocket::new(SocketType::Push, Options::default());
    assert!(plain.io.connect(&parse_endpoint(&ep).unwrap(), plain.link.clone(), None).is_ok());
    assert!(tcp::resolve(
        match &parse_endpoint(&ep).unwrap() {
            Endpoint::Tcp(a) => a,
            _ => unreachable!(),
        },
        false,
        false
    )
    .is_err());

    // `*` with IPV6 is dual-stack and reported as [::].
    let wild = server.io.bind(&parse_endpoint("tcp://*:*").unwrap(), "tcp://*:*", server.link.clone()).unwrap().0;
    assert!(wild.starts_with("tcp://[::]:"), "{wild}");
    let mut peer = handshaken_peer(port_of(&wild), "PUSH");
    let mut p = server.attached();
    peer.write_all(&frame(false, b"v4 on v6")).unwrap();
    assert_eq!(recv_msg(&mut p).as_slice(), b"v4 on v6");
}

#[test]
fn lying_frame_header_does_not_allocate_it() {
    let mut sock = FakeSocket::new(SocketType::Pull, Options::default());
    let ep = sock.bind("tcp://127.0.0.1:*");
    let mut peer = handshaken_peer(port_of(&ep), "PUSH");
    let _p = sock.attached();
    let mut hdr = vec![0x02];
    hdr.extend_from_slice(&(1u64 << 62).to_be_bytes());
    peer.write_all(&hdr).unwrap();
    peer.write_all(&[0u8; 1000]).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    drop(peer);
    let mut good = handshaken_peer(port_of(&ep), "PUSH");
    let mut p = sock.attached();
    good.write_all(&frame(false, b"ok")).unwrap();
    assert_eq!(recv_msg(&mut p).as_slice(), b"ok");
}

/// `cargo test --release -p oxmq --lib io::tests::throughput -- --ignored --nocapture`
#[test]
#[ignore]
fn throughput() {
    for (size, n) in [(8usize, 2_000_000u32), (64, 2_000_000), (1024, 500_000), (65536, 20_000)] {
        let mut server = FakeSocket::new(SocketType::Pull, Options::default());
        let ep = server.bind("tcp://127.0.0.1:*");
        let mut client = FakeSocket::new(SocketType::Push, Options::default());
        client.link.socket_id = 2;
        let (mut sp, engine_side) = engine_pipe_pair(7);
        client.io.connect(&parse_endpoint(&ep).unwrap(), client.link.clone(), Some(engine_side)).unwrap();
        let mut p = server.attached();
        let body = vec![1u8; size];
        let t0 = Instant::now();
        let sender = std::thread::spawn(move || {
            let mut i = 0;
            while i < n {
                if sp.out.check_write() {
                    sp.out.write(Msg::from_slice(&body));
                    sp.out.flush();
                    i += 1;
                } else {
                    std::thread::yield_now();
                }
            }
            sp
        });
        let mut got = 0;
        while got < n {
            if p.read().is_some() {
                got += 1;
            } else {
                std::thread::yield_now();
            }
        }
        let dt = t0.elapsed();
        let _sp = sender.join().unwrap();
        println!(
            "size {size:>6}: {:>10.0} msg/s {:>8.1} MB/s",
            f64::from(n) / dt.as_secs_f64(),
            f64::from(n) * size as f64 / dt.as_secs_f64() / 1e6
        );
    }
}
