//! The socket's state behind a one-flag lock.
//!
//! Rust callers cannot share a `Socket` between threads (it is not `Sync`),
//! but C and Python callers hold raw handles, and libzmq programs do touch a
//! socket from a second thread now and then (pyzmq's `Context.destroy` sets
//! LINGER on sockets other threads may be polling). A `RefCell` would make
//! that a data race; this cell makes it a brief wait, or EINVAL, never
//! undefined behaviour. Uncontended, it costs one compare-and-swap and one
//! store per call.

use crate::error::{Error, Result};
use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long a second caller waits for the socket before giving up with
/// EINVAL (a blocking call in another thread may hold it much longer).
const CONTENDED_WAIT: Duration = Duration::from_millis(5);

pub(crate) struct CoreCell<T> {
    /// True while a guard exists. Acquire on lock / Release on unlock order
    /// every access to `value` between owners.
    busy: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: `value` is only reached through a guard, and `busy` admits one
// guard at a time (see `lock`), so moving or sharing the cell between
// threads cannot create concurrent access; `T: Send` lets the value be used
// from whichever thread holds the guard.
unsafe impl<T: Send> Sync for CoreCell<T> {}

impl<T> CoreCell<T> {
    pub(crate) fn new(value: T) -> CoreCell<T> {
        CoreCell { busy: AtomicBool::new(false), value: UnsafeCell::new(value) }
    }

    /// Exclusive access, waiting briefly if another thread (or a re-entrant
    /// call) holds it.
    #[inline]
    pub(crate) fn lock(&self) -> Result<CoreGuard<'_, T>> {
        if self.busy.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_ok() {
            return Ok(CoreGuard { cell: self });
        }
        self.lock_contended()
    }

    #[cold]
    fn lock_contended(&self) -> Result<CoreGuard<'_, T>> {
        let deadline = Instant::now() + CONTENDED_WAIT;
        loop {
            std::thread::yield_now();
            if self.busy.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_ok() {
                return Ok(CoreGuard { cell: self });
            }
            if Instant::now() >= deadline {
                return Err(Error::Invalid("socket is in use by another call"));
            }
        }
    }

    /// Exclusive access for thread-safe socket types: waits as long as it
    /// takes. Their calls hold the cell only briefly (blocking sends and
    /// receives sleep without it), so this is a short wait, not a deadlock.
    #[inline]
    pub(crate) fn lock_blocking(&self) -> CoreGuard<'_, T> {
        let mut spins = 0u32;
        loop {
            if self.busy.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_ok() {
                return CoreGuard { cell: self };
            }
            spins += 1;
            if spins < 64 {
                std::thread::yield_now();
            } else {
                // Many threads on few cores: stop burning the holder's CPU.
                std::thread::sleep(Duration::from_micros(20));
            }
        }
    }

    pub(crate) fn get_mut(&mut self) -> &mut T {
        self.value.get_mut()
    }
}

pub(crate) struct CoreGuard<'a, T> {
    cell: &'a CoreCell<T>,
}

impl<T> Deref for CoreGuard<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: this guard is the only one (`busy` was won by `lock`).
        unsafe { &*self.cell.value.get() }
    }
}

impl<T> DerefMut for CoreGuard<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`; `&mut self` makes the borrow unique.
        unsafe { &mut *self.cell.value.get() }
    }
}

impl<T> Drop for CoreGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        self.cell.busy.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn second_lock_waits_then_fails_while_held() {
        let cell = CoreCell::new(1);
        let g = cell.lock().unwrap();
        assert!(cell.lock().is_err(), "a held cell refuses a second guard");
        drop(g);
        assert_eq!(*cell.lock().unwrap(), 1);
    }

    #[test]
    fn threads_take_turns_without_losing_updates() {
        let cell = Arc::new(CoreCell::new(0u64));
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let cell = cell.clone();
                std::thread::spawn(move || {
                    let mut done = 0;
                    while done < 100_000 {
                        if let Ok(mut g) = cell.lock() {
                            *g += 1;
                            done += 1;
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(*cell.lock().unwrap(), 200_000);
    }
}
