//! Handing lent buffers back to a language runtime.
//!
//! A binding that sends a runtime object's bytes without copying
//! ([`crate::Msg::from_owner`]) must keep the object alive until the core is
//! done, and the core may finish on its I/O thread, where the runtime's API
//! may not be called (no GIL, no GVL). So the owner's `Drop` only pushes a
//! token (the buffer export, a pin id) onto a [`ReleaseQueue`], and the
//! binding drains it with its lock held at the start of later calls: no
//! thread and no cross-thread message per buffer.
//!
//! A [`Tracker`] tells the runtime when that happened (pyzmq's
//! `MessageTracker`): the owner's `Drop` sets it, and the runtime waits for
//! it through its [`WaitHook`], as for any other blocking call.

use crate::error::Result;
use crate::wait::{slice_until, WaitHook};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// Tokens of buffers the core is done with, waiting for a runtime thread.
pub struct ReleaseQueue<T> {
    items: Mutex<Vec<T>>,
    /// How many tokens `items` holds, read without the lock on every call.
    pending: AtomicUsize,
}

impl<T> ReleaseQueue<T> {
    /// An empty queue (usable in a `static`).
    pub const fn new() -> Self {
        ReleaseQueue { items: Mutex::new(Vec::new()), pending: AtomicUsize::new(0) }
    }

    /// Queue `token`; callable from any thread, the core's included.
    pub fn push(&self, token: T) {
        let mut q = self.items.lock().unwrap_or_else(|e| e.into_inner());
        q.push(token);
        self.pending.store(q.len(), Ordering::Release);
    }

    /// Hand every queued token to `release` (the runtime's lock held by the
    /// caller); returns how many. One atomic load when the queue is empty.
    #[inline]
    pub fn drain(&self, release: impl FnMut(T)) -> usize {
        if self.pending.load(Ordering::Acquire) == 0 {
            return 0;
        }
        self.drain_slow(release)
    }

    #[cold]
    fn drain_slow(&self, release: impl FnMut(T)) -> usize {
        let taken = {
            let mut q = self.items.lock().unwrap_or_else(|e| e.into_inner());
            self.pending.store(0, Ordering::Release);
            std::mem::take(&mut *q)
        };
        let n = taken.len();
        taken.into_iter().for_each(release);
        n
    }
}

impl<T> Default for ReleaseQueue<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// Completion of a tracked zero-copy send: set (from any thread) when the
/// core is done with the lent buffer.
#[derive(Default)]
pub struct Tracker {
    done: AtomicBool,
    lock: Mutex<()>,
    cond: Condvar,
}

/// How often a wait on trackers hands control back to a runtime that has a
/// wake descriptor but no slice of its own, or waits itself: a condition
/// variable cannot include a descriptor, so the runtime is asked at this
/// pace instead.
const WAKE_FD_SLICE: Duration = Duration::from_millis(50);

impl Tracker {
    /// Whether the send is done with its buffer.
    #[inline]
    pub fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }

    /// Mark it done and wake its waiters; callable from any thread.
    pub fn set_done(&self) {
        let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.done.store(true, Ordering::Release);
        self.cond.notify_all();
    }

    /// Block this thread until done or `until`; returns whether done.
    fn wait_until(&self, until: Option<Instant>) -> bool {
        let mut g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        while !self.is_done() {
            g = match until {
                None => self.cond.wait(g).unwrap_or_else(|e| e.into_inner()),
                Some(u) => {
                    let now = Instant::now();
                    if now >= u {
                        return false;
                    }
                    self.cond.wait_timeout(g, u - now).unwrap_or_else(|e| e.into_inner()).0
                }
            };
        }
        true
    }

    /// Wait until every tracker in `all` is done (`Ok(true)`) or `timeout`
    /// passes (`Ok(false)`; `None` waits forever), inside `hook`'s
    /// [`WaitHook::park`], with [`WaitHook::check`] at the end of each of
    /// its slices (its error ends the wait).
    pub fn wait_all_with(all: &[&Tracker], timeout: Option<Duration>, hook: &mut dyn WaitHook) -> Result<bool> {
        let deadline = timeout.map(|t| Instant::now() + t);
        if hook.cooperative() {
            // No descriptor to wait on: the runtime sleeps in slices instead.
            let slice = Some(hook.slice().unwrap_or(WAKE_FD_SLICE));
            for t in all {
                while !t.is_done() {
                    if deadline.is_some_and(|d| Instant::now() >= d) {
                        return Ok(false);
                    }
                    hook.wait_fds(&[], slice_until(deadline, slice))?;
                }
            }
            return Ok(true);
        }
        let slice = hook.slice().or_else(|| hook.wake_fd().map(|_| WAKE_FD_SLICE));
        for t in all {
            while !t.is_done() {
                let now = Instant::now();
                if deadline.is_some_and(|d| now >= d) {
                    return Ok(false);
                }
                let until = match (deadline, slice.map(|s| now + s)) {
                    (Some(d), Some(s)) => Some(d.min(s)),
                    (d, s) => d.or(s),
                };
                let mut done = false;
                hook.park(&mut || done = t.wait_until(until));
                let timed_out = deadline.is_some_and(|d| Instant::now() >= d);
                if !done && !timed_out {
                    hook.check()?;
                }
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::wait::CoreWait;
    use std::sync::Arc;

    #[test]
    fn drains_what_any_thread_pushed_once() {
        static Q: ReleaseQueue<u32> = ReleaseQueue::new();
        assert_eq!(Q.drain(|_| panic!("empty")), 0);
        let t = std::thread::spawn(|| (0..100).for_each(|i| Q.push(i)));
        t.join().unwrap();
        Q.push(100);
        let mut got = Vec::new();
        assert_eq!(Q.drain(|v| got.push(v)), 101);
        assert_eq!(got, (0..=100).collect::<Vec<_>>());
        assert_eq!(Q.drain(|_| panic!("drained twice")), 0);
    }

    #[test]
    fn a_tracker_set_on_another_thread_ends_the_wait() {
        let t = Arc::new(Tracker::default());
        let setter = {
            let t = Arc::clone(&t);
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                t.set_done();
            })
        };
        assert!(Tracker::wait_all_with(&[&t], None, &mut CoreWait).unwrap());
        setter.join().unwrap();
        assert!(t.is_done());
    }

    #[test]
    fn a_wait_on_trackers_times_out_with_false_and_a_zero_timeout_does_not_park() {
        let (a, b) = (Tracker::default(), Tracker::default());
        a.set_done();
        assert!(!Tracker::wait_all_with(&[&a, &b], Some(Duration::from_millis(10)), &mut CoreWait).unwrap());
        assert!(Tracker::wait_all_with(&[&a], Some(Duration::ZERO), &mut CoreWait).unwrap());
        struct NoPark;
        impl WaitHook for NoPark {
            fn park(&mut self, _: &mut dyn FnMut()) {
                panic!("parked with nothing to wait for");
            }
            fn check(&mut self) -> Result<()> {
                Ok(())
            }
        }
        assert!(!Tracker::wait_all_with(&[&b], Some(Duration::ZERO), &mut NoPark).unwrap());
    }

    /// A runtime's check runs at each slice, and its error (a signal handler
    /// raising) ends the wait with it.
    #[test]
    fn a_wait_on_trackers_asks_the_runtime_at_each_slice() {
        struct Sliced(u32);
        impl WaitHook for Sliced {
            fn slice(&self) -> Option<Duration> {
                Some(Duration::from_millis(2))
            }
            fn check(&mut self) -> Result<()> {
                self.0 += 1;
                if self.0 == 3 {
                    Err(Error::Interrupted)
                } else {
                    Ok(())
                }
            }
        }
        let t = Tracker::default();
        let mut hook = Sliced(0);
        assert!(matches!(Tracker::wait_all_with(&[&t], None, &mut hook), Err(Error::Interrupted)));
        assert_eq!(hook.0, 3);
    }
}
