//! `zmq_poll` over sockets and raw file descriptors.

use crate::errors::*;
use crate::release::drain_releases;
use crate::socket::*;
use crate::SLICE;
use oxmq::errno;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyList;
use std::os::raw::c_int;
use std::time::{Duration, Instant};

pub(crate) enum PollTarget {
    Sock(Py<Socket>, i16),
    Fd(i32, i16),
}

/// Poll sockets and fds; returns revents per target.
pub(crate) fn poll_targets(py: Python<'_>, items: &[PollTarget], timeout_ms: i64) -> PyResult<Vec<i16>> {
    drain_releases(py);
    let deadline = (timeout_ms >= 0).then(|| Instant::now() + Duration::from_millis(timeout_ms as u64));
    let mut fds: Vec<libc::pollfd> = items
        .iter()
        .map(|it| match it {
            PollTarget::Sock(s, _) => libc::pollfd { fd: s.get().fd, events: libc::POLLIN, revents: 0 },
            PollTarget::Fd(fd, ev) => {
                let mut os = 0;
                if ev & oxmq::POLLIN != 0 {
                    os |= libc::POLLIN;
                }
                if ev & oxmq::POLLOUT != 0 {
                    os |= libc::POLLOUT;
                }
                libc::pollfd { fd: *fd, events: os, revents: 0 }
            }
        })
        .collect();
    let mut revents = vec![0i16; items.len()];
    loop {
        // Check (GIL held, each socket locked only for its own check).
        let mut ready = 0;
        for (i, it) in items.iter().enumerate() {
            revents[i] = 0;
            if let PollTarget::Sock(s, ev) = it {
                let s = s.get();
                let e = s
                    .with(|core| {
                        if s.ctx.is_terminated() {
                            return Err(errno::ETERM);
                        }
                        core.events().map_err(core_errno)
                    })
                    .map_err(|e| zmq_error(py, e))?;
                revents[i] = e & *ev;
                if revents[i] != 0 {
                    ready += 1;
                }
            }
        }
        let slice_end = Instant::now() + SLICE;
        let wait_until = if ready > 0 { Instant::now() } else { deadline.map_or(slice_end, |d| d.min(slice_end)) };
        let fds_ptr = SendPtr(fds.as_mut_ptr());
        let nfds = fds.len();
        let rc = py.detach(move || {
            let p = fds_ptr;
            let left = wait_until.saturating_duration_since(Instant::now());
            let ms = left.as_millis().min(i32::MAX as u128) as c_int + (left.subsec_nanos() % 1_000_000 != 0) as c_int;
            // SAFETY: `fds` outlives this call and is not touched elsewhere meanwhile.
            let rc = unsafe { libc::poll(p.0, nfds as libc::nfds_t, ms) };
            if rc < 0 {
                std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EINVAL).wrapping_neg()
            } else {
                rc
            }
        });
        if rc < 0 && -rc != libc::EINTR {
            return Err(zmq_error(py, -rc));
        }
        let mut woke_socket = false;
        for (i, it) in items.iter().enumerate() {
            let r = fds[i].revents;
            match it {
                PollTarget::Fd(_, ev) => {
                    let mut e = 0;
                    if r & libc::POLLIN != 0 {
                        e |= oxmq::POLLIN;
                    }
                    if r & libc::POLLOUT != 0 {
                        e |= oxmq::POLLOUT;
                    }
                    if r & (libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0 {
                        e |= oxmq::POLLERR;
                    }
                    revents[i] = e & (ev | oxmq::POLLERR);
                    if revents[i] != 0 {
                        ready += 1;
                    }
                }
                PollTarget::Sock(..) => woke_socket |= r != 0,
            }
        }
        if ready > 0 {
            return Ok(revents);
        }
        py.check_signals()?;
        if !woke_socket && deadline.is_some_and(|d| Instant::now() >= d) {
            return Ok(revents);
        }
    }
}

pub(crate) struct SendPtr(*mut libc::pollfd);
// SAFETY: the pointer is only used by the thread that runs the closure, while the owner waits.
unsafe impl Send for SendPtr {}

/// `zmq_poll`: `sockets` is a list of `(socket_or_fd, events)`; returns the
/// list of `(socket_or_fd, revents)` that are ready. `timeout` in ms (-1 forever).
#[pyfunction]
#[pyo3(signature = (sockets, timeout=-1))]
pub(crate) fn zmq_poll(py: Python<'_>, sockets: &Bound<'_, PyAny>, timeout: i64) -> PyResult<Py<PyList>> {
    let mut objs = Vec::new();
    let mut items = Vec::new();
    for entry in sockets.try_iter()? {
        let entry = entry?;
        let (obj, ev): (Bound<'_, PyAny>, i16) = entry.extract()?;
        if let Ok(s) = obj.cast::<Socket>() {
            if s.get().lock().is_none() {
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
    let rev = poll_targets(py, &items, timeout)?;
    let out = PyList::empty(py);
    for (obj, r) in objs.into_iter().zip(rev) {
        if r != 0 {
            out.append((obj, r as i32))?;
        }
    }
    Ok(out.unbind())
}
