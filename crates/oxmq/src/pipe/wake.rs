//! The late-bound waker of a pipe end.

use crate::sync::{Mutex, MutexGuard};
use std::sync::Arc;

/// Wakes the owner of one end of a pipe: a socket (its mailbox signaler) or an I/O-thread engine.
pub(crate) trait Wake: Send + Sync {
    fn wake(&self);
}

/// A late-bound waker: the owner of a pipe end may change (inproc bind after
/// connect, an engine replaced on reconnect). Only touched on the slow path.
pub(crate) struct WakeSlot {
    inner: Mutex<WakeInner>,
}

struct WakeInner {
    waker: Option<Arc<dyn Wake>>,
    /// A wake-up was requested while no waker was installed.
    pending: bool,
}

impl WakeSlot {
    pub(crate) fn new() -> Arc<WakeSlot> {
        Arc::new(WakeSlot { inner: Mutex::new(WakeInner { waker: None, pending: false }) })
    }
    pub(crate) fn with(w: Arc<dyn Wake>) -> Arc<WakeSlot> {
        Arc::new(WakeSlot { inner: Mutex::new(WakeInner { waker: Some(w), pending: false }) })
    }
    /// Install the owner's waker; if a wake-up was requested while empty, deliver it now.
    pub(crate) fn set(&self, w: Arc<dyn Wake>) {
        let deliver = {
            let mut g = self.lock();
            g.waker = Some(w.clone());
            std::mem::replace(&mut g.pending, false)
        };
        // Called outside the lock: a waker may take its own locks.
        if deliver {
            w.wake();
        }
    }
    /// Remove the installed waker (wake-ups are remembered until the next `set`).
    pub(crate) fn clear(&self) {
        self.lock().waker = None;
    }
    pub(crate) fn wake(&self) {
        let w = {
            let mut g = self.lock();
            match &g.waker {
                Some(w) => Some(w.clone()),
                None => {
                    g.pending = true;
                    None
                }
            }
        };
        if let Some(w) = w {
            w.wake();
        }
    }
    /// Whether a wake-up is waiting for a waker to be installed.
    #[allow(dead_code)]
    pub(crate) fn is_pending(&self) -> bool {
        self.lock().pending
    }
    fn lock(&self) -> MutexGuard<'_, WakeInner> {
        // A panicking waker cannot leave `WakeInner` inconsistent.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A waker that counts its wake-ups, for the tests of what wakes whom.
#[cfg(test)]
#[derive(Default)]
pub(crate) struct WakeCount(std::sync::atomic::AtomicUsize);

#[cfg(test)]
impl Wake for WakeCount {
    fn wake(&self) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

#[cfg(test)]
impl WakeCount {
    pub(crate) fn get(&self) -> usize {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}
