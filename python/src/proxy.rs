//! `zmq_proxy`, run without the GIL.

use crate::errors::*;
use crate::socket::*;
use crate::SLICE;
use oxmq::{errno, Msg};
use pyo3::prelude::*;
use std::os::raw::c_int;
use std::time::Instant;

/// `zmq_proxy`: forward messages between `frontend` and `backend` (and copy
/// them to `capture`) until the context is terminated. Runs without the GIL.
#[pyfunction]
#[pyo3(signature = (frontend, backend, capture=None))]
pub(crate) fn proxy(
    py: Python<'_>,
    frontend: &Bound<'_, Socket>,
    backend: &Bound<'_, Socket>,
    capture: Option<&Bound<'_, Socket>>,
) -> PyResult<()> {
    let socks: [&Socket; 2] = [frontend.get(), backend.get()];
    let capture: Option<&Socket> = capture.map(|c| c.get());
    // pending[d]: frames received from socks[d], not yet all sent to socks[1 - d].
    let mut pending: [Vec<Msg>; 2] = [Vec::new(), Vec::new()];
    // A direction whose source cannot receive (PUSH, PUB...) is skipped.
    let mut can_recv = [true, true];
    loop {
        let out = py.detach(|| -> Waited<()> {
            let slice_end = Instant::now() + SLICE;
            loop {
                let mut progress = false;
                for d in 0..2 {
                    let (src, dst) = (socks[d], socks[1 - d]);
                    if d == 1 && std::ptr::eq(socks[0], socks[1]) {
                        break;
                    }
                    if pending[d].is_empty() && can_recv[d] {
                        match src.with(|s| s.recv_multipart(oxmq::DONTWAIT).map_err(core_errno)) {
                            Ok(parts) => {
                                if let Some(c) = capture {
                                    let n = parts.len();
                                    for (i, m) in parts.iter().enumerate() {
                                        let f = oxmq::DONTWAIT | if i + 1 < n { oxmq::SNDMORE } else { 0 };
                                        let _ = c.with(|s| s.send(m.clone(), f).map_err(core_errno));
                                    }
                                }
                                pending[d] = parts;
                                pending[d].reverse();
                            }
                            Err(errno::EAGAIN) => {}
                            Err(errno::ENOTSUP) => can_recv[d] = false,
                            Err(e) => return Waited::Failed(e),
                        }
                    }
                    while let Some(m) = pending[d].pop() {
                        let f = oxmq::DONTWAIT | if pending[d].is_empty() { 0 } else { oxmq::SNDMORE };
                        match dst.with(|s| s.send(m.clone(), f).map_err(core_errno)) {
                            Ok(()) => progress = true,
                            Err(errno::EAGAIN) => {
                                pending[d].push(m);
                                break;
                            }
                            Err(e) => return Waited::Failed(e),
                        }
                    }
                }
                if progress {
                    if Instant::now() >= slice_end {
                        return Waited::CheckSignals;
                    }
                    continue;
                }
                // Nothing moved: wait on the descriptors that matter.
                let mut pfds = Vec::with_capacity(2);
                for d in 0..2 {
                    let fd = if pending[d].is_empty() { socks[d].fd } else { socks[1 - d].fd };
                    pfds.push(libc::pollfd { fd, events: libc::POLLIN, revents: 0 });
                }
                let left = slice_end.saturating_duration_since(Instant::now());
                // SAFETY: valid pollfd array alive across the call.
                let rc = unsafe { libc::poll(pfds.as_mut_ptr(), 2, left.as_millis() as c_int + 1) };
                if rc < 0 || Instant::now() >= slice_end {
                    return Waited::CheckSignals;
                }
            }
        });
        match out {
            Waited::Done(()) => return Ok(()),
            Waited::Failed(e) => return Err(zmq_error(py, e)),
            Waited::CheckSignals => py.check_signals()?,
        }
    }
}
