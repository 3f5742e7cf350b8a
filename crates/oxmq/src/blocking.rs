//! Blocking send/receive for bindings whose runtime must keep running while
//! a call blocks (Python's GIL and signals, Ruby's GVL and interrupts).
//!
//! The binding makes its first, non-blocking attempt itself (its hot path,
//! no wait involved); on EAGAIN it calls [`block_with`], which waits on the
//! socket through the binding's [`WaitHook`] and retries until the attempt
//! succeeds, fails otherwise, or the timeout passes.

use crate::channel::mailbox::Mailbox;
use crate::error::{Error, Result};
use crate::options::POLLIN;
use crate::socket::{DirectWait, SharedWaiter, Socket};
use crate::wait::{slice_until, wait_readable, WaitHook};
use std::os::fd::RawFd;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How a binding reaches its socket for one attempt.
///
/// The socket is only reachable inside [`SocketAccess::enter`]'s closure,
/// and [`block_with`] parks only between two `enter` calls: a binding whose
/// access takes a lock (Python's mutex, so that other threads may close the
/// socket) never holds it while parked. That is the type's contract, not a
/// convention: nothing borrowed from the socket can outlive the closure.
pub trait SocketAccess {
    /// Run `f` on the socket; [`Error::NotSocket`] once it is closed.
    fn enter<R>(&self, f: impl FnOnce(&Socket) -> Result<R>) -> Result<R>;

    /// A descriptor the binding makes readable when it closes the socket
    /// under a blocked call, so the call wakes and fails with ENOTSOCK.
    fn closed_fd(&self) -> Option<RawFd> {
        None
    }

    /// Whether the binding closed the socket (checked after each attempt).
    fn is_closed(&self) -> bool {
        false
    }
}

impl SocketAccess for Socket {
    #[inline]
    fn enter<R>(&self, f: impl FnOnce(&Socket) -> Result<R>) -> Result<R> {
        f(self)
    }
}

/// What a blocked call sleeps on between attempts.
enum Readiness {
    /// The socket's readiness descriptor (edge-like, see [`Socket::fd`]),
    /// and the mailbox it belongs to (whose signaler spins before a sleep).
    Fd(RawFd, Arc<Mailbox>),
    /// Thread-safe sockets: other threads' calls may consume the
    /// descriptor's signal, so sleep on the socket's shared wait.
    Shared(SharedWaiter),
}

/// Retry `attempt` (one non-blocking try: it must pass DONTWAIT) until it
/// succeeds, fails with anything but EAGAIN, or `timeout_ms` passes
/// (EAGAIN; -1 waits forever, 0 fails at once as libzmq's zero timeouts
/// do). Between attempts it waits on the socket inside `hook`'s
/// [`WaitHook::park`]; the attempts made while parked run there too, so a
/// runtime lock is taken back only when the call ends or `hook` must check.
pub fn block_with<A, T>(
    access: &A,
    timeout_ms: i64,
    hook: &mut dyn WaitHook,
    attempt: impl FnMut(&Socket) -> Result<T>,
) -> Result<T>
where
    A: SocketAccess + ?Sized,
{
    block(access, timeout_ms, hook, false, attempt)
}

/// [`block_with`] for a receive (`attempt` receives): between attempts the
/// call may wait on the connection its next message comes from and read
/// that message itself, as a blocking [`Socket::recv`] does (a REQ's reply,
/// a REP's request), with the socket free for other threads meanwhile.
pub fn block_recv_with<A, T>(
    access: &A,
    timeout_ms: i64,
    hook: &mut dyn WaitHook,
    attempt: impl FnMut(&Socket) -> Result<T>,
) -> Result<T>
where
    A: SocketAccess + ?Sized,
{
    block(access, timeout_ms, hook, true, attempt)
}

fn block<A, T>(
    access: &A,
    timeout_ms: i64,
    hook: &mut dyn WaitHook,
    direct: bool,
    mut attempt: impl FnMut(&Socket) -> Result<T>,
) -> Result<T>
where
    A: SocketAccess + ?Sized,
{
    if timeout_ms == 0 {
        return Err(Error::Again);
    }
    let deadline = (timeout_ms > 0).then(|| Instant::now() + Duration::from_millis(timeout_ms as u64));
    if hook.cooperative() {
        return cooperative(access, deadline, hook, &mut attempt);
    }
    let readiness = access.enter(|s| {
        Ok(match s.shared_waiter()? {
            Some(w) => Readiness::Shared(w),
            None => Readiness::Fd(s.readiness_fd()?, s.mailbox()?),
        })
    })?;
    let slice = hook.slice();
    let wake = hook.wake_fd();
    loop {
        let mut out = None;
        let waits = Waits { deadline, slice, wake, direct };
        hook.park(&mut || out = parked(access, &readiness, &waits, &mut attempt));
        match out {
            Some(done) => return done,
            None => hook.check()?,
        }
    }
}

/// [`block_with`] for a runtime that waits on descriptors itself
/// ([`WaitHook::cooperative`]): the same wait, attempt, until done, with the
/// runtime's [`WaitHook::wait_fds`] in place of `poll(2)`.
fn cooperative<A, T>(
    access: &A,
    deadline: Option<Instant>,
    hook: &mut dyn WaitHook,
    attempt: &mut impl FnMut(&Socket) -> Result<T>,
) -> Result<T>
where
    A: SocketAccess + ?Sized,
{
    // Thread-safe sockets too: only this thread runs, so no other caller
    // can take the descriptor's signal.
    let mut fds = vec![(access.enter(|s| s.readiness_fd())?, POLLIN)];
    fds.extend(access.closed_fd().map(|fd| (fd, POLLIN)));
    loop {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(Error::Again);
        }
        hook.wait_fds(&fds, slice_until(deadline, hook.slice()))?;
        match access.enter(&mut *attempt) {
            Err(Error::Again) => {}
            done => return done,
        }
        if access.is_closed() {
            return Err(Error::NotSocket);
        }
    }
}

/// What a parked stretch waits for besides the socket.
struct Waits {
    deadline: Option<Instant>,
    slice: Option<Duration>,
    wake: Option<RawFd>,
    /// A receive that may read its connection itself
    /// ([`Socket::recv_direct_unlocked`]).
    direct: bool,
}

/// One parked stretch: wait, attempt, until done (`Some`) or the runtime
/// must check (`None`: a signal, the wake descriptor, the end of a slice).
fn parked<A, T>(
    access: &A,
    readiness: &Readiness,
    waits: &Waits,
    attempt: &mut impl FnMut(&Socket) -> Result<T>,
) -> Option<Result<T>>
where
    A: SocketAccess + ?Sized,
{
    let Waits { deadline, slice, wake, direct } = *waits;
    let slice_end = slice.map(|s| Instant::now() + s);
    let until = match (deadline, slice_end) {
        (Some(d), Some(s)) => Some(d.min(s)),
        (d, s) => d.or(s),
    };
    let closed = access.closed_fd();
    let also: Vec<RawFd> = closed.into_iter().chain(wake).collect();
    loop {
        let seen = match readiness {
            Readiness::Fd(fd, mailbox) => {
                let direct = match direct {
                    true => access.enter(|s| s.recv_direct_unlocked(until, &also)),
                    false => Ok(DirectWait::NotTaken),
                };
                match direct {
                    // The message is queued: the attempt finds it.
                    Ok(DirectWait::Queued) => {}
                    Ok(DirectWait::Interrupted) => return None,
                    // The attempt fails; the deadline or slice checks end the stretch.
                    Ok(DirectWait::TimedOut) => {}
                    Ok(DirectWait::NotTaken | DirectWait::Woken) => {
                        let fds = [*fd, closed.unwrap_or(-1)];
                        let block = || wait_readable(&fds[..1 + closed.is_some() as usize], wake, until);
                        if !mailbox.signaler().spin_then(until, block) {
                            return None;
                        }
                    }
                    Err(e) => return Some(Err(e)),
                }
                0
            }
            Readiness::Shared(w) => w.epoch(),
        };
        match access.enter(&mut *attempt) {
            Err(Error::Again) => {}
            done => return Some(done),
        }
        if access.is_closed() {
            return Some(Err(Error::NotSocket));
        }
        if let Readiness::Shared(w) = readiness {
            if let Err(Error::Interrupted) = w.sleep(seen, until) {
                return None;
            }
        }
        let now = Instant::now();
        if deadline.is_some_and(|d| now >= d) {
            return Some(Err(Error::Again));
        }
        if slice_end.is_some_and(|s| now >= s) {
            return None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Context, Msg, SocketType, DONTWAIT};

    /// Counts checks and ends the call after `limit` of them.
    struct Counting {
        checks: u32,
        limit: u32,
        parks: u32,
    }

    impl WaitHook for Counting {
        fn slice(&self) -> Option<Duration> {
            Some(Duration::from_millis(5))
        }
        fn park(&mut self, wait: &mut dyn FnMut()) {
            self.parks += 1;
            wait()
        }
        fn check(&mut self) -> Result<()> {
            self.checks += 1;
            if self.checks >= self.limit {
                Err(Error::Interrupted)
            } else {
                Ok(())
            }
        }
    }

    #[test]
    fn times_out_with_again_and_checks_each_slice() {
        let ctx = Context::new();
        let s = ctx.socket(SocketType::Pull).unwrap();
        s.bind("inproc://block-timeout").unwrap();
        let mut hook = Counting { checks: 0, limit: u32::MAX, parks: 0 };
        let t0 = Instant::now();
        let r = block_with(&s, 30, &mut hook, |s| s.recv(DONTWAIT));
        assert!(matches!(r, Err(Error::Again)), "{r:?}");
        assert!(t0.elapsed() >= Duration::from_millis(30));
        assert!(hook.checks >= 1, "a 5 ms slice in a 30 ms wait must check");
        assert_eq!(hook.parks, hook.checks + 1);
        assert!(matches!(block_with(&s, 0, &mut hook, |s| s.recv(DONTWAIT)), Err(Error::Again)));
    }

    #[test]
    fn a_failing_check_ends_the_call_with_its_error() {
        let ctx = Context::new();
        let s = ctx.socket(SocketType::Pull).unwrap();
        s.bind("inproc://block-check").unwrap();
        let mut hook = Counting { checks: 0, limit: 2, parks: 0 };
        let r = block_with(&s, -1, &mut hook, |s| s.recv(DONTWAIT));
        assert!(matches!(r, Err(Error::Interrupted)), "{r:?}");
        assert_eq!(hook.checks, 2);
    }

    #[test]
    fn wakes_for_a_message_from_another_thread() {
        let ctx = Context::new();
        let pull = ctx.socket(SocketType::Pull).unwrap();
        pull.bind("inproc://block-wake").unwrap();
        let push = ctx.socket(SocketType::Push).unwrap();
        push.connect("inproc://block-wake").unwrap();
        let sender = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            push.send(Msg::from(&b"hi"[..]), 0).unwrap();
            push
        });
        let mut hook = crate::CoreWait;
        let m = block_with(&pull, 5_000, &mut hook, |s| s.recv(DONTWAIT)).unwrap();
        assert_eq!(m.as_slice(), b"hi");
        drop(sender.join().unwrap());
    }

    /// A runtime whose wake descriptor is already set: the call parks, sees
    /// it, and checks, without waiting for the socket.
    struct Woken(RawFd, u32);

    impl WaitHook for Woken {
        fn wake_fd(&self) -> Option<RawFd> {
            Some(self.0)
        }
        fn check(&mut self) -> Result<()> {
            self.1 += 1;
            Err(Error::Interrupted)
        }
    }

    #[test]
    fn the_wake_descriptor_ends_a_wait_at_once() {
        let ctx = Context::new();
        let s = ctx.socket(SocketType::Pull).unwrap();
        s.bind("inproc://block-wakefd").unwrap();
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors pipe(2) writes.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: writes one byte from a local to the pipe's write end.
        assert_eq!(unsafe { libc::write(fds[1], b"x".as_ptr().cast(), 1) }, 1);
        let mut hook = Woken(fds[0], 0);
        let t0 = Instant::now();
        let r = block_with(&s, 10_000, &mut hook, |s| s.recv(DONTWAIT));
        assert!(matches!(r, Err(Error::Interrupted)), "{r:?}");
        assert_eq!(hook.1, 1);
        assert!(t0.elapsed() < Duration::from_secs(5));
        let mut items = [crate::PollItem::from_socket(&s, crate::POLLIN)];
        assert!(matches!(crate::poll_with(&mut items, 10_000, &mut hook), Err(Error::Interrupted)));
        assert_eq!(hook.1, 2);
        for fd in fds {
            // SAFETY: both descriptors are ours and closed once.
            unsafe { libc::close(fd) };
        }
    }

    /// A runtime that waits on descriptors itself (gevent's shape), here
    /// with poll(2): it must be asked, never parked.
    struct Cooperative {
        waits: u32,
    }

    impl WaitHook for Cooperative {
        fn park(&mut self, _: &mut dyn FnMut()) {
            panic!("a cooperative runtime is never parked");
        }
        fn check(&mut self) -> Result<()> {
            Ok(())
        }
        fn cooperative(&self) -> bool {
            true
        }
        fn wait_fds(&mut self, fds: &[(RawFd, i16)], until: Option<Instant>) -> Result<()> {
            self.waits += 1;
            let mut pfds: Vec<libc::pollfd> =
                fds.iter().map(|&(fd, ev)| libc::pollfd { fd, events: ev, revents: 0 }).collect();
            let ms = crate::timeout_ms_until(until) as libc::c_int;
            // SAFETY: `pfds` holds `pfds.len()` initialised pollfd structs for the call.
            unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, ms) };
            Ok(())
        }
    }

    #[test]
    fn a_cooperative_runtime_waits_itself_for_a_message_and_for_a_timeout() {
        let ctx = Context::new();
        let pull = ctx.socket(SocketType::Pull).unwrap();
        pull.bind("inproc://block-coop").unwrap();
        let push = ctx.socket(SocketType::Push).unwrap();
        push.connect("inproc://block-coop").unwrap();
        let mut hook = Cooperative { waits: 0 };
        let r = block_with(&pull, 20, &mut hook, |s| s.recv(DONTWAIT));
        assert!(matches!(r, Err(Error::Again)), "{r:?}");
        assert!(hook.waits >= 1);
        let sender = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            push.send(Msg::from(&b"co"[..]), 0).unwrap();
            push
        });
        let m = block_with(&pull, 5_000, &mut hook, |s| s.recv(DONTWAIT)).unwrap();
        assert_eq!(m.as_slice(), b"co");
        drop(sender.join().unwrap());
        let mut items = [crate::PollItem::from_socket(&pull, crate::POLLIN)];
        assert_eq!(crate::poll_with(&mut items, 20, &mut hook).unwrap(), 0);
        let push = sender_again(&ctx);
        assert_eq!(crate::poll_with(&mut items, 5_000, &mut hook).unwrap(), 1);
        drop(push);
    }

    fn sender_again(ctx: &Context) -> crate::Socket {
        let push = ctx.socket(SocketType::Push).unwrap();
        push.connect("inproc://block-coop").unwrap();
        push.send(Msg::from(&b"again"[..]), 0).unwrap();
        push
    }
}
