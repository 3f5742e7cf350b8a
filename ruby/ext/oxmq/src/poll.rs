//! `ZMQ.__poll(items, timeout_ms)`: zmq_poll over sockets and descriptors,
//! for `ZMQ::Poller` (lib/oxmq/poller.rb).
//!
//! The sockets are entered for the whole call (none can be freed under it);
//! the core's poll waits without the GVL ([`GvlWait`]), with each socket's
//! close flag in the set, so an interrupt or a close from another thread
//! ends it at once.

use crate::errors::zmq_error;
use crate::slot::Slot;
use crate::socket::Socket;
use crate::wait::GvlWait;
use magnus::value::ReprValue;
use magnus::{Error, RArray, Ruby, TryConvert, Value};
use oxmq::{errno, PollItem};
use std::sync::Arc;

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
    let n = targets.len();
    let mut g = guards.iter();
    let mut poll_items: Vec<PollItem<'_>> = targets
        .iter()
        .map(|(t, ev)| match t {
            Target::Socket(_) => PollItem::from_socket(g.next().expect("one guard per socket"), *ev),
            Target::Fd(fd) => PollItem::from_fd(*fd, *ev),
        })
        .collect();
    // Each socket's close flag: a close from another thread ends the wait.
    for (t, _) in &targets {
        if let Target::Socket(slot) = t {
            poll_items.push(PollItem::from_fd(slot.closed_fd(), oxmq::POLLIN));
        }
    }
    let mut hook = GvlWait::new()?;
    oxmq::poll_with(&mut poll_items, timeout_ms, &mut hook).map_err(|e| hook.error(e))?;
    if poll_items[n..].iter().any(|p| p.revents() != 0) {
        return Err(zmq_error(errno::ENOTSOCK, None));
    }
    let out = ruby.ary_new_capa(n);
    for p in &poll_items[..n] {
        out.push(p.revents() as i64)?;
    }
    drop(poll_items);
    drop(guards);
    Ok(out)
}
