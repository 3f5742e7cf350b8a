//! Draft DGRAM over udp:// (loopback): messages are [address][body] both
//! ways, checked between two DGRAMs (libzmq's test_dgram round trip) and
//! against plain UDP sockets, with libzmq 4.3.5's errors. Then DGRAM over
//! tcp/ipc (libzmq's raw byte streams) and inproc, as
//! tests/interop/dgram/stream_transports.py measured libzmq 4.3.5.

mod common;

use common::*;
use oxmq::{errno, opt, Context, Msg, Socket, SocketType, DONTWAIT, SNDMORE};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// A DGRAM on a free port (libzmq's LAST_ENDPOINT keeps a udp `*` port
/// unresolved, so it cannot be read back).
fn bound(ctx: &Context) -> (Socket, String) {
    let s = sock(ctx, SocketType::Dgram);
    let port = UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let addr = format!("127.0.0.1:{port}");
    s.bind(&format!("udp://{addr}")).unwrap();
    assert_eq!(s.last_endpoint().unwrap(), addr, "libzmq's udp LAST_ENDPOINT: the address as given");
    (s, addr)
}

fn plain_peer() -> (UdpSocket, String) {
    let u = UdpSocket::bind("127.0.0.1:0").unwrap();
    u.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let a = u.local_addr().unwrap().to_string();
    (u, a)
}

/// The address frame libzmq delivers: `ip:port` and a NUL.
fn frame(addr: &str) -> Vec<u8> {
    let mut f = addr.as_bytes().to_vec();
    f.push(0);
    f
}

#[test]
fn two_dgrams_round_trip_as_in_libzmqs_test() {
    let _g = guard();
    let ctx = Context::new();
    let (listener, listener_addr) = bound(&ctx);
    let (sender, sender_addr) = bound(&ctx);
    send_parts(&sender, &[listener_addr.as_bytes(), b"Is someone there ?"]);
    let got = recv_parts(&listener);
    assert_eq!(got, vec![frame(&sender_addr), b"Is someone there ?".to_vec()]);
    // Replying to the address frame as received (NUL included) works.
    send_parts(&listener, &[&got[0], b"Yes, there is !"]);
    assert_eq!(recv_parts(&sender), vec![frame(&listener_addr), b"Yes, there is !".to_vec()]);
}

#[test]
fn plain_udp_peers_see_bare_payloads_from_the_bound_port() {
    let _g = guard();
    let ctx = Context::new();
    let (d, d_addr) = bound(&ctx);
    let (u, u_addr) = plain_peer();
    u.send_to(b"hello", &d_addr).unwrap();
    assert_eq!(recv_parts(&d), vec![frame(&u_addr), b"hello".to_vec()]);
    send_parts(&d, &[u_addr.as_bytes(), b"reply"]);
    let mut buf = [0u8; 100];
    let (n, from) = u.recv_from(&mut buf).unwrap();
    assert_eq!((&buf[..n], from.to_string()), (&b"reply"[..], d_addr.clone()));
    // An empty datagram is a message with an empty body.
    u.send_to(b"", &d_addr).unwrap();
    assert_eq!(recv_parts(&d), vec![frame(&u_addr), Vec::new()]);
}

#[test]
fn bad_addresses_and_oversized_datagrams_drop_only_themselves() {
    let _g = guard();
    let ctx = Context::new();
    let (d, d_addr) = bound(&ctx);
    let (u, u_addr) = plain_peer();
    // libzmq drops a message whose address does not resolve; the send succeeds.
    for bad in [&b"nonsense"[..], b"127.0.0.1:0", b"localhost:1", b"[::1]:1"] {
        send_parts(&d, &[bad, b"lost"]);
    }
    // Larger than libzmq's 8192-byte send buffer: dropped, not sent.
    send_parts(&d, &[u_addr.as_bytes(), &vec![0; 8193]]);
    send_parts(&d, &[u_addr.as_bytes(), b"after"]);
    let mut buf = vec![0u8; 65536];
    let (n, _) = u.recv_from(&mut buf).unwrap();
    assert_eq!(&buf[..n], b"after", "only the good message went out");
    // Received: too large for libzmq's 8192-byte buffer is dropped whole.
    u.send_to(&vec![b'A'; 9000], &d_addr).unwrap();
    u.send_to(&vec![b'B'; 8192], &d_addr).unwrap();
    u.send_to(b"next", &d_addr).unwrap();
    assert_eq!(recv_parts(&d)[1], vec![b'B'; 8192]);
    assert_eq!(recv_parts(&d)[1], b"next");
    assert_nothing_within(&d, 50);
}

#[test]
fn frame_counts_and_transports_fail_with_libzmqs_errors() {
    let _g = guard();
    let ctx = Context::new();
    let d = sock(&ctx, SocketType::Dgram);
    // Nothing bound: nowhere to send from (libzmq: EAGAIN without waiting).
    assert_errno(d.send(Msg::from(&b"127.0.0.1:9"[..]), SNDMORE | DONTWAIT), errno::EAGAIN);
    assert_errno(d.connect("udp://127.0.0.1:5556"), errno::ENOCOMPATPROTO);
    assert_errno(d.bind("foo://x"), errno::EPROTONOSUPPORT);
    assert_errno(d.bind("udp://nosuchif0:5556"), errno::ENODEV);
    let (d, _) = bound(&ctx);
    assert_errno(d.send(Msg::from(&b"lonely"[..]), 0), errno::EINVAL);
    d.send(Msg::from(&b"127.0.0.1:9"[..]), SNDMORE).unwrap();
    assert_errno(d.send(Msg::from(&b"body"[..]), SNDMORE), errno::EINVAL);
    d.send(Msg::from(&b"body"[..]), 0).unwrap();
    // Not thread-safe, as libzmq's dgram_t: it has a ZMQ_FD.
    assert_eq!(d.get_option_int(opt::THREAD_SAFE).unwrap(), 0);
    assert!(d.get_option_int(opt::FD).is_ok());
    for kind in [SocketType::Pair, SocketType::Server, SocketType::Stream] {
        assert_errno(sock(&ctx, kind).bind("udp://127.0.0.1:*"), errno::ENOCOMPATPROTO);
    }
}

/// libzmq 4.3.5 files a udp bind under an empty name, so zmq_unbind never
/// finds it (ENOENT, measured); closing the DGRAM frees the port.
#[test]
fn unbind_finds_no_udp_bind_and_closing_releases_the_port() {
    let _g = guard();
    let ctx = Context::new();
    let (d, addr) = bound(&ctx);
    assert!(UdpSocket::bind(&addr).is_err(), "the DGRAM holds its port");
    assert_errno(d.unbind(&format!("udp://{addr}")), errno::ENOENT);
    assert_errno(d.unbind(&addr), errno::EINVAL);
    assert!(UdpSocket::bind(&addr).is_err(), "the DGRAM still holds its port");
    let port = addr.rsplit(':').next().unwrap().to_string();
    let (u, u_addr) = plain_peer();
    assert!(
        eventually(Duration::from_secs(3), || send_ok(&d, &u_addr) && recv_from_port(&u).as_deref() == Some(&port[..])),
        "nothing sent from the bound port"
    );
    drop(d);
    assert!(eventually(Duration::from_secs(3), || UdpSocket::bind(&addr).is_ok()), "close did not free the port");
}

fn send_ok(d: &Socket, to: &str) -> bool {
    d.send_multipart([Msg::from(to.as_bytes()), Msg::from(&b"x"[..])], DONTWAIT).is_ok()
}

fn recv_from_port(u: &UdpSocket) -> Option<String> {
    u.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
    let mut buf = [0u8; 16];
    u.recv_from(&mut buf).ok().map(|(_, a)| a.port().to_string())
}

#[test]
fn a_datagram_wakes_a_poller() {
    let _g = guard();
    let ctx = Context::new();
    let (d, d_addr) = bound(&ctx);
    let (u, _) = plain_peer();
    let mut items = [oxmq::PollItem::from_socket(&d, oxmq::POLLIN)];
    assert_eq!(oxmq::poll(&mut items, 0).unwrap(), 0);
    u.send_to(b"wake", &d_addr).unwrap();
    assert_eq!(oxmq::poll(&mut items, 5000).unwrap(), 1, "no POLLIN for an arrived datagram");
    assert_eq!(recv_parts(&d)[1], b"wake");
}

/// A plain (non-ZMQ) stream client of a DGRAM's tcp:// or ipc:// endpoint.
fn raw_client(ep: &str) -> Box<dyn RawIo> {
    if let Some(addr) = ep.strip_prefix("tcp://") {
        let t = TcpStream::connect(addr).unwrap();
        t.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        return Box::new(t);
    }
    let u = UnixStream::connect(ep.strip_prefix("ipc://").unwrap()).unwrap();
    u.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    Box::new(u)
}

trait RawIo: Read + Write {}
impl<T: Read + Write> RawIo for T {}

fn read_n(r: &mut dyn RawIo, n: usize) -> Vec<u8> {
    let mut buf = vec![0; n];
    r.read_exact(&mut buf).unwrap();
    buf
}

fn empty() -> Vec<Vec<u8>> {
    vec![Vec::new()]
}

#[test]
fn tcp_and_ipc_are_raw_streams_to_one_peer() {
    let _g = guard();
    let ctx = Context::new();
    for ep in ["tcp://127.0.0.1:*".to_string(), ipc_path_endpoint()] {
        let d = sock(&ctx, SocketType::Dgram);
        d.bind(&ep).unwrap();
        let ep = d.last_endpoint().unwrap();
        let mut r = raw_client(&ep);
        assert_eq!(recv_parts(&d), empty(), "{ep}: the connect notice");
        r.write_all(b"\x01\x00raw bytes").unwrap();
        assert_eq!(recv_parts(&d), vec![b"\x01\x00raw bytes".to_vec()], "{ep}: one read, one frame");
        assert_errno(d.send(Msg::from(&b"lonely"[..]), 0), errno::EINVAL);
        send_parts(&d, &[b"127.0.0.1:9", b"|x"]);
        assert_eq!(read_n(&mut *r, 13), b"127.0.0.1:9|x", "{ep}: both frames, unframed");
        // A second peer is closed at once and announces nothing.
        let mut r2 = raw_client(&ep);
        assert_nothing_within(&d, 300);
        assert_eq!(r2.read(&mut [0; 16]).unwrap(), 0, "{ep}: the second connection is closed");
        drop(r);
        assert_eq!(recv_parts(&d), empty(), "{ep}: the disconnect notice");
        assert_nothing_within(&d, 100);
    }
}

#[test]
fn an_empty_frame_adds_no_bytes_where_libzmq_aborts() {
    let _g = guard();
    let ctx = Context::new();
    let d = sock(&ctx, SocketType::Dgram);
    d.bind("tcp://127.0.0.1:*").unwrap();
    let mut r = raw_client(&d.last_endpoint().unwrap());
    assert_eq!(recv_parts(&d), empty());
    for parts in [&[&b"to"[..], b""], &[b"", b"x"], &[b"", b""], &[b"end", b"!"]] {
        send_parts(&d, parts);
    }
    assert_eq!(read_n(&mut *r, 7), b"toxend!");
    r.write_all(b"alive").unwrap();
    assert_eq!(recv_parts(&d), vec![b"alive".to_vec()], "the connection lives on");
}

#[test]
fn two_dgrams_over_tcp_and_ipc_and_inproc() {
    let _g = guard();
    let ctx = Context::new();
    for t in [Transport::Tcp, Transport::IpcPath, Transport::InprocBindFirst, Transport::InprocConnectFirst] {
        let (a, b) = (sock(&ctx, SocketType::Dgram), sock(&ctx, SocketType::Dgram));
        link(t, &a, &b);
        if !t.is_inproc() {
            assert_eq!(recv_parts(&a), empty(), "{t:?}: bind side's notice");
            assert_eq!(recv_parts(&b), empty(), "{t:?}: connect side's notice");
        }
        send_parts(&b, &[b"addr", b"body"]);
        let want = if t.is_inproc() { vec![b"addr".to_vec(), b"body".to_vec()] } else { vec![b"addrbody".to_vec()] };
        assert_eq!(recv_parts(&a), want, "{t:?}");
        send_parts(&a, &[b"x", b"y"]);
        let want = if t.is_inproc() { vec![b"x".to_vec(), b"y".to_vec()] } else { vec![b"xy".to_vec()] };
        assert_eq!(recv_parts(&b), want, "{t:?}: the other way");
        if t.is_inproc() {
            send_parts(&b, &[b"", b""]);
            assert_eq!(recv_parts(&a), vec![Vec::new(), Vec::new()], "inproc passes empty frames as they are");
        }
        drop(b);
        if !t.is_inproc() {
            assert_eq!(recv_parts(&a), empty(), "{t:?}: disconnect notice");
        }
        assert_nothing_within(&a, 100);
    }
}

#[test]
fn a_connecting_dgram_queues_and_reconnects() {
    let _g = guard();
    let ctx = Context::new();
    let srv = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = srv.local_addr().unwrap().port();
    let d = sock(&ctx, SocketType::Dgram);
    d.set_option_int(opt::RECONNECT_IVL, 20).unwrap();
    d.connect(&format!("tcp://127.0.0.1:{port}")).unwrap();
    send_parts(&d, &[b"early", b"!"]);
    let (mut c, _) = srv.accept().unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    assert_eq!(read_n(&mut c, 6), b"early!", "sent before the connection existed");
    assert_eq!(recv_parts(&d), empty(), "connect notice");
    c.write_all(b"hello").unwrap();
    assert_eq!(recv_parts(&d), vec![b"hello".to_vec()]);
    drop(c);
    assert_eq!(recv_parts(&d), empty(), "disconnect notice");
    let (mut c, _) = srv.accept().unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    assert_eq!(recv_parts(&d), empty(), "reconnect notice");
    send_parts(&d, &[b"again", b"."]);
    assert_eq!(read_n(&mut c, 6), b"again.");
}

#[test]
fn over_ws_frames_travel_as_they_are_between_dgrams_only() {
    let _g = guard();
    let ctx = Context::new();
    let (a, b) = (sock(&ctx, SocketType::Dgram), sock(&ctx, SocketType::Dgram));
    a.bind("ws://127.0.0.1:*").unwrap();
    let ep = a.last_endpoint().unwrap();
    b.connect(&ep).unwrap();
    // libzmq's ZWS engine is not raw: no notices, ZMTP framing.
    send_parts(&b, &[b"addr", b""]);
    assert_eq!(recv_parts(&a), vec![b"addr".to_vec(), Vec::new()]);
    send_parts(&a, &[b"x", b"y"]);
    assert_eq!(recv_parts(&b), vec![b"x".to_vec(), b"y".to_vec()]);
    // A DGRAM is compatible with DGRAM alone (libzmq's check_socket_type):
    // the PAIR's handshake fails, and what it queued never arrives. (The send
    // can find the pipe already gone once the handshake failed: EAGAIN.)
    let p = sock(&ctx, SocketType::Pair);
    p.connect(&ep).unwrap();
    let _ = p.send(Msg::from(&b"lost"[..]), DONTWAIT);
    assert_nothing_within(&a, 300);
}
