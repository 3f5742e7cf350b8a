//! Messages: one frame of a ZeroMQ message.
//!
//! Small bodies live inline in the `Msg` (no allocation, like libzmq's VSM);
//! larger ones are a refcounted [`Bytes`], so cloning, fan-out to many PUB
//! peers, and the hand-over to an I/O thread never copy the payload again.
//! [`Msg::from_owner`] wraps a caller-owned buffer without copying; dropping
//! the last reference runs the owner's `Drop`, which is the release callback.
//! [`Msg::from_lent`] holds a C caller's buffer (pointer, length, free
//! function and hint) in the message itself: no allocation per message, so
//! nothing is allocated on the sending thread and freed on the receiving one.
//! It becomes a refcounted body only when the message is shared.

use bytes::Bytes;
use std::ffi::c_void;
use std::fmt;

/// Bodies up to this many bytes are stored inline.
pub const INLINE_CAPACITY: usize = 38;

/// More frames of the same message follow this one.
pub(crate) const FLAG_MORE: u8 = 0x01;
/// Internal: a subscription travelling from SUB/XSUB to PUB/XPUB (body = topic).
pub(crate) const FLAG_SUBSCRIBE: u8 = 0x02;
/// Internal: a cancelled subscription (body = topic).
pub(crate) const FLAG_CANCEL: u8 = 0x04;
/// Internal: the peer's routing id, written first into a pipe after each handshake.
pub(crate) const FLAG_ROUTING_ID: u8 = 0x08;
/// Internal: the peer's connection properties (ZMTP metadata encoding), written
/// first into an inbound pipe after each handshake; read by `zmq_msg_gets`.
pub(crate) const FLAG_PEER_PROPERTIES: u8 = 0x10;
/// Bookkeeping frames that the HWM does not count as messages.
pub(crate) const FLAGS_UNCOUNTED: u8 = FLAG_ROUTING_ID | FLAG_PEER_PROPERTIES;

/// How a C caller takes back a buffer it lent (`zmq_free_fn`): called once,
/// with the buffer and the caller's hint, on whichever thread drops the body.
pub type FreeFn = unsafe extern "C" fn(data: *mut c_void, hint: *mut c_void);

/// A caller's buffer held by one message, not shared with any other.
struct Lent {
    data: *const u8,
    len: usize,
    /// None: a constant buffer, never released (`zmq_msg_init_data` without a free function).
    free: Option<FreeFn>,
    hint: *mut c_void,
}

// SAFETY: `Msg::from_lent`'s contract: the bytes may be read, and the free
// function called once, from any thread, until that call.
unsafe impl Send for Lent {}
// SAFETY: shared access only reads the lent bytes (see Send above).
unsafe impl Sync for Lent {}

impl AsRef<[u8]> for Lent {
    fn as_ref(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: `from_lent`'s contract: `len` readable bytes at `data` until `free` runs.
        unsafe { std::slice::from_raw_parts(self.data, self.len) }
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        if let Some(free) = self.free {
            // SAFETY: the caller's free function, called exactly once, with its own arguments.
            unsafe { free(self.data as *mut c_void, self.hint) };
        }
    }
}

enum Body {
    Inline {
        len: u8,
        buf: [u8; INLINE_CAPACITY],
    },
    Shared(Bytes),
    /// A lent buffer with one owner: this message. Turned into `Shared` by
    /// [`Msg::make_shareable`] before it is shared; a plain clone copies it.
    Lent(Lent),
    /// Draft RADIO/DISH: a body with its group. Boxed, so that the group
    /// costs nothing to messages without one.
    Grouped(Box<Grouped>),
}

/// Longest group libzmq 4.3.5 accepts (`ZMQ_GROUP_MAX_LENGTH`).
pub const GROUP_MAX_LENGTH: usize = 255;

#[derive(Clone)]
struct Grouped {
    /// The group and a NUL, so C callers can have it as a string.
    group: Box<[u8]>,
    /// Never `Grouped` itself.
    body: Body,
}

impl Body {
    #[inline]
    fn slice(&self) -> &[u8] {
        match self {
            Body::Inline { len, buf } => &buf[..*len as usize],
            Body::Shared(b) => b,
            Body::Lent(l) => l.as_ref(),
            Body::Grouped(g) => g.body.slice(),
        }
    }

    fn copied(data: &[u8]) -> Body {
        Msg::from_slice(data).body
    }

    /// A lent buffer becomes refcounted (one allocation), so that clones share it.
    fn make_shareable(&mut self) {
        match self {
            Body::Lent(_) => {
                if let Body::Lent(l) = std::mem::replace(self, Body::Shared(Bytes::new())) {
                    *self = Body::Shared(Bytes::from_owner(l));
                }
            }
            Body::Grouped(g) => g.body.make_shareable(),
            _ => {}
        }
    }
}

impl Clone for Body {
    /// A lent body has a single owner: its clone is a copy of the bytes
    /// (call [`Msg::make_shareable`] first to share it instead).
    fn clone(&self) -> Body {
        match self {
            Body::Inline { len, buf } => Body::Inline { len: *len, buf: *buf },
            Body::Shared(b) => Body::Shared(b.clone()),
            Body::Lent(l) => Body::copied(l.as_ref()),
            Body::Grouped(g) => Body::Grouped(g.clone()),
        }
    }
}

/// One frame. Cheap to move; cheap to clone when large.
#[derive(Clone)]
pub struct Msg {
    body: Body,
    flags: u8,
    /// Draft API: the peer a SERVER/PEER received this from, or sends it to
    /// (libzmq's `zmq_msg_routing_id`); 0 = none. Never sent on the wire.
    routing_id: u32,
}

impl Default for Msg {
    fn default() -> Self {
        Msg::new()
    }
}

impl Msg {
    /// An empty frame.
    #[inline]
    pub const fn new() -> Msg {
        Msg { body: Body::Inline { len: 0, buf: [0; INLINE_CAPACITY] }, flags: 0, routing_id: 0 }
    }

    /// A frame holding a copy of `data`.
    #[inline]
    pub fn from_slice(data: &[u8]) -> Msg {
        if data.len() <= INLINE_CAPACITY {
            let mut buf = [0u8; INLINE_CAPACITY];
            buf[..data.len()].copy_from_slice(data);
            Msg { body: Body::Inline { len: data.len() as u8, buf }, flags: 0, routing_id: 0 }
        } else if data.len() >= crate::bufpool::MID_MIN {
            Msg { body: Body::Shared(crate::bufpool::copy(data)), flags: 0, routing_id: 0 }
        } else {
            Msg { body: Body::Shared(Bytes::copy_from_slice(data)), flags: 0, routing_id: 0 }
        }
    }

    /// A frame that takes ownership of `data` (no copy unless it is small enough to inline).
    pub fn from_vec(data: Vec<u8>) -> Msg {
        if data.len() <= INLINE_CAPACITY {
            Msg::from_slice(&data)
        } else {
            Msg { body: Body::Shared(Bytes::from(data)), flags: 0, routing_id: 0 }
        }
    }

    /// A frame sharing `data` (refcounted; small bodies are inlined so that the
    /// large buffer they may point into is not kept alive by them).
    #[inline]
    pub fn from_bytes(data: Bytes) -> Msg {
        if data.len() <= INLINE_CAPACITY {
            Msg::from_slice(&data)
        } else {
            Msg { body: Body::Shared(data), flags: 0, routing_id: 0 }
        }
    }

    /// Zero-copy: the frame borrows `owner`'s bytes for as long as any copy of
    /// the frame lives; `owner` is dropped (on whichever thread drops the last
    /// reference, possibly an I/O thread) once the core is done with it.
    pub fn from_owner<T>(owner: T) -> Msg
    where
        T: AsRef<[u8]> + Send + 'static,
    {
        Msg { body: Body::Shared(Bytes::from_owner(owner)), flags: 0, routing_id: 0 }
    }

    /// Zero-copy without an allocation: the frame holds `data`, `len`, `free`
    /// and `hint` itself. `free(data, hint)` runs once when the frame is
    /// done with, on whichever thread drops it (`None`: never released).
    ///
    /// # Safety
    /// `len` bytes at `data` stay readable, from any thread, until `free`
    /// is called (forever when `free` is `None`); `free` may be called from
    /// any thread. `data` may be null only when `len` is 0.
    pub unsafe fn from_lent(data: *const u8, len: usize, free: Option<FreeFn>, hint: *mut c_void) -> Msg {
        Msg { body: Body::Lent(Lent { data, len, free, hint }), flags: 0, routing_id: 0 }
    }

    /// Make clones of this frame share its body instead of copying it: a
    /// lent buffer gets a refcount (one allocation); other bodies are
    /// shareable already.
    pub fn make_shareable(&mut self) {
        self.body.make_shareable();
    }

    /// A copy to hand to a send while the caller keeps this one: a small
    /// shared body is copied inline, so the copy neither shares a refcount
    /// with this frame across threads nor holds its owner (a zero-copy
    /// caller's buffer is released with this frame, not by an I/O thread).
    pub fn clone_detached(&self) -> Msg {
        match &self.body {
            Body::Shared(b) if b.len() <= INLINE_CAPACITY => {
                let mut m = Msg::from_slice(b);
                m.flags = self.flags;
                m.routing_id = self.routing_id;
                m
            }
            _ => self.clone(),
        }
    }

    /// A frame over static data (libzmq's `zmq_send_const`).
    pub fn from_static(data: &'static [u8]) -> Msg {
        Msg { body: Body::Shared(Bytes::from_static(data)), flags: 0, routing_id: 0 }
    }

    /// The body.
    #[inline]
    pub fn as_slice(&self) -> &[u8] {
        self.body.slice()
    }

    /// Body length in bytes.
    #[inline]
    pub fn len(&self) -> usize {
        match &self.body {
            Body::Inline { len, .. } => *len as usize,
            Body::Shared(b) => b.len(),
            Body::Lent(l) => l.len,
            Body::Grouped(g) => g.body.slice().len(),
        }
    }

    /// True when the body is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether more frames of this message follow.
    #[inline]
    pub fn more(&self) -> bool {
        self.flags & FLAG_MORE != 0
    }

    /// Mark whether more frames follow.
    #[inline]
    pub fn set_more(&mut self, more: bool) {
        if more {
            self.flags |= FLAG_MORE;
        } else {
            self.flags &= !FLAG_MORE;
        }
    }

    /// Builder form of [`Msg::set_more`].
    #[inline]
    pub fn with_more(mut self, more: bool) -> Msg {
        self.set_more(more);
        self
    }

    /// The body as shared bytes (copies only inline bodies).
    pub fn into_bytes(self) -> Bytes {
        match self.body {
            Body::Inline { len, buf } => Bytes::copy_from_slice(&buf[..len as usize]),
            Body::Shared(b) => b,
            Body::Lent(l) => Bytes::from_owner(l),
            Body::Grouped(g) => Msg { body: g.body, flags: 0, routing_id: 0 }.into_bytes(),
        }
    }

    /// The body as a vector (copies).
    pub fn to_vec(&self) -> Vec<u8> {
        self.as_slice().to_vec()
    }

    /// Whether the body is stored inline (no heap allocation).
    pub fn is_inline(&self) -> bool {
        matches!(self.body, Body::Inline { .. })
    }

    /// Draft RADIO/DISH: the message's group (empty when it has none, as
    /// libzmq's `zmq_msg_group` gives "").
    pub fn group(&self) -> &[u8] {
        let g = self.group_with_nul();
        &g[..g.len() - 1]
    }

    /// The group followed by a NUL (`zmq_msg_group`'s string).
    pub fn group_with_nul(&self) -> &[u8] {
        match &self.body {
            Body::Grouped(g) => &g.group,
            _ => b"\0",
        }
    }

    /// Draft RADIO/DISH: set the group a RADIO sends this message to. Longer
    /// than [`GROUP_MAX_LENGTH`]: EINVAL, as `zmq_msg_set_group`. An empty
    /// group is libzmq's "no group".
    pub fn set_group(&mut self, group: &[u8]) -> Result<(), crate::error::Error> {
        if group.len() > GROUP_MAX_LENGTH {
            return Err(crate::error::Error::Invalid("group longer than ZMQ_GROUP_MAX_LENGTH"));
        }
        let body = std::mem::replace(&mut self.body, Body::Shared(Bytes::new()));
        let body = match body {
            Body::Grouped(g) => g.body,
            b => b,
        };
        self.body = if group.is_empty() {
            body
        } else {
            let mut g = Vec::with_capacity(group.len() + 1);
            g.extend_from_slice(group);
            g.push(0);
            Body::Grouped(Box::new(Grouped { group: g.into(), body }))
        };
        Ok(())
    }

    /// Builder form of [`Msg::set_group`].
    pub fn with_group(mut self, group: &[u8]) -> Result<Msg, crate::error::Error> {
        self.set_group(group)?;
        Ok(self)
    }

    /// Draft API: the routing id of the SERVER/PEER connection this message
    /// came from (0 when none).
    #[inline]
    pub fn routing_id(&self) -> u32 {
        self.routing_id
    }

    /// Set the routing id a SERVER or PEER sends this message to (0 clears it).
    #[inline]
    pub fn set_routing_id(&mut self, id: u32) {
        self.routing_id = id;
    }

    #[inline]
    pub(crate) fn flags(&self) -> u8 {
        self.flags
    }

    #[inline]
    pub(crate) fn with_flags(mut self, flags: u8) -> Msg {
        self.flags = flags;
        self
    }

    #[inline]
    pub(crate) fn is_subscribe(&self) -> bool {
        self.flags & FLAG_SUBSCRIBE != 0
    }

    #[inline]
    pub(crate) fn is_cancel(&self) -> bool {
        self.flags & FLAG_CANCEL != 0
    }

    #[inline]
    pub(crate) fn is_routing_id(&self) -> bool {
        self.flags & FLAG_ROUTING_ID != 0
    }

    /// Internal messages (subscriptions, routing ids) never reach the user as data.
    #[inline]
    pub(crate) fn is_internal(&self) -> bool {
        self.flags & (FLAG_SUBSCRIBE | FLAG_CANCEL | FLAGS_UNCOUNTED) != 0
    }
}

impl fmt::Debug for Msg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let body = self.as_slice();
        let shown = &body[..body.len().min(32)];
        f.debug_struct("Msg")
            .field("len", &body.len())
            .field("more", &self.more())
            .field("flags", &self.flags)
            .field("body", &String::from_utf8_lossy(shown))
            .finish()
    }
}

impl PartialEq for Msg {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice() && self.more() == other.more()
    }
}

impl From<&[u8]> for Msg {
    // Every `send(&[u8])` goes through here: left to the optimiser it was
    // inlined or not depending on how the crate's code was partitioned.
    #[inline]
    fn from(d: &[u8]) -> Msg {
        Msg::from_slice(d)
    }
}
impl<const N: usize> From<&[u8; N]> for Msg {
    fn from(d: &[u8; N]) -> Msg {
        Msg::from_slice(d)
    }
}
impl From<&str> for Msg {
    fn from(d: &str) -> Msg {
        Msg::from_slice(d.as_bytes())
    }
}
impl From<Vec<u8>> for Msg {
    fn from(d: Vec<u8>) -> Msg {
        Msg::from_vec(d)
    }
}
impl From<String> for Msg {
    fn from(d: String) -> Msg {
        Msg::from_vec(d.into_bytes())
    }
}
impl From<Bytes> for Msg {
    fn from(d: Bytes) -> Msg {
        Msg::from_bytes(d)
    }
}

/// Tests (here and in `pipe`): a zero-copy body that counts its releases.
#[cfg(test)]
pub(crate) struct CountingOwner(pub(crate) Vec<u8>, pub(crate) std::sync::Arc<std::sync::atomic::AtomicUsize>);

#[cfg(test)]
impl AsRef<[u8]> for CountingOwner {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

#[cfg(test)]
impl Drop for CountingOwner {
    fn drop(&mut self) {
        self.1.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::CountingOwner as Owner;
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[test]
    fn small_bodies_are_inline_and_large_are_shared() {
        assert!(Msg::from_slice(&[7; INLINE_CAPACITY]).is_inline());
        assert!(!Msg::from_slice(&[7; INLINE_CAPACITY + 1]).is_inline());
        assert_eq!(Msg::from_slice(b"hello").as_slice(), b"hello");
    }

    #[test]
    fn clone_detached_copies_small_shared_bodies_and_keeps_metadata() {
        let dropped = Arc::new(AtomicUsize::new(0));
        let mut m = Msg::from_owner(Owner(b"tiny".to_vec(), dropped.clone()));
        m.set_more(true);
        m.set_routing_id(7);
        let c = m.clone_detached();
        assert!(c.is_inline());
        assert_eq!((c.as_slice(), c.more(), c.routing_id()), (&b"tiny"[..], true, 7));
        drop(m);
        assert_eq!(dropped.load(Ordering::SeqCst), 1, "the copy does not hold the owner");
        let big = Msg::from_owner(Owner(vec![1; INLINE_CAPACITY + 1], dropped.clone()));
        let c = big.clone_detached();
        assert!(!c.is_inline());
        drop(big);
        assert_eq!(dropped.load(Ordering::SeqCst), 1, "a large body is shared, not copied");
        drop(c);
        assert_eq!(dropped.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn msg_is_at_most_48_bytes() {
        assert!(std::mem::size_of::<Msg>() <= 48, "{}", std::mem::size_of::<Msg>());
    }

    #[test]
    fn owner_is_released_when_last_clone_drops() {
        let released = Arc::new(AtomicUsize::new(0));
        let m = Msg::from_owner(Owner(vec![1; 1000], released.clone()));
        let c = m.clone();
        drop(m);
        assert_eq!(released.load(Ordering::SeqCst), 0);
        assert_eq!(c.len(), 1000);
        drop(c);
        assert_eq!(released.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn group_is_kept_apart_from_the_body() {
        let mut m = Msg::from("body");
        assert_eq!(m.group(), b"");
        m.set_group(b"TV").unwrap();
        assert_eq!((m.group(), m.as_slice(), m.len()), (&b"TV"[..], &b"body"[..], 4));
        assert_eq!(m.group_with_nul(), b"TV\0");
        m.set_group(&[b'g'; GROUP_MAX_LENGTH]).unwrap();
        assert_eq!(m.group().len(), GROUP_MAX_LENGTH);
        assert!(m.set_group(&[b'g'; GROUP_MAX_LENGTH + 1]).is_err());
        assert_eq!(m.group().len(), GROUP_MAX_LENGTH, "a refused group leaves the old one");
        let big = Msg::from_slice(&[1; 100]).with_group(b"g").unwrap();
        assert!(!big.is_inline());
        assert_eq!(big.clone().into_bytes().len(), 100);
        m.set_group(b"").unwrap();
        assert_eq!((m.group(), m.as_slice()), (&b""[..], &b"body"[..]));
    }

    static FREED: std::sync::Mutex<Vec<(usize, usize)>> = std::sync::Mutex::new(Vec::new());

    unsafe extern "C" fn record_free(data: *mut c_void, hint: *mut c_void) {
        FREED.lock().unwrap().push((data as usize, hint as usize));
    }

    fn freed(hint: usize) -> usize {
        FREED.lock().unwrap().iter().filter(|(_, h)| *h == hint).count()
    }

    /// A lent frame over `buf`, released with `hint` (unique per test).
    fn lent(buf: &'static [u8], hint: usize) -> Msg {
        // SAFETY: a static buffer is readable from any thread forever; record_free only records.
        unsafe { Msg::from_lent(buf.as_ptr(), buf.len(), Some(record_free), hint as *mut c_void) }
    }

    #[test]
    fn lent_body_is_held_in_the_message_and_released_once() {
        static BUF: [u8; 1000] = [5; 1000];
        let m = lent(&BUF, 101);
        assert_eq!((m.as_slice().as_ptr(), m.len()), (BUF.as_ptr(), 1000));
        assert!(!m.is_inline());
        // A plain clone copies: the lent buffer keeps one owner.
        let c = m.clone();
        assert_ne!(c.as_slice().as_ptr(), BUF.as_ptr());
        assert_eq!(c.as_slice(), &BUF[..]);
        drop(c);
        assert_eq!(freed(101), 0);
        // Released on the thread that drops it, with the caller's pointer and hint.
        std::thread::spawn(move || drop(m)).join().unwrap();
        assert_eq!(FREED.lock().unwrap().iter().filter(|e| **e == (BUF.as_ptr() as usize, 101)).count(), 1);
    }

    #[test]
    fn shareable_lent_body_is_shared_by_clones_and_released_after_the_last() {
        static BUF: [u8; 100] = [6; 100];
        let mut m = lent(&BUF, 102);
        m.make_shareable();
        let c = m.clone();
        assert_eq!((m.as_slice().as_ptr(), c.as_slice().as_ptr()), (BUF.as_ptr(), BUF.as_ptr()));
        drop(m);
        assert_eq!(freed(102), 0);
        drop(c);
        assert_eq!(freed(102), 1);
        // into_bytes keeps the buffer until the bytes go; a group moves it along.
        let b = lent(&BUF, 103).with_group(b"g").unwrap().into_bytes();
        assert_eq!((b.as_ptr(), freed(103)), (BUF.as_ptr(), 0));
        drop(b);
        assert_eq!(freed(103), 1);
        // Small and empty lent bodies, and a constant one (never released).
        let small = lent(&BUF[..3], 104);
        assert_eq!((small.len(), small.clone().is_inline()), (3, true));
        drop(small);
        // SAFETY: a null pointer with length 0, never read.
        let empty = unsafe { Msg::from_lent(std::ptr::null(), 0, Some(record_free), 105 as *mut c_void) };
        assert!(empty.is_empty() && empty.as_slice().is_empty());
        drop(empty);
        // SAFETY: a static buffer, never released.
        let constant = unsafe { Msg::from_lent(BUF.as_ptr(), 100, None, std::ptr::null_mut()) };
        assert_eq!(constant.clone().as_slice(), &BUF[..]);
        assert_eq!((freed(104), freed(105)), (1, 1));
    }

    #[test]
    fn more_flag_round_trips() {
        let mut m = Msg::from("a");
        assert!(!m.more());
        m.set_more(true);
        assert!(m.more());
        m.set_more(false);
        assert!(!m.more());
    }
}
