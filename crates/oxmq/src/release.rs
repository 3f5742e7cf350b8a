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
use std::marker::PhantomData;
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// Tokens of buffers the core is done with, waiting for a runtime thread.
///
/// A lock-free stack that is only ever pushed onto and emptied whole
/// (Treiber's stack without a single-node pop, so no ABA can arise): no
/// lock, because a lock held by another thread of the parent at `fork()`
/// stays held forever in the child, and a child that uses a new context
/// pushes and drains here too.
pub struct ReleaseQueue<T> {
    /// The last token pushed, linked to those pushed before it; null when
    /// empty. Only `push` (a CAS that links one new node) and `drain` (a swap
    /// that takes the whole list) change it.
    head: AtomicPtr<Node<T>>,
    /// The queue owns the nodes' tokens (for the drop check).
    _tokens: PhantomData<T>,
}

struct Node<T> {
    token: T,
    next: *mut Node<T>,
}

// SAFETY: tokens move between threads through the queue, never shared:
// `push` gives one up, `drain` takes it out for one caller. So the queue
// is Send and Sync wherever its tokens are Send, as `Mutex<Vec<T>>` is.
unsafe impl<T: Send> Send for ReleaseQueue<T> {}
// SAFETY: see Send.
unsafe impl<T: Send> Sync for ReleaseQueue<T> {}

impl<T> ReleaseQueue<T> {
    /// An empty queue (usable in a `static`).
    pub const fn new() -> Self {
        ReleaseQueue { head: AtomicPtr::new(ptr::null_mut()), _tokens: PhantomData }
    }

    /// Queue `token`; callable from any thread, the core's included. Never
    /// waits for another thread.
    pub fn push(&self, token: T) {
        let node = Box::into_raw(Box::new(Node { token, next: ptr::null_mut() }));
        let mut head = self.head.load(Ordering::Relaxed);
        loop {
            // SAFETY: `node` is ours alone until the CAS below publishes it.
            unsafe { (*node).next = head };
            // Release: whoever swaps the list off sees the node written.
            match self.head.compare_exchange_weak(head, node, Ordering::Release, Ordering::Relaxed) {
                Ok(_) => return,
                // Another push or a drain came first: link to what is there now.
                Err(now) => head = now,
            }
        }
    }

    /// Hand every queued token to `release` (the runtime's lock held by the
    /// caller), oldest first; returns how many. One atomic load when the
    /// queue is empty; never waits for another thread.
    #[inline]
    pub fn drain(&self, release: impl FnMut(T)) -> usize {
        if self.head.load(Ordering::Relaxed).is_null() {
            return 0;
        }
        self.drain_slow(release)
    }

    #[cold]
    fn drain_slow(&self, release: impl FnMut(T)) -> usize {
        // Acquire: pairs with the Release of the pushes that linked these nodes.
        let mut newest = self.head.swap(ptr::null_mut(), Ordering::Acquire);
        // Reversed in place, so tokens are released in the order pushed.
        let mut oldest = ptr::null_mut();
        let mut n = 0;
        while !newest.is_null() {
            // SAFETY: the swap made the whole list this call's alone.
            let next = unsafe { std::mem::replace(&mut (*newest).next, oldest) };
            oldest = newest;
            newest = next;
            n += 1;
        }
        Taken(oldest).for_each(release);
        n
    }
}

/// A list `drain` took off the queue, consumed from its first node; what a
/// panicking `release` leaves is dropped with it.
struct Taken<T>(*mut Node<T>);

impl<T> Iterator for Taken<T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        if self.0.is_null() {
            return None;
        }
        // SAFETY: every node was boxed by `push`, and the list is ours alone.
        let node = unsafe { Box::from_raw(self.0) };
        self.0 = node.next;
        Some(node.token)
    }
}

impl<T> Drop for Taken<T> {
    fn drop(&mut self) {
        self.for_each(drop);
    }
}

impl<T> Drop for ReleaseQueue<T> {
    fn drop(&mut self) {
        // Tokens never drained go with the queue (a `static` is never dropped).
        drop(Taken(std::mem::replace(self.head.get_mut(), ptr::null_mut())));
    }
}

impl<T> Default for ReleaseQueue<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// Completion of a tracked zero-copy send: set (from any thread) when the
/// core is done with the lent buffer.
///
/// No lock: one futex word, so that a fork landing while another thread
/// (the I/O thread, finishing with a buffer) was setting it leaves the
/// child's copy usable: a lock held then would stay held for good in the
/// child, and its first wait on, or drop of, that send would hang.
#[derive(Default)]
pub struct Tracker {
    /// `PENDING`, `WAITED` (pending, and a thread sleeps on the word) or `DONE`.
    state: AtomicU32,
}

const PENDING: u32 = 0;
const WAITED: u32 = 1;
const DONE: u32 = 2;

/// How often a wait on trackers hands control back to a runtime that has a
/// wake descriptor but no slice of its own, or waits itself: a futex wait
/// cannot include a descriptor, so the runtime is asked at this pace
/// instead.
const WAKE_FD_SLICE: Duration = Duration::from_millis(50);

impl Tracker {
    /// Whether the send is done with its buffer.
    #[inline]
    pub fn is_done(&self) -> bool {
        self.state.load(Ordering::Acquire) == DONE
    }

    /// Mark it done and wake its waiters; callable from any thread. Never
    /// waits for another thread; a system call only when one sleeps on it.
    pub fn set_done(&self) {
        // Release: what the core did with the buffer happens-before a waiter
        // that sees DONE.
        if self.state.swap(DONE, Ordering::Release) == WAITED {
            futex(&self.state, libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG, i32::MAX as u32, None);
        }
    }

    /// Block this thread until done or `until`; returns whether done.
    fn wait_until(&self, until: Option<Instant>) -> bool {
        loop {
            // Announce a sleeper (a no-op once announced); set_done then wakes.
            match self.state.compare_exchange(PENDING, WAITED, Ordering::Acquire, Ordering::Acquire) {
                Ok(_) | Err(WAITED) => {}
                Err(_) => return true,
            }
            let timeout = match until {
                None => None,
                Some(u) => match u.checked_duration_since(Instant::now()) {
                    Some(left) if !left.is_zero() => Some(left),
                    _ => return self.is_done(),
                },
            };
            // Sleeps only while the word still says WAITED, so a set_done
            // between the exchange and here is not missed.
            futex(&self.state, libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG, WAITED, timeout);
        }
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

/// `futex(2)` on `word` (`FUTEX_WAIT_PRIVATE` while it holds `val`, for at
/// most `timeout`; or `FUTEX_WAKE_PRIVATE` for up to `val` sleepers). Its
/// result is not needed: a waiter looks at the word again either way
/// (woken, timed out, interrupted, or the word had changed).
fn futex(word: &AtomicU32, op: i32, val: u32, timeout: Option<Duration>) {
    let ts = timeout.map(|t| libc::timespec {
        tv_sec: t.as_secs().min(libc::time_t::MAX as u64) as libc::time_t,
        tv_nsec: t.subsec_nanos() as libc::c_long,
    });
    let ts_ptr = ts.as_ref().map_or(ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `word` is a live, aligned 32-bit atomic for the whole call; the
    // timespec (relative, as FUTEX_WAIT takes it) outlives the call, or is
    // null for no timeout; the other arguments are unused by these two ops.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), op, val, ts_ptr, ptr::null::<u32>(), 0u32);
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
    fn concurrent_pushes_and_drains_hand_each_token_over_once() {
        const THREADS: u32 = 4;
        const EACH: u32 = 20_000;
        let q = Arc::new(ReleaseQueue::new());
        let pushers: Vec<_> = (0..THREADS)
            .map(|t| {
                let q = Arc::clone(&q);
                std::thread::spawn(move || (0..EACH).for_each(|i| q.push(t * EACH + i)))
            })
            .collect();
        let mut got = Vec::new();
        while !pushers.iter().all(|p| p.is_finished()) {
            // Each drain hands one pusher's tokens over in the order it pushed them.
            let mut last = vec![None; THREADS as usize];
            q.drain(|v: u32| {
                let t = (v / EACH) as usize;
                assert!(last[t] < Some(v), "token {v} after {:?}", last[t]);
                last[t] = Some(v);
                got.push(v);
            });
        }
        pushers.into_iter().for_each(|p| p.join().unwrap());
        q.drain(|v| got.push(v));
        got.sort_unstable();
        assert_eq!(got, (0..THREADS * EACH).collect::<Vec<_>>());
    }

    #[test]
    fn tokens_never_drained_are_dropped_with_the_queue() {
        let token = Arc::new(());
        let q = ReleaseQueue::new();
        q.push(Arc::clone(&token));
        q.push(Arc::clone(&token));
        assert_eq!(Arc::strong_count(&token), 3);
        drop(q);
        assert_eq!(Arc::strong_count(&token), 1);
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
