//! Python's way of blocking, for the core's waits ([`oxmq::WaitHook`]): the
//! GIL released while parked, signal handlers run at least every [`SLICE`]
//! (and whenever a signal interrupts the wait), so Ctrl-C raises
//! `KeyboardInterrupt` promptly.

use crate::errors::zmq_error;
use crate::SLICE;
use oxmq::WaitHook;
use pyo3::prelude::*;
use std::time::Duration;

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
