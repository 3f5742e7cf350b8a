//! Errors: libzmq errno values as pyzmq's exception classes.

use oxmq::errno;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

pub(crate) static ZMQ_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
pub(crate) static AGAIN: PyOnceLock<Py<PyType>> = PyOnceLock::new();
pub(crate) static CONTEXT_TERMINATED: PyOnceLock<Py<PyType>> = PyOnceLock::new();
pub(crate) static INTERRUPTED: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// The `oxmq.error` exception for a libzmq errno value.
pub(crate) fn zmq_error(py: Python<'_>, errnum: i32) -> PyErr {
    let cls = match errnum {
        errno::EAGAIN => AGAIN.import(py, "oxmq.error", "Again"),
        errno::ETERM => CONTEXT_TERMINATED.import(py, "oxmq.error", "ContextTerminated"),
        errno::EINTR => INTERRUPTED.import(py, "oxmq.error", "InterruptedSystemCall"),
        _ => ZMQ_ERROR.import(py, "oxmq.error", "ZMQError"),
    };
    match cls.and_then(|c| c.call1((errnum,))) {
        Ok(v) => PyErr::from_value(v),
        Err(e) => e,
    }
}

pub(crate) fn core_errno(e: oxmq::Error) -> i32 {
    e.errno()
}

/// libzmq's message for an errno value (`zmq_strerror`).
#[pyfunction]
pub(crate) fn strerror(errnum: i32) -> String {
    oxmq::Error::strerror(errnum)
}
