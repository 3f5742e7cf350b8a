//! `oxmq._oxmq`: the native half of the `oxmq` Python package.
//!
//! The Python layer (`python/oxmq`) subclasses [`Context`] and [`Socket`] to
//! add pyzmq's sugar; everything on a message's path lives here:
//!
//! * **Hot path.** A send or receive that can complete at once runs with the
//!   GIL held: one uncontended mutex, the core's non-blocking operation, and
//!   (for `recv`) one `bytes` allocation. No GIL release, no intermediate
//!   Python object for the payload.
//! * **Blocking.** Only when the non-blocking attempt fails with EAGAIN do we
//!   release the GIL and wait on the socket's readiness descriptor, in slices
//!   of at most [`SLICE`], retrying the operation whenever the descriptor
//!   fires (the edge-like contract of `oxmq::Socket::fd`). Between slices we
//!   re-take the GIL to run signal handlers, so Ctrl-C raises
//!   `KeyboardInterrupt` promptly. No socket lock is held while waiting.
//! * **Zero-copy sends** wrap a Python buffer in `oxmq::Msg::from_owner`. The
//!   core may drop it on its I/O thread, without the GIL: the owner's `Drop`
//!   only pushes the buffer onto a release queue ([`release`]) and sets the
//!   tracker flag; Python-side calls drain the queue with the GIL held.

#![deny(unsafe_op_in_unsafe_fn)]

mod release;

use oxmq::{errno, opt, Msg};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple, PyType};
use release::{drain_releases, Owner, Tracker};
use std::os::raw::c_int;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Longest time a blocking call waits without re-taking the GIL to check signals.
const SLICE: Duration = Duration::from_millis(100);

/// pyzmq's default zero-copy threshold: smaller `copy=False` sends are copied.
const DEFAULT_COPY_THRESHOLD: usize = 65536;

type ZResult<T> = Result<T, i32>;

// ---------------------------------------------------------------------------
// Errors

static ZMQ_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static AGAIN: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static CONTEXT_TERMINATED: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static INTERRUPTED: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// The `oxmq.error` exception for a libzmq errno value.
fn zmq_error(py: Python<'_>, errnum: i32) -> PyErr {
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

fn core_errno(e: oxmq::Error) -> i32 {
    e.errno()
}

/// libzmq's message for an errno value (`zmq_strerror`).
#[pyfunction]
fn strerror(errnum: i32) -> String {
    oxmq::Error::strerror(errnum)
}

// ---------------------------------------------------------------------------
// Context

/// The native context. `oxmq.Context` subclasses it.
#[pyclass(frozen, subclass, module = "oxmq._oxmq", name = "Context")]
struct Context {
    ctx: oxmq::Context,
}

#[pymethods]
impl Context {
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(_args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyAny>>) -> Self {
        Context { ctx: oxmq::Context::new() }
    }

    /// Terminate the context (`zmq_ctx_term`): blocking calls fail with
    /// ETERM; waits (without the GIL) until every socket is closed.
    fn _term(&self, py: Python<'_>) {
        drain_releases(py);
        let ctx = self.ctx.clone();
        py.detach(move || ctx.term());
        drain_releases(py);
    }

    /// `zmq_ctx_shutdown`: blocking calls fail with ETERM; does not wait.
    fn _shutdown(&self) {
        self.ctx.shutdown();
    }

    /// Whether `term()` or `shutdown()` was called.
    #[getter]
    fn _terminated(&self) -> bool {
        self.ctx.is_terminated()
    }

    /// `zmq_ctx_set`.
    fn _ctx_set(&self, py: Python<'_>, option: i32, value: i32) -> PyResult<()> {
        self.ctx.set(option, value).map_err(|e| zmq_error(py, core_errno(e)))
    }

    /// `zmq_ctx_get`.
    fn _ctx_get(&self, py: Python<'_>, option: i32) -> PyResult<i32> {
        self.ctx.get(option).map_err(|e| zmq_error(py, core_errno(e)))
    }
}

// ---------------------------------------------------------------------------
// Socket

/// Options whose value is a byte string (everything else is an integer).
fn is_bytes_option(o: i32) -> bool {
    matches!(
        o,
        opt::ROUTING_ID
            | opt::SUBSCRIBE
            | opt::UNSUBSCRIBE
            | opt::LAST_ENDPOINT
            | 38 // TCP_ACCEPT_FILTER
            | opt::PLAIN_USERNAME
            | opt::PLAIN_PASSWORD
            | opt::CURVE_PUBLICKEY
            | opt::CURVE_SECRETKEY
            | opt::CURVE_SERVERKEY
            | opt::ZAP_DOMAIN
            | opt::CONNECT_ROUTING_ID
            | 63 // GSSAPI_PRINCIPAL
            | 64 // GSSAPI_SERVICE_PRINCIPAL
            | opt::SOCKS_PROXY
            | opt::XPUB_WELCOME_MSG
            | opt::BINDTODEVICE
            | 95 // METADATA
            | 99 // SOCKS_USERNAME
            | 100 // SOCKS_PASSWORD
            | 103
            ..=106 // WSS_*
            | 110 // HELLO_MSG
            | 111 // DISCONNECT_MSG
            | 114 // HICCUP_MSG
    )
}

/// The native socket. `oxmq.Socket` subclasses it.
///
/// The core socket is used by one thread at a time; a mutex (uncontended in
/// correct programs) makes that hold even when Python threads share it. The
/// lock is never held while waiting or while running Python code.
#[pyclass(frozen, subclass, module = "oxmq._oxmq", name = "Socket")]
struct Socket {
    inner: Mutex<Option<oxmq::Socket>>,
    ctx: oxmq::Context,
    fd: i32,
    kind: i32,
    copy_threshold: AtomicUsize,
}

enum Waited<T> {
    Done(T),
    Failed(i32),
    CheckSignals,
}

/// Wait until `fd` is readable or `until`; `false` when interrupted by a signal.
fn wait_fd(fd: i32, until: Instant) -> bool {
    let left = until.saturating_duration_since(Instant::now());
    let ms = left.as_millis().min(i32::MAX as u128) as c_int + (left.subsec_nanos() % 1_000_000 != 0) as c_int;
    let mut pfd = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
    // SAFETY: one valid pollfd, alive across the call.
    let rc = unsafe { libc::poll(&mut pfd, 1, ms) };
    !(rc < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted)
}

impl Socket {
    #[inline]
    fn lock(&self) -> MutexGuard<'_, Option<oxmq::Socket>> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Run `f` on the open core socket; ENOTSOCK once closed.
    #[inline]
    fn with<R>(&self, f: impl FnOnce(&oxmq::Socket) -> ZResult<R>) -> ZResult<R> {
        match &*self.lock() {
            Some(s) => f(s),
            None => Err(errno::ENOTSOCK),
        }
    }

    #[inline]
    fn call<R>(&self, py: Python<'_>, f: impl FnOnce(&oxmq::Socket) -> ZResult<R>) -> PyResult<R> {
        self.with(f).map_err(|e| zmq_error(py, e))
    }

    /// Blocking slow path: `op` (a non-blocking attempt) failed with EAGAIN.
    /// Wait on the readiness fd without the GIL, retrying `op` each time it
    /// fires, until it succeeds, fails otherwise, or `timeout_ms` passes
    /// (EAGAIN). Signal handlers run at least every [`SLICE`].
    fn block_on<T: Send>(
        &self,
        py: Python<'_>,
        timeout_opt: i32,
        mut op: impl FnMut(&oxmq::Socket) -> ZResult<T> + Send,
    ) -> PyResult<T> {
        let timeout_ms = self.call(py, |s| s.get_option_int(timeout_opt).map_err(core_errno))?;
        let deadline = (timeout_ms >= 0).then(|| Instant::now() + Duration::from_millis(timeout_ms as u64));
        if timeout_ms == 0 {
            return Err(zmq_error(py, errno::EAGAIN));
        }
        let fd = self.fd;
        loop {
            let op = &mut op;
            let out = py.detach(|| {
                let slice_end = Instant::now() + SLICE;
                loop {
                    let until = deadline.map_or(slice_end, |d| d.min(slice_end));
                    if !wait_fd(fd, until) {
                        return Waited::CheckSignals;
                    }
                    match self.with(&mut *op) {
                        Ok(v) => return Waited::Done(v),
                        Err(errno::EAGAIN) => {}
                        Err(e) => return Waited::Failed(e),
                    }
                    let now = Instant::now();
                    if deadline.is_some_and(|d| now >= d) {
                        return Waited::Failed(errno::EAGAIN);
                    }
                    if now >= slice_end {
                        return Waited::CheckSignals;
                    }
                }
            });
            match out {
                Waited::Done(v) => return Ok(v),
                Waited::Failed(e) => return Err(zmq_error(py, e)),
                Waited::CheckSignals => py.check_signals()?,
            }
        }
    }

    /// Send one frame: first without blocking (GIL held); then, unless the
    /// caller asked for DONTWAIT, block on the slow path.
    #[inline]
    fn send_msg(&self, py: Python<'_>, msg: Msg, flags: i32) -> PyResult<()> {
        if flags & oxmq::DONTWAIT != 0 {
            return self.call(py, |s| s.send(msg, flags).map_err(core_errno));
        }
        match self.with(|s| s.send(msg.clone(), flags | oxmq::DONTWAIT).map_err(core_errno)) {
            Ok(()) => Ok(()),
            Err(errno::EAGAIN) => self
                .block_on(py, opt::SNDTIMEO, move |s| s.send(msg.clone(), flags | oxmq::DONTWAIT).map_err(core_errno)),
            Err(e) => Err(zmq_error(py, e)),
        }
    }

    #[inline]
    fn recv_msg(&self, py: Python<'_>, flags: i32) -> PyResult<Msg> {
        match self.with(|s| s.recv(flags | oxmq::DONTWAIT).map_err(core_errno)) {
            Ok(m) => Ok(m),
            Err(errno::EAGAIN) if flags & oxmq::DONTWAIT == 0 => {
                self.block_on(py, opt::RCVTIMEO, |s| s.recv(oxmq::DONTWAIT).map_err(core_errno))
            }
            Err(e) => Err(zmq_error(py, e)),
        }
    }

    /// Receive the remaining frames of a message whose first frame had MORE.
    fn recv_rest(&self, py: Python<'_>, first: Msg) -> PyResult<Vec<Msg>> {
        let mut more = first.more();
        let mut parts = vec![first];
        while more {
            let m = self.recv_msg(py, 0)?;
            more = m.more();
            parts.push(m);
        }
        Ok(parts)
    }

    /// Turn a Python object into a frame for sending.
    /// Returns the frame and, for tracked zero-copy sends, its tracker.
    fn to_msg(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        copy: bool,
        track: bool,
    ) -> PyResult<(Msg, Option<Py<PyAny>>)> {
        if let Ok(b) = data.cast::<PyBytes>() {
            let bytes = b.as_bytes();
            if copy || bytes.len() < self.copy_threshold.load(Ordering::Relaxed) {
                let t = if track && !copy { Some(finished_tracker(py)?) } else { None };
                return Ok((Msg::from_slice(bytes), t));
            }
        } else if let Ok(f) = data.cast::<Frame>() {
            let f = f.get();
            let t = if track { f.tracker.as_ref().map(|t| t.clone_ref(py)) } else { None };
            return Ok((f.msg.clone(), t));
        } else if data.is_instance_of::<PyString>() {
            return Err(PyTypeError::new_err("unicode not allowed, use send_string"));
        }
        buffer_to_msg(py, data, copy, track, self.copy_threshold.load(Ordering::Relaxed))
    }
}

/// `zmq._FINISHED_TRACKER`.
static FINISHED_TRACKER: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

fn finished_tracker(py: Python<'_>) -> PyResult<Py<PyAny>> {
    FINISHED_TRACKER
        .get_or_try_init(py, || py.import("oxmq.sugar.tracker")?.getattr("_FINISHED_TRACKER").map(Bound::unbind))
        .map(|t| t.clone_ref(py))
}

fn make_tracker(py: Python<'_>, t: Arc<Tracker>) -> PyResult<Py<PyAny>> {
    let native = Py::new(py, NativeTracker { t })?;
    let cls = py.import("oxmq.sugar.tracker")?.getattr("MessageTracker")?;
    Ok(cls.call1((native,))?.unbind())
}

/// A frame from any buffer-protocol object: copied when `copy` or when
/// smaller than `threshold`, otherwise wrapped without copying.
fn buffer_to_msg(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    copy: bool,
    track: bool,
    threshold: usize,
) -> PyResult<(Msg, Option<Py<PyAny>>)> {
    let buf = pyo3::buffer::PyUntypedBuffer::get(data).map_err(|_| {
        PyTypeError::new_err(format!(
            "expected bytes or an object supporting the buffer protocol, got {}",
            data.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into())
        ))
    })?;
    if !buf.is_c_contiguous() {
        return Err(PyValueError::new_err("buffer must be C-contiguous"));
    }
    let len = buf.len_bytes();
    if copy || len < threshold {
        // SAFETY: the buffer is contiguous and exported for the duration of this borrow.
        let slice = unsafe { std::slice::from_raw_parts(buf.buf_ptr() as *const u8, len) };
        let msg = Msg::from_slice(slice);
        buf.release(py);
        let t = if track && !copy { Some(finished_tracker(py)?) } else { None };
        return Ok((msg, t));
    }
    let tracker = track.then(|| Arc::new(Tracker::default()));
    let py_tracker = match &tracker {
        Some(t) => Some(make_tracker(py, t.clone())?),
        None => None,
    };
    Ok((Msg::from_owner(Owner::new(buf, tracker)), py_tracker))
}

#[pymethods]
impl Socket {
    #[new]
    #[pyo3(signature = (context=None, socket_type=0, *_args, **_kwargs))]
    fn new(
        py: Python<'_>,
        context: Option<&Bound<'_, PyAny>>,
        socket_type: i32,
        _args: &Bound<'_, PyTuple>,
        _kwargs: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let ctx = match context {
            Some(c) => c
                .cast::<Context>()
                .map_err(|_| PyTypeError::new_err("Socket needs an oxmq Context as its first argument"))?
                .get()
                .ctx
                .clone(),
            None => return Err(PyTypeError::new_err("Socket needs an oxmq Context as its first argument")),
        };
        let kind = oxmq::SocketType::from_raw(socket_type).ok_or_else(|| zmq_error(py, errno::EINVAL))?;
        let sock = ctx.socket(kind).map_err(|e| zmq_error(py, core_errno(e)))?;
        let fd = sock.fd().map_err(|e| zmq_error(py, core_errno(e)))?;
        Ok(Socket {
            inner: Mutex::new(Some(sock)),
            ctx,
            fd,
            kind: socket_type,
            copy_threshold: AtomicUsize::new(DEFAULT_COPY_THRESHOLD),
        })
    }

    /// Whether the socket is closed.
    #[getter]
    fn closed(&self) -> bool {
        self.lock().is_none()
    }

    /// Messages smaller than this are copied even when sent with `copy=False`.
    #[getter]
    fn get_copy_threshold(&self) -> usize {
        self.copy_threshold.load(Ordering::Relaxed)
    }

    #[setter]
    fn set_copy_threshold(&self, value: usize) {
        self.copy_threshold.store(value, Ordering::Relaxed)
    }

    /// The socket type number (`zmq.PUSH`, ...).
    #[getter]
    fn _type(&self) -> i32 {
        self.kind
    }

    /// Close the socket. `linger` (ms) overrides LINGER for queued messages.
    #[pyo3(signature = (linger=None))]
    fn close(&self, py: Python<'_>, linger: Option<i64>) {
        let sock = self.lock().take();
        if let Some(s) = sock {
            if let Some(l) = linger {
                let _ = s.set_option_int(opt::LINGER, l);
            }
            drop(s);
        }
        drain_releases(py);
    }

    /// Accept connections on `addr`.
    fn _bind(&self, py: Python<'_>, addr: &str) -> PyResult<()> {
        self.call(py, |s| s.bind(addr).map_err(core_errno))
    }

    /// Connect to `addr`.
    fn _connect(&self, py: Python<'_>, addr: &str) -> PyResult<()> {
        self.call(py, |s| s.connect(addr).map_err(core_errno))
    }

    /// Publish this socket's events on a PAIR bound at `addr` (inproc);
    /// `None` stops monitoring (libzmq `zmq_socket_monitor`).
    #[pyo3(signature = (addr, events = 0xFFFF))]
    fn monitor(&self, py: Python<'_>, addr: Option<&str>, events: i64) -> PyResult<()> {
        let events = u32::try_from(events).map_err(|_| zmq_error(py, oxmq::errno::EINVAL))?;
        self.call(py, |s| s.monitor(addr, events).map_err(core_errno))
    }

    /// Stop listening on `addr`.
    fn unbind(&self, py: Python<'_>, addr: &str) -> PyResult<()> {
        self.call(py, |s| s.unbind(addr).map_err(core_errno))
    }

    /// Disconnect from `addr`.
    fn disconnect(&self, py: Python<'_>, addr: &str) -> PyResult<()> {
        self.call(py, |s| s.disconnect(addr).map_err(core_errno))
    }

    /// The readiness file descriptor (edge-like; see `zmq.FD`).
    fn fileno(&self, py: Python<'_>) -> PyResult<i32> {
        self.call(py, |_| Ok(self.fd))
    }

    /// Set a socket option: an int for integer options, bytes for the others.
    fn set(&self, py: Python<'_>, option: i32, optval: &Bound<'_, PyAny>) -> PyResult<()> {
        if is_bytes_option(option) {
            if optval.is_instance_of::<PyString>() {
                return Err(PyTypeError::new_err("unicode not allowed, use setsockopt_string"));
            }
            let b = optval.cast::<PyBytes>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "expected bytes, got: {}",
                    optval.repr().map(|r| r.to_string()).unwrap_or_default()
                ))
            })?;
            let v = b.as_bytes();
            self.call(py, |s| s.set_option_bytes(option, v).map_err(core_errno))
        } else {
            if optval.is_instance_of::<PyBytes>() || optval.is_instance_of::<PyString>() {
                return Err(PyTypeError::new_err(format!(
                    "expected int, got: {}",
                    optval.repr().map(|r| r.to_string()).unwrap_or_default()
                )));
            }
            let v: i64 = optval.extract().map_err(|_| {
                PyTypeError::new_err(format!(
                    "expected int, got: {}",
                    optval.repr().map(|r| r.to_string()).unwrap_or_default()
                ))
            })?;
            if option == opt::SNDBUF || option == opt::RCVBUF {
                // accepted as-is
            }
            self.call(py, |s| s.set_option_int(option, v).map_err(core_errno))
        }
    }

    /// Read a socket option: int or bytes.
    fn get(&self, py: Python<'_>, option: i32) -> PyResult<Py<PyAny>> {
        match option {
            opt::FD => return self.call(py, |_| Ok(self.fd)).map(|v| v.into_pyobject(py).unwrap().into_any().unbind()),
            opt::EVENTS => {
                drain_releases(py);
                let ev = self.call(py, |s| {
                    if self.ctx.is_terminated() {
                        return Err(errno::ETERM);
                    }
                    s.events().map_err(core_errno)
                })?;
                return Ok((ev as i64).into_pyobject(py)?.into_any().unbind());
            }
            _ => {}
        }
        let v = self.call(py, |s| s.get_option(option).map_err(core_errno))?;
        Ok(match v {
            oxmq::OptionValue::Int(i) => i.into_pyobject(py)?.into_any().unbind(),
            oxmq::OptionValue::Bytes(b) => PyBytes::new(py, &b).into_any().unbind(),
        })
    }

    /// Send one frame.
    ///
    /// `data` is bytes, a `Frame`, or any buffer-protocol object. With
    /// `copy=False`, buffers at least `copy_threshold` long are sent without
    /// copying and kept alive until the core is done with them; with
    /// `track=True` such a send returns a `MessageTracker`.
    #[pyo3(signature = (data, flags=0, copy=true, track=false, routing_id=None, group=None))]
    #[allow(clippy::too_many_arguments)]
    fn send(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        flags: i32,
        copy: bool,
        track: bool,
        routing_id: Option<&Bound<'_, PyAny>>,
        group: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Option<Py<PyAny>>> {
        release::maybe_drain(py);
        if routing_id.is_some() || group.is_some() {
            return Err(zmq_error(py, errno::ENOTSUP));
        }
        // Fast path: bytes, copied.
        if copy {
            if let Ok(b) = data.cast::<PyBytes>() {
                self.send_msg(py, Msg::from_slice(b.as_bytes()), flags)?;
                return Ok(None);
            }
        }
        let (msg, tracker) = self.to_msg(py, data, copy, track)?;
        self.send_msg(py, msg, flags)?;
        Ok(if copy || !track { None } else { tracker })
    }

    /// Send a str as one frame (utf-8 unless `encoding` says otherwise).
    #[pyo3(signature = (u, flags=0, copy=true, encoding="utf-8", **_kwargs))]
    fn send_string(
        &self,
        py: Python<'_>,
        u: &Bound<'_, PyAny>,
        flags: i32,
        copy: bool,
        encoding: &str,
        _kwargs: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let _ = copy;
        release::maybe_drain(py);
        let s = u.cast::<PyString>().map_err(|_| PyTypeError::new_err("unicode/str objects only"))?;
        if matches!(encoding, "utf-8" | "utf8" | "UTF-8" | "UTF8") {
            let text = s.to_str()?;
            return self.send_msg(py, Msg::from_slice(text.as_bytes()), flags);
        }
        let encoded = s.call_method1("encode", (encoding,))?;
        let b = encoded.cast::<PyBytes>()?;
        self.send_msg(py, Msg::from_slice(b.as_bytes()), flags)
    }

    /// Receive one frame: bytes, or a `Frame` (zero-copy view) if `copy=False`.
    #[pyo3(signature = (flags=0, copy=true, track=false))]
    fn recv(&self, py: Python<'_>, flags: i32, copy: bool, track: bool) -> PyResult<Py<PyAny>> {
        let _ = track;
        release::maybe_drain(py);
        let m = self.recv_msg(py, flags)?;
        if copy {
            Ok(PyBytes::new(py, m.as_slice()).into_any().unbind())
        } else {
            Ok(Py::new(py, Frame::from_msg(m))?.into_any())
        }
    }

    /// Receive one frame and decode it (utf-8 unless `encoding` says otherwise).
    #[pyo3(signature = (flags=0, encoding="utf-8"))]
    fn recv_string(&self, py: Python<'_>, flags: i32, encoding: &str) -> PyResult<Py<PyAny>> {
        release::maybe_drain(py);
        let m = self.recv_msg(py, flags)?;
        let data = m.as_slice();
        if matches!(encoding, "utf-8" | "utf8" | "UTF-8" | "UTF8") {
            // SAFETY: valid pointer/length; "strict" errors; returns a new reference or NULL with an exception set.
            let obj = unsafe {
                ffi::PyUnicode_DecodeUTF8(data.as_ptr() as *const _, data.len() as ffi::Py_ssize_t, c"strict".as_ptr())
            };
            if obj.is_null() {
                return Err(PyErr::fetch(py));
            }
            // SAFETY: obj is a new, non-null reference.
            return Ok(unsafe { Bound::from_owned_ptr(py, obj) }.unbind());
        }
        Ok(PyBytes::new(py, data).call_method1("decode", (encoding,))?.unbind())
    }

    /// Receive one frame into a writable buffer; returns the frame's full size
    /// (larger than the buffer when it was truncated, as `zmq_recv`).
    #[pyo3(signature = (buffer, nbytes=0, flags=0))]
    fn recv_into(&self, py: Python<'_>, buffer: &Bound<'_, PyAny>, nbytes: usize, flags: i32) -> PyResult<usize> {
        release::maybe_drain(py);
        let buf = pyo3::buffer::PyUntypedBuffer::get(buffer)
            .map_err(|_| PyTypeError::new_err("recv_into needs a writable buffer-protocol object"))?;
        if buf.readonly() {
            buf.release(py);
            return Err(PyTypeError::new_err("recv_into needs a writable buffer"));
        }
        if !buf.is_c_contiguous() {
            buf.release(py);
            return Err(PyValueError::new_err("buffer must be C-contiguous"));
        }
        let cap = buf.len_bytes();
        let limit = if nbytes == 0 { cap } else { nbytes.min(cap) };
        let m = match self.recv_msg(py, flags) {
            Ok(m) => m,
            Err(e) => {
                buf.release(py);
                return Err(e);
            }
        };
        let n = m.len().min(limit);
        // SAFETY: the buffer is writable, contiguous, at least `limit` bytes, exported until released below.
        unsafe { std::ptr::copy_nonoverlapping(m.as_slice().as_ptr(), buf.buf_ptr() as *mut u8, n) };
        buf.release(py);
        Ok(m.len())
    }

    /// Send a sequence of frames as one message (one native call).
    #[pyo3(signature = (msg_parts, flags=0, copy=true, track=false, **_kwargs))]
    fn send_multipart(
        &self,
        py: Python<'_>,
        msg_parts: &Bound<'_, PyAny>,
        flags: i32,
        copy: bool,
        track: bool,
        _kwargs: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Option<Py<PyAny>>> {
        release::maybe_drain(py);
        let mut msgs: Vec<Msg> = Vec::new();
        let mut trackers: Vec<Py<PyAny>> = Vec::new();
        let mut add = |i: usize, item: &Bound<'_, PyAny>| -> PyResult<()> {
            if copy {
                if let Ok(b) = item.cast::<PyBytes>() {
                    msgs.push(Msg::from_slice(b.as_bytes()));
                    return Ok(());
                }
            }
            if item.is_instance_of::<PyString>() {
                return Err(PyTypeError::new_err(format!(
                    "Frame {i} ({}) does not support the buffer interface.",
                    item.repr().map(|r| r.to_string()).unwrap_or_default()
                )));
            }
            let (m, t) = self.to_msg(py, item, copy, track).map_err(|e| {
                if e.is_instance_of::<PyTypeError>(py) {
                    PyTypeError::new_err(format!(
                        "Frame {i} ({}) does not support the buffer interface.",
                        item.repr().map(|r| r.to_string()).unwrap_or_default()
                    ))
                } else {
                    e
                }
            })?;
            msgs.push(m);
            if let Some(t) = t {
                trackers.push(t);
            }
            Ok(())
        };
        if let Ok(list) = msg_parts.cast::<PyList>() {
            for (i, item) in list.iter().enumerate() {
                add(i, &item)?;
            }
        } else if let Ok(tup) = msg_parts.cast::<PyTuple>() {
            for (i, item) in tup.iter().enumerate() {
                add(i, &item)?;
            }
        } else {
            for (i, item) in msg_parts.try_iter()?.enumerate() {
                add(i, &item?)?;
            }
        }
        let n = msgs.len();
        if n == 0 {
            return Err(PyValueError::new_err("send_multipart needs at least one frame"));
        }
        let base = flags & oxmq::DONTWAIT;
        let mut iter = msgs.into_iter().enumerate();
        // The first frame may block (HWM); once it is queued the rest follow it.
        for (i, m) in &mut iter {
            let f = base | if i + 1 < n { oxmq::SNDMORE } else { flags & oxmq::SNDMORE };
            self.send_msg(py, m, f)?;
        }
        if copy || !track {
            return Ok(None);
        }
        let cls = py.import("oxmq.sugar.tracker")?.getattr("MessageTracker")?;
        Ok(Some(cls.call1(PyTuple::new(py, trackers)?)?.unbind()))
    }

    /// Receive all frames of one message as a list (one native call).
    #[pyo3(signature = (flags=0, copy=true, track=false))]
    fn recv_multipart(&self, py: Python<'_>, flags: i32, copy: bool, track: bool) -> PyResult<Py<PyList>> {
        let _ = track;
        release::maybe_drain(py);
        let first = self.recv_msg(py, flags)?;
        let parts = if first.more() {
            // The rest of the message arrived with it: take it under one lock.
            match self.with(|s| {
                let mut parts = vec![first.clone()];
                let mut more = true;
                while more {
                    let m = s.recv(oxmq::DONTWAIT).map_err(core_errno)?;
                    more = m.more();
                    parts.push(m);
                }
                Ok(parts)
            }) {
                Ok(p) => p,
                Err(errno::EAGAIN) => self.recv_rest(py, first)?,
                Err(e) => return Err(zmq_error(py, e)),
            }
        } else {
            vec![first]
        };
        let list = PyList::empty(py);
        for m in parts {
            if copy {
                list.append(PyBytes::new(py, m.as_slice()))?;
            } else {
                list.append(Py::new(py, Frame::from_msg(m))?)?;
            }
        }
        Ok(list.unbind())
    }

    /// Poll this socket: returns the events ready (0 on timeout). `timeout` in ms, None = forever.
    #[pyo3(signature = (timeout=None, flags=oxmq::POLLIN as i32))]
    fn poll(slf: &Bound<'_, Self>, py: Python<'_>, timeout: Option<f64>, flags: i32) -> PyResult<i32> {
        if slf.get().lock().is_none() {
            return Err(zmq_error(py, errno::ENOTSOCK));
        }
        let items = vec![PollTarget::Sock(slf.clone().unbind(), flags as i16)];
        let ms = timeout.map_or(-1, |t| if t < 0.0 { -1 } else { t.ceil() as i64 });
        let rev = poll_targets(py, &items, ms)?;
        Ok(rev[0] as i32)
    }
}

// ---------------------------------------------------------------------------
// Frame and tracker

/// One received (or prepared) message frame; supports the buffer protocol.
#[pyclass(frozen, subclass, module = "oxmq._oxmq", name = "Frame")]
pub struct Frame {
    msg: Msg,
    bytes: PyOnceLock<Py<PyBytes>>,
    tracker: Option<Py<PyAny>>,
}

impl Frame {
    fn from_msg(msg: Msg) -> Frame {
        Frame { msg, bytes: PyOnceLock::new(), tracker: None }
    }
}

#[pymethods]
impl Frame {
    #[new]
    #[pyo3(signature = (data=None, track=false, copy=None, copy_threshold=None, **_kwargs))]
    fn new(
        py: Python<'_>,
        data: Option<&Bound<'_, PyAny>>,
        track: bool,
        copy: Option<bool>,
        copy_threshold: Option<usize>,
        _kwargs: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Frame> {
        let Some(data) = data else {
            let tracker = if track { Some(finished_tracker(py)?) } else { None };
            return Ok(Frame { msg: Msg::new(), bytes: PyOnceLock::new(), tracker });
        };
        if data.is_instance_of::<PyString>() {
            return Err(PyTypeError::new_err("Str objects not allowed. Only: bytes, buffer interfaces."));
        }
        if let Ok(f) = data.cast::<Frame>() {
            return Ok(Frame { msg: f.get().msg.clone(), bytes: PyOnceLock::new(), tracker: None });
        }
        // pyzmq: copy=None means "copy small buffers, wrap large ones".
        let threshold = copy_threshold.unwrap_or(DEFAULT_COPY_THRESHOLD);
        let (copy, threshold) = match copy {
            Some(true) => (true, 0),
            Some(false) => (false, 0),
            None => (false, threshold),
        };
        let (msg, tracker) = buffer_to_msg(py, data, copy, track, threshold)?;
        let tracker = match (track, tracker) {
            (true, None) => Some(finished_tracker(py)?),
            (_, t) => t,
        };
        Ok(Frame { msg, bytes: PyOnceLock::new(), tracker })
    }

    /// The frame's bytes (copied once, then cached).
    #[getter]
    fn bytes(&self, py: Python<'_>) -> Py<PyBytes> {
        self.bytes.get_or_init(py, || PyBytes::new(py, self.msg.as_slice()).unbind()).clone_ref(py)
    }

    /// A read-only memoryview of the frame (no copy).
    #[getter]
    fn buffer<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        // SAFETY: slf supports the buffer protocol (below); returns a new reference or NULL.
        let ptr = unsafe { ffi::PyMemoryView_FromObject(slf.as_ptr()) };
        if ptr.is_null() {
            return Err(PyErr::fetch(slf.py()));
        }
        // SAFETY: new, non-null reference.
        Ok(unsafe { Bound::from_owned_ptr(slf.py(), ptr) })
    }

    /// Whether more frames of the message follow.
    #[getter]
    fn more(&self) -> bool {
        self.msg.more()
    }

    /// The tracker for a tracked zero-copy frame (None otherwise).
    #[getter]
    fn tracker(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.tracker.as_ref().map(|t| t.clone_ref(py))
    }

    /// Frame properties: `zmq.MORE` (int); metadata names are not available.
    fn get(&self, py: Python<'_>, option: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        if let Ok(o) = option.extract::<i32>() {
            return match o {
                // MORE
                1 => Ok((self.msg.more() as i32).into_pyobject(py)?.into_any().unbind()),
                // SHARED
                3 => Ok(0i32.into_pyobject(py)?.into_any().unbind()),
                _ => Err(zmq_error(py, errno::EINVAL)),
            };
        }
        Err(zmq_error(py, errno::EINVAL))
    }

    fn __len__(&self) -> usize {
        self.msg.len()
    }

    fn __bytes__(&self, py: Python<'_>) -> Py<PyBytes> {
        self.bytes(py)
    }

    fn __str__(&self) -> String {
        String::from_utf8_lossy(self.msg.as_slice()).into_owned()
    }

    fn __repr__(&self) -> String {
        let body = self.msg.as_slice();
        let shown = &body[..body.len().min(32)];
        format!(
            "<oxmq.Frame({:?}{}{})>",
            String::from_utf8_lossy(shown),
            if body.len() > 32 { "..." } else { "" },
            if self.msg.more() { ", more=True" } else { "" }
        )
    }

    fn __copy__(&self) -> Frame {
        Frame { msg: self.msg.clone(), bytes: PyOnceLock::new(), tracker: None }
    }

    fn fast_copy(&self) -> Frame {
        self.__copy__()
    }

    unsafe fn __getbuffer__(slf: Bound<'_, Self>, view: *mut ffi::Py_buffer, flags: c_int) -> PyResult<()> {
        if flags & ffi::PyBUF_WRITABLE == ffi::PyBUF_WRITABLE {
            return Err(pyo3::exceptions::PyBufferError::new_err("Frame is read-only"));
        }
        let data = slf.get().msg.as_slice();
        // SAFETY: `view` is provided by the caller; the data lives inside the
        // frame object (inline) or its shared buffer, neither of which moves or
        // changes while the view holds a reference to the frame.
        let rc = unsafe {
            ffi::PyBuffer_FillInfo(
                view,
                slf.as_ptr(),
                data.as_ptr() as *mut std::ffi::c_void,
                data.len() as ffi::Py_ssize_t,
                1,
                flags,
            )
        };
        if rc < 0 {
            return Err(PyErr::fetch(slf.py()));
        }
        Ok(())
    }

    unsafe fn __releasebuffer__(&self, _view: *mut ffi::Py_buffer) {}
}

/// Native half of a MessageTracker: set when the core released the buffer.
#[pyclass(frozen, module = "oxmq._oxmq", name = "_Tracker")]
struct NativeTracker {
    t: Arc<Tracker>,
}

#[pymethods]
impl NativeTracker {
    #[getter]
    fn done(&self, py: Python<'_>) -> bool {
        let d = self.t.is_done();
        if d {
            drain_releases(py);
        }
        d
    }

    /// Wait up to `timeout` seconds (negative: forever); returns whether done.
    #[pyo3(signature = (timeout=-1.0))]
    fn wait(&self, py: Python<'_>, timeout: f64) -> PyResult<bool> {
        let deadline = (timeout >= 0.0).then(|| Instant::now() + Duration::from_secs_f64(timeout));
        loop {
            if self.t.is_done() {
                drain_releases(py);
                return Ok(true);
            }
            let until = deadline.map_or(Instant::now() + SLICE, |d| d.min(Instant::now() + SLICE));
            let t = self.t.clone();
            let done = py.detach(move || t.wait_until(until));
            if done {
                drain_releases(py);
                return Ok(true);
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Ok(false);
            }
            py.check_signals()?;
        }
    }
}

// ---------------------------------------------------------------------------
// poll, proxy

enum PollTarget {
    Sock(Py<Socket>, i16),
    Fd(i32, i16),
}

/// Poll sockets and fds; returns revents per target.
fn poll_targets(py: Python<'_>, items: &[PollTarget], timeout_ms: i64) -> PyResult<Vec<i16>> {
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

struct SendPtr(*mut libc::pollfd);
// SAFETY: the pointer is only used by the thread that runs the closure, while the owner waits.
unsafe impl Send for SendPtr {}

/// `zmq_poll`: `sockets` is a list of `(socket_or_fd, events)`; returns the
/// list of `(socket_or_fd, revents)` that are ready. `timeout` in ms (-1 forever).
#[pyfunction]
#[pyo3(signature = (sockets, timeout=-1))]
fn zmq_poll(py: Python<'_>, sockets: &Bound<'_, PyAny>, timeout: i64) -> PyResult<Py<PyList>> {
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

/// `zmq_proxy`: forward messages between `frontend` and `backend` (and copy
/// them to `capture`) until the context is terminated. Runs without the GIL.
#[pyfunction]
#[pyo3(signature = (frontend, backend, capture=None))]
fn proxy(
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
    m.add_function(wrap_pyfunction!(strerror, m)?)?;
    m.add_function(wrap_pyfunction!(zmq_poll, m)?)?;
    m.add_function(wrap_pyfunction!(proxy, m)?)?;
    m.add_function(wrap_pyfunction!(_drain_releases, m)?)?;
    m.add_function(wrap_pyfunction!(zmq_version_info, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
