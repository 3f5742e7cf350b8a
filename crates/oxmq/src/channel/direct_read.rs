//! Caller-thread reads of a round-trip socket's reply (issue 21, change 2,
//! receive side).
//!
//! A REQ blocked for its reply otherwise pays two thread hand-offs: the
//! kernel wakes the I/O thread, which decodes the reply into the pipe and
//! wakes the application thread. When the connection's read side is idle
//! (the engine has nothing buffered, at a message boundary, no unboxing to
//! do) the blocked thread can instead wait on the connection itself, as a
//! plain socket's `recv` does, and decode the one message it waits for.
//!
//! [`ReadHalf`] is the read side's ownership word, shared by the engine and
//! the socket as the write half's is (`channel::direct`): `ENGINE` while the
//! engine reads, `IDLE` when it has nothing buffered, `CALLER` while a
//! receiving thread reads, `CLOSED` when the connection is going. Anything
//! the caller read but will not decode itself (a command such as a PING, a
//! second message, a frame too large for its buffer, a malformed header)
//! goes to the engine as `carry`, which the engine decodes before anything
//! it reads, with the half handed straight to it: order is kept.
//!
//! The engine learns of readability from its poller, which fires for the
//! same arrivals while a caller holds the half. It then only counts a
//! `WANT`; the caller, before it gives the half back idle, proves the
//! socket empty after the last such count (a read that found nothing), or
//! hands the half to the engine.

use crate::bufpool::Placed;
use crate::pipe::{Wake, WakeSlot};
use crate::signaler::Signaler;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

// The owner (one of IDLE = 0, ENGINE, CALLER, CLOSED); the bits above
// count the engine's readiness events while a caller held the half.
const IDLE: u32 = 0;
const ENGINE: u32 = 1;
const CALLER: u32 = 2;
const CLOSED: u32 = 4;
const OWNER: u32 = 7;
/// With ENGINE: a caller handed the half over (the engine reads to
/// WouldBlock, or to the EOF the caller saw).
const HANDED: u32 = 8;
const WANT: u32 = 16;

/// The caller's buffer: a message whose frames all fit is read into it
/// (and its bodies copied out); a larger last frame has its body read
/// straight into a buffer of its own size, as the engine's big frames.
pub(crate) const DIRECT_READ_MAX: usize = 64 * 1024;

/// The largest body a header makes a caller allocate up front (as the
/// engine's `PRERESERVE_MAX`): a larger one, or a lying header, is the
/// engine's, whose buffer grows with the bytes that arrive.
const BIG_BODY_MAX: usize = 64 * 1024 * 1024;

/// One connection's read side as its engine and its socket see it.
pub(crate) struct ReadHalf {
    fd: RawFd,
    /// Checks headers as the engine's session does (its MAXMSGSIZE).
    decoder: oxmq_proto::FrameDecoder,
    state: AtomicU32,
    /// Bytes a caller read and left to the engine (see the module doc).
    carry: Mutex<Option<Vec<u8>>>,
    engine: Arc<dyn Wake>,
    /// Wakes the socket's thread out of a caller's wait when the
    /// connection closes under it.
    socket: Arc<WakeSlot>,
    /// The engine's poller registration, which a caller turns readable
    /// interest off in while it reads (see `Interest`).
    interest: Mutex<Interest>,
}

/// The connection's registration in its I/O thread's epoll set, changed
/// by the engine (writable interest, while a write is blocked) and by a
/// caller (readable interest off while it holds the read side: else the
/// kernel wakes the I/O thread for every arrival the caller reads, and on
/// two cores that thread's wake-up and busy-poll take the CPU the peer
/// needs). Both change it under this lock, so neither undoes the other.
#[derive(Default)]
struct Interest {
    /// The epoll fd and the registration's token, once the engine ran.
    epoll: Option<(RawFd, u64)>,
    writable: bool,
    readable_off: bool,
}

impl Interest {
    /// The registration as mio makes it (edge-triggered; readable with
    /// RDHUP), with readable interest left out while a caller reads.
    fn apply(&self, fd: RawFd) -> std::io::Result<()> {
        let Some((epfd, token)) = self.epoll else { return Ok(()) };
        let mut events = libc::EPOLLET;
        if !self.readable_off {
            events |= libc::EPOLLIN | libc::EPOLLRDHUP;
        }
        if self.writable {
            events |= libc::EPOLLOUT;
        }
        crate::fdio::epoll_modify(epfd, fd, events as u32, token)
    }
}

/// What the engine may do with its read side (`ReadHalf::engine_enter`).
pub(crate) enum ReadEnter {
    /// Read as usual.
    Go,
    /// A caller handed the half over: read until WouldBlock or EOF, after
    /// decoding these bytes it read first, if any.
    Handed(Option<Vec<u8>>),
    /// A caller reads; it hands over or wakes the engine when done.
    Held,
    /// Idle, and nothing to read: the poller's report was of bytes a
    /// caller has read since (or there was none).
    Idle,
}

impl ReadHalf {
    pub(crate) fn new(fd: RawFd, max_msg_size: Option<u64>, engine: Arc<dyn Wake>, socket: Arc<WakeSlot>) -> ReadHalf {
        let decoder = oxmq_proto::FrameDecoder::new(max_msg_size);
        ReadHalf {
            fd,
            decoder,
            state: AtomicU32::new(ENGINE),
            carry: Mutex::new(None),
            engine,
            socket,
            interest: Mutex::default(),
        }
    }

    // ---- the registration ----

    /// The engine's registration: its poller's epoll fd and its token, and
    /// whether it asked for writable readiness. From then on it changes
    /// writable interest through `set_writable`.
    pub(crate) fn bind_poller(&self, epfd: RawFd, token: u64, writable: bool) {
        let mut i = lock(&self.interest);
        i.epoll = Some((epfd, token));
        i.writable = writable;
    }

    /// The engine's writable interest (as `Stream::reregister`).
    pub(crate) fn set_writable(&self, writable: bool) -> std::io::Result<()> {
        let mut i = lock(&self.interest);
        i.writable = writable;
        i.apply(self.fd)
    }

    /// A caller's: readable interest off while it reads, back on after
    /// (which reports readiness already there, so no arrival is missed).
    fn set_readable_off(&self, off: bool) {
        let mut i = lock(&self.interest);
        if i.readable_off != off {
            i.readable_off = off;
            // A failure leaves readable interest on: the engine is then
            // woken for nothing, as without this; never off for good,
            // since turning it on is retried at the next hold.
            let _ = i.apply(self.fd);
        }
    }

    // ---- the engine's side ----

    /// Take the read side before reading. `readable`: the poller reported
    /// an arrival (so a caller holding the half must account for it).
    /// An idle half is taken only when there is something to read: the
    /// poller reports every arrival to the engine too, mostly after a
    /// caller has read it, and an engine holding the half to find nothing
    /// would turn that caller's next receive away.
    pub(crate) fn engine_enter(&self, readable: bool) -> ReadEnter {
        let mut s = self.state.load(Ordering::Acquire);
        if s == IDLE && !(readable && crate::fdio::has_input(self.fd)) {
            return ReadEnter::Idle;
        }
        loop {
            let next = match s & OWNER {
                ENGINE if s & HANDED == 0 => return ReadEnter::Go,
                // Only the engine moves the word on from ENGINE.
                ENGINE => s & !HANDED,
                IDLE => ENGINE,
                CALLER if readable => s + WANT,
                _ => return ReadEnter::Held,
            };
            match self.state.compare_exchange_weak(s, next, Ordering::Acquire, Ordering::Acquire) {
                Ok(_) if s & OWNER == ENGINE => return ReadEnter::Handed(lock(&self.carry).take()),
                Ok(_) if next == ENGINE => return ReadEnter::Go,
                Ok(_) => return ReadEnter::Held,
                Err(actual) => s = actual,
            }
        }
    }

    /// The engine has nothing buffered and is at a message boundary: a
    /// caller may read the next message itself.
    pub(crate) fn engine_leave(&self) {
        let _ = self.state.compare_exchange(ENGINE, IDLE, Ordering::Release, Ordering::Relaxed);
    }

    /// The connection ends: no caller takes the half again, and one inside
    /// its wait is woken and waited for, so the fd is not closed (and its
    /// number reused) under it.
    pub(crate) fn close(&self) {
        let s = self.state.fetch_or(CLOSED, Ordering::AcqRel);
        if s & OWNER == CALLER {
            self.socket.wake();
            while self.state.load(Ordering::Acquire) & CALLER != 0 {
                std::thread::yield_now();
            }
        }
    }

    // ---- the caller's side ----

    /// Take the read side if the engine left it idle.
    pub(crate) fn take(&self) -> Option<ReadHeld<'_>> {
        self.state.compare_exchange(IDLE, CALLER, Ordering::Acquire, Ordering::Relaxed).ok()?;
        self.set_readable_off(true);
        Some(ReadHeld { half: self, seen: CALLER, done: false })
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Why [`ReadHeld::read_message`] returned without a message.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ReadEnd {
    /// The socket's own descriptor fired (a command, another pipe's data,
    /// the connection closing).
    Woken,
    /// The deadline passed.
    TimedOut,
    /// A signal interrupted the wait.
    Interrupted,
    /// The engine has the half: what arrived is not for this thread to
    /// decode (or the connection ended); it reaches the pipe the usual way.
    HandedOver,
}

/// What ends a caller's wait on its connection besides input: the
/// socket's signaler, and a binding's close and wake descriptors (`also`,
/// at most two), which end it as the signaler does.
#[derive(Clone, Copy)]
pub(crate) struct WokenBy<'a> {
    pub(crate) signaler: &'a Signaler,
    pub(crate) also: &'a [RawFd],
}

impl WokenBy<'_> {
    fn wait(self, fd: RawFd, deadline: Option<Instant>) -> std::io::Result<(bool, bool)> {
        self.signaler.wait_with(fd, self.also, deadline, || crate::fdio::has_input(fd))
    }

    /// As `wait`, but the spin tries `read` itself rather than peeking
    /// first (`read`: false on WouldBlock, true once it got something or
    /// failed, which it keeps for the caller).
    fn wait_reading(
        self,
        fd: RawFd,
        deadline: Option<Instant>,
        read: impl FnMut() -> bool,
    ) -> std::io::Result<(bool, bool)> {
        self.signaler.wait_with(fd, self.also, deadline, read)
    }
}

/// A caller's hold on the read side; dropping it gives the half back.
pub(crate) struct ReadHeld<'a> {
    half: &'a ReadHalf,
    /// The word when the socket was last found empty: a `WANT` counted
    /// since is an arrival this thread has not read.
    seen: u32,
    done: bool,
}

/// One frame of a message read by the caller: where its body is in the
/// buffer, and whether another frame follows.
pub(crate) struct FrameAt {
    pub(crate) start: usize,
    pub(crate) len: usize,
    pub(crate) more: bool,
}

impl ReadHeld<'_> {
    /// Wait on the connection (and what `woken_by` names) until one whole
    /// message of data frames is in `buf` (its frames pushed onto
    /// `frames`), or something else happens ([`ReadEnd`]). `buf` is this thread's buffer
    /// of [`DIRECT_READ_MAX`] bytes.
    /// `Ok(Some(body))`: the message's last frame was too large for `buf`
    /// and is this body (not in `frames`).
    pub(crate) fn read_message(
        mut self,
        buf: &mut [u8],
        frames: &mut Vec<FrameAt>,
        woken_by: WokenBy<'_>,
        deadline: Option<Instant>,
    ) -> Result<Option<Placed>, ReadEnd> {
        let mut len = 0;
        loop {
            frames.clear();
            match scan(&buf[..len], &self.half.decoder, frames) {
                Scan::Whole(end) if end == len => {
                    self.give_back_drained(&mut buf[len..]);
                    return Ok(None);
                }
                // The next message (or a command) came with it.
                Scan::Whole(end) => {
                    self.hand_over(&buf[end..len]);
                    return Ok(None);
                }
                Scan::Big { at, body_len } => {
                    return self.read_big(buf, len, at, body_len, woken_by, deadline).map(Some);
                }
                Scan::NotOurs => {
                    self.hand_over(&buf[..len]);
                    return Err(ReadEnd::HandedOver);
                }
                Scan::Partial if len == buf.len() => {
                    self.hand_over(&buf[..len]);
                    return Err(ReadEnd::HandedOver);
                }
                Scan::Partial => {}
            }
            // A read the spin made, with the word as it was just before it.
            let mut spun: Option<(u32, std::io::Result<usize>)> = None;
            let mut found_empty: Option<u32> = None;
            let (fd, state) = (self.half.fd, &self.half.state);
            let waited = woken_by.wait_reading(fd, deadline, || {
                let before = state.load(Ordering::Acquire);
                match crate::fdio::recv_nonblocking(fd, &mut buf[len..]) {
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        found_empty = Some(before);
                        false
                    }
                    r => {
                        spun = Some((before, r));
                        true
                    }
                }
            });
            if let Some(before) = found_empty {
                // As a read that found nothing, below.
                self.seen = before;
            }
            match waited {
                Ok((true, _)) => {}
                Ok((false, true)) | Ok((false, false)) if len > 0 => {
                    // Begun: the rest is the engine's to read.
                    self.hand_over(&buf[..len]);
                    return Err(ReadEnd::HandedOver);
                }
                Ok((false, true)) => return Err(ReadEnd::Woken),
                Ok((false, false)) => return Err(ReadEnd::TimedOut),
                Err(_) if len > 0 => {
                    self.hand_over(&buf[..len]);
                    return Err(ReadEnd::HandedOver);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => return Err(ReadEnd::Interrupted),
                // Any other failure of the wait: the socket's usual wait
                // takes over and reports it.
                Err(_) => return Err(ReadEnd::Woken),
            }
            let (before, got) = match spun {
                Some(read) => read,
                None => (
                    self.half.state.load(Ordering::Acquire),
                    crate::fdio::recv_nonblocking(self.half.fd, &mut buf[len..]),
                ),
            };
            match got {
                Ok(0) => {
                    // The peer closed: the engine reads the EOF itself.
                    self.hand_over(&buf[..len]);
                    return Err(ReadEnd::HandedOver);
                }
                Ok(n) => {
                    len += n;
                    if len < buf.len() {
                        // A short read drained the socket (as the engine
                        // reads it): arrivals counted before are read.
                        self.seen = before;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => self.seen = before,
                Err(_) => {
                    self.hand_over(&buf[..len]);
                    return Err(ReadEnd::HandedOver);
                }
            }
        }
    }

    /// The rest of a last frame too large for the buffer, whose body
    /// begins at `at` in `buf` (`len` bytes read), read into a buffer of
    /// its own. Anything that ends the wait before it is whole hands every
    /// byte read so far to the engine.
    fn read_big(
        &mut self,
        buf: &mut [u8],
        len: usize,
        at: usize,
        body_len: usize,
        woken_by: WokenBy<'_>,
        deadline: Option<Instant>,
    ) -> Result<Placed, ReadEnd> {
        // The message began at `buf[0]`, most likely also the start of the
        // peer's write (a round-trip socket's peer writes one message per
        // `sendmsg`).
        let mut body = Placed::take(body_len, at);
        body.extend_from_slice(&buf[at..len]);
        while body.len() < body_len {
            let ready = matches!(woken_by.wait(self.half.fd, deadline), Ok((true, _)));
            let before = self.half.state.load(Ordering::Acquire);
            let want = body_len - body.len();
            let got = if ready { crate::fdio::recv_into_spare(self.half.fd, body.tail(), want) } else { Ok(0) };
            match got {
                Ok(n) if n > 0 => {
                    if n < want {
                        self.seen = before;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => self.seen = before,
                // Woken, timed out, interrupted, the EOF or an error, with
                // the frame begun: the engine reads on from here.
                _ => {
                    let mut carry = buf[..at].to_vec();
                    carry.extend_from_slice(body.as_mut());
                    self.hand_over(&carry);
                    return Err(ReadEnd::HandedOver);
                }
            }
        }
        self.give_back_drained(&mut buf[at..]);
        Ok(body)
    }

    /// Give the half back idle if no arrival was counted since the socket
    /// was last found empty; otherwise look once more (the count may be
    /// the poller's report of bytes already read) and hand over what is
    /// there.
    fn give_back_drained(&mut self, spare: &mut [u8]) {
        self.rearm();
        if self.half.state.compare_exchange(self.seen, IDLE, Ordering::Release, Ordering::Acquire).is_ok() {
            self.done = true;
            return;
        }
        if spare.is_empty() {
            return self.hand_over(&[]);
        }
        let buf = spare;
        let before = self.half.state.load(Ordering::Acquire);
        match crate::fdio::recv_nonblocking(self.half.fd, buf) {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if self.half.state.compare_exchange(before, IDLE, Ordering::Release, Ordering::Relaxed).is_ok() {
                    self.done = true;
                    return;
                }
                self.hand_over(&[]);
            }
            Ok(n) => {
                // The next message is already here (or the EOF, `n == 0`).
                let rest = buf[..n].to_vec();
                self.hand_over(&rest);
            }
            Err(_) => self.hand_over(&[]),
        }
    }

    /// The engine takes the half (and `bytes`, which come before anything
    /// it reads), and is woken to read until WouldBlock.
    fn hand_over(&mut self, bytes: &[u8]) {
        self.rearm();
        if !bytes.is_empty() {
            *lock(&self.half.carry) = Some(bytes.to_vec());
        }
        self.release(ENGINE | HANDED);
        self.half.engine.wake();
    }

    /// Readable interest back on, while this thread still holds the half:
    /// a closing engine waits for it, so the fd is still this connection's.
    /// An arrival from now on is reported to the engine (and counted as a
    /// `WANT` until the half is given back).
    fn rearm(&mut self) {
        self.half.set_readable_off(false);
    }

    fn release(&mut self, to: u32) {
        self.done = true;
        let mut s = self.half.state.load(Ordering::Relaxed);
        loop {
            // A closing engine waits for the caller bit alone to clear.
            let next = if s & CLOSED != 0 { CLOSED } else { to };
            match self.half.state.compare_exchange_weak(s, next, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => return,
                Err(actual) => s = actual,
            }
        }
    }
}

impl Drop for ReadHeld<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        // Nothing was read: idle again, unless the engine was told of an
        // arrival meanwhile, which is then its to read.
        self.rearm();
        if self.half.state.compare_exchange(self.seen, IDLE, Ordering::Release, Ordering::Relaxed).is_err() {
            self.release(ENGINE | HANDED);
            self.half.engine.wake();
        }
    }
}

enum Scan {
    /// One whole message of data frames, ending at this offset.
    Whole(usize),
    /// Whole frames, then a last frame too large for the buffer whose
    /// header is complete and whose body begins at `at`.
    Big { at: usize, body_len: usize },
    /// The first message is not complete yet (and fits the buffer).
    Partial,
    /// A command, a malformed header, or a message too large to buffer.
    NotOurs,
}

fn scan(bytes: &[u8], decoder: &oxmq_proto::FrameDecoder, frames: &mut Vec<FrameAt>) -> Scan {
    let mut pos = 0;
    loop {
        match decoder.complete_header(&bytes[pos..]) {
            Ok(Some(h)) if !h.command => {
                let start = pos + h.header_len;
                frames.push(FrameAt { start, len: h.body_len, more: h.more });
                pos = start + h.body_len;
                if !h.more {
                    return Scan::Whole(pos);
                }
            }
            Ok(Some(_)) | Err(_) => return Scan::NotOurs,
            Ok(None) => {
                return match decoder.pending_header(&bytes[pos..]) {
                    Some(h) if h.command => Scan::NotOurs,
                    Some(h) if pos + h.header_len + h.body_len > DIRECT_READ_MAX => {
                        if h.more || h.body_len > BIG_BODY_MAX {
                            Scan::NotOurs
                        } else {
                            Scan::Big { at: pos + h.header_len, body_len: h.body_len }
                        }
                    }
                    _ => Scan::Partial,
                };
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;

    use crate::pipe::WakeCount as Count;

    struct Fixture {
        half: ReadHalf,
        engine: Arc<Count>,
        socket: Arc<Count>,
        _ours: UnixStream,
        peer: UnixStream,
    }

    /// A read side the engine has left idle (MAXMSGSIZE 1000).
    fn fixture() -> Fixture {
        fixture_with_max(Some(1000))
    }

    fn fixture_with_max(max: Option<u64>) -> Fixture {
        let (ours, peer) = UnixStream::pair().unwrap();
        ours.set_nonblocking(true).unwrap();
        let engine = Arc::new(Count::default());
        let socket = Arc::new(Count::default());
        let half = ReadHalf::new(ours.as_raw_fd(), max, engine.clone(), WakeSlot::with(socket.clone()));
        assert!(matches!(half.engine_enter(false), ReadEnter::Go), "a new half is the engine's");
        half.engine_leave();
        Fixture { half, engine, socket, _ours: ours, peer }
    }

    fn msg(frames: &[(&[u8], bool)]) -> Vec<u8> {
        let mut out = Vec::new();
        for (body, more) in frames {
            oxmq_proto::encode_frame(&mut out, *more, false, body);
        }
        out
    }

    fn read(f: &Fixture) -> (Result<(), ReadEnd>, Vec<Vec<u8>>) {
        let signaler = Signaler::new().unwrap();
        let mut buf = vec![0u8; DIRECT_READ_MAX];
        let mut frames = Vec::new();
        let held = f.half.take().expect("idle");
        let deadline = Some(Instant::now() + std::time::Duration::from_millis(200));
        let r = held.read_message(&mut buf, &mut frames, WokenBy { signaler: &signaler, also: &[] }, deadline);
        let mut got: Vec<Vec<u8>> = frames.iter().map(|fr| buf[fr.start..fr.start + fr.len].to_vec()).collect();
        let r = r.map(|big| got.extend(big.map(|b| b.freeze().to_vec())));
        (r, got)
    }

    #[test]
    fn the_engine_takes_an_idle_half_only_with_input() {
        let mut f = fixture();
        assert!(matches!(f.half.engine_enter(true), ReadEnter::Idle), "nothing there: stays idle");
        f.peer.write_all(b"x").unwrap();
        assert!(matches!(f.half.engine_enter(true), ReadEnter::Go));
        assert!(f.half.take().is_none(), "the engine's now");
    }

    #[test]
    fn a_caller_reads_one_message_and_gives_the_half_back_idle() {
        let mut f = fixture();
        f.peer.write_all(&msg(&[(b"", true), (b"reply", false)])).unwrap();
        let (r, got) = read(&f);
        assert_eq!(r, Ok(()));
        assert_eq!(got, vec![b"".to_vec(), b"reply".to_vec()]);
        assert_eq!(f.engine.get(), 0, "nothing for the engine");
        assert!(f.half.take().is_some(), "idle again");
    }

    #[test]
    fn what_follows_the_message_is_the_engines() {
        let mut f = fixture();
        let mut bytes = msg(&[(b"first", false)]);
        let second = msg(&[(b"second", false)]);
        bytes.extend_from_slice(&second);
        f.peer.write_all(&bytes).unwrap();
        let (r, got) = read(&f);
        assert_eq!((r, got), (Ok(()), vec![b"first".to_vec()]));
        assert_eq!(f.engine.get(), 1, "the engine is woken for the rest");
        let ReadEnter::Handed(Some(carry)) = f.half.engine_enter(false) else { panic!("not handed over") };
        assert_eq!(carry, second);
    }

    #[test]
    fn commands_large_frames_and_bad_headers_are_left_unread() {
        let cmd = {
            let mut v = Vec::new();
            oxmq_proto::encode_frame(&mut v, false, true, b"\x04PING\x00\x00");
            v
        };
        let over_max = msg(&[(&[1u8; 1001], false)]);
        let reserved = vec![0x40u8, 1, b'x'];
        for bytes in [cmd, over_max, reserved] {
            let mut f = fixture();
            f.peer.write_all(&bytes).unwrap();
            let (r, got) = read(&f);
            assert_eq!(r, Err(ReadEnd::HandedOver));
            assert!(got.is_empty());
            let ReadEnter::Handed(Some(carry)) = f.half.engine_enter(false) else { panic!("not handed over") };
            assert_eq!(carry, bytes, "the engine gets every byte read");
        }
    }

    #[test]
    fn a_large_last_frame_is_read_into_a_buffer_of_its_own() {
        let mut f = fixture_with_max(None);
        let body: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let bytes = msg(&[(b"", true), (&body, false)]);
        let mut peer = f.peer.try_clone().unwrap();
        let writer = std::thread::spawn(move || peer.write_all(&bytes).unwrap());
        let (r, got) = read(&f);
        writer.join().unwrap();
        assert_eq!(r, Ok(()));
        assert_eq!(got.len(), 2);
        assert!(got[0].is_empty());
        assert!(got[1] == body, "the body arrives whole");
        assert_eq!(f.engine.get(), 0);
        // A large frame with MORE after it is the engine's.
        f.peer.write_all(&msg(&[(&body[..70_000], true), (b"", false)])[..1000]).unwrap();
        let (r, _) = read(&f);
        assert_eq!(r, Err(ReadEnd::HandedOver));
    }

    #[test]
    fn a_half_message_at_the_deadline_is_the_engines() {
        let mut f = fixture();
        let bytes = msg(&[(b"", true), (b"reply", false)]);
        f.peer.write_all(&bytes[..4]).unwrap();
        let (r, _) = read(&f);
        assert_eq!(r, Err(ReadEnd::HandedOver));
        let ReadEnter::Handed(Some(carry)) = f.half.engine_enter(false) else { panic!("not handed over") };
        assert_eq!(carry, &bytes[..4]);
        // Nothing at all by the deadline: idle again, nothing handed over.
        let f = fixture();
        assert_eq!(read(&f).0, Err(ReadEnd::TimedOut));
        assert_eq!(f.engine.get(), 0);
        assert!(f.half.take().is_some());
    }

    #[test]
    fn an_arrival_the_engine_was_told_of_is_not_lost_when_the_caller_lets_go() {
        let mut f = fixture();
        let held = f.half.take().unwrap();
        f.peer.write_all(&msg(&[(b"m", false)])).unwrap();
        assert!(matches!(f.half.engine_enter(true), ReadEnter::Held), "counted, not read");
        drop(held);
        assert_eq!(f.engine.get(), 1, "woken to read it");
        assert!(matches!(f.half.engine_enter(false), ReadEnter::Handed(None)));
    }

    #[test]
    fn closing_wakes_a_waiting_caller_and_waits_for_it() {
        let f = fixture();
        std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                let signaler = Signaler::new().unwrap();
                let mut buf = vec![0u8; DIRECT_READ_MAX];
                let held = f.half.take().unwrap();
                // The socket's wake-up stands for its signaler here: the
                // waiter polls until the deadline, then lets go.
                let deadline = Some(Instant::now() + std::time::Duration::from_millis(300));
                held.read_message(&mut buf, &mut Vec::new(), WokenBy { signaler: &signaler, also: &[] }, deadline)
                    .map(|_| ())
            });
            while f.half.state.load(Ordering::Acquire) & CALLER == 0 {
                std::thread::yield_now();
            }
            f.half.close();
            assert_eq!(f.socket.get(), 1, "the socket is woken");
            assert_eq!(f.half.state.load(Ordering::Acquire), CLOSED, "returned only once the caller let go");
            assert_eq!(waiter.join().unwrap(), Err(ReadEnd::TimedOut));
        });
        assert!(f.half.take().is_none(), "never taken again");
    }

    /// A stand-in engine: reads what is there (after any carry), splits
    /// whole single-frame messages off, and leaves the side idle when it
    /// has nothing buffered, as `Engine::read_active` does.
    fn engine_step(half: &ReadHalf, fd: std::os::fd::RawFd, rx: &mut Vec<u8>, out: &mut Vec<u64>) {
        match half.engine_enter(true) {
            ReadEnter::Held | ReadEnter::Idle => return,
            ReadEnter::Go => {}
            ReadEnter::Handed(carry) => {
                if let Some(c) = carry {
                    let rest = std::mem::take(rx);
                    rx.extend_from_slice(&c);
                    rx.extend_from_slice(&rest);
                }
            }
        }
        let mut buf = [0u8; 4096];
        while let Ok(n @ 1..) = crate::fdio::recv_nonblocking(fd, &mut buf) {
            rx.extend_from_slice(&buf[..n]);
        }
        let decoder = oxmq_proto::FrameDecoder::new(None);
        while let Ok(Some(h)) = decoder.complete_header(rx) {
            let body = &rx[h.header_len..h.header_len + h.body_len];
            out.push(u64::from_le_bytes(body[..8].try_into().unwrap()));
            rx.drain(..h.header_len + h.body_len);
        }
        if rx.is_empty() {
            half.engine_leave();
        }
    }

    /// The engine and a receiving thread race for the read side while a
    /// peer writes messages in bursts: every message is read once, by one
    /// of them, each in the order written.
    #[test]
    fn engine_and_caller_racing_lose_and_repeat_nothing() {
        const N: u64 = 3000;
        let f = fixture_with_max(None);
        let fd = f._ours.as_raw_fd();
        let total = std::sync::atomic::AtomicU64::new(0);
        let mut peer = f.peer.try_clone().unwrap();
        let (mut by_engine, mut by_caller) = (Vec::new(), Vec::new());
        let give_up = Instant::now() + std::time::Duration::from_secs(30);
        std::thread::scope(|s| {
            s.spawn(move || {
                let mut burst = Vec::new();
                for i in 0..N {
                    let mut body = i.to_le_bytes().to_vec();
                    body.resize(8 + (i as usize * 7) % 200, 1);
                    oxmq_proto::encode_frame(&mut burst, false, false, &body);
                    if i % 7 == 0 {
                        peer.write_all(&burst).unwrap();
                        burst.clear();
                        std::thread::yield_now();
                    }
                }
                peer.write_all(&burst).unwrap();
            });
            let engine = s.spawn(|| {
                let (mut rx, mut out) = (Vec::new(), Vec::new());
                while total.load(Ordering::Acquire) < N && Instant::now() < give_up {
                    let before = out.len();
                    engine_step(&f.half, fd, &mut rx, &mut out);
                    total.fetch_add((out.len() - before) as u64, Ordering::AcqRel);
                    std::thread::yield_now();
                }
                out
            });
            let signaler = Signaler::new().unwrap();
            let mut buf = vec![0u8; DIRECT_READ_MAX];
            let mut frames = Vec::new();
            while total.load(Ordering::Acquire) < N && Instant::now() < give_up {
                if let Some(held) = f.half.take() {
                    let soon = Some(Instant::now() + std::time::Duration::from_millis(1));
                    if let Ok(None) =
                        held.read_message(&mut buf, &mut frames, WokenBy { signaler: &signaler, also: &[] }, soon)
                    {
                        let fr = &frames[0];
                        by_caller.push(u64::from_le_bytes(buf[fr.start..fr.start + 8].try_into().unwrap()));
                        total.fetch_add(1, Ordering::AcqRel);
                    }
                }
                std::thread::yield_now();
            }
            by_engine = engine.join().unwrap();
        });
        let mut all: Vec<u64> = by_engine.iter().chain(&by_caller).copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..N).collect::<Vec<_>>(), "each message read exactly once");
        assert!(by_engine.windows(2).all(|w| w[0] < w[1]), "the engine's in order");
        assert!(by_caller.windows(2).all(|w| w[0] < w[1]), "the caller's in order");
        assert!(!by_caller.is_empty() && !by_engine.is_empty(), "both read some: the race was run");
    }
}
