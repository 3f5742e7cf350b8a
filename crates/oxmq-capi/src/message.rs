//! `zmq_msg_t`: a Rust value living in the caller's 64 bytes.
//!
//! The 64 bytes hold a [`Slot`]: a tag, then a [`Content`]. The tag tells an
//! initialised message from closed or never-initialised memory, so closing
//! twice, or closing garbage, fails with EFAULT instead of freeing something.
//! `zmq_msg_init*` write a fresh slot without looking at what was there (as
//! libzmq does); everything else checks the tag first.
//!
//! `zmq_msg_data` must return memory the caller may write into, stable for
//! the life of the message. Frames up to `oxmq::INLINE_CAPACITY` bytes live
//! inline in the `Msg` inside the slot (the pointer is into the caller's
//! `zmq_msg_t`, like libzmq's small messages). A larger `zmq_msg_init_size`
//! keeps a `Vec<u8>` the caller fills; it becomes a shared frame (same
//! allocation, no copy) when first sent or copied. `zmq_msg_init_data` holds
//! the caller's pointer, length, free function and hint in the message itself
//! (no allocation); `zmq_msg_copy` gives it a refcount so both copies share
//! it. The free function runs when the last reference goes, on whichever
//! thread drops it.

use crate::boundary::{CResult, Errno, EFAULT, EINVAL};
use crate::handle::SocketHandle;
use crate::socket::clamp_len;
use oxmq::{Msg, PeerProperties, INLINE_CAPACITY};
use std::ffi::CStr;
use std::ffi::{c_char, c_int, c_void};
use std::mem::{align_of, size_of};
use std::sync::Arc;

/// libzmq's opaque message: 64 bytes, 8-byte aligned.
#[repr(C, align(8))]
pub struct zmq_msg_t {
    _opaque: [u8; 64],
}

/// `void zmq_free_fn(void *data, void *hint)`.
pub(crate) type zmq_free_fn = oxmq::FreeFn;

/// "oxmq": an initialised message.
const LIVE: u32 = u32::from_be_bytes(*b"oxmq");
/// A closed message (any other value is treated the same: not initialised).
const CLOSED: u32 = 0;

/// Message properties (`zmq_msg_get`).
const ZMQ_MORE: c_int = 1;
const ZMQ_SRCFD: c_int = 2;
const ZMQ_SHARED: c_int = 3;

#[repr(C)]
struct Slot {
    tag: u32,
    /// `zmq_msg_copy` made another reference to the same (heap) body.
    shared: bool,
    /// The sending peer's connection properties, for `zmq_msg_gets`.
    properties: Option<Arc<PeerProperties>>,
    content: Content,
}

enum Content {
    /// A frame: received, copied, small `init_size`, `init_data`, or a sent-once buffer.
    Frame(Msg),
    /// `zmq_msg_init_size` above the inline capacity: the caller writes into it.
    Buffer(Vec<u8>),
}

const _: () = assert!(size_of::<zmq_msg_t>() == 64 && align_of::<zmq_msg_t>() == 8);
const _: () = assert!(size_of::<Slot>() <= size_of::<zmq_msg_t>());
const _: () = assert!(align_of::<Slot>() <= align_of::<zmq_msg_t>());

impl Content {
    /// Turn a writable buffer into a shared frame in place (same allocation).
    fn freeze(&mut self) -> &mut Msg {
        if let Content::Buffer(v) = self {
            *self = Content::Frame(Msg::from_owner(std::mem::take(v)));
        }
        match self {
            Content::Frame(m) => m,
            Content::Buffer(_) => unreachable!("frozen above"),
        }
    }

    fn len(&self) -> usize {
        match self {
            Content::Frame(m) => m.len(),
            Content::Buffer(v) => v.len(),
        }
    }
}

/// The live slot in `p`, or EFAULT (NULL, misaligned, closed, never initialised).
///
/// # Safety
/// `p` is NULL or points to a readable and writable `zmq_msg_t` that no one
/// else uses during the returned borrow.
unsafe fn live<'a>(p: *const zmq_msg_t) -> CResult<&'a mut Slot> {
    if p.is_null() || (p as usize) % align_of::<zmq_msg_t>() != 0 {
        return Err(EFAULT);
    }
    // SAFETY: non-NULL, aligned, 64 readable bytes (caller). C memory is
    // always initialised bytes to us, so reading the tag is fine whatever it holds.
    let tag = unsafe { (p as *const u32).read() };
    if tag != LIVE {
        return Err(EFAULT);
    }
    // SAFETY: the tag says a `Slot` was written here by `init` and not
    // released; the caller guarantees exclusive use for the borrow.
    Ok(unsafe { &mut *(p as *mut Slot) })
}

/// Write a fresh slot into `p`, ignoring what was there.
///
/// # Safety
/// `p` is NULL or points to a writable `zmq_msg_t`.
unsafe fn init(p: *mut zmq_msg_t, content: Content) -> CResult<()> {
    if p.is_null() || (p as usize) % align_of::<zmq_msg_t>() != 0 {
        return Err(EFAULT);
    }
    // SAFETY: non-NULL, aligned, 64 writable bytes, which fit a Slot (asserted above).
    unsafe { (p as *mut Slot).write(Slot { tag: LIVE, shared: false, properties: None, content }) };
    Ok(())
}

/// Release a live slot: mark it closed and drop its content.
fn release(slot: &mut Slot) {
    slot.tag = CLOSED;
    let content = std::mem::replace(&mut slot.content, Content::Frame(Msg::new()));
    drop(content);
    slot.properties = None;
}

/// Replace a live slot's content (dropping the old one).
fn replace(slot: &mut Slot, content: Content) {
    slot.shared = false;
    slot.properties = None;
    slot.content = content;
}

#[no_mangle]
pub unsafe extern "C" fn zmq_msg_init(msg: *mut zmq_msg_t) -> c_int {
    ffi_int!({
        // SAFETY: `msg` is NULL or a writable zmq_msg_t (zmq.h contract).
        unsafe { init(msg, Content::Frame(Msg::new())) }?;
        Ok(0)
    })
}

/// A zeroed buffer of `size` bytes, or ENOMEM.
fn zeroed(size: usize) -> CResult<Vec<u8>> {
    debug_assert!(size > 0);
    let layout = std::alloc::Layout::array::<u8>(size).map_err(|_| Errno(libc::ENOMEM))?;
    // SAFETY: `layout` has a non-zero size.
    let p = unsafe { std::alloc::alloc_zeroed(layout) };
    if p.is_null() {
        return Err(Errno(libc::ENOMEM));
    }
    // SAFETY: `p` was allocated by the global allocator with exactly this
    // layout (align 1, `size` bytes), all initialised (zeroed).
    Ok(unsafe { Vec::from_raw_parts(p, size, size) })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_msg_init_size(msg: *mut zmq_msg_t, size: usize) -> c_int {
    ffi_int!({
        let content = if size <= INLINE_CAPACITY {
            Content::Frame(Msg::from_slice(&[0u8; INLINE_CAPACITY][..size]))
        } else {
            Content::Buffer(zeroed(size)?)
        };
        // SAFETY: `msg` is NULL or a writable zmq_msg_t (zmq.h contract).
        unsafe { init(msg, content) }?;
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_msg_init_data(
    msg: *mut zmq_msg_t,
    data: *mut c_void,
    size: usize,
    ffn: Option<zmq_free_fn>,
    hint: *mut c_void,
) -> c_int {
    ffi_int!({
        if data.is_null() && size != 0 {
            return Err(EFAULT);
        }
        if msg.is_null() {
            return Err(EFAULT);
        }
        let constant = ffn.is_none();
        // SAFETY: zmq_msg_init_data's contract: `size` bytes at `data` stay
        // readable until `ffn(data, hint)` runs (forever without `ffn`), and
        // the free function may be called from any thread.
        let frame = unsafe { Msg::from_lent(data as *const u8, size, ffn, hint) };
        // SAFETY: `msg` is a writable zmq_msg_t (zmq.h contract).
        unsafe { init(msg, Content::Frame(frame)) }?;
        if constant {
            // libzmq makes a message without a free function a constant
            // message, which it reports as shared (ZMQ_SHARED 1).
            // SAFETY: just initialised above.
            unsafe { live(msg) }?.shared = true;
        }
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_msg_close(msg: *mut zmq_msg_t) -> c_int {
    ffi_int!({
        // SAFETY: `msg` is NULL or a zmq_msg_t (zmq.h contract).
        release(unsafe { live(msg) }?);
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_msg_data(msg: *mut zmq_msg_t) -> *mut c_void {
    ffi_ptr!({
        // SAFETY: `msg` is NULL or a zmq_msg_t (zmq.h contract).
        let slot = unsafe { live(msg) }?;
        Ok(match &mut slot.content {
            Content::Buffer(v) => v.as_mut_ptr() as *mut c_void,
            Content::Frame(m) if m.is_inline() => {
                // The body is inside the caller's zmq_msg_t: derive the pointer
                // from theirs, at the body's offset in the slot.
                let offset = m.as_slice().as_ptr() as usize - msg as usize;
                (msg as *mut u8).wrapping_add(offset) as *mut c_void
            }
            // A heap body: as in libzmq, the caller may write into it.
            Content::Frame(m) => m.as_slice().as_ptr() as *mut c_void,
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_msg_size(msg: *const zmq_msg_t) -> usize {
    ffi_boundary!(0, {
        // SAFETY: `msg` is NULL or a zmq_msg_t (zmq.h contract).
        match unsafe { live(msg) } {
            Ok(slot) => slot.content.len(),
            Err(e) => {
                crate::boundary::set_errno(e);
                0
            }
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_msg_more(msg: *const zmq_msg_t) -> c_int {
    // SAFETY: `msg` is NULL or a zmq_msg_t (zmq.h contract).
    unsafe { zmq_msg_get(msg, ZMQ_MORE) }.max(0)
}

#[no_mangle]
pub unsafe extern "C" fn zmq_msg_get(msg: *const zmq_msg_t, property: c_int) -> c_int {
    ffi_int!({
        // SAFETY: `msg` is NULL or a zmq_msg_t (zmq.h contract).
        let slot = unsafe { live(msg) }?;
        match property {
            ZMQ_MORE => Ok(matches!(&slot.content, Content::Frame(m) if m.more()) as c_int),
            // As libzmq: the `__fd` property of the connection the message
            // came from (tcp, ipc); none (inproc, or built here) is -1, EINVAL.
            ZMQ_SRCFD => slot.properties.as_ref().and_then(|p| p.src_fd()).ok_or(EINVAL),
            ZMQ_SHARED => Ok(slot.shared as c_int),
            _ => Err(EINVAL),
        }
    })
}

/// libzmq has no settable message property.
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_set(msg: *mut zmq_msg_t, property: c_int, optval: c_int) -> c_int {
    ffi_int!({
        // SAFETY: `msg` is NULL or a zmq_msg_t (zmq.h contract).
        unsafe { live(msg) }?;
        let _ = (property, optval);
        Err(EINVAL)
    })
}

/// A connection property of the peer that sent a received message
/// ("Socket-Type", "Identity", "Peer-Address", or its READY metadata).
/// Unknown names, and messages that did not come from a tcp/ipc peer, give
/// NULL with EINVAL, as in libzmq.
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_gets(msg: *const zmq_msg_t, property: *const c_char) -> *const c_char {
    let p: *mut c_char = ffi_ptr!({
        // SAFETY: `msg` is NULL or a zmq_msg_t (zmq.h contract).
        let slot = unsafe { live(msg) }?;
        if property.is_null() {
            return Err(EFAULT);
        }
        // SAFETY: non-NULL; zmq.h: `property` is a NUL-terminated string.
        let name = unsafe { CStr::from_ptr(property) }.to_str().map_err(|_| EINVAL)?;
        let value = slot.properties.as_ref().and_then(|p| p.get_cstr(name)).ok_or(EINVAL)?;
        // The value lives as long as the message holds its properties.
        Ok(value.as_ptr() as *mut c_char)
    });
    p
}

#[no_mangle]
pub unsafe extern "C" fn zmq_msg_copy(dest: *mut zmq_msg_t, src: *mut zmq_msg_t) -> c_int {
    ffi_int!({
        if dest == src {
            // SAFETY: `src` is NULL or a zmq_msg_t (zmq.h contract).
            unsafe { live(src) }?;
            return Ok(0);
        }
        // SAFETY: `src` is NULL or a zmq_msg_t, distinct from `dest` (checked).
        let s = unsafe { live(src) }?;
        let frame = s.content.freeze();
        // Both messages share one body from now on (a lent buffer gets its refcount here).
        frame.make_shareable();
        let copy = frame.clone();
        let shared = !copy.is_inline();
        s.shared |= shared;
        let properties = s.properties.clone();
        // SAFETY: `dest` is NULL or a zmq_msg_t (zmq.h contract), not `src`.
        match unsafe { live(dest) } {
            Ok(d) => replace(d, Content::Frame(copy)),
            // SAFETY: as above; libzmq requires an initialised `dest`, we
            // also accept a closed or fresh one.
            Err(_) => unsafe { init(dest, Content::Frame(copy)) }?,
        }
        // SAFETY: just written above.
        let d = unsafe { live(dest) }?;
        d.shared = shared;
        d.properties = properties;
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_msg_move(dest: *mut zmq_msg_t, src: *mut zmq_msg_t) -> c_int {
    ffi_int!({
        // SAFETY: `src` is NULL or a zmq_msg_t (zmq.h contract).
        let s = unsafe { live(src) }?;
        if dest == src {
            return Ok(0);
        }
        let shared = std::mem::replace(&mut s.shared, false);
        let properties = s.properties.take();
        let content = std::mem::replace(&mut s.content, Content::Frame(Msg::new()));
        // SAFETY: `dest` is NULL or a zmq_msg_t (zmq.h contract), not `src`.
        match unsafe { live(dest) } {
            Ok(d) => replace(d, content),
            // SAFETY: as above (an uninitialised `dest` is accepted).
            Err(_) => unsafe { init(dest, content) }?,
        }
        // SAFETY: just written above.
        let d = unsafe { live(dest) }?;
        d.shared = shared;
        d.properties = properties;
        Ok(0)
    })
}

/// Send the message; on success it becomes empty, on failure it is unchanged.
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_send(msg: *mut zmq_msg_t, s: *mut c_void, flags: c_int) -> c_int {
    ffi_int!({
        // SAFETY: `s` is NULL or a handle from zmq_socket (zmq.h contract).
        let socket = unsafe { SocketHandle::from_raw(s) }?;
        // SAFETY: `msg` is NULL or a zmq_msg_t (zmq.h contract).
        let slot = unsafe { live(msg) }?;
        let frame = slot.content.freeze();
        let len = frame.len();
        if len <= INLINE_CAPACITY {
            // Small: the copy travels inline, so a lent body is released
            // here, on the caller's thread; the original stays until success.
            socket.send(frame.clone_detached(), crate::socket::send_flags(flags))?;
        } else {
            // A heap body moves: no extra reference whose count the sender's
            // and the receiver's threads would both touch. libzmq leaves a
            // failed message with the caller, and the core hands it back.
            let frame = std::mem::replace(frame, Msg::new());
            if let Err((frame, e)) = socket.send_or_keep(frame, crate::socket::send_flags(flags)) {
                slot.content = Content::Frame(frame);
                return Err(e.into());
            }
        }
        replace(slot, Content::Frame(Msg::new()));
        Ok(clamp_len(len))
    })
}

/// Receive a frame into the message (its old content is dropped on success).
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_recv(msg: *mut zmq_msg_t, s: *mut c_void, flags: c_int) -> c_int {
    ffi_int!({
        // SAFETY: `s` is NULL or a handle from zmq_socket (zmq.h contract).
        let socket = unsafe { SocketHandle::from_raw(s) }?;
        // SAFETY: `msg` is NULL or a zmq_msg_t (zmq.h contract).
        let slot = unsafe { live(msg) }?;
        // Kept across the receive: most frames come from the peer of the last one.
        let mut props = slot.properties.take();
        let frame = match socket.recv_with_properties(flags, &mut props) {
            Ok(frame) => frame,
            Err(e) => {
                slot.properties = props;
                return Err(e.into());
            }
        };
        let len = frame.len();
        replace(slot, Content::Frame(frame));
        slot.properties = props;
        Ok(clamp_len(len))
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_sendmsg(s: *mut c_void, msg: *mut zmq_msg_t, flags: c_int) -> c_int {
    // SAFETY: same contract as zmq_msg_send.
    unsafe { zmq_msg_send(msg, s, flags) }
}

#[no_mangle]
pub unsafe extern "C" fn zmq_recvmsg(s: *mut c_void, msg: *mut zmq_msg_t, flags: c_int) -> c_int {
    // SAFETY: same contract as zmq_msg_recv.
    unsafe { zmq_msg_recv(msg, s, flags) }
}

// Draft API (CLIENT/SERVER, PEER): the routing id travels on the message.

/// Address a SERVER/PEER send (libzmq: 0 is EINVAL).
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_set_routing_id(msg: *mut zmq_msg_t, routing_id: u32) -> c_int {
    ffi_int!({
        if routing_id == 0 {
            return Err(EINVAL);
        }
        // SAFETY: `msg` is NULL or a zmq_msg_t (zmq.h contract).
        let slot = unsafe { live(msg) }?;
        slot.content.freeze();
        if let Content::Frame(m) = &mut slot.content {
            m.set_routing_id(routing_id);
        }
        Ok(0)
    })
}

/// The routing id a SERVER/PEER stamped on a received message; 0 when none
/// (and for an invalid message, where libzmq has no error return either).
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_routing_id(msg: *mut zmq_msg_t) -> u32 {
    ffi_boundary!(0, {
        // SAFETY: `msg` is NULL or a zmq_msg_t (zmq.h contract).
        match unsafe { live(msg) } {
            Ok(Slot { content: Content::Frame(m), .. }) => m.routing_id(),
            _ => 0,
        }
    })
}

// Draft RADIO/DISH: message groups.

/// Set the group a RADIO sends the message to (at most
/// `ZMQ_GROUP_MAX_LENGTH` = 255 bytes, else EINVAL, as libzmq).
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_set_group(msg: *mut zmq_msg_t, group: *const c_char) -> c_int {
    ffi_int!({
        // SAFETY: `msg` is NULL or a zmq_msg_t (zmq.h contract).
        let slot = unsafe { live(msg) }?;
        if group.is_null() {
            return Err(EFAULT);
        }
        // SAFETY: non-NULL; zmq.h: `group` is a NUL-terminated string.
        let group = unsafe { CStr::from_ptr(group) }.to_bytes();
        slot.content.freeze();
        match &mut slot.content {
            Content::Frame(m) => m.set_group(group)?,
            Content::Buffer(_) => unreachable!("frozen above"),
        }
        Ok(0)
    })
}

/// The message's group ("" when it has none), valid while the message is.
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_group(msg: *mut zmq_msg_t) -> *const c_char {
    let p: *mut c_char = ffi_ptr!({
        // SAFETY: `msg` is NULL or a zmq_msg_t (zmq.h contract).
        let slot = unsafe { live(msg) }?;
        Ok(match &slot.content {
            Content::Frame(m) => m.group_with_nul().as_ptr() as *mut c_char,
            Content::Buffer(_) => c"".as_ptr() as *mut c_char,
        })
    });
    p
}
