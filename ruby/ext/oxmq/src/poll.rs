//! `ZMQ.__poll(items, timeout_ms)`: zmq_poll over sockets and descriptors,
//! for `ZMQ::Poller` (lib/oxmq/poller.rb).
//!
//! The sockets are entered for the whole call (none can be freed under it);
//! the wait runs without the GVL, with this thread's wake eventfd and each
//! socket's close flag in the set, so an interrupt or a close from another
//! thread ends it at once.

use crate::errors::{core_error, zmq_error};
use crate::slot::Slot;
use crate::socket::Socket;
use crate::wait::{check_interrupts, drain_raw, thread_wake, without_gvl};
use magnus::value::ReprValue;
use magnus::{Error, RArray, Ruby, TryConvert, Value};
use oxmq::{errno, PollItem};
use std::sync::Arc;
use std::time::{Duration, Instant};

enum Target {
    Socket(Arc<Slot>),
    Fd(i32),
}

/// `items`: `[[socket_or_fd, events], ...]`; returns each item's revents.
pub(crate) fn poll(ruby: &Ruby, items: RArray, timeout_ms: i64) -> Result<RArray, Error> {
    let mut targets = Vec::with_capacity(items.len());
    for item in items.into_iter() {
        let pair = RArray::try_convert(item)?;
        let (obj, events): (Value, i16) = (pair.entry(0)?, pair.entry(1)?);
        let target = match <&Socket>::try_convert(obj) {
            Ok(s) => Target::Socket(Arc::clone(&s.slot)),
            Err(_) if obj.is_kind_of(ruby.class_integer()) => Target::Fd(i32::try_convert(obj)?),
            Err(_) => {
                return Err(Error::new(ruby.exception_type_error(), "expected a ZMQ::Socket or a file descriptor"))
            }
        };
        targets.push((target, events));
    }
    let mut guards = Vec::new();
    for (t, _) in &targets {
        if let Target::Socket(slot) = t {
            guards.push(slot.enter().map_err(|e| zmq_error(e, None))?);
        }
    }
    let wake = thread_wake().map_err(|e| zmq_error(e, None))?;
    let n = targets.len();
    let mut g = guards.iter();
    let mut poll_items: Vec<PollItem<'_>> = targets
        .iter()
        .map(|(t, ev)| match t {
            Target::Socket(_) => PollItem::from_socket(g.next().expect("one guard per socket"), *ev),
            Target::Fd(fd) => PollItem::from_fd(*fd, *ev),
        })
        .collect();
    // Wake-ups: this thread's interrupt flag, then each socket's close flag.
    poll_items.push(PollItem::from_fd(wake, oxmq::POLLIN));
    for (t, _) in &targets {
        if let Target::Socket(slot) = t {
            poll_items.push(PollItem::from_fd(slot.closed_wake.raw(), oxmq::POLLIN));
        }
    }
    let deadline = (timeout_ms >= 0).then(|| Instant::now() + Duration::from_millis(timeout_ms as u64));
    // A first look with the GVL held: no release when something is ready.
    let mut rc = oxmq::poll(&mut poll_items, 0);
    loop {
        match rc {
            Ok(_) => {
                if poll_items[n..].iter().skip(1).any(|p| p.revents() != 0) {
                    return Err(zmq_error(errno::ENOTSOCK, None));
                }
                if poll_items[..n].iter().any(|p| p.revents() != 0) {
                    break;
                }
            }
            Err(oxmq::Error::Interrupted) => {}
            Err(e) => return Err(core_error(e)),
        }
        let left = match deadline {
            None => -1,
            Some(d) => {
                let now = Instant::now();
                if now >= d {
                    break;
                }
                (d - now).as_millis() as i64 + 1
            }
        };
        let items = &mut poll_items;
        let r = without_gvl(wake, move || oxmq::poll(items, left));
        let woken = r.is_none() || poll_items[n].revents() != 0 || matches!(r, Some(Err(oxmq::Error::Interrupted)));
        if woken {
            drain_raw(wake);
            check_interrupts()?;
        }
        rc = r.unwrap_or(Ok(0));
    }
    let out = ruby.ary_new_capa(n);
    for p in &poll_items[..n] {
        out.push(p.revents() as i64)?;
    }
    drop(poll_items);
    drop(guards);
    Ok(out)
}
