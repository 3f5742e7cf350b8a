//! The ypipe itself (see the algorithm in the `pipe` module's doc): chunks,
//! the shared state, and the writing and reading ends.

use super::WakeSlot;
use crate::msg::{Msg, FLAGS_UNCOUNTED, FLAG_MORE};
use crate::sync::{fence, AtomicBool, AtomicPtr, AtomicU64, Mutex, Ordering};
use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::ptr;
use std::sync::Arc;

/// Slots per chunk (libzmq's `message_pipe_granularity`). ~12 KiB with 48-byte `Msg`s.
pub(super) const CHUNK: usize = 256;
const CHUNK_U64: u64 = CHUNK as u64;

/// `committed` bit: the reader found the pipe empty and wants a wake-up.
const ASLEEP: u64 = 1 << 63;
/// `committed` bit: the reader has been dropped.
const READER_GONE: u64 = 1 << 62;
const IDX_MASK: u64 = READER_GONE - 1;

/// The longest run of fruitless dry waits backs a reader off to one dry
/// wait in 2^MAX_DRY_BACKOFF dry looks.
const MAX_DRY_BACKOFF: u32 = 6;

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

/// A writing end's counts, for the socket's statistics: the counts it
/// keeps anyway (bytes are counted by the socket's own ends, outside).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct WriterCounts {
    /// Whole messages written.
    pub(crate) msgs: u64,
    /// CONFLATE: messages replaced before the reader took them.
    pub(crate) conflated: u64,
    /// Body bytes of frames that never reached the reader: taken back by a
    /// rollback (explicit, or a flush that found the reader gone) or not
    /// flushed yet. Bookkeeping frames (routing ids, peer properties) are
    /// left out, as the socket's byte count leaves them out.
    pub(crate) bytes_unsent: u64,
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
    /// Messages read, as published by the reader (every `lwm` messages and,
    /// unless it acknowledges at the LWM only, when it runs dry). Only the
    /// reader stores; the writer loads it when its cached copy says the
    /// pipe is full.
    read_count: Padded<AtomicU64>,
    /// Messages read, stored by the reader at every read, for statistics
    /// only ([`PipeWriter::unread`]): flow control goes by `read_count`,
    /// which is also what libzmq's pipe statistics report. Its own line,
    /// which only the reader writes and nothing reads per message.
    taken: Padded<AtomicU64>,
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
    /// CONFLATE pipes (see `pipe_conflate`): the one message kept. Boxed
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
        taken: Padded(AtomicU64::new(0)),
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
        conflated: 0,
        bytes_taken_back: 0,
    };
    let r = PipeReader {
        core,
        front: first,
        read_idx: 0,
        avail: 0,
        msgs_read: 0,
        published: 0,
        ack_base: 0,
        acks_at_lwm: false,
        conflate,
        dry_wait: false,
        dry_misses: 0,
        dry_skip: 0,
    };
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
    /// CONFLATE: whole messages replaced before the reader took them
    /// (counted on the conflating path only).
    conflated: u64,
    /// Body bytes of the frames rollbacks dropped (see `WriterCounts`):
    /// counted where they are dropped, which is rare, so that sending costs
    /// nothing more.
    bytes_taken_back: u64,
}

// SAFETY: the raw chunk pointers are only dereferenced by this end, under the
// ownership rules documented on `Core`; everything shared is atomic or locked.
// Moving the writer to another thread moves that exclusive role with it.
unsafe impl Send for PipeWriter {}

impl PipeWriter {
    /// Whether a new message may be started: the reader is alive and, when
    /// `hwm > 0`, messages written minus messages read (as last published by
    /// the reader: see `PipeReader::publish`'s callers)
    /// is below the HWM. A `false` due to the HWM leaves the writer marked
    /// "waiting": `writer_wake` fires once the reader has drained to the LWM.
    /// Unflushed messages count too, so flush before waiting for that wake.
    pub(crate) fn check_write(&mut self) -> bool {
        if let Some(room) = self.check_write_in_view() {
            return room;
        }
        self.check_write_refreshed()
    }

    /// `check_write` as far as the writer's own view of the reader's count
    /// decides it: `None` when that view says full (see
    /// [`Self::check_write_refreshed`]).
    #[inline]
    pub(crate) fn check_write_in_view(&self) -> Option<bool> {
        if self.is_reader_gone() {
            return Some(false);
        }
        let hwm = self.core.hwm.load(Ordering::Relaxed);
        if hwm == 0 || self.msgs_written - self.peer_read < hwm {
            return Some(true);
        }
        None
    }

    /// The writer's view of the reader's count.
    pub(crate) fn view(&self) -> u64 {
        self.peer_read
    }

    /// Put back an earlier view: it must not be ahead of the reader's count
    /// (an older view is only more cautious).
    pub(crate) fn set_view(&mut self, peer_read: u64) {
        debug_assert!(peer_read <= self.peer_read);
        self.peer_read = peer_read;
    }

    /// Take the reader's last published count into the writer's view.
    pub(crate) fn refresh_view(&mut self) {
        self.peer_read = self.core.read_count.0.load(Ordering::Relaxed);
    }

    /// The rest of `check_write`, once the writer's view says full.
    pub(crate) fn check_write_refreshed(&mut self) -> bool {
        let hwm = self.core.hwm.load(Ordering::Relaxed);
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
            return self.rollback_conflated();
        }
        self.bytes_taken_back += self.unflushed_bytes();
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
        let old = self.core.hwm.load(Ordering::Relaxed);
        self.core.set_hwm(hwm);
        if old != hwm as u64 {
            // A reader that acknowledges at the LWM only may be asleep with
            // reads it has not acknowledged, which a lower HWM may now need:
            // a spurious wake makes it look (`PipeReader::dry_ack`).
            self.core.reader_wake.wake();
        }
    }

    /// The pipe's HWM in messages (0: none).
    pub(crate) fn hwm(&self) -> usize {
        self.core.hwm.load(Ordering::Relaxed) as usize
    }

    /// What this end counted, for statistics (see [`WriterCounts`]).
    pub(crate) fn counts(&self) -> WriterCounts {
        WriterCounts {
            msgs: self.msgs_written,
            conflated: self.conflated,
            bytes_unsent: self.bytes_taken_back + self.unflushed_bytes(),
        }
    }

    /// Body bytes of the frames written and not flushed yet (bookkeeping
    /// frames left out). Walks them: only rollbacks and statistics ask, and
    /// a message is flushed as soon as its last frame is written.
    fn unflushed_bytes(&self) -> u64 {
        if self.write_idx == self.flushed_idx {
            return 0;
        }
        if self.conflate {
            return self.unflushed_conflated_bytes();
        }
        let mut bytes = 0;
        let mut c = self.flush_chunk;
        let mut idx = self.flushed_idx;
        while idx < self.write_idx {
            let i = (idx % CHUNK_U64) as usize;
            // SAFETY: `[C, W)` is owned by the writer and initialized by
            // `write`; the reader never touches it.
            let msg = unsafe { &*Chunk::slot(c, i) };
            if msg.flags() & FLAGS_UNCOUNTED == 0 {
                bytes += msg.len() as u64;
            }
            idx += 1;
            if i + 1 == CHUNK {
                // SAFETY: `c` is full, so `grow` linked its successor.
                c = unsafe { (*c).next.load(Ordering::Relaxed) };
            }
        }
        bytes
    }

    /// Whether this is a CONFLATE pipe's writer.
    pub(crate) fn is_conflating(&self) -> bool {
        self.conflate
    }

    /// Messages written and not acknowledged yet: the reader publishes its
    /// count every LWM messages (and, unless it acknowledges at the LWM
    /// only, whenever it runs dry), so this may still count messages read
    /// since (libzmq's pipe statistics count the same way, and its
    /// pipes-stats test relies on it). See [`Self::unread`].
    pub(crate) fn queued(&self) -> u64 {
        if self.conflate {
            self.core.kept()
        } else {
            self.msgs_written.saturating_sub(self.core.read_count.0.load(Ordering::Relaxed))
        }
    }

    /// Messages written and not read yet: 0 once the reader has taken
    /// everything. Exact when the reader's last read happened-before this
    /// call (on the same thread, or before a message this thread has since
    /// received from it); otherwise it may lag by the reads in flight.
    pub(crate) fn unread(&self) -> u64 {
        if self.conflate {
            self.core.kept()
        } else {
            self.msgs_written.saturating_sub(self.core.taken.0.load(Ordering::Relaxed))
        }
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
    /// Where the next acknowledgement is counted from: `read` publishes
    /// once `msgs_read - ack_base` reaches the LWM. `published` itself,
    /// or, with `acks_at_lwm`, `published` rounded down to a multiple of
    /// the LWM.
    ack_base: u64,
    /// libzmq's acknowledgement cadence (`pipe_t::read`: at every multiple
    /// of the LWM, not when the reader runs dry), for the I/O thread's
    /// ends: see [`PipeReader::set_acks_at_lwm`].
    acks_at_lwm: bool,
    /// Whether `read` waits a moment before it marks itself asleep (see
    /// [`PipeReader::dry_wait`]); off unless the owner turns it on.
    dry_wait: bool,
    /// Fruitless dry waits in a row.
    dry_misses: u32,
    /// Dry looks left that go to sleep without waiting.
    dry_skip: u32,
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
            if !self.refill(self.dry_wait) {
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
            self.core.taken.0.store(self.msgs_read, Ordering::Relaxed);
            // Relaxed: a stale `lwm` only changes how often we publish; the
            // publication when running dry (or, acknowledging at the LWM
            // only, the writer's wake-up at its HWM change) guarantees
            // liveness regardless.
            if self.msgs_read - self.ack_base >= self.core.lwm.load(Ordering::Relaxed) {
                self.publish();
            }
        }
        Some(msg)
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
        self.ack_base = self.msgs_read;
        if self.acks_at_lwm {
            // Only here, not per message: the division costs a few ns.
            let lwm = self.core.lwm.load(Ordering::Relaxed);
            self.ack_base -= self.msgs_read % lwm;
        }
        self.core.read_count.0.store(self.msgs_read, Ordering::Relaxed);
        // Pairs with the fence in `check_write` (store-buffer handshake).
        fence(Ordering::SeqCst);
        if self.core.writer_waiting.load(Ordering::Relaxed) && self.core.writer_waiting.swap(false, Ordering::Relaxed) {
            self.core.writer_wake.wake();
        }
    }

    /// Acknowledge reads as libzmq's pipe does: only when the count reaches
    /// a multiple of the LWM, not also when the reader runs dry. Where the
    /// owner turns it on (the I/O thread's ends, toward tcp, ipc and the
    /// other engines), a writer at its HWM sees exactly libzmq's count:
    /// it may write HWM messages past the last multiple of the LWM its
    /// reader reached, so a connection whose peer holds N messages takes
    /// exactly what libzmq's would (libzmq's test_monitor pipes-stats cases
    /// count on it: with dry acknowledgements a writer could get a few
    /// messages more or fewer, and the last acknowledgement could sit
    /// LWM messages past a dry one, beyond what the peer holds). Liveness
    /// as in libzmq: a writer at the HWM has written at least LWM messages
    /// past the last multiple, so the reader crosses the next one before it
    /// runs dry. Inproc and the socket's own ends keep acknowledging when
    /// they run dry: earlier branches with libzmq's rule everywhere
    /// measured Rust inproc 64 KiB zero-copy throughput halved.
    pub(crate) fn set_acks_at_lwm(&mut self, on: bool) {
        self.acks_at_lwm = on;
    }

    /// A reader with `acks_at_lwm` that runs dry (or is woken while asleep)
    /// publishes its count only if the writer waits or the count crossed a
    /// multiple of the LWM unnoticed. With a steady HWM a writer at it has
    /// been acknowledged already (see `set_acks_at_lwm`); after a change the
    /// LWM read at the last message may be stale, and a lower HWM may stop
    /// the writer with the reader asleep: the writer's `set_hwm` wakes the
    /// reader, which then looks here.
    #[cold]
    fn dry_ack(&mut self) {
        if self.msgs_read != self.published
            && (self.core.writer_waiting.load(Ordering::Relaxed)
                || self.msgs_read - self.ack_base >= self.core.lwm.load(Ordering::Relaxed))
        {
            self.publish();
        }
    }

    /// Let `read` wait a moment before it marks itself asleep (the owner
    /// turns this on where a sleep costs a wake-up: an application thread's
    /// end; see [`PipeReader::dry_wait`]).
    pub(crate) fn set_dry_wait(&mut self, on: bool) {
        self.dry_wait = on;
    }

    /// A reader that has just run dry waits about a microsecond, touching
    /// nothing shared, and looks once more before it marks itself asleep.
    /// Why: a reader that keeps up with its writer takes one message per
    /// look, so every message moves `committed` and the slot between the
    /// two CPUs, and a reader that then sleeps costs the writer a wake-up
    /// per message; a moment's wait lets the writer fill several slots,
    /// which the reader then takes in one pass (bench/TRAILING.md section
    /// 2). Waits that find nothing back off exponentially, so a reader whose
    /// peer is idle or slow (the common case of a request and its reply)
    /// soon looks at once again. `true`: frames were flushed meanwhile.
    #[cold]
    fn dry_wait(&mut self) -> bool {
        if self.dry_skip > 0 {
            self.dry_skip -= 1;
            return false;
        }
        // About a microsecond: the busy-poll's interval between two looks.
        for _ in 0..crate::wait::SPINS_PER_CHECK {
            std::hint::spin_loop();
        }
        // Relaxed: only a hint; `refill` loads again with Acquire.
        if self.core.committed.0.load(Ordering::Relaxed) & IDX_MASK != self.read_idx {
            self.dry_misses = 0;
            return true;
        }
        self.dry_misses = (self.dry_misses + 1).min(MAX_DRY_BACKOFF);
        self.dry_skip = (1 << self.dry_misses) - 1;
        false
    }

    /// Look for newly flushed frames; if there are none (after a dry wait
    /// when `wait` is set), go to sleep.
    fn refill(&mut self, mut wait: bool) -> bool {
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
                // Already asleep (and already published our count, unless
                // it acknowledges at the LWM only: see `dry_ack`).
                if self.acks_at_lwm {
                    self.dry_ack();
                }
                return false;
            }
            if wait {
                wait = false;
                if self.dry_wait() {
                    v = self.core.committed.0.load(Ordering::Acquire);
                    continue;
                }
            }
            if self.acks_at_lwm {
                self.dry_ack();
            } else if self.msgs_read != self.published || self.core.writer_waiting.load(Ordering::Relaxed) {
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
        self.read_idx != self.avail || self.refill(false)
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

    /// Whole messages read, for statistics (the count flow control keeps).
    pub(crate) fn msgs_read(&self) -> u64 {
        self.msgs_read
    }

    /// Whole messages published and not read yet. Walks the published,
    /// unread frames (which this end owns) when asked, so that nothing is
    /// counted for it on the way.
    pub(crate) fn queued(&self) -> u64 {
        if self.conflate {
            return self.core.kept();
        }
        // Acquire: pairs with the writer's Release flush CAS, so the frames
        // up to the index read are initialized.
        let end = self.core.committed.0.load(Ordering::Acquire) & IDX_MASK;
        let (mut c, mut idx, mut n) = (self.front, self.read_idx, 0);
        while idx < end {
            let i = (idx % CHUNK_U64) as usize;
            // SAFETY: `[R, C)` belongs to this end and is initialized (see
            // `read`); the frame is only looked at, not moved.
            let flags = unsafe { (*Chunk::slot(c, i)).flags() };
            n += u64::from(flags & (FLAG_MORE | FLAGS_UNCOUNTED) == 0);
            idx += 1;
            if i + 1 == CHUNK {
                // SAFETY: `C` is past this chunk, so its successor is linked
                // and published by the flush we acquired.
                c = unsafe { (*c).next.load(Ordering::Acquire) };
            }
        }
        n
    }

    /// The slot used to wake *this* reader (its owner may re-point it).
    pub(crate) fn reader_wake(&self) -> &Arc<WakeSlot> {
        &self.core.reader_wake
    }

    /// The slot used to wake this pipe's writer.
    pub(crate) fn writer_wake(&self) -> &Arc<WakeSlot> {
        &self.core.writer_wake
    }
}

impl Drop for PipeReader {
    fn drop(&mut self) {
        // Freeze `C`: from now on every flush CAS fails and the writer keeps
        // (and discards) everything from `C` on. AcqRel: acquire the frames
        // published up to `C`, which we now drop.
        let end = self.core.committed.0.fetch_or(READER_GONE, Ordering::AcqRel) & IDX_MASK;
        if self.core.last.is_some() {
            return self.drop_conflated();
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
// CONFLATE's slot, a variant of these ends: a child module, so that it
// shares the ends' private state without widening it.
#[path = "conflate.rs"]
mod conflate;
pub(crate) use conflate::pipe_conflate;
