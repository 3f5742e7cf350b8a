//! Drops that may block, moved off the GC.
//!
//! Dropping the last reference to a core context waits for lingering
//! messages (up to LINGER, forever by default) and joins its I/O thread.
//! Ruby's GC must never wait like that, so the free functions of sockets and
//! contexts hand their references to one background thread that drops them.

use std::sync::mpsc::{channel, Sender};
use std::sync::Mutex;

type Garbage = Box<dyn Send>;

static REAPER: Mutex<Option<Sender<Garbage>>> = Mutex::new(None);

/// Drop `g` on the reaper thread (or here, if that thread cannot be started).
pub(crate) fn dispose(g: Garbage) {
    let mut tx = REAPER.lock().unwrap_or_else(|e| e.into_inner());
    if tx.is_none() {
        let (s, r) = channel::<Garbage>();
        let started = std::thread::Builder::new().name("oxmq-ruby-reaper".into()).spawn(move || {
            for g in r {
                drop(g);
            }
        });
        if started.is_ok() {
            *tx = Some(s);
        }
    }
    match tx.as_ref() {
        Some(s) => {
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
