//! STREAM sockets: raw TCP peers with a routing-id frame per connection,
//! STREAM_NOTIFY connect/disconnect notices, closing by an empty frame.

mod common;

use common::*;
use oxmq::{errno, opt, Context, SocketType};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

/// Read from a raw peer until `want` bytes came.
fn read_exact_within(c: &mut TcpStream, want: usize) -> Vec<u8> {
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut out = vec![0u8; want];
    c.read_exact(&mut out).unwrap();
    out
}

/// Receive `[id][data]` frames from the STREAM until `want` data bytes from `id`.
fn recv_bytes(s: &oxmq::Socket, id: &[u8], want: usize) -> Vec<u8> {
    let mut got = Vec::new();
    while got.len() < want {
        let parts = recv_parts(s);
        assert_eq!(parts.len(), 2, "STREAM messages are [id][data]");
        assert_eq!(parts[0], id);
        assert!(!parts[1].is_empty(), "no notice expected here");
        got.extend_from_slice(&parts[1]);
    }
    got
}

#[test]
fn bound_stream_talks_to_a_raw_tcp_client() {
    let _g = guard();
    let ctx = Context::new();
    let s = sock(&ctx, SocketType::Stream);
    s.bind("tcp://127.0.0.1:*").unwrap();
    let port = tcp_port(&s.last_endpoint().unwrap());

    let mut client = TcpStream::connect(("127.0.0.1", port)).unwrap();
    // Connect notice: [id][""]; libzmq's generated ids are 5 bytes, first 0.
    let notice = recv_parts(&s);
    assert_eq!(notice.len(), 2);
    let id = notice[0].clone();
    assert_eq!(id.len(), 5);
    assert_eq!(id[0], 0);
    assert!(notice[1].is_empty());

    // Raw bytes, not ZMTP: an HTTP request goes through as it is.
    client.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
    assert_eq!(recv_bytes(&s, &id, 18), b"GET / HTTP/1.0\r\n\r\n");

    send_parts(&s, &[&id, b"HTTP/1.0 200 OK\r\n\r\nhi"]);
    assert_eq!(read_exact_within(&mut client, 21), b"HTTP/1.0 200 OK\r\n\r\nhi");

    // MORE on the data frame is ignored: still one write.
    s.send_multipart([&id[..], b"more"].iter().map(|p| oxmq::Msg::from(*p)), 0).unwrap();
    assert_eq!(read_exact_within(&mut client, 4), b"more");

    // An empty data frame closes the connection; no disconnect notice follows.
    send_parts(&s, &[&id, b""]);
    let mut buf = [0u8; 8];
    client.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    assert_eq!(client.read(&mut buf).unwrap(), 0, "peer sees EOF");
    assert_nothing_within(&s, 200);

    // The id is gone: sending to it is EHOSTUNREACH.
    assert_errno(s.send(oxmq::Msg::from(&id[..]), oxmq::SNDMORE), errno::EHOSTUNREACH);
}

#[test]
fn client_disconnect_is_announced() {
    let _g = guard();
    let ctx = Context::new();
    let s = sock(&ctx, SocketType::Stream);
    s.bind("tcp://127.0.0.1:*").unwrap();
    let port = tcp_port(&s.last_endpoint().unwrap());
    let a = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let id_a = recv_parts(&s)[0].clone();
    let mut b = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let id_b = recv_parts(&s)[0].clone();
    assert_ne!(id_a, id_b, "one routing id per connection");
    drop(a);
    assert_eq!(recv_parts(&s), vec![id_a.clone(), vec![]], "disconnect notice");
    b.write_all(b"x").unwrap();
    assert_eq!(recv_bytes(&s, &id_b, 1), b"x");
}

#[test]
fn notify_off_and_connecting_side() {
    let _g = guard();
    let ctx = Context::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let s = sock(&ctx, SocketType::Stream);
    assert_errno(s.set_option_int(opt::STREAM_NOTIFY, 2), errno::EINVAL);
    s.set_option_int(opt::STREAM_NOTIFY, 0).unwrap();
    s.set_option_bytes(opt::CONNECT_ROUTING_ID, b"srv").unwrap();
    s.connect(&format!("tcp://127.0.0.1:{port}")).unwrap();
    let (mut peer, _) = listener.accept().unwrap();
    // No notice; the alias names the connection once it is up.
    assert!(eventually(Duration::from_secs(5), || s.send(oxmq::Msg::from(&b"srv"[..]), oxmq::SNDMORE).is_ok()));
    send(&s, b"hello");
    assert_eq!(read_exact_within(&mut peer, 5), b"hello");
    peer.write_all(b"back").unwrap();
    assert_eq!(recv_bytes(&s, b"srv", 4), b"back");
    drop(peer);
    assert_nothing_within(&s, 200);
}

#[test]
fn connecting_side_with_notify() {
    let _g = guard();
    let ctx = Context::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let s = sock(&ctx, SocketType::Stream);
    s.connect(&format!("tcp://127.0.0.1:{port}")).unwrap();
    let (mut peer, _) = listener.accept().unwrap();
    let notice = recv_parts(&s);
    assert!(notice[1].is_empty());
    send_parts(&s, &[&notice[0], b"hello"]);
    assert_eq!(read_exact_within(&mut peer, 5), b"hello");
    // The peer hangs up: a blocked recv wakes with the disconnect notice.
    drop(peer);
    assert_eq!(recv_parts(&s), vec![notice[0].clone(), vec![]]);
}

/// Data and the hang-up can arrive in one readiness event (the peer writes
/// and closes before the engine reads): the data is delivered and the
/// disconnect still announced. A short read there used to end the read
/// loop before the EOF was seen, and the notice never came.
#[test]
fn data_and_hangup_together_still_announce_the_disconnect() {
    let _g = guard();
    let ctx = Context::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    for round in 0..20 {
        let s = sock(&ctx, SocketType::Stream);
        s.set_option_int(opt::RECONNECT_IVL, -1).unwrap();
        s.connect(&format!("tcp://127.0.0.1:{port}")).unwrap();
        let (mut peer, _) = listener.accept().unwrap();
        peer.write_all(b"bye").unwrap();
        drop(peer);
        let notice = recv_parts(&s);
        assert!(notice[1].is_empty(), "round {round}: connect notice first");
        assert_eq!(recv_bytes(&s, &notice[0], 3), b"bye", "round {round}");
        assert_eq!(recv_parts(&s), vec![notice[0].clone(), vec![]], "round {round}: disconnect notice");
    }
}

/// Closing with an empty frame still writes what was queued before it, even
/// with LINGER 0 (the socket stays open; only that connection ends).
#[test]
fn close_writes_queued_data_first() {
    let _g = guard();
    let ctx = Context::new();
    let s = sock(&ctx, SocketType::Stream);
    s.bind("tcp://127.0.0.1:*").unwrap();
    let port = tcp_port(&s.last_endpoint().unwrap());
    let mut client = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let id = recv_parts(&s)[0].clone();
    let big = vec![7u8; 1 << 20];
    send_parts(&s, &[&id, &big]);
    send_parts(&s, &[&id, b""]);
    let mut got = Vec::new();
    client.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    client.read_to_end(&mut got).unwrap();
    assert_eq!(got.len(), big.len());
    assert!(got == big);
}

/// libzmq's test_connect_rid `test_stream_2_stream`: a connecting STREAM has
/// its pipe, named by CONNECT_ROUTING_ID, from the `connect` on, so it can
/// send to that name at once; the data goes out once the connection is up.
#[test]
fn connect_routing_id_names_the_connection_before_it_is_up() {
    let _g = guard();
    let ctx = Context::new();
    let rbind = sock(&ctx, SocketType::Stream);
    rbind.set_option_int(opt::STREAM_NOTIFY, 0).unwrap();
    rbind.bind("tcp://127.0.0.1:*").unwrap();
    let ep = rbind.last_endpoint().unwrap();
    let rconn = sock(&ctx, SocketType::Stream);
    rconn.set_option_bytes(opt::CONNECT_ROUTING_ID, b"conn1").unwrap();
    rconn.connect(&ep).unwrap();
    send_parts(&rconn, &[b"conn1", b"hi 1"]);
    let parts = recv_parts(&rbind);
    assert_eq!(parts[0].len(), 5, "a generated routing id");
    assert_eq!(parts[0][0], 0, "generated ids start with a zero byte");
    assert_eq!(parts[1], b"hi 1");
}

/// libzmq's test_stream `test_stream_to_dealer`: the notice's routing-id
/// frame carries the connection's properties ("Peer-Address"), and the id a
/// STREAM generates is what its ROUTING_ID option reads back
/// (test_stream_disconnect sends to that).
#[test]
fn notices_carry_peer_address_and_generated_id_is_the_routing_id_option() {
    let _g = guard();
    let ctx = Context::new();
    let server = sock(&ctx, SocketType::Stream);
    server.bind("tcp://127.0.0.1:*").unwrap();
    let ep = server.last_endpoint().unwrap();
    let client = sock(&ctx, SocketType::Stream);
    client.connect(&ep).unwrap();
    let own = client.get_option_bytes(opt::ROUTING_ID).unwrap();
    assert_eq!(own.len(), 5, "the connection's generated id, from the connect on");

    let notice = server.recv(0).unwrap();
    assert!(notice.more());
    assert_eq!(server.peer_property("Peer-Address").as_deref(), Some(&b"127.0.0.1"[..]));
    assert!(server.recv(0).unwrap().is_empty(), "connect notice");
    assert_eq!(server.get_option_bytes(opt::ROUTING_ID).unwrap(), notice.as_slice());

    let parts = recv_parts(&client);
    assert_eq!(parts, vec![own.clone(), vec![]], "the client's notice names its connection");
    send_parts(&client, &[&own, b"ping"]);
    assert_eq!(recv_bytes(&server, notice.as_slice(), 4), b"ping");
    assert_eq!(server.peer_property("Peer-Address").as_deref(), Some(&b"127.0.0.1"[..]));
    drop(client);
    assert_eq!(recv_parts(&server), vec![notice.to_vec(), vec![]], "disconnect notice");
}
