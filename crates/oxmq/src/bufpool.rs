//! Recycled buffers for message bodies of at least 1 KiB.
//!
//! A fresh allocation per body is costly in two ways. Large bodies: glibc
//! serves them from fresh pages (mmap, or a heap top it trims back on free),
//! so every 1 MiB message cost ~25-80 page faults plus the unmapping on free,
//! on both the copying sender and the receiving engine (`perf stat -e
//! page-faults` on the throughput study; libzmq pays the same). Mid-size
//! bodies (1-64 KiB), which glibc's per-thread caches do not keep: a sender
//! allocates them and another thread frees them, so a pipe filling to its HWM
//! and draining grows and shrinks the sender's heap by megabytes, and glibc
//! trims and refaults it each time (Python inproc 4 KiB: 0.8 M msg/s, 1.75 M
//! with trimming turned off).
//!
//! So bodies of at least [`MIN`] bytes come from, and go back to, a small
//! process-wide list of idle buffers, bounded in bytes; mid-size bodies from
//! one stack per power-of-two size, also bounded. Smaller bodies are plain
//! allocations.
//!
//! The shared lists are only ever tried, never waited for: a list another
//! thread holds means a plain allocation (or a plain free) instead. A lock
//! held by the parent's I/O thread at `fork()` stays held forever in the
//! child, which has no such thread; waiting on it hung a child that sent a
//! 1 KiB message on its own new context (libzmq's test_fork pattern, with a
//! larger body). Contention costs one allocation, never a wait.

use bytes::Bytes;
use std::cell::RefCell;
use std::sync::{Mutex, MutexGuard, TryLockError};

/// Bodies at least this large share one list of idle buffers.
pub(crate) const MIN: usize = 64 * 1024;
/// Idle bytes kept at most (a few of the largest messages in flight).
const MAX_IDLE: usize = 16 << 20;
/// Bodies from this size up to [`MIN`] are pooled by power-of-two size.
pub(crate) const MID_MIN: usize = 1024;
/// Classes `MID_MIN`, `2 * MID_MIN`, ... up to `MIN` (which serves lengths just below `MIN`).
const MID_CLASSES: usize = (MIN.trailing_zeros() - MID_MIN.trailing_zeros()) as usize + 1;
/// Idle bytes kept at most per mid-size class: a pipe's worth at the
/// default HWM of 1000 messages of 4 KiB.
const MID_MAX_IDLE: usize = 4 << 20;

struct Idle {
    bufs: Vec<Vec<u8>>,
    bytes: usize,
}

static IDLE: Mutex<Idle> = Mutex::new(Idle { bufs: Vec::new(), bytes: 0 });

/// Stack `i` holds idle buffers of capacity at least `MID_MIN << i`.
static MID: [Mutex<Idle>; MID_CLASSES] = [const { Mutex::new(Idle { bufs: Vec::new(), bytes: 0 }) }; MID_CLASSES];
/// Idle mid-size bytes a thread keeps per class before it hands half of them
/// to the shared stack. A sender's thread takes buffers and another thread
/// (a receiver, an I/O thread) returns them, so each lock moves a batch.
const LOCAL_BYTES: usize = 256 * 1024;

/// The shared list behind `m`, unless another thread (or a thread that no
/// longer exists, after a fork) holds it. A poisoned list is still sound:
/// every update leaves `bufs` and `bytes` consistent before anything can panic.
fn try_shared(m: &Mutex<Idle>) -> Option<MutexGuard<'_, Idle>> {
    match m.try_lock() {
        Ok(g) => Some(g),
        Err(TryLockError::Poisoned(e)) => Some(e.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    }
}

thread_local! {
    static LOCAL: RefCell<[Vec<Vec<u8>>; MID_CLASSES]> = const { RefCell::new([const { Vec::new() }; MID_CLASSES]) };
}

/// The class whose buffers all fit `len` (`MID_MIN <= len < MIN`).
fn class_for_len(len: usize) -> usize {
    (len.next_power_of_two().trailing_zeros() - MID_MIN.trailing_zeros()) as usize
}

/// The largest class a buffer of capacity `cap` can serve (`MID_MIN <= cap < MIN`).
fn class_for_capacity(cap: usize) -> usize {
    (cap.ilog2() - MID_MIN.trailing_zeros()) as usize
}

/// An empty buffer with room for at least `len` bytes. Mid-size: one of
/// `len`'s power-of-two class, pooled if one is idle. Large: a pooled one if
/// an idle buffer fits (without wasting more than half of it). Otherwise a
/// new one of exactly `len`.
pub(crate) fn take(len: usize) -> Vec<u8> {
    if (MID_MIN..MIN).contains(&len) {
        let class = class_for_len(len);
        return match take_mid(class) {
            Some(mut b) => {
                b.clear();
                b
            }
            None => Vec::with_capacity(MID_MIN << class),
        };
    }
    if len >= MIN {
        let Some(mut idle) = try_shared(&IDLE) else {
            return Vec::with_capacity(len);
        };
        // The most recently returned fit first: its lines are the likeliest
        // still in a cache (the receiver has just read them).
        if let Some(i) = idle.bufs.iter().rposition(|b| b.capacity() >= len && b.capacity() / 2 <= len) {
            let mut b = idle.bufs.remove(i);
            idle.bytes -= b.capacity();
            b.clear();
            return b;
        }
    }
    Vec::with_capacity(len)
}

/// A body buffer that goes back to the pool when the last `Bytes` over it drops.
struct Pooled(Vec<u8>);

impl AsRef<[u8]> for Pooled {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl Drop for Pooled {
    fn drop(&mut self) {
        let buf = std::mem::take(&mut self.0);
        let cap = buf.capacity();
        if cap < MIN {
            return put_mid(class_for_capacity(cap), buf);
        }
        let Some(mut idle) = try_shared(&IDLE) else {
            return; // held elsewhere: `buf` is freed
        };
        if idle.bytes + cap <= MAX_IDLE {
            idle.bytes += cap;
            idle.bufs.push(buf);
            return;
        }
        drop(idle);
        drop(buf); // pool full: freed outside the lock
    }
}

/// How many idle buffers of `class` a thread keeps to itself.
fn local_cap(class: usize) -> usize {
    (LOCAL_BYTES >> (MID_MIN.trailing_zeros() as usize + class)).max(2)
}

/// A mid-size buffer of `class`: the thread's own first, else a batch from
/// the shared stack (one lock for many buffers).
fn take_mid(class: usize) -> Option<Vec<u8>> {
    LOCAL
        .try_with(|local| {
            let mut local = local.borrow_mut();
            let mine = &mut local[class];
            if let Some(b) = mine.pop() {
                return Some(b);
            }
            let mut shared = try_shared(&MID[class])?;
            let n = shared.bufs.len().min(local_cap(class) / 2);
            let at = shared.bufs.len() - n;
            shared.bytes -= shared.bufs[at..].iter().map(Vec::capacity).sum::<usize>();
            mine.extend(shared.bufs.drain(at..));
            drop(shared);
            mine.pop()
        })
        .unwrap_or_else(|_| {
            // This thread is exiting: go to the shared stack directly.
            let mut shared = try_shared(&MID[class])?;
            let b = shared.bufs.pop()?;
            shared.bytes -= b.capacity();
            Some(b)
        })
}

/// Return a mid-size buffer: to the thread's own stack, which hands half of
/// itself to the shared stack when full; beyond the shared bound, freed.
fn put_mid(class: usize, buf: Vec<u8>) {
    // On a thread that is exiting (its stack already gone) the closure never
    // runs and `buf` is simply freed with it.
    let batch = LOCAL
        .try_with(|local| {
            let mut local = local.borrow_mut();
            let mine = &mut local[class];
            mine.push(buf);
            let cap = local_cap(class);
            if mine.len() <= cap {
                return Vec::new();
            }
            let at = mine.len() - cap / 2;
            mine.split_off(at)
        })
        .unwrap_or_default();
    if batch.is_empty() {
        return;
    }
    let Some(mut shared) = try_shared(&MID[class]) else {
        return; // held elsewhere: the batch is freed
    };
    let mut spill = Vec::new();
    for b in batch {
        if shared.bytes + b.capacity() <= MID_MAX_IDLE {
            shared.bytes += b.capacity();
            shared.bufs.push(b);
        } else {
            spill.push(b);
        }
    }
    drop(shared);
    drop(spill); // over the bound: freed outside the lock
}

/// Freeze a body: buffers of at least `MID_MIN` return to the pool when done with.
pub(crate) fn freeze(buf: Vec<u8>) -> Bytes {
    if buf.capacity() >= MID_MIN {
        Bytes::from_owner(Pooled(buf))
    } else {
        Bytes::from(buf)
    }
}

/// The span of addresses over which the CPU compares a load with the
/// stores before it (4 KiB on x86): what "where in its page" means below.
const ALIAS_SPAN: usize = 4096;

/// A large frame body read from a socket, placed in its buffer so that the
/// kernel's copy into it runs at full speed.
///
/// The kernel copies received bytes with `rep movsb`, which is 2-2.5x slower
/// when the destination sits 1-15 bytes after the source modulo 4 KiB (and
/// ~1.7x when 1-15 before). A TCP sender's kernel writes a message into
/// fresh page fragments from their start, so a body that follows a 9-11 byte
/// ZMTP header begins 9-11 bytes into its page; a buffer fresh from `mmap`
/// begins 16 bytes into its own, 5-7 bytes after the source: every large
/// tcp receive hit the slow case (REQ/REP 256 KiB: 191 against 85 µs p50 in
/// a plain-socket ping-pong with an 11-byte header, `bench/TRAILING.md`
/// section 5). So the body starts half a span away from where its first
/// byte most likely sits in the sender's page: a guess wrong by up to ~2 KiB
/// still lands far from both slow windows.
pub(crate) struct Placed {
    buf: Vec<u8>,
    start: usize,
}

impl Placed {
    /// An empty body of room `len`, whose first byte will be read from
    /// `source_at` bytes into the sender's page (a position in the stream
    /// counted from where the sender's write most likely began; any value,
    /// reduced modulo the span). Bodies under [`MIN`] are not placed.
    pub(crate) fn take(len: usize, source_at: usize) -> Placed {
        if len < MIN {
            // The pad would double a mid-size body's power-of-two buffer,
            // for a copy too short for its speed to matter much.
            return Placed { buf: take(len), start: 0 };
        }
        let mut buf = take(len + ALIAS_SPAN);
        let want = (source_at.wrapping_add(ALIAS_SPAN / 2)) % ALIAS_SPAN;
        let base = buf.as_ptr() as usize % ALIAS_SPAN;
        let start = (want + ALIAS_SPAN - base) % ALIAS_SPAN;
        buf.resize(start, 0);
        Placed { buf, start }
    }

    /// Body bytes so far.
    pub(crate) fn len(&self) -> usize {
        self.buf.len() - self.start
    }

    /// Room left for body bytes without growing.
    pub(crate) fn room(&self) -> usize {
        self.buf.capacity() - self.buf.len()
    }

    pub(crate) fn extend_from_slice(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The buffer whose spare capacity the next read fills (its length
    /// counts the leading pad as well as the body).
    pub(crate) fn tail(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// The body, pooled as [`freeze`] pools.
    pub(crate) fn freeze(self) -> Bytes {
        freeze(self.buf).slice(self.start..)
    }
}

impl AsMut<[u8]> for Placed {
    fn as_mut(&mut self) -> &mut [u8] {
        &mut self.buf[self.start..]
    }
}

/// A pooled copy of `data` (bodies of at least `MID_MIN`).
pub(crate) fn copy(data: &[u8]) -> Bytes {
    let mut b = take(data.len());
    b.extend_from_slice(data);
    freeze(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_bodies_are_reused_and_small_ones_are_not_pooled() {
        let a = copy(&vec![7u8; MIN + 10]);
        let p = a.as_ptr();
        assert_eq!(&a[..], &vec![7u8; MIN + 10][..]);
        drop(a);
        // Another thread's test may take it first; then a fresh buffer is fine too.
        let b = copy(&vec![9u8; MIN + 5]);
        assert_eq!(&b[..], &vec![9u8; MIN + 5][..]);
        let _ = p;
        let small = copy(&[1u8; 100]);
        assert_eq!(&small[..], &[1u8; 100][..]);
    }

    #[test]
    fn a_placed_body_starts_half_a_span_from_its_source_and_freezes_to_itself() {
        for (len, source_at) in [(MIN * 4, 11), (MIN * 4, 4090), (MIN, 0), (MIN, 9 + 3 * ALIAS_SPAN)] {
            let mut body = Placed::take(len, source_at);
            assert_eq!(body.len(), 0);
            assert!(body.room() >= len, "room for the whole body");
            let at = body.tail().as_ptr() as usize + body.tail().len();
            assert_eq!(at % ALIAS_SPAN, (source_at + ALIAS_SPAN / 2) % ALIAS_SPAN, "{len} from {source_at}");
            let data: Vec<u8> = (0..len).map(|i| i as u8).collect();
            body.extend_from_slice(&data[..100]);
            body.tail().extend_from_slice(&data[100..]);
            assert_eq!(body.len(), len);
            assert_eq!(body.as_mut(), &data[..]);
            let frozen = body.freeze();
            assert_eq!(frozen.as_ptr() as usize, at, "no copy on freezing");
            assert_eq!(&frozen[..], &data[..]);
        }
    }

    #[test]
    fn a_mid_size_body_is_not_placed_and_keeps_its_class() {
        let mut body = Placed::take(MID_MIN * 16, 11);
        assert_eq!(body.tail().len(), 0, "no pad");
        assert!(body.room() >= MID_MIN * 16 && body.room() < MID_MIN * 32, "its own class: {}", body.room());
    }

    #[test]
    fn mid_size_bodies_come_from_their_power_of_two_class() {
        // Every class boundary: the buffer holds at least the class's size
        // (a pooled one from another test may be larger).
        for len in [MID_MIN, MID_MIN + 1, 4095, 4096, 4097, MIN - 1] {
            let b = take(len);
            assert!(b.capacity() >= len.next_power_of_two(), "len {len}: {}", b.capacity());
            assert!(b.is_empty());
        }
        // A returned 16 KiB-class buffer (no other test uses that class)
        // serves the next body of the class.
        let a = copy(&[3u8; 12000]);
        let p = a.as_ptr();
        drop(a);
        let again = copy(&[4u8; 9000]);
        assert_eq!(again.as_ptr(), p, "a freed 16 KiB-class body is reused");
        assert_eq!(again[..], [4u8; 9000][..]);
        // Below MID_MIN nothing is pooled: exact allocations.
        assert_eq!(take(MID_MIN - 1).capacity(), MID_MIN - 1);
    }

    #[test]
    fn an_odd_capacity_goes_to_the_largest_class_it_can_serve() {
        let mut v = Vec::with_capacity(3000);
        v.extend_from_slice(&[1u8; 10]);
        drop(freeze(v));
        // 3000 bytes serve the 2 KiB class, never the 4 KiB one.
        for _ in 0..16 {
            assert!(take(4096).capacity() >= 4096);
            assert!(take(2048).capacity() >= 2048);
        }
    }

    #[test]
    fn bodies_freed_on_one_thread_serve_another() {
        // 32 KiB class (no other test uses it): a thread keeps 8 to itself
        // and hands the rest to the shared stack in batches.
        let bodies: Vec<Bytes> = (0..64).map(|_| copy(&[5u8; 20000])).collect();
        let ptrs: Vec<usize> = bodies.iter().map(|b| b.as_ptr() as usize).collect();
        std::thread::spawn(move || drop(bodies)).join().unwrap();
        let b = std::thread::spawn(|| copy(&[6u8; 17000])).join().unwrap();
        assert!(ptrs.contains(&(b.as_ptr() as usize)), "a body freed by another thread is reused");
        assert_eq!(b[..], [6u8; 17000][..]);
    }

    #[test]
    fn mid_idle_bytes_stay_bounded() {
        let bufs: Vec<Bytes> = (0..2000).map(|_| copy(&[0u8; 8192])).collect();
        drop(bufs);
        for class in MID.iter() {
            let idle = class.lock().unwrap();
            assert!(idle.bytes <= MID_MAX_IDLE);
            assert_eq!(idle.bytes, idle.bufs.iter().map(|b| b.capacity()).sum::<usize>());
        }
    }

    #[test]
    fn a_held_shared_list_never_blocks_a_take_or_a_free() {
        // As in a fork child whose parent's I/O thread held the list: the
        // holder never lets go while the other thread takes and frees.
        let top = MID_CLASSES - 1;
        let held = (IDLE.lock().unwrap(), MID[top].lock().unwrap());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let large = copy(&vec![1u8; MIN * 3]);
            let mid: Vec<Bytes> = (0..4 * local_cap(top)).map(|_| copy(&[2u8; MIN - 1])).collect();
            let ok = large.len() == MIN * 3 && mid.iter().all(|b| b.len() == MIN - 1);
            drop((large, mid));
            tx.send(ok).unwrap();
        });
        let ok = rx.recv_timeout(std::time::Duration::from_secs(60));
        drop(held);
        assert_eq!(ok, Ok(true), "take/free waited for a list another thread holds");
    }

    #[test]
    fn idle_bytes_stay_bounded() {
        let bufs: Vec<Bytes> = (0..40).map(|_| copy(&vec![0u8; 1 << 20])).collect();
        drop(bufs);
        let idle = IDLE.lock().unwrap();
        assert!(idle.bytes <= MAX_IDLE);
        assert_eq!(idle.bytes, idle.bufs.iter().map(|b| b.capacity()).sum::<usize>());
    }
}
