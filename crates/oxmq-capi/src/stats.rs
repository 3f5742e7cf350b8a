//! oxmq's socket statistics in C (`include/oxmq_stats.h`): the core's
//! `Socket::stats` laid out as the header's structs.

use crate::boundary::{EFAULT, EINVAL};
#[cfg(feature = "prometheus")]
use crate::handle::c_str;
use crate::handle::SocketHandle;
use std::ffi::{c_char, c_int, c_void};

/// `oxmq_socket_stats_t`: the core's socket counters in their order, then the peer count.
#[repr(C)]
pub struct oxmq_socket_stats_t {
    counters: [u64; 15],
    peers: u64,
}

/// `oxmq_peer_stats_t`.
#[repr(C)]
pub struct oxmq_peer_stats_t {
    counters: [u64; 10],
    routing_id_size: usize,
    routing_id: [u8; 255],
    endpoint: [c_char; 256],
    remote_address: [c_char; 256],
}

/// Copy `s` into `out` as a C string, cut to fit with its NUL.
fn put_str(out: &mut [c_char; 256], s: &str) {
    let n = s.len().min(out.len() - 1);
    for (o, b) in out.iter_mut().zip(&s.as_bytes()[..n]) {
        *o = *b as c_char;
    }
    out[n] = 0;
}

/// Fill `*stats` with up to `size` bytes of `oxmq_socket_stats_t`.
#[no_mangle]
pub(crate) unsafe extern "C" fn oxmq_socket_stats(
    s: *mut c_void,
    stats: *mut oxmq_socket_stats_t,
    size: usize,
) -> c_int {
    ffi_int!({
        // SAFETY: `s` is NULL or a handle from zmq_socket (header contract).
        let socket = unsafe { SocketHandle::from_raw(s) }?;
        if stats.is_null() {
            return Err(EFAULT);
        }
        let full = std::mem::size_of::<oxmq_socket_stats_t>();
        if size == 0 || size % 8 != 0 || size > full {
            return Err(EINVAL);
        }
        let st = socket.stats()?;
        let mut counters = [0u64; 15];
        for (c, (_, v)) in counters.iter_mut().zip(st.counters()) {
            *c = v;
        }
        let value = oxmq_socket_stats_t { counters, peers: st.peers.len() as u64 };
        // SAFETY: `stats` points to at least `size` writable bytes (header
        // contract), `size <= full`, and the source is a local of `full` bytes.
        unsafe {
            std::ptr::copy_nonoverlapping((&value as *const oxmq_socket_stats_t).cast::<u8>(), stats.cast(), size)
        };
        Ok(0)
    })
}

/// Fill up to `count` entries of `peers`; returns how many peers there are.
#[no_mangle]
pub(crate) unsafe extern "C" fn oxmq_socket_peer_stats(
    s: *mut c_void,
    peers: *mut oxmq_peer_stats_t,
    count: usize,
) -> c_int {
    ffi_int!({
        // SAFETY: `s` is NULL or a handle from zmq_socket (header contract).
        let socket = unsafe { SocketHandle::from_raw(s) }?;
        if peers.is_null() && count != 0 {
            return Err(EFAULT);
        }
        let st = socket.stats()?;
        for (i, p) in st.peers.iter().take(count).enumerate() {
            let mut out = oxmq_peer_stats_t {
                counters: [0; 10],
                routing_id_size: 0,
                routing_id: [0; 255],
                endpoint: [0; 256],
                remote_address: [0; 256],
            };
            for (c, (_, v)) in out.counters.iter_mut().zip(p.counters()) {
                *c = v;
            }
            if let Some(rid) = &p.routing_id {
                let n = rid.len().min(out.routing_id.len());
                out.routing_id[..n].copy_from_slice(&rid[..n]);
                out.routing_id_size = n;
            }
            put_str(&mut out.endpoint, &p.endpoint);
            put_str(&mut out.remote_address, p.remote_address.as_deref().unwrap_or(""));
            // SAFETY: `peers` holds `count` entries (header contract) and `i < count`.
            unsafe { peers.add(i).write(out) };
        }
        c_int::try_from(st.peers.len()).map_err(|_| EINVAL)
    })
}

/// The socket's statistics in Prometheus' text format, labelled
/// `socket="<name>"`, NUL-terminated into `buf` (`*len` bytes). `*len` comes
/// back as the size written, NUL included; a buffer too small is EINVAL
/// with `*len` set to the size needed.
#[cfg(feature = "prometheus")]
#[no_mangle]
pub(crate) unsafe extern "C" fn oxmq_stats_prometheus(
    s: *mut c_void,
    name: *const c_char,
    buf: *mut c_char,
    len: *mut usize,
) -> c_int {
    ffi_int!({
        // SAFETY: `s` is NULL or a handle from zmq_socket (header contract).
        let socket = unsafe { SocketHandle::from_raw(s) }?;
        // SAFETY: NULL is refused; otherwise a NUL-terminated string (header contract).
        let name = unsafe { c_str(name, EFAULT) }?;
        if len.is_null() {
            return Err(EFAULT);
        }
        // SAFETY: non-NULL; the caller's size of `buf`.
        let room = unsafe { *len };
        let text = oxmq::prometheus_text(&[(name, &socket.stats()?)]);
        let need = text.len() + 1;
        // SAFETY: `len` is valid for writes (checked non-NULL above).
        unsafe { *len = need };
        if room < need {
            return Err(EINVAL);
        }
        if buf.is_null() {
            return Err(EFAULT);
        }
        // SAFETY: `buf` holds `room >= need` writable bytes (header contract).
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), buf.cast::<u8>(), text.len());
            *buf.add(text.len()) = 0;
        }
        Ok(0)
    })
}
