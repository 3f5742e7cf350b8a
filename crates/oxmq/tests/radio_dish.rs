//! Draft RADIO/DISH over tcp, ipc and inproc (libzmq 4.3.5's test_radio_dish
//! cases, and the errors of zmq_join / zmq_leave / zmq_msg_set_group).

mod common;

use common::*;
use oxmq::{errno, opt, Context, Msg, Socket, SocketType, DONTWAIT, GROUP_MAX_LENGTH, SNDMORE};
use std::time::Duration;

const ALL: [Transport; 5] = [
    Transport::Tcp,
    Transport::IpcPath,
    Transport::IpcAbstract,
    Transport::InprocBindFirst,
    Transport::InprocConnectFirst,
];

fn grouped(group: &[u8], body: &[u8]) -> Msg {
    Msg::from(body).with_group(group).unwrap()
}

/// Send probes to `group` until one arrives: the DISH's join has reached the RADIO.
fn sync(radio: &Socket, dish: &Socket, group: &[u8]) {
    let ok = eventually(Duration::from_secs(5), || {
        radio.send(grouped(group, b"probe"), 0).unwrap();
        let mut items = [oxmq::PollItem::from_socket(dish, oxmq::POLLIN)];
        oxmq::poll(&mut items, 20).unwrap() > 0
    });
    assert!(ok, "join of {group:?} never reached the RADIO");
    while dish.recv(DONTWAIT).is_ok() {}
}

/// The next message that is not a leftover of `sync`: a probe sent before
/// the first one came back may arrive after the drain.
fn recv_grouped(dish: &Socket) -> (Vec<u8>, Vec<u8>) {
    loop {
        let m = dish.recv(0).expect("dish recv");
        if m.as_slice() != b"probe" {
            return (m.group().to_vec(), m.to_vec());
        }
    }
}

fn groups_filter_on_the_radio(t: Transport) {
    let _g = guard();
    let ctx = Context::new();
    let radio = sock(&ctx, SocketType::Radio);
    let dish = sock(&ctx, SocketType::Dish);
    dish.join(b"Movies").unwrap();
    link(t, &radio, &dish);
    sync(&radio, &dish, b"Movies");

    // Not joined: never sent.
    radio.send(grouped(b"TV", b"Friends"), 0).unwrap();
    radio.send(grouped(b"Movies", b"Godfather"), 0).unwrap();
    assert_eq!(recv_grouped(&dish), (b"Movies".to_vec(), b"Godfather".to_vec()));

    // Join while connected.
    dish.join(b"TV").unwrap();
    sync(&radio, &dish, b"TV");
    radio.send(grouped(b"TV", b"Friends"), 0).unwrap();
    assert_eq!(recv_grouped(&dish), (b"TV".to_vec(), b"Friends".to_vec()));

    // Leave: the RADIO stops sending that group (probe through a group still joined).
    dish.leave(b"TV").unwrap();
    let ok = eventually(Duration::from_secs(5), || {
        radio.send(grouped(b"TV", b"gone"), 0).unwrap();
        radio.send(grouped(b"Movies", b"marker"), 0).unwrap();
        let mut saw_tv = false;
        loop {
            let (g, _) = recv_grouped(&dish);
            if g == b"TV" {
                saw_tv = true;
            } else {
                break;
            }
        }
        !saw_tv
    });
    assert!(ok, "the RADIO kept sending a group the DISH left");

    // The longest group libzmq 4.3.5 takes.
    let long = vec![b'A'; GROUP_MAX_LENGTH];
    dish.join(&long).unwrap();
    sync(&radio, &dish, &long);
    radio.send(grouped(&long, b"long"), 0).unwrap();
    assert_eq!(recv_grouped(&dish), (long.clone(), b"long".to_vec()));
}

fn two_dishes_get_only_their_groups(t: Transport) {
    let _g = guard();
    let ctx = Context::new();
    let radio = sock(&ctx, SocketType::Radio);
    let a = sock(&ctx, SocketType::Dish);
    let b = sock(&ctx, SocketType::Dish);
    a.join(b"A").unwrap();
    b.join(b"B").unwrap();
    let ep = link(t, &radio, &a);
    connect_to(&ep, &b);
    sync(&radio, &a, b"A");
    sync(&radio, &b, b"B");
    for i in 0..20u8 {
        radio.send(grouped(if i % 2 == 0 { b"A" } else { b"B" }, &[i]), 0).unwrap();
    }
    for i in (0..20u8).step_by(2) {
        assert_eq!(recv_grouped(&a), (b"A".to_vec(), vec![i]));
        assert_eq!(recv_grouped(&b), (b"B".to_vec(), vec![i + 1]));
    }
    assert_nothing(&a);
    assert_nothing(&b);
}

#[test]
fn groups_filter_on_the_radio_every_transport() {
    for t in ALL {
        groups_filter_on_the_radio(t);
    }
}

#[test]
fn two_dishes_every_transport() {
    for t in ALL {
        two_dishes_get_only_their_groups(t);
    }
}

#[test]
fn join_and_leave_errors_are_libzmqs() {
    let _g = guard();
    let ctx = Context::new();
    let dish = sock(&ctx, SocketType::Dish);
    dish.join(b"Movies").unwrap();
    assert_errno(dish.join(b"Movies"), errno::EINVAL);
    assert_errno(dish.leave(b"TV"), errno::EINVAL);
    dish.leave(b"Movies").unwrap();
    assert_errno(dish.leave(b"Movies"), errno::EINVAL);
    assert_errno(dish.join(&vec![b'A'; GROUP_MAX_LENGTH + 1]), errno::EINVAL);
    dish.join(&vec![b'A'; GROUP_MAX_LENGTH]).unwrap();
    assert_errno(dish.send(Msg::from("x"), 0), errno::ENOTSUP);
    assert_eq!(dish.get_option_int(opt::THREAD_SAFE).unwrap(), 1);
    assert_ne!(dish.events().unwrap() & oxmq::POLLOUT, 0, "DISH reports POLLOUT as libzmq's does");

    let radio = sock(&ctx, SocketType::Radio);
    assert_errno(radio.join(b"x"), errno::ENOTSUP);
    assert_errno(radio.recv(DONTWAIT), errno::ENOTSUP);
    assert_errno(radio.send(grouped(b"g", b"part"), SNDMORE), errno::EINVAL);
    assert_errno(radio.send_multipart([grouped(b"g", b"a"), grouped(b"g", b"b")], 0), errno::EINVAL);
    assert_errno(dish.recv_multipart(DONTWAIT), errno::EAGAIN);
    assert_eq!(radio.get_option_int(opt::THREAD_SAFE).unwrap(), 1);
    radio.set_option_int(opt::XPUB_NODROP, 1).unwrap();

    let sub = sock(&ctx, SocketType::Sub);
    assert_errno(sub.join(b"x"), errno::ENOTSUP);
    assert_eq!(sub.get_option_int(opt::THREAD_SAFE).unwrap(), 0);
}

#[test]
fn a_malformed_peer_loses_its_connection_not_the_dish() {
    // A byte-level ZMTP 3.1 peer announcing RADIO: checks the JOIN command
    // on the wire, then sends a message without its group frame.
    use std::io::{Read, Write};
    let _g = guard();
    let ctx = Context::new();
    let dish = sock(&ctx, SocketType::Dish);
    dish.join(b"G").unwrap();
    dish.bind("tcp://127.0.0.1:*").unwrap();
    let port = tcp_port(&dish.last_endpoint().unwrap());

    let mut raw = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    raw.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    // ZMTP 3.1 greeting, NULL mechanism, as server = 0.
    let mut greeting = vec![0xff, 0, 0, 0, 0, 0, 0, 0, 1, 0x7f, 3, 1];
    greeting.extend_from_slice(b"NULL");
    greeting.resize(64, 0);
    raw.write_all(&greeting).unwrap();
    let mut peer_greeting = [0u8; 64];
    raw.read_exact(&mut peer_greeting).unwrap();
    let mut ready = vec![5u8, b'R', b'E', b'A', b'D', b'Y'];
    ready.extend_from_slice(&[11, b'S', b'o', b'c', b'k', b'e', b't', b'-', b'T', b'y', b'p', b'e']);
    ready.extend_from_slice(&5u32.to_be_bytes());
    ready.extend_from_slice(b"RADIO");
    let mut cmd = vec![0x04, ready.len() as u8];
    cmd.extend_from_slice(&ready);
    raw.write_all(&cmd).unwrap();
    // Read the DISH's READY, then its JOIN command: 0x04 len 0x04 "JOIN" "G".
    let mut hdr = [0u8; 2];
    raw.read_exact(&mut hdr).unwrap();
    let mut body = vec![0u8; hdr[1] as usize];
    raw.read_exact(&mut body).unwrap();
    assert_eq!(&body[..6], b"\x05READY");
    // The DISH attaches the new connection (and sends its joins) when it
    // next handles commands, as libzmq's does: poke it until they come.
    raw.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
    let ok = eventually(Duration::from_secs(5), || {
        let _ = dish.events();
        raw.read_exact(&mut hdr).is_ok()
    });
    assert!(ok, "no JOIN from the DISH");
    raw.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut join = vec![0u8; hdr[1] as usize];
    raw.read_exact(&mut join).unwrap();
    assert_eq!((hdr[0], &join[..]), (0x04, &b"\x04JOING"[..]), "JOIN is a ZMTP command frame");
    // A well-formed pair arrives with its group...
    raw.write_all(&[0x01, 1, b'G', 0x00, 2, b'o', b'k']).unwrap();
    assert_eq!(recv_grouped(&dish), (b"G".to_vec(), b"ok".to_vec()));
    // ...a lone frame (no group part) is a protocol error: the connection goes.
    raw.write_all(&[0x00, 3, b'b', b'a', b'd']).unwrap();
    raw.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
    let closed = eventually(Duration::from_secs(5), || {
        assert_nothing(&dish);
        let mut buf = [0u8; 16];
        match raw.read(&mut buf) {
            Ok(0) => true,
            Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
            Ok(_) => false,
        }
    });
    assert!(closed, "the DISH should drop a peer that breaks the group/body form");

    // The DISH still serves a real RADIO.
    let radio = sock(&ctx, SocketType::Radio);
    radio.connect(&dish.last_endpoint().unwrap()).unwrap();
    sync(&radio, &dish, b"G");
    radio.send(grouped(b"G", b"after"), 0).unwrap();
    assert_eq!(recv_grouped(&dish), (b"G".to_vec(), b"after".to_vec()));
}
