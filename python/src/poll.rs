//! `zmq_poll` over sockets and raw file descriptors.

use crate::errors::*;
use crate::release::drain_releases;
use crate::socket::*;
use crate::wait::{GilWait, GreenWait};
use oxmq::errno;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyList;

pub(crate) enum PollTarget {
    Sock(Py<Socket>, i16),
    Fd(i32, i16),
}

/// Poll sockets and fds with the core's `zmq_poll` (GIL released while it
/// waits, each socket reached only for its own check); returns revents per
/// target.
pub(crate) fn poll_targets(py: Python<'_>, items: &[PollTarget], timeout_ms: i64) -> PyResult<Vec<i16>> {
    poll_targets_with(py, items, timeout_ms, None)
}

/// [`poll_targets`]; with `green_select` (gevent's `select`), through
/// [`GreenWait`] instead of [`GilWait`].
fn poll_targets_with(
    py: Python<'_>,
    items: &[PollTarget],
    timeout_ms: i64,
    green_select: Option<&Bound<'_, PyAny>>,
) -> PyResult<Vec<i16>> {
    drain_releases(py);
    let mut set: Vec<oxmq::PollItem<'_>> = items
        .iter()
        .map(|it| match it {
            PollTarget::Sock(s, ev) => {
                let shared: &SocketShared = s.get();
                oxmq::PollItem::from_source(shared, *ev)
            }
            PollTarget::Fd(fd, ev) => oxmq::PollItem::from_fd(*fd, *ev),
        })
        .collect();
    match green_select {
        Some(select) => {
            let mut hook = GreenWait::new(select.clone());
            oxmq::poll_with(&mut set, timeout_ms, &mut hook).map_err(|e| hook.error(e))?;
        }
        None => {
            let mut hook = GilWait::new(py);
            oxmq::poll_with(&mut set, timeout_ms, &mut hook).map_err(|e| hook.error(e))?;
        }
    }
    Ok(set.iter().map(|item| item.revents()).collect())
}

/// `zmq_poll`: `sockets` is a list of `(socket_or_fd, events)`; returns the
/// list of `(socket_or_fd, revents)` that are ready. `timeout` in ms (-1 forever).
#[pyfunction]
#[pyo3(signature = (sockets, timeout=-1))]
pub(crate) fn zmq_poll(py: Python<'_>, sockets: &Bound<'_, PyAny>, timeout: i64) -> PyResult<Py<PyList>> {
    poll_list(py, sockets, timeout, None)
}

/// `zmq.green`'s `zmq_poll`: the same, waiting in gevent's `select` (`select`)
/// so that other greenlets run meanwhile.
#[pyfunction]
#[pyo3(signature = (sockets, timeout, select))]
pub(crate) fn _green_poll(
    py: Python<'_>,
    sockets: &Bound<'_, PyAny>,
    timeout: i64,
    select: &Bound<'_, PyAny>,
) -> PyResult<Py<PyList>> {
    poll_list(py, sockets, timeout, Some(select))
}

fn poll_list(
    py: Python<'_>,
    sockets: &Bound<'_, PyAny>,
    timeout: i64,
    green_select: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyList>> {
    let mut objs = Vec::new();
    let mut items = Vec::new();
    for entry in sockets.try_iter()? {
        let entry = entry?;
        let (obj, ev): (Bound<'_, PyAny>, i16) = entry.extract()?;
        if let Ok(s) = obj.cast::<Socket>() {
            if s.get().is_closed() {
                return Err(zmq_error(py, errno::ENOTSOCK));
            }
            items.push(PollTarget::Sock(s.clone().unbind(), ev));
        } else if let Ok(fd) = obj.extract::<i32>() {
            items.push(PollTarget::Fd(fd, ev));
        } else if let Ok(f) = obj.call_method0("fileno") {
            items.push(PollTarget::Fd(f.extract()?, ev));
            // pyzmq reports a file object by its descriptor number
            objs.push(f);
            continue;
        } else {
            return Err(PyTypeError::new_err(format!(
                "poll items must be sockets, ints or objects with fileno(), got {}",
                obj.repr()?
            )));
        }
        objs.push(obj);
    }
    let rev = poll_targets_with(py, &items, timeout, green_select)?;
    let out = PyList::empty(py);
    for (obj, r) in objs.into_iter().zip(rev) {
        if r != 0 {
            out.append((obj, r as i32))?;
        }
    }
    Ok(out.unbind())
}
