//! Zero-copy send support: the owner of a Python buffer lent to the core, and
//! the queue through which the core hands it back.
//!
//! The core drops a message's owner on whichever thread drops the last
//! reference, often the I/O thread, which must not take the GIL. So the
//! owner's `Drop` only (a) marks its tracker done and (b) pushes the Python
//! buffer onto [`RELEASED`], the core's [`ReleaseQueue`]; the Python side
//! drains that queue (releasing the buffers, with the GIL held) at the start
//! of later socket calls. No thread and no cross-thread message per buffer,
//! unlike pyzmq's garbage collector.
//!
//! Fork: a lock held by another thread when a process forks stays held for
//! good in the child. So the one lock here, [`LENT_BYTES`]'s, is only ever
//! taken with the GIL held (an owner's `Drop`, which may run on the I/O
//! thread, leaves its entry to be removed when its buffer is released), and
//! a fork happens with the GIL held by the thread that forks, so no other
//! thread can hold that lock then. The queue and trackers take no lock.

use oxmq::{ReleaseQueue, Tracker};
use pyo3::buffer::PyUntypedBuffer;
use pyo3::types::PyBytes;
use pyo3::{Bound, Py, PyAny, Python};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Buffers the core is done with, waiting for a GIL holder to release them.
static RELEASED: ReleaseQueue<Released> = ReleaseQueue::new();

/// A lent buffer the core is done with.
struct Released {
    buf: PyUntypedBuffer,
    /// Its [`LENT_BYTES`] key, when it was registered there.
    lent_key: Option<usize>,
}

/// Release queued buffers if there are any. One atomic load when empty.
#[inline]
pub(crate) fn maybe_drain(py: Python<'_>) {
    drain_releases(py);
}

/// Release every queued buffer now; returns how many.
#[inline]
pub(crate) fn drain_releases(py: Python<'_>) -> usize {
    RELEASED.drain(|r| {
        // Before the release, which may free the object the entry names.
        if let Some(key) = r.lent_key {
            forget_lent(py, key);
        }
        r.buf.release(py);
    })
}

/// A Python buffer lent to the core for a zero-copy send.
pub(crate) struct Owner {
    buf: Option<PyUntypedBuffer>,
    ptr: *const u8,
    len: usize,
    tracker: Option<Arc<Tracker>>,
    /// Registered in [`LENT_BYTES`] (an exact `bytes` sent by reference)
    /// until its buffer is released.
    lent_bytes: bool,
}

// SAFETY: the buffer's memory stays valid (and, for mutable exporters such as
// bytearray, unresizable) while the export is held; the export itself is only
// released with the GIL held, by `drain_releases`.
unsafe impl Send for Owner {}
// SAFETY: as for Send: shared references only read `ptr`/`len`, and the
// export is released once, with the GIL held, by `drain_releases`.
unsafe impl Sync for Owner {}

impl Owner {
    /// `buf` must be C-contiguous.
    pub(crate) fn new(buf: PyUntypedBuffer, tracker: Option<Arc<Tracker>>) -> Owner {
        let ptr = buf.buf_ptr() as *const u8;
        let len = buf.len_bytes();
        Owner { buf: Some(buf), ptr, len, tracker, lent_bytes: false }
    }

    /// An exact `bytes` object sent by reference instead of copied (it is
    /// immutable, so no one can tell), registered so that a receiver in this
    /// process can hand back that very object (see [`lent_bytes_object`]).
    pub(crate) fn lend_bytes(b: &Bound<'_, PyBytes>) -> Option<Owner> {
        let buf = PyUntypedBuffer::get(b.as_any()).ok()?;
        let mut owner = Owner::new(buf, None);
        let mut map = lent_map(b.py());
        map.get_or_insert_with(HashMap::new)
            .entry(owner.ptr as usize)
            .or_insert((b.as_ptr() as usize, owner.len, 0))
            .2 += 1;
        LENT_COUNT.fetch_add(1, Ordering::Relaxed);
        owner.lent_bytes = true;
        Some(owner)
    }
}

/// `bytes` bodies lent to the core by a copying send: data pointer ->
/// (object, length, how many owners). An entry lives as long as an owner,
/// or its buffer waiting in [`RELEASED`], keeps the object alive. Taken only
/// with the GIL held (see the module's doc: what makes it fork-safe).
static LENT_BYTES: Mutex<Option<LentMap>> = Mutex::new(None);

/// [`LENT_BYTES`], for a caller that shows it holds the GIL.
fn lent_map(_gil: Python<'_>) -> MutexGuard<'static, Option<LentMap>> {
    LENT_BYTES.lock().unwrap_or_else(|e| e.into_inner())
}

/// Data pointer -> (object pointer, body length, owners alive).
type LentMap = HashMap<usize, (usize, usize, usize)>;
/// Entries in `LENT_BYTES` (read without the lock: zero outside same-process use).
static LENT_COUNT: AtomicUsize = AtomicUsize::new(0);

/// The `bytes` object whose body `data` is, if a send in this process lent it
/// (inproc: the receiver gets the sender's object back instead of a copy).
/// `data` must be the body of a message the caller holds, which keeps the
/// owner, and so the object, alive.
pub(crate) fn lent_bytes_object(py: Python<'_>, data: &[u8]) -> Option<Py<PyAny>> {
    if LENT_COUNT.load(Ordering::Relaxed) == 0 {
        return None;
    }
    let map = lent_map(py);
    let &(obj, len, _) = map.as_ref()?.get(&(data.as_ptr() as usize))?;
    if len != data.len() {
        return None;
    }
    // SAFETY: the entry exists only while a buffer export of (so a reference
    // to) this `bytes` object is held, by an owner or in `RELEASED`, and the
    // caller's message holds such an owner; we take a new strong reference.
    Some(unsafe { Bound::from_borrowed_ptr(py, obj as *mut pyo3::ffi::PyObject) }.unbind())
}

impl AsRef<[u8]> for Owner {
    fn as_ref(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: see the `Send` impl: the exported memory outlives `self`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

/// One owner of the lent body at `key` is gone and its buffer is being
/// released.
fn forget_lent(py: Python<'_>, key: usize) {
    let mut map = lent_map(py);
    if let Some(m) = map.as_mut() {
        if let Some(e) = m.get_mut(&key) {
            e.2 -= 1;
            if e.2 == 0 {
                m.remove(&key);
            }
        }
    }
    LENT_COUNT.fetch_sub(1, Ordering::Relaxed);
}

impl Drop for Owner {
    fn drop(&mut self) {
        // Any thread, the I/O thread's included: no lock taken here.
        if let Some(buf) = self.buf.take() {
            let lent_key = self.lent_bytes.then_some(self.ptr as usize);
            RELEASED.push(Released { buf, lent_key });
        }
        if let Some(t) = &self.tracker {
            t.set_done();
        }
    }
}
