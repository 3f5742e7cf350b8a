//! Opaque handles and the raw-pointer helpers: the only places that turn C
//! pointers into Rust references.
//!
//! A handle is a `Box` whose first field is a magic tag. Every use checks
//! the pointer (NULL, alignment) and the tag, so a NULL, foreign or closed
//! handle is an error instead of a crash wherever that can be detected (a
//! pointer to freed memory that the allocator has reused cannot be).

use crate::boundary::{CResult, Errno, EFAULT, EINVAL, ENOTSOCK};
use oxmq::{Context, Socket};
use std::ffi::{c_char, c_void, CStr};
use std::sync::atomic::{AtomicU32, Ordering};

const CTX_TAG: u32 = 0x0c7a_c0de;
const SOCKET_TAG: u32 = 0x50c4_e7ed;
const DEAD_TAG: u32 = 0xdead_0b1e;

/// What `zmq_ctx_new` returns.
#[repr(C)]
pub(crate) struct CtxHandle {
    tag: AtomicU32,
    pub(crate) ctx: Context,
}

/// What `zmq_socket` returns.
#[repr(C)]
pub(crate) struct SocketHandle {
    tag: AtomicU32,
    pub(crate) socket: Socket,
}

/// Check a handle pointer and read its tag.
///
/// # Safety
/// `p` is NULL, misaligned, or points to at least 4 readable bytes.
unsafe fn tag_of<T>(p: *const c_void) -> Option<u32> {
    if p.is_null() || (p as usize) % std::mem::align_of::<T>() != 0 {
        return None;
    }
    // SAFETY: non-NULL and aligned; the caller guarantees 4 readable bytes.
    // Every handle type starts with an `AtomicU32` tag (repr(C)).
    Some(unsafe { (*(p as *const AtomicU32)).load(Ordering::Acquire) })
}

impl CtxHandle {
    pub(crate) fn into_raw(ctx: Context) -> *mut c_void {
        Box::into_raw(Box::new(CtxHandle { tag: AtomicU32::new(CTX_TAG), ctx })) as *mut c_void
    }

    /// The context behind `p`; EFAULT when `p` is not a live context.
    ///
    /// # Safety
    /// `p` is NULL or points to readable memory (ideally from `into_raw`).
    pub(crate) unsafe fn from_raw<'a>(p: *mut c_void) -> CResult<&'a CtxHandle> {
        // SAFETY: forwarded caller contract.
        match unsafe { tag_of::<CtxHandle>(p) } {
            // SAFETY: the tag says this is a live CtxHandle made by `into_raw`.
            Some(CTX_TAG) => Ok(unsafe { &*(p as *const CtxHandle) }),
            _ => Err(EFAULT),
        }
    }

    /// Take the context back (after `zmq_ctx_term`), clearing the tag.
    ///
    /// # Safety
    /// As [`CtxHandle::from_raw`]; no other thread uses the handle any more.
    pub(crate) unsafe fn take(p: *mut c_void) -> CResult<Box<CtxHandle>> {
        // SAFETY: forwarded caller contract.
        let h = unsafe { Self::from_raw(p) }?;
        if h.tag.compare_exchange(CTX_TAG, DEAD_TAG, Ordering::AcqRel, Ordering::Acquire).is_err() {
            return Err(EFAULT);
        }
        // SAFETY: the tag was live and we alone flipped it: the Box is ours.
        Ok(unsafe { Box::from_raw(p as *mut CtxHandle) })
    }
}

impl SocketHandle {
    pub(crate) fn into_raw(socket: Socket) -> *mut c_void {
        Box::into_raw(Box::new(SocketHandle { tag: AtomicU32::new(SOCKET_TAG), socket })) as *mut c_void
    }

    /// The socket behind `s`; ENOTSOCK when `s` is not a live socket.
    ///
    /// # Safety
    /// `s` is NULL or points to readable memory (ideally from `into_raw`),
    /// and, as in libzmq, one thread at a time uses a socket.
    #[inline]
    pub(crate) unsafe fn from_raw<'a>(s: *mut c_void) -> CResult<&'a Socket> {
        // SAFETY: forwarded caller contract.
        match unsafe { tag_of::<SocketHandle>(s) } {
            // SAFETY: the tag says this is a live SocketHandle made by `into_raw`.
            Some(SOCKET_TAG) => Ok(unsafe { &(*(s as *const SocketHandle)).socket }),
            _ => Err(ENOTSOCK),
        }
    }

    /// Take the socket back (`zmq_close`), clearing the tag.
    ///
    /// # Safety
    /// As [`SocketHandle::from_raw`].
    pub(crate) unsafe fn take(s: *mut c_void) -> CResult<Box<SocketHandle>> {
        // SAFETY: forwarded caller contract.
        unsafe { Self::from_raw(s) }?;
        // SAFETY: `from_raw` checked that `s` is a live SocketHandle.
        let h = unsafe { &*(s as *const SocketHandle) };
        if h.tag.compare_exchange(SOCKET_TAG, DEAD_TAG, Ordering::AcqRel, Ordering::Acquire).is_err() {
            return Err(ENOTSOCK);
        }
        // SAFETY: the tag was live and we alone flipped it: the Box is ours.
        Ok(unsafe { Box::from_raw(s as *mut SocketHandle) })
    }
}

/// The socket behind an optional handle (NULL allowed: `zmq_proxy`'s capture).
///
/// # Safety
/// As [`SocketHandle::from_raw`].
pub(crate) unsafe fn optional_socket<'a>(s: *mut c_void) -> CResult<Option<&'a Socket>> {
    if s.is_null() {
        return Ok(None);
    }
    // SAFETY: forwarded caller contract.
    unsafe { SocketHandle::from_raw(s) }.map(Some)
}

/// `len` bytes at `p` (NULL is allowed when `len` is 0); EFAULT otherwise.
///
/// # Safety
/// `p` is NULL or valid for reading `len` bytes for the returned lifetime.
#[inline]
pub(crate) unsafe fn bytes<'a>(p: *const c_void, len: usize) -> CResult<&'a [u8]> {
    if p.is_null() {
        return if len == 0 { Ok(&[]) } else { Err(EFAULT) };
    }
    // SAFETY: non-NULL; the caller guarantees `len` readable bytes.
    Ok(unsafe { std::slice::from_raw_parts(p as *const u8, len) })
}

/// `len` writable bytes at `p` (NULL is allowed when `len` is 0); EFAULT otherwise.
///
/// # Safety
/// `p` is NULL or valid for writing `len` bytes, not aliased, for the lifetime.
#[inline]
pub(crate) unsafe fn bytes_mut<'a>(p: *mut c_void, len: usize) -> CResult<&'a mut [u8]> {
    if p.is_null() {
        return if len == 0 { Ok(&mut []) } else { Err(EFAULT) };
    }
    // SAFETY: non-NULL; the caller guarantees `len` writable, unaliased bytes.
    Ok(unsafe { std::slice::from_raw_parts_mut(p as *mut u8, len) })
}

/// A NUL-terminated string; NULL gives `on_null`, non-UTF-8 EINVAL.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string.
pub(crate) unsafe fn c_str<'a>(p: *const c_char, on_null: Errno) -> CResult<&'a str> {
    if p.is_null() {
        return Err(on_null);
    }
    // SAFETY: non-NULL and NUL-terminated per the caller.
    unsafe { CStr::from_ptr(p) }.to_str().map_err(|_| EINVAL)
}

/// Write `v` through an out-pointer if it is not NULL.
///
/// # Safety
/// `p` is NULL or valid for writing a `T`.
pub(crate) unsafe fn write_out<T>(p: *mut T, v: T) {
    if !p.is_null() {
        // SAFETY: non-NULL and writable per the caller.
        unsafe { p.write(v) };
    }
}
