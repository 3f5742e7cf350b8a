//! Host name resolution on connect, against a real DNS server the test
//! controls: `make dns-test` runs these in a private mount and network
//! namespace where /etc/resolv.conf points at a dnsmasq on loopback that
//! serves a hosts file (`OXMQ_DNS_HOSTS`, re-read on SIGHUP to
//! `OXMQ_DNS_PID`) and forwards `slow.oxmq.test` and the names under it to
//! tests/interop/dns/held_dns.py, which answers as its zone file (`OXMQ_DNS_ZONE`)
//! says, at once or once `OXMQ_DNS_RELEASE` exists.
//!
//! Outside that set-up the names do not resolve, so the tests are ignored by
//! a plain `cargo test` and run by the make step with `--ignored`.

mod common;

use common::*;
use oxmq::{monitor_event as ev, opt, Context, Socket, SocketType};
use std::net::{IpAddr, SocketAddr, TcpListener, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

fn env_path(name: &str) -> PathBuf {
    PathBuf::from(std::env::var(name).unwrap_or_else(|_| panic!("{name} unset: run these with `make dns-test`")))
}

fn lookup(name: &str) -> Vec<IpAddr> {
    (name, 1).to_socket_addrs().map(|it| it.map(|a: SocketAddr| a.ip()).collect()).unwrap_or_default()
}

/// Serve `hosts` from now on: rewrite the file, have dnsmasq re-read it and
/// wait until the resolver's answer for `name` includes `ip` (or until it
/// has none, for `None`).
fn set_hosts(hosts: &str, name: &str, ip: Option<&str>) {
    std::fs::write(env_path("OXMQ_DNS_HOSTS"), hosts).unwrap();
    let pid: i32 = std::env::var("OXMQ_DNS_PID").unwrap().parse().unwrap();
    // SAFETY: a signal to the dnsmasq this test's set-up started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGHUP) }, 0, "dnsmasq is gone");
    let want: Option<IpAddr> = ip.map(|f| f.parse().unwrap());
    let served = |got: Vec<IpAddr>| match want {
        Some(w) => got.contains(&w),
        None => got.is_empty(),
    };
    assert!(eventually(BOUND, || served(lookup(name))), "dnsmasq never served {name} as {ip:?}: {:?}", lookup(name));
}

/// Have the held server answer as `zone` says (see held_dns.py) with no
/// answer released yet.
fn set_zone(zone: &str) -> PathBuf {
    let release = env_path("OXMQ_DNS_RELEASE");
    let _ = std::fs::remove_file(&release);
    std::fs::write(env_path("OXMQ_DNS_ZONE"), zone).unwrap();
    release
}

fn bound_pull(ctx: &Context, ep: &str) -> Socket {
    let s = sock(ctx, SocketType::Pull);
    s.bind(ep).unwrap();
    s
}

/// The ids of the monitor's events up to and including the first `id`.
fn events_until(reader: &Socket, id: u16) -> Vec<u16> {
    let (last, before) = wait_for(reader, id);
    before.iter().chain([&last]).map(|e| e.id).collect()
}

/// A lookup the DNS server has not answered yet holds up only its own
/// connection: another connection of the same context (same I/O thread)
/// connects and carries traffic meanwhile, and the held one connects once
/// the answer comes.
#[test]
#[ignore = "needs the DNS set-up of `make dns-test`"]
fn a_slow_lookup_stalls_only_its_own_connection() {
    let _g = guard();
    let release = env_path("OXMQ_DNS_RELEASE");
    let _ = std::fs::remove_file(&release);
    set_hosts("127.0.0.1 fast.oxmq.test\n", "fast.oxmq.test", Some("127.0.0.1"));
    let ctx = Context::new();
    let slow_pull = bound_pull(&ctx, "tcp://127.0.0.1:*");
    let fast_pull = bound_pull(&ctx, "tcp://127.0.0.1:*");
    let slow_port = tcp_port(&slow_pull.last_endpoint().unwrap());
    let fast_port = tcp_port(&fast_pull.last_endpoint().unwrap());

    let slow = sock(&ctx, SocketType::Push);
    slow.connect(&format!("tcp://slow.oxmq.test:{slow_port}")).unwrap();
    send(&slow, b"held");
    let fast = sock(&ctx, SocketType::Push);
    fast.connect(&format!("tcp://fast.oxmq.test:{fast_port}")).unwrap();
    send(&fast, b"through");
    assert_eq!(recv(&fast_pull), b"through");
    assert!(!release.exists(), "nothing has released the held answer yet");
    assert_nothing(&slow_pull);

    std::fs::write(&release, b"").unwrap();
    assert_eq!(recv(&slow_pull), b"held");
    let _ = std::fs::remove_file(&release);
}

/// Every address of a name is tried in order: the dead ones refuse, the
/// live one listens. dnsmasq rotates the order of its answers, so the
/// connect is repeated until the live address was not the first tried;
/// every one of them must connect.
#[test]
#[ignore = "needs the DNS set-up of `make dns-test`"]
fn every_address_is_tried_until_one_connects() {
    let _g = guard();
    let ctx = Context::new();
    let pull = bound_pull(&ctx, "tcp://127.0.0.4:*");
    let port = tcp_port(&pull.last_endpoint().unwrap());
    set_hosts(
        "127.0.0.2 multi.oxmq.test\n127.0.0.3 multi.oxmq.test\n127.0.0.4 multi.oxmq.test\n",
        "multi.oxmq.test",
        Some("127.0.0.4"),
    );
    assert!(eventually(BOUND, || lookup("multi.oxmq.test").len() == 3), "{:?}", lookup("multi.oxmq.test"));

    let mut dead_first = 0;
    for round in 0..12 {
        let push = sock(&ctx, SocketType::Push);
        let mon = monitor(&ctx, &push, u32::from(ev::ALL));
        push.connect(&format!("tcp://multi.oxmq.test:{port}")).unwrap();
        send(&push, format!("found {round}").as_bytes());
        assert_eq!(recv(&pull), format!("found {round}").as_bytes());
        let seen = events_until(&mon, ev::CONNECTED);
        assert!(!seen.contains(&ev::CONNECT_RETRIED), "connected without a retry: {seen:x?}");
        let attempts = seen.iter().filter(|e| **e == ev::CONNECT_DELAYED).count();
        let refused = seen.iter().filter(|e| **e == ev::CLOSED).count();
        assert!((1..=3).contains(&attempts), "one attempt per address at most: {seen:x?}");
        assert_eq!(refused, attempts - 1, "each dead address was closed: {seen:x?}");
        if attempts > 1 {
            dead_first += 1;
        }
        if dead_first >= 2 {
            return;
        }
    }
    panic!("the live address came first in {} rounds of 12", 12 - dead_first);
}

/// A listener whose accept queue is full: the kernel drops further SYNs,
/// so a connect to it neither succeeds nor fails for a long while.
fn black_hole(ip: &str) -> (socket2::Socket, Vec<std::net::TcpStream>, u16) {
    use socket2::{Domain, Socket as Raw, Type};
    let l = Raw::new(Domain::IPV4, Type::STREAM, None).unwrap();
    l.bind(&format!("{ip}:0").parse::<SocketAddr>().unwrap().into()).unwrap();
    l.listen(0).unwrap();
    let addr = l.local_addr().unwrap().as_socket().unwrap();
    // A backlog of 0 holds one connection; the next SYNs are dropped.
    let fill: Vec<_> =
        (0..2).filter_map(|_| std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(300)).ok()).collect();
    assert!(!fill.is_empty(), "could not fill the accept queue of {addr}");
    (l, fill, addr.port())
}

/// Happy Eyeballs (RFC 8305): an address that never answers does not hold
/// up the next one; 250 ms after the first attempt began the second starts,
/// and it connects while the first is still pending.
#[test]
#[ignore = "needs the DNS set-up of `make dns-test`"]
fn an_address_that_never_answers_does_not_hold_up_the_next() {
    let _g = guard();
    let ctx = Context::new();
    let (_hole, _fill, port) = black_hole("127.0.0.8");
    let pull = bound_pull(&ctx, &format!("tcp://127.0.0.9:{port}"));
    set_hosts("127.0.0.8 he.oxmq.test\n127.0.0.9 he.oxmq.test\n", "he.oxmq.test", Some("127.0.0.9"));
    assert!(eventually(BOUND, || lookup("he.oxmq.test").len() == 2), "{:?}", lookup("he.oxmq.test"));

    let mut hole_first = 0;
    for round in 0..12 {
        let push = sock(&ctx, SocketType::Push);
        let mon = monitor(&ctx, &push, u32::from(ev::ALL));
        push.connect(&format!("tcp://he.oxmq.test:{port}")).unwrap();
        send(&push, format!("past {round}").as_bytes());
        assert_eq!(recv(&pull), format!("past {round}").as_bytes());
        let seen = events_until(&mon, ev::CONNECTED);
        assert!(!seen.contains(&ev::CONNECT_RETRIED), "connected without a retry: {seen:x?}");
        assert!(!seen.contains(&ev::CLOSED), "the pending attempt was never refused: {seen:x?}");
        if seen.iter().filter(|e| **e == ev::CONNECT_DELAYED).count() == 2 {
            hole_first += 1;
        }
        if hole_first >= 2 {
            return;
        }
    }
    panic!("the black hole came first in {hole_first} rounds of 12");
}

/// A dual-stack name: without ZMQ_IPV6 only its IPv4 address is tried (as
/// libzmq asks getaddrinfo for AF_INET only); with it the IPv6 address, dead
/// here, is tried too and the IPv4 one still connects.
#[test]
#[ignore = "needs the DNS set-up of `make dns-test`"]
fn a_dual_stack_name_tries_each_family_the_options_allow() {
    let _g = guard();
    let ctx = Context::new();
    let pull = bound_pull(&ctx, "tcp://127.0.0.10:*");
    let port = tcp_port(&pull.last_endpoint().unwrap());
    set_hosts("::1 ds.oxmq.test\n127.0.0.10 ds.oxmq.test\n", "ds.oxmq.test", Some("127.0.0.10"));
    assert!(eventually(BOUND, || lookup("ds.oxmq.test").len() == 2), "{:?}", lookup("ds.oxmq.test"));

    let attempts = |ipv6: i64, round: usize| {
        let push = sock(&ctx, SocketType::Push);
        push.set_option_int(opt::IPV6, ipv6).unwrap();
        let mon = monitor(&ctx, &push, u32::from(ev::ALL));
        push.connect(&format!("tcp://ds.oxmq.test:{port}")).unwrap();
        send(&push, format!("ds {round}").as_bytes());
        assert_eq!(recv(&pull), format!("ds {round}").as_bytes());
        let seen = events_until(&mon, ev::CONNECTED);
        assert!(!seen.contains(&ev::CONNECT_RETRIED), "connected without a retry: {seen:x?}");
        seen.iter().filter(|e| **e == ev::CONNECT_DELAYED).count()
    };
    for round in 0..4 {
        assert_eq!(attempts(0, round), 1, "IPv4 only without ZMQ_IPV6");
    }
    let mut v6_first = 0;
    for round in 0..12 {
        let n = attempts(1, round);
        assert!((1..=2).contains(&n), "{n} attempts for two addresses");
        v6_first += usize::from(n == 2);
        if v6_first >= 2 {
            return;
        }
    }
    panic!("the IPv6 address came first in {v6_first} rounds of 12");
}

/// The name is looked up again at each reconnect: when its record moves,
/// the next connection goes to the new address.
#[test]
#[ignore = "needs the DNS set-up of `make dns-test`"]
fn a_reconnect_follows_a_record_that_moved() {
    let _g = guard();
    let ctx = Context::new();
    let old = bound_pull(&ctx, "tcp://127.0.0.5:*");
    let port = tcp_port(&old.last_endpoint().unwrap());
    let new = bound_pull(&ctx, &format!("tcp://127.0.0.6:{port}"));
    set_hosts("127.0.0.5 moving.oxmq.test\n", "moving.oxmq.test", Some("127.0.0.5"));

    let push = sock(&ctx, SocketType::Push);
    push.set_option_int(opt::RECONNECT_IVL, 50).unwrap();
    let mon = monitor(&ctx, &push, u32::from(ev::ALL));
    push.connect(&format!("tcp://moving.oxmq.test:{port}")).unwrap();
    send(&push, b"to old");
    assert_eq!(recv(&old), b"to old");
    events_until(&mon, ev::HANDSHAKE_SUCCEEDED);

    set_hosts("127.0.0.6 moving.oxmq.test\n", "moving.oxmq.test", Some("127.0.0.6"));
    drop(old);
    events_until(&mon, ev::DISCONNECTED);
    send(&push, b"to new");
    assert_eq!(recv(&new), b"to new");
}

/// A name that does not resolve: connect succeeds (libzmq resolves later,
/// in its connecter), the failure shows as CONNECT_RETRIED with no socket
/// ever opened or closed, and the lookup is retried until the name appears.
#[test]
#[ignore = "needs the DNS set-up of `make dns-test`"]
fn a_failed_lookup_is_reported_and_retried() {
    let _g = guard();
    let ctx = Context::new();
    let pull = bound_pull(&ctx, "tcp://127.0.0.7:*");
    let port = tcp_port(&pull.last_endpoint().unwrap());
    set_hosts("", "later.oxmq.test", None);

    let push = sock(&ctx, SocketType::Push);
    push.set_option_int(opt::RECONNECT_IVL, 50).unwrap();
    let mon = monitor(&ctx, &push, u32::from(ev::ALL));
    push.connect(&format!("tcp://later.oxmq.test:{port}")).unwrap();
    for _ in 0..2 {
        let Event { id: e, value: ivl, .. } = next_event(&mon);
        assert_eq!(e, ev::CONNECT_RETRIED, "a failed lookup is reported as a retry, nothing else");
        assert!(ivl >= 50, "the retry waits RECONNECT_IVL: {ivl}");
    }
    set_hosts("127.0.0.7 later.oxmq.test\n", "later.oxmq.test", Some("127.0.0.7"));
    send(&push, b"late");
    assert_eq!(recv(&pull), b"late");
}

/// RFC 8305 section 3, AAAA first: the A answer is held, the AAAA one comes
/// at once, and the connect starts on it without waiting for the A answer.
#[test]
#[ignore = "needs the DNS set-up of `make dns-test`"]
fn the_aaaa_answer_starts_the_connect_without_the_a_answer() {
    let _g = guard();
    let release = set_zone("v4-held.slow.oxmq.test AAAA now ::1\nv4-held.slow.oxmq.test A held 127.0.0.1\n");
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    pull.set_option_int(opt::IPV6, 1).unwrap();
    pull.bind("tcp://[::1]:*").expect("an IPv6 loopback (::1) to listen on");
    let port = tcp_port(&pull.last_endpoint().unwrap());

    let push = sock(&ctx, SocketType::Push);
    push.set_option_int(opt::IPV6, 1).unwrap();
    push.connect(&format!("tcp://v4-held.slow.oxmq.test:{port}")).unwrap();
    send(&push, b"on AAAA");
    assert_eq!(recv(&pull), b"on AAAA");
    assert!(!release.exists(), "the A answer was never released");
    std::fs::write(&release, b"").unwrap();
}

/// RFC 8305 sections 3 and 4, A first: the AAAA answer is held, so the
/// connect starts on the A answer alone (after the 50 ms Resolution Delay);
/// that address never answers, and when the AAAA answer comes its address
/// joins the attempts and connects.
#[test]
#[ignore = "needs the DNS set-up of `make dns-test`"]
fn the_a_answer_starts_the_connect_and_a_late_aaaa_answer_joins_it() {
    let _g = guard();
    let (_hole, _fill, port) = black_hole("127.0.0.12");
    let release = set_zone("v6-late.slow.oxmq.test A now 127.0.0.12\nv6-late.slow.oxmq.test AAAA held ::1\n");
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    pull.set_option_int(opt::IPV6, 1).unwrap();
    pull.bind(&format!("tcp://[::1]:{port}")).expect("an IPv6 loopback (::1) to listen on");

    let push = sock(&ctx, SocketType::Push);
    push.set_option_int(opt::IPV6, 1).unwrap();
    let mon = monitor(&ctx, &push, u32::from(ev::ALL));
    push.connect(&format!("tcp://v6-late.slow.oxmq.test:{port}")).unwrap();
    send(&push, b"joined");
    let before = events_until(&mon, ev::CONNECT_DELAYED);
    assert_eq!(before, [ev::CONNECT_DELAYED], "the attempt to the A address started first");
    assert!(!release.exists(), "the AAAA answer was never released");
    assert_nothing(&pull);

    std::fs::write(&release, b"").unwrap();
    assert_eq!(recv(&pull), b"joined");
    let after = events_until(&mon, ev::CONNECTED);
    assert_eq!(after, [ev::CONNECT_DELAYED, ev::CONNECTED], "the AAAA address joined the race and won");
}

/// A lookup that finds nothing is reported to version-2 monitors as
/// RESOLVE_FAILED with getaddrinfo's code, once per attempt whatever the
/// number of families asked, then CONNECT_RETRIED as in libzmq; the lookup is
/// retried at RECONNECT_IVL until the name appears.
#[test]
#[ignore = "needs the DNS set-up of `make dns-test`"]
fn a_failed_lookup_is_a_resolve_failed_event_for_version_2_monitors() {
    let _g = guard();
    let ctx = Context::new();
    let pull = bound_pull(&ctx, "tcp://127.0.0.16:*");
    let port = tcp_port(&pull.last_endpoint().unwrap());
    set_hosts("", "absent.oxmq.test", None);

    let push = sock(&ctx, SocketType::Push);
    push.set_option_int(opt::RECONNECT_IVL, 50).unwrap();
    push.set_option_int(opt::IPV6, 1).unwrap();
    let mon = monitor_v2(&ctx, &push, ev::ALL_OXMQ);
    push.connect(&format!("tcp://absent.oxmq.test:{port}")).unwrap();
    for _ in 0..2 {
        let e = next_event_v2(&mon);
        assert_eq!(e.id, ev::RESOLVE_FAILED);
        let code = e.values[0] as i64;
        assert_eq!(code, i64::from(libc::EAI_NONAME), "getaddrinfo's code for a name that does not exist");
        let e = next_event_v2(&mon);
        assert_eq!(e.id, u64::from(ev::CONNECT_RETRIED), "then the retry, as in libzmq");
        assert!(e.values[0] >= 50, "the retry waits RECONNECT_IVL: {e:?}");
    }
    set_hosts("127.0.0.16 absent.oxmq.test\n", "absent.oxmq.test", Some("127.0.0.16"));
    send(&push, b"found");
    assert_eq!(recv(&pull), b"found");
}

/// `tcp://src;dst:port` with a host name as the source: looked up off the
/// I/O thread like the destination (a held answer holds up only its own
/// connection), and the connection comes from the address it names.
#[test]
#[ignore = "needs the DNS set-up of `make dns-test`"]
fn a_source_host_name_is_looked_up_off_the_io_thread() {
    let _g = guard();
    let release = set_zone("src.slow.oxmq.test A held 127.0.0.14\n");
    set_hosts("127.0.0.1 fast.oxmq.test\n", "fast.oxmq.test", Some("127.0.0.1"));
    let ctx = Context::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let fast_pull = bound_pull(&ctx, "tcp://127.0.0.1:*");
    let fast_port = tcp_port(&fast_pull.last_endpoint().unwrap());

    let from_src = sock(&ctx, SocketType::Push);
    from_src.connect(&format!("tcp://src.slow.oxmq.test;127.0.0.1:{port}")).unwrap();
    let fast = sock(&ctx, SocketType::Push);
    fast.connect(&format!("tcp://fast.oxmq.test:{fast_port}")).unwrap();
    send(&fast, b"through");
    assert_eq!(recv(&fast_pull), b"through");
    assert!(!release.exists(), "nothing has released the held answer yet");
    assert!(listener.accept().is_err(), "no connection before the source's address is known");

    std::fs::write(&release, b"").unwrap();
    let mut peer = None;
    assert!(eventually(BOUND, || {
        peer = listener.accept().ok().map(|(_, a)| a);
        peer.is_some()
    }));
    assert_eq!(peer.unwrap().ip(), "127.0.0.14".parse::<IpAddr>().unwrap(), "bound to the source's address");
}

/// ws:// host names use the same resolver: a held lookup holds up only its
/// own connection, and zmq_connect itself does no lookup.
#[test]
#[ignore = "needs the DNS set-up of `make dns-test`"]
fn a_ws_host_name_is_looked_up_off_the_io_thread() {
    let _g = guard();
    let release = set_zone("ws.slow.oxmq.test A held 127.0.0.1\n");
    set_hosts("127.0.0.1 fast.oxmq.test\n", "fast.oxmq.test", Some("127.0.0.1"));
    let ctx = Context::new();
    let ws_pull = bound_pull(&ctx, "ws://127.0.0.1:*/zmq");
    let ws_port = tcp_port(&ws_pull.last_endpoint().unwrap());
    let fast_pull = bound_pull(&ctx, "ws://127.0.0.1:*/zmq");
    let fast_port = tcp_port(&fast_pull.last_endpoint().unwrap());

    let held = sock(&ctx, SocketType::Push);
    held.connect(&format!("ws://ws.slow.oxmq.test:{ws_port}/zmq")).unwrap();
    send(&held, b"held");
    let fast = sock(&ctx, SocketType::Push);
    fast.connect(&format!("ws://fast.oxmq.test:{fast_port}/zmq")).unwrap();
    send(&fast, b"through");
    assert_eq!(recv(&fast_pull), b"through");
    assert!(!release.exists(), "nothing has released the held answer yet");
    assert_nothing(&ws_pull);

    std::fs::write(&release, b"").unwrap();
    assert_eq!(recv(&ws_pull), b"held");
}
