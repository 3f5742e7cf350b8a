//! `ZMQ::Context`: owns a core context and knows its sockets, so that
//! `destroy` can close them all (czmq's zctx_destroy): blocked calls in other
//! threads fail with ETERM, every socket gets the context's LINGER (0 by
//! default, as czmq) and is closed through its slot (never freed twice, even
//! if GC or another thread closes it at the same moment), then the context
//! terminates with the GVL released.

use crate::errors::{core_error, zmq_error};
use crate::reaper;
use crate::slot::Slot;
use crate::socket::Socket;
use crate::wait::without_gvl;
use magnus::Error;
use oxmq::{errno, opt, SocketType};
use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, Weak};

#[magnus::wrap(class = "ZMQ::Context", free_immediately, size)]
pub(crate) struct Context {
    /// Taken (once) by `drop`.
    ctx: ManuallyDrop<oxmq::Context>,
    /// Only touched when sockets are created and at destroy, never on send/recv.
    sockets: Mutex<Vec<Weak<Slot>>>,
    destroyed: AtomicBool,
    linger: AtomicI64,
}

impl Drop for Context {
    fn drop(&mut self) {
        // Inside the GC: live sockets keep working (each holds the core
        // context); the last reference may wait for LINGER, so drop it elsewhere.
        // SAFETY: `drop` runs once and `ctx` is not used after this.
        let ctx = unsafe { ManuallyDrop::take(&mut self.ctx) };
        reaper::dispose(Box::new(ctx));
    }
}

impl Context {
    pub(crate) fn new() -> Context {
        Context {
            ctx: ManuallyDrop::new(oxmq::Context::new()),
            sockets: Mutex::new(Vec::new()),
            destroyed: AtomicBool::new(false),
            linger: AtomicI64::new(0),
        }
    }

    pub(crate) fn socket(&self, kind: i32) -> Result<Socket, Error> {
        let kind = SocketType::from_raw(kind)
            .ok_or_else(|| zmq_error(errno::EINVAL, Some("Invalid argument: unknown socket type")))?;
        if self.destroyed.load(Ordering::Acquire) {
            return Err(zmq_error(errno::ETERM, None));
        }
        let sock = self.ctx.socket(kind).map_err(core_error)?;
        let slot = Arc::new(Slot::new((*self.ctx).clone(), sock).map_err(|e| zmq_error(e, None))?);
        let mut list = self.sockets.lock().unwrap_or_else(|e| e.into_inner());
        list.retain(|w| w.strong_count() > 0);
        list.push(Arc::downgrade(&slot));
        Ok(Socket::new(slot))
    }

    pub(crate) fn destroy(&self) -> Result<(), Error> {
        if self.destroyed.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        let slots: Vec<Arc<Slot>> = {
            let mut list = self.sockets.lock().unwrap_or_else(|e| e.into_inner());
            list.drain(..).filter_map(|w| w.upgrade()).collect()
        };
        let linger = self.linger.load(Ordering::Relaxed);
        for slot in &slots {
            if let Ok(s) = slot.enter() {
                // Before the shutdown, which makes options read-only. EINVAL
                // (in use by another thread) leaves the socket's own LINGER.
                let _ = s.set_option_int(opt::LINGER, linger);
            }
        }
        self.ctx.shutdown();
        for slot in &slots {
            slot.close();
        }
        drop(slots);
        let ctx = (*self.ctx).clone();
        let wake = crate::wait::thread_wake().unwrap_or(-1);
        // Waits (GVL released, so they can run) for threads still inside a
        // socket to leave, being woken with ETERM, and for LINGER.
        if without_gvl(wake, || ctx.term()).is_none() {
            // An interrupt was pending, so Ruby did not run it: terminate on
            // a thread of its own and let the interrupt be raised here.
            let ctx = (*self.ctx).clone();
            let _ = std::thread::Builder::new().name("oxmq-ruby-term".into()).spawn(move || ctx.term());
            crate::wait::check_interrupts()?;
        }
        Ok(())
    }

    pub(crate) fn is_destroyed(&self) -> bool {
        self.destroyed.load(Ordering::Acquire)
    }

    pub(crate) fn linger(&self) -> i64 {
        self.linger.load(Ordering::Relaxed)
    }

    pub(crate) fn set_linger(&self, ms: i64) -> Result<(), Error> {
        if ms < -1 {
            return Err(zmq_error(errno::EINVAL, None));
        }
        self.linger.store(ms, Ordering::Relaxed);
        Ok(())
    }

    pub(crate) fn set(&self, option: i32, value: i32) -> Result<(), Error> {
        self.ctx.set(option, value).map_err(core_error)
    }

    pub(crate) fn get(&self, option: i32) -> Result<i32, Error> {
        self.ctx.get(option).map_err(core_error)
    }
}
