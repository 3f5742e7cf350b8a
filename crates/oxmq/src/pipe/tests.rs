//! Plain-thread tests of the pipes (ordinary and CONFLATE) and the waker.

use super::ypipe::CHUNK;
use super::*;
use crate::msg::CountingOwner as Owner;
use crate::msg::Msg;
use crate::sync::Ordering;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::thread;

use super::WakeCount as Counter;

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

/// `unread` counts each read at once; `queued` (libzmq's pipe statistics)
/// only what the reader acknowledged (every LWM messages; when it ran dry
/// too, which is left out here, as libzmq does not do it).
#[test]
fn unread_counts_every_read_queued_only_acknowledged_ones() {
    let (mut w, mut r, _, _) = counted(8);
    for i in 0..5 {
        w.write(num(i));
        w.flush();
    }
    assert_eq!((w.unread(), w.queued()), (5, 5));
    for i in 0..3 {
        assert_eq!(r.read().map(|m| val(&m)), Some(i));
    }
    // LWM 4: nothing acknowledged yet.
    assert_eq!((w.unread(), w.queued()), (2, 5));
    assert_eq!(r.read().map(|m| val(&m)), Some(3));
    assert_eq!((w.unread(), w.queued()), (1, 1));
    assert_eq!(r.read().map(|m| val(&m)), Some(4));
    assert_eq!((w.unread(), w.queued()), (0, 1));
    assert!(r.read().is_none());
    assert_eq!(w.unread(), 0);
    // A frame of an unfinished message is no message yet.
    w.write(num(9).with_flags(crate::msg::FLAG_MORE));
    w.flush();
    assert_eq!(r.read().map(|m| val(&m)), Some(9));
    assert_eq!(w.unread(), 0);
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

/// libzmq's cadence (`set_acks_at_lwm`): acknowledged at multiples of the
/// LWM only, also after running dry, so the writer gets exactly HWM
/// messages past the last multiple; the default reader acknowledges when
/// it runs dry too, after which its next acknowledgement is LWM reads on
/// (the hang of libzmq's test_monitor pipes-stats cases: a peer holding a
/// few more than HWM messages never let the reader get that far).
#[test]
fn lwm_acks_come_at_multiples_of_the_lwm_only() {
    for lwm_acks in [false, true] {
        let (mut w, mut r, _, wc) = counted(8);
        r.set_acks_at_lwm(lwm_acks);
        for i in 0..5 {
            w.write(num(i));
            w.flush();
        }
        while r.read().is_some() {}
        // LWM 4: acknowledged 4 (at the multiple), or 5 (dry).
        assert_eq!(w.queued(), if lwm_acks { 1 } else { 0 });
        let mut written = 5;
        while w.check_write() {
            w.write(num(written));
            w.flush();
            written += 1;
        }
        assert_eq!(written, if lwm_acks { 12 } else { 13 });
        // The peer lets the reader take 3 more (stopped by its peer, not
        // dry): 8 read, a multiple, which only the LWM reader acknowledges
        // (the other one needs 5 + 4 = 9).
        for _ in 0..3 {
            assert!(r.read().is_some());
        }
        assert_eq!(w.check_write(), lwm_acks);
        assert_eq!(w.queued(), if lwm_acks { written - 8 } else { written - 5 });
        assert_eq!(wc.get(), usize::from(lwm_acks));
        // One more read: both have acknowledged.
        assert!(r.read().is_some());
        assert!(w.check_write());
        assert_eq!(w.queued(), if lwm_acks { written - 8 } else { written - 9 });
    }
}

/// A reader acknowledging at the LWM only, asleep with reads it has not
/// acknowledged, is woken when the writer lowers the HWM, and acknowledges
/// them: the writer does not wait forever.
#[test]
fn lwm_acks_reader_asleep_acknowledges_when_the_hwm_drops() {
    let (mut w, mut r, rc, wc) = counted(100);
    r.set_acks_at_lwm(true);
    for i in 0..10 {
        w.write(num(i));
    }
    w.flush();
    while r.read().is_some() {}
    assert_eq!(w.queued(), 10);
    let woken = rc.get();
    w.set_hwm(4);
    assert_eq!(rc.get(), woken + 1);
    assert!(!w.check_write());
    // The woken reader finds nothing to read, and acknowledges.
    assert!(r.read().is_none());
    assert_eq!(wc.get(), 1);
    assert!(w.check_write());
    assert_eq!(w.queued(), 0);
    // Setting the same HWM again wakes nobody.
    w.set_hwm(4);
    assert_eq!(rc.get(), woken + 1);
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
    stress_acks(total, hwm, multipart, false)
}

/// `stress`, with the reader acknowledging at the LWM only when `lwm_acks`
/// (the I/O thread's ends, `PipeReader::set_acks_at_lwm`).
fn stress_acks(total: u64, hwm: usize, multipart: bool, lwm_acks: bool) {
    let total = if cfg!(miri) { total.min(3_000) } else { total };
    let reader_slot = WakeSlot::new();
    let writer_slot = WakeSlot::new();
    let (mut w, mut r) = pipe(hwm, reader_slot.clone(), writer_slot.clone());
    r.set_acks_at_lwm(lwm_acks);
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
fn stress_fifo_hwm_lwm_acks() {
    // An odd HWM: LWM 26, so the writer is stopped between two multiples.
    stress_acks(if cfg!(debug_assertions) { 300_000 } else { 1_000_000 }, 51, false, true);
}

#[test]
fn stress_fifo_small_hwm_multipart_lwm_acks() {
    stress_acks(if cfg!(debug_assertions) { 50_000 } else { 200_000 }, 2, true, true);
}

#[test]
fn stress_fifo_small_hwm_multipart() {
    // hwm = 1: every message costs a park/unpark round trip each way.
    stress(if cfg!(debug_assertions) { 50_000 } else { 200_000 }, 1, true);
}

#[test]
fn a_dry_wait_still_sleeps_and_is_woken_and_backs_off_when_fruitless() {
    let (mut w, mut r, rc, _) = counted(0);
    r.set_dry_wait(true);
    // Nothing written: the dry wait finds nothing, so the reader marks itself
    // asleep as before and the next flush wakes it.
    assert!(r.read().is_none());
    w.write(num(1));
    w.flush();
    assert_eq!(rc.get(), 1, "the flush woke the sleeping reader");
    assert_eq!(val(&r.read().unwrap()), 1);
    // Fruitless dry waits back off: the skipped looks go to sleep at once,
    // and every one of them is still woken by the next flush.
    for i in 2..200 {
        assert!(r.read().is_none());
        w.write(num(i));
        w.flush();
        assert_eq!(rc.get() as u64, i, "one wake per sleep, dry wait or not");
        assert_eq!(val(&r.read().unwrap()), i);
    }
}

#[test]
fn a_dry_waiting_reader_keeps_order_and_loses_nothing_across_threads() {
    let (mut w, mut r, _, _) = counted(1000);
    r.set_dry_wait(true);
    const N: u64 = 200_000;
    let t = thread::spawn(move || {
        let mut i = 0;
        while i < N {
            if w.check_write() {
                w.write(num(i));
                w.flush();
                i += 1;
            } else {
                thread::yield_now();
            }
        }
    });
    let mut next = 0;
    while next < N {
        match r.read() {
            Some(m) => {
                assert_eq!(val(&m), next);
                next += 1;
            }
            None => thread::yield_now(),
        }
    }
    t.join().unwrap();
}
