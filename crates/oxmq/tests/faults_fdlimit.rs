//! The descriptor limit reached during accept (`ulimit -n`): accept errors
//! reach the monitor as ACCEPT_FAILED (EMFILE), the socket keeps serving the
//! peers it has, the I/O thread does not spin, and once descriptors are free
//! again the connections that waited in the backlog are accepted.
//!
//! RLIMIT_NOFILE is per process, so this file holds a single test.

mod common;

use common::*;
use oxmq::{monitor_event as ev, Context, SocketType};
use std::fs::File;
use std::time::{Duration, Instant};

fn nofile() -> libc::rlimit {
    let mut r = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes into the struct we own.
    assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) }, 0);
    r
}

fn set_nofile(cur: libc::rlim_t, max: libc::rlim_t) {
    let r = libc::rlimit { rlim_cur: cur, rlim_max: max };
    // SAFETY: setrlimit reads the struct we own.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &r) }, 0);
}

fn cpu_time() -> Duration {
    // SAFETY: rusage is a plain C struct; all-zero is a valid value.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes into the struct we own.
    assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) }, 0);
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(u.ru_utime) + tv(u.ru_stime)
}

#[test]
fn fd_limit_during_accept() {
    let _g = guard();
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    let mon = monitor(&ctx, &pull, u32::from(ev::ACCEPTED | ev::ACCEPT_FAILED));
    let ep = bind_fresh(Transport::Tcp, &pull);
    let addr: std::net::SocketAddr = ep.strip_prefix("tcp://").unwrap().parse().unwrap();

    // A peer connected before the limit.
    let push = sock(&ctx, SocketType::Push);
    push.connect(&ep).unwrap();
    send(&push, b"before");
    assert_eq!(recv(&pull), b"before");
    assert_eq!(next_event(&mon).id, ev::ACCEPTED);

    // Client sockets made now (their descriptors exist), connected later.
    const LATE: usize = 3;
    let clients: Vec<socket2::Socket> =
        (0..LATE).map(|_| socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap()).collect();

    // Lower the limit to just above the highest descriptor, then fill every
    // hole below it: from here on no new descriptor can be opened.
    let saved = nofile();
    let highest = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<libc::rlim_t>().ok())
        .max()
        .unwrap();
    set_nofile(highest + 1, saved.rlim_max);
    let mut fillers = Vec::new();
    while let Ok(f) = File::open("/dev/null") {
        fillers.push(f);
    }

    for c in &clients {
        c.connect(&addr.into()).expect("connect completes in the kernel's backlog");
    }
    // accept() fails with EMFILE: the monitor says so.
    let Event { id, value, .. } = next_event(&mon);
    assert_eq!(id, ev::ACCEPT_FAILED, "expected ACCEPT_FAILED, got {id:#06x}");
    assert_eq!(value as i32, libc::EMFILE, "ACCEPT_FAILED carries the errno");

    // The I/O thread does not spin on the pending connections.
    let cpu0 = cpu_time();
    std::thread::sleep(Duration::from_millis(500));
    let burnt = cpu_time() - cpu0;
    assert!(burnt < Duration::from_millis(300), "{burnt:?} of CPU in 500 ms at the fd limit: spinning");

    // Existing peers are still served.
    for i in 0..100u32 {
        send(&push, &i.to_le_bytes());
    }
    for i in 0..100u32 {
        assert_eq!(recv(&pull), i.to_le_bytes());
    }

    // Descriptors free again: the connections that waited are accepted.
    drop(fillers);
    set_nofile(saved.rlim_cur, saved.rlim_max);
    let deadline = Instant::now() + BOUND;
    let mut accepted = 0;
    while accepted < LATE {
        assert!(
            Instant::now() < deadline,
            "only {accepted} of {LATE} waiting connections accepted after the limit rose"
        );
        match next_event(&mon).id {
            ev::ACCEPTED => accepted += 1,
            ev::ACCEPT_FAILED => {}
            id => panic!("unexpected event {id:#06x}"),
        }
    }
    drop(clients);
}
