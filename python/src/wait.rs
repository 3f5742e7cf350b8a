//! Python's way of blocking, for the core's waits ([`oxmq::WaitHook`]): the
//! GIL released while parked, signal handlers run at least every [`SLICE`]
//! (and whenever a signal interrupts the wait), so Ctrl-C raises
//! `KeyboardInterrupt` promptly.

use crate::errors::zmq_error;
use crate::SLICE;
use oxmq::WaitHook;
use pyo3::prelude::*;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

pub(crate) struct GilWait<'py> {
    py: Python<'py>,
    raised: Option<PyErr>,
}

/// The core's wait, handed to `Python::detach`, which runs it on this thread.
struct CoreWaitFn<'a>(&'a mut dyn FnMut());

// SAFETY: `detach` runs the closure on the calling thread; pyo3 asks for
// `Send` only to keep GIL-bound references out of it, and the core's wait
// holds none (`WaitHook::park`'s contract).
unsafe impl Send for CoreWaitFn<'_> {}

impl CoreWaitFn<'_> {
    fn run(self) {
        (self.0)()
    }
}

impl<'py> GilWait<'py> {
    pub(crate) fn new(py: Python<'py>) -> Self {
        GilWait { py, raised: None }
    }

    /// The Python exception for a call that ended with `e`: the one a signal
    /// handler raised, if that is what ended it.
    pub(crate) fn error(&mut self, e: oxmq::Error) -> PyErr {
        self.raised.take().unwrap_or_else(|| zmq_error(self.py, e.errno()))
    }
}

impl WaitHook for GilWait<'_> {
    fn slice(&self) -> Option<Duration> {
        Some(SLICE)
    }

    fn park(&mut self, wait: &mut dyn FnMut()) {
        let wait = CoreWaitFn(wait);
        self.py.detach(move || wait.run());
    }

    fn check(&mut self) -> oxmq::Result<()> {
        self.py.check_signals().map_err(|e| {
            self.raised = Some(e);
            oxmq::Error::Interrupted
        })
    }
}

/// gevent's way of blocking, for `oxmq.green` ([`oxmq::WaitHook::cooperative`]):
/// every greenlet runs on one thread, so nothing may block in the kernel;
/// the core's waits call gevent's `select` instead (with the GIL held, as
/// gevent needs), which runs the other greenlets meanwhile.
pub(crate) struct GreenWait<'py> {
    select: Bound<'py, PyAny>,
    raised: Option<PyErr>,
}

impl<'py> GreenWait<'py> {
    /// `select` is `gevent.select.select`.
    pub(crate) fn new(select: Bound<'py, PyAny>) -> Self {
        GreenWait { select, raised: None }
    }

    /// The Python exception for a call that ended with `e`: the one gevent
    /// raised in `select` (a `Timeout`, a killed greenlet), if that ended it.
    pub(crate) fn error(&mut self, e: oxmq::Error) -> PyErr {
        self.raised.take().unwrap_or_else(|| zmq_error(self.select.py(), e.errno()))
    }
}

impl WaitHook for GreenWait<'_> {
    fn slice(&self) -> Option<Duration> {
        Some(GREEN_SLICE)
    }

    fn check(&mut self) -> oxmq::Result<()> {
        // gevent's hub handles signals; a cooperative wait is never parked.
        Ok(())
    }

    fn cooperative(&self) -> bool {
        true
    }

    fn wait_fds(&mut self, fds: &[(RawFd, i16)], until: Option<Instant>) -> oxmq::Result<()> {
        let read: Vec<RawFd> = fds.iter().filter(|(_, ev)| ev & oxmq::POLLIN != 0).map(|(fd, _)| *fd).collect();
        let write: Vec<RawFd> = fds.iter().filter(|(_, ev)| ev & oxmq::POLLOUT != 0).map(|(fd, _)| *fd).collect();
        let timeout = until.map(|u| u.saturating_duration_since(Instant::now()).as_secs_f64());
        let empty: Vec<RawFd> = Vec::new();
        self.select.call1((read, write, empty, timeout)).map(drop).map_err(|e| {
            self.raised = Some(e);
            oxmq::Error::Interrupted
        })
    }
}

/// The longest a green wait lasts before the core looks at the socket again
/// (pyzmq's green sockets have no such bound; it costs one retry per slice).
const GREEN_SLICE: Duration = Duration::from_millis(500);
