//! Sockets: create, close, endpoints, options, and the copying send/recv.

use crate::boundary::{CResult, EFAULT, EINVAL};
use crate::handle::{bytes, bytes_mut, c_str, CtxHandle, SocketHandle};
use oxmq::option_table::{self, GetSize, Kind};
use oxmq::{opt, Msg, OptionValue, Socket, SocketType};
use std::ffi::{c_char, c_int, c_void};

/// libzmq returns sizes as `int`, clamped.
#[inline]
pub(crate) fn clamp_len(n: usize) -> c_int {
    n.min(c_int::MAX as usize) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn zmq_socket(context: *mut c_void, kind: c_int) -> *mut c_void {
    ffi_ptr!({
        // SAFETY: `context` is NULL or a handle from zmq_ctx_new (zmq.h contract).
        let h = unsafe { CtxHandle::from_raw(context) }?;
        let kind = SocketType::from_raw(kind).ok_or(EINVAL)?;
        Ok(SocketHandle::into_raw(h.ctx.socket(kind)?))
    })
}

/// Close: the socket leaves its context; queued messages linger in the I/O
/// thread as LINGER says.
#[no_mangle]
pub unsafe extern "C" fn zmq_close(s: *mut c_void) -> c_int {
    ffi_int!({
        // SAFETY: `s` is NULL or a handle from zmq_socket (zmq.h contract).
        let h = unsafe { SocketHandle::take(s) }?;
        drop(h);
        Ok(0)
    })
}

/// The socket and endpoint string of an endpoint call.
///
/// # Safety
/// `s` is NULL or a socket handle; `addr` NULL or a NUL-terminated string.
unsafe fn socket_and_addr<'a>(s: *mut c_void, addr: *const c_char) -> CResult<(&'a Socket, &'a str)> {
    // SAFETY: forwarded caller contract.
    let socket = unsafe { SocketHandle::from_raw(s) }?;
    // SAFETY: forwarded caller contract.
    let addr = unsafe { c_str(addr, EINVAL) }?;
    Ok((socket, addr))
}

#[no_mangle]
pub unsafe extern "C" fn zmq_bind(s: *mut c_void, addr: *const c_char) -> c_int {
    ffi_int!({
        // SAFETY: zmq.h contract for `s` and `addr`.
        let (socket, addr) = unsafe { socket_and_addr(s, addr) }?;
        socket.bind(addr)?;
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_connect(s: *mut c_void, addr: *const c_char) -> c_int {
    ffi_int!({
        // SAFETY: zmq.h contract for `s` and `addr`.
        let (socket, addr) = unsafe { socket_and_addr(s, addr) }?;
        socket.connect(addr)?;
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_unbind(s: *mut c_void, addr: *const c_char) -> c_int {
    ffi_int!({
        // SAFETY: zmq.h contract for `s` and `addr`.
        let (socket, addr) = unsafe { socket_and_addr(s, addr) }?;
        socket.unbind(addr)?;
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_disconnect(s: *mut c_void, addr: *const c_char) -> c_int {
    ffi_int!({
        // SAFETY: zmq.h contract for `s` and `addr`.
        let (socket, addr) = unsafe { socket_and_addr(s, addr) }?;
        socket.disconnect(addr)?;
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_setsockopt(
    s: *mut c_void,
    option: c_int,
    optval: *const c_void,
    optvallen: usize,
) -> c_int {
    ffi_int!({
        // SAFETY: `s` is NULL or a handle from zmq_socket (zmq.h contract).
        let socket = unsafe { SocketHandle::from_raw(s) }?;
        if optval.is_null() {
            // libzmq: NULL clears SOCKS_USERNAME/PASSWORD whatever the length;
            // with a length, a string option is EINVAL (an integer one is
            // read through NULL there: EFAULT here).
            if optvallen == 0 || matches!(option, opt::SOCKS_USERNAME | opt::SOCKS_PASSWORD) {
                socket.clear_option(option)?;
                return Ok(0);
            }
            if option_table::lookup(option).is_some_and(|s| matches!(s.kind, Kind::Str)) {
                return Err(EINVAL);
            }
        }
        // SAFETY: `optval` is NULL or holds `optvallen` bytes (zmq.h contract).
        let value = unsafe { bytes(optval, optvallen) }?;
        socket.set_option_bytes(option, value)?;
        Ok(0)
    })
}

/// Copy `value` into the caller's buffer as libzmq does: EINVAL when it
/// does not fit, and `*optvallen` becomes the size written.
fn put_option(out: &mut [u8], len: &mut usize, value: &[u8], nul: bool) -> CResult<()> {
    let need = value.len() + nul as usize;
    if *len < need || out.len() < need {
        return Err(EINVAL);
    }
    out[..value.len()].copy_from_slice(value);
    if nul {
        out[value.len()] = 0;
    }
    *len = need;
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn zmq_getsockopt(
    s: *mut c_void,
    option: c_int,
    optval: *mut c_void,
    optvallen: *mut usize,
) -> c_int {
    ffi_int!({
        // SAFETY: `s` is NULL or a handle from zmq_socket (zmq.h contract).
        let socket = unsafe { SocketHandle::from_raw(s) }?;
        if optvallen.is_null() {
            return Err(EFAULT);
        }
        // SAFETY: non-NULL; zmq.h: `optvallen` points to the buffer's size.
        let len = unsafe { &mut *optvallen };
        // SAFETY: `optval` holds `*optvallen` writable bytes (zmq.h contract).
        let out = unsafe { bytes_mut(optval, *len) }?;
        let value = socket.get_option(option)?;
        if let Some(spec) = option_table::lookup(option).filter(|_| !option_table::is_security_option(option)) {
            put_by_table(spec, value, out, len)?;
            return Ok(0);
        }
        // Only the CURVE keys are left: the socket answers nothing outside the table.
        let OptionValue::Bytes(b) = value else { return Err(EINVAL) };
        // libzmq: a 32-byte buffer gets the raw key, a 41-byte one Z85 and a NUL.
        match *len {
            32 => put_option(out, len, &b, false)?,
            41 => {
                let mut text = [0u8; 41];
                oxmq::security::z85_encode_into(&b, &mut text[..40]).ok_or(EINVAL)?;
                put_option(out, len, &text, false)?
            }
            _ => return Err(EINVAL),
        }
        Ok(0)
    })
}

/// Write an option as libzmq sizes it: its own integers need the exact size,
/// the socket's answers (RCVMORE, EVENTS, FD, ...) and strings at least it.
fn put_by_table(spec: &option_table::OptionSpec, value: OptionValue, out: &mut [u8], len: &mut usize) -> CResult<()> {
    let bytes = match (value, spec.kind) {
        (OptionValue::Int(v), Kind::Int64) => v.to_ne_bytes().to_vec(),
        (OptionValue::Int(v), _) => i32::try_from(v).map_err(|_| EINVAL)?.to_ne_bytes().to_vec(),
        (OptionValue::Bytes(b), _) => b,
    };
    let nul = spec.kind == Kind::Str;
    let need = option_table::encoded_len(spec.kind, bytes.len());
    if spec.get == GetSize::Exact && *len != need {
        return Err(EINVAL);
    }
    let cap = out.len();
    put_option(out, len, &bytes, nul)?;
    // libzmq's do_getsockopt zeroes the rest of a larger buffer: a caller
    // reading RCVMORE into an int64 sees 0 or 1, not stale high bytes.
    if let Some(rest) = out.get_mut((*len).min(cap)..) {
        rest.fill(0);
    }
    Ok(())
}

/// libzmq's send flags as the core takes them: a `ZMQ_DONTWAIT` send sees
/// the peers' progress as libzmq's does (`oxmq::THROTTLED_VIEW`).
#[inline]
pub(crate) fn send_flags(flags: c_int) -> i32 {
    if flags & oxmq::DONTWAIT != 0 {
        flags | oxmq::THROTTLED_VIEW
    } else {
        flags
    }
}

/// Send `len` bytes (copied: small ones inline, no allocation).
#[no_mangle]
pub unsafe extern "C" fn zmq_send(s: *mut c_void, buf: *const c_void, len: usize, flags: c_int) -> c_int {
    ffi_int!({
        // SAFETY: `s` is NULL or a handle from zmq_socket (zmq.h contract).
        let socket = unsafe { SocketHandle::from_raw(s) }?;
        // SAFETY: `buf` is NULL or holds `len` readable bytes (zmq.h contract).
        let data = unsafe { bytes(buf, len) }?;
        socket.send_slice(data, send_flags(flags))?;
        Ok(clamp_len(len))
    })
}

/// Send a buffer that stays valid and unchanged for the life of the process.
#[no_mangle]
pub unsafe extern "C" fn zmq_send_const(s: *mut c_void, buf: *const c_void, len: usize, flags: c_int) -> c_int {
    ffi_int!({
        // SAFETY: `s` is NULL or a handle from zmq_socket (zmq.h contract).
        let socket = unsafe { SocketHandle::from_raw(s) }?;
        // SAFETY: zmq_send_const's contract: `buf` holds `len` bytes that are
        // never freed or changed, so they may be borrowed for 'static.
        let data: &'static [u8] = unsafe { bytes(buf, len) }?;
        socket.send(Msg::from_static(data), send_flags(flags))?;
        Ok(clamp_len(len))
    })
}

/// Receive one frame into `buf`, truncated to `len`; returns the full size.
#[no_mangle]
pub unsafe extern "C" fn zmq_recv(s: *mut c_void, buf: *mut c_void, len: usize, flags: c_int) -> c_int {
    ffi_int!({
        // SAFETY: `s` is NULL or a handle from zmq_socket (zmq.h contract).
        let socket = unsafe { SocketHandle::from_raw(s) }?;
        // SAFETY: `buf` is NULL or holds `len` writable bytes (zmq.h contract).
        let out = unsafe { bytes_mut(buf, len) }?;
        let msg = socket.recv(flags)?;
        let body = msg.as_slice();
        let n = body.len().min(out.len());
        out[..n].copy_from_slice(&body[..n]);
        Ok(clamp_len(body.len()))
    })
}

/// Publish the socket's events on a PAIR bound at `addr` (inproc only), as
/// libzmq's two-frame event messages; a NULL `addr` stops monitoring.
#[no_mangle]
pub unsafe extern "C" fn zmq_socket_monitor(s: *mut c_void, addr: *const c_char, events: c_int) -> c_int {
    ffi_int!({
        // SAFETY: `s` is NULL or a handle from zmq_socket (zmq.h contract).
        let socket = unsafe { SocketHandle::from_raw(s) }?;
        let addr = if addr.is_null() {
            None
        } else {
            // SAFETY: non-NULL; zmq.h: `addr` is a NUL-terminated string.
            Some(unsafe { c_str(addr, EINVAL) }?)
        };
        socket.monitor(addr, events as u32)?;
        Ok(0)
    })
}

/// Draft `zmq_socket_monitor_versioned`: events on a socket of `type_`
/// (PAIR, PUB or PUSH) bound at `addr`; `event_version` 2 is libzmq's
/// multi-frame layout, with oxmq's routing-id values and events (see
/// `oxmq::monitor_event`). A NULL `addr` stops monitoring.
#[no_mangle]
pub unsafe extern "C" fn zmq_socket_monitor_versioned(
    s: *mut c_void,
    addr: *const c_char,
    events: u64,
    event_version: c_int,
    type_: c_int,
) -> c_int {
    ffi_int!({
        // SAFETY: `s` is NULL or a handle from zmq_socket (zmq.h contract).
        let socket = unsafe { SocketHandle::from_raw(s) }?;
        let addr = if addr.is_null() {
            None
        } else {
            // SAFETY: non-NULL; zmq.h: `addr` is a NUL-terminated string.
            Some(unsafe { c_str(addr, EINVAL) }?)
        };
        // Stopping ignores the type; a number that is no socket type is EINVAL.
        let sink = match addr {
            None => SocketType::Pair,
            Some(_) => SocketType::from_raw(type_).ok_or(EINVAL)?,
        };
        socket.monitor_versioned(addr, events, event_version, sink)?;
        Ok(0)
    })
}

/// Draft `zmq_socket_monitor_pipes_stats`: one ZMQ_EVENT_PIPES_STATS per
/// connection on the socket's version-2 monitor (see
/// `oxmq::Socket::monitor_pipes_stats`).
#[no_mangle]
pub(crate) unsafe extern "C" fn zmq_socket_monitor_pipes_stats(s: *mut c_void) -> c_int {
    ffi_int!({
        // SAFETY: `s` is NULL or a handle from zmq_socket (zmq.h contract).
        let socket = unsafe { SocketHandle::from_raw(s) }?;
        socket.monitor_pipes_stats()?;
        Ok(0)
    })
}

/// Send `count` buffers, each copied into a frame, with `flags`; the last
/// one without SNDMORE (so, as in libzmq, pass ZMQ_SNDMORE to make one
/// multipart message). Returns the size of the last frame.
#[no_mangle]
pub unsafe extern "C" fn zmq_sendiov(s: *mut c_void, iov: *mut libc::iovec, count: usize, flags: c_int) -> c_int {
    ffi_int!({
        // SAFETY: `s` is NULL or a handle from zmq_socket (zmq.h contract).
        let socket = unsafe { SocketHandle::from_raw(s) }?;
        if count == 0 || iov.is_null() {
            return Err(EINVAL);
        }
        // SAFETY: non-NULL; zmq.h: `iov` holds `count` entries.
        let iov = unsafe { std::slice::from_raw_parts(iov, count) };
        let mut rc = 0;
        for (i, v) in iov.iter().enumerate() {
            // SAFETY: each entry describes `iov_len` readable bytes (zmq.h contract).
            let data = unsafe { bytes(v.iov_base, v.iov_len) }?;
            let f = if i + 1 < count { flags } else { flags & !oxmq::SNDMORE };
            socket.send(Msg::from_slice(data), send_flags(f))?;
            rc = clamp_len(data.len());
        }
        Ok(rc)
    })
}

/// Receive up to `*count` frames of one message into buffers allocated with
/// `malloc` (the caller frees each `iov_base`); `*count` becomes the number
/// received, which is also returned (as libzmq does).
#[no_mangle]
pub unsafe extern "C" fn zmq_recviov(s: *mut c_void, iov: *mut libc::iovec, count: *mut usize, flags: c_int) -> c_int {
    ffi_int!({
        // SAFETY: `s` is NULL or a handle from zmq_socket (zmq.h contract).
        let socket = unsafe { SocketHandle::from_raw(s) }?;
        if count.is_null() || iov.is_null() {
            return Err(EINVAL);
        }
        // SAFETY: non-NULL; zmq.h: `*count` entries of `iov` are writable.
        let max = unsafe { *count };
        if max == 0 {
            return Err(EINVAL); // as libzmq: room for no frame is an error
        }
        // SAFETY: as above.
        let iov = unsafe { std::slice::from_raw_parts_mut(iov, max) };
        let mut n = 0;
        while n < max {
            let frame = socket.recv(flags)?;
            let len = frame.len();
            // SAFETY: plain allocation; checked for NULL below.
            let buf = unsafe { libc::malloc(len.max(1)) } as *mut u8;
            if buf.is_null() {
                return Err(crate::boundary::Errno(libc::ENOMEM));
            }
            // SAFETY: `buf` has room for `len` bytes and does not overlap the frame.
            unsafe { std::ptr::copy_nonoverlapping(frame.as_slice().as_ptr(), buf, len) };
            iov[n] = libc::iovec { iov_base: buf as *mut c_void, iov_len: len };
            n += 1;
            if !frame.more() {
                break;
            }
        }
        // SAFETY: checked non-NULL above.
        unsafe { *count = n };
        Ok(clamp_len(n))
    })
}

/// Draft API: connect a PEER and return the routing id of the new
/// connection; 0 with errno on failure (ENOTSUP for other socket types).
#[no_mangle]
pub unsafe extern "C" fn zmq_connect_peer(s: *mut c_void, addr: *const c_char) -> u32 {
    let r = ffi_boundary!(Err(EFAULT), {
        // SAFETY: zmq.h contract for `s` and `addr`.
        unsafe { socket_and_addr(s, addr) }.and_then(|(socket, addr)| socket.connect_peer(addr).map_err(Into::into))
    });
    match r {
        Ok(rid) => rid,
        Err(e) => {
            crate::boundary::set_errno(e);
            0
        }
    }
}

// Draft RADIO/DISH: a DISH joins and leaves groups.

#[no_mangle]
pub unsafe extern "C" fn zmq_join(s: *mut c_void, group: *const c_char) -> c_int {
    ffi_int!({
        // SAFETY: zmq.h contract for `s` and `group`.
        let (socket, group) = unsafe { socket_and_group(s, group) }?;
        socket.join(group)?;
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_leave(s: *mut c_void, group: *const c_char) -> c_int {
    ffi_int!({
        // SAFETY: zmq.h contract for `s` and `group`.
        let (socket, group) = unsafe { socket_and_group(s, group) }?;
        socket.leave(group)?;
        Ok(0)
    })
}

/// # Safety
/// `s` is NULL or a socket handle; `group` NULL or a NUL-terminated string.
unsafe fn socket_and_group<'a>(s: *mut c_void, group: *const c_char) -> CResult<(&'a Socket, &'a [u8])> {
    // SAFETY: forwarded caller contract.
    let socket = unsafe { SocketHandle::from_raw(s) }?;
    if group.is_null() {
        return Err(EFAULT);
    }
    // SAFETY: non-NULL; zmq.h: a NUL-terminated string.
    Ok((socket, unsafe { std::ffi::CStr::from_ptr(group) }.to_bytes()))
}
