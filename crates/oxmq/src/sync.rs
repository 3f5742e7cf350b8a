//! The atomics and mutex of the lock-free pipe and the mailbox, behind one
//! seam: a `--cfg loom` build swaps in loom's, so `loom_tests` can explore
//! every interleaving (and weak-memory outcome) of their wake-up protocols.
//! `Arc` stays std's: loom's cannot hold `Arc<dyn Wake>`.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicU64, Ordering};
#[cfg(loom)]
pub(crate) use loom::sync::{Mutex, MutexGuard};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicU64, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::{Mutex, MutexGuard};
