//! `zmq_proxy`, `zmq_proxy_steerable` and the legacy `zmq_device`: the
//! core's [`oxmq::Proxy`] over the caller's handles.

use crate::boundary::{CResult, EFAULT};
use crate::handle::{optional_socket, SocketHandle};
use oxmq::proxy::CaptureSocket;
use oxmq::{Proxy, Socket};
use std::ffi::{c_int, c_void};

fn run(front: &Socket, back: &Socket, capture: Option<&Socket>, control: Option<&Socket>) -> oxmq::Result<()> {
    let mut capture = capture.map(CaptureSocket::new);
    let mut proxy = Proxy::new(front, back);
    if let Some(c) = capture.as_mut() {
        proxy = proxy.capture(c);
    }
    if let Some(c) = control {
        proxy = proxy.control(c);
    }
    proxy.run()
}

/// # Safety
/// Each pointer is NULL (capture, control) or a socket handle.
unsafe fn proxy(f: *mut c_void, b: *mut c_void, cap: *mut c_void, ctl: *mut c_void) -> CResult<c_int> {
    if f.is_null() || b.is_null() {
        return Err(EFAULT); // as libzmq
    }
    // SAFETY: forwarded caller contract.
    let front = unsafe { SocketHandle::from_raw(f) }?;
    // SAFETY: forwarded caller contract.
    let back = unsafe { SocketHandle::from_raw(b) }?;
    // SAFETY: forwarded caller contract.
    let capture = unsafe { optional_socket(cap) }?;
    // SAFETY: forwarded caller contract.
    let control = unsafe { optional_socket(ctl) }?;
    run(front, back, capture, control)?;
    Ok(0)
}

/// Forward between `frontend` and `backend` until the context terminates
/// (then -1 with ETERM, as libzmq).
#[no_mangle]
pub unsafe extern "C" fn zmq_proxy(frontend: *mut c_void, backend: *mut c_void, capture: *mut c_void) -> c_int {
    ffi_int!({
        // SAFETY: zmq.h contract for socket handles.
        unsafe { proxy(frontend, backend, capture, std::ptr::null_mut()) }
    })
}

/// As `zmq_proxy`, steered by PAUSE / RESUME / TERMINATE / STATISTICS on
/// `control`; returns 0 after TERMINATE.
#[no_mangle]
pub unsafe extern "C" fn zmq_proxy_steerable(
    frontend: *mut c_void,
    backend: *mut c_void,
    capture: *mut c_void,
    control: *mut c_void,
) -> c_int {
    ffi_int!({
        // SAFETY: zmq.h contract for socket handles.
        unsafe { proxy(frontend, backend, capture, control) }
    })
}

/// Legacy devices (STREAMER, FORWARDER, QUEUE) are all a proxy; like libzmq,
/// the type is not looked at.
#[no_mangle]
pub unsafe extern "C" fn zmq_device(kind: c_int, frontend: *mut c_void, backend: *mut c_void) -> c_int {
    ffi_int!({
        let _ = kind;
        // SAFETY: zmq.h contract for socket handles.
        unsafe { proxy(frontend, backend, std::ptr::null_mut(), std::ptr::null_mut()) }
    })
}
