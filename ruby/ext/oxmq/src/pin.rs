//! Zero-copy sends of frozen Ruby strings.
//!
//! A frozen string cannot change, so its bytes can go to the core as they
//! are (`oxmq::Msg::from_owner`) instead of being copied. The string must
//! stay alive until the core is done, which may be on the I/O thread, where
//! no Ruby API may be called. So the string is kept in a Ruby hash (marked
//! by the GC, never moved) under a number, and the owner's `Drop` only
//! queues that number on the core's [`ReleaseQueue`]; Ruby threads drain it
//! under the GVL on later socket calls and delete the entries. Small strings are copied: below
//! [`ZERO_COPY_MIN`] a copy costs less than the bookkeeping.

use magnus::prelude::*;
use magnus::value::Lazy;
use magnus::{RHash, RString, Ruby};
use oxmq::ReleaseQueue;
use std::sync::atomic::{AtomicU64, Ordering};

/// Frozen strings at least this long are sent without a copy.
pub(crate) const ZERO_COPY_MIN: usize = 8192;

static PINS: Lazy<RHash> = Lazy::new(|ruby| {
    let h = ruby.hash_new();
    magnus::gc::register_mark_object(h);
    h
});
static NEXT_ID: AtomicU64 = AtomicU64::new(1);
/// Ids whose strings the core has released.
static RELEASED: ReleaseQueue<u64> = ReleaseQueue::new();

struct Lent {
    id: u64,
    ptr: *const u8,
    len: usize,
}

// SAFETY: the bytes belong to a frozen, non-embedded string kept alive (and
// unmodifiable) by `PINS` until this owner is dropped and its id drained.
unsafe impl Send for Lent {}

impl AsRef<[u8]> for Lent {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: see the `Send` impl.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        RELEASED.push(self.id);
    }
}

/// The message for `s`: borrowed when frozen and large, else copied.
#[inline]
pub(crate) fn msg_from(ruby: &Ruby, s: RString) -> oxmq::Msg {
    // SAFETY: the slice is used before any Ruby call that could free or
    // change the string (copied at once, or pinned first when borrowed).
    let bytes = unsafe { s.as_slice() };
    if bytes.len() < ZERO_COPY_MIN || !s.is_frozen() {
        return oxmq::Msg::from_slice(bytes);
    }
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let (ptr, len) = (bytes.as_ptr(), bytes.len());
    if ruby.get_inner(&PINS).aset(id, s).is_err() {
        return oxmq::Msg::from_slice(bytes);
    }
    oxmq::Msg::from_owner(Lent { id, ptr, len })
}

/// Forget strings the core has released. One atomic load when there are none.
#[inline]
pub(crate) fn drain(ruby: &Ruby) {
    RELEASED.drain(|id| {
        let _ = ruby.get_inner(&PINS).delete::<u64, magnus::Value>(id);
    });
}

/// How many strings are currently lent to the core (for tests).
pub(crate) fn lent_count(ruby: &Ruby) -> usize {
    drain(ruby);
    ruby.get_inner(&PINS).len()
}
