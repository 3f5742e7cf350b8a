//! Version, errors, capabilities and contexts.

use crate::boundary::{CResult, Errno, EINVAL};
use crate::handle::{write_out, CtxHandle};
use oxmq::{ctxopt, Context, Error};
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::{Mutex, OnceLock};

#[no_mangle]
pub unsafe extern "C" fn zmq_version(major: *mut c_int, minor: *mut c_int, patch: *mut c_int) {
    ffi_boundary!((), {
        let (a, b, c) = oxmq::ZMQ_VERSION;
        // SAFETY: each out-pointer is NULL or writable (zmq.h contract).
        unsafe {
            write_out(major, a);
            write_out(minor, b);
            write_out(patch, c);
        }
    })
}

/// libzmq returns the C library's `errno` as it is, so a caller that reset
/// it to 0 reads 0 (libzmq's own test_base85 does exactly that).
#[no_mangle]
pub extern "C" fn zmq_errno() -> c_int {
    ffi_boundary!(0, {
        // SAFETY: `__errno_location` returns a valid pointer to this thread's errno.
        unsafe { *libc::__errno_location() }
    })
}

/// Messages are built once per error number and kept for the life of the
/// process, so the returned pointer stays valid as libzmq's does.
#[no_mangle]
pub extern "C" fn zmq_strerror(errnum: c_int) -> *const c_char {
    const UNKNOWN: &CStr = c"Unknown error";
    ffi_boundary!(UNKNOWN.as_ptr(), {
        static CACHE: OnceLock<Mutex<HashMap<c_int, &'static CStr>>> = OnceLock::new();
        let mut cache = CACHE.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = cache.get(&errnum) {
            return s.as_ptr();
        }
        if cache.len() >= 4096 {
            return UNKNOWN.as_ptr();
        }
        let text = CString::new(Error::strerror(errnum)).unwrap_or_else(|_| UNKNOWN.to_owned());
        let text: &'static CStr = Box::leak(text.into_boxed_c_str());
        cache.insert(errnum, text);
        text.as_ptr()
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_has(capability: *const c_char) -> c_int {
    ffi_boundary!(0, {
        if capability.is_null() {
            return 0;
        }
        // SAFETY: non-NULL and NUL-terminated (zmq.h contract).
        let cap = unsafe { CStr::from_ptr(capability) }.to_bytes();
        // The C ABI stands in for Debian's libzmq5, built without the draft API:
        // programs compiled against that zmq.h (libzmq's own tests among them)
        // take "draft" to describe the header they were built with, so it is 0
        // here even though the draft functions are exported.
        std::str::from_utf8(cap).is_ok_and(|c| c != "draft" && oxmq::security::has(c)) as c_int
    })
}

#[no_mangle]
pub extern "C" fn zmq_ctx_new() -> *mut c_void {
    ffi_ptr!({ Ok(CtxHandle::into_raw(Context::new())) })
}

#[no_mangle]
pub extern "C" fn zmq_init(io_threads: c_int) -> *mut c_void {
    ffi_ptr!({
        if io_threads < 0 {
            return Err(EINVAL);
        }
        let ctx = Context::new();
        ctx.set(ctxopt::IO_THREADS, io_threads)?;
        Ok(CtxHandle::into_raw(ctx))
    })
}

/// Shut the context down, wait for its sockets to close (libzmq semantics),
/// then free the handle.
#[no_mangle]
pub unsafe extern "C" fn zmq_ctx_term(context: *mut c_void) -> c_int {
    ffi_int!({
        // SAFETY: `context` is NULL or a handle from zmq_ctx_new (zmq.h contract).
        let ctx = &unsafe { CtxHandle::from_raw(context) }?.ctx;
        if ctx.is_forked_copy() {
            // A fork child terminating its parent's context: as libzmq, it
            // waits for nothing and fails with EINTR (again if called again),
            // the handle staying valid.
            ctx.term();
            return Err(Errno(oxmq::errno::EINTR));
        }
        // SAFETY: `context` is NULL or a handle from zmq_ctx_new (zmq.h contract).
        let h = unsafe { CtxHandle::take(context) }?;
        h.ctx.term();
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_term(context: *mut c_void) -> c_int {
    // SAFETY: same contract as zmq_ctx_term.
    unsafe { zmq_ctx_term(context) }
}

#[no_mangle]
pub unsafe extern "C" fn zmq_ctx_destroy(context: *mut c_void) -> c_int {
    // SAFETY: same contract as zmq_ctx_term.
    unsafe { zmq_ctx_term(context) }
}

#[no_mangle]
pub unsafe extern "C" fn zmq_ctx_shutdown(context: *mut c_void) -> c_int {
    ffi_int!({
        // SAFETY: `context` is NULL or a handle from zmq_ctx_new (zmq.h contract).
        let h = unsafe { CtxHandle::from_raw(context) }?;
        h.ctx.shutdown();
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_ctx_set(context: *mut c_void, option: c_int, optval: c_int) -> c_int {
    ffi_int!({
        // SAFETY: `context` is NULL or a handle from zmq_ctx_new (zmq.h contract).
        let h = unsafe { CtxHandle::from_raw(context) }?;
        ctx_set(&h.ctx, option, optval)?;
        Ok(0)
    })
}

fn ctx_set(ctx: &Context, option: c_int, optval: c_int) -> CResult<()> {
    Ok(ctx.set(option, optval)?)
}

#[no_mangle]
pub unsafe extern "C" fn zmq_ctx_get(context: *mut c_void, option: c_int) -> c_int {
    ffi_int!({
        // SAFETY: `context` is NULL or a handle from zmq_ctx_new (zmq.h contract).
        let h = unsafe { CtxHandle::from_raw(context) }?;
        Ok(h.ctx.get(option)?)
    })
}
