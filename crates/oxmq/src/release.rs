//! Handing lent buffers back to a language runtime.
//!
//! A binding that sends a runtime object's bytes without copying
//! ([`crate::Msg::from_owner`]) must keep the object alive until the core is
//! done, and the core may finish on its I/O thread, where the runtime's API
//! may not be called (no GIL, no GVL). So the owner's `Drop` only pushes a
//! token (the buffer export, a pin id) onto a [`ReleaseQueue`], and the
//! binding drains it with its lock held at the start of later calls: no
//! thread and no cross-thread message per buffer.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
