//! A socket's own events past libzmq's set: drops and full pipes, reported
//! from the patterns' send paths (see `monitor.rs` for the wire layout).
//!
//! Every drop point calls [`SocketEvents::dropped`] and every pipe found
//! full calls [`SocketEvents::hwm_reached`]: one place per kind, so per-socket
//! drop counters can be kept beside the events. With no monitor attached
//! each costs one relaxed load.

use super::pipes::{PipeId, Pipes};
use super::Socket;
use crate::error::Result;
use crate::monitor::{drop_reason, monitor_event as ev, Monitor, Source};
use oxmq_proto::SocketType;
use std::collections::HashSet;
use std::sync::Arc;

/// The monitor slot as the patterns reach it (through [`Pipes`]).
#[derive(Default)]
pub(crate) struct SocketEvents {
    /// `None` in pattern unit tests, which have no socket.
    monitor: Option<Arc<Monitor>>,
    /// Pipes reported full and not yet writable again, so that a pipe
    /// a pattern keeps finding full (ROUTER) is reported once per filling.
    full: HashSet<PipeId>,
}

impl SocketEvents {
    pub(crate) fn new(monitor: Arc<Monitor>) -> SocketEvents {
        SocketEvents { monitor: Some(monitor), full: HashSet::new() }
    }

    #[inline]
    fn wants(&self, event: u64) -> Option<&Monitor> {
        self.monitor.as_deref().filter(|m| m.wants(event))
    }

    /// A message was dropped for `reason` (a `monitor::drop_reason`);
    /// `routing_id` is the peer it was for, where the socket knows it.
    #[inline]
    pub(crate) fn dropped(&self, reason: u64, routing_id: Option<&[u8]>) {
        if let Some(m) = self.wants(ev::MSG_DROPPED) {
            m.emit_at(ev::MSG_DROPPED, reason, &Source { routing_id, ..Source::default() });
        }
    }

    /// A pipe to a peer has no room for another message.
    #[inline]
    pub(crate) fn hwm_reached(&self, hwm: u64, routing_id: Option<&[u8]>) {
        if let Some(m) = self.wants(ev::HWM_REACHED) {
            m.emit_at(ev::HWM_REACHED, hwm, &Source { routing_id, ..Source::default() });
        }
    }
}

impl Pipes {
    /// [`SocketEvents::dropped`] for a message meant for pipe `id`.
    #[inline]
    pub(crate) fn note_dropped(&self, reason: u64, id: PipeId) {
        if self.events.wants(ev::MSG_DROPPED).is_some() {
            self.events.dropped(reason, self.peer_id(id));
        }
    }

    /// CONFLATE (receive side): a newer message replaced one from pipe
    /// `from` (if it is still there; else no routing id).
    #[inline]
    pub(crate) fn note_conflated(&self, from: Option<PipeId>) {
        if self.events.wants(ev::MSG_DROPPED).is_some() {
            let id = from.filter(|&id| self.contains(id)).and_then(|id| self.peer_id(id));
            self.events.dropped(drop_reason::CONFLATE, id);
        }
    }

    /// [`SocketEvents::hwm_reached`] for pipe `id`, once until it has room again.
    #[inline]
    pub(crate) fn note_full(&mut self, id: PipeId) {
        if self.events.wants(ev::HWM_REACHED).is_some() && self.events.full.insert(id) {
            let p = self.get(id);
            self.events.hwm_reached(p.out.hwm() as u64, self.peer_id(id));
        }
    }

    /// Pipe `id` has room again (or is gone): its next filling is reported.
    #[inline]
    pub(crate) fn note_room(&mut self, id: PipeId) {
        if !self.events.full.is_empty() {
            self.events.full.remove(&id);
        }
    }

    #[cold]
    fn peer_id(&self, id: PipeId) -> Option<&[u8]> {
        let p = self.get(id);
        // The id a ROUTER routes by, else the one the peer announced in READY.
        let announced = || p.peer_properties.as_deref().and_then(|props| props.get("Identity"));
        p.connect_routing_id.as_deref().or(p.peer_routing_id.as_deref()).or_else(announced)
    }
}

impl Socket {
    /// Publish this socket's events (libzmq's draft
    /// `zmq_socket_monitor_versioned`) on a socket of `sink_type` (PAIR, PUB
    /// or PUSH; anything else fails with EINVAL) bound at the `inproc://`
    /// `endpoint`. `version` 1 is [`Socket::monitor`]'s layout; version 2
    /// sends the multi-frame layout of the [`crate::monitor_event`] docs
    /// and `monitor.rs`, with the peer's routing id and the oxmq-only events
    /// `MSG_DROPPED` and `HWM_REACHED` when `events` asks for them.
    pub fn monitor_versioned(
        &self,
        endpoint: Option<&str>,
        events: u64,
        version: i32,
        sink_type: SocketType,
    ) -> Result<()> {
        let core = self.core()?;
        let (ctx, monitor) = (core.ctx.clone(), core.monitor.clone());
        // Not borrowed while the monitor socket is created and bound.
        drop(core);
        monitor.start(&ctx, endpoint, events, version, sink_type)
    }
}
