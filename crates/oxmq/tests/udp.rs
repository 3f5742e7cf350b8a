//! Draft RADIO/DISH over udp:// (unicast and multicast, loopback only), and
//! the datagram layout of libzmq's udp_engine checked with plain UDP sockets
//! on the other side.

mod common;

use common::*;
use oxmq::{errno, opt, Context, Msg, Socket, SocketType, DONTWAIT};
use std::net::UdpSocket;
use std::time::Duration;

fn grouped(group: &[u8], body: &[u8]) -> Msg {
    Msg::from(body).with_group(group).unwrap()
}

/// A DISH bound to `udp://host:PORT` on a free port (libzmq's LAST_ENDPOINT
/// for udp keeps a `*` port unresolved, so there is no reading it back).
fn dish_on(ctx: &Context, host: &str) -> (Socket, u16) {
    let dish = sock(ctx, SocketType::Dish);
    let port = free_port();
    dish.bind(&format!("udp://{host}:{port}")).unwrap();
    (dish, port)
}

/// UDP may lose datagrams: send probes until one arrives, then drain.
fn sync(radio: &Socket, dish: &Socket, group: &[u8]) -> bool {
    let ok = eventually(Duration::from_secs(3), || {
        radio.send(grouped(group, b"probe"), 0).unwrap();
        let mut items = [oxmq::PollItem::from_socket(dish, oxmq::POLLIN)];
        oxmq::poll(&mut items, 20).unwrap() > 0
    });
    std::thread::sleep(Duration::from_millis(50));
    while dish.recv(DONTWAIT).is_ok() {}
    ok
}

/// The next datagram that is not a leftover of `sync`: probes the loop sent
/// before the first one came back may still be on their way after the drain
/// (the DISH's I/O thread had not read them yet), and arrive first.
fn recv_grouped(dish: &Socket) -> (Vec<u8>, Vec<u8>) {
    loop {
        let m = dish.recv(0).expect("dish recv");
        if !matches!(m.as_slice(), b"probe" | b"sync") {
            return (m.group().to_vec(), m.to_vec());
        }
    }
}

#[test]
fn unicast_radio_to_dish_filters_on_the_dish() {
    let _g = guard();
    let ctx = Context::new();
    let (dish, port) = dish_on(&ctx, "127.0.0.1");
    dish.join(b"TV").unwrap();
    let radio = sock(&ctx, SocketType::Radio);
    radio.connect(&format!("udp://127.0.0.1:{port}")).unwrap();
    assert!(sync(&radio, &dish, b"TV"), "no datagram reached the DISH");

    radio.send(grouped(b"Movies", b"Godfather"), 0).unwrap();
    radio.send(grouped(b"TV", b"Friends"), 0).unwrap();
    assert_eq!(recv_grouped(&dish), (b"TV".to_vec(), b"Friends".to_vec()));
    assert_nothing_within(&dish, 100);
}

#[test]
fn only_dish_binds_and_only_radio_connects() {
    let _g = guard();
    let ctx = Context::new();
    let radio = sock(&ctx, SocketType::Radio);
    let dish = sock(&ctx, SocketType::Dish);
    let sub = sock(&ctx, SocketType::Sub);
    assert_errno(radio.bind("udp://*:5556"), errno::ENOCOMPATPROTO);
    assert_errno(dish.connect("udp://127.0.0.1:5556"), errno::ENOCOMPATPROTO);
    assert_errno(sub.connect("udp://127.0.0.1:5556"), errno::ENOCOMPATPROTO);
    assert_errno(radio.connect("udp://127.0.0.1:*"), errno::EINVAL);
    assert_errno(radio.connect("udp://*:5556"), errno::EINVAL);
    // libzmq 4.3.5 takes port 0 on connect (measured); nothing arrives.
    radio.connect("udp://127.0.0.1:0").unwrap();
    radio.send(grouped(b"g", b"nowhere"), 0).unwrap();
    // Without IPV6 a DISH tries [::1] as an interface name: ENODEV (libzmq).
    assert_errno(dish.bind("udp://[::1]:5556"), errno::ENODEV);
    assert_errno(radio.connect("udp://[::1]:5556"), errno::EINVAL);
}

#[test]
fn ipv6_unicast() {
    let _g = guard();
    if UdpSocket::bind("[::1]:0").is_err() {
        skip("ipv6_unicast", "no IPv6 loopback here");
        return;
    }
    let ctx = Context::new();
    let dish = sock(&ctx, SocketType::Dish);
    dish.set_option_int(opt::IPV6, 1).unwrap();
    let port = UdpSocket::bind("[::1]:0").unwrap().local_addr().unwrap().port();
    dish.bind(&format!("udp://[::1]:{port}")).unwrap();
    assert_eq!(dish.last_endpoint().unwrap(), format!("[::1]:{port}"));
    dish.join(b"six").unwrap();
    let radio = sock(&ctx, SocketType::Radio);
    radio.set_option_int(opt::IPV6, 1).unwrap();
    radio.connect(&format!("udp://[::1]:{port}")).unwrap();
    assert!(sync(&radio, &dish, b"six"));
    radio.send(grouped(b"six", b"v6"), 0).unwrap();
    assert_eq!(recv_grouped(&dish), (b"six".to_vec(), b"v6".to_vec()));
}

/// A free UDP port on loopback (bound and released).
fn free_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A DISH on `udp://127.0.0.1;group:port`.
fn multicast_dish(ctx: &Context, group: &str, port: u16) -> Option<Socket> {
    let dish = sock(ctx, SocketType::Dish);
    dish.bind(&format!("udp://127.0.0.1;{group}:{port}")).ok().map(|()| dish)
}

#[test]
fn multicast_on_loopback() {
    let _g = guard();
    here_or_in_multicast_netns("multicast_on_loopback", multicast_on_loopback_body);
}

fn multicast_on_loopback_body() -> Result<(), String> {
    let ctx = Context::new();
    let port = free_port();
    let dish = sock(&ctx, SocketType::Dish);
    dish.bind(&format!("udp://127.0.0.1;239.193.7.1:{port}"))
        .map_err(|e| format!("joining 239.193.7.1 on 127.0.0.1: {e}"))?;
    let dish2 = multicast_dish(&ctx, "239.193.7.1", port).unwrap();
    dish.join(b"TV").unwrap();
    dish2.join(b"TV").unwrap();
    let radio = sock(&ctx, SocketType::Radio);
    radio.set_option_int(opt::MULTICAST_HOPS, 1).unwrap();
    radio.connect(&format!("udp://127.0.0.1;239.193.7.1:{port}")).unwrap();
    if !sync(&radio, &dish, b"TV") {
        return Err("the kernel here does not loop multicast back on lo".into());
    }
    radio.send(grouped(b"TV", b"Friends"), 0).unwrap();
    assert_eq!(recv_grouped(&dish), (b"TV".to_vec(), b"Friends".to_vec()));
    // Every member on the port gets each datagram (SO_REUSEPORT, as libzmq).
    let ok = eventually(Duration::from_secs(3), || {
        while let Ok(m) = dish2.recv(DONTWAIT) {
            if m.as_slice() == b"Friends" {
                return true;
            }
        }
        false
    });
    assert!(ok, "the second DISH on the group missed the datagram");
    Ok(())
}

/// Set in the copy of this binary run inside the namespace: no second fallback.
const MCAST_NETNS_ENV: &str = "OXMQ_UDP_MCAST_NETNS";

/// Runs `body`; where the host's lo cannot carry multicast (no MULTICAST
/// flag, no route), runs `test` again in this binary inside a network
/// namespace made for it (root: lo up with MULTICAST, 224.0.0.0/4 routed to
/// lo), so the test runs instead of skipping. Skips (recorded) only when
/// neither works.
fn here_or_in_multicast_netns(test: &str, body: fn() -> Result<(), String>) {
    let why = match body() {
        Ok(()) => return,
        Err(why) => why,
    };
    assert!(std::env::var_os(MCAST_NETNS_ENV).is_none(), "{test}: {why}, even in the namespace made for multicast");
    match run_in_multicast_netns(test) {
        Ok(()) => {
            println!("{test}: {why} in the host namespace; ran and passed in a network namespace with multicast on lo")
        }
        Err(e) => skip(test, &format!("{why}; and no network namespace with multicast on lo: {e}")),
    }
}

fn run_in_multicast_netns(test: &str) -> Result<(), String> {
    use std::process::Command;
    let run = |args: &[&str]| -> Result<(), String> {
        let out = Command::new(args[0]).args(&args[1..]).output().map_err(|e| format!("{}: {e}", args[0]))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!("{}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
        }
    };
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err("needs root".into());
    }
    let ns = format!("oxmq-mcast-{}", std::process::id());
    run(&["ip", "netns", "add", &ns])?;
    struct Del(String);
    impl Drop for Del {
        fn drop(&mut self) {
            let _ = std::process::Command::new("ip").args(["netns", "del", &self.0]).output();
        }
    }
    let _del = Del(ns.clone());
    run(&["ip", "netns", "exec", &ns, "ip", "link", "set", "lo", "up", "multicast", "on"])?;
    run(&["ip", "netns", "exec", &ns, "ip", "route", "add", "224.0.0.0/4", "dev", "lo"])?;
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = Command::new("ip")
        .args(["netns", "exec", &ns])
        .arg(&exe)
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(MCAST_NETNS_ENV, "1")
        .output()
        .map_err(|e| format!("ip netns exec: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    print!("{stdout}");
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    // The child must have run exactly this test and passed it.
    assert!(out.status.success() && stdout.contains("1 passed"), "{test} failed in the multicast namespace");
    Ok(())
}

// MULTICAST_LOOP=0 cannot be observed on loopback (a datagram sent out of lo
// comes back in through lo whatever the option says; libzmq's own no-loop
// test uses the default interface): `transport::udp`'s unit tests check that
// it and MULTICAST_HOPS reach the socket.

#[test]
fn radio_datagrams_have_libzmqs_layout() {
    let _g = guard();
    let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
    peer.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let port = peer.local_addr().unwrap().port();
    let ctx = Context::new();
    let radio = sock(&ctx, SocketType::Radio);
    radio.connect(&format!("udp://127.0.0.1:{port}")).unwrap();
    radio.send(grouped(b"TV", b"Friends"), 0).unwrap();
    radio.send(Msg::from("no group"), 0).unwrap();
    let mut buf = [0u8; 9000];
    let n = peer.recv(&mut buf).unwrap();
    assert_eq!(&buf[..n], b"\x02TVFriends");
    let n = peer.recv(&mut buf).unwrap();
    assert_eq!(&buf[..n], b"\x00no group");
    // Larger than libzmq's 8192-byte datagram: not sent; the next one is.
    radio.send(grouped(b"TV", &[7u8; 8190]), 0).unwrap();
    radio.send(grouped(b"TV", b"after"), 0).unwrap();
    let n = peer.recv(&mut buf).unwrap();
    assert_eq!(&buf[..n], b"\x02TVafter");
}

#[test]
fn malformed_and_oversized_datagrams_are_dropped() {
    let _g = guard();
    let ctx = Context::new();
    let (dish, port) = dish_on(&ctx, "127.0.0.1");
    dish.join(b"TV").unwrap();
    dish.join(b"").unwrap();
    let raw = UdpSocket::bind("127.0.0.1:0").unwrap();
    raw.connect(("127.0.0.1", port)).unwrap();
    let ok = eventually(Duration::from_secs(3), || {
        raw.send(b"\x02TVsync").unwrap();
        let mut items = [oxmq::PollItem::from_socket(&dish, oxmq::POLLIN)];
        oxmq::poll(&mut items, 20).unwrap() > 0
    });
    assert!(ok, "a datagram in libzmq's layout never arrived");
    std::thread::sleep(Duration::from_millis(50));
    while dish.recv(DONTWAIT).is_ok() {}

    raw.send(b"").unwrap(); // no group length
    raw.send(b"\x09TV").unwrap(); // group longer than the datagram
    raw.send(b"\xffshort").unwrap();
    let mut big = b"\x02TV".to_vec();
    big.resize(9000, b'x'); // over libzmq's 8192-byte datagram
    raw.send(&big).unwrap();
    raw.send(b"\x02TVFriends").unwrap();
    raw.send(b"\x00").unwrap(); // empty group, empty body: well-formed
    assert_eq!(recv_grouped(&dish), (b"TV".to_vec(), b"Friends".to_vec()));
    assert_eq!(recv_grouped(&dish), (b"".to_vec(), b"".to_vec()));
    assert_nothing_within(&dish, 100);
}

/// libzmq 4.3.5 files a udp bind under an empty name: zmq_unbind never
/// finds it (measured on pyzmq's libzmq and npm zeromq 6's draft build).
/// Closing the socket is what lets go of the port.
#[test]
fn unbind_finds_no_udp_bind_and_close_releases_the_port() {
    let _g = guard();
    let ctx = Context::new();
    let (dish, port) = dish_on(&ctx, "127.0.0.1");
    let ep = format!("udp://127.0.0.1:{port}");
    assert_errno(dish.unbind(&ep), errno::ENOENT);
    assert_errno(dish.unbind(&dish.last_endpoint().unwrap()), errno::EINVAL);
    assert_errno(dish.disconnect(&ep), errno::ENOENT);
    let wildcard = sock(&ctx, SocketType::Dish);
    wildcard.bind("udp://127.0.0.1:*").unwrap();
    assert_errno(wildcard.unbind("udp://127.0.0.1:*"), errno::ENOENT);
    assert!(UdpSocket::bind(("127.0.0.1", port)).is_err(), "the DISH holds its port after the failed unbind");
    drop(dish);
    let freed = eventually(Duration::from_secs(3), || UdpSocket::bind(("127.0.0.1", port)).is_ok());
    assert!(freed, "close did not free the port");
    // A RADIO's udp connect is filed under the URI as given.
    let radio = sock(&ctx, SocketType::Radio);
    radio.connect(&format!("udp://localhost:{port}")).unwrap();
    assert_errno(radio.disconnect(&ep), errno::ENOENT);
    assert_errno(radio.disconnect(&radio.last_endpoint().unwrap()), errno::EINVAL);
    radio.disconnect(&format!("udp://localhost:{port}")).unwrap();
    // libzmq's term_endpoint checks: no `://`, an unknown transport, udp on
    // a type without it.
    assert_errno(radio.disconnect(""), errno::EINVAL);
    assert_errno(radio.disconnect("udp://"), errno::EINVAL);
    assert_errno(radio.disconnect("bogus://x"), errno::EPROTONOSUPPORT);
    assert_errno(sock(&ctx, SocketType::Pub).unbind("udp://127.0.0.1:5556"), errno::ENOCOMPATPROTO);
}

/// ZMQ_LAST_ENDPOINT after a udp bind or connect is the address as given,
/// without `udp://`, names and `*` unresolved: the strings libzmq 4.3.5
/// returns (pyzmq's and npm zeromq 6's builds; compat-test diffs oxmq's C
/// ABI against them too).
#[test]
fn last_endpoint_is_the_udp_address_as_given() {
    let _g = guard();
    here_or_in_multicast_netns("last_endpoint_is_the_udp_address_as_given", last_endpoint_body);
}

fn last_endpoint_body() -> Result<(), String> {
    let ctx = Context::new();
    let p = free_port();
    for (kind, host) in [
        (SocketType::Dish, format!("127.0.0.1:{p}")),
        (SocketType::Dish, "127.0.0.1:*".to_string()),
        (SocketType::Dish, "127.0.0.1:0".to_string()),
        (SocketType::Dish, "*:*".to_string()),
        (SocketType::Dish, format!("localhost:{p}")),
        (SocketType::Dgram, format!("127.0.0.1:{p}")),
        (SocketType::Dgram, "*:*".to_string()),
        (SocketType::Radio, format!("127.0.0.1:{p}")),
        (SocketType::Radio, format!("localhost:{p}")),
        (SocketType::Radio, "127.0.0.1:0".to_string()),
        (SocketType::Radio, format!("127.0.0.1;239.193.7.3:{p}")),
    ] {
        let s = sock(&ctx, kind);
        let ep = format!("udp://{host}");
        let r = if kind == SocketType::Radio { s.connect(&ep) } else { s.bind(&ep) };
        r.unwrap_or_else(|e| panic!("{kind:?} {ep}: {e}"));
        assert_eq!(s.last_endpoint().unwrap(), host, "{kind:?} {ep}");
        assert_eq!(s.get_option_bytes(opt::LAST_ENDPOINT).unwrap(), host.as_bytes());
    }
    let dish = sock(&ctx, SocketType::Dish);
    dish.bind(&format!("udp://127.0.0.1;239.193.7.3:{p}"))
        .map_err(|e| format!("joining 239.193.7.3 on 127.0.0.1: {e}"))?;
    assert_eq!(dish.last_endpoint().unwrap(), format!("127.0.0.1;239.193.7.3:{p}"));
    Ok(())
}

/// A DISH binds a host name the resolver knows, as libzmq 4.3.5 does
/// (measured: `udp://localhost:PORT` binds 127.0.0.1:PORT), after trying it as
/// an interface name; a name neither knows is ENODEV (libzmq's answer too).
#[test]
fn dish_binds_a_resolvable_name() {
    let _g = guard();
    let ctx = Context::new();
    let (dish, port) = dish_on(&ctx, "localhost");
    dish.join(b"g").unwrap();
    let radio = sock(&ctx, SocketType::Radio);
    radio.connect(&format!("udp://127.0.0.1:{port}")).unwrap();
    assert!(sync(&radio, &dish, b"g"), "a datagram sent to 127.0.0.1 reaches the DISH bound to localhost");
    assert_errno(sock(&ctx, SocketType::Dish).bind("udp://nosuchhost.invalid:5606"), errno::ENODEV);
}

const ALONE_ENV: &str = "OXMQ_UDP_TEST_ALONE";

/// Runs `test` again in a child process of this binary, alone, and asserts
/// that it passed there: threads can be counted only where no other test
/// starts or ends any.
fn run_alone(test: &str) {
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(exe)
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(ALONE_ENV, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    print!("{stdout}");
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && stdout.contains("1 passed"), "{test} failed when run alone");
}

fn thread_count() -> usize {
    std::fs::read_dir("/proc/self/task").unwrap().count()
}

/// udp endpoints (a DISH's and a DGRAM's binds, a RADIO's connects) are
/// served by the context's I/O thread, next to its tcp connections, as
/// libzmq's udp engines are: they start no thread of their own, so
/// ZMQ_IO_THREADS and the I/O thread's affinity and scheduling options
/// cover them too.
#[test]
fn udp_endpoints_start_no_thread_of_their_own() {
    let _g = guard();
    if std::env::var_os(ALONE_ENV).is_none() {
        return run_alone("udp_endpoints_start_no_thread_of_their_own");
    }
    let ctx = Context::new();
    // The I/O thread, started by a tcp bind.
    let anchor = sock(&ctx, SocketType::Pair);
    anchor.bind("tcp://127.0.0.1:*").unwrap();
    let before = thread_count();
    let mut pairs = Vec::new();
    for _ in 0..4 {
        let (dish, port) = dish_on(&ctx, "127.0.0.1");
        dish.join(b"g").unwrap();
        let radio = sock(&ctx, SocketType::Radio);
        radio.connect(&format!("udp://127.0.0.1:{port}")).unwrap();
        pairs.push((radio, dish));
    }
    let dgram = sock(&ctx, SocketType::Dgram);
    let port = free_port();
    dgram.bind(&format!("udp://127.0.0.1:{port}")).unwrap();
    assert_eq!(thread_count(), before, "udp endpoints started threads");
    // And they work: each DISH hears its RADIO, the DGRAM itself.
    for (radio, dish) in &pairs {
        assert!(sync(radio, dish, b"g"), "no datagram reached a DISH");
        radio.send(grouped(b"g", b"hello"), 0).unwrap();
        assert_eq!(recv_grouped(dish), (b"g".to_vec(), b"hello".to_vec()));
    }
    let to = format!("127.0.0.1:{port}");
    send_parts(&dgram, &[to.as_bytes(), b"self"]);
    assert_eq!(recv_parts(&dgram), vec![format!("{to}\0").into_bytes(), b"self".to_vec()]);
    assert_eq!(thread_count(), before);
}

/// What a RADIO queued before it closed still goes out, in order, as it did
/// when each endpoint had its own thread.
#[test]
fn a_closing_radio_sends_what_it_queued() {
    let _g = guard();
    let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
    peer.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let port = peer.local_addr().unwrap().port();
    let ctx = Context::new();
    let radio = ctx.socket(SocketType::Radio).unwrap();
    radio.connect(&format!("udp://127.0.0.1:{port}")).unwrap();
    for i in 0..50u8 {
        radio.send(grouped(b"g", &[i]), 0).unwrap();
    }
    drop(radio);
    let mut buf = [0u8; 64];
    for i in 0..50u8 {
        let n = peer.recv(&mut buf).unwrap_or_else(|e| panic!("datagram {i}: {e}"));
        assert_eq!(&buf[..n], [1, b'g', i], "datagram {i}");
    }
}
