//! `oxmq._oxmq`: the native half of the `oxmq` Python package.
//!
//! The Python layer (`python/oxmq`) subclasses [`Context`] and [`Socket`] to
//! add pyzmq's sugar; everything on a message's path lives here:
//!
//! * **Hot path.** A send or receive that can complete at once runs with the
//!   GIL held: one atomic to enter the socket's slot (`oxmq::SocketSlot`),
//!   the core's non-blocking operation, and (for `recv`) one `bytes`
//!   allocation. No GIL release, no intermediate Python object for the payload.
//! * **Blocking.** Only when the non-blocking attempt fails with EAGAIN do we
//!   call the core's `block_with` with `wait::GilWait`: the GIL released
//!   while it waits, re-taken at least every [`SLICE`] to run signal
//!   handlers, so Ctrl-C raises `KeyboardInterrupt` promptly. A `close` from
//!   another thread wakes the call (ENOTSOCK). Trackers' waits go the same way.
//! * **Zero-copy sends** wrap a Python buffer in `oxmq::Msg::from_owner`. The
//!   core may drop it on its I/O thread, without the GIL: the owner's `Drop`
//!   only pushes the buffer onto a release queue ([`release`]) and sets its
//!   `oxmq::Tracker`; Python-side calls drain the queue with the GIL held.

#![deny(unsafe_op_in_unsafe_fn)]

mod context;
mod errors;
mod frame;
mod options;
mod poll;
mod proxy;
mod release;
mod security;
mod shadow;
mod socket;
mod wait;

use context::Context;
use frame::{Frame, NativeTracker};
use pyo3::prelude::*;
use release::drain_releases;
use socket::Socket;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// Longest time a blocking call waits without re-taking the GIL to check signals.
pub(crate) const SLICE: Duration = Duration::from_millis(100);

/// pyzmq's default zero-copy threshold: smaller `copy=False` sends are copied.
pub(crate) const DEFAULT_COPY_THRESHOLD: usize = 65536;

/// `zmq.COPY_THRESHOLD` as the program last assigned it (the package's
/// module hook forwards each assignment): a socket's `copy_threshold` starts
/// from it, and a `Frame` made without `copy_threshold=` uses it, as in pyzmq.
pub(crate) static COPY_THRESHOLD: AtomicUsize = AtomicUsize::new(DEFAULT_COPY_THRESHOLD);

/// Whether the program set `zmq.COPY_THRESHOLD` itself: sockets made while it
/// is set follow pyzmq's copy policy exactly instead of oxmq's (see
/// [`frame::CopyPolicy`]).
pub(crate) static COPY_THRESHOLD_SET: AtomicBool = AtomicBool::new(false);

/// Called by the package whenever `zmq.COPY_THRESHOLD` is assigned; `explicit`
/// is false when the original value is put back (pytest's monkeypatch undo).
/// `None` means 0 (never copy), as pyzmq treats a falsy threshold.
#[pyfunction]
fn _set_copy_threshold(value: Option<usize>, explicit: bool) {
    COPY_THRESHOLD.store(value.unwrap_or(0), Ordering::Relaxed);
    COPY_THRESHOLD_SET.store(explicit, Ordering::Relaxed);
}

pub(crate) type ZResult<T> = Result<T, i32>;

/// Drop buffers the core has released (normally done on every socket call).
#[pyfunction]
fn _drain_releases(py: Python<'_>) -> usize {
    drain_releases(py)
}

/// (major, minor, patch) of the libzmq API this implements.
#[pyfunction]
fn zmq_version_info() -> (i32, i32, i32) {
    oxmq::ZMQ_VERSION
}

#[pymodule]
fn _oxmq(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Context>()?;
    m.add_class::<Socket>()?;
    m.add_class::<Frame>()?;
    m.add_class::<NativeTracker>()?;
    m.add_function(wrap_pyfunction!(errors::strerror, m)?)?;
    m.add_function(wrap_pyfunction!(poll::zmq_poll, m)?)?;
    m.add_function(wrap_pyfunction!(poll::_green_poll, m)?)?;
    m.add_function(wrap_pyfunction!(proxy::proxy, m)?)?;
    m.add_function(wrap_pyfunction!(proxy::_green_proxy, m)?)?;
    m.add_function(wrap_pyfunction!(proxy::proxy_steerable, m)?)?;
    m.add_function(wrap_pyfunction!(proxy::monitored_queue, m)?)?;
    m.add_function(wrap_pyfunction!(_drain_releases, m)?)?;
    m.add_function(wrap_pyfunction!(frame::_wait_trackers, m)?)?;
    m.add_function(wrap_pyfunction!(_set_copy_threshold, m)?)?;
    m.add_function(wrap_pyfunction!(zmq_version_info, m)?)?;
    m.add_function(wrap_pyfunction!(security::z85_encode, m)?)?;
    m.add_function(wrap_pyfunction!(security::z85_decode, m)?)?;
    m.add_function(wrap_pyfunction!(security::curve_keypair, m)?)?;
    m.add_function(wrap_pyfunction!(security::curve_public, m)?)?;
    m.add_function(wrap_pyfunction!(security::has, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
