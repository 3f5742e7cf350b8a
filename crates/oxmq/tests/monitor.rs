//! Socket monitors (libzmq `zmq_socket_monitor`): event frames, the events
//! of binds, accepts, connects, handshakes and disconnects over tcp and ipc,
//! masks, stopping and replacing monitors, and a reader that never reads.

mod common;

use common::*;
use oxmq::{errno, monitor_event as ev, opt, Context, SocketType, DONTWAIT};
use oxmq_proto::error::zmq_codes;

fn ids(events: &[Event]) -> Vec<u16> {
    events.iter().map(|e| e.id).collect()
}

#[test]
fn frame_format_and_listening_event() {
    let _g = guard();
    let ctx = Context::new();
    let s = sock(&ctx, SocketType::Rep);
    let reader = monitor(&ctx, &s, ev::ALL as u32);
    s.bind("tcp://127.0.0.1:*").unwrap();
    let ep = s.last_endpoint().unwrap();

    let msg = reader.recv(0).unwrap();
    assert!(msg.more(), "first frame has MORE");
    let b = msg.as_slice();
    assert_eq!(b.len(), 6);
    // pyzmq parses it with struct "=hi": native u16 then native u32, packed.
    assert_eq!(u16::from_ne_bytes([b[0], b[1]]), ev::LISTENING);
    let fd = u32::from_ne_bytes([b[2], b[3], b[4], b[5]]);
    assert!(fd > 2 && fd < 1 << 20, "value is the listener's fd: {fd}");
    let endpoint = reader.recv(0).unwrap();
    assert!(!endpoint.more(), "two frames only");
    assert_eq!(endpoint.as_slice(), ep.as_bytes(), "LISTENING names the resolved endpoint");
    assert_nothing(&reader);
}

#[test]
fn listening_on_ipc_and_bind_failed() {
    let _g = guard();
    let ctx = Context::new();
    let s = sock(&ctx, SocketType::Pull);
    let reader = monitor(&ctx, &s, ev::ALL as u32);
    let ep = bind_fresh(Transport::IpcPath, &s);
    let e = next_event(&reader);
    assert_eq!((e.id, e.endpoint.as_str()), (ev::LISTENING, ep.as_str()));

    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let busy = format!("tcp://127.0.0.1:{}", taken.local_addr().unwrap().port());
    assert_errno(s.bind(&busy), errno::EADDRINUSE);
    let e = next_event(&reader);
    assert_eq!(e, Event { id: ev::BIND_FAILED, value: errno::EADDRINUSE as u32, endpoint: busy });
    // inproc binds have no listener and report nothing (as libzmq).
    s.bind(&inproc_endpoint()).unwrap();
    assert_nothing(&reader);
}

fn connect_and_handshake(t: Transport) {
    let ctx = Context::new();
    let binder = sock(&ctx, SocketType::Pull);
    let connecter = sock(&ctx, SocketType::Push);
    let bmon = monitor(&ctx, &binder, ev::ALL as u32);
    let cmon = monitor(&ctx, &connecter, ev::ALL as u32);
    let ep = link(t, &binder, &connecter);
    send(&connecter, b"hello");
    assert_eq!(recv(&binder), b"hello");

    let (listening, _) = wait_for(&bmon, ev::LISTENING);
    assert_eq!(listening.endpoint, ep);
    let (accepted, skipped) = wait_for(&bmon, ev::ACCEPTED);
    assert!(skipped.is_empty(), "{skipped:?}");
    assert_eq!(accepted.endpoint, ep, "ACCEPTED names the listener's endpoint");
    assert!(accepted.value > 2, "ACCEPTED carries the connection's fd");
    let (hs, skipped) = wait_for(&bmon, ev::HANDSHAKE_SUCCEEDED);
    assert!(skipped.is_empty(), "{skipped:?}");
    assert_eq!((hs.value, hs.endpoint.as_str()), (0, ep.as_str()));

    let (connected, skipped) = wait_for(&cmon, ev::CONNECTED);
    let expect_skipped: Vec<u16> = if t == Transport::Tcp { vec![ev::CONNECT_DELAYED] } else { vec![] };
    assert_eq!(ids(&skipped), expect_skipped, "before CONNECTED: {skipped:?}");
    if let Some(d) = skipped.first() {
        assert_eq!((d.value, d.endpoint.as_str()), (libc::EINPROGRESS as u32, ep.as_str()));
    }
    assert_eq!(connected.endpoint, ep, "CONNECTED names the connect endpoint");
    assert!(connected.value > 2);
    let (hs, skipped) = wait_for(&cmon, ev::HANDSHAKE_SUCCEEDED);
    assert!(skipped.is_empty(), "{skipped:?}");
    assert_eq!(hs.endpoint, ep);

    // The connecter goes away: the binder's connection is DISCONNECTED,
    // with the fd ACCEPTED reported.
    drop(connecter);
    let e = next_event(&cmon);
    assert_eq!((e.id, e.value, e.endpoint.as_str()), (ev::MONITOR_STOPPED, 0, ""), "closing stops the monitor");
    let (disc, skipped) = wait_for(&bmon, ev::DISCONNECTED);
    assert!(skipped.is_empty(), "{skipped:?}");
    assert_eq!((disc.value, disc.endpoint.as_str()), (accepted.value, ep.as_str()));
    assert_nothing(&bmon);
}

#[test]
fn accept_connect_handshake_disconnect_tcp() {
    let _g = guard();
    connect_and_handshake(Transport::Tcp);
}

#[test]
fn accept_connect_handshake_disconnect_ipc() {
    let _g = guard();
    connect_and_handshake(Transport::IpcPath);
}

#[test]
fn connecter_sees_disconnect_and_retries() {
    let _g = guard();
    let ctx = Context::new();
    let binder = sock(&ctx, SocketType::Pull);
    let ep = bind_fresh(Transport::Tcp, &binder);
    let connecter = sock(&ctx, SocketType::Push);
    connecter.set_option_int(opt::RECONNECT_IVL, 50).unwrap();
    let cmon = monitor(&ctx, &connecter, ev::ALL as u32);
    connecter.connect(&ep).unwrap();
    let (connected, _) = wait_for(&cmon, ev::CONNECTED);
    assert_eq!(connected.endpoint, ep);
    let (hs, _) = wait_for(&cmon, ev::HANDSHAKE_SUCCEEDED);
    assert_eq!(hs.endpoint, ep);
    drop(binder);
    let (disc, skipped) = wait_for(&cmon, ev::DISCONNECTED);
    assert!(skipped.is_empty(), "{skipped:?}");
    assert_eq!((disc.value, disc.endpoint.as_str()), (connected.value, ep.as_str()));
    let (retry, skipped) = wait_for(&cmon, ev::CONNECT_RETRIED);
    assert!(skipped.is_empty(), "{skipped:?}");
    assert!((50..=100).contains(&retry.value), "interval plus jitter: {}", retry.value);
    assert_eq!(retry.endpoint, ep);
}

#[test]
fn connect_to_nothing_tcp_delays_closes_and_retries() {
    let _g = guard();
    let ctx = Context::new();
    let s = sock(&ctx, SocketType::Dealer);
    s.set_option_int(opt::RECONNECT_IVL, 20).unwrap();
    let reader = monitor(&ctx, &s, ev::ALL as u32);
    let ep = format!("tcp://127.0.0.1:{}", free_tcp_port());
    s.connect(&ep).unwrap();
    let e = next_event(&reader);
    assert_eq!(e, Event { id: ev::CONNECT_DELAYED, value: libc::EINPROGRESS as u32, endpoint: ep.clone() });
    let e = next_event(&reader);
    assert_eq!((e.id, e.endpoint.as_str()), (ev::CLOSED, ep.as_str()), "the failed attempt's fd closes");
    let e = next_event(&reader);
    assert_eq!((e.id, e.endpoint.as_str()), (ev::CONNECT_RETRIED, ep.as_str()));
    assert!((20..=40).contains(&e.value), "reconnect interval plus jitter: {}", e.value);
    // And again: the cycle repeats.
    let (e, _) = wait_for(&reader, ev::CONNECT_RETRIED);
    assert_eq!(e.endpoint, ep);
}

#[test]
fn connect_to_nothing_ipc_retries() {
    let _g = guard();
    let ctx = Context::new();
    let s = sock(&ctx, SocketType::Dealer);
    s.set_option_int(opt::RECONNECT_IVL, 20).unwrap();
    let reader = monitor(&ctx, &s, ev::ALL as u32);
    let ep = ipc_path_endpoint();
    s.connect(&ep).unwrap();
    // As libzmq: CLOSED (the refused attempt; its fd is unknown here, -1),
    // then CONNECT_RETRIED, over and over.
    for _ in 0..2 {
        let e = next_event(&reader);
        assert_eq!(e, Event { id: ev::CLOSED, value: u32::MAX, endpoint: ep.clone() });
        let e = next_event(&reader);
        assert_eq!((e.id, e.endpoint.as_str()), (ev::CONNECT_RETRIED, ep.as_str()));
        assert!((20..=40).contains(&e.value), "reconnect interval plus jitter: {}", e.value);
    }
}

/// A raw TCP peer that does something wrong in the handshake; returns the
/// events the binder reported after ACCEPTED, up to DISCONNECTED.
fn hostile(kind: SocketType, act: impl FnOnce(&mut RawPeer)) -> Vec<Event> {
    let ctx = Context::new();
    let s = sock(&ctx, kind);
    let ep = bind_fresh(Transport::Tcp, &s);
    let reader = monitor(&ctx, &s, ev::ALL as u32);
    let mut peer = RawPeer::connect(&ep);
    act(&mut peer);
    let (accepted, _) = wait_for(&reader, ev::ACCEPTED);
    let (disc, mut before) = wait_for(&reader, ev::DISCONNECTED);
    assert_eq!(disc.value, accepted.value, "DISCONNECTED reports the accepted fd");
    assert!(peer.wait_closed(BOUND), "oxmq closes the hostile connection");
    before.push(disc);
    for e in &before {
        assert_eq!(e.endpoint, ep);
    }
    before
}

#[test]
fn handshake_failed_protocol_mechanism_mismatch() {
    let _g = guard();
    let events = hostile(SocketType::Pull, |p| {
        p.write(&greeting("CURVE")).unwrap();
    });
    assert_eq!(ids(&events), vec![ev::HANDSHAKE_FAILED_PROTOCOL, ev::DISCONNECTED]);
    assert_eq!(events[0].value, zmq_codes::ZMTP_MECHANISM_MISMATCH);
}

#[test]
fn incompatible_socket_type_only_disconnects() {
    let _g = guard();
    let events = hostile(SocketType::Pull, |p| {
        p.write(&greeting("NULL")).unwrap();
        p.write(&ready_for("SUB")).unwrap();
    });
    // libzmq 4.3.5 reports no HANDSHAKE_FAILED_* event for this, only the disconnect.
    assert_eq!(ids(&events), vec![ev::DISCONNECTED]);
}

#[test]
fn handshake_failed_protocol_garbage_greeting() {
    let _g = guard();
    let events = hostile(SocketType::Rep, |p| {
        let mut g = greeting("NULL");
        g[10] = 3;
        g[12..16].copy_from_slice(b"\x01\x02\x03\x04"); // not a mechanism name
        g[0] = 0xFF;
        let _ = p.write(&g);
        let _ = p.write(&[0xFF; 64]);
    });
    assert_eq!(ids(&events), vec![ev::HANDSHAKE_FAILED_PROTOCOL, ev::DISCONNECTED]);
    assert_eq!(events[0].value, zmq_codes::ZMTP_MECHANISM_MISMATCH, "as libzmq: {:#x}", events[0].value);
}

#[test]
fn handshake_failed_no_detail_when_peer_hangs_up() {
    let _g = guard();
    let events = hostile(SocketType::Pull, |p| {
        let _ = p.stream.shutdown(std::net::Shutdown::Both);
    });
    assert_eq!(ids(&events), vec![ev::HANDSHAKE_FAILED_NO_DETAIL, ev::DISCONNECTED]);
}

#[test]
fn mask_filters_events() {
    let _g = guard();
    let ctx = Context::new();
    let s = sock(&ctx, SocketType::Pull);
    let mask = (ev::ACCEPTED | ev::DISCONNECTED | ev::MONITOR_STOPPED) as u32;
    let reader = monitor(&ctx, &s, mask);
    let ep = bind_fresh(Transport::Tcp, &s); // LISTENING: not wanted
    let push = sock(&ctx, SocketType::Push);
    push.connect(&ep).unwrap();
    send(&push, b"x");
    assert_eq!(recv(&s), b"x");
    drop(push);
    // HANDSHAKE_SUCCEEDED happened between these two but is filtered out.
    assert_eq!(next_event(&reader).id, ev::ACCEPTED);
    assert_eq!(next_event(&reader).id, ev::DISCONNECTED);
    s.monitor(None, 0).unwrap();
    assert_eq!(next_event(&reader).id, ev::MONITOR_STOPPED);
    assert_nothing(&reader);
}

#[test]
fn monitor_stopped_only_if_in_mask() {
    let _g = guard();
    let ctx = Context::new();
    let s = sock(&ctx, SocketType::Pull);
    let reader = monitor(&ctx, &s, ev::LISTENING as u32);
    bind_fresh(Transport::Tcp, &s);
    assert_eq!(next_event(&reader).id, ev::LISTENING);
    s.monitor(None, 0).unwrap();
    // The monitor PAIR is closed without a MONITOR_STOPPED; nothing else comes.
    assert_nothing_within(&reader, 50);
}

#[test]
fn stop_and_replace_monitor() {
    let _g = guard();
    let ctx = Context::new();
    let s = sock(&ctx, SocketType::Pull);
    let first = monitor(&ctx, &s, ev::ALL as u32);
    let ep1 = bind_fresh(Transport::Tcp, &s);
    assert_eq!(next_event(&first).endpoint, ep1);

    // A new endpoint replaces the monitor: the old one gets MONITOR_STOPPED.
    let second = monitor(&ctx, &s, ev::ALL as u32);
    assert_eq!(next_event(&first), Event { id: ev::MONITOR_STOPPED, value: 0, endpoint: String::new() });
    let ep2 = bind_fresh(Transport::Tcp, &s);
    let e = next_event(&second);
    assert_eq!((e.id, e.endpoint), (ev::LISTENING, ep2));
    assert_nothing(&first);

    // Stopping: MONITOR_STOPPED, then nothing more even as events happen.
    s.monitor(None, ev::ALL as u32).unwrap();
    assert_eq!(next_event(&second).id, ev::MONITOR_STOPPED);
    bind_fresh(Transport::Tcp, &s);
    assert_nothing_within(&second, 50);
    // Stopping again is harmless.
    s.monitor(None, 0).unwrap();

    // The same endpoint can be reused after a stop, and by a replacement.
    let ep = inproc_endpoint();
    s.monitor(Some(&ep), ev::ALL as u32).unwrap();
    s.monitor(Some(&ep), ev::ALL as u32).unwrap();
    let reader = sock(&ctx, SocketType::Pair);
    reader.connect(&ep).unwrap();
    let ep3 = bind_fresh(Transport::IpcPath, &s);
    assert_eq!(next_event(&reader).endpoint, ep3);
    drop(s);
    // Closing: each listener's CLOSED, then MONITOR_STOPPED (as libzmq).
    let (_, before) = wait_for(&reader, ev::MONITOR_STOPPED);
    assert_eq!(ids(&before), vec![ev::CLOSED; 4], "tcp x3 + ipc listeners: {before:?}");
    assert!(before.iter().any(|e| e.endpoint == ep1) && before.iter().any(|e| e.endpoint == ep3));
}

#[test]
fn wildcard_bind_names_connections_by_local_address() {
    let _g = guard();
    let ctx = Context::new();
    let s = sock(&ctx, SocketType::Pull);
    let reader = monitor(&ctx, &s, ev::ALL as u32);
    s.bind("tcp://*:*").unwrap();
    let wild = s.last_endpoint().unwrap();
    assert!(wild.starts_with("tcp://0.0.0.0:"), "{wild}");
    let listening = next_event(&reader);
    assert_eq!((listening.id, listening.endpoint.as_str()), (ev::LISTENING, wild.as_str()));
    let local = format!("tcp://127.0.0.1:{}", tcp_port(&wild));
    let push = sock(&ctx, SocketType::Push);
    push.connect(&local).unwrap();
    send(&push, b"x");
    assert_eq!(recv(&s), b"x");
    drop(push);
    // libzmq names a wildcard listener's connections by their local address.
    for id in [ev::ACCEPTED, ev::HANDSHAKE_SUCCEEDED, ev::DISCONNECTED] {
        let e = next_event(&reader);
        assert_eq!((e.id, e.endpoint.as_str()), (id, local.as_str()));
    }
    drop(s);
    assert_eq!(next_event(&reader), Event { id: ev::CLOSED, value: listening.value, endpoint: wild });
    assert_eq!(next_event(&reader).id, ev::MONITOR_STOPPED);
}

#[test]
fn monitor_set_after_connect_reaches_existing_endpoints() {
    let _g = guard();
    let ctx = Context::new();
    let binder = sock(&ctx, SocketType::Pair);
    let ep = bind_fresh(Transport::Tcp, &binder);
    let connecter = sock(&ctx, SocketType::Pair);
    connecter.connect(&ep).unwrap();
    send(&connecter, b"up");
    assert_eq!(recv(&binder), b"up");
    let bmon = monitor(&ctx, &binder, ev::ALL as u32);
    let cmon = monitor(&ctx, &connecter, ev::ALL as u32);
    let other = sock(&ctx, SocketType::Pair);
    other.connect(&ep).unwrap(); // a second connection: PAIR accepts it, then drops it
    let (acc, _) = wait_for(&bmon, ev::ACCEPTED);
    assert_eq!(acc.endpoint, ep);
    drop(binder);
    let (disc, _) = wait_for(&cmon, ev::DISCONNECTED);
    assert_eq!(disc.endpoint, ep);
}

#[test]
fn unbind_reports_closed() {
    let _g = guard();
    let ctx = Context::new();
    let s = sock(&ctx, SocketType::Pull);
    let reader = monitor(&ctx, &s, ev::ALL as u32);
    let ep = bind_fresh(Transport::Tcp, &s);
    let listening = next_event(&reader);
    s.unbind(&ep).unwrap();
    let e = next_event(&reader);
    assert_eq!(e, Event { id: ev::CLOSED, value: listening.value, endpoint: ep });
}

#[test]
fn monitor_argument_errors() {
    let _g = guard();
    let ctx = Context::new();
    let s = sock(&ctx, SocketType::Pull);
    assert_errno(s.monitor(Some("tcp://127.0.0.1:5555"), ev::ALL as u32), errno::EPROTONOSUPPORT);
    assert_errno(s.monitor(Some(&ipc_path_endpoint()), ev::ALL as u32), errno::EPROTONOSUPPORT);
    assert_errno(s.monitor(Some("bogus://x"), ev::ALL as u32), errno::EPROTONOSUPPORT);
    assert_errno(s.monitor(Some(&inproc_endpoint()), 0x1_0000), errno::EINVAL);
    // The inproc name is taken by another socket.
    let ep = inproc_endpoint();
    let squatter = sock(&ctx, SocketType::Pair);
    squatter.bind(&ep).unwrap();
    assert_errno(s.monitor(Some(&ep), ev::ALL as u32), errno::EADDRINUSE);
    // None with no monitor set is fine.
    s.monitor(None, 0).unwrap();
}

#[test]
fn slow_reader_never_blocks_the_socket() {
    let _g = guard();
    let ctx = Context::new();
    let s = sock(&ctx, SocketType::Pull);
    let ep = bind_fresh(Transport::IpcPath, &s);
    let reader = monitor(&ctx, &s, ev::ALL as u32);
    let path = ep.strip_prefix("ipc://").unwrap().to_string();
    // Each raw connection that hangs up makes three events (ACCEPTED,
    // HANDSHAKE_FAILED_NO_DETAIL, DISCONNECTED): far beyond the monitor's HWM.
    for _ in 0..1500 {
        let c = std::os::unix::net::UnixStream::connect(&path).expect("raw ipc connect");
        drop(c);
    }
    // The socket still serves peers while the reader sits on a full queue.
    let push = sock(&ctx, SocketType::Push);
    push.connect(&ep).unwrap();
    send(&push, b"alive");
    assert_eq!(recv(&s), b"alive");
    // The reader gets well-formed events, and a bounded number of them.
    let mut n = 0;
    while let Ok(parts) = reader.recv_multipart(DONTWAIT) {
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0].len(), 6);
        n += 1;
    }
    eprintln!("slow reader got {n} events");
    assert!(n > 0 && n < 4500, "some events dropped, none blocked: {n}");
}
