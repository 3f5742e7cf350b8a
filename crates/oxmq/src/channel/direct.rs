//! Caller-thread writes of large copy-mode messages (issue 21, change 2).
//!
//! A large copy-mode send normally costs the application thread a copy of
//! the body into a fresh message (and that buffer's page faults), a
//! hand-off to the I/O thread, and then the kernel's copy. When the
//! connection has nothing queued, the sending thread can instead frame the
//! message and write it from the caller's buffer itself, as a plain socket
//! does: only the kernel copies.
//!
//! A [`DirectPort`] is one connection's write half as both threads see it:
//! the fd and an ownership word. The engine owns the write half while it
//! has anything to write (`ENGINE`) and gives it up (`IDLE`) when its
//! buffers and the out pipe are empty at a message boundary. A sender may
//! take an idle half (`CALLER`), checks that the pipe is still empty (a
//! message it queued since the engine went idle must go first), and writes.
//! An engine that wants to write meanwhile (a PING, a message queued after)
//! marks `WANT` and is woken when the sender lets go. A write the kernel
//! takes only part of leaves its tail in `carry`, which the engine writes
//! before anything else; the half then goes straight back to the engine.
//! `CLOSED`: the engine is gone (or going) and the fd may be closed at any
//! moment after, so a sender never takes it again, and the engine waits
//! for a sender still inside a write before it lets the fd close.
//!
//! Order is kept because a message goes direct only when every earlier one
//! is on the wire, and everything after it waits for the carry.

use super::direct_read::ReadHalf;
use crate::pipe::{Wake, WakeSlot};
use bytes::Bytes;
use std::io::{self, IoSlice};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Bodies at least this large go direct (public as `oxmq::DIRECT_SEND_MIN`). Below it the copy is cheap and
/// the I/O thread's batching (many messages per `sendmsg`) is worth more
/// than the hand-off it costs.
pub const DIRECT_MIN: usize = 64 * 1024;

/// Frames a socket type puts before a message it lets a sender write
/// itself (REQ's empty delimiter, REP's reply envelope), encoded as ZMTP
/// frames with MORE set, written in the same `sendmsg` as the message.
#[derive(Default)]
pub(crate) struct DirectHead {
    bytes: Vec<u8>,
    body_bytes: u64,
}

impl DirectHead {
    pub(crate) fn clear(&mut self) {
        self.bytes.clear();
        self.body_bytes = 0;
    }

    pub(crate) fn push_frame(&mut self, body: &[u8]) {
        oxmq_proto::encode_frame_header(&mut self.bytes, true, false, body.len());
        self.bytes.extend_from_slice(body);
        self.body_bytes += body.len() as u64;
    }

    /// The header of the frame that ends the message, after the others.
    pub(crate) fn push_last_header(&mut self, len: usize) {
        oxmq_proto::encode_frame_header(&mut self.bytes, false, false, len);
    }

    /// The encoded frames.
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Their bodies' length, for the byte counts.
    pub(crate) fn body_bytes(&self) -> u64 {
        self.body_bytes
    }
}

/// How long a blocking send waits for the kernel to take the rest of a
/// message it took part of, before leaving the rest to the I/O thread (a
/// copy, as without this path). A peer that reads keeps the wait at its
/// reading pace, as a plain socket's blocking write; one that stalls costs
/// the send this much once, after which the engine owns the half and sends
/// queue as libzmq's do.
const PARTIAL_WAIT: Duration = Duration::from_millis(10);

/// How long a blocking large send waits for its connection to finish
/// the messages before it (`Core::send_direct`).
pub(crate) const PACE_WAIT: Duration = Duration::from_millis(10);

// The owner (at most one of IDLE = 0, ENGINE, CALLER, CLOSED) and flags.
const IDLE: u32 = 0;
const ENGINE: u32 = 1;
const CALLER: u32 = 2;
const CLOSED: u32 = 4;
/// The engine wanted to write while a sender held the half.
const WANT: u32 = 8;
/// A sender waits for the engine to give the half up (see `pace`).
const WAITER: u32 = 16;

/// One connection's write half, shared by its engine and the socket.
pub(crate) struct DirectPort {
    fd: RawFd,
    state: AtomicU32,
    /// A partial direct write's tail; `has_carry` says one is there.
    carry: Mutex<Option<Bytes>>,
    has_carry: AtomicBool,
    /// Runs the engine (its I/O thread's waker for this connection).
    engine: Arc<dyn Wake>,
    /// Wakes the socket (as the out pipe's reader does at the HWM).
    sender: Arc<WakeSlot>,
    /// The connection's read side, for a receiving thread (`channel::direct_read`).
    pub(crate) read: ReadHalf,
}

/// Where a socket's pipe finds its connection's current port: replaced at
/// each (re)connect, emptied when the connection ends.
#[derive(Default)]
pub(crate) struct DirectSlot {
    port: Mutex<Option<Arc<DirectPort>>>,
}

impl DirectSlot {
    pub(crate) fn get(&self) -> Option<Arc<DirectPort>> {
        lock(&self.port).clone()
    }

    pub(crate) fn set(&self, port: Arc<DirectPort>) {
        *lock(&self.port) = Some(port);
    }

    /// Empty the slot if it still holds `port`.
    pub(crate) fn clear(&self, port: &Arc<DirectPort>) {
        let mut g = lock(&self.port);
        if g.as_ref().is_some_and(|p| Arc::ptr_eq(p, port)) {
            *g = None;
        }
    }
}

// std's, not `crate::sync`'s: the loom models never run a connection.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// What the engine may do after [`DirectPort::engine_enter`].
pub(crate) enum Enter {
    /// Write; first this tail of a frame a sender began, if any.
    Go(Option<Bytes>),
    /// A sender is writing; it wakes the engine when it lets go.
    Held,
}

/// What a sender found (see [`DirectPort::take`]).
pub(crate) enum Take<'a> {
    Held(Held<'a>),
    /// The engine is writing; with `pace`, it wakes the socket when done.
    Busy,
    Closed,
}

impl DirectPort {
    /// A port owned by its engine (which has its greeting's tail or a
    /// HELLO_MSG to write, or will find out at its first write).
    /// `max_msg_size`: the connection's MAXMSGSIZE, for a receiving
    /// thread's checks.
    pub(crate) fn new(
        fd: RawFd,
        max_msg_size: Option<u64>,
        engine: Arc<dyn Wake>,
        sender: Arc<WakeSlot>,
    ) -> Arc<DirectPort> {
        Arc::new(DirectPort {
            fd,
            state: AtomicU32::new(ENGINE),
            carry: Mutex::new(None),
            has_carry: AtomicBool::new(false),
            read: ReadHalf::new(fd, max_msg_size, engine.clone(), sender.clone()),
            engine,
            sender,
        })
    }

    // ---- the engine's side ----

    /// Take the write half before writing anything.
    pub(crate) fn engine_enter(&self) -> Enter {
        let mut s = self.state.load(Ordering::Acquire);
        loop {
            let next = if s & ENGINE != 0 {
                break;
            } else if s & CALLER != 0 {
                s | WANT
            } else if s & CLOSED != 0 {
                // The engine closed it itself and is not writing.
                return Enter::Held;
            } else {
                ENGINE
            };
            match self.state.compare_exchange_weak(s, next, Ordering::Acquire, Ordering::Acquire) {
                Ok(_) if next == ENGINE => break,
                Ok(_) => return Enter::Held,
                Err(actual) => s = actual,
            }
        }
        let carry = if self.has_carry.load(Ordering::Acquire) {
            self.has_carry.store(false, Ordering::Relaxed);
            lock(&self.carry).take()
        } else {
            None
        };
        Enter::Go(carry)
    }

    /// Whether the engine owns the half (to write, or after a carry or a
    /// hand-back it must take up).
    pub(crate) fn engine_holds(&self) -> bool {
        self.state.load(Ordering::Acquire) & ENGINE != 0
    }

    /// The engine has nothing to write, at a message boundary, and the out
    /// pipe was empty when it last looked: a sender may write.
    pub(crate) fn engine_leave(&self) {
        let mut s = self.state.load(Ordering::Relaxed);
        // Only the engine moves the word away from ENGINE.
        while s & ENGINE != 0 {
            match self.state.compare_exchange_weak(s, IDLE, Ordering::Release, Ordering::Relaxed) {
                Ok(_) => {
                    if s & WAITER != 0 {
                        self.sender.wake();
                    }
                    return;
                }
                Err(actual) => s = actual,
            }
        }
    }

    /// The connection ends: no sender takes the half again, and one inside
    /// a write is waited for, so the fd is not closed (and its number
    /// reused) under it. A sender holds the half for one non-blocking write
    /// or at most `PARTIAL_WAIT`.
    pub(crate) fn close(&self) {
        self.read.close();
        let mut s = self.state.load(Ordering::Acquire);
        loop {
            if s & CALLER != 0 {
                std::thread::yield_now();
                s = self.state.load(Ordering::Acquire);
                continue;
            }
            match self.state.compare_exchange_weak(s, CLOSED, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => break,
                Err(actual) => s = actual,
            }
        }
        if s & WAITER != 0 {
            self.sender.wake();
        }
    }

    // ---- the sender's side ----

    /// Take the write half if the engine left it idle. `pace`: if the
    /// engine is writing, ask it to wake the socket when it gives the half
    /// up (the socket's thread waits for its commands meanwhile).
    pub(crate) fn take(&self, pace: bool) -> Take<'_> {
        let mut s = IDLE;
        loop {
            match self.state.compare_exchange(
                s,
                if s == IDLE { CALLER } else { s | WAITER },
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) if s == IDLE => return Take::Held(Held { port: self, carried: false, handed_back: false }),
                Ok(_) => return Take::Busy,
                Err(actual) if actual & CLOSED != 0 => return Take::Closed,
                Err(actual) if actual & ENGINE != 0 && pace && actual & WAITER == 0 => s = actual,
                Err(actual) if actual == IDLE => s = IDLE,
                Err(_) => return Take::Busy,
            }
        }
    }
}

/// A sender's hold on the write half; dropping it gives the half back.
pub(crate) struct Held<'a> {
    port: &'a DirectPort,
    carried: bool,
    handed_back: bool,
}

impl Held<'_> {
    /// The sender found a message of its own still queued: the engine
    /// writes it (it has been woken for it), and wakes the socket when it
    /// gives the half up.
    pub(crate) fn hand_back_for_pacing(mut self) {
        self.handed_back = true;
    }

    /// Write one whole frame (`header`, then `body`) from the caller's
    /// buffers. `false`: the kernel took nothing and nothing was written,
    /// so the message must go through the pipe. `true`: the frame is
    /// written, or its first part is and the rest is the engine's carry.
    /// `wait`: the sender may block a moment for the kernel's room.
    pub(crate) fn write_frame(&mut self, header: &[u8], body: &[u8], wait: bool) -> bool {
        let total = header.len() + body.len();
        let mut done = 0;
        let mut deadline: Option<Instant> = None;
        loop {
            let bufs = remaining(header, body, done);
            let iov = if bufs[0].is_empty() { &bufs[1..] } else { &bufs[..] };
            match crate::fdio::send_nonblocking(self.port.fd, iov) {
                Ok(n) => {
                    done += n;
                    if done == total {
                        return true;
                    }
                    continue;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // A broken connection: the engine finds out for itself. A
                // frame begun is finished into it (and lost with it, as
                // queued messages are); one not begun goes the usual way.
                Err(_) => {
                    if done == 0 {
                        return false;
                    }
                    break;
                }
            }
            if done == 0 {
                return false;
            }
            if !wait {
                break;
            }
            let until = *deadline.get_or_insert_with(|| Instant::now() + PARTIAL_WAIT);
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() || !crate::fdio::wait_writable(self.port.fd, left) {
                break;
            }
        }
        let mut tail = Vec::with_capacity(total - done);
        for b in remaining(header, body, done) {
            tail.extend_from_slice(&b);
        }
        *lock(&self.port.carry) = Some(Bytes::from(tail));
        self.port.has_carry.store(true, Ordering::Release);
        self.carried = true;
        true
    }
}

/// `header` then `body`, past their first `done` bytes.
fn remaining<'b>(header: &'b [u8], body: &'b [u8], done: usize) -> [IoSlice<'b>; 2] {
    if done < header.len() {
        [IoSlice::new(&header[done..]), IoSlice::new(body)]
    } else {
        [IoSlice::new(&[]), IoSlice::new(&body[done - header.len()..])]
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        let port = self.port;
        // A carry hands the half straight to the engine: nothing may be
        // written before the rest of the frame.
        let next = if self.carried {
            ENGINE
        } else if self.handed_back {
            ENGINE | WAITER
        } else {
            IDLE
        };
        let was = port.state.swap(next, Ordering::AcqRel);
        if next != IDLE || was & WANT != 0 {
            port.engine.wake();
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;

    use crate::pipe::WakeCount as Count;

    struct Fixture {
        port: Arc<DirectPort>,
        engine: Arc<Count>,
        sender: Arc<Count>,
        ours: UnixStream,
        peer: UnixStream,
    }

    fn fixture() -> Fixture {
        let (ours, peer) = UnixStream::pair().unwrap();
        ours.set_nonblocking(true).unwrap();
        let engine = Arc::new(Count::default());
        let sender = Arc::new(Count::default());
        let port = DirectPort::new(ours.as_raw_fd(), None, engine.clone(), WakeSlot::with(sender.clone()));
        Fixture { port, engine, sender, ours, peer }
    }

    fn held(port: &DirectPort) -> Held<'_> {
        match port.take(false) {
            Take::Held(h) => h,
            _ => panic!("not idle"),
        }
    }

    fn is_busy(port: &DirectPort, pace: bool) -> bool {
        matches!(port.take(pace), Take::Busy)
    }

    #[test]
    fn only_an_idle_half_is_taken() {
        let f = fixture();
        assert!(is_busy(&f.port, false), "a new port is the engine's");
        assert!(matches!(f.port.engine_enter(), Enter::Go(None)));
        f.port.engine_leave();
        let h = held(&f.port);
        assert!(matches!(f.port.engine_enter(), Enter::Held));
        drop(h);
        assert_eq!(f.engine.get(), 1, "the engine that wanted in is woken");
        assert!(matches!(f.port.engine_enter(), Enter::Go(None)));
        f.port.close();
        assert!(matches!(f.port.take(true), Take::Closed));
        assert_eq!(f.sender.get(), 0);
    }

    #[test]
    fn a_pacing_sender_is_woken_when_the_engine_is_done() {
        let f = fixture();
        assert!(is_busy(&f.port, true));
        assert!(is_busy(&f.port, true), "asking twice is one waiter");
        assert!(matches!(f.port.engine_enter(), Enter::Go(None)), "a waiter does not stop the engine");
        assert_eq!(f.sender.get(), 0);
        f.port.engine_leave();
        assert_eq!(f.sender.get(), 1);
        // Without `pace` nobody asks to be woken.
        assert!(matches!(f.port.engine_enter(), Enter::Go(None)));
        assert!(is_busy(&f.port, false));
        f.port.engine_leave();
        assert_eq!(f.sender.get(), 1);
        // A sender that finds its own message queued hands the half back.
        held(&f.port).hand_back_for_pacing();
        assert_eq!(f.engine.get(), 1, "the engine is woken to write it");
        assert!(is_busy(&f.port, false));
        assert!(matches!(f.port.engine_enter(), Enter::Go(None)));
        f.port.engine_leave();
        assert_eq!(f.sender.get(), 2);
    }

    #[test]
    fn a_whole_write_leaves_no_carry() {
        let mut f = fixture();
        let _ = f.port.engine_enter();
        f.port.engine_leave();
        let body = vec![7u8; 1000];
        assert!(held(&f.port).write_frame(b"\x02\0\0\0\0\0\0\x03\xe8", &body, false));
        assert_eq!(f.engine.get(), 0);
        let mut got = vec![0u8; 1009];
        f.peer.read_exact(&mut got).unwrap();
        assert_eq!(&got[9..], &body[..]);
        let _ = held(&f.port);
    }

    #[test]
    fn a_partial_write_leaves_the_tail_to_the_engine() {
        let mut f = fixture();
        let _ = f.port.engine_enter();
        f.port.engine_leave();
        // Larger than any AF_UNIX buffer: the kernel takes part of it.
        let body: Vec<u8> = (0..8 * 1024 * 1024u32).map(|i| i as u8).collect();
        let header = [0x02u8, 0, 0, 0, 0, 0, 0x80, 0, 0];
        assert!(held(&f.port).write_frame(&header, &body, false));
        assert_eq!(f.engine.get(), 1, "the engine is woken for the carry");
        assert!(is_busy(&f.port, false), "the engine owns the half");
        let Enter::Go(Some(tail)) = f.port.engine_enter() else { panic!("no carry") };
        let mut got = Vec::new();
        let mut buf = vec![0u8; 1 << 16];
        f.peer.set_nonblocking(true).unwrap();
        while let Ok(n) = f.peer.read(&mut buf) {
            got.extend_from_slice(&buf[..n]);
        }
        got.extend_from_slice(&tail);
        assert_eq!(&got[..9], &header[..]);
        assert!(got[9..] == body[..], "written part and carry make the frame");
    }

    #[test]
    fn a_full_buffer_sends_nothing_direct() {
        let f = fixture();
        let filler = vec![0u8; 1 << 20];
        while crate::fdio::send_nonblocking(f.ours.as_raw_fd(), &[IoSlice::new(&filler)]).is_ok() {}
        let _ = f.port.engine_enter();
        f.port.engine_leave();
        assert!(!held(&f.port).write_frame(&[0x02; 9], &filler, false));
        assert_eq!(f.engine.get(), 0);
        let _ = held(&f.port);
    }
}
