//! Loom models (`make loom`, a `--cfg loom` build): every interleaving and
//! weak-memory outcome loom can produce of
//!
//! * the pipe's sleeping-reader protocol: a reader that found the pipe empty
//!   and waits is always woken by the flush that follows, never misses data,
//!   and never sleeps forever at the writer's departure;
//! * the pipe's HWM protocol: a writer stopped at the HWM is always woken by
//!   the reader's publication (the Dekker handshake on `writer_waiting`),
//!   with either acknowledgement cadence (also when running dry, or at
//!   multiples of the LWM only);
//! * the mailbox: a command sent while the socket's thread drains its inbox
//!   is either taken by that drain or left with the `pending` flag set, so the
//!   socket's fast-path check cannot skip it.
//!
//! A lost wake-up shows up as a loom deadlock (a thread waits on a `Notify`
//! no one will signal); a lost message as a failed assertion.

use crate::channel::mailbox::{Inbox, Mailbox, SocketCommand};
use crate::msg::Msg;
use crate::pipe::{pipe, Wake, WakeSlot};
use loom::sync::Notify;
use std::sync::Arc;

struct NotifyWake(Arc<Notify>);

impl Wake for NotifyWake {
    fn wake(&self) {
        self.0.notify();
    }
}

fn num(i: u64) -> Msg {
    Msg::from_slice(&i.to_le_bytes())
}

fn val(m: &Msg) -> u64 {
    u64::from_le_bytes(m.as_slice().try_into().unwrap())
}

#[test]
fn pipe_sleeping_reader_is_always_woken() {
    loom::model(|| {
        let reader_note = Arc::new(Notify::new());
        let ack = Arc::new(Notify::new());
        let (mut w, mut r) = pipe(0, WakeSlot::with(Arc::new(NotifyWake(reader_note.clone()))), WakeSlot::new());
        let writer = {
            let ack = ack.clone();
            loom::thread::spawn(move || {
                // Each flush is followed by a wait for the reader, so only the
                // flush's own wake-up can rouse a reader that went to sleep.
                w.write(num(1));
                w.flush();
                ack.wait();
                // A two-frame message appears at once or not at all.
                w.write(num(2).with_more(true));
                w.write(num(3));
                w.flush();
                ack.wait();
                drop(w);
            })
        };
        let mut got = Vec::new();
        for want in [1, 3] {
            while got.len() < want {
                match r.read() {
                    Some(m) => got.push(val(&m)),
                    None => reader_note.wait(),
                }
            }
            assert_eq!(got.len(), want, "a multipart message appeared in pieces");
            ack.notify();
        }
        // The writer's departure wakes a reader that sleeps on an empty pipe.
        while !r.is_terminated() {
            assert!(r.read().is_none());
            if !r.is_terminated() {
                reader_note.wait();
            }
        }
        writer.join().unwrap();
        assert_eq!(got, [1, 2, 3]);
    });
}

#[test]
fn pipe_writer_at_hwm_is_always_woken() {
    writer_at_hwm_is_always_woken(1, 3, false);
}

/// The same with libzmq's acknowledgements at multiples of the LWM only
/// (the I/O thread's ends): HWM 3, LWM 2, so the writer stops with the
/// reader between two multiples, and the reader's dry looks in between
/// publish nothing.
#[test]
fn pipe_writer_at_hwm_is_always_woken_by_lwm_acks() {
    writer_at_hwm_is_always_woken(3, 5, true);
}

fn writer_at_hwm_is_always_woken(hwm: usize, n: u64, lwm_acks: bool) {
    loom::model(move || {
        let writer_note = Arc::new(Notify::new());
        let reader_note = Arc::new(Notify::new());
        let (mut w, mut r) = pipe(
            hwm,
            WakeSlot::with(Arc::new(NotifyWake(reader_note.clone()))),
            WakeSlot::with(Arc::new(NotifyWake(writer_note.clone()))),
        );
        r.set_acks_at_lwm(lwm_acks);
        let writer = loom::thread::spawn(move || {
            for i in 0..n {
                while !w.check_write() {
                    writer_note.wait();
                }
                w.write(num(i));
                w.flush();
            }
        });
        let mut got = Vec::new();
        while (got.len() as u64) < n {
            match r.read() {
                Some(m) => got.push(val(&m)),
                None => reader_note.wait(),
            }
        }
        writer.join().unwrap();
        assert_eq!(got, (0..n).collect::<Vec<_>>());
    });
}

#[test]
fn mailbox_command_is_never_stranded() {
    loom::model(|| {
        let mb = Mailbox::new().unwrap();
        let sender = {
            let mb = mb.clone();
            loom::thread::spawn(move || mb.send(SocketCommand::Hiccup { key: 7 }))
        };
        // The socket's thread: the fast-path check, then a drain if flagged.
        let mut inbox = Inbox::default();
        let mut seen = 0;
        for _ in 0..2 {
            if mb.has_pending() {
                mb.take(&mut inbox);
                seen += inbox.commands.drain(..).count();
            }
        }
        sender.join().unwrap();
        if seen == 0 {
            assert!(mb.has_pending(), "a command was queued but the pending flag is clear");
            mb.take(&mut inbox);
            seen += inbox.commands.drain(..).count();
        }
        assert_eq!(seen, 1);
    });
}

// Send-side CONFLATE (s3-options): the one-slot pipe keeps the wake-up
// protocol, and the newest message is never lost.
#[test]
fn conflate_pipe_reader_always_gets_the_last_message() {
    loom::model(|| {
        let reader_note = Arc::new(Notify::new());
        let (mut w, mut r) =
            crate::pipe::pipe_conflate(WakeSlot::with(Arc::new(NotifyWake(reader_note.clone()))), WakeSlot::new());
        let writer = loom::thread::spawn(move || {
            for i in 1..=2 {
                w.write(num(i));
                w.flush();
            }
            drop(w);
        });
        let mut got = Vec::new();
        loop {
            match r.read() {
                Some(m) => got.push(val(&m)),
                None if r.is_terminated() => break,
                None => reader_note.wait(),
            }
        }
        writer.join().unwrap();
        assert_eq!(got.last(), Some(&2), "the newest message is delivered");
        assert!(got.windows(2).all(|p| p[0] < p[1]), "never an older one after a newer: {got:?}");
    });
}
