//! Lock-free single-producer/single-consumer message pipes.
//!
//! # Algorithm
//!
//! This is the *ypipe* protocol of libzmq (`ypipe.hpp` / `yqueue.hpp`, with the
//! HWM/LWM flow control of `pipe.cpp`), re-derived and re-written for Rust:
//!
//! * **Storage.** An unbounded singly linked list of fixed-size chunks of
//!   [`CHUNK`] message slots. Every frame has a global, ever-increasing index
//!   `i`; it lives in slot `i % CHUNK` of the `i / CHUNK`-th chunk. The writer
//!   links a fresh chunk as soon as it fills the last slot of the current one
//!   (so the chunk holding "the next index" always exists), and the reader
//!   gives a chunk back as soon as it has consumed its last slot. One retired
//!   chunk is parked in a `spare` slot and reused by the writer, so a pipe in
//!   steady state allocates nothing.
//! * **Publication.** `write` fills slots privately; `flush` publishes all of
//!   them at once by advancing the shared `committed` index with a single
//!   release CAS. The reader never looks past `committed`, so a multipart
//!   message flushed after its last frame appears atomically, and `rollback`
//!   can take back unflushed frames without the reader ever noticing.
//! * **Sleeping reader.** When the reader runs dry it sets an `ASLEEP` bit in
//!   `committed` with a CAS that only succeeds if the writer has published
//!   nothing new since the reader last looked. The writer's flush CAS (which
//!   expects the index *without* the bit) then fails once, learns the reader
//!   sleeps, installs the new index (clearing the bit) and wakes the reader.
//!   Because both sides go through read-modify-writes on the same atomic,
//!   exactly one of "the reader sees the new data" and "the writer sees the
//!   sleep mark" happens: no lost wake-up, and no wake-up (no syscall) while
//!   the reader is awake. This is ypipe's "CAS the last-flushed pointer
//!   against NULL" trick, with a flag bit instead of a NULL pointer.
//! * **Flow control.** The writer counts whole messages written; the reader
//!   counts messages read and publishes its count every `lwm` messages and
//!   whenever it runs dry (libzmq's `activate_write` cadence). The writer
//!   caches the published count and reloads it only when its cached view says
//!   the pipe is full; it then marks itself waiting and re-checks (a Dekker /
//!   store-buffer handshake with `SeqCst` fences on both sides), and the
//!   reader wakes it at its next publication point.
//! * **Termination.** Each end announces its departure, wakes the other end
//!   unconditionally, and disposes of the frames it owns. The index ranges
//!   owned by each side are disjoint (see [`Core`]), and the chunk memory that
//!   both ends may still hold is released by the last `Arc<Core>` owner.

use crate::msg::{Msg, FLAGS_UNCOUNTED, FLAG_MORE};
use crate::sync::{fence, AtomicBool, AtomicPtr, AtomicU64, Mutex, MutexGuard, Ordering};
use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::ptr;
use std::sync::Arc;

/// Wakes the owner of one end of a pipe: a socket (its mailbox signaler) or an I/O-thread engine.
pub(crate) trait Wake: Send + Sync {
    fn wake(&self);
}

/// A late-bound waker: the owner of a pipe end may change (inproc bind after
/// connect, an engine replaced on reconnect). Only touched on the slow path.
pub(crate) struct WakeSlot {
    inner: Mutex<WakeInner>,
}

struct WakeInner {
    waker: Option<Arc<dyn Wake>>,
    /// A wake-up was requested while no waker was installed.
    pending: bool,
}

impl WakeSlot {
    pub(crate) fn new() -> Arc<WakeSlot> {
        Arc::new(WakeSlot { inner: Mutex::new(WakeInner { waker: None, pending: false }) })
    }
    pub(crate) fn with(w: Arc<dyn Wake>) -> Arc<WakeSlot> {
        Arc::new(WakeSlot { inner: Mutex::new(WakeInner { waker: Some(w), pending: false }) })
    }
    /// Install the owner's waker; if a wake-up was requested while empty, deliver it now.
    pub(crate) fn set(&self, w: Arc<dyn Wake>) {
        let deliver = {
            let mut g = self.lock();
            g.waker = Some(w.clone());
            std::mem::replace(&mut g.pending, false)
        };
        // Called outside the lock: a waker may take its own locks.
        if deliver {
            w.wake();
        }
    }
    /// Remove the installed waker (wake-ups are remembered until the next `set`).
    pub(crate) fn clear(&self) {
        self.lock().waker = None;
    }
    pub(crate) fn wake(&self) {
        let w = {
            let mut g = self.lock();
            match &g.waker {
                Some(w) => Some(w.clone()),
                None => {
                    g.pending = true;
                    None
                }
            }
        };
        if let Some(w) = w {
            w.wake();
        }
    }
    /// Whether a wake-up is waiting for a waker to be installed.
    #[allow(dead_code)]
    pub(crate) fn is_pending(&self) -> bool {
        self.lock().pending
    }
    fn lock(&self) -> MutexGuard<'_, WakeInner> {
        // A panicking waker cannot leave `WakeInner` inconsistent.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A CONFLATE pipe's slot; a panic elsewhere cannot leave an `Option` inconsistent.
fn lock(m: &Mutex<Option<Msg>>) -> MutexGuard<'_, Option<Msg>> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Slots per chunk (libzmq's `message_pipe_granularity`). ~12 KiB with 48-byte `Msg`s.
const CHUNK: usize = 256;
const CHUNK_U64: u64 = CHUNK as u64;

/// `committed` bit: the reader found the pipe empty and wants a wake-up.
const ASLEEP: u64 = 1 << 63;
/// `committed` bit: the reader has been dropped.
const READER_GONE: u64 = 1 << 62;
const IDX_MASK: u64 = READER_GONE - 1;

struct Chunk {
    slots: [UnsafeCell<MaybeUninit<Msg>>; CHUNK],
    /// The following chunk. Written by the writer only, before any flush that
    /// publishes an index in the following chunk; read by the reader (or the
    /// reader's drop) only after acquiring such an index.
    next: AtomicPtr<Chunk>,
}

impl Chunk {
    fn alloc() -> *mut Chunk {
        Box::into_raw(Box::new(Chunk {
            slots: [const { UnsafeCell::new(MaybeUninit::uninit()) }; CHUNK],
            next: AtomicPtr::new(ptr::null_mut()),
        }))
    }

    /// # Safety
    /// `c` must point to a live chunk; `i < CHUNK`.
    #[inline]
    unsafe fn slot(c: *mut Chunk, i: usize) -> *mut Msg {
        debug_assert!(i < CHUNK);
        // SAFETY: `c` is live (caller); `addr_of!` avoids creating a reference
        // to the whole chunk, whose other slots the peer may be accessing.
        unsafe {
            UnsafeCell::raw_get(ptr::addr_of!((*c).slots).cast::<UnsafeCell<MaybeUninit<Msg>>>().add(i)).cast::<Msg>()
        }
    }

    /// # Safety
    /// `c` came from `Chunk::alloc`, is not reachable by anyone else, and its
    /// slots hold no live messages.
    unsafe fn free(c: *mut Chunk) {
        // SAFETY: per the contract; `MaybeUninit` slots are not dropped.
        drop(unsafe { Box::from_raw(c) });
    }
}

/// Pads its contents to its own cache line(s) to avoid false sharing.
#[repr(align(128))]
struct Padded<T>(T);

/// State shared by both ends.
///
/// Ownership of frame indices (`R` = reader's next index, `C` = committed
/// index, `W` = writer's next index; `R <= C <= W` always):
/// * `[R, C)` flushed frames: owned by the reader (it alone reads or drops them);
/// * `[C, W)` unflushed frames: owned by the writer (it alone writes, rolls back);
/// * chunks wholly below `chunk(C)` (i.e. holding only indices `< C` rounded
///   down to a chunk boundary) belong to the reader; `chunk(C)` and later
///   chunks belong to the writer's chain (the reader may still read slots of
///   `chunk(C)` below `C`, but never frees it). `C` changes only by the
///   writer's flush CAS, so `chunk(C)` can never be freed under the writer.
struct Core {
    /// Index part: number of frames ever published (`C`); only the writer
    /// changes it, only increasing, with a Release CAS in `flush`. Bit
    /// `ASLEEP`: set by the reader (CAS, only while `idx == R`) when it runs
    /// dry; cleared by the writer's next successful flush CAS, which then
    /// wakes the reader. Bit `READER_GONE`: set once by the reader's drop
    /// (`fetch_or`), which freezes `C` for good (every later flush CAS fails).
    committed: Padded<AtomicU64>,
    /// Messages read, as published by the reader (every `lwm` messages and
    /// when it runs dry). Only the reader stores; the writer loads it when its
    /// cached copy says the pipe is full.
    read_count: Padded<AtomicU64>,
    /// The writer found the pipe full and wants a wake-up. Set (and cleared
    /// when it finds room after all) only by the writer; cleared by the reader
    /// with a `swap` that elects it to call `writer_wake`.
    writer_waiting: AtomicBool,
    /// Reader publication interval; written by `set_hwm` (either end),
    /// read Relaxed by the reader (staleness is harmless, see `PipeReader::read`).
    lwm: AtomicU64,
    /// The HWM in messages (0 = none). Either end may change it (inproc
    /// learns the binder's RCVHWM after a connect-first pipe exists); the
    /// writer reads it Relaxed in `check_write`: a stale value only moves the
    /// limit by the messages written meanwhile.
    hwm: AtomicU64,
    /// Set (Release) by the writer's drop after it disposed of its frames.
    writer_gone: AtomicBool,
    /// One retired chunk kept for reuse. Exchanged with AcqRel `swap`s, which
    /// also hand over the chunk's memory between the two threads.
    spare: AtomicPtr<Chunk>,
    /// The writer's remaining chain (`chunk(C)` after its final rollback),
    /// stored by the writer's drop, freed by `Core::drop`.
    writer_chain: AtomicPtr<Chunk>,
    reader_wake: Arc<WakeSlot>,
    writer_wake: Arc<WakeSlot>,
    /// CONFLATE pipes (see [`pipe_conflate`]): the one message kept. Boxed
    /// so ordinary pipes keep their field layout (one pointer more).
    last: Option<Box<Mutex<Option<Msg>>>>,
}

impl Drop for Core {
    fn drop(&mut self) {
        // Both ends are gone (we own the last `Arc`, whose drop synchronizes
        // with theirs). Their frames were dropped by them; only memory is left.
        // Plain loads rather than `get_mut` (which loom's atomics lack); we
        // are the only owner, so Relaxed reads the final values.
        let mut c = self.writer_chain.load(Ordering::Relaxed);
        while !c.is_null() {
            // SAFETY: chunks from `writer_chain` on are reachable only from
            // here now; they were allocated by `Chunk::alloc` and hold no live
            // frames (the writer rolled back, the reader dropped `[R, C)`).
            unsafe {
                let next = (*c).next.load(Ordering::Relaxed);
                Chunk::free(c);
                c = next;
            }
        }
        let s = self.spare.load(Ordering::Relaxed);
        if !s.is_null() {
            // SAFETY: the spare chunk is owned by nobody else and holds no frames.
            unsafe { Chunk::free(s) };
        }
    }
}

fn lwm_for(hwm: usize) -> u64 {
    if hwm == 0 {
        u64::MAX
    } else {
        // libzmq's default: (hwm + 1) / 2, so `lwm <= hwm` and `hwm - lwm <= lwm`.
        (hwm as u64).div_ceil(2)
    }
}

/// Create a pipe carrying frames from one writer to one reader. `hwm` counts whole
/// messages (0 = unlimited). `reader_wake` is woken when data arrives while the reader
/// sleeps or the writer goes away; `writer_wake` when room appears while the writer waits
/// at the HWM, or the reader goes away.
pub(crate) fn pipe(hwm: usize, reader_wake: Arc<WakeSlot>, writer_wake: Arc<WakeSlot>) -> (PipeWriter, PipeReader) {
    new_pipe(hwm, reader_wake, writer_wake, false)
}

/// A CONFLATE pipe (libzmq's `ypipe_conflate`): it holds only the frame
/// written last, so the reader gets the newest message and older ones are
/// dropped; no HWM. Only whole single-frame messages make sense on it (of a
/// multipart message only the last frame survives, as in libzmq). Each write
/// replaces the kept frame under a lock; `committed` then only counts writes,
/// so flushing, sleeping and waking work as for the ordinary pipe.
pub(crate) fn pipe_conflate(reader_wake: Arc<WakeSlot>, writer_wake: Arc<WakeSlot>) -> (PipeWriter, PipeReader) {
    new_pipe(0, reader_wake, writer_wake, true)
}

fn new_pipe(
    hwm: usize,
    reader_wake: Arc<WakeSlot>,
    writer_wake: Arc<WakeSlot>,
    conflate: bool,
) -> (PipeWriter, PipeReader) {
    let first = Chunk::alloc();
    let core = Arc::new(Core {
        committed: Padded(AtomicU64::new(0)),
        read_count: Padded(AtomicU64::new(0)),
        writer_waiting: AtomicBool::new(false),
        lwm: AtomicU64::new(lwm_for(hwm)),
        hwm: AtomicU64::new(hwm as u64),
        writer_gone: AtomicBool::new(false),
        spare: AtomicPtr::new(ptr::null_mut()),
        writer_chain: AtomicPtr::new(ptr::null_mut()),
        reader_wake,
        writer_wake,
        last: conflate.then(|| Box::new(Mutex::new(None))),
    });
    let w = PipeWriter {
        conflate,
        core: core.clone(),
        back: first,
        write_idx: 0,
        flush_chunk: first,
        flushed_idx: 0,
        msgs_written: 0,
        msgs_flushed: 0,
        peer_read: 0,
    };
    let r = PipeReader { core, front: first, read_idx: 0, avail: 0, msgs_read: 0, published: 0, conflate };
    (w, r)
}

pub(crate) struct PipeWriter {
    core: Arc<Core>,
    /// A CONFLATE pipe: frames go to `core.last`, not to the chunks.
    conflate: bool,
    /// `chunk(write_idx)`.
    back: *mut Chunk,
    /// Next index to write (`W`).
    write_idx: u64,
    /// `chunk(flushed_idx)`.
    flush_chunk: *mut Chunk,
    /// Last published index (`C`, as the writer knows it exactly).
    flushed_idx: u64,
    /// Whole messages written (flushed or not).
    msgs_written: u64,
    /// Whole messages covered by `flushed_idx`.
    msgs_flushed: u64,
    /// Cached copy of `core.read_count`.
    peer_read: u64,
}

// SAFETY: the raw chunk pointers are only dereferenced by this end, under the
// ownership rules documented on `Core`; everything shared is atomic or locked.
// Moving the writer to another thread moves that exclusive role with it.
unsafe impl Send for PipeWriter {}

impl PipeWriter {
    /// Whether a new message may be started: the reader is alive and, when
    /// `hwm > 0`, messages written minus messages read (as last published by
    /// the reader, at least every `lwm` messages and whenever it runs dry)
    /// is below the HWM. A `false` due to the HWM leaves the writer marked
    /// "waiting": `writer_wake` fires once the reader has drained to the LWM.
    /// Unflushed messages count too, so flush before waiting for that wake.
    pub(crate) fn check_write(&mut self) -> bool {
        if self.is_reader_gone() {
            return false;
        }
        let hwm = self.core.hwm.load(Ordering::Relaxed);
        if hwm == 0 {
            return true;
        }
        if self.msgs_written - self.peer_read < hwm {
            return true;
        }
        // Cached view says full: refresh (Relaxed: the count carries no data,
        // slot memory is handed over via `committed` / `spare`).
        self.peer_read = self.core.read_count.0.load(Ordering::Relaxed);
        if self.msgs_written - self.peer_read < hwm {
            return true;
        }
        // Store-buffer handshake with `PipeReader::publish`: we store
        // `waiting`, fence, load the count; the reader stores the count,
        // fences, loads `waiting`. With SeqCst fences at least one side sees
        // the other's store, so either we see the room or the reader sees us.
        self.core.writer_waiting.store(true, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        self.peer_read = self.core.read_count.0.load(Ordering::Relaxed);
        if self.msgs_written - self.peer_read < hwm {
            // Room after all; withdraw the request (a concurrent reader swap
            // may still wake us once: a harmless spurious wake-up).
            self.core.writer_waiting.store(false, Ordering::Relaxed);
            return true;
        }
        false
    }

    /// Store a frame privately; it becomes visible at the next `flush`.
    #[inline]
    pub(crate) fn write(&mut self, msg: Msg) {
        if self.conflate {
            return self.write_conflated(msg);
        }
        // Routing-id and peer-property frames are bookkeeping, not messages:
        // libzmq's HWM ignores them.
        let counted = msg.flags() & (FLAG_MORE | FLAGS_UNCOUNTED) == 0;
        let i = (self.write_idx % CHUNK_U64) as usize;
        // SAFETY: `back` is `chunk(write_idx)`, live and owned by the writer's
        // chain; slot `write_idx` is beyond `C`, so the reader never touches
        // it, and it is empty (never written, or consumed / rolled back).
        unsafe { Chunk::slot(self.back, i).write(msg) };
        self.write_idx += 1;
        if counted {
            self.msgs_written += 1;
        }
        if i + 1 == CHUNK {
            self.grow();
        }
    }

    /// CONFLATE: replace the kept frame. Taking the index one step lets
    /// `flush` publish it (and wake a sleeping reader) as any write.
    #[cold]
    fn write_conflated(&mut self, msg: Msg) {
        if let Some(last) = &self.core.last {
            let old = lock(last).replace(msg);
            drop(old);
        }
        self.write_idx += 1;
    }

    /// Link a chunk after `back` (which just became full) and move to it.
    #[cold]
    fn grow(&mut self) {
        let mut c = self.core.spare.swap(ptr::null_mut(), Ordering::AcqRel);
        if c.is_null() {
            c = Chunk::alloc();
        } else {
            // SAFETY: the swap made us the sole owner of the spare chunk
            // (Acquire: the reader's last accesses to it happen-before).
            unsafe { (*c).next.store(ptr::null_mut(), Ordering::Relaxed) };
        }
        // SAFETY: `back` is live and in the writer's chain. Release pairs with
        // the reader's Acquire load; publication is also covered by the
        // Release flush CAS of any index in the new chunk.
        unsafe { (*self.back).next.store(c, Ordering::Release) };
        self.back = c;
    }

    /// Drop all written-but-unflushed frames.
    pub(crate) fn rollback(&mut self) {
        if self.write_idx == self.flushed_idx {
            return;
        }
        if self.conflate {
            // The unflushed frame replaced the kept one: both are gone.
            if let Some(last) = &self.core.last {
                let old = lock(last).take();
                drop(old);
            }
            self.write_idx = self.flushed_idx;
            return;
        }
        let mut c = self.flush_chunk;
        let mut idx = self.flushed_idx;
        while idx < self.write_idx {
            let i = (idx % CHUNK_U64) as usize;
            // SAFETY: `[C, W)` is owned by the writer, initialized by `write`,
            // and dropped exactly once here (`write_idx` is reset below).
            unsafe { ptr::drop_in_place(Chunk::slot(c, i)) };
            idx += 1;
            if i + 1 == CHUNK {
                // SAFETY: `c` is full, so `grow` linked its successor.
                c = unsafe { (*c).next.load(Ordering::Relaxed) };
            }
        }
        // Unlink and retire the chunks after `flush_chunk`. The reader never
        // reads `flush_chunk.next`: that needs `C` past the end of `chunk(C)`.
        // SAFETY: `flush_chunk` is live, in the writer's chain.
        let mut c = unsafe { (*self.flush_chunk).next.swap(ptr::null_mut(), Ordering::Relaxed) };
        while !c.is_null() {
            // SAFETY: chunks after `chunk(C)` are private to the writer.
            let next = unsafe { (*c).next.load(Ordering::Relaxed) };
            self.retire(c);
            c = next;
        }
        self.back = self.flush_chunk;
        self.write_idx = self.flushed_idx;
        self.msgs_written = self.msgs_flushed;
    }

    fn retire(&mut self, c: *mut Chunk) {
        let old = self.core.spare.swap(c, Ordering::AcqRel);
        if !old.is_null() {
            // SAFETY: the swap gave us exclusive ownership of the previous spare.
            unsafe { Chunk::free(old) };
        }
    }

    /// Publish everything written so far; wakes the reader iff it was asleep.
    #[inline]
    pub(crate) fn flush(&mut self) {
        if self.write_idx == self.flushed_idx {
            return;
        }
        // Fast path expects "reader awake and alive": exactly `flushed_idx`.
        let mut expected = self.flushed_idx;
        loop {
            // Release: the frames (and chunk links) written before this flush
            // become visible to the reader's Acquire load of `committed`.
            match self.core.committed.0.compare_exchange(expected, self.write_idx, Ordering::Release, Ordering::Relaxed)
            {
                Ok(prev) => {
                    self.flushed_idx = self.write_idx;
                    self.flush_chunk = self.back;
                    self.msgs_flushed = self.msgs_written;
                    if prev & ASLEEP != 0 {
                        // We cleared the mark: the reader is now awake by our decree.
                        self.core.reader_wake.wake();
                    }
                    return;
                }
                Err(actual) if actual & READER_GONE != 0 => {
                    // Nobody will ever read: discard instead of publishing.
                    self.rollback();
                    return;
                }
                // Only the ASLEEP bit can differ (the index is ours alone).
                Err(actual) => expected = actual,
            }
        }
    }

    pub(crate) fn is_reader_gone(&self) -> bool {
        self.core.committed.0.load(Ordering::Relaxed) & READER_GONE != 0
    }

    pub(crate) fn set_hwm(&mut self, hwm: usize) {
        self.core.set_hwm(hwm);
    }

    /// The pipe's HWM in messages (0: none).
    pub(crate) fn hwm(&self) -> usize {
        self.core.hwm.load(Ordering::Relaxed) as usize
    }

    /// The slot used to wake *this* writer (its owner may re-point it).
    pub(crate) fn writer_wake(&self) -> &Arc<WakeSlot> {
        &self.core.writer_wake
    }
}

impl Drop for PipeWriter {
    fn drop(&mut self) {
        // Unflushed frames are discarded; the chain shrinks to `chunk(C)`.
        self.rollback();
        self.core.writer_chain.store(self.back, Ordering::Release);
        // Release: the last flush happens-before a reader that sees the flag.
        self.core.writer_gone.store(true, Ordering::Release);
        self.core.reader_wake.wake();
    }
}

pub(crate) struct PipeReader {
    core: Arc<Core>,
    /// A CONFLATE pipe: `avail` stays at `read_idx`, so every read takes the slow path.
    conflate: bool,
    /// `chunk(read_idx)`.
    front: *mut Chunk,
    /// Next index to read (`R`).
    read_idx: u64,
    /// Cached index part of `committed` (`R <= avail <= C`).
    avail: u64,
    msgs_read: u64,
    /// Last value stored into `core.read_count`.
    published: u64,
}

// SAFETY: as for `PipeWriter`: the chunk pointer is used only by this end,
// under the ownership rules documented on `Core`.
unsafe impl Send for PipeReader {}

impl Core {
    fn set_hwm(&self, hwm: usize) {
        if self.last.is_some() {
            // CONFLATE pipes ignore SNDHWM/RCVHWM, as libzmq's do.
            return;
        }
        self.lwm.store(lwm_for(hwm), Ordering::Relaxed);
        self.hwm.store(hwm as u64, Ordering::Relaxed);
    }
}

impl PipeReader {
    /// Change the pipe's HWM from the reading end (see `Core::hwm`).
    pub(crate) fn set_hwm(&mut self, hwm: usize) {
        self.core.set_hwm(hwm);
    }

    /// The next flushed frame, or `None` (the reader is then marked asleep
    /// and `reader_wake` fires at the next flush or when the writer goes).
    #[inline]
    pub(crate) fn read(&mut self) -> Option<Msg> {
        if self.read_idx == self.avail {
            if self.conflate {
                return self.read_conflated();
            }
            if !self.refill() {
                return None;
            }
        }
        let i = (self.read_idx % CHUNK_U64) as usize;
        // SAFETY: `read_idx < avail <= C`, so the slot was initialized by the
        // writer and published by a Release flush we acquired in `refill`;
        // `[R, C)` belongs to us, and incrementing `read_idx` moves the value
        // out exactly once.
        let msg = unsafe { Chunk::slot(self.front, i).read() };
        self.read_idx += 1;
        if i + 1 == CHUNK {
            self.advance();
        }
        if msg.flags() & (FLAG_MORE | FLAGS_UNCOUNTED) == 0 {
            self.msgs_read += 1;
            // Relaxed: a stale `lwm` only changes how often we publish; the
            // publication when running dry guarantees liveness regardless.
            if self.msgs_read - self.published >= self.core.lwm.load(Ordering::Relaxed) {
                self.publish();
            }
        }
        Some(msg)
    }

    /// CONFLATE: the kept frame, if a write was published since the last read.
    #[cold]
    fn read_conflated(&mut self) -> Option<Msg> {
        let core = self.core.clone();
        let last = core.last.as_ref()?;
        loop {
            if !self.refill() {
                return None;
            }
            // Everything published up to now is covered by what the slot holds.
            self.read_idx = core.committed.0.load(Ordering::Acquire) & IDX_MASK;
            // Keeps `read` off the chunk path (which needs `read_idx < avail`).
            self.avail = self.read_idx;
            if let Some(m) = lock(last).take() {
                return Some(m);
            }
            // Taken already under an earlier index (a write raced our last
            // read): look again, which sleeps if nothing newer came.
        }
    }

    /// Step from a fully consumed chunk to its successor and retire it.
    #[cold]
    fn advance(&mut self) {
        let old = self.front;
        // SAFETY: we consumed `old`'s last slot, so `C >= end of old`; the
        // writer linked the successor before the flush we acquired.
        self.front = unsafe { (*old).next.load(Ordering::Acquire) };
        debug_assert!(!self.front.is_null());
        // `old` lies wholly below `chunk(C)`, so it is ours to retire.
        let prev = self.core.spare.swap(old, Ordering::AcqRel);
        if !prev.is_null() {
            // SAFETY: the swap gave us exclusive ownership of the previous spare.
            unsafe { Chunk::free(prev) };
        }
    }

    /// Store our count and, if the writer waits at the HWM, wake it.
    fn publish(&mut self) {
        self.published = self.msgs_read;
        self.core.read_count.0.store(self.msgs_read, Ordering::Relaxed);
        // Pairs with the fence in `check_write` (store-buffer handshake).
        fence(Ordering::SeqCst);
        if self.core.writer_waiting.load(Ordering::Relaxed) && self.core.writer_waiting.swap(false, Ordering::Relaxed) {
            self.core.writer_wake.wake();
        }
    }

    /// Look for newly flushed frames; if there are none, go to sleep.
    fn refill(&mut self) -> bool {
        // Acquire: pairs with the writer's Release flush CAS.
        let mut v = self.core.committed.0.load(Ordering::Acquire);
        loop {
            let idx = v & IDX_MASK;
            if idx != self.read_idx {
                if !self.conflate {
                    self.avail = idx;
                }
                return true;
            }
            if v & ASLEEP != 0 {
                // Already asleep (and already published our count).
                return false;
            }
            if self.msgs_read != self.published || self.core.writer_waiting.load(Ordering::Relaxed) {
                // Running dry is a publication point: a writer waiting at
                // the HWM must learn that the pipe drained.
                self.publish();
            }
            // Only succeeds if nothing was flushed since `v`. Acquire on
            // failure: the new value may publish frames.
            match self.core.committed.0.compare_exchange(v, v | ASLEEP, Ordering::Relaxed, Ordering::Acquire) {
                Ok(_) => return false,
                Err(actual) => v = actual,
            }
        }
    }

    /// Whether a frame can be read now; `false` marks the reader asleep like `read`.
    pub(crate) fn check_read(&mut self) -> bool {
        self.read_idx != self.avail || self.refill()
    }

    /// The writer is gone and every flushed frame has been read.
    pub(crate) fn is_terminated(&self) -> bool {
        // Acquire on the flag makes the writer's last flush visible to the
        // following load.
        self.core.writer_gone.load(Ordering::Acquire)
            && self.core.committed.0.load(Ordering::Acquire) & IDX_MASK == self.read_idx
    }

    pub(crate) fn is_writer_gone(&self) -> bool {
        self.core.writer_gone.load(Ordering::Acquire)
    }

    /// The slot used to wake *this* reader (its owner may re-point it).
    pub(crate) fn reader_wake(&self) -> &Arc<WakeSlot> {
        &self.core.reader_wake
    }
}

impl Drop for PipeReader {
    fn drop(&mut self) {
        // Freeze `C`: from now on every flush CAS fails and the writer keeps
        // (and discards) everything from `C` on. AcqRel: acquire the frames
        // published up to `C`, which we now drop.
        let end = self.core.committed.0.fetch_or(READER_GONE, Ordering::AcqRel) & IDX_MASK;
        if let Some(last) = &self.core.last {
            let old = lock(last).take();
            drop(old);
            self.core.writer_wake.wake();
            return;
        }
        let mut idx = self.read_idx;
        while idx < end {
            let i = (idx % CHUNK_U64) as usize;
            // SAFETY: `[R, C)` is ours; each slot is initialized and dropped once.
            unsafe { ptr::drop_in_place(Chunk::slot(self.front, i)) };
            idx += 1;
            if i + 1 == CHUNK {
                // Same reasoning as in `read`: this chunk is below `chunk(C)`.
                self.advance();
            }
        }
        // `front` is now `chunk(C)`: it stays with the writer's chain.
        self.core.writer_wake.wake();
    }
}

// Plain-thread tests; under `--cfg loom` the atomics only work inside a model.
#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::msg::CountingOwner as Owner;
    use std::sync::atomic::AtomicUsize;
    use std::thread;

    #[derive(Default)]
    struct Counter(AtomicUsize);
    impl Wake for Counter {
        fn wake(&self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    impl Counter {
        fn get(&self) -> usize {
            self.0.load(Ordering::SeqCst)
        }
    }

    fn counted(hwm: usize) -> (PipeWriter, PipeReader, Arc<Counter>, Arc<Counter>) {
        let rc = Arc::new(Counter::default());
        let wc = Arc::new(Counter::default());
        let (w, r) = pipe(hwm, WakeSlot::with(rc.clone()), WakeSlot::with(wc.clone()));
        (w, r, rc, wc)
    }

    fn num(i: u64) -> Msg {
        Msg::from_slice(&i.to_le_bytes())
    }
    fn val(m: &Msg) -> u64 {
        u64::from_le_bytes(m.as_slice().try_into().unwrap())
    }

    #[test]
    fn conflate_keeps_the_last_flushed_message_and_wakes_once() {
        let rc = Arc::new(Counter::default());
        let wc = Arc::new(Counter::default());
        let (mut w, mut r) = pipe_conflate(WakeSlot::with(rc.clone()), WakeSlot::with(wc.clone()));
        assert!(r.read().is_none(), "empty: the reader goes to sleep");
        for i in 0..5000 {
            assert!(w.check_write(), "no HWM");
            w.write(num(i));
            w.flush();
        }
        assert_eq!(rc.get(), 1, "one wake for the sleeping reader");
        assert_eq!(val(&r.read().unwrap()), 4999);
        assert!(r.read().is_none());
        // Unflushed writes are invisible until flushed, then only the last counts.
        w.write(num(1));
        w.write(num(2));
        w.flush();
        assert_eq!(rc.get(), 2);
        assert_eq!(val(&r.read().unwrap()), 2);
        assert!(r.read().is_none());
        w.write(num(3));
        w.rollback();
        w.flush();
        assert!(r.read().is_none(), "rolled back");
        w.write(num(4));
        w.flush();
        drop(w);
        assert!(!r.is_terminated(), "a message is still there");
        assert_eq!(val(&r.read().unwrap()), 4);
        assert!(r.read().is_none());
        assert!(r.is_terminated());
    }

    #[test]
    fn conflate_drops_its_message_with_either_end() {
        let drops = Arc::new(AtomicUsize::new(0));
        let owned = |n: u8| Msg::from_owner(Owner(vec![n; 64], drops.clone()));
        let (mut w, r) = pipe_conflate(WakeSlot::new(), WakeSlot::new());
        w.write(owned(1));
        w.write(owned(2));
        assert_eq!(drops.load(Ordering::SeqCst), 1, "replaced at once");
        w.flush();
        drop(r);
        assert_eq!(drops.load(Ordering::SeqCst), 2, "the reader's drop frees the kept one");
        assert!(!w.check_write(), "reader gone");
        w.write(owned(3));
        w.flush();
        drop(w);
        assert_eq!(drops.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn conflate_across_threads_ends_with_the_last() {
        let (mut w, mut r) = pipe_conflate(WakeSlot::new(), WakeSlot::new());
        let t = thread::spawn(move || {
            for i in 1..=100_000u64 {
                w.write(num(i));
                w.flush();
            }
        });
        let mut last = 0;
        loop {
            if let Some(m) = r.read() {
                let v = val(&m);
                assert!(v > last, "newer each time");
                last = v;
            } else if r.is_terminated() {
                break;
            } else {
                thread::yield_now();
            }
        }
        t.join().unwrap();
        assert_eq!(last, 100_000);
    }

    #[test]
    fn fifo_single_thread_across_chunks() {
        let (mut w, mut r, _, _) = counted(0);
        for round in 0..3u64 {
            for i in 0..1000 {
                w.write(num(round * 1000 + i));
            }
            w.flush();
            for i in 0..1000 {
                assert_eq!(val(&r.read().unwrap()), round * 1000 + i);
            }
            assert!(r.read().is_none());
        }
    }

    #[test]
    fn unflushed_frames_are_invisible_and_multipart_is_atomic() {
        let (mut w, mut r, _, _) = counted(0);
        w.write(Msg::from("a").with_more(true));
        w.write(Msg::from("b").with_more(true));
        assert!(!r.check_read());
        assert!(r.read().is_none());
        w.write(Msg::from("c"));
        assert!(!r.check_read());
        w.flush();
        assert!(r.check_read());
        let got: Vec<_> = std::iter::from_fn(|| r.read()).collect();
        assert_eq!(got, vec![Msg::from("a").with_more(true), Msg::from("b").with_more(true), Msg::from("c")]);
    }

    #[test]
    fn rollback_drops_unflushed_frames_only() {
        let released = Arc::new(AtomicUsize::new(0));
        let (mut w, mut r, _, _) = counted(0);
        w.write(Msg::from("kept"));
        w.flush();
        // A partial message spanning several chunks, then aborted.
        for _ in 0..(CHUNK * 2 + 3) {
            w.write(Msg::from_owner(Owner(vec![1; 100], released.clone())).with_more(true));
        }
        w.rollback();
        assert_eq!(released.load(Ordering::SeqCst), CHUNK * 2 + 3);
        w.write(Msg::from("after"));
        w.flush();
        assert_eq!(r.read().unwrap(), Msg::from("kept"));
        assert_eq!(r.read().unwrap(), Msg::from("after"));
        assert!(r.read().is_none());
    }

    #[test]
    fn rollback_at_chunk_boundary() {
        let (mut w, mut r, _, _) = counted(0);
        for i in 0..CHUNK as u64 {
            w.write(num(i));
        }
        w.flush(); // C is exactly at a chunk boundary
        w.write(num(9999).with_more(true));
        w.rollback();
        w.write(num(CHUNK as u64));
        w.flush();
        for i in 0..=CHUNK as u64 {
            assert_eq!(val(&r.read().unwrap()), i);
        }
        assert!(r.read().is_none());
    }

    #[test]
    fn flush_while_reader_awake_does_not_wake() {
        let (mut w, mut r, rc, _) = counted(0);
        w.write(Msg::from("1"));
        w.flush();
        w.write(Msg::from("2"));
        w.flush();
        assert_eq!(rc.get(), 0, "reader never slept");
        assert!(r.read().is_some());
        w.write(Msg::from("3"));
        w.flush();
        assert_eq!(rc.get(), 0, "reader still awake");
        assert!(r.read().is_some());
        assert!(r.read().is_some());
        assert!(r.read().is_none()); // now asleep
        assert_eq!(rc.get(), 0);
        w.write(Msg::from("4"));
        w.flush();
        assert_eq!(rc.get(), 1, "wake exactly once");
        w.write(Msg::from("5"));
        w.flush();
        assert_eq!(rc.get(), 1, "reader was woken and has not slept again");
        // Repeated empty checks while asleep don't need another wake to be armed twice.
        assert!(r.check_read());
        while r.read().is_some() {}
        assert!(!r.check_read());
        assert!(!r.check_read());
        w.flush(); // nothing to flush: no wake
        assert_eq!(rc.get(), 1);
        w.write(Msg::from("6"));
        w.flush();
        assert_eq!(rc.get(), 2);
    }

    #[test]
    fn hwm_counts_whole_messages_and_wakes_writer() {
        let (mut w, mut r, _, wc) = counted(4);
        for i in 0..4 {
            assert!(w.check_write(), "message {i}");
            w.write(Msg::from("part").with_more(true));
            w.write(Msg::from("part").with_more(true));
            w.write(Msg::from("end"));
            w.flush();
        }
        assert!(!w.check_write(), "blocks at exactly hwm messages");
        assert!(!w.check_write());
        assert_eq!(wc.get(), 0);
        // Read one message (3 frames): lwm = 2 not reached yet.
        for _ in 0..3 {
            r.read().unwrap();
        }
        assert_eq!(wc.get(), 0);
        for _ in 0..3 {
            r.read().unwrap();
        }
        assert_eq!(wc.get(), 1, "woken at the low-water mark");
        assert!(w.check_write());
        w.write(Msg::from("x"));
        w.write(Msg::from("y"));
        w.flush();
        assert!(!w.check_write());
        while r.read().is_some() {}
        assert_eq!(wc.get(), 2);
        for _ in 0..4 {
            assert!(w.check_write());
            w.write(Msg::new());
        }
        assert!(!w.check_write(), "unflushed messages count too");
        w.set_hwm(0);
        assert!(w.check_write());
        w.set_hwm(5);
        assert!(w.check_write());
        w.write(Msg::new());
        assert!(!w.check_write());
    }

    #[test]
    fn writer_woken_when_reader_drains_without_reaching_lwm_boundary() {
        // hwm changes so the reader's lwm cadence is off; running dry still wakes.
        let (mut w, mut r, _, wc) = counted(0);
        for _ in 0..10 {
            w.write(Msg::new());
        }
        w.flush();
        w.set_hwm(3);
        assert!(!w.check_write());
        while r.read().is_some() {}
        assert_eq!(wc.get(), 1);
        assert!(w.check_write());
    }

    #[test]
    fn writer_gone_terminates_after_reading_everything() {
        let released = Arc::new(AtomicUsize::new(0));
        let (mut w, mut r, rc, _) = counted(0);
        w.write(Msg::from("a"));
        w.write(Msg::from("b"));
        w.flush();
        w.write(Msg::from_owner(Owner(vec![0; 64], released.clone())).with_more(true));
        assert!(!r.is_writer_gone());
        drop(w);
        assert_eq!(released.load(Ordering::SeqCst), 1, "unflushed frames discarded");
        assert_eq!(rc.get(), 1, "reader woken unconditionally");
        assert!(r.is_writer_gone());
        assert!(!r.is_terminated());
        assert_eq!(r.read().unwrap(), Msg::from("a"));
        assert_eq!(r.read().unwrap(), Msg::from("b"));
        assert!(r.read().is_none());
        assert!(r.is_terminated());
    }

    #[test]
    fn reader_gone_releases_frames_and_blocks_writer() {
        let released = Arc::new(AtomicUsize::new(0));
        let (mut w, mut r, _, wc) = counted(0);
        for _ in 0..(CHUNK * 3 + 10) {
            w.write(Msg::from_owner(Owner(vec![0; 64], released.clone())));
        }
        w.flush();
        for _ in 0..(CHUNK + 5) {
            drop(r.read().unwrap());
        }
        assert_eq!(released.load(Ordering::SeqCst), CHUNK + 5);
        w.write(Msg::from_owner(Owner(vec![0; 64], released.clone())));
        assert!(w.check_write());
        assert!(!w.is_reader_gone());
        drop(r);
        assert_eq!(released.load(Ordering::SeqCst), CHUNK * 3 + 10, "flushed frames released by reader drop");
        assert_eq!(wc.get(), 1);
        assert!(w.is_reader_gone());
        assert!(!w.check_write());
        w.flush(); // discards instead of publishing
        assert_eq!(released.load(Ordering::SeqCst), CHUNK * 3 + 11);
        for _ in 0..(CHUNK * 2) {
            w.write(Msg::from_owner(Owner(vec![0; 64], released.clone())));
        }
        drop(w);
        assert_eq!(released.load(Ordering::SeqCst), CHUNK * 5 + 11);
    }

    #[test]
    fn drop_both_with_frames_inside_releases_them() {
        for reader_first in [false, true] {
            let released = Arc::new(AtomicUsize::new(0));
            let (mut w, r, _, _) = counted(0);
            for _ in 0..(CHUNK + 7) {
                w.write(Msg::from_owner(Owner(vec![0; 64], released.clone())));
            }
            w.flush();
            w.write(Msg::from_owner(Owner(vec![0; 64], released.clone())));
            if reader_first {
                drop(r);
                drop(w);
            } else {
                drop(w);
                drop(r);
            }
            assert_eq!(released.load(Ordering::SeqCst), CHUNK + 8, "reader_first={reader_first}");
        }
    }

    #[test]
    fn empty_frames() {
        let (mut w, mut r, _, _) = counted(2);
        for _ in 0..(CHUNK * 2 + 1) {
            w.write(Msg::new().with_more(true));
        }
        w.write(Msg::new());
        w.flush();
        assert!(w.check_write(), "one message only");
        let mut n = 0;
        while let Some(m) = r.read() {
            assert!(m.is_empty());
            n += 1;
        }
        assert_eq!(n, CHUNK * 2 + 2);
        assert!(w.check_write());
    }

    #[test]
    fn wake_slot_remembers_pending_wake() {
        let s = WakeSlot::new();
        s.wake();
        assert!(s.is_pending());
        let c = Arc::new(Counter::default());
        s.set(c.clone());
        assert_eq!(c.get(), 1);
        assert!(!s.is_pending());
        s.wake();
        assert_eq!(c.get(), 2);
        s.clear();
        s.wake();
        assert_eq!(c.get(), 2);
        let c2 = Arc::new(Counter::default());
        s.set(c2.clone());
        assert_eq!(c2.get(), 1);
    }

    #[test]
    fn ends_are_send() {
        fn is_send<T: Send>() {}
        is_send::<PipeWriter>();
        is_send::<PipeReader>();
    }

    /// Wakes a parked thread.
    struct Unpark(thread::Thread, AtomicUsize);
    impl Wake for Unpark {
        fn wake(&self) {
            self.1.fetch_add(1, Ordering::Relaxed);
            self.0.unpark();
        }
    }

    /// FIFO over many messages between two threads where each side really
    /// parks when it cannot proceed; a lost wake-up would hang the test.
    pub(crate) fn stress(total: u64, hwm: usize, multipart: bool) {
        let total = if cfg!(miri) { total.min(3_000) } else { total };
        let reader_slot = WakeSlot::new();
        let writer_slot = WakeSlot::new();
        let (mut w, mut r) = pipe(hwm, reader_slot.clone(), writer_slot.clone());
        let reader = thread::spawn(move || {
            let me = Arc::new(Unpark(thread::current(), AtomicUsize::new(0)));
            r.reader_wake().set(me.clone());
            let mut expect = 0u64;
            loop {
                match r.read() {
                    Some(m) => {
                        if multipart {
                            // messages are (i, i) pairs; never a lone prefix
                            assert_eq!(val(&m), expect);
                            assert!(m.more());
                            // Flushed together: the last frame is already there.
                            let last = r.read().expect("reader saw a prefix of a message");
                            assert_eq!(val(&last), expect);
                            assert!(!last.more());
                            expect += 1;
                        } else {
                            assert_eq!(val(&m), expect);
                            expect += 1;
                        }
                    }
                    None => {
                        if r.is_terminated() {
                            break;
                        }
                        thread::park();
                    }
                }
            }
            (expect, me.1.load(Ordering::Relaxed))
        });
        let me = Arc::new(Unpark(thread::current(), AtomicUsize::new(0)));
        writer_slot.set(me.clone());
        for i in 0..total {
            while !w.check_write() {
                assert!(!w.is_reader_gone());
                // Unflushed messages count against the HWM but can't be read:
                // always publish before waiting for room.
                w.flush();
                thread::park();
            }
            if multipart {
                w.write(num(i).with_more(true));
            }
            w.write(num(i));
            if i % 3 != 0 {
                w.flush();
            }
        }
        w.flush();
        drop(w);
        let (n, _wakes) = reader.join().unwrap();
        assert_eq!(n, total);
    }

    #[test]
    fn stress_fifo_unbounded() {
        stress(if cfg!(debug_assertions) { 300_000 } else { 1_000_000 }, 0, false);
    }

    #[test]
    fn stress_fifo_hwm() {
        stress(if cfg!(debug_assertions) { 300_000 } else { 1_000_000 }, 100, false);
    }

    #[test]
    fn stress_fifo_small_hwm_multipart() {
        // hwm = 1: every message costs a park/unpark round trip each way.
        stress(if cfg!(debug_assertions) { 50_000 } else { 200_000 }, 1, true);
    }
}
