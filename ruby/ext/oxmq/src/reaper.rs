//! Drops that may block, moved off the GC.
//!
//! Dropping the last reference to a core context waits for lingering
//! messages (up to LINGER, forever by default) and joins its I/O thread.
//! Ruby's GC must never wait like that, so the free functions of sockets and
//! contexts hand their references to one background thread that drops them.
//!
//! Fork: a child has none of its parent's threads, the reaper included, so
//! the parent's channel would take the child's garbage and never drop it
//! (a context left undropped keeps its I/O thread). Each process starts a
//! reaper of its own; the child leaves the parent's sender alone, as
//! dropping it may take the channel's internal lock, which the parent's
//! reaper may have held at the fork. `REAPER` itself is only ever locked
//! by a free function, under the GVL, which the thread calling `fork`
//! holds: no other thread can have it locked at the fork.

use std::sync::mpsc::{channel, Sender};
use std::sync::Mutex;

type Garbage = Box<dyn Send>;

/// The reaper's channel and the process it belongs to.
static REAPER: Mutex<Option<(u32, Sender<Garbage>)>> = Mutex::new(None);

/// Drop `g` on the reaper thread (or here, if that thread cannot be started).
pub(crate) fn dispose(g: Garbage) {
    let mut tx = REAPER.lock().unwrap_or_else(|e| e.into_inner());
    let pid = std::process::id();
    if tx.as_ref().is_some_and(|(owner, _)| *owner != pid) {
        std::mem::forget(tx.take());
    }
    if tx.is_none() {
        let (s, r) = channel::<Garbage>();
        let started = std::thread::Builder::new().name("oxmq-ruby-reaper".into()).spawn(move || {
            for g in r {
                drop(g);
            }
        });
        if started.is_ok() {
            *tx = Some((pid, s));
        }
    }
    match tx.as_ref() {
        Some((_, s)) => {
            if let Err(back) = s.send(g) {
                drop(tx);
                drop(back.0);
            }
        }
        None => {
            drop(tx);
            drop(g);
        }
    }
}
