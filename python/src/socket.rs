//! The native socket (`oxmq.Socket` subclasses it): send, receive, options,
//! and the GIL-free blocking slow path.

use crate::context::*;
use crate::errors::*;
use crate::frame::*;
use crate::options::*;
use crate::poll::*;
use crate::release::{self, drain_releases};
use crate::shadow::Registry;
use crate::wait::{GilWait, GreenWait};
use crate::{ZResult, COPY_THRESHOLD, COPY_THRESHOLD_SET};
use oxmq::{errno, opt, Msg};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The native socket. `oxmq.Socket` subclasses it.
///
/// The core socket sits in the core's [`oxmq::SocketSlot`], as Ruby's does:
/// each call enters it (one atomic), a `close` from any thread (or the
/// garbage collector) only makes later calls fail with ENOTSOCK and wakes a
/// blocked one, and the socket is freed once, by whoever leaves it last.
#[pyclass(frozen, subclass, module = "oxmq._oxmq", name = "Socket")]
pub(crate) struct Socket {
    shared: Arc<SocketShared>,
}

/// What shadows of one socket share (`Socket.shadow`).
pub(crate) struct SocketShared {
    /// Declared first: dropped (closing the socket) before the context.
    pub(crate) slot: oxmq::SocketSlot,
    pub(crate) ctx: oxmq::Context,
    pub(crate) fd: i32,
    pub(crate) kind: i32,
    pub(crate) copy_threshold: AtomicUsize,
    /// [`lend_min`] for this socket's threshold and policy.
    pub(crate) lend_min: AtomicUsize,
    /// `oxmq::Socket::direct_send_sizes`: copy sends of these sizes try
    /// the core's direct write (with the GIL released).
    pub(crate) direct_sizes: std::ops::Range<usize>,
    /// `oxmq::Socket::lends_direct`: lent frames may be written directly.
    pub(crate) lends_direct: bool,
}

static SOCKETS: Registry<SocketShared> = Registry::new();

impl Drop for SocketShared {
    fn drop(&mut self) {
        SOCKETS.remove(self as *const SocketShared as usize);
    }
}

impl std::ops::Deref for Socket {
    type Target = SocketShared;

    #[inline]
    fn deref(&self) -> &SocketShared {
        &self.shared
    }
}

/// `zmq_poll` reaches each socket through its slot, one check at a time.
impl oxmq::SocketAccess for SocketShared {
    #[inline]
    fn enter<R>(&self, f: impl FnOnce(&oxmq::Socket) -> oxmq::Result<R>) -> oxmq::Result<R> {
        let guard = self.slot.enter()?;
        f(&guard)
    }
}

impl SocketShared {
    /// Whether the socket was closed (by any of its shadows, or a proxy's ETERM).
    pub(crate) fn is_closed(&self) -> bool {
        self.slot.is_closed()
    }
}

impl Socket {
    /// Run `f` on the open core socket; ENOTSOCK once closed.
    #[inline]
    pub(crate) fn with<R>(&self, f: impl FnOnce(&oxmq::Socket) -> ZResult<R>) -> ZResult<R> {
        let guard = self.slot.enter().map_err(core_errno)?;
        f(&guard)
    }

    #[inline]
    pub(crate) fn call<R>(&self, py: Python<'_>, f: impl FnOnce(&oxmq::Socket) -> ZResult<R>) -> PyResult<R> {
        self.with(f).map_err(|e| zmq_error(py, e))
    }

    /// `ZMQ_FD`: none (EINVAL) on thread-safe draft types, as in libzmq.
    fn public_fd(&self) -> ZResult<i32> {
        match oxmq::SocketType::from_raw(self.kind) {
            Some(k) if k.is_thread_safe() => Err(errno::EINVAL),
            _ => Ok(self.fd),
        }
    }

    /// Connection properties of the peer that sent the last frame received.
    pub(crate) fn peer_props(&self) -> Option<Arc<oxmq::PeerProperties>> {
        self.with(|s| Ok(s.peer_properties())).ok().flatten()
    }

    /// Blocking slow path: `op` (a non-blocking attempt) failed with EAGAIN.
    /// The core retries it until it succeeds, fails otherwise, or the
    /// timeout option passes (EAGAIN), with the GIL released meanwhile.
    pub(crate) fn block_on<T>(
        &self,
        py: Python<'_>,
        timeout_opt: i32,
        op: impl FnMut(&oxmq::Socket) -> oxmq::Result<T>,
    ) -> PyResult<T> {
        let timeout_ms = self.call(py, |s| s.get_option_int(timeout_opt).map_err(core_errno))?;
        // The guard stays for the whole call (the socket cannot be freed under
        // it); a close from another thread wakes it through the slot.
        let guard = self.slot.enter().map_err(|e| zmq_error(py, core_errno(e)))?;
        let mut hook = GilWait::new(py);
        // A receive may read its connection itself while it waits (REQ/REP).
        let block = if timeout_opt == opt::RCVTIMEO { oxmq::block_recv_with } else { oxmq::block_with };
        block(&guard, timeout_ms, &mut hook, op).map_err(|e| hook.error(e))
    }

    /// A large buffer sent with a copy (bytearray, memoryview, array...):
    /// written to its connection from the buffer itself when the core can
    /// (`oxmq::Socket::try_send_direct`), with the GIL released as for a
    /// large copy. `false`: not sent, nor anything else done (an object
    /// that is no buffer is left for `to_msg` to refuse).
    fn send_direct(&self, py: Python<'_>, data: &Bound<'_, PyAny>, flags: i32) -> PyResult<bool> {
        if data.is_instance_of::<PyBytes>() || data.is_instance_of::<Frame>() {
            return Ok(false);
        }
        let Ok(buf) = pyo3::buffer::PyUntypedBuffer::get(data) else { return Ok(false) };
        let len = buf.len_bytes();
        if !self.direct_sizes.contains(&len) || !buf.is_c_contiguous() {
            buf.release(py);
            return Ok(false);
        }
        // SAFETY: the buffer is contiguous and stays exported (so valid and
        // unresized, even with the GIL released) until `release` below.
        let slice = unsafe { std::slice::from_raw_parts(buf.buf_ptr() as *const u8, len) };
        let sent = py.detach(|| self.with(|s| s.try_send_direct(slice, flags).map_err(core_errno)));
        buf.release(py);
        sent.map_err(|e| zmq_error(py, e))
    }

    /// `bytes` sent with a copy, written to its connection from the object
    /// itself when the core can, as `send_direct`. The caller checked
    /// `direct_sizes`.
    fn send_bytes_direct(&self, py: Python<'_>, b: &Bound<'_, PyBytes>, flags: i32) -> PyResult<bool> {
        // Immutable and referenced by the caller for the whole call: its
        // bytes stay put with the GIL released.
        let slice = b.as_bytes();
        let sent = py.detach(|| self.with(|s| s.try_send_direct(slice, flags).map_err(core_errno)));
        sent.map_err(|e| zmq_error(py, e))
    }

    /// A frame sent without a copy (a `Frame`, or a buffer lent), written
    /// to its connection from its body when the core's policy allows
    /// (`oxmq::Socket::try_send_lent_direct`), with the GIL released as in
    /// `send_bytes_direct`.
    fn send_msg_direct(&self, py: Python<'_>, msg: &Msg, flags: i32) -> PyResult<bool> {
        if flags & (oxmq::DONTWAIT | oxmq::SNDMORE) != 0
            || !self.lends_direct
            || !self.direct_sizes.contains(&msg.len())
        {
            return Ok(false);
        }
        let sent = py.detach(|| self.with(|s| s.try_send_lent_direct(msg, flags).map_err(core_errno)));
        sent.map_err(|e| zmq_error(py, e))
    }

    /// Send one frame: first without blocking (GIL held); then, unless the
    /// caller asked for DONTWAIT, block on the slow path.
    #[inline]
    pub(crate) fn send_msg(&self, py: Python<'_>, msg: Msg, flags: i32) -> PyResult<()> {
        if flags & oxmq::DONTWAIT != 0 {
            return self.call(py, |s| s.send(msg, flags).map_err(core_errno));
        }
        // Each try hands the frame back on failure: no copy for the next one,
        // and no extra reference to a heap body for another thread to race on.
        let mut pending = Some(msg);
        match self.with(|s| s.send_from(&mut pending, flags | oxmq::DONTWAIT).map_err(core_errno)) {
            Ok(()) => Ok(()),
            Err(errno::EAGAIN) => {
                self.block_on(py, opt::SNDTIMEO, move |s| s.send_from(&mut pending, flags | oxmq::DONTWAIT))
            }
            Err(e) => Err(zmq_error(py, e)),
        }
    }

    #[inline]
    pub(crate) fn recv_msg(&self, py: Python<'_>, flags: i32) -> PyResult<Msg> {
        match self.with(|s| s.recv(flags | oxmq::DONTWAIT).map_err(core_errno)) {
            Ok(m) => Ok(m),
            Err(errno::EAGAIN) if flags & oxmq::DONTWAIT == 0 => {
                self.block_on(py, opt::RCVTIMEO, |s| s.recv(oxmq::DONTWAIT))
            }
            Err(e) => Err(zmq_error(py, e)),
        }
    }

    /// Receive the remaining frames of a message whose first frame had MORE.
    pub(crate) fn recv_rest(&self, py: Python<'_>, first: Msg) -> PyResult<Vec<Msg>> {
        let mut more = first.more();
        let mut parts = vec![first];
        while more {
            let m = self.recv_msg(py, 0)?;
            more = m.more();
            parts.push(m);
        }
        Ok(parts)
    }

    /// A received frame as `recv(copy=False, track=...)` returns it: pyzmq
    /// gives a tracked receive the finished tracker.
    fn received_frame(
        &self,
        py: Python<'_>,
        m: Msg,
        props: Option<Arc<oxmq::PeerProperties>>,
        track: bool,
    ) -> PyResult<Frame> {
        let mut f = Frame::with_props(m, props);
        if track {
            f.tracker = Some(finished_tracker(py)?);
        }
        Ok(f)
    }

    /// Turn a Python object into a frame for sending.
    /// Returns the frame and what pyzmq's `send` returns for it: a Frame's
    /// own tracker; for other data sent with `copy=False`, the finished
    /// tracker when it was copied (below the threshold), the live one for a
    /// tracked loan.
    pub(crate) fn to_msg(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        copy: bool,
        track: bool,
    ) -> PyResult<(Msg, Option<Py<PyAny>>)> {
        let threshold = self.copy_threshold.load(Ordering::Relaxed);
        if let Ok(b) = data.cast::<PyBytes>() {
            let lend_min = self.lend_min.load(Ordering::Relaxed);
            if copy {
                return Ok((bytes_to_msg(b, lend_min), None));
            }
            if b.as_bytes().len() < threshold {
                // pyzmq copies a `copy=False` send below the threshold and
                // returns its finished tracker, tracked or not.
                return Ok((bytes_to_msg(b, lend_min), Some(finished_tracker(py)?)));
            }
        } else if let Ok(f) = data.cast::<Frame>() {
            let f = f.get();
            if track && f.tracker.is_none() {
                return Err(PyValueError::new_err("Not a tracked message"));
            }
            // a Frame reports its own tracker, whatever `copy` and `track` say (pyzmq)
            let t = f.tracker.as_ref().map(|t| t.clone_ref(py));
            // Draft RADIO/DISH: a group set on the Frame goes with it.
            return Ok((f.to_send(py)?, t));
        } else if data.is_instance_of::<PyString>() {
            return Err(PyTypeError::new_err("unicode not allowed, use send_string"));
        }
        let (msg, made) = buffer_to_msg(py, data, copy, track, threshold)?;
        let tracker = match made {
            Made::Copied if copy => None,
            Made::Copied => Some(finished_tracker(py)?),
            Made::Lent(t) => t,
        };
        Ok((msg, tracker))
    }
}

#[pymethods]
impl Socket {
    #[new]
    #[pyo3(signature = (context=None, socket_type=0, *_args, shadow=0, **_kwargs))]
    fn new(
        py: Python<'_>,
        context: Option<&Bound<'_, PyAny>>,
        socket_type: i32,
        _args: &Bound<'_, PyTuple>,
        shadow: usize,
        _kwargs: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        if shadow != 0 {
            // pyzmq would dereference any address; here only a live socket's is accepted.
            let shared = SOCKETS.get(shadow).ok_or_else(|| zmq_error(py, errno::ENOTSOCK))?;
            return Ok(Socket { shared });
        }
        let ctx = match context {
            Some(c) => c
                .cast::<Context>()
                .map_err(|_| PyTypeError::new_err("Socket needs an oxmq Context as its first argument"))?
                .get()
                .ctx
                .core()
                .clone(),
            None => return Err(PyTypeError::new_err("Socket needs an oxmq Context as its first argument")),
        };
        // pyzmq: the threshold starts from `zmq.COPY_THRESHOLD` at creation.
        let threshold = COPY_THRESHOLD.load(Ordering::Relaxed);
        let pyzmq_policy = COPY_THRESHOLD_SET.load(Ordering::Relaxed);
        let kind = oxmq::SocketType::from_raw(socket_type).ok_or_else(|| zmq_error(py, errno::EINVAL))?;
        let sock = ctx.socket(kind).map_err(|e| zmq_error(py, core_errno(e)))?;
        // Thread-safe (draft) types hand out no FD, but blocking calls here still wait on it.
        let fd = sock.readiness_fd().map_err(|e| zmq_error(py, core_errno(e)))?;
        let direct_sizes = sock.direct_send_sizes().map_err(|e| zmq_error(py, core_errno(e)))?;
        let lends_direct = sock.lends_direct();
        let shared = Arc::new(SocketShared {
            slot: oxmq::SocketSlot::new(sock).map_err(|e| zmq_error(py, core_errno(e)))?,
            ctx,
            fd,
            kind: socket_type,
            copy_threshold: AtomicUsize::new(threshold),
            lend_min: AtomicUsize::new(lend_min(threshold, pyzmq_policy)),
            direct_sizes,
            lends_direct,
        });
        SOCKETS.add(&shared);
        Ok(Socket { shared })
    }

    /// The address of the shared native socket: `Socket.shadow(address)`
    /// makes another Python object over the same socket.
    #[getter]
    fn underlying(&self) -> usize {
        Arc::as_ptr(&self.shared) as usize
    }

    /// Whether the socket is closed.
    #[getter]
    fn closed(&self) -> bool {
        self.is_closed()
    }

    /// Messages smaller than this are copied even when sent with `copy=False`.
    #[getter]
    fn get_copy_threshold(&self) -> usize {
        self.copy_threshold.load(Ordering::Relaxed)
    }

    /// Setting it (to any value) also switches this socket to pyzmq's copy
    /// policy (see [`lend_min`]); `None` is 0, never copy, as in pyzmq.
    #[setter]
    fn set_copy_threshold(&self, value: Option<usize>) {
        let value = value.unwrap_or(0);
        self.copy_threshold.store(value, Ordering::Relaxed);
        self.lend_min.store(lend_min(value, true), Ordering::Relaxed);
    }

    /// The socket type number (`zmq.PUSH`, ...).
    #[getter]
    fn _type(&self) -> i32 {
        self.kind
    }

    /// Close the socket. `linger` (ms) overrides LINGER for queued messages.
    #[pyo3(signature = (linger=None))]
    fn close(&self, py: Python<'_>, linger: Option<i64>) {
        if let (Some(l), Ok(s)) = (linger, self.slot.enter()) {
            let _ = s.set_option_int(opt::LINGER, l);
        }
        self.slot.close();
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
    /// `None` stops monitoring (libzmq `zmq_socket_monitor`). oxmq only:
    /// `event_version=2` is libzmq's draft `zmq_socket_monitor_versioned`
    /// (decode with `oxmq.utils.monitor.parse_monitor_message_v2`), and
    /// `sink_type` the monitor's socket type (PAIR, PUB or PUSH).
    #[pyo3(signature = (addr, events = 0xFFFF, event_version = 1, sink_type = 0))]
    fn monitor(
        &self,
        py: Python<'_>,
        addr: Option<&str>,
        events: i64,
        event_version: i32,
        sink_type: i32,
    ) -> PyResult<()> {
        if event_version == 1 && sink_type == 0 {
            let events = u32::try_from(events).map_err(|_| zmq_error(py, oxmq::errno::EINVAL))?;
            return self.call(py, |s| s.monitor(addr, events).map_err(core_errno));
        }
        let events = u64::try_from(events).map_err(|_| zmq_error(py, oxmq::errno::EINVAL))?;
        let sink = oxmq::SocketType::from_raw(sink_type).ok_or_else(|| zmq_error(py, oxmq::errno::EINVAL))?;
        self.call(py, |s| s.monitor_versioned(addr, events, event_version, sink).map_err(core_errno))
    }

    /// oxmq-only (not in pyzmq): the socket's counters as a dict, with
    /// `peers`, a list of one dict per connection (see `oxmq::SocketStats`).
    fn stats(&self, py: Python<'_>) -> PyResult<Py<PyDict>> {
        let stats = self.call(py, |s| s.stats().map_err(core_errno))?;
        let out = PyDict::new(py);
        for (name, value) in stats.counters() {
            out.set_item(name, value)?;
        }
        let peers = PyList::empty(py);
        for p in &stats.peers {
            let d = PyDict::new(py);
            d.set_item("routing_id", p.routing_id.as_deref().map(|r| PyBytes::new(py, r)))?;
            d.set_item("endpoint", &p.endpoint)?;
            d.set_item("remote_address", p.remote_address.as_deref())?;
            for (name, value) in p.counters() {
                d.set_item(name, value)?;
            }
            peers.append(d)?;
        }
        out.set_item("peers", peers)?;
        Ok(out.unbind())
    }

    /// Stop listening on `addr`.
    fn unbind(&self, py: Python<'_>, addr: &str) -> PyResult<()> {
        self.call(py, |s| s.unbind(addr).map_err(core_errno))
    }

    /// Draft API (`zmq_connect_peer`; not in pyzmq): connect a PEER and
    /// return the routing id that addresses the new connection.
    fn connect_peer(&self, py: Python<'_>, addr: &str) -> PyResult<u32> {
        self.call(py, |s| s.connect_peer(addr).map_err(core_errno))
    }

    /// Disconnect from `addr`.
    fn disconnect(&self, py: Python<'_>, addr: &str) -> PyResult<()> {
        self.call(py, |s| s.disconnect(addr).map_err(core_errno))
    }

    /// The readiness file descriptor (edge-like; see `zmq.FD`).
    fn fileno(&self, py: Python<'_>) -> PyResult<i32> {
        self.call(py, |_| self.public_fd())
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
            opt::FD => {
                return self.call(py, |_| self.public_fd()).map(|v| v.into_pyobject(py).unwrap().into_any().unbind())
            }
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
            // pyzmq reads CURVE keys back as their 40 Z85 characters
            oxmq::OptionValue::Bytes(b) if is_curve_key_option(option) && b.len() == 32 => {
                let text = oxmq::security::z85_encode(&b).ok_or_else(|| zmq_error(py, errno::EFAULT))?;
                PyBytes::new(py, text.as_bytes()).into_any().unbind()
            }
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
        // Draft RADIO/DISH: `group=` sets the message's group.
        let group = group.map(group_arg).transpose()?;
        // Draft API: the SERVER/PEER connection to send to (0 is EINVAL, as zmq_msg_set_routing_id).
        let routing_id = match routing_id {
            Some(r) => match r.extract::<u32>()? {
                0 => return Err(zmq_error(py, errno::EINVAL)),
                rid => Some(rid),
            },
            None => None,
        };
        // Fast path: bytes, copied.
        if copy && routing_id.is_none() {
            if let Ok(b) = data.cast::<PyBytes>() {
                if group.is_none()
                    && self.direct_sizes.contains(&b.as_bytes().len())
                    && self.send_bytes_direct(py, b, flags)?
                {
                    return Ok(None);
                }
                let lend_min = self.lend_min.load(Ordering::Relaxed);
                let msg = msg_with_group(py, bytes_to_msg(b, lend_min), group.as_deref())?;
                self.send_msg(py, msg, flags)?;
                return Ok(None);
            }
        }
        if copy && routing_id.is_none() && group.is_none() && self.send_direct(py, data, flags)? {
            return Ok(None);
        }
        let (mut msg, tracker) = self.to_msg(py, data, copy, track)?;
        if let Some(rid) = routing_id {
            msg.set_routing_id(rid);
        }
        let msg = msg_with_group(py, msg, group.as_deref())?;
        if routing_id.is_none() && group.is_none() && self.send_msg_direct(py, &msg, flags)? {
            return Ok(tracker);
        }
        self.send_msg(py, msg, flags)?;
        Ok(tracker)
    }

    /// Draft DISH: join a group (str or bytes), as pyzmq's `Socket.join`.
    fn join(&self, py: Python<'_>, group: &Bound<'_, PyAny>) -> PyResult<()> {
        let g = group_arg(group)?;
        self.call(py, |s| s.join(&g).map_err(core_errno))
    }

    /// Draft DISH: leave a group, as pyzmq's `Socket.leave`.
    fn leave(&self, py: Python<'_>, group: &Bound<'_, PyAny>) -> PyResult<()> {
        let g = group_arg(group)?;
        self.call(py, |s| s.leave(&g).map_err(core_errno))
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
        release::maybe_drain(py);
        let m = self.recv_msg(py, flags)?;
        if copy {
            msg_to_bytes(py, &m, self.lend_min.load(Ordering::Relaxed))
        } else {
            Ok(Py::new(py, self.received_frame(py, m, self.peer_props(), track)?)?.into_any())
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
        // pyzmq returns what the last part's send returned
        let mut last: Option<Py<PyAny>> = None;
        let mut add = |i: usize, item: &Bound<'_, PyAny>| -> PyResult<()> {
            if copy {
                if let Ok(b) = item.cast::<PyBytes>() {
                    msgs.push(bytes_to_msg(b, self.lend_min.load(Ordering::Relaxed)));
                    last = None;
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
            if let Some(t) = &t {
                trackers.push(t.clone_ref(py));
            }
            last = t;
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
            return Ok(last);
        }
        // tracked zero-copy parts: done once every part is (pyzmq: the last only)
        let cls = py.import("oxmq.sugar.tracker")?.getattr("MessageTracker")?;
        Ok(Some(cls.call1(PyTuple::new(py, trackers)?)?.unbind()))
    }

    /// Receive all frames of one message as a list (one native call).
    #[pyo3(signature = (flags=0, copy=true, track=false))]
    fn recv_multipart(&self, py: Python<'_>, flags: i32, copy: bool, track: bool) -> PyResult<Py<PyList>> {
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
        let props = if copy { None } else { self.peer_props() };
        let list = PyList::empty(py);
        for m in parts {
            if copy {
                list.append(msg_to_bytes(py, &m, self.lend_min.load(Ordering::Relaxed))?)?;
            } else {
                list.append(Py::new(py, self.received_frame(py, m, props.clone(), track)?)?)?;
            }
        }
        Ok(list.unbind())
    }

    /// `zmq.green`'s blocking slow path: `op()` (one non-blocking attempt,
    /// raising `Again` when it would block) failed; the core retries it until
    /// it succeeds, raises anything else, or the `timeout_opt` option's time
    /// passes (`Again`), waiting in gevent's `select` (`select`) meanwhile.
    fn _green_block(
        &self,
        py: Python<'_>,
        op: &Bound<'_, PyAny>,
        timeout_opt: i32,
        select: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let timeout_ms = self.call(py, |s| s.get_option_int(timeout_opt).map_err(core_errno))?;
        let guard = self.slot.enter().map_err(|e| zmq_error(py, core_errno(e)))?;
        let again = py.import("oxmq.error")?.getattr("Again")?;
        let mut raised = None;
        let mut hook = GreenWait::new(select.clone());
        let r = oxmq::block_with(&guard, timeout_ms, &mut hook, |_| match op.call0() {
            Ok(v) => Ok(v.unbind()),
            Err(e) if e.is_instance(py, &again) => Err(oxmq::Error::Again),
            Err(e) => {
                raised = Some(e);
                Err(oxmq::Error::Interrupted)
            }
        });
        r.map_err(|e| raised.take().unwrap_or_else(|| hook.error(e)))
    }

    /// Poll this socket: returns the events ready (0 on timeout). `timeout` in ms, None = forever.
    #[pyo3(signature = (timeout=None, flags=oxmq::POLLIN as i32))]
    fn poll(slf: &Bound<'_, Self>, py: Python<'_>, timeout: Option<f64>, flags: i32) -> PyResult<i32> {
        if slf.get().is_closed() {
            return Err(zmq_error(py, errno::ENOTSOCK));
        }
        let items = vec![PollTarget::Sock(slf.clone().unbind(), flags as i16)];
        let ms = timeout.map_or(-1, |t| if t < 0.0 { -1 } else { t.ceil() as i64 });
        let rev = poll_targets(py, &items, ms)?;
        Ok(rev[0] as i32)
    }
}
