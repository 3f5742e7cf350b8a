//! `proxy`, `proxy_steerable` and `monitored_queue`: the core's proxy
//! ([`oxmq::Proxy`]), run without the GIL. The only Python-specific part is
//! [`SignalCheck`], the core wait's hook that runs signal handlers.

use crate::errors::*;
use crate::socket::*;
use crate::wait::GreenWait;
use crate::SLICE;
use oxmq::proxy::CaptureSocket;
use oxmq::{errno, Proxy, WaitHook};
use pyo3::prelude::*;
use std::time::Duration;

/// Runs Python's signal handlers while the proxy waits: at least every
/// [`SLICE`], re-taking the GIL. Only the main thread runs handlers, so a
/// proxy in another thread never takes the GIL back (and a signal that
/// interrupts its wait only makes it wait again).
struct SignalCheck {
    on_main_thread: bool,
    raised: Option<PyErr>,
}

impl WaitHook for SignalCheck {
    fn slice(&self) -> Option<Duration> {
        self.on_main_thread.then_some(SLICE)
    }

    fn check(&mut self) -> oxmq::Result<()> {
        if !self.on_main_thread {
            return Ok(());
        }
        Python::attach(|py| py.check_signals()).map_err(|e| {
            self.raised = Some(e);
            oxmq::Error::Interrupted
        })
    }
}

/// What kind of proxy to run.
struct Options<'a> {
    prefixes: Option<(&'a [u8], &'a [u8])>,
    swap_router_ids: bool,
}

/// Run the core proxy over `socks` (frontend, backend, capture, control).
///
/// The proxy runs inside each socket's slot (see [`Socket`]): a `close` from
/// another thread (`Context.destroy`'s) never waits on a proxy that may run
/// forever, and the socket is freed when the proxy leaves it. When the proxy
/// returns ETERM the sockets are closed, as closing is all libzmq allows
/// after ETERM, so the context's termination is not left waiting for them.
fn run(
    py: Python<'_>,
    socks: [Option<&Socket>; 4],
    options: Options<'_>,
    green_select: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    // Frontend and backend may be one socket, or shadows of one.
    let mut owners: Vec<&SocketShared> = Vec::with_capacity(4);
    let mut slots = [None; 4];
    for (slot, s) in slots.iter_mut().zip(socks) {
        if let Some(s) = s {
            let shared: &SocketShared = s;
            let i = owners.iter().position(|o| std::ptr::eq(*o, shared)).unwrap_or_else(|| {
                owners.push(shared);
                owners.len() - 1
            });
            *slot = Some(i);
        }
    }
    let guards = owners
        .iter()
        .map(|o| o.slot.enter())
        .collect::<oxmq::Result<Vec<_>>>()
        .map_err(|_| zmq_error(py, errno::ENOTSOCK))?;
    if let Some(select) = green_select {
        // gevent: on this thread with the GIL held, waiting in its `select`.
        let mut hook = GreenWait::new(select.clone());
        let result = run_inside(&guards, slots, options, &mut hook);
        if matches!(result, Err(oxmq::Error::Terminated)) {
            owners.iter().for_each(|o| o.slot.close());
        }
        drop(guards);
        return result.map_err(|e| hook.error(e));
    }
    let threading = py.import("threading")?;
    let on_main_thread = threading.call_method0("main_thread")?.is(&threading.call_method0("current_thread")?);
    let mut hook = SignalCheck { on_main_thread, raised: None };
    let hook_ref = &mut hook;
    let (result, guards) = py.detach(move || {
        let result = run_inside(&guards, slots, options, hook_ref);
        (result, guards)
    });
    if matches!(result, Err(oxmq::Error::Terminated)) {
        owners.iter().for_each(|o| o.slot.close());
    }
    // The last to leave a closed slot frees its socket, which may linger.
    py.detach(move || drop(guards));
    match (result, hook.raised) {
        (_, Some(e)) => Err(e),
        (Ok(()), None) => Ok(()),
        (Err(e), None) => Err(zmq_error(py, core_errno(e))),
    }
}

fn run_inside(
    guards: &[oxmq::SlotGuard<'_>],
    slots: [Option<usize>; 4],
    options: Options<'_>,
    hook: &mut dyn WaitHook,
) -> oxmq::Result<()> {
    let socket = |i: Option<usize>| i.map(|i| &*guards[i]);
    let (Some(front), Some(back)) = (socket(slots[0]), socket(slots[1])) else {
        return Err(oxmq::Error::NotSocket);
    };
    let mut capture = socket(slots[2]).map(|c| match options.prefixes {
        Some((f, b)) => CaptureSocket::prefixed(c, f, b),
        None => CaptureSocket::new(c),
    });
    let mut proxy = Proxy::new(front, back);
    if let Some(c) = capture.as_mut() {
        proxy = proxy.capture(c);
    }
    if let Some(c) = socket(slots[3]) {
        proxy = proxy.control(c);
    }
    if options.swap_router_ids {
        proxy = proxy.swap_router_ids();
    }
    proxy.run_with(hook)
}

/// `zmq_proxy`: forward messages between `frontend` and `backend` (and copy
/// them to `capture`) until the context is terminated.
#[pyfunction]
#[pyo3(signature = (frontend, backend, capture=None))]
pub(crate) fn proxy(
    py: Python<'_>,
    frontend: &Bound<'_, Socket>,
    backend: &Bound<'_, Socket>,
    capture: Option<&Bound<'_, Socket>>,
) -> PyResult<()> {
    let socks = [Some(frontend.get()), Some(backend.get()), capture.map(|c| c.get()), None];
    run(py, socks, Options { prefixes: None, swap_router_ids: false }, None)
}

/// `zmq_proxy_steerable`: `proxy`, steered by PAUSE / RESUME / TERMINATE /
/// STATISTICS on `control`; returns after TERMINATE.
#[pyfunction]
#[pyo3(signature = (frontend, backend, capture=None, control=None))]
pub(crate) fn proxy_steerable(
    py: Python<'_>,
    frontend: &Bound<'_, Socket>,
    backend: &Bound<'_, Socket>,
    capture: Option<&Bound<'_, Socket>>,
    control: Option<&Bound<'_, Socket>>,
) -> PyResult<()> {
    let socks = [Some(frontend.get()), Some(backend.get()), capture.map(|c| c.get()), control.map(|c| c.get())];
    run(py, socks, Options { prefixes: None, swap_router_ids: false }, None)
}

/// pyzmq's `monitored_queue`: forward both ways between `in_socket` and
/// `out_socket`, copying each message to `mon_socket` after a frame naming
/// its side (`in_prefix` / `out_prefix`); between two ROUTERs the first two
/// frames are swapped, so a message names its sender to its addressee.
#[pyfunction]
#[pyo3(signature = (in_socket, out_socket, mon_socket, in_prefix, out_prefix))]
pub(crate) fn monitored_queue(
    py: Python<'_>,
    in_socket: &Bound<'_, Socket>,
    out_socket: &Bound<'_, Socket>,
    mon_socket: &Bound<'_, Socket>,
    in_prefix: &[u8],
    out_prefix: &[u8],
) -> PyResult<()> {
    let socks = [Some(in_socket.get()), Some(out_socket.get()), Some(mon_socket.get()), None];
    run(py, socks, Options { prefixes: Some((in_prefix, out_prefix)), swap_router_ids: true }, None)
}

/// `zmq.green.device`: `proxy` for green sockets, waiting in gevent's
/// `select` (`select`) so that other greenlets run meanwhile.
#[pyfunction]
#[pyo3(signature = (frontend, backend, select))]
pub(crate) fn _green_proxy(
    py: Python<'_>,
    frontend: &Bound<'_, Socket>,
    backend: &Bound<'_, Socket>,
    select: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let socks = [Some(frontend.get()), Some(backend.get()), None, None];
    run(py, socks, Options { prefixes: None, swap_router_ids: false }, Some(select))
}
