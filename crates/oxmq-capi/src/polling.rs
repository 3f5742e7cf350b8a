//! `zmq_poll` over sockets and raw descriptors.

use crate::boundary::{EFAULT, EINVAL};
use crate::handle::SocketHandle;
use oxmq::PollItem;
use std::ffi::{c_int, c_long, c_short, c_void};

/// libzmq's poll item (non-Windows layout).
#[repr(C)]
pub struct zmq_pollitem_t {
    /// A socket, or NULL to poll `fd`.
    pub socket: *mut c_void,
    /// A file descriptor, used when `socket` is NULL.
    pub fd: c_int,
    /// `ZMQ_POLLIN | ZMQ_POLLOUT | ZMQ_POLLERR` wanted.
    pub events: c_short,
    /// What was ready.
    pub revents: c_short,
}

const _: () = assert!(std::mem::size_of::<zmq_pollitem_t>() == 16);

/// Wait until an item is ready or `timeout` ms pass (-1: forever, 0: check
/// only); returns the number of ready items.
#[no_mangle]
pub unsafe extern "C" fn zmq_poll(items: *mut zmq_pollitem_t, nitems: c_int, timeout: c_long) -> c_int {
    ffi_int!({
        if nitems < 0 {
            return Err(EINVAL);
        }
        if nitems == 0 {
            // libzmq sleeps for the timeout with nothing to poll.
            if timeout > 0 {
                std::thread::sleep(std::time::Duration::from_millis(timeout as u64));
            }
            return Ok(0);
        }
        if items.is_null() {
            return Err(EFAULT);
        }
        // SAFETY: non-NULL; zmq.h: `items` points to `nitems` poll items the
        // caller does not touch during the call.
        let items = unsafe { std::slice::from_raw_parts_mut(items, nitems as usize) };
        let mut set = Vec::with_capacity(items.len());
        for it in items.iter() {
            if it.socket.is_null() {
                set.push(PollItem::from_fd(it.fd, it.events));
            } else {
                // SAFETY: a non-NULL `socket` is a handle from zmq_socket (zmq.h contract).
                let s = unsafe { SocketHandle::from_raw(it.socket) }?;
                set.push(PollItem::from_socket(s, it.events));
            }
        }
        let n = oxmq::poll(&mut set, timeout)?;
        for (it, p) in items.iter_mut().zip(set.iter()) {
            it.revents = p.revents();
        }
        Ok(n as c_int)
    })
}
