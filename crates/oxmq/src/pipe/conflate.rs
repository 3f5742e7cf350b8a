//! CONFLATE pipes (libzmq's `ypipe_conflate`): one kept frame under a lock
//! instead of the chunks; `committed` only counts writes, so flushing,
//! sleeping and waking are the ordinary pipe's.

use super::{new_pipe, Core, PipeReader, PipeWriter, IDX_MASK};
use crate::msg::{Msg, FLAGS_UNCOUNTED, FLAG_MORE};
use crate::pipe::WakeSlot;
use crate::sync::{Mutex, MutexGuard, Ordering};
use std::sync::Arc;

/// A CONFLATE pipe's slot; a panic elsewhere cannot leave an `Option` inconsistent.
fn lock(m: &Mutex<Option<Msg>>) -> MutexGuard<'_, Option<Msg>> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A CONFLATE pipe (libzmq's `ypipe_conflate`): it holds only the frame
/// written last, so the reader gets the newest message and older ones are
/// dropped; no HWM. Only whole single-frame messages make sense on it (of a
/// multipart message only the last frame survives, as in libzmq). Each write
/// replaces the kept frame under a lock; `committed` then only counts writes,
/// so flushing, sleeping and waking work as for the ordinary pipe.
pub(crate) fn pipe_conflate(reader_wake: Arc<WakeSlot>, writer_wake: Arc<WakeSlot>) -> (PipeWriter, PipeReader) {
    new_pipe(0, reader_wake, writer_wake, true)
}

impl PipeWriter {
    /// CONFLATE: replace the kept frame. Taking the index one step lets
    /// `flush` publish it (and wake a sleeping reader) as any write.
    #[cold]
    pub(super) fn write_conflated(&mut self, msg: Msg) {
        self.msgs_written += u64::from(is_whole(&msg));
        if let Some(last) = &self.core.last {
            let old = lock(last).replace(msg);
            // A message the reader never took: a drop, counted by this end.
            self.conflated += u64::from(old.as_ref().is_some_and(is_whole));
            drop(old);
        }
        self.write_idx += 1;
    }

    /// The unflushed frame replaced the kept one: both are gone.
    #[cold]
    pub(super) fn rollback_conflated(&mut self) {
        self.bytes_taken_back += self.unflushed_conflated_bytes();
        if let Some(last) = &self.core.last {
            let old = lock(last).take();
            drop(old);
        }
        self.write_idx = self.flushed_idx;
        self.msgs_written = self.msgs_flushed;
    }

    /// The body bytes of the unflushed frame (called only while there is
    /// one): the kept frame, which it replaced, if the reader has not taken
    /// it ahead of its flush, and unless a bookkeeping frame.
    pub(super) fn unflushed_conflated_bytes(&self) -> u64 {
        let Some(last) = &self.core.last else { return 0 };
        let kept = lock(last);
        kept.as_ref().filter(|m| m.flags() & FLAGS_UNCOUNTED == 0).map_or(0, |m| m.len() as u64)
    }
}

impl PipeReader {
    /// CONFLATE: the kept frame, if a write was published since the last read.
    #[cold]
    pub(super) fn read_conflated(&mut self) -> Option<Msg> {
        let core = self.core.clone();
        let last = core.last.as_ref()?;
        loop {
            if !self.refill(false) {
                return None;
            }
            // Everything published up to now is covered by what the slot holds.
            self.read_idx = core.committed.0.load(Ordering::Acquire) & IDX_MASK;
            // Keeps `read` off the chunk path (which needs `read_idx < avail`).
            self.avail = self.read_idx;
            if let Some(m) = lock(last).take() {
                self.msgs_read += u64::from(is_whole(&m));
                // No HWM on this pipe: the count needs no publishing.
                self.published = self.msgs_read;
                return Some(m);
            }
            // Taken already under an earlier index (a write raced our last
            // read): look again, which sleeps if nothing newer came.
        }
    }

    /// The reader's drop, after freezing `committed`: the kept frame goes
    /// with it.
    #[cold]
    pub(super) fn drop_conflated(&mut self) {
        if let Some(last) = &self.core.last {
            let old = lock(last).take();
            drop(old);
        }
        self.core.writer_wake.wake();
    }
}

/// A frame that ends a message and is no bookkeeping frame.
fn is_whole(msg: &Msg) -> bool {
    msg.flags() & (FLAG_MORE | FLAGS_UNCOUNTED) == 0
}

impl Core {
    /// Messages in the slot, 0 or 1 (for statistics).
    pub(super) fn kept(&self) -> u64 {
        u64::from(self.last.as_ref().is_some_and(|l| lock(l).is_some()))
    }
}
