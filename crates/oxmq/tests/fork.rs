//! A fork child's copy of its parent's context (libzmq's test_fork): closing
//! its sockets and terminating it wait for nothing (the I/O thread is the
//! parent's) and disturb nothing in the parent; a new context works, and so
//! do the queue that hands zero-copy buffers back to a runtime and the
//! trackers of zero-copy sends.

mod common;

use common::*;
use oxmq::{Context, CoreWait, ReleaseQueue, SocketType, Tracker};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Runs `child` in a fork child, which exits 0 if it returns true; the
/// parent gets the child's exit status (None if it had to be killed).
fn in_child(child: impl FnOnce() -> bool, parent: impl FnOnce()) -> Option<i32> {
    // SAFETY: the child runs only `child` and then `_exit`s; the other test
    // threads do not exist there, and nothing the child uses waits for them.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(child)).unwrap_or(false);
        // SAFETY: leaves the child at once, running no destructors or atexit.
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    parent();
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut status = 0;
    loop {
        // SAFETY: `status` is a valid out-pointer; `pid` is our child.
        let rc = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if rc == pid {
            return libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
        }
        if Instant::now() >= deadline {
            // SAFETY: `pid` is our child; it is reaped just after.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Drop, in a fork child, the child's copy of a value the parent keeps using.
fn drop_in_child<T>(value: &T) {
    // SAFETY: called only in a fork child, which `_exit`s without dropping
    // `value` itself: this bitwise copy is the child's one and only drop.
    // The parent's value lives in the parent's memory, untouched.
    drop(unsafe { std::ptr::read(value) });
}

#[test]
fn child_terminates_the_parents_context_and_uses_its_own() {
    let _g = guard();
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    let ep = bind_fresh(Transport::Tcp, &pull);
    let push = sock(&ctx, SocketType::Push);
    push.connect(&ep).unwrap();
    send(&push, b"parent");
    assert_eq!(recv(&pull), b"parent");
    let status = in_child(
        || {
            if !ctx.is_forked_copy() {
                return false;
            }
            let started = Instant::now();
            drop_in_child(&push);
            drop_in_child(&pull);
            ctx.term();
            if !ctx.is_terminated() || started.elapsed() > Duration::from_secs(5) {
                return false;
            }
            let own = Context::new();
            if own.is_forked_copy() {
                return false;
            }
            // Default LINGER (infinite): term delivers the messages.
            let out = own.socket(SocketType::Push).unwrap();
            out.connect(&ep).unwrap();
            for _ in 0..5 {
                send(&out, b"Hello");
            }
            drop(out);
            own.term();
            true
        },
        || {
            for _ in 0..5 {
                assert_eq!(recv(&pull), b"Hello");
            }
        },
    );
    assert_eq!(status, Some(0), "the child hung or failed");
    // Nothing of the parent's was closed or signalled by the child.
    assert!(!ctx.is_forked_copy());
    send(&push, b"still here");
    assert_eq!(recv(&pull), b"still here");
    drop(push);
    drop(pull);
    ctx.term();
}

/// A child that only drops its copies (as a runtime's finalizers would at
/// exit) neither hangs nor closes the parent's listener.
#[test]
fn child_dropping_its_copies_leaves_the_parent_working() {
    let _g = guard();
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    let ep = bind_fresh(Transport::IpcPath, &pull);
    let status = in_child(
        || {
            drop_in_child(&pull);
            drop_in_child(&ctx);
            true
        },
        || {},
    );
    assert_eq!(status, Some(0));
    let push = sock(&ctx, SocketType::Push);
    push.connect(&ep).unwrap();
    send(&push, b"after the child");
    assert_eq!(recv(&pull), b"after the child");
}

/// Forks 50 times while another thread runs `step` over and over; each child
/// runs `child` (exit 0 if it returns true). Asserts every child did, none
/// failing or hanging; stops at the first that did not.
fn forks_beside(mut step: impl FnMut() + Send + 'static, child: impl Fn() -> bool) {
    let stop = Arc::new(AtomicBool::new(false));
    let busy = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                step();
            }
        })
    };
    let mut statuses = Vec::new();
    for _ in 0..50 {
        statuses.push(in_child(&child, || {}));
        if statuses.last() != Some(&Some(0)) {
            break;
        }
    }
    stop.store(true, Ordering::Relaxed);
    busy.join().unwrap();
    assert!(statuses.iter().all(|s| *s == Some(0)), "a child failed or hung: {statuses:?}");
}

/// A release queue another thread keeps pushing onto and draining while the
/// process forks: the child pushes and drains it too, never waiting for
/// that thread, which the child does not have (a lock it held at the fork
/// would stay held in the child for good).
#[test]
fn a_release_queue_busy_at_the_fork_serves_the_child() {
    let _g = guard();
    static QUEUE: ReleaseQueue<u64> = ReleaseQueue::new();
    let mut n = 0u64;
    forks_beside(
        move || {
            QUEUE.push(n);
            n += 1;
            if n.is_multiple_of(64) {
                QUEUE.drain(drop);
            }
        },
        || {
            QUEUE.push(u64::MAX);
            let mut found = false;
            QUEUE.drain(|token| found |= token == u64::MAX);
            found && QUEUE.drain(drop) == 0
        },
    );
}

/// A tracker another thread keeps setting while the process forks (as the
/// I/O thread sets one when it is done with a tracked send's buffer): the
/// child sets it and waits on it without waiting for that thread (a lock it
/// held at the fork would stay held in the child for good).
#[test]
fn a_tracker_being_set_at_the_fork_serves_the_child() {
    let _g = guard();
    let tracker = Arc::new(Tracker::default());
    let busy = Arc::clone(&tracker);
    forks_beside(
        move || busy.set_done(),
        || {
            tracker.set_done();
            let pending = Tracker::default();
            let waited = Tracker::wait_all_with(&[&pending], Some(Duration::from_millis(5)), &mut CoreWait);
            matches!(waited, Ok(false))
                && Tracker::wait_all_with(&[&tracker], Some(Duration::from_secs(1)), &mut CoreWait).unwrap()
        },
    );
}
