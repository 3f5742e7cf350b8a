//! Socket monitors (libzmq `zmq_socket_monitor` and the draft
//! `zmq_socket_monitor_versioned`).
//!
//! A monitored socket publishes lifecycle events on an internal socket
//! (PAIR, or PUB/PUSH with event version 2) bound at an `inproc://`
//! endpoint; the user connects their own PAIR (SUB, PULL) to it.
//!
//! Event version 1 (libzmq's): two frames, 6 bytes (`u16` event id, `u32`
//! value, native endianness, packed) and the affected endpoint as a string.
//!
//! Event version 2 (libzmq's draft layout, kept intact):
//!
//! | frame     | content                                              |
//! |-----------|------------------------------------------------------|
//! | 1         | event id, `u64`                                      |
//! | 2         | n, the number of values, `u64`                       |
//! | 3 .. 2+n  | one `u64` value per frame                            |
//! | 3+n       | local endpoint (string; empty when none)             |
//! | 4+n (last)| remote endpoint (string; empty when none)            |
//!
//! All `u64`s in native endianness, as libzmq sends them. Value 1 is
//! libzmq's value (fd, errno, interval...). oxmq appends the peer's routing
//! id, where it knows it, as further values, where a libzmq reader (which
//! reads n values and uses the first) skips them: value 2 is the id's
//! length L in bytes, values 3 .. 2+ceil(L/8) its bytes in order, 8 per
//! value, the last zero-padded. n = 1 means no routing id is known (events
//! before a handshake, or with no peer); n = 2 with L = 0 is an empty one.
//! The id is the one the peer announced in its handshake (ZMTP READY
//! `Identity`), or CONNECT_ROUTING_ID on the connect side; ids a ROUTER
//! generates for anonymous peers are not known to the connection and are
//! not reported.
//!
//! oxmq-only events, version 2 only, on bits libzmq does not use (above its
//! 32-bit range, outside `ZMQ_EVENT_ALL_V2`): [`monitor_event::MSG_DROPPED`]
//! (value 1: a [`drop_reason`]) and [`monitor_event::HWM_REACHED`] (a pipe
//! to a peer became full; value 1: the HWM), see `channel/events.rs`, and
//! [`monitor_event::RESOLVE_FAILED`] (a connect's host name lookup found no
//! address; value 1: getaddrinfo's code), see `io/thread/session.rs`.
//!
//! Events come from the socket's own thread (bind, drops) and from the I/O
//! thread (listeners, sessions, engines). Both reach the sink (an
//! [`EventSink`] that `socket::monitor` installs, so the I/O threads need
//! nothing from the socket layer) through a [`Monitor`] slot created with
//! the socket and shared by `Arc` with every listener, session and
//! connection, so a monitor set after bind/connect still sees their events. Emitting first reads an atomic event mask: with
//! no monitor set, an event costs one relaxed load. With one set, the sink
//! is used under a mutex and sends never block (an event the reader has no
//! room for is dropped, as in libzmq).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Monitor event ids (libzmq `ZMQ_EVENT_*`), as sent in the first frame.
pub mod monitor_event {
    /// Connection established (value: fd).
    pub const CONNECTED: u16 = 0x0001;
    /// Synchronous connect did not complete at once (value: errno).
    pub const CONNECT_DELAYED: u16 = 0x0002;
    /// A reconnect is scheduled (value: the interval in ms).
    pub const CONNECT_RETRIED: u16 = 0x0004;
    /// Bound and listening (value: the listener's fd).
    pub const LISTENING: u16 = 0x0008;
    /// Bind failed (value: errno).
    pub const BIND_FAILED: u16 = 0x0010;
    /// A connection was accepted (value: fd).
    pub const ACCEPTED: u16 = 0x0020;
    /// Accepting a connection failed (value: errno).
    pub const ACCEPT_FAILED: u16 = 0x0040;
    /// A listener or connecting socket was closed (value: fd).
    pub const CLOSED: u16 = 0x0080;
    /// Closing failed (value: errno).
    pub const CLOSE_FAILED: u16 = 0x0100;
    /// A connection was lost (value: fd).
    pub const DISCONNECTED: u16 = 0x0200;
    /// Monitoring stopped (value 0, empty endpoint).
    pub const MONITOR_STOPPED: u16 = 0x0400;
    /// All of the events above and below.
    pub const ALL: u16 = 0xFFFF;
    /// Handshake failed for a reason other than protocol or auth (value: errno).
    pub const HANDSHAKE_FAILED_NO_DETAIL: u16 = 0x0800;
    /// ZMTP handshake done (value 0).
    pub const HANDSHAKE_SUCCEEDED: u16 = 0x1000;
    /// Handshake failed on a protocol error (value: `ZMQ_PROTOCOL_ERROR_*`).
    pub const HANDSHAKE_FAILED_PROTOCOL: u16 = 0x2000;
    /// Handshake failed on authentication (value: ZAP status code).
    pub const HANDSHAKE_FAILED_AUTH: u16 = 0x4000;
    /// libzmq's version-1 "all" (`ZMQ_EVENT_ALL_V1`).
    pub const ALL_V1: u64 = 0xFFFF;
    /// Queue depths of each pipe, on request (`ZMQ_EVENT_PIPES_STATS`,
    /// version 2, sent by `Socket::monitor_pipes_stats`; values: messages
    /// queued outbound, then inbound).
    pub const PIPES_STATS: u64 = 0x1_0000;
    /// libzmq's version-2 "all" (`ZMQ_EVENT_ALL_V2`); the oxmq-only events
    /// below are not in it, so libzmq consumers never see them unasked.
    pub const ALL_V2: u64 = ALL_V1 | PIPES_STATS;
    /// oxmq only, version 2: a message was dropped (value: a
    /// [`super::drop_reason`]; the routing id: the peer it was for, if known).
    pub const MSG_DROPPED: u64 = 1 << 32;
    /// oxmq only, version 2: a pipe to a peer became full, so sends to it
    /// now block or drop (value: the pipe's HWM).
    pub const HWM_REACHED: u64 = 1 << 33;
    /// oxmq only, version 2: a connect's host name lookup found no address
    /// (value: getaddrinfo's `EAI_*` code as a signed 64-bit number, e.g.
    /// glibc's `EAI_NONAME` -2; `EAI_SYSTEM` when the failure is not
    /// getaddrinfo's). The retry's CONNECT_RETRIED follows, as in libzmq,
    /// which reports nothing else of a failed lookup.
    pub const RESOLVE_FAILED: u64 = 1 << 34;
    /// Every event oxmq sends with version 2.
    pub const ALL_OXMQ: u64 = ALL_V2 | MSG_DROPPED | HWM_REACHED | RESOLVE_FAILED;
}

/// Why a message was dropped (value of [`monitor_event::MSG_DROPPED`]).
pub mod drop_reason {
    /// The peer's pipe was full (PUB/XPUB, RADIO, ROUTER without ROUTER_MANDATORY).
    pub const HWM: u64 = 1;
    /// No peer has the routing id (ROUTER without ROUTER_MANDATORY).
    pub const NO_ROUTE: u64 = 2;
    /// A newer message replaced it (a receiving CONFLATE socket; reported
    /// when the receive that keeps the newer one runs).
    pub const CONFLATE: u64 = 3;
    /// Larger than MAXMSGSIZE (the peer is disconnected, as in libzmq).
    pub const OVERSIZE: u64 = 4;
}

/// Where an event happened: version 1 names one endpoint, version 2 both
/// ends and (oxmq) the peer's routing id.
#[derive(Clone, Copy, Default)]
pub(crate) struct Source<'a> {
    /// The string of version 1 (libzmq: the local end on the bind side,
    /// the remote end on the connect side).
    pub(crate) endpoint: &'a str,
    pub(crate) local: &'a str,
    pub(crate) remote: &'a str,
    pub(crate) routing_id: Option<&'a [u8]>,
}

impl<'a> Source<'a> {
    /// A bind-side event without a connection (LISTENING, BIND_FAILED...).
    pub(crate) fn bound(endpoint: &'a str) -> Source<'a> {
        Source { endpoint, local: endpoint, remote: "", routing_id: None }
    }

    /// A connect-side event without a connection (CONNECT_DELAYED/RETRIED...).
    pub(crate) fn connecting(endpoint: &'a str) -> Source<'a> {
        Source { endpoint, local: "", remote: endpoint, routing_id: None }
    }
}

/// The 6-byte first frame of a version-1 event.
pub(crate) fn encode_event(event: u16, value: u32) -> [u8; 6] {
    let mut b = [0u8; 6];
    b[..2].copy_from_slice(&event.to_ne_bytes());
    b[2..].copy_from_slice(&value.to_ne_bytes());
    b
}

/// The values of a version-2 event: `value`, then the routing id (see the
/// module docs).
pub(crate) fn encode_values(value: u64, routing_id: Option<&[u8]>) -> Vec<u64> {
    let mut values = vec![value];
    if let Some(id) = routing_id {
        values.push(id.len() as u64);
        for chunk in id.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            values.push(u64::from_ne_bytes(b));
        }
    }
    values
}

/// Where a monitor's events go: the socket layer provides it (the internal
/// socket bound at the monitor's endpoint, see `socket::monitor`), so the
/// I/O threads that emit events need nothing from the socket layer.
pub(crate) trait EventSink: Send {
    /// Sends one event; never blocks on the reader. `values[0]` is the
    /// value of version 1; version 2 sends them all.
    fn send(&self, event: u64, values: &[u64], src: &Source<'_>);
}

struct Slot {
    sink: Box<dyn EventSink>,
    events: u64,
}

impl Slot {
    fn send(&self, event: u64, values: &[u64], src: &Source<'_>) {
        if self.events & event != 0 {
            self.sink.send(event, values, src);
        }
    }
}

/// A socket's monitor slot; see the module docs.
#[derive(Default)]
pub(crate) struct Monitor {
    /// Events of the current sink; 0 when there is none.
    mask: AtomicU64,
    sink: Mutex<Option<Slot>>,
    /// The socket's I/O-side statistics, here because every listener,
    /// session and connection already holds this slot.
    pub(crate) counters: crate::stats::IoCounters,
}

impl Monitor {
    pub(crate) fn new() -> Arc<Monitor> {
        Arc::new(Monitor::default())
    }

    fn lock(&self) -> MutexGuard<'_, Option<Slot>> {
        self.sink.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether any of `events` would be sent now.
    #[inline]
    pub(crate) fn wants(&self, event: impl Into<u64>) -> bool {
        self.mask.load(Ordering::Relaxed) & event.into() != 0
    }

    /// Publish one bind-side event (see [`Source::bound`]) if a monitor
    /// wants it; never blocks on the reader.
    #[inline]
    pub(crate) fn emit(&self, event: u16, value: u32, endpoint: &str) {
        if self.wants(event) {
            self.emit_slow(u64::from(event), u64::from(value), &Source::bound(endpoint));
        }
    }

    /// Publish one event with both ends named (version 2) if a monitor wants it.
    #[inline]
    pub(crate) fn emit_at(&self, event: impl Into<u64>, value: u64, src: &Source<'_>) {
        let event = event.into();
        if self.wants(event) {
            self.emit_slow(event, value, src);
        }
    }

    #[cold]
    fn emit_slow(&self, event: u64, value: u64, src: &Source<'_>) {
        self.emit_values(event, &encode_values(value, src.routing_id), src);
    }

    /// Publish one event with the values given (a version-2 event of
    /// several values, `PIPES_STATS`) if a monitor wants it.
    #[cold]
    pub(crate) fn emit_values(&self, event: u64, values: &[u64], src: &Source<'_>) {
        if let Some(sink) = self.lock().as_ref() {
            sink.send(event, values, src);
        }
    }

    /// Sends this monitor's events to `sink` from now on, filtered by
    /// `events`; the caller stopped any previous sink first.
    pub(crate) fn install(&self, sink: Box<dyn EventSink>, events: u64) {
        let old = self.lock().replace(Slot { sink, events });
        self.mask.store(events, Ordering::Relaxed);
        drop(old);
    }

    /// Stop monitoring (sending MONITOR_STOPPED if wanted) and close the PAIR.
    pub(crate) fn stop(&self) {
        let old = {
            let mut slot = self.lock();
            self.mask.store(0, Ordering::Relaxed);
            slot.take()
        };
        // Closed outside the lock: closing may talk to the context.
        if let Some(slot) = old {
            slot.send(monitor_event::MONITOR_STOPPED.into(), &[0], &Source::default());
            drop(slot);
        }
    }
}
