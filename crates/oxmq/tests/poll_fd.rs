//! `poll` over sockets and raw descriptors, and the ZMQ_FD readiness contract.

mod common;

use common::*;
use oxmq::{errno, opt, poll, Context, Msg, PollItem, SocketType, DONTWAIT, POLLIN, POLLOUT};
use std::io::Write;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// poll(2) a raw fd for readability.
fn fd_readable(fd: RawFd, timeout_ms: i32) -> bool {
    let mut items = [PollItem::from_fd(fd, POLLIN)];
    poll(&mut items, timeout_ms as i64).expect("poll raw fd") > 0 && items[0].is_readable()
}

#[test]
fn poll_times_out_with_nothing_ready() {
    let _g = guard();
    let ctx = Context::new();
    let a = sock(&ctx, SocketType::Pull);
    let b = sock(&ctx, SocketType::Pull);
    a.bind(&inproc_endpoint()).unwrap();
    b.bind("tcp://127.0.0.1:*").unwrap();
    let mut items = [PollItem::from_socket(&a, POLLIN), PollItem::from_socket(&b, POLLIN)];
    let start = Instant::now();
    assert_eq!(poll(&mut items, 100).unwrap(), 0);
    assert!(start.elapsed() >= Duration::from_millis(95), "returned early: {:?}", start.elapsed());
    assert_eq!(items[0].revents(), 0);
    assert_eq!(items[1].revents(), 0);
    // 0 timeout: just a check.
    assert_eq!(poll(&mut items, 0).unwrap(), 0);
    // Empty set with a timeout.
    let start = Instant::now();
    assert_eq!(poll(&mut [], 50).unwrap(), 0);
    assert!(start.elapsed() >= Duration::from_millis(45));
}

#[test]
fn poll_reports_the_ready_items() {
    let _g = guard();
    let ctx = Context::new();
    let pulls: Vec<_> = (0..3).map(|_| sock(&ctx, SocketType::Pull)).collect();
    let pushes: Vec<_> = (0..3).map(|_| sock(&ctx, SocketType::Push)).collect();
    let transports = [Transport::Tcp, Transport::InprocBindFirst, Transport::IpcPath];
    for i in 0..3 {
        link(transports[i], &pulls[i], &pushes[i]);
    }
    for target in 0..3 {
        send(&pushes[target], b"x");
        let mut items: Vec<_> = pulls.iter().map(|p| PollItem::from_socket(p, POLLIN)).collect();
        assert_eq!(poll(&mut items, TIMEOUT_MS).unwrap(), 1, "target {target}");
        for (i, it) in items.iter().enumerate() {
            assert_eq!(it.is_readable(), i == target, "item {i} for target {target}");
        }
        drop(items);
        assert_eq!(recv(&pulls[target]), b"x");
    }
    // Two ready at once.
    send(&pushes[0], b"a");
    send(&pushes[2], b"c");
    let deadline = Instant::now() + BOUND;
    loop {
        let mut items: Vec<_> = pulls.iter().map(|p| PollItem::from_socket(p, POLLIN)).collect();
        let n = poll(&mut items, TIMEOUT_MS).unwrap();
        assert!(n >= 1);
        assert!(!items[1].is_readable());
        if n == 2 {
            assert!(items[0].is_readable() && items[2].is_readable());
            break;
        }
        assert!(Instant::now() < deadline);
    }
}

#[test]
fn poll_pollout() {
    let _g = guard();
    let ctx = Context::new();
    let push = sock(&ctx, SocketType::Push);
    push.set_option_int(opt::SNDHWM, 1).unwrap();
    push.bind(&inproc_endpoint()).unwrap();
    // No peer: not writable.
    let mut items = [PollItem::from_socket(&push, POLLOUT)];
    assert_eq!(poll(&mut items, 50).unwrap(), 0);
    let pull = sock(&ctx, SocketType::Pull);
    pull.set_option_int(opt::RCVHWM, 1).unwrap();
    pull.connect(&push.last_endpoint().unwrap()).unwrap();
    let mut items = [PollItem::from_socket(&push, POLLOUT | POLLIN)];
    assert_eq!(poll(&mut items, TIMEOUT_MS).unwrap(), 1);
    assert_eq!(items[0].revents(), POLLOUT, "PUSH is never readable");
    // Fill the pipe: no longer writable; reading makes it writable again.
    while push.send("x", DONTWAIT).is_ok() {}
    let mut items = [PollItem::from_socket(&push, POLLOUT)];
    assert_eq!(poll(&mut items, 50).unwrap(), 0);
    assert_eq!(recv(&pull), b"x");
    let mut items = [PollItem::from_socket(&push, POLLOUT)];
    assert_eq!(poll(&mut items, TIMEOUT_MS).unwrap(), 1);
}

#[test]
fn poll_raw_fd_and_mixed() {
    let _g = guard();
    let (mut w, r) = UnixStream::pair().unwrap();
    let mut items = [PollItem::from_fd(r.as_raw_fd(), POLLIN)];
    assert_eq!(poll(&mut items, 50).unwrap(), 0);
    w.write_all(b"!").unwrap();
    let mut items = [PollItem::from_fd(r.as_raw_fd(), POLLIN)];
    assert_eq!(poll(&mut items, TIMEOUT_MS).unwrap(), 1);
    assert!(items[0].is_readable());
    // POLLOUT on a raw fd.
    let mut items = [PollItem::from_fd(w.as_raw_fd(), POLLOUT)];
    assert_eq!(poll(&mut items, TIMEOUT_MS).unwrap(), 1);
    assert!(items[0].is_writable());

    // Mixed: socket ready, fd not; then fd ready too.
    let (mut w2, r2) = UnixStream::pair().unwrap();
    let ctx = Context::new();
    let a = sock(&ctx, SocketType::Pair);
    let b = sock(&ctx, SocketType::Pair);
    link(Transport::Tcp, &a, &b);
    send(&a, b"m");
    let mut items = [PollItem::from_fd(r2.as_raw_fd(), POLLIN), PollItem::from_socket(&b, POLLIN)];
    assert_eq!(poll(&mut items, TIMEOUT_MS).unwrap(), 1);
    assert!(!items[0].is_readable() && items[1].is_readable());
    w2.write_all(b"!").unwrap();
    let mut items = [PollItem::from_fd(r2.as_raw_fd(), POLLIN), PollItem::from_socket(&b, POLLIN)];
    assert_eq!(poll(&mut items, TIMEOUT_MS).unwrap(), 2);
    // A raw fd becoming ready wakes a poll that was waiting on sockets.
    assert_eq!(recv(&b), b"m");
    let (mut w3, r3) = UnixStream::pair().unwrap();
    let writer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        w3.write_all(b"wake").unwrap();
        w3
    });
    let mut items = [PollItem::from_socket(&b, POLLIN), PollItem::from_fd(r3.as_raw_fd(), POLLIN)];
    assert_eq!(poll(&mut items, TIMEOUT_MS).unwrap(), 1);
    assert!(items[1].is_readable());
    writer.join().unwrap();
}

#[test]
fn poll_wakes_when_message_arrives_from_another_thread() {
    let _g = guard();
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    let ep = bind_fresh(Transport::Tcp, &pull);
    let ctx2 = ctx.clone();
    let t = std::thread::spawn(move || {
        let push = sock(&ctx2, SocketType::Push);
        push.connect(&ep).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        send(&push, b"late");
        push
    });
    let mut items = [PollItem::from_socket(&pull, POLLIN)];
    assert_eq!(poll(&mut items, TIMEOUT_MS).unwrap(), 1);
    assert_eq!(recv(&pull), b"late");
    drop(t.join().unwrap());
}

#[test]
fn fd_becomes_readable_when_message_arrives_after_drain() {
    let _g = guard();
    for t in [Transport::Tcp, Transport::InprocBindFirst, Transport::IpcPath] {
        let ctx = Context::new();
        let pull = sock(&ctx, SocketType::Pull);
        let push = sock(&ctx, SocketType::Push);
        link(t, &pull, &push);
        send(&push, b"first");
        assert_eq!(recv(&pull), b"first");
        // Drain to EAGAIN.
        assert_errno(pull.recv(DONTWAIT), errno::EAGAIN);
        let fd = pull.fd().unwrap();
        send(&push, b"second");
        // (a) the fd fires within a bound.
        assert!(
            fd_readable(fd, TIMEOUT_MS as i32),
            "{t:?}: fd not readable after a message arrived on a drained socket"
        );
        // (b) after events() reports POLLIN, recv succeeds.
        let deadline = Instant::now() + BOUND;
        loop {
            let ev = pull.events().unwrap();
            if ev & POLLIN != 0 {
                assert_eq!(pull.recv(DONTWAIT).expect("events() said POLLIN").as_slice(), b"second");
                break;
            }
            // Spurious wake-up: wait on the fd again.
            assert!(Instant::now() < deadline, "{t:?}: events() never reported POLLIN");
            fd_readable(fd, 100);
        }
        assert_errno(pull.recv(DONTWAIT), errno::EAGAIN);
    }
}

#[test]
fn events_reports_pollout_and_pollin() {
    let _g = guard();
    let ctx = Context::new();
    let a = sock(&ctx, SocketType::Dealer);
    let b = sock(&ctx, SocketType::Dealer);
    assert_eq!(a.events().unwrap() & POLLOUT, 0, "no peer: not writable");
    link(Transport::Tcp, &a, &b);
    assert!(eventually(BOUND, || b.events().unwrap() & POLLOUT != 0));
    send(&b, b"x");
    assert!(eventually(BOUND, || a.events().unwrap() & POLLIN != 0));
    assert_eq!(a.get_option_int(opt::EVENTS).unwrap() & POLLIN as i64, POLLIN as i64);
    assert_eq!(recv(&a), b"x");
    assert_eq!(a.events().unwrap() & POLLIN, 0);
}

/// (c) Edge-triggered loop over 10k messages from another thread never hangs.
fn fd_loop_no_lost_wakeups(t: Transport, total: u32) {
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    let ep = bind_fresh(t, &pull);
    let ctx2 = ctx.clone();
    let producer = std::thread::spawn(move || {
        let push = sock(&ctx2, SocketType::Push);
        push.set_option_int(opt::SNDHWM, 100).unwrap();
        push.connect(&ep).unwrap();
        for i in 0..total {
            push.send(Msg::from(&i.to_be_bytes()[..]), 0).unwrap();
            if i % 997 == 0 {
                std::thread::sleep(Duration::from_millis(1)); // vary the timing
            }
        }
        push.set_option_int(opt::LINGER, 5000).unwrap();
        push
    });
    let fd = pull.fd().unwrap();
    let mut next = 0u32;
    let deadline = Instant::now() + Duration::from_secs(30);
    while next < total {
        // Wait on the fd (bounded: a lost wake-up is a failure, not a hang).
        let woke = fd_readable(fd, 5000);
        assert!(
            woke || next == 0 || pull.events().unwrap() & POLLIN == 0,
            "{t:?}: lost wake-up: fd not readable for 5 s while events() says POLLIN, at message {next}"
        );
        if !woke {
            // Not readable: either nothing has arrived yet or the wake-up was lost.
            assert!(Instant::now() < deadline, "{t:?}: stuck at message {next}");
            assert_eq!(pull.events().unwrap() & POLLIN, 0, "{t:?}: lost wake-up at {next}");
        }
        let _ = pull.events().unwrap();
        loop {
            match pull.recv(DONTWAIT) {
                Ok(m) => {
                    assert_eq!(m.as_slice(), next.to_be_bytes(), "{t:?}: order");
                    next += 1;
                }
                Err(e) if e.errno() == errno::EAGAIN => break,
                Err(e) => panic!("{e:?}"),
            }
        }
        assert!(Instant::now() < deadline, "{t:?}: too slow / stuck at {next}");
    }
    drop(producer.join().unwrap());
}

#[test]
fn fd_loop_no_lost_wakeups_tcp() {
    let _g = guard();
    fd_loop_no_lost_wakeups(Transport::Tcp, 10_000);
}

#[test]
fn fd_loop_no_lost_wakeups_inproc() {
    let _g = guard();
    fd_loop_no_lost_wakeups(Transport::InprocBindFirst, 10_000);
}

#[test]
fn fd_loop_no_lost_wakeups_ipc() {
    let _g = guard();
    fd_loop_no_lost_wakeups(Transport::IpcPath, 10_000);
}

#[test]
fn fd_signals_room_after_hwm() {
    let _g = guard();
    let ctx = Context::new();
    let push = sock(&ctx, SocketType::Push);
    let pull = sock(&ctx, SocketType::Pull);
    push.set_option_int(opt::SNDHWM, 5).unwrap();
    pull.set_option_int(opt::RCVHWM, 5).unwrap();
    link(Transport::InprocBindFirst, &pull, &push);
    while push.send("x", DONTWAIT).is_ok() {}
    assert_errno(push.send("x", DONTWAIT), errno::EAGAIN);
    let fd = push.fd().unwrap();
    let reader = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        while pull.recv(DONTWAIT).is_ok() {}
        pull
    });
    let deadline = Instant::now() + BOUND;
    loop {
        if push.events().unwrap() & POLLOUT != 0 {
            push.send("y", DONTWAIT).expect("events() said POLLOUT");
            break;
        }
        assert!(Instant::now() < deadline, "room never signalled");
        fd_readable(fd, 1000);
    }
    drop(reader.join().unwrap());
}
