//! `Frame` and the native half of `MessageTracker`, and turning Python
//! objects into frames (copied or zero-copy).

use crate::errors::*;
use crate::release::{drain_releases, Owner};
use crate::wait::GilWait;
use crate::COPY_THRESHOLD;
use oxmq::Tracker;
use oxmq::{errno, Msg};
use pyo3::exceptions::{PyBufferError, PyTypeError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyByteArray, PyByteArrayMethods, PyBytes, PyString};
use std::os::raw::c_int;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// `zmq._FINISHED_TRACKER`.
pub(crate) static FINISHED_TRACKER: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

pub(crate) fn finished_tracker(py: Python<'_>) -> PyResult<Py<PyAny>> {
    FINISHED_TRACKER
        .get_or_try_init(py, || py.import("oxmq.sugar.tracker")?.getattr("_FINISHED_TRACKER").map(Bound::unbind))
        .map(|t| t.clone_ref(py))
}

pub(crate) fn make_tracker(py: Python<'_>, t: Arc<Tracker>) -> PyResult<Py<PyAny>> {
    let native = Py::new(py, NativeTracker { t })?;
    let cls = py.import("oxmq.sugar.tracker")?.getattr("MessageTracker")?;
    Ok(cls.call1((native,))?.unbind())
}

/// Exact `bytes` from this size up are lent by reference even below the
/// socket's copy threshold. Lending costs the same at every size and beats
/// copying from about 4 KiB (an inproc pair in one Python process: 4 KiB
/// 2.0 M msg/s copied and pooled, 2.5 M lent; 16 KiB 0.49 M and 2.5 M;
/// 1-2 KiB even). The copy threshold still governs every other buffer.
const LEND_BYTES_MIN: usize = 4096;

/// The size from which a socket lends an exact `bytes` on a copying send
/// (and hands an inproc receiver in this process that very object back).
///
/// oxmq's own policy, while the program has set no copy threshold: from
/// `LEND_BYTES_MIN` (or the threshold, if lower), since a `bytes` cannot
/// change and the copy would be invisible. Once the program sets one
/// (`zmq.COPY_THRESHOLD`, `Socket.copy_threshold`, `copy_threshold=`), pyzmq's
/// policy exactly: copying sends and receives always copy.
#[inline]
pub(crate) fn lend_min(threshold: usize, pyzmq_policy: bool) -> usize {
    if pyzmq_policy {
        usize::MAX
    } else {
        threshold.min(LEND_BYTES_MIN)
    }
}

/// A frame holding `b`'s bytes for a copying send: an exact `bytes` of at
/// least `lend_min` bytes is lent by reference instead, smaller or
/// subclassed ones are copied.
#[inline]
pub(crate) fn bytes_to_msg(b: &Bound<'_, PyBytes>, lend_min: usize) -> Msg {
    let data = b.as_bytes();
    if data.len() >= lend_min && b.is_exact_instance_of::<PyBytes>() {
        if let Some(owner) = Owner::lend_bytes(b) {
            return Msg::from_owner(owner);
        }
    }
    // `b` is held for the whole call and a `bytes` never changes.
    copy_to_msg(b.py(), data)
}

/// Copies of at least this many bytes run with the GIL released, so that
/// the program's other threads (an inproc peer above all) run meanwhile:
/// two threads of one process copying a message each no longer take turns.
/// pyzmq copies a send's body without the GIL at every size (its receive
/// copies with it); below this the release costs more than the copy.
pub(crate) const NOGIL_COPY_MIN: usize = 64 * 1024;

/// A frame holding a copy of `data`, made with the GIL released when large.
/// `data` must stay valid and unresized with the GIL released (the caller
/// holds the object, and for a mutable one its buffer export). Python code
/// may still write to a mutable buffer meanwhile, as under pyzmq: the frame
/// then holds whatever the copy read.
#[inline]
pub(crate) fn copy_to_msg(py: Python<'_>, data: &[u8]) -> Msg {
    if data.len() >= NOGIL_COPY_MIN {
        py.detach(|| Msg::from_slice(data))
    } else {
        Msg::from_slice(data)
    }
}

/// A new `bytes` holding a copy of `data`; a large one is allocated with the
/// GIL and filled without it (see [`NOGIL_COPY_MIN`]).
pub(crate) fn copy_to_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Py<PyAny>> {
    if data.len() < NOGIL_COPY_MIN {
        return Ok(PyBytes::new(py, data).into_any().unbind());
    }
    // SAFETY: a NULL source asks for an uninitialised object of that size
    // (filled below before anything else sees it); returns a new reference or NULL.
    let obj = unsafe { ffi::PyBytes_FromStringAndSize(std::ptr::null(), data.len() as ffi::Py_ssize_t) };
    if obj.is_null() {
        return Err(PyErr::fetch(py));
    }
    // SAFETY: `obj` is a new, non-null reference that we own.
    let obj = unsafe { Bound::from_owned_ptr(py, obj) };
    // SAFETY: `obj` is an exact bytes object, so this is its inline buffer of `data.len()` bytes.
    let dst = unsafe { ffi::PyBytes_AsString(obj.as_ptr()) } as usize;
    py.detach(|| {
        // SAFETY: `dst` is the new object's buffer of `data.len()` bytes. Only
        // this thread holds a reference to the object (not yet returned, and a
        // `bytes` is never tracked by the garbage collector), so nothing reads
        // or frees it while the GIL is released; `data` is a distinct buffer.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), dst as *mut u8, data.len()) }
    });
    Ok(obj.unbind())
}

/// A received body as `bytes`: the sender's own object when it was lent in
/// this process (inproc) and is at least `lend_min` long, else a copy.
#[inline]
pub(crate) fn msg_to_bytes(py: Python<'_>, m: &Msg, lend_min: usize) -> PyResult<Py<PyAny>> {
    if m.len() >= lend_min {
        if let Some(obj) = crate::release::lent_bytes_object(py, m.as_slice()) {
            return Ok(obj);
        }
    }
    copy_to_bytes(py, m.as_slice())
}

/// How [`buffer_to_msg`] made its frame.
pub(crate) enum Made {
    /// The bytes were copied: nothing to track (pyzmq's finished tracker).
    Copied,
    /// The buffer is lent to the core; the tracker, when one was asked for,
    /// is done once the core releases it.
    Lent(Option<Py<PyAny>>),
}

impl Made {
    /// What pyzmq's `Frame(track=...)` holds: the finished tracker for a
    /// tracked copy, the live one for a tracked loan, else None.
    pub(crate) fn frame_tracker(self, py: Python<'_>, track: bool) -> PyResult<Option<Py<PyAny>>> {
        match self {
            Made::Copied if track => Ok(Some(finished_tracker(py)?)),
            Made::Copied => Ok(None),
            Made::Lent(t) => Ok(t),
        }
    }
}

/// A frame from any buffer-protocol object: copied when `copy` or when
/// smaller than a non-zero `threshold` (pyzmq: a threshold of 0 never
/// copies), otherwise wrapped without copying.
pub(crate) fn buffer_to_msg(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    copy: bool,
    track: bool,
    threshold: usize,
) -> PyResult<(Msg, Made)> {
    let buf = pyo3::buffer::PyUntypedBuffer::get(data).map_err(|_| {
        PyTypeError::new_err(format!(
            "expected bytes or an object supporting the buffer protocol, got {}",
            data.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into())
        ))
    })?;
    if !buf.is_c_contiguous() {
        return Err(PyBufferError::new_err("buffer must be C-contiguous"));
    }
    let len = buf.len_bytes();
    if copy || len < threshold {
        // SAFETY: the buffer is contiguous and stays exported (so valid and
        // unresized, even with the GIL released) until `release` below.
        let slice = unsafe { std::slice::from_raw_parts(buf.buf_ptr() as *const u8, len) };
        let msg = copy_to_msg(py, slice);
        buf.release(py);
        return Ok((msg, Made::Copied));
    }
    let tracker = track.then(|| Arc::new(Tracker::default()));
    let py_tracker = match &tracker {
        Some(t) => Some(make_tracker(py, t.clone())?),
        None => None,
    };
    Ok((Msg::from_owner(Owner::new(buf, tracker)), Made::Lent(py_tracker)))
}

/// One received (or prepared) message frame; supports the buffer protocol.
#[pyclass(frozen, subclass, module = "oxmq._oxmq", name = "Frame")]
pub struct Frame {
    pub(crate) msg: Msg,
    pub(crate) bytes: PyOnceLock<Py<PyBytes>>,
    pub(crate) tracker: Option<Py<PyAny>>,
    /// The sending peer's connection properties (received frames only).
    pub(crate) props: Option<Arc<oxmq::PeerProperties>>,
    /// `.buffer`: one memoryview, handed out every time (as pyzmq does).
    pub(crate) view: PyOnceLock<Py<PyAny>>,
    /// The frame's own writable copy of the body, made by the first buffer
    /// export (see `__getbuffer__`); from then on it is the frame's content.
    pub(crate) private: PyOnceLock<Py<PyByteArray>>,
    /// Draft API `Frame.routing_id` (the frame is otherwise immutable).
    pub(crate) routing_id: AtomicU32,
    /// Draft RADIO/DISH: a group set on this frame (`frame.group = ...`).
    pub(crate) group: GroupSlot,
}

/// Draft RADIO/DISH: the group a Python caller set on a (frozen) `Frame`;
/// it overrides the message's own when the frame is sent.
#[derive(Default)]
pub(crate) struct GroupSlot(std::sync::Mutex<Option<Vec<u8>>>);

impl GroupSlot {
    pub(crate) fn get(&self) -> Option<Vec<u8>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// Draft RADIO/DISH: a group argument (str, as utf-8, or bytes).
pub(crate) fn group_arg(group: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(s) = group.cast::<PyString>() {
        return Ok(s.to_str()?.as_bytes().to_vec());
    }
    group.extract::<Vec<u8>>()
}

/// Draft RADIO/DISH: `msg` with `group` (EINVAL past 255 bytes, as libzmq).
pub(crate) fn msg_with_group(py: Python<'_>, msg: Msg, group: Option<&[u8]>) -> PyResult<Msg> {
    match group {
        None => Ok(msg),
        Some(g) => msg.with_group(g).map_err(|e| zmq_error(py, e.errno())),
    }
}

impl Frame {
    /// The frame's content: its writable copy once a buffer was exported,
    /// else the message body.
    pub(crate) fn data<'a>(&'a self, py: Python<'a>) -> &'a [u8] {
        match self.private.get(py) {
            Some(b) => {
                let b = b.bind(py);
                // SAFETY: the bytearray is private to this frame (never handed
                // out, so never resized) and lives as long as `self`; Python
                // code writes to it only through buffer exports, with the GIL
                // held, as it is here, so no write runs while this is read.
                unsafe { std::slice::from_raw_parts(b.data() as *const u8, b.len()) }
            }
            None => self.msg.as_slice(),
        }
    }

    /// The message to send (or copy) for this frame: its body, or its
    /// written-to copy, with its routing id and draft group.
    pub(crate) fn to_send(&self, py: Python<'_>) -> PyResult<Msg> {
        let base = match self.private.get(py) {
            None => self.msg.clone(),
            Some(_) => {
                let m = Msg::from_slice(self.data(py));
                match self.msg.group() {
                    [] => m,
                    g => msg_with_group(py, m, Some(g))?,
                }
            }
        };
        let mut msg = msg_with_group(py, base, self.group.get().as_deref())?;
        msg.set_routing_id(self.routing_id.load(Ordering::Relaxed));
        Ok(msg)
    }

    pub(crate) fn with_props(msg: Msg, props: Option<Arc<oxmq::PeerProperties>>) -> Frame {
        let routing_id = AtomicU32::new(msg.routing_id());
        Frame {
            msg,
            bytes: PyOnceLock::new(),
            tracker: None,
            props,
            view: PyOnceLock::new(),
            private: PyOnceLock::new(),
            routing_id,
            group: GroupSlot::default(),
        }
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
            return Ok(Frame {
                msg: Msg::new(),
                bytes: PyOnceLock::new(),
                tracker,
                props: None,
                view: PyOnceLock::new(),
                private: PyOnceLock::new(),
                routing_id: AtomicU32::new(0),
                group: GroupSlot::default(),
            });
        };
        if data.is_instance_of::<PyString>() {
            return Err(PyTypeError::new_err("Str objects not allowed. Only: bytes, buffer interfaces."));
        }
        if let Ok(f) = data.cast::<Frame>() {
            return Ok(Frame {
                msg: f.get().to_send(py)?,
                bytes: PyOnceLock::new(),
                tracker: None,
                props: None,
                view: PyOnceLock::new(),
                private: PyOnceLock::new(),
                routing_id: AtomicU32::new(f.get().routing_id.load(Ordering::Relaxed)),
                group: GroupSlot::default(),
            });
        }
        // pyzmq: copy=None means "copy buffers below the threshold, wrap the
        // rest", the threshold being `zmq.COPY_THRESHOLD` at this call.
        let threshold = copy_threshold.unwrap_or_else(|| COPY_THRESHOLD.load(Ordering::Relaxed));
        let (copy, threshold) = match copy {
            Some(true) => (true, 0),
            Some(false) => (false, 0),
            None => (false, threshold),
        };
        let (msg, made) = buffer_to_msg(py, data, copy, track, threshold)?;
        let tracker = made.frame_tracker(py, track)?;
        Ok(Frame {
            msg,
            bytes: PyOnceLock::new(),
            tracker,
            props: None,
            view: PyOnceLock::new(),
            private: PyOnceLock::new(),
            routing_id: AtomicU32::new(0),
            group: GroupSlot::default(),
        })
    }

    /// The frame's bytes (copied once, then cached).
    #[getter]
    fn bytes(&self, py: Python<'_>) -> Py<PyBytes> {
        self.bytes.get_or_init(py, || PyBytes::new(py, self.data(py)).unbind()).clone_ref(py)
    }

    /// A writable memoryview of the frame (its own copy, see `__getbuffer__`); the same object each time.
    #[getter]
    fn buffer<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let view = slf.get().view.get_or_try_init(py, || {
            // SAFETY: slf supports the buffer protocol (below); returns a new reference or NULL.
            let ptr = unsafe { ffi::PyMemoryView_FromObject(slf.as_ptr()) };
            if ptr.is_null() {
                return Err(PyErr::fetch(py));
            }
            // SAFETY: new, non-null reference.
            Ok::<_, PyErr>(unsafe { Bound::from_owned_ptr(py, ptr) }.unbind())
        })?;
        Ok(view.bind(py).clone())
    }

    /// Whether more frames of the message follow.
    #[getter]
    fn more(&self) -> bool {
        self.msg.more()
    }

    /// Draft API: the SERVER/PEER connection this frame came from, or is to
    /// be sent to (0: none).
    #[getter]
    fn get_routing_id(&self) -> u32 {
        self.routing_id.load(Ordering::Relaxed)
    }

    #[setter]
    fn set_routing_id(&self, py: Python<'_>, routing_id: u32) -> PyResult<()> {
        if routing_id == 0 {
            return Err(zmq_error(py, errno::EINVAL));
        }
        self.routing_id.store(routing_id, Ordering::Relaxed);
        Ok(())
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
                // SRCFD (deprecated): the fd of the connection it came from
                2 => match self.props.as_ref().and_then(|p| p.src_fd()) {
                    Some(fd) => Ok(fd.into_pyobject(py)?.into_any().unbind()),
                    None => Err(zmq_error(py, errno::EINVAL)),
                },
                // SHARED
                3 => Ok(0i32.into_pyobject(py)?.into_any().unbind()),
                _ => Err(zmq_error(py, errno::EINVAL)),
            };
        }
        // a connection property of the sender ("User-Id", "Socket-Type", ...), as str
        let name: String = option.extract()?;
        if name == "group" {
            return Ok(self.group().into_pyobject(py)?.into_any().unbind());
        }
        let value = self.props.as_ref().and_then(|p| p.get(&name)).ok_or_else(|| zmq_error(py, errno::EINVAL))?;
        Ok(String::from_utf8_lossy(value).into_owned().into_pyobject(py)?.into_any().unbind())
    }

    /// Draft RADIO/DISH: the message's group (str; "" when it has none).
    #[getter]
    fn group(&self) -> String {
        match self.group.get() {
            Some(g) => String::from_utf8_lossy(&g).into_owned(),
            None => String::from_utf8_lossy(self.msg.group()).into_owned(),
        }
    }

    #[setter(group)]
    fn set_group(&self, py: Python<'_>, group: &Bound<'_, PyAny>) -> PyResult<()> {
        let g = group_arg(group)?;
        if g.len() > oxmq::GROUP_MAX_LENGTH {
            return Err(zmq_error(py, errno::EINVAL));
        }
        *self.group.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(g);
        Ok(())
    }

    /// pyzmq's `Frame.set`: only `"group"` (draft) can be set, as in libzmq.
    fn set(&self, py: Python<'_>, option: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        match option.extract::<String>() {
            Ok(name) if name == "group" => self.set_group(py, value),
            _ => Err(zmq_error(py, errno::EINVAL)),
        }
    }

    fn __len__(&self) -> usize {
        self.msg.len()
    }

    fn __bytes__(&self, py: Python<'_>) -> Py<PyBytes> {
        self.bytes(py)
    }

    /// `frame["User-Id"]`: the same as `frame.get("User-Id")`.
    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.get(py, key)
    }

    fn __str__(&self, py: Python<'_>) -> PyResult<String> {
        self.__repr__(py)
    }

    /// pyzmq's form: `<zmq.Frame(b'...')>`, long frames cut to 12 bytes plus their size.
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let body = self.data(py);
        let (shown, suffix) = if body.len() > 16 {
            let n = body.len();
            let size = match n {
                0..=999 => format!("{n}B"),
                1_000..=999_999 => format!("{}kB", n / 1_000),
                1_000_000..=999_999_999 => format!("{}MB", n / 1_000_000),
                _ => format!("{}GB", n / 1_000_000_000),
            };
            (&body[..12], format!("...{size}"))
        } else {
            (body, String::new())
        };
        let r = PyBytes::new(py, shown).repr()?;
        Ok(format!("<zmq.Frame({r}{suffix})>"))
    }

    /// Shares the body and, as in pyzmq, the tracker.
    fn __copy__(&self, py: Python<'_>) -> PyResult<Frame> {
        Ok(Frame {
            msg: self.to_send(py)?,
            bytes: PyOnceLock::new(),
            tracker: self.tracker.as_ref().map(|t| t.clone_ref(py)),
            props: self.props.clone(),
            view: PyOnceLock::new(),
            private: PyOnceLock::new(),
            routing_id: AtomicU32::new(self.routing_id.load(Ordering::Relaxed)),
            group: GroupSlot(std::sync::Mutex::new(self.group.get())),
        })
    }

    fn fast_copy(&self, py: Python<'_>) -> PyResult<Frame> {
        self.__copy__(py)
    }

    /// Writable, as in pyzmq (`memoryview(frame)`, numpy), also for a
    /// read-only request. The first export gives the frame its own copy of
    /// the body and every export is of that copy: the body itself may be
    /// shared with other receivers of the same message, or be a sender's
    /// `bytes`, and writing must reach neither. Receiving, `.bytes` and
    /// sending a frame nobody exported never copy for this.
    unsafe fn __getbuffer__(slf: Bound<'_, Self>, view: *mut ffi::Py_buffer, flags: c_int) -> PyResult<()> {
        let py = slf.py();
        let frame = slf.get();
        let private = frame.private.get_or_init(py, || PyByteArray::new(py, frame.msg.as_slice()).unbind());
        let private = private.bind(py);
        // SAFETY: `view` is provided by the caller. The bytearray is private
        // to the frame, never resized, and lives as long as the frame, which
        // the view holds a reference to.
        let rc = unsafe {
            ffi::PyBuffer_FillInfo(
                view,
                slf.as_ptr(),
                private.data() as *mut std::ffi::c_void,
                private.len() as ffi::Py_ssize_t,
                0,
                flags,
            )
        };
        if rc < 0 {
            return Err(PyErr::fetch(py));
        }
        Ok(())
    }

    unsafe fn __releasebuffer__(&self, _view: *mut ffi::Py_buffer) {}
}

/// Native half of a MessageTracker: set when the core released the buffer.
#[pyclass(frozen, module = "oxmq._oxmq", name = "_Tracker")]
pub(crate) struct NativeTracker {
    pub(crate) t: Arc<Tracker>,
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
        wait_trackers(py, &[&*self.t], timeout)
    }
}

/// `MessageTracker.wait`'s native part: wait until every tracker in
/// `trackers` is done, up to `timeout` seconds in all (negative: forever);
/// returns whether they are. The core's wait, through [`GilWait`].
#[pyfunction]
#[pyo3(signature = (trackers, timeout=-1.0))]
pub(crate) fn _wait_trackers(py: Python<'_>, trackers: Vec<PyRef<'_, NativeTracker>>, timeout: f64) -> PyResult<bool> {
    let all: Vec<&Tracker> = trackers.iter().map(|n| &*n.t).collect();
    wait_trackers(py, &all, timeout)
}

fn wait_trackers(py: Python<'_>, all: &[&Tracker], timeout: f64) -> PyResult<bool> {
    // Negative, or too long for a Duration (inf): forever; NaN (`max` drops it): no wait.
    let timeout = if timeout < 0.0 { None } else { Duration::try_from_secs_f64(timeout.max(0.0)).ok() };
    let mut hook = GilWait::new(py);
    let done = Tracker::wait_all_with(all, timeout, &mut hook).map_err(|e| hook.error(e))?;
    if done {
        drain_releases(py);
    }
    Ok(done)
}
