//! A socket's own events past libzmq's set: drops and full pipes, reported
//! from the patterns' send paths (see `monitor.rs` for the wire layout).
//!
//! Every drop point calls [`SocketEvents::dropped`] and every pipe found
//! full calls [`SocketEvents::hwm_reached`]: one place per kind, so per-socket
//! drop counters can be kept beside the events. With no monitor attached
//! each costs one relaxed load.

use crate::monitor::{monitor_event as ev, Monitor, Source};
use std::sync::Arc;

/// The monitor slot as the patterns reach it (through [`Pipes`]).
#[derive(Default)]
pub(crate) struct SocketEvents {
    /// `None` in pattern unit tests, which have no socket.
    monitor: Option<Arc<Monitor>>,
}

impl SocketEvents {
    pub(crate) fn new(monitor: Arc<Monitor>) -> SocketEvents {
        SocketEvents { monitor: Some(monitor) }
    }

    #[inline]
    pub(super) fn wants(&self, event: u64) -> Option<&Monitor> {
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
